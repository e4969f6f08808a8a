/* sim_app.c: scenario programs for the simulated driver and CUPTI (test_gpusim.py checks the
 * traces they leave). Injected (CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH, like `gprof-train
 * run -- CMD`), or, built as sim_app_linked, calling libprof itself before CUDA (like the trainer).
 *
 *   sim_app SCENARIO [--driver] [--threads N] [--steps N] [--devices N]
 *   work              NVTX ranges around allocations, pageable and pinned copies, a memset,
 *                     launches and a stream sync, on N threads (default 4), then exit; thread
 *                     i works on device i % N (--devices, default 1), device 1's buffers 4x
 *                     as large
 *   running_elsewhere_at_exit  a thread on device 1 launches a 300 ms kernel and ends; the
 *                     main thread (device 0 current) exits without a sync
 *   created_context_at_exit  a thread creates a context of its own (cuCtxCreate), launches a
 *                     300 ms kernel in it and ends; the main thread exits without a sync
 *   reload            a kernel of a module, the module unloaded and another loaded whose
 *                     kernel reuses the first one's function entry (and name address)
 *   window            (linked, --threads 1) steps of launches never synchronised, so work
 *                     runs into the next step; a profiling schedule from SIM_SCHEDULE
 *                     (wait,warmup,active)
 *   fork              work, a forked child that makes NVTX ranges and exits, more work
 *   sigterm           work, then SIGTERM to itself
 *   reset             work, a device reset (cudaDeviceReset), exit
 *   running_at_exit   a 300 ms kernel launched just before exit, no sync
 *   takeover          work, then another profiler in the program (torch.profiler does this)
 *   co_subscriber     work, then another tool subscribes beside libprof (CUPTI 13.3+: FAKE_CUPTI
 *                     multi) with a callback and buffers of its own, a context is created, and
 *                     work again; prints what the tool got ("co_subscriber: subscribe R,
 *                     callbacks C, kernels K")
 *                     registers its own buffer callbacks, more work
 *   late              (linked) a session, 200 ms for a late CUPTI buffer, a second session
 *   graphs            a CUDA graph of 4 kernels captured from a stream, then N steps (NVTX
 *                     ranges ProfilerStep#i) that replay it (range "graph") and launch one
 *                     kernel of their own (range "optimizer"), each step synchronised; each
 *                     launch call takes 30 us (the graph's 15 and 20 us kernels are shorter
 *                     than the call, longer than their share of it)
 * --driver: launches and copies through the driver API (Triton, NVRTC) instead of the runtime. */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef SIM_LINKED
#    include "gp/prof.h"
#endif
#include "fake_cupti.h"

void fake_cuda_as_runtime(int on);
void fake_cuda_device_reset(void);
void fake_cuda_launch_ns(uint64_t ns);

