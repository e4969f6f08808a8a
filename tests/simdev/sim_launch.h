/* sim_launch.h: the launch and __syncthreads of cuda_cpu_shim.h for the simulated device
 * (tests/simdev), where a training run makes thousands of launches and one OS thread per CUDA
 * thread would take seconds each. A block's threads are fibers (ucontext) on the calling
 * thread, switched only at __syncthreads; a launch whose first thread ends without reaching a
 * barrier runs its other threads as plain calls. Blocks still run in the shim's shuffled order.
 * Each launch is handed to the simulated runtime (sim_launch_kernel) as a closure holding its
 * arguments by value: it makes the API and kernel records and runs the closure at once, or,
 * under stream capture, keeps it as a graph node run at each graph launch. Included by
 * cuda_cpu_shim.h when CUSIM_SIMDEV is defined. */
#ifndef GP_TESTS_SIM_LAUNCH_H
#define GP_TESTS_SIM_LAUNCH_H

#include <string.h>
#include <type_traits>
#include <ucontext.h>

extern "C" int sim_launch_kernel(cudaStream_t s, unsigned blocks, unsigned threads, const void *fn,
                                 void (*run)(void *), const void *arg, size_t arg_bytes);

/* Fiber `slot` t runs thread t of the current block. A slot's stack is entered once, with
 * swapcontext; after that every switch is a __builtin_setjmp/__builtin_longjmp pair: no
 * signal-mask system call, and nothing the sanitizers' setjmp interceptors (or glibc's fortified
 * longjmp) would take for a jump into a dead frame. A slot parks at the top of its loop, runs a
 * thread's body when the scheduler jumps to `park`, and at a barrier saves its place in `at` and
 * jumps back to `sched`. */
typedef void *cusim_jmp[5];
#define CUSIM_SLOTS 1024
#define CUSIM_STACK (64u << 10)
struct cusim_fibers {
    cusim_jmp sched, park[CUSIM_SLOTS], at[CUSIM_SLOTS];
    ucontext_t boot, ctx[CUSIM_SLOTS];
    char *stack[CUSIM_SLOTS];
    unsigned char state[CUSIM_SLOTS]; /* 0 not started, 1 started, 2 done */
    unsigned cur;
    int in_fiber, yielded;
    void (*call)(void *);
    void *arg;
};
extern cusim_fibers cusim_fs;

/* Not in the function that saved the buffer (a __builtin_longjmp rule). */
static __attribute__((noinline)) void cusim_jump(cusim_jmp *to)
{
    __builtin_longjmp(*to, 1);
}

static inline void __syncthreads(void)
{
    if (!cusim_fs.in_fiber) {
        fprintf(stderr, "cusim: __syncthreads in a launch whose first thread reached none\n");
        abort();
    }
    cusim_fs.yielded = 1;
    if (!__builtin_setjmp(cusim_fs.at[cusim_fs.cur]))
        cusim_jump(&cusim_fs.sched);
}

static void cusim_slot_loop(void)
{
    volatile unsigned slot = cusim_fs.cur;
    for (;;) {
        if (!__builtin_setjmp(cusim_fs.park[slot]))
            cusim_jump(&cusim_fs.sched);
        cusim_fs.call(cusim_fs.arg);
        cusim_fs.state[slot] = 2;
    }
}

static inline dim3 cusim_tid(unsigned t, dim3 block)
{
    return dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
}

