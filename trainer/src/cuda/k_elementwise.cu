/* Elementwise kernels: casts, ReLU, bias add and bias gradient, fp32 accumulation. */
#include "k_common.cuh"

extern "C" size_t cuk_dtype_size(enum cuk_dtype dt)
{
    return dt == CUK_F32 ? 4 : 2;
}

template <typename T> __global__ void cast_kernel(T *dst, const float *src, size_t n);

extern "C" int cuk_have_image(void)
{
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, cast_kernel<float>) == cudaSuccess;
}

template <typename T> __global__ void cast_kernel(T *dst, const float *src, size_t n)
{
    CUK_GRID_LOOP(i, n)
    dst[i] = from_f<T>(src[i]);
}

template <typename T> static void cast_launch(void *dst, const float *src, size_t n, cudaStream_t s)
{
    cast_kernel<T><<<cuk_blocks(n), CUK_THREADS, 0, s>>>((T *)dst, src, n);
}

extern "C" void cuk_cast_from_f32(enum cuk_dtype dt, void *dst, const float *src, size_t n,
                                  cudaStream_t s)
{
    CUK_DISPATCH(dt, cast_launch, dst, src, n, s);
}

// NaN stays NaN, as in PyTorch: an fp16 overflow must reach the loss scaler, not become 0
template <typename T> __global__ void relu_fwd_kernel(T *y, const T *x, size_t n)
{
    CUK_GRID_LOOP(i, n)
    y[i] = to_f(x[i]) <= 0.0f ? from_f<T>(0.0f) : x[i];
}

template <typename T> static void relu_fwd_launch(void *y, const void *x, size_t n, cudaStream_t s)
{
    relu_fwd_kernel<T><<<cuk_blocks(n), CUK_THREADS, 0, s>>>((T *)y, (const T *)x, n);
}

extern "C" void cuk_relu_fwd(enum cuk_dtype dt, void *y, const void *x, size_t n, cudaStream_t s)
{
    CUK_DISPATCH(dt, relu_fwd_launch, y, x, n, s);
}

template <typename T> __global__ void relu_bwd_kernel(T *dx, const T *dy, const T *y, size_t n)
{
    CUK_GRID_LOOP(i, n)
    dx[i] = to_f(y[i]) <= 0.0f ? from_f<T>(0.0f) : dy[i]; // PyTorch's threshold_backward
}

template <typename T>
static void relu_bwd_launch(void *dx, const void *dy, const void *y, size_t n, cudaStream_t s)
{
    relu_bwd_kernel<T>
            <<<cuk_blocks(n), CUK_THREADS, 0, s>>>((T *)dx, (const T *)dy, (const T *)y, n);
}

extern "C" void cuk_relu_bwd(enum cuk_dtype dt, void *dx, const void *dy, const void *y, size_t n,
                             cudaStream_t s)
{
    CUK_DISPATCH(dt, relu_bwd_launch, dx, dy, y, n, s);
}

// y (n, c, hw) += b (c)
template <typename T> __global__ void bias_add_kernel(T *y, const float *b, int c, int hw, size_t n)
{
    CUK_GRID_LOOP(i, n)
    y[i] = from_f<T>(to_f(y[i]) + b[(i / hw) % c]);
}

template <typename T>
static void bias_add_launch(void *y, const float *b, int n, int c, int hw, cudaStream_t s)
{
    size_t total = (size_t)n * c * hw;
    bias_add_kernel<T><<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)y, b, c, hw, total);
}

extern "C" void cuk_bias_add(enum cuk_dtype dt, void *y, const float *b, int n, int c, int hw,
                             cudaStream_t s)
{
    CUK_DISPATCH(dt, bias_add_launch, y, b, n, c, hw, s);
}

// Called by every thread of the block with its partial sum s: db[ch] = the block's total (added
// to db[ch] with add)
static __device__ void block_sum_into(float *db, int ch, float s, int add)
{
    __shared__ float part[CUK_THREADS];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        db[ch] = add ? db[ch] + part[0] : part[0];
}

