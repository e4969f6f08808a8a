/* trainer/src/cuda/k_common.cuh: dtype conversions and dispatch shared by the k_*.cu files. */
#ifndef GP_TRAINER_K_COMMON_CUH
#define GP_TRAINER_K_COMMON_CUH

#include "cuda_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define CUK_THREADS 256
/* The grid cap: past CUK_MAX_BLOCKS * CUK_THREADS elements the grid-stride loops loop. Tests
 * on the CPU (tests/cudacpu) lower it so that they do, at sizes a CPU can run. */
#ifndef CUK_MAX_BLOCKS
#    define CUK_MAX_BLOCKS (65535 * 16)
#endif

static inline unsigned cuk_blocks(size_t n)
{
    size_t b = (n + CUK_THREADS - 1) / CUK_THREADS;
    return (unsigned)(b < CUK_MAX_BLOCKS ? (b ? b : 1) : CUK_MAX_BLOCKS);
}

template <typename T> __device__ __forceinline__ float to_f(T x);
template <> __device__ __forceinline__ float to_f<float>(float x)
{
    return x;
}
template <> __device__ __forceinline__ float to_f<__half>(__half x)
{
    return __half2float(x);
}
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

template <typename T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x)
{
    return x;
}
template <> __device__ __forceinline__ __half from_f<__half>(float x)
{
    return __float2half_rn(x);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x)
{
    return __float2bfloat16(x);
}

/* Call F<T>(args...) for the runtime dtype. */
#define CUK_DISPATCH(dt, F, ...)                                                                   \
    do {                                                                                           \
        if ((dt) == CUK_F16)                                                                       \
            F<__half>(__VA_ARGS__);                                                                \
        else if ((dt) == CUK_BF16)                                                                 \
            F<__nv_bfloat16>(__VA_ARGS__);                                                         \
        else                                                                                       \
            F<float>(__VA_ARGS__);                                                                 \
    } while (0)

#define CUK_GRID_LOOP(i, n)                                                                        \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n);                        \
         i += (size_t)gridDim.x * blockDim.x)

#endif
