/* Optimizers and dynamic loss scaling on the device: unscale + inf/nan check, GradScaler's
 * update in one thread, and Adam/SGD that skip the step when found_inf is set, so no per-step
 * host sync is needed. */
#include "k_common.cuh"

__global__ void unscale_kernel(float *g, size_t n, struct cuk_amp *amp)
{
    float inv = 1.0f / amp->scale;
    int bad = 0;
    CUK_GRID_LOOP(i, n)
    {
        float v = g[i] * inv;
        g[i] = v;
        bad |= !isfinite(v);
    }
    if (__syncthreads_or(bad) && threadIdx.x == 0)
        amp->found_inf = 1;
}

extern "C" void cuk_unscale_check(float *g, size_t n, struct cuk_amp *amp, cudaStream_t s)
{
    unscale_kernel<<<cuk_blocks(n), CUK_THREADS, 0, s>>>(g, n, amp);
}

// torch GradScaler: init 2^16, x2 after 2000 good steps, x0.5 and skip on inf/nan (amp.c)
__global__ void amp_update_kernel(struct cuk_amp *a)
{
    if (!a->found_inf) {
        a->t++;
        if (a->dynamic && ++a->growth_tracker == 2000) {
            if (isfinite(a->scale * 2.0f))
                a->scale *= 2.0f;
            a->growth_tracker = 0;
        }
        return;
    }
    a->scale *= 0.5f;
    a->growth_tracker = 0;
    a->skipped++;
}

extern "C" void cuk_amp_update(struct cuk_amp *amp, cudaStream_t s)
{
    amp_update_kernel<<<1, 1, 0, s>>>(amp);
}

// --fused: the step zeroes each gradient as it reads it (also when the scaler skips the step)
static __device__ void zero_grads(float *g, size_t n)
{
    CUK_GRID_LOOP(i, n)
    g[i] = 0.0f;
}

template <typename T>
__global__ void adam_kernel(float *p, T *lp, float *g, float *m, float *v, size_t n, float lr,
                            float b1, float b2, float eps, const struct cuk_amp *amp, int zero)
{
    if (amp->found_inf) {
        if (zero)
            zero_grads(g, n);
        return;
    }
    float t = (float)amp->t;
    float step = lr / (1.0f - powf(b1, t)), rc2 = rsqrtf(1.0f - powf(b2, t));
    CUK_GRID_LOOP(i, n)
    {
        float gi = g[i];
        if (zero)
            g[i] = 0.0f;
        float mi = b1 * m[i] + (1.0f - b1) * gi, vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        float pi = p[i] - step * mi / (sqrtf(vi) * rc2 + eps);
        p[i] = pi;
        if (lp)
            lp[i] = from_f<T>(pi);
    }
}

template <typename T>
static void adam_launch(float *p, void *lp, float *g, float *m, float *v, size_t n, float lr,
                        float b1, float b2, float eps, const struct cuk_amp *amp, int zero,
                        cudaStream_t s)
{
    adam_kernel<T><<<cuk_blocks(n), CUK_THREADS, 0, s>>>(p, (T *)lp, g, m, v, n, lr, b1, b2, eps,
                                                         amp, zero);
}

extern "C" void cuk_adam(float *p, void *lp, enum cuk_dtype dt, float *g, float *m, float *v,
                         size_t n, float lr, float beta1, float beta2, float eps,
                         const struct cuk_amp *amp, int zero, cudaStream_t s)
{
    CUK_DISPATCH(dt, adam_launch, p, lp, g, m, v, n, lr, beta1, beta2, eps, amp, zero, s);
}

template <typename T>
__global__ void sgd_kernel(float *p, T *lp, float *g, float *buf, size_t n, float lr, float mu,
                           const struct cuk_amp *amp, int zero)
{
    if (amp->found_inf) {
        if (zero)
            zero_grads(g, n);
        return;
    }
    CUK_GRID_LOOP(i, n)
    {
        float b = mu * buf[i] + g[i];
        if (zero)
            g[i] = 0.0f;
        buf[i] = b;
        float pi = p[i] - lr * b;
        p[i] = pi;
        if (lp)
            lp[i] = from_f<T>(pi);
    }
}

template <typename T>
static void sgd_launch(float *p, void *lp, float *g, float *buf, size_t n, float lr, float mu,
                       const struct cuk_amp *amp, int zero, cudaStream_t s)
{
    sgd_kernel<T><<<cuk_blocks(n), CUK_THREADS, 0, s>>>(p, (T *)lp, g, buf, n, lr, mu, amp, zero);
}

extern "C" void cuk_sgd(float *p, void *lp, enum cuk_dtype dt, float *g, float *buf, size_t n,
                        float lr, float momentum, const struct cuk_amp *amp, int zero,
                        cudaStream_t s)
{
    CUK_DISPATCH(dt, sgd_launch, p, lp, g, buf, n, lr, momentum, amp, zero, s);
}