// one block per channel: db[ch] += sum over (n, hw) of dy[i, ch, p]
template <typename T>
__global__ void bias_grad_kernel(float *db, const T *dy, int n, int c, int hw, int add)
{
    int ch = blockIdx.x;
    float s = 0.0f;
    for (int j = threadIdx.x; j < n * hw; j += blockDim.x) {
        int i = j / hw, p = j % hw;
        s += to_f(dy[((size_t)i * c + ch) * hw + p]);
    }
    block_sum_into(db, ch, s, add);
}

template <typename T>
static void bias_grad_launch(float *db, const void *dy, int n, int c, int hw, int add,
                             cudaStream_t s)
{
    if (c <= 0)
        return;
    bias_grad_kernel<T><<<c, CUK_THREADS, 0, s>>>(db, (const T *)dy, n, c, hw, add);
}

extern "C" void cuk_bias_grad(enum cuk_dtype dt, float *db, const void *dy, int n, int c, int hw,
                              int add, cudaStream_t s)
{
    CUK_DISPATCH(dt, bias_grad_launch, db, dy, n, c, hw, add, s);
}

template <typename T> __global__ void accum_kernel(float *dst, const T *src, size_t n, int add)
{
    CUK_GRID_LOOP(i, n)
    dst[i] = add ? dst[i] + to_f(src[i]) : to_f(src[i]);
}

template <typename T>
static void accum_launch(float *dst, const void *src, size_t n, int add, cudaStream_t s)
{
    accum_kernel<T><<<cuk_blocks(n), CUK_THREADS, 0, s>>>(dst, (const T *)src, n, add);
}

extern "C" void cuk_accum_f32(enum cuk_dtype dt, float *dst, const void *src, size_t n, int add,
                              cudaStream_t s)
{
    CUK_DISPATCH(dt, accum_launch, dst, src, n, add, s);
}

// --fused: the bias add and the ReLU in one pass; the sum rounded to T first, as bias_add then
// relu_fwd would give it (NaN stays NaN)
template <typename T>
__global__ void bias_relu_kernel(T *y, const float *b, int c, int hw, size_t n)
{
    CUK_GRID_LOOP(i, n)
    {
        T v = from_f<T>(to_f(y[i]) + b[(i / hw) % c]);
        y[i] = to_f(v) <= 0.0f ? from_f<T>(0.0f) : v;
    }
}

template <typename T>
static void bias_relu_launch(void *y, const float *b, int n, int c, int hw, cudaStream_t s)
{
    size_t total = (size_t)n * c * hw;
    bias_relu_kernel<T><<<cuk_blocks(total), CUK_THREADS, 0, s>>>((T *)y, b, c, hw, total);
}

extern "C" void cuk_bias_relu_fwd(enum cuk_dtype dt, void *y, const float *b, int n, int c, int hw,
                                  cudaStream_t s)
{
    CUK_DISPATCH(dt, bias_relu_launch, y, b, n, c, hw, s);
}

// --fused: one block per channel masks the gradient by the ReLU's output and sums it for the bias
template <typename T>
__global__ void relu_bias_grad_kernel(T *dx, float *db, const T *dy, const T *y, int n, int c,
                                      int hw, int add)
{
    int ch = blockIdx.x;
    float s = 0.0f;
    for (int j = threadIdx.x; j < n * hw; j += blockDim.x) {
        size_t at = ((size_t)(j / hw) * c + ch) * hw + j % hw;
        T v = to_f(y[at]) <= 0.0f ? from_f<T>(0.0f) : dy[at]; // threshold_backward
        dx[at] = v;
        s += to_f(v);
    }
    block_sum_into(db, ch, s, add);
}

template <typename T>
static void relu_bias_grad_launch(void *dx, float *db, const void *dy, const void *y, int n, int c,
                                  int hw, int add, cudaStream_t s)
{
    if (c <= 0)
        return;
    relu_bias_grad_kernel<T>
            <<<c, CUK_THREADS, 0, s>>>((T *)dx, db, (const T *)dy, (const T *)y, n, c, hw, add);
}

extern "C" void cuk_relu_bwd_bias_grad(enum cuk_dtype dt, void *dx, float *db, const void *dy,
                                       const void *y, int n, int c, int hw, int add, cudaStream_t s)
{
    CUK_DISPATCH(dt, relu_bias_grad_launch, dx, db, dy, y, n, c, hw, add, s);
}