/* Run (or resume) thread t of the block on its slot until it yields or ends. */
static inline void cusim_fiber_step(unsigned t, dim3 block)
{
    cusim_fs.cur = t;
    threadIdx = cusim_tid(t, block);
    if (!cusim_fs.stack[t]) { /* a new slot: enter its stack once; it parks and comes back */
        cusim_fs.stack[t] = (char *)malloc(CUSIM_STACK);
        if (!cusim_fs.stack[t])
            abort();
        getcontext(&cusim_fs.ctx[t]);
        cusim_fs.ctx[t].uc_stack.ss_sp = cusim_fs.stack[t];
        cusim_fs.ctx[t].uc_stack.ss_size = CUSIM_STACK;
        cusim_fs.ctx[t].uc_link = NULL;
        makecontext(&cusim_fs.ctx[t], cusim_slot_loop, 0);
        if (!__builtin_setjmp(cusim_fs.sched))
            swapcontext(&cusim_fs.boot, &cusim_fs.ctx[t]);
    }
    int started = cusim_fs.state[t];
    cusim_fs.state[t] = started ? started : 1;
    cusim_fs.in_fiber = 1;
    if (!__builtin_setjmp(cusim_fs.sched))
        cusim_jump(started ? &cusim_fs.at[t] : &cusim_fs.park[t]);
    cusim_fs.in_fiber = 0;
}

/* One block: round-robin over its fibers, each to its next barrier. @return 1 if the block's
 * first thread ended without a barrier (`probe`: the caller may run the rest directly). */
static inline int cusim_run_block(unsigned threads, dim3 block, int probe)
{
    memset(cusim_fs.state, 0, threads);
    cusim_fs.yielded = 0;
    cusim_fiber_step(0, block);
    if (probe && !cusim_fs.yielded && cusim_fs.state[0] == 2) {
        for (unsigned t = 1; t < threads; t++) {
            threadIdx = cusim_tid(t, block);
            cusim_fs.call(cusim_fs.arg);
        }
        return 1;
    }
    for (unsigned left = 1, first = 1; left; first = 0) { /* thread 0 already had its turn */
        left = cusim_fs.state[0] != 2;
        for (unsigned t = first; t < threads; t++) {
            if (cusim_fs.state[t] != 2)
                cusim_fiber_step(t, block);
            left += cusim_fs.state[t] != 2;
        }
    }
    return 0;
}

template <typename F> static void cusim_call(void *f)
{
    (*(F *)f)();
}

/* Run every block of kernel k over grid x block with these arguments. */
template <typename... P, typename... A>
static void cusim_run_grid(dim3 grid, dim3 block, void (*k)(P...), A... args)
{
    unsigned threads = block.x * block.y * block.z, n_blocks = grid.x * grid.y * grid.z;
    auto body = [&]() { k((P)args...); };
    gridDim = grid;
    blockDim = block;
    cusim_launches++;
    cusim_fs.call = cusim_call<decltype(body)>;
    cusim_fs.arg = &body;
    unsigned *order = cusim_block_order(n_blocks);
    int direct = 0;
    for (unsigned o = 0; o < n_blocks; o++) {
        unsigned b = order[o];
        blockIdx = dim3(b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y));
        if (direct) {
            for (unsigned t = 0; t < threads; t++) {
                threadIdx = cusim_tid(t, block);
                body();
            }
        } else {
            direct = cusim_run_block(threads, block, o == 0);
        }
    }
    free(order);
}

/* kernel<<<grid, block, smem, stream>>>(args...) with the same grid arithmetic. The launch is a
 * closure over copies of the arguments (kernel arguments are plain values, as CUDA copies them
 * at launch), so a graph can run it again later. */
template <typename... P, typename... A>
static void cusim_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, void (*k)(P...),
                         A... args)
{
    (void)smem;
    unsigned threads = block.x * block.y * block.z, n_blocks = grid.x * grid.y * grid.z;
    auto job = [=]() { cusim_run_grid(grid, block, k, args...); };
    static_assert(std::is_trivially_copyable<decltype(job)>::value, "a launch is copied as bytes");
    /* on an invalid configuration nothing runs: cudaGetLastError reports it */
    sim_launch_kernel(stream, n_blocks, threads, reinterpret_cast<const void *>(k),
                      cusim_call<decltype(job)>, &job, sizeof(job));
}

#endif
