/* fault_app.c: a training loop on the simulated driver and CUPTI with one switch per fault, for
 * the diagnosis-accuracy suite (bench/accuracy_gpu.py). libprof is linked and started first, as
 * in the trainer; the trace goes to $FAULT_TRACE. Each step is an NVTX ProfilerStep#N range
 * holding the loader wait (enumerate(DataLoader)#...__next__), the batch's H2D copy, forward
 * and backward kernels each launched from a CPU op that takes --host-us, an optimizer, and
 * optionally an NCCL all-reduce. The host runs ahead of the GPU (no sync per step) by at most
 * --queue-us of queued work a stream, as CUDA's launch queue bounds it, unless a fault makes it
 * wait. The simulated device has 80 GiB; its allocations are host memory never touched.
 *
 *   fault_app [--steps N] [--kernels N] [--kernel-us N] [--host-us N] [--loader-us N]
 *             [--batch-kib N] [--pageable-every N] [--blocking-copies N] [--blocking-memsets N]
 *             [--sync-every-kernel] [--tiny N] [--tiny-ns N] [--idle-every N] [--idle-ms N]
 *             [--same-stream] [--peak-pct N] [--churn-every N] [--grow-mib N]
 *             [--fp32-gemms N] [--comm-us N] [--comm-same-stream] [--queue-us N]
 *             [--launch-ns N] [--blocking-every N] [--sync-copy-stream] [--fuse-tiny]
 *             [--activations-mib N] [--checkpoint] [--nchw-convs N] [--transpose-us N]
 *             [--channels-last] [--no-steps] [--no-optimizer-range] [--first-call-ms N]
 * Durations: a kernel runs --kernel-us (gridDim.x microseconds in the fake), a copy moves 10
 * bytes/ns, a launch call costs the host --launch-ns (2 us). --fuse-tiny: GT05's fix, the --tiny
 * kernels as one kernel doing their work (--tiny x --tiny-ns). Every switch defaults to the healthy
 * setting. --activations-mib: each forward kernel (the first half) allocates its layer's
 * activation (N MiB, x1, x1.5 or x0.5 in turn) and the backward half frees them in reverse, as
 * a caching allocator's records show them (here each is a cudaMalloc/cudaFree: GT11 may fire);
 * --checkpoint keeps only every ceil(sqrt(layers))-th one and recomputes each segment's forward
 * in backward (torch.utils.checkpoint's trade). --nchw-convs: that many GEMM slots become
 * cuDNN Tensor Core convolutions on NCHW tensors, each between the nchwToNhwc and nhwcToNchw
 * transposes cuDNN runs (--transpose-us each); --channels-last: the same convolutions without
 * them (the fix). --no-steps: no ProfilerStep#N ranges (a plain `with profile():` block; the
 * analysis then cuts steps where each Optimizer.step#Adam.step range ends, as torch's optimizer
 * marks them); --no-optimizer-range: no such range either (a program whose iterations nothing
 * marks: inference, a C program under libprof);
 * --first-call-ms: each operator's first call sleeps N ms before it launches, as a program's
 * first iteration creates the CUDA context, library handles and loads modules lazily. The loop's
 * wall time and its thread's time runnable without a core (schedstat) go into the trace's header as
 * the trainer writes them, so a run beside other load says so. */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gp/prof.h"
#include "gp/trace_schema.h"

void fake_cuda_as_runtime(int on);
void fake_cuda_kernel_ns(uint64_t ns);
void fake_cuda_queue_ns(uint64_t ns);
void fake_cuda_launch_ns(uint64_t ns);

