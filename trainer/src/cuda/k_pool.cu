/* 2x2 max pooling, stride 2: one thread per output element; windows do not overlap, so the
 * backward pass writes each input element once (no atomics, no memset). */
#include "k_common.cuh"

// x (n, c, h, w) -> y (n, c, h/2, w/2); arg = argmax offset within the input plane
template <typename T>
__global__ void pool_fwd_kernel(T *y, int32_t *arg, const T *x, int h, int w, size_t total)
{
    int oh = h / 2, ow = w / 2;
    CUK_GRID_LOOP(o, total)
    {
        size_t plane = o / ((size_t)oh * ow);
        int r = (int)(o % ((size_t)oh * ow)) / ow, c = (int)(o % ow);
        const T *in = x + plane * h * w;
        int best = 2 * r * w + 2 * c;
        int cand[3] = {best + 1, best + w, best + w + 1};
        for (int k = 0; k < 3; k++)
            if (to_f(in[cand[k]]) > to_f(in[best]))
                best = cand[k];
        y[o] = in[best];
        arg[o] = best;
    }
}

template <typename T>
static void pool_fwd_launch(void *y, int32_t *arg, const void *x, int n, int c, int h, int w,
                            cudaStream_t s)
{
    size_t total = (size_t)n * c * (h / 2) * (w / 2);
    pool_fwd_kernel<T>
            <<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)y, arg, (const T *)x, h, w, total);
}

extern "C" void cuk_maxpool2_fwd(enum cuk_dtype dt, void *y, int32_t *arg, const void *x, int n,
                                 int c, int h, int w, cudaStream_t s)
{
    CUK_DISPATCH(dt, pool_fwd_launch, y, arg, x, n, c, h, w, s);
}

// one thread per input element: dy of its window if it was the argmax, else 0
template <typename T>
__global__ void pool_bwd_kernel(T *dx, const T *dy, const int32_t *arg, int h, int w, size_t total)
{
    int oh = h / 2, ow = w / 2;
    CUK_GRID_LOOP(i, total)
    {
        size_t plane = i / ((size_t)h * w);
        int off = (int)(i % ((size_t)h * w)), r = off / w, c = off % w;
        float v = 0.0f;
        if (r / 2 < oh && c / 2 < ow) {
            size_t o = plane * oh * ow + (size_t)(r / 2) * ow + c / 2;
            if (arg[o] == off)
                v = to_f(dy[o]);
        }
        dx[i] = from_f<T>(v);
    }
}

template <typename T>
static void pool_bwd_launch(void *dx, const void *dy, const int32_t *arg, int n, int c, int h,
                            int w, cudaStream_t s)
{
    size_t total = (size_t)n * c * h * w;
    pool_bwd_kernel<T>
            <<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)dx, (const T *)dy, arg, h, w, total);
}

extern "C" void cuk_maxpool2_bwd(enum cuk_dtype dt, void *dx, const void *dy, const int32_t *arg,
                                 int n, int c, int h, int w, cudaStream_t s)
{
    CUK_DISPATCH(dt, pool_bwd_launch, dx, dy, arg, n, c, h, w, s);
}
