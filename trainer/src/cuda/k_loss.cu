/* Softmax cross-entropy: one thread per sample (10 classes); loss and correct counts are
 * accumulated into device counters, so the host reads them only when it logs. */
#include "k_common.cuh"

template <typename T>
__global__ void ce_fwd_kernel(float *prob, const T *logits, const int32_t *labels, int n, int k,
                              struct cuk_stats *st)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const T *z = logits + (size_t)i * k;
    int arg = 0;
    for (int j = 1; j < k; j++)
        if (to_f(z[j]) > to_f(z[arg]))
            arg = j;
    float zmax = to_f(z[arg]), sum = 0.0f;
    for (int j = 0; j < k; j++)
        sum += __expf(to_f(z[j]) - zmax);
    for (int j = 0; j < k; j++)
        prob[(size_t)i * k + j] = __expf(to_f(z[j]) - zmax) / sum;
    double loss = (double)logf(sum) - (double)(to_f(z[labels[i]]) - zmax);
    atomicAdd(&st->loss_sum, loss);
    if (arg == labels[i])
        atomicAdd(&st->correct, 1ull);
    atomicAdd(&st->samples, 1ull);
}

template <typename T>
static void ce_fwd_launch(float *prob, const void *logits, const int32_t *labels, int n, int k,
                          struct cuk_stats *st, cudaStream_t s)
{
    if (n <= 0) /* a 0-block grid is a launch error */
        return;
    ce_fwd_kernel<T><<<(n + 127) / 128, 128, 0, s>>>(prob, (const T *)logits, labels, n, k, st);
}

extern "C" void cuk_softmax_ce_fwd(enum cuk_dtype dt, float *prob, const void *logits,
                                   const int32_t *labels, int n, int k, struct cuk_stats *st,
                                   cudaStream_t s)
{
    CUK_DISPATCH(dt, ce_fwd_launch, prob, logits, labels, n, k, st, s);
}

template <typename T>
__global__ void ce_bwd_kernel(T *dz, const float *prob, const int32_t *labels, int k, size_t total,
                              float inv_nacc, const struct cuk_amp *amp)
{
    float scale = inv_nacc * amp->scale;
    CUK_GRID_LOOP(q, total)
    {
        int i = (int)(q / k), j = (int)(q % k);
        dz[q] = from_f<T>((prob[q] - (j == labels[i] ? 1.0f : 0.0f)) * scale);
    }
}

template <typename T>
static void ce_bwd_launch(void *dz, const float *prob, const int32_t *labels, int n, int k,
                          float inv_nacc, const struct cuk_amp *amp, cudaStream_t s)
{
    size_t total = (size_t)n * k;
    ce_bwd_kernel<T><<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)dz, prob, labels, k, total,
                                                               inv_nacc, amp);
}

extern "C" void cuk_softmax_ce_bwd(enum cuk_dtype dt, void *dlogits, const float *prob,
                                   const int32_t *labels, int n, int k, float inv_nacc,
                                   const struct cuk_amp *amp, cudaStream_t s)
{
    CUK_DISPATCH(dt, ce_bwd_launch, dlogits, prob, labels, n, k, inv_nacc, amp, s);
}