#define CHECK(call)                                                                                \
    do {                                                                                           \
        CUresult rc_ = (call);                                                                     \
        if (rc_ != CUDA_SUCCESS) {                                                                 \
            fprintf(stderr, "fault_app: %s failed (%d)\n", #call, (int)rc_);                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define MIB        ((size_t)1 << 20)
#define DEVICE_MEM ((size_t)80 << 30) /* fake_cupti.c's device */
#define CHUNK      ((size_t)4 << 30)  /* one allocation at most: the host must grant it */

static struct {
    int steps, kernels, kernel_us, host_us, loader_us, batch_kib, pageable_every;
    int blocking_copies, blocking_memsets, sync_every_kernel, tiny, tiny_ns;
    int idle_every, idle_ms, same_stream, peak_pct, churn_every, grow_mib;
    int fp32_gemms, comm_us, comm_same_stream, queue_us, launch_ns, blocking_every;
    int sync_copy_stream, fuse_tiny, activations_mib, checkpoint, nchw_convs, transpose_us;
    int channels_last, no_steps, no_optimizer_range, first_call_ms;
} opt = {.steps = 20,
         .kernels = 12,
         .kernel_us = 200,
         .host_us = 20,
         .loader_us = 20,
         .batch_kib = 1024,
         .blocking_every = 1,
         .idle_ms = 600,
         .peak_pct = 40,
         .tiny_ns = 600,
         .queue_us = 10000,
         .transpose_us = 50,
         .launch_ns = 2000};

static const struct {
    const char *name;
    int *value; /* NULL: a flag */
    int *flag;
} options[] = {
        {"--steps", &opt.steps, NULL},
        {"--kernels", &opt.kernels, NULL},
        {"--kernel-us", &opt.kernel_us, NULL},
        {"--host-us", &opt.host_us, NULL},
        {"--loader-us", &opt.loader_us, NULL},
        {"--batch-kib", &opt.batch_kib, NULL},
        {"--pageable-every", &opt.pageable_every, NULL},
        {"--blocking-copies", &opt.blocking_copies, NULL},
        {"--blocking-memsets", &opt.blocking_memsets, NULL},
        {"--blocking-every", &opt.blocking_every, NULL},
        {"--sync-copy-stream", NULL, &opt.sync_copy_stream},
        {"--fuse-tiny", NULL, &opt.fuse_tiny},
        {"--sync-every-kernel", NULL, &opt.sync_every_kernel},
        {"--tiny", &opt.tiny, NULL},
        {"--tiny-ns", &opt.tiny_ns, NULL},
        {"--idle-every", &opt.idle_every, NULL},
        {"--idle-ms", &opt.idle_ms, NULL},
        {"--same-stream", NULL, &opt.same_stream},
        {"--peak-pct", &opt.peak_pct, NULL},
        {"--churn-every", &opt.churn_every, NULL},
        {"--grow-mib", &opt.grow_mib, NULL},
        {"--fp32-gemms", &opt.fp32_gemms, NULL},
        {"--comm-us", &opt.comm_us, NULL},
        {"--comm-same-stream", NULL, &opt.comm_same_stream},
        {"--queue-us", &opt.queue_us, NULL},
        {"--launch-ns", &opt.launch_ns, NULL},
        {"--activations-mib", &opt.activations_mib, NULL},
        {"--checkpoint", NULL, &opt.checkpoint},
        {"--nchw-convs", &opt.nchw_convs, NULL},
        {"--transpose-us", &opt.transpose_us, NULL},
        {"--channels-last", NULL, &opt.channels_last},
        {"--no-steps", NULL, &opt.no_steps},
        {"--no-optimizer-range", NULL, &opt.no_optimizer_range},
        {"--first-call-ms", &opt.first_call_ms, NULL},
};

static struct {
    CUfunction gemm_tc, gemm_fp32, elementwise, tiny, adam, allreduce, conv, to_nhwc, to_nchw;
    CUstream compute, copy, comm;
    float *pinned, *pageable;
    CUdeviceptr batch, scratch;
    size_t batch_bytes;
} g;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Host work of `us` (Python and dispatch in a real loop): spun, so short spans are exact. */
static void host_work(int us)
{
    uint64_t end = now_ns() + (uint64_t)us * 1000u;
    while (now_ns() < end) {
    }
}

static void sleep_ms(int ms)
{
    struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
}

/* --first-call-ms: the first call of each operator (by name) waits that long first. */
static void first_call(const char *op)
{
    static const char *seen[16];
    static int n_seen;
    for (int i = 0; i < n_seen; i++)
        if (strcmp(seen[i], op) == 0)
            return;
    if (n_seen < 16)
        seen[n_seen++] = op;
    if (opt.first_call_ms > 0)
        sleep_ms(opt.first_call_ms);
}

static void launch(const char *op, CUfunction f, unsigned us, CUstream s)
{
    nvtxRangePushA(op);
    first_call(op);
    host_work(opt.host_us);
    CHECK(cuLaunchKernel(f, us, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
    if (opt.sync_every_kernel)
        CHECK(cuCtxSynchronize());
    nvtxRangePop();
}

static void load_batch(int step)
{
    nvtxRangePushA(GP_NAME_LOADER_NEXT);
    host_work(opt.loader_us);
    nvtxRangePop();
    int pageable = opt.pageable_every > 0 && step % opt.pageable_every == 0;
    CUstream s = opt.same_stream ? g.compute : g.copy;
    nvtxRangePushA("aten::to");
    CHECK(cuMemcpyHtoDAsync(g.batch, pageable ? g.pageable : g.pinned, g.batch_bytes, s));
    if (opt.sync_copy_stream) /* the batch has arrived before compute is queued */
        CHECK(cuStreamSynchronize(s));
    nvtxRangePop();
}

/* The fault's blocking calls: a scalar read back (loss.item()) and a zeroed buffer, every
 * --blocking-every steps. */
static void blocking_calls(int step)
{
    float loss;
    if (opt.blocking_every > 1 && step % opt.blocking_every != 0)
        return;
    for (int i = 0; i < opt.blocking_copies; i++) {
        nvtxRangePushA("aten::item");
        CHECK(cuMemcpyDtoH(&loss, g.scratch, sizeof(loss)));
        nvtxRangePop();
    }
    for (int i = 0; i < opt.blocking_memsets; i++) {
        nvtxRangePushA("aten::zero_");
        CHECK(cuMemsetD8(g.scratch, 0, 4096));
        nvtxRangePop();
    }
}

/* A convolution as cuDNN runs it on NCHW tensors with Tensor Cores: the input transposed to
 * NHWC, the NHWC kernel, the output transposed back; with --channels-last the kernel alone. */
static void conv(unsigned us)
{
    nvtxRangePushA("aten::cudnn_convolution");
    first_call("aten::cudnn_convolution");
    host_work(opt.host_us);
    if (!opt.channels_last)
        CHECK(cuLaunchKernel(g.to_nhwc, (unsigned)opt.transpose_us, 1, 1, 256, 1, 1, 0, g.compute,
                             NULL, NULL));
    CHECK(cuLaunchKernel(g.conv, us, 1, 1, 256, 1, 1, 0, g.compute, NULL, NULL));
    if (!opt.channels_last)
        CHECK(cuLaunchKernel(g.to_nchw, (unsigned)opt.transpose_us, 1, 1, 256, 1, 1, 0, g.compute,
                             NULL, NULL));
    nvtxRangePop();
}

static void kernel_slot(int k)
{
    int gemm = k % 2 == 0;
    if (gemm && k / 2 < opt.nchw_convs) {
        conv((unsigned)opt.kernel_us);
        return;
    }
    CUfunction f = gemm ? (k / 2 < opt.fp32_gemms ? g.gemm_fp32 : g.gemm_tc) : g.elementwise;
    launch(gemm ? "aten::mm" : "aten::add", f, (unsigned)opt.kernel_us, g.compute);
}

/* --activations-mib: layer i's activation, in MiB (sizes vary, as layers' do). */
static size_t act_bytes(int i)
{
    static const int tenths[3] = {10, 15, 5};
    return (size_t)opt.activations_mib * MIB / 10 * (size_t)tenths[i % 3];
}

#define MAX_LAYERS 256

/* Forward layers [first, last) again, keeping every activation (a checkpointed segment). */
static void recompute(int first, int last, CUdeviceptr *act)
{
    for (int i = first; i < last; i++) {
        if (!act[i])
            CHECK(cuMemAlloc(&act[i], act_bytes(i)));
        kernel_slot(i);
    }
}

/* The forward half of the kernels, each allocating its activation, and the backward half
 * freeing them in reverse; with --checkpoint only each segment's first activation is kept and
 * backward recomputes the segment before freeing it. */
static void compute_with_activations(void)
{
    int fwd = opt.kernels / 2, seg = 1;
    CUdeviceptr act[MAX_LAYERS] = {0};
    while (opt.checkpoint && seg * seg < fwd)
        seg++;
    for (int i = 0; i < fwd && i < MAX_LAYERS; i++) {
        CHECK(cuMemAlloc(&act[i], act_bytes(i)));
        kernel_slot(i);
        if (opt.checkpoint && i % seg != 0) { /* dropped: recomputed in backward */
            CHECK(cuMemFree(act[i]));
            act[i] = 0;
        }
    }
    for (int i = fwd - 1, k = fwd; i >= 0 && i < MAX_LAYERS; i--, k++) {
        if (opt.checkpoint && !act[i])
            recompute(i - i % seg, i + 1, act);
        kernel_slot(k);
        CHECK(cuMemFree(act[i]));
        act[i] = 0;
    }
}

static void compute(void)
{
    if (opt.activations_mib > 0)
        compute_with_activations();
    else
        for (int k = 0; k < opt.kernels; k++)
            kernel_slot(k);
    if (opt.tiny > 0) {
        int n = opt.fuse_tiny ? 1 : opt.tiny;
        fake_cuda_kernel_ns((uint64_t)opt.tiny_ns * (uint64_t)(opt.tiny / n));
        for (int k = 0; k < n; k++)
            CHECK(cuLaunchKernel(g.tiny, 1, 1, 1, 64, 1, 1, 0, g.compute, NULL, NULL));
        fake_cuda_kernel_ns(0);
    }
}

static void step_memory(int step)
{
    if (opt.churn_every > 0 && step % opt.churn_every == 0) {
        CUdeviceptr act;
        CHECK(cuMemAlloc(&act, 64 * MIB));
        CHECK(cuMemFree(act));
    }
    if (opt.grow_mib > 0) {
        CUdeviceptr kept; /* a tensor kept across steps: never freed */
        CHECK(cuMemAlloc(&kept, (size_t)opt.grow_mib * MIB));
    }
}

static void step(int i)
{
    char name[32];
    snprintf(name, sizeof(name), "%s%d", GP_NAME_STEP_PREFIX, i);
    if (!opt.no_steps)
        nvtxRangePushA(name);
    load_batch(i);
    nvtxRangePushA("forward_backward");
    compute();
    nvtxRangePop();
    if (opt.comm_us > 0) {
        nvtxRangePushA("nccl:all_reduce");
        CHECK(cuLaunchKernel(g.allreduce, (unsigned)opt.comm_us, 1, 1, 512, 1, 1, 0,
                             opt.comm_same_stream ? g.compute : g.comm, NULL, NULL));
        nvtxRangePop();
    }
    step_memory(i);
    if (!opt.no_optimizer_range)
        nvtxRangePushA("Optimizer.step#Adam.step");
    launch("aten::_foreach_add_", g.adam, (unsigned)(opt.kernel_us / 4 + 1), g.compute);
    if (!opt.no_optimizer_range)
        nvtxRangePop();
    blocking_calls(i);
    if (opt.idle_every > 0 && i > 0 && i % opt.idle_every == 0) {
        nvtxRangePushA("save_checkpoint");
        sleep_ms(opt.idle_ms);
        nvtxRangePop();
    }
    if (!opt.no_steps)
        nvtxRangePop();
}

static void setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, "fatbin"));
    CHECK(cuModuleGetFunction(&g.gemm_tc, mod, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"));
    CHECK(cuModuleGetFunction(&g.gemm_fp32, mod, "ampere_sgemm_128x64_nn"));
    CHECK(cuModuleGetFunction(&g.elementwise, mod, "vectorized_elementwise_kernel"));
    CHECK(cuModuleGetFunction(&g.tiny, mod, "unrolled_elementwise_kernel"));
    CHECK(cuModuleGetFunction(&g.adam, mod, "multi_tensor_apply_kernel"));
    CHECK(cuModuleGetFunction(&g.allreduce, mod, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
    CHECK(cuModuleGetFunction(&g.conv, mod,
                              "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc"));
    CHECK(cuModuleGetFunction(&g.to_nhwc, mod,
                              "void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false>"));
    CHECK(cuModuleGetFunction(&g.to_nchw, mod,
                              "void cudnn::ops::nhwcToNchwKernel<__half, __half, float, false>"));
    CHECK(cuStreamCreate(&g.compute, 0));
    CHECK(cuStreamCreate(&g.copy, 0));
    CHECK(cuStreamCreate(&g.comm, 0));
}

/* The model's weights: a pageable load once (outside the steps), then resident, filling the
 * device to --peak-pct with the batch and scratch buffers. */
static void load_model(void)
{
    g.batch_bytes = (size_t)opt.batch_kib << 10;
    g.pageable = calloc(1, g.batch_bytes);
    CHECK(cuMemHostAlloc((void **)&g.pinned, g.batch_bytes, 0));
    CHECK(cuMemAlloc(&g.batch, g.batch_bytes));
    CHECK(cuMemAlloc(&g.scratch, 4096));
    size_t want = DEVICE_MEM / 1000 * (size_t)(opt.peak_pct * 10);
    size_t have = g.batch_bytes + 4096 + (opt.churn_every > 0 ? 64 * MIB : 0);
    CUdeviceptr weights = 0;
    for (size_t left = want > have + MIB ? want - have : MIB, n; left > 0; left -= n) {
        n = left < CHUNK ? left : CHUNK;
        CHECK(cuMemAlloc(&weights, n));
    }
    nvtxRangePushA("load_state_dict");
    CHECK(cuMemcpyHtoDAsync(weights, g.pageable, g.batch_bytes, g.compute));
    CHECK(cuStreamSynchronize(g.compute));
    nvtxRangePop();
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t k = 0, n = sizeof(options) / sizeof(options[0]);
        while (k < n && strcmp(argv[i], options[k].name) != 0)
            k++;
        if (k == n || (options[k].value && i + 1 >= argc)) {
            fprintf(stderr, "fault_app: bad option '%s' (see fault_app.c)\n", argv[i]);
            exit(2);
        }
        if (options[k].value)
            *options[k].value = atoi(argv[++i]);
        else
            *options[k].flag = 1;
    }
}

/* The steps, with the loop's wall time and the thread's wait for a core over it. */
static void train(void)
{
    int64_t wall0 = gp_prof_now_ns(), runq0 = gp_prof_thread_runq_ns();
    for (int i = 0; i < opt.steps; i++)
        step(i);
    int64_t runq = gp_prof_thread_runq_ns();
    gp_prof_config_int(GP_CFG_LOOP_WALL, gp_prof_now_ns() - wall0);
    if (runq >= 0 && runq0 >= 0) {
        gp_prof_config_int(GP_CFG_TRAIN_RUNQ, runq - runq0);
        gp_prof_config_int(GP_CFG_LOADER_RUNQ, 0); /* the batch is loaded in this thread */
    }
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = getenv("FAULT_TRACE");
    o.producer = "fault_app";
    gp_error err;
    if (gp_prof_init(&o, &err) != GP_OK) {
        fprintf(stderr, "fault_app: gp_prof_init: %s\n", err.msg);
        return 1;
    }
    setup();
    fake_cuda_as_runtime(1); /* PyTorch's calls: cudaLaunchKernel, cudaMemcpyAsync, ... */
    fake_cuda_queue_ns((uint64_t)opt.queue_us * 1000u);
    fake_cuda_launch_ns((uint64_t)opt.launch_ns);
    load_model();
    train();
    CHECK(cuCtxSynchronize());
    if (gp_prof_shutdown(&err) != GP_OK) {
        fprintf(stderr, "fault_app: gp_prof_shutdown: %s\n", err.msg);
        return 1;
    }
    return 0;
}