#define CHECK(call)                                                                                \
    do {                                                                                           \
        CUresult rc_ = (call);                                                                     \
        if (rc_ != CUDA_SUCCESS) {                                                                 \
            fprintf(stderr, "sim_app: %s failed (%d)\n", #call, (int)rc_);                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int driver_api, n_threads = 4, n_steps = 5, n_devices = 1;
static CUfunction fn_gemm, fn_relu;
static CUcontext contexts[2];

static void step(CUstream s, float *pinned, float *pageable, size_t n)
{
    CUdeviceptr d;
    nvtxRangePushA("step");
    CHECK(cuMemAlloc(&d, n * sizeof(float)));
    nvtxRangePushA("h2d");
    CHECK(cuMemcpyHtoDAsync(d, pageable, n * sizeof(float), s));
    CHECK(cuMemcpyHtoDAsync(d, pinned, n * sizeof(float), s));
    nvtxRangePop();
    nvtxRangePushA("forward");
    CHECK(cuMemsetD8Async(d, 0, 4096, s));
    CHECK(cuLaunchKernel(fn_gemm, 40, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
    CHECK(cuLaunchKernel(fn_relu, 5, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
    nvtxRangePop();
    CHECK(cuMemcpyDtoHAsync(pinned, d, n * sizeof(float), s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemFree(d));
    nvtxRangePop();
}

static void *worker(void *arg)
{
    int device = (int)(intptr_t)arg % n_devices;
    CHECK(cuCtxSetCurrent(contexts[device])); /* each thread has its own current context */
    fake_cuda_as_runtime(!driver_api);
    nvtxNameOsThreadA((uint32_t)gettid(), "sim worker");
    size_t n = (size_t)1 << (16 + 2 * device);
    float *pinned = NULL, *pageable = calloc(n, sizeof(float));
    CUstream s;
    CHECK(cuStreamCreate(&s, 0));
    CHECK(cuMemHostAlloc((void **)&pinned, n * sizeof(float), 0));
    for (int i = 0; i < n_steps; i++)
        step(s, pinned, pageable, n);
    CHECK(cuMemFreeHost(pinned));
    CHECK(cuStreamDestroy(s));
    free(pageable);
    return NULL;
}

static void work(void)
{
    pthread_t t[64];
    int n = n_threads < 64 ? n_threads : 64;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0)
            exit(1);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

static void setup(void)
{
    CUdevice dev;
    CUmodule mod;
    CHECK(cuInit(0));
    n_devices = n_devices < 1 ? 1 : n_devices > 2 ? 2 : n_devices;
    for (int i = 0; i < n_devices; i++) {
        CHECK(cuDeviceGet(&dev, i));
        CHECK(cuDevicePrimaryCtxRetain(&contexts[i], dev));
    }
    CHECK(cuCtxSetCurrent(contexts[0]));
    CHECK(cuModuleLoadData(&mod, "fatbin"));
    CHECK(cuModuleGetFunction(&fn_gemm, mod, "_Z9sgemm_nn6ParamsIfE"));
    CHECK(cuModuleGetFunction(&fn_relu, mod, "relu_kernel"));
}

static void sleep_ms(int ms)
{
    struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
}

static void do_fork(void)
{
    work();
    pid_t pid = fork();
    if (pid == 0) {
        nvtxRangePushA("child");
        nvtxRangePop();
        _exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "sim_app: the forked child failed (status %d)\n", st);
        exit(1);
    }
    work();
}

static void *launch_long_on_device_1(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(contexts[1]));
    fake_cuda_as_runtime(!driver_api);
    CHECK(cuLaunchKernel(fn_gemm, 300000, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL));
    return NULL;
}

static void *launch_long_in_own_context(void *arg)
{
    (void)arg;
    CUcontext ctx;
    CHECK(cuCtxCreate(&ctx, NULL, 0, 0));
    fake_cuda_as_runtime(!driver_api);
    CHECK(cuLaunchKernel(fn_gemm, 300000, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL));
    return NULL;
}

static void reload(void)
{
    CUmodule mod;
    CUfunction fn;
    fake_cuda_as_runtime(!driver_api);
    CHECK(cuModuleLoadData(&mod, "fatbin v1"));
    CHECK(cuModuleGetFunction(&fn, mod, "_Z9kernel_v1Pf"));
    CHECK(cuLaunchKernel(fn, 5, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
    CHECK(cuCtxSynchronize());
    sleep_ms(1200); /* delivered (every 500 ms) and converted before the module goes */
    CHECK(cuModuleUnload(mod));
    CHECK(cuModuleLoadData(&mod, "fatbin v2"));
    CHECK(cuModuleGetFunction(&fn, mod, "_Z9kernel_v2Pf"));
    CHECK(cuLaunchKernel(fn, 5, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
    CHECK(cuCtxSynchronize());
}

#ifdef SIM_LINKED
/* Each step launches 3 ms of work and does not wait for it: the last launches of a step run in
 * the next one, so the window's edges cut launch/work pairs. */
static void window_steps(void)
{
    fake_cuda_as_runtime(!driver_api);
    CUstream s;
    CHECK(cuStreamCreate(&s, 0));
    for (int i = 0; i < n_steps; i++) {
        gp_prof_step();
        CUdeviceptr d;
        CHECK(cuMemAlloc(&d, 4096));
        CHECK(cuLaunchKernel(fn_gemm, 1500, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
        CHECK(cuLaunchKernel(fn_relu, 1500, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
        CHECK(cuMemFree(d));
        sleep_ms(2);
    }
    gp_prof_step_end();
    CHECK(cuStreamSynchronize(s));
    CHECK(cuStreamDestroy(s));
}
#endif

/* Capture gemm, relu, gemm, relu on `s` into a graph; replay it each step. */
static void graph_steps(void)
{
    fake_cuda_as_runtime(!driver_api);
    fake_cuda_launch_ns(30000);
    CUstream s;
    CUgraph g;
    CUgraphExec exec;
    CHECK(cuStreamCreate(&s, 0));
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuLaunchKernel(fn_gemm, 40, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
    CHECK(cuLaunchKernel(fn_relu, 15, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
    CHECK(cuLaunchKernel(fn_gemm, 20, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
    CHECK(cuLaunchKernel(fn_relu, 15, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
    CHECK(cuStreamEndCapture(s, &g));
    CHECK(cuGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < n_steps; i++) {
        char name[32];
        snprintf(name, sizeof(name), "ProfilerStep#%d", i);
        nvtxRangePushA(name);
        nvtxRangePushA("graph");
        CHECK(cuGraphLaunch(exec, s));
        nvtxRangePop();
        nvtxRangePushA("optimizer");
        CHECK(cuLaunchKernel(fn_relu, 3, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
        nvtxRangePop();
        CHECK(cuStreamSynchronize(s));
        nvtxRangePop();
    }
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));
    CHECK(cuStreamDestroy(s));
}

static uint8_t own_buf[1 << 16];
static void CUPTIAPI own_request(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = own_buf;
    *size = sizeof(own_buf);
    *max = 0;
}
static void CUPTIAPI own_complete(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
    (void)c, (void)s, (void)buf, (void)size, (void)valid; /* a buffer of libprof's is lost */
}

/* Another tool beside libprof (co_subscriber): its subscriber, callbacks and buffers. */
static CUptiResult co_rc;
static int co_callbacks, co_kernels;
static void CUPTIAPI co_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id,
                                 const void *data)
{
    (void)ud, (void)d, (void)id, (void)data;
    __atomic_add_fetch(&co_callbacks, 1, __ATOMIC_RELAXED);
}
static void CUPTIAPI co_request(uint8_t **buf, size_t *size, size_t *max)
{
    *size = 1u << 20;
    *buf = aligned_alloc(8, *size);
    *max = 0;
}
static void CUPTIAPI co_complete(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
    (void)c, (void)s, (void)size;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            __atomic_add_fetch(&co_kernels, 1, __ATOMIC_RELAXED);
    free(buf);
}

static void co_subscriber(void)
{
    work();
    CUpti_SubscriberHandle sub;
    co_rc = cuptiSubscribe(&sub, (CUpti_CallbackFunc)co_callback, NULL);
    if (co_rc == CUPTI_SUCCESS)
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    /* as Kineto does, whether it could subscribe or not */
    cuptiActivityRegisterCallbacks(co_request, co_complete);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    CUcontext ctx, cur;
    CHECK(cuCtxGetCurrent(&cur));
    CHECK(cuCtxCreate(&ctx, NULL, 0, 0));
    CHECK(cuCtxDestroy(ctx));
    CHECK(cuCtxSetCurrent(cur));
    work();
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    printf("co_subscriber: subscribe %d, callbacks %d, kernels %d\n", (int)co_rc,
           __atomic_load_n(&co_callbacks, __ATOMIC_RELAXED),
           __atomic_load_n(&co_kernels, __ATOMIC_RELAXED));
    fflush(stdout);
}

static void scenario(const char *name)
{
    if (strcmp(name, "work") == 0) {
        work();
    } else if (strcmp(name, "fork") == 0) {
        do_fork();
    } else if (strcmp(name, "sigterm") == 0) {
        work();
        raise(SIGTERM);
        sleep_ms(10000);
        fprintf(stderr, "sim_app: still alive 10 s after SIGTERM\n");
        exit(1);
    } else if (strcmp(name, "reset") == 0) {
        work();
        CHECK(cuCtxSynchronize());
        fake_cuda_device_reset();
    } else if (strcmp(name, "running_at_exit") == 0) {
        fake_cuda_as_runtime(!driver_api);
        nvtxRangePushA("last");
        CHECK(cuLaunchKernel(fn_gemm, 300000, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL));
        nvtxRangePop();
    } else if (strcmp(name, "running_elsewhere_at_exit") == 0) {
        pthread_t t;
        if (n_devices < 2 || pthread_create(&t, NULL, launch_long_on_device_1, NULL) != 0)
            exit(1);
        pthread_join(t, NULL);
    } else if (strcmp(name, "created_context_at_exit") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, launch_long_in_own_context, NULL) != 0)
            exit(1);
        pthread_join(t, NULL);
    } else if (strcmp(name, "reload") == 0) {
        reload();
    } else if (strcmp(name, "graphs") == 0) {
        graph_steps();
#ifdef SIM_LINKED
    } else if (strcmp(name, "window") == 0) {
        window_steps();
#endif
    } else if (strcmp(name, "co_subscriber") == 0) {
        co_subscriber();
    } else if (strcmp(name, "takeover") == 0) {
        work();
        cuptiActivityRegisterCallbacks(own_request, own_complete);
        work();
    } else {
        fprintf(stderr, "sim_app: unknown scenario '%s'\n", name);
        exit(2);
    }
}

#ifdef SIM_LINKED
static void session(const char *name, const char *out)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = out;
    o.producer = "sim_app_linked";
    gp_error err;
    if (gp_prof_init(&o, &err) != GP_OK) {
        fprintf(stderr, "sim_app: gp_prof_init: %s\n", err.msg);
        exit(1);
    }
    scenario(name);
    if (gp_prof_shutdown(&err) != GP_OK) {
        fprintf(stderr, "sim_app: gp_prof_shutdown: %s\n", err.msg);
        exit(1);
    }
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: sim_app SCENARIO [--driver] [--threads N] [--steps N]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--driver") == 0)
            driver_api = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            n_threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            n_steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc)
            n_devices = atoi(argv[++i]);
    }
#ifdef SIM_LINKED
    /* the trainer's order: the profiler first, then CUDA (device memory at setup is seen) */
    const char *out = getenv("SIM_TRACE");
    if (strcmp(argv[1], "late") == 0) {
        char first[4096];
        snprintf(first, sizeof(first), "%s.first.json", out);
        setup();
        session("work", first);
        sleep_ms(200); /* the late buffer arrives now, between sessions */
        session("work", out);
        return 0;
    }
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = out;
    const char *sched = getenv("SIM_SCHEDULE");
    if (sched &&
        sscanf(sched, "%d,%d,%d", &o.schedule.wait, &o.schedule.warmup, &o.schedule.active) != 3)
        return 2;
    gp_error err;
    if (gp_prof_init(&o, &err) != GP_OK)
        return 1;
    setup();
    scenario(argv[1]);
    return gp_prof_shutdown(&err) == GP_OK ? 0 : 1;
#else
    setup();
    scenario(argv[1]);
    return 0;
#endif
}
