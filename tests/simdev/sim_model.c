/* The simulated device's timing model and its kernel records. The model is one GPU's data-sheet
 * peak rates, not a measurement: an NVIDIA H100 SXM5 80 GB (HBM3 3.35 TB/s, 67 TFLOP/s fp32,
 * 989 TFLOP/s dense fp16/bf16 on tensor cores), PCIe Gen5 copies at 25 GB/s from pinned and
 * 8 GB/s from pageable memory, 4 us from a launch call to its kernel, 2 us the shortest kernel. */
#include "sim_int.h"

#include "fake_cupti.h"

#include <dlfcn.h>
#include <string.h>

const struct sim_model sim_model = {
        .name = "sim-h100-roofline-v1 (NVIDIA H100 SXM5 80GB peak rates: fp32 67 TFLOP/s, "
                "fp16/bf16 tensor 989 TFLOP/s, HBM 3.35 TB/s, PCIe pinned 25 GB/s, pageable "
                "8 GB/s, launch 4 us, kernel >= 2 us)",
        .fp32_flops = 67e12,
        .tensor_flops = 989e12,
        .mem_bw = 3.35e12,
        .pinned_bw = 25e9,
        .pageable_bw = 8e9,
        .launch_ns = 4000,
        .min_kernel_ns = 2000,
        .device_memory = (size_t)80 << 30,
};

/* The module's word that its device is simulated, and by which model (cuda_module.c). */
__attribute__((visibility("default"))) const char *backend_cuda_simulated(void)
{
    return sim_model.name;
}

uint64_t sim_kernel_ns(double flops, double bytes, int tensor)
{
    double s = flops / (tensor ? sim_model.tensor_flops : sim_model.fp32_flops);
    double m = bytes / sim_model.mem_bw;
    uint64_t ns = (uint64_t)((s > m ? s : m) * 1e9);
    return ns > sim_model.min_kernel_ns ? ns : sim_model.min_kernel_ns;
}

void sim_kernel_record(CUpti_ActivityKernel10 *k, const char *name, unsigned blocks,
                       unsigned threads)
{
    memset(k, 0, sizeof(*k));
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->name = name;
    k->gridX = (int32_t)blocks;
    k->gridY = k->gridZ = k->blockY = k->blockZ = 1;
    k->blockX = (int32_t)threads;
    k->registersPerThread = 32;
    k->contextId = SIM_CONTEXT;
}

int sim_kernel(cudaStream_t stream, const char *name, uint64_t ns, unsigned blocks,
               unsigned threads, sim_run_fn run, const void *arg, size_t arg_bytes)
{
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    sim_lock();
    struct CUstream_st *s = sim_stream(stream);
    CUpti_ActivityKernel10 k;
    sim_kernel_record(&k, name, blocks, threads);
    sim_place(s, t0, ns, NULL, &k.start, &k.end);
    k.queued = fake_cupti_latency() ? t0 : 0;
    k.streamId = s->id;
    fake_cupti_enter();
    k.correlationId = fake_cupti_correlation();
    fake_cupti_device_record((CUpti_Activity *)&k, sizeof(k), k.end, SIM_CONTEXT);
    sim_api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t0, k.correlationId);
    fake_cupti_leave();
    int rc = sim_defer(s, run, arg, arg_bytes);
    sim_unlock();
    return rc;
}

static _Thread_local cudaError_t launch_error;

cudaError_t sim_take_launch_error(void)
{
    cudaError_t e = launch_error;
    launch_error = cudaSuccess;
    return e;
}

/* Our own kernels (k_*.cu through the shim): named by their symbol, as CUPTI names them, and
 * modelled as streaming 12 bytes and 4 FLOPs per thread, the shape of an elementwise kernel;
 * `run(arg)` runs the blocks (now, or at each launch of the graph capturing the stream). */
int sim_launch_kernel(cudaStream_t s, unsigned blocks, unsigned threads, const void *fn,
                      sim_run_fn run, const void *arg, size_t arg_bytes)
{
    if (blocks == 0 || threads == 0 || threads > 1024) {
        launch_error = cudaErrorInvalidConfiguration;
        return -1;
    }
    Dl_info info;
    const char *name = dladdr(fn, &info) && info.dli_sname ? info.dli_sname : "sim_kernel";
    double n = (double)blocks * threads;
    cudaError_t rc = sim_work(s, name, sim_kernel_ns(4 * n, 12 * n, 0), blocks, threads, run, arg,
                              arg_bytes);
    if (rc != cudaSuccess)
        launch_error = rc;
    return rc == cudaSuccess ? 0 : -1;
}
