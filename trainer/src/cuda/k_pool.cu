/* 2x2 max pooling, stride 2: one thread per output element; windows do not overlap, so the
 * backward pass writes each input element once (no atomics, no memset). */
#include "k_common.cuh"

// The argmax (the first of ties) of the 2x2 window whose top-left element is in[at], its right
// neighbour dc and the one below dr elements on.
template <typename T> static __device__ int window_argmax(const T *in, int at, int dc, int dr)
{
    int best = at, cand[3] = {at + dc, at + dr, at + dr + dc};
    for (int k = 0; k < 3; k++)
        if (to_f(in[cand[k]]) > to_f(in[best]))
            best = cand[k];
    return best;
}

// An input element's gradient: dy[o] if it was its window's argmax (arg[o] == off), else 0.
template <typename T>
static __device__ T unpool(const T *dy, const int32_t *arg, size_t o, int off, int in_window)
{
    return from_f<T>(in_window && arg[o] == off ? to_f(dy[o]) : 0.0f);
}

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
        int best = window_argmax(in, 2 * r * w + 2 * c, 1, w);
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
        size_t o = plane * oh * ow + (size_t)(r / 2) * ow + c / 2;
        dx[i] = unpool(dy, arg, o, off, r / 2 < oh && c / 2 < ow);
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

// --channels-last: x (n, h, w, c) -> y (n, h/2, w/2, c); arg = argmax offset within the image,
// the window's elements tried in the NCHW kernel's order (ties keep the first)
template <typename T>
__global__ void pool_nhwc_fwd_kernel(T *y, int32_t *arg, const T *x, int h, int w, int c,
                                     size_t total)
{
    int oh = h / 2, ow = w / 2;
    CUK_GRID_LOOP(o, total)
    {
        int ch = (int)(o % c), col = (int)(o / c % ow), row = (int)(o / c / ow % oh);
        size_t img = o / c / ow / oh;
        const T *in = x + img * h * w * c;
        int best = window_argmax(in, ((2 * row) * w + 2 * col) * c + ch, c, w * c);
        y[o] = in[best];
        arg[o] = best;
    }
}

template <typename T>
static void pool_nhwc_fwd_launch(void *y, int32_t *arg, const void *x, int n, int c, int h, int w,
                                 cudaStream_t s)
{
    size_t total = (size_t)n * c * (h / 2) * (w / 2);
    pool_nhwc_fwd_kernel<T>
            <<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)y, arg, (const T *)x, h, w, c, total);
}

extern "C" void cuk_maxpool2_nhwc_fwd(enum cuk_dtype dt, void *y, int32_t *arg, const void *x,
                                      int n, int c, int h, int w, cudaStream_t s)
{
    CUK_DISPATCH(dt, pool_nhwc_fwd_launch, y, arg, x, n, c, h, w, s);
}

// one thread per input element (n, h, w, c): dy of its window if it was the argmax, else 0
template <typename T>
__global__ void pool_nhwc_bwd_kernel(T *dx, const T *dy, const int32_t *arg, int h, int w, int c,
                                     size_t total)
{
    int oh = h / 2, ow = w / 2;
    CUK_GRID_LOOP(i, total)
    {
        int ch = (int)(i % c), col = (int)(i / c % w), row = (int)(i / c / w % h);
        size_t img = i / c / w / h;
        int off = (row * w + col) * c + ch;
        size_t o = ((img * oh + row / 2) * ow + col / 2) * c + ch;
        dx[i] = unpool(dy, arg, o, off, row / 2 < oh && col / 2 < ow);
    }
}

template <typename T>
static void pool_nhwc_bwd_launch(void *dx, const void *dy, const int32_t *arg, int n, int c, int h,
                                 int w, cudaStream_t s)
{
    size_t total = (size_t)n * c * h * w;
    pool_nhwc_bwd_kernel<T>
            <<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)dx, (const T *)dy, arg, h, w, c, total);
}

extern "C" void cuk_maxpool2_nhwc_bwd(enum cuk_dtype dt, void *dx, const void *dy,
                                      const int32_t *arg, int n, int c, int h, int w,
                                      cudaStream_t s)
{
    CUK_DISPATCH(dt, pool_nhwc_bwd_launch, dx, dy, arg, n, c, h, w, s);
}

// --channels-last's flatten: (n, hw, c) -> (n, c, hw) with to_nchw, else back
template <typename T>
__global__ void layout_kernel(T *dst, const T *src, int c, int hw, int to_nchw, size_t total)
{
    CUK_GRID_LOOP(i, total)
    {
        size_t img = i / ((size_t)c * hw);
        int in_img = (int)(i % ((size_t)c * hw));
        int ch = to_nchw ? in_img / hw : in_img % c, p = to_nchw ? in_img % hw : in_img / c;
        size_t from = to_nchw ? (img * hw + p) * c + ch : (img * c + ch) * hw + p;
        dst[i] = src[from];
    }
}

template <typename T>
static void layout_launch(void *dst, const void *src, int n, int c, int hw, int to_nchw,
                          cudaStream_t s)
{
    size_t total = (size_t)n * c * hw;
    layout_kernel<T><<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)dst, (const T *)src, c, hw,
                                                               to_nchw, total);
}

extern "C" void cuk_layout(enum cuk_dtype dt, void *dst, const void *src, int n, int c, int hw,
                           int to_nchw, cudaStream_t s)
{
    CUK_DISPATCH(dt, layout_launch, dst, src, n, c, hw, to_nchw, s);
}
