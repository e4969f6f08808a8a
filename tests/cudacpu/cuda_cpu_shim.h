/* cuda_cpu_shim.h: just enough of CUDA's device side to run the trainer's kernels on the CPU.
 * A launch runs its blocks one after another, in a shuffled order (a GPU promises none: a
 * kernel whose later block overwrites an earlier one's result must not pass by the luck of
 * index order); a block's threads are OS threads, one per CUDA
 * thread, so __syncthreads is a real barrier and ThreadSanitizer sees a missing one as a data
 * race on __shared__ memory (a static: one block at a time uses it). Indices are thread-local.
 * What it cannot model: warps and their lockstep, the GPU memory model, timing. */
#ifndef GP_TESTS_CUDA_CPU_SHIM_H
#define GP_TESTS_CUDA_CPU_SHIM_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__      static

extern thread_local dim3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

struct cusim_block {
    pthread_barrier_t barrier;
    int sync_or;
};
extern cusim_block cusim_cur;
extern long cusim_launches;

#ifdef CUSIM_SIMDEV /* the simulated device (tests/simdev): fibers, launches reported */
static inline unsigned *cusim_block_order(unsigned n);
#    include "sim_launch.h"
#else
static inline void __syncthreads(void)
{
    pthread_barrier_wait(&cusim_cur.barrier);
}
#endif

static inline int __syncthreads_or(int pred)
{
    if (pred)
        __atomic_fetch_or(&cusim_cur.sync_or, 1, __ATOMIC_RELAXED);
    __syncthreads();
    int any = __atomic_load_n(&cusim_cur.sync_or, __ATOMIC_RELAXED);
    __syncthreads();
    if (threadIdx.x == 0)
        __atomic_store_n(&cusim_cur.sync_or, 0, __ATOMIC_RELAXED);
    __syncthreads();
    return any;
}

template <typename T> static inline T cusim_atomic_add_fp(T *a, T v)
{
    T old, next;
    __atomic_load(a, &old, __ATOMIC_RELAXED);
    do
        next = old + v;
    while (!__atomic_compare_exchange(a, &old, &next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}

static inline float atomicAdd(float *a, float v)
{
    return cusim_atomic_add_fp(a, v);
}

static inline double atomicAdd(double *a, double v)
{
    return cusim_atomic_add_fp(a, v);
}

static inline unsigned long long atomicAdd(unsigned long long *a, unsigned long long v)
{
    return __atomic_fetch_add(a, v, __ATOMIC_RELAXED);
}

/* device math intrinsics (names glibc or CUDA's headers declare already: renamed) */
static inline float cusim_expf(float x)
{
    return expf(x);
}
#define __expf cusim_expf

static inline float cusim_rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
#define rsqrtf cusim_rsqrtf

/* Blocks 0..n-1 in a shuffled order: reversed on every other launch (the last block first, so
 * a small grid is never left in index order), then a seeded Fisher-Yates shuffle. */
static inline unsigned *cusim_block_order(unsigned n)
{
    static unsigned seed = 20261126u;
    unsigned *o = (unsigned *)malloc(n * sizeof(unsigned));
    if (!o)
        abort();
    int reverse = cusim_launches % 2;
    for (unsigned i = 0; i < n; i++)
        o[i] = reverse ? n - 1 - i : i;
    for (unsigned i = n; i > 1; i--) {
        seed = seed * 1664525u + 1013904223u;
        unsigned j = (seed >> 8) % i, t = o[i - 1];
        o[i - 1] = o[j];
        o[j] = t;
    }
    return o;
}

#ifndef CUSIM_SIMDEV
template <typename F> struct cusim_thread_arg {
    F *body;
    dim3 tid, bid;
};

template <typename F> static void *cusim_thread(void *p)
{
    cusim_thread_arg<F> *a = (cusim_thread_arg<F> *)p;
    threadIdx = a->tid;
    blockIdx = a->bid;
    (*a->body)();
    return NULL;
}

/* kernel<<<grid, block, smem, stream>>>(args...) with the same grid arithmetic. */
template <typename... P, typename... A>
static void cusim_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, void (*k)(P...),
                         A... args)
{
    (void)smem;
    (void)stream;
    unsigned threads = block.x * block.y * block.z;
    if (grid.x * grid.y * grid.z == 0 || threads == 0 || threads > 1024) {
        fprintf(stderr, "cusim: invalid launch configuration\n");
        abort();
    }
    auto body = [&]() { k((P)args...); };
    gridDim = grid;
    blockDim = block;
    cusim_launches++;
    pthread_t *th = (pthread_t *)calloc(threads, sizeof(pthread_t));
    cusim_thread_arg<decltype(body)> *ta =
            (cusim_thread_arg<decltype(body)> *)calloc(threads, sizeof(*ta));
    unsigned n_blocks = grid.x * grid.y * grid.z;
    unsigned *order = cusim_block_order(n_blocks);
    for (unsigned o = 0; o < n_blocks; o++) {
        unsigned b = order[o];
        dim3 bid(b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y));
        pthread_barrier_init(&cusim_cur.barrier, NULL, threads);
        cusim_cur.sync_or = 0;
        for (unsigned t = 0; t < threads; t++) {
            dim3 tid(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
            ta[t] = {&body, tid, bid};
            if (pthread_create(&th[t], NULL, cusim_thread<decltype(body)>, &ta[t]) != 0)
                abort();
        }
        for (unsigned t = 0; t < threads; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&cusim_cur.barrier);
    }
    free(order);
    free(th);
    free(ta);
}

#endif

/* The host API calls the kernel files make. */
static inline cudaError_t cusim_func_attributes(cudaFuncAttributes *a)
{
    *a = cudaFuncAttributes();
    return cudaSuccess;
}
#define cudaFuncGetAttributes(a, k) cusim_func_attributes(a)

#endif
