#!/usr/bin/env python3
"""Generate the rules engine's trace fixtures (tests/data/rules/*.json.gz).

Each scenario is a Kineto-style trace (trace contract, DESIGN.md): ProfilerStep#N
user_annotation ranges on the CPU thread, enumerate(DataLoader)#...__next__ ranges, cuda_runtime
launches correlated with kernels/memcpys/memsets on pid=device tid=stream (ac2g flows), [memory]
instant events, and the top-level "gprof" object for trainer-style traces. A tiny discrete-time
model (CPU cursor, per-stream GPU cursors) places every event, so each scenario differs from the
healthy one by one cause. Output is deterministic (gzip mtime 0); run with --check to verify the
committed files match.  Usage: gen_rule_traces.py [--check] [OUTDIR]
"""
import gzip
import io
import json
import os
import sys

GIB = 1 << 30
A100_MEM = 42505273344
COMPUTE = 7      # compute stream
COPY = 20        # copy stream
NCCL = 30        # communication stream
PID, TID = 4242, 4242
LOADER_SP = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
LOADER_MP = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
GEMM_TC = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel"
GEMM_FP32 = "ampere_sgemm_128x64_tn"
CONV_TC = ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_"
           "stage4_warpsize2x2x1_g1_tensor16x8x8_kernel")
TO_NHWC = ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
           "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)")
TO_NCHW = ("void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, "
           "(cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, float const*, float*)")
ELEMWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"
RELU = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)"


def trainer_cfg(**kw):
    cfg = {"version": "0.1.0", "producer": "trainer", "model": "mlp", "batch_size": 64,
           "workers": 4, "prefetch": 2, "pin_memory": True, "non_blocking": True, "amp": "bf16",
           "cudnn_benchmark": False, "dataset_format": "idx", "device": "cuda",
           "device_name": "NVIDIA A100-SXM4-40GB", "total_device_memory": A100_MEM,
           "cpu_count": 16, "physical_cores": 8, "gpu_status": "recorded", "dropped_records": 0,
           "warnings": []}
    cfg.update(kw)
    return cfg


class Gen:
    """Places events on one CPU thread and several GPU streams of device 0."""

    def __init__(self, gprof=None, compute_major=8, total_mem=A100_MEM, gpu=True):
        self.ev, self.t, self.corr, self.ext, self.stack = [], 1000.0, 100, 1, [0]
        self.gpu_end = {}
        self.gprof, self.compute_major, self.total_mem, self.gpu = gprof, compute_major, total_mem, gpu
        self.inter_kernel = 0.0     # device gap between back-to-back kernels on a stream
        self.alloc, self.reserved = 2 * GIB, 4 * GIB

    def x(self, cat, name, ts, dur, pid=PID, tid=TID, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
             "ts": round(ts, 3), "dur": round(dur, 3)}
        if args is not None:
            e["args"] = args
        self.ev.append(e)
        return e

    def range(self, cat, name, body):
        start, ext = self.t, self.ext
        self.ext += 1
        self.stack.append(ext)
        body()
        self.stack.pop()
        self.x(cat, name, start, self.t - start, args={"External id": ext})

    def work(self, us):
        self.t += us

    def stream_ready(self, stream):
        return self.gpu_end.get(stream, 0.0)

    def _gpu(self, cat, name, stream, api, api_us, dur, gpu_args, blocking=False, after=0.0):
        corr, api_ts = self.corr, self.t
        self.corr += 1
        prev = self.stream_ready(stream)
        start = max(prev + (self.inter_kernel if prev else 0.0), api_ts + api_us + 4.0, after)
        end = start + dur
        self.gpu_end[stream] = end
        api_dur = (end - api_ts + 2.0) if blocking else api_us
        self.x("cuda_runtime", api, api_ts, api_dur,
               args={"External id": self.stack[-1], "cbid": 211, "correlation": corr})
        self.ev.append({"ph": "s", "id": corr, "pid": PID, "tid": TID, "ts": round(api_ts, 3),
                        "cat": "ac2g", "name": "ac2g"})
        args = {"External id": self.stack[-1], "device": 0, "context": 1, "stream": stream,
                "correlation": corr}
        args.update(gpu_args)
        self.x(cat, name, start, dur, pid=0, tid=stream, args=args)
        self.ev.append({"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": round(start, 3),
                        "cat": "ac2g", "name": "ac2g", "bp": "e"})
        self.t = api_ts + api_dur
        return start, end

    def kernel(self, name, dur, stream=COMPUTE, api_us=6.0, after=0.0):
        return self._gpu("kernel", name, stream, "cudaLaunchKernel", api_us, dur,
                         {"queued": 0, "registers per thread": 32, "shared memory": 0,
                          "blocks per SM": 1.2, "warps per SM": 4.8, "grid": [128, 1, 1],
                          "block": [128, 1, 1], "est. achieved occupancy %": 12}, after=after)

    def memcpy(self, direction, src, dst, nbytes, dur, stream=COMPUTE, api="cudaMemcpyAsync"):
        blocking = api == "cudaMemcpy" or src == "Pageable" or dst == "Pageable"
        return self._gpu("gpu_memcpy", "Memcpy %s (%s -> %s)" % (direction, src, dst), stream, api,
                         5.0, dur, {"bytes": nbytes, "memory bandwidth (GB/s)": nbytes / (dur * 1e3)},
                         blocking=blocking)

    def op(self, name, kernel, kernel_us, op_us, stream=COMPUTE, after=0.0):
        """A cpu_op that launches one kernel and spends op_us on the CPU in all."""
        start = self.t

        def body():
            self.work(op_us * 0.3)
            self.kernel(kernel, kernel_us, stream, after=after)
            self.t = max(self.t, start + op_us)
        self.range("cpu_op", name, body)

    def sync(self, api="cudaStreamSynchronize", stream=COMPUTE):
        ends = [self.stream_ready(stream)] if api == "cudaStreamSynchronize" else self.gpu_end.values()
        until = max(list(ends) + [self.t])
        dur = max(3.0, until - self.t + 2.0)
        self.x("cuda_runtime", api, self.t, dur,
               args={"External id": self.stack[-1], "cbid": 131, "correlation": self.corr})
        self.corr += 1
        self.t += dur

    def api(self, name, dur):
        self.x("cuda_runtime", name, self.t, dur,
               args={"External id": self.stack[-1], "cbid": 20, "correlation": self.corr})
        self.corr += 1
        self.t += dur

    def mem(self, delta, reserved=None):
        self.alloc += delta
        if reserved is not None:
            self.reserved = reserved
        self.reserved = max(self.reserved, self.alloc)
        self.ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                        "pid": PID, "tid": TID, "ts": round(self.t, 3),
                        "args": {"Addr": 140000000000000 + self.corr * 4096, "Bytes": delta,
                                 "Total Allocated": self.alloc, "Total Reserved": self.reserved,
                                 "Device Type": 1, "Device Id": 0}})

    def document(self):
        meta = [{"ph": "M", "name": "process_name", "pid": PID, "tid": 0, "ts": 0,
                 "args": {"name": "python"}},
                {"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "ts": 0,
                 "args": {"name": "thread %d (python)" % TID}}]
        if self.gpu:
            for s in sorted(self.gpu_end):
                meta.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": s, "ts": 0,
                             "args": {"name": "stream %d " % s}})
        doc = {"schemaVersion": 1}
        if self.gpu:
            doc["deviceProperties"] = [{"id": 0, "name": "NVIDIA A100-SXM4-40GB",
                                        "totalGlobalMem": self.total_mem,
                                        "computeMajor": self.compute_major, "computeMinor": 0,
                                        "maxThreadsPerBlock": 1024,
                                        "maxThreadsPerMultiprocessor": 2048,
                                        "regsPerBlock": 65536, "warpSize": 32,
                                        "sharedMemPerBlock": 49152, "numSms": 108}]
        doc["distributedInfo"] = {"rank": 0, "world_size": 1}
        doc["displayTimeUnit"] = "ms"
        if self.gprof is not None:
            doc["gprof"] = self.gprof
        doc["traceEvents"] = meta + sorted(self.ev, key=lambda e: (e["ts"], -e.get("dur", 0)))
        return doc


def step(g, n, loader=None, loader_us=150.0, copy="pinned", copy_us=120.0, copy_stream=COPY,
         n_ops=20, kernel_us=400.0, op_us=None, gemm=GEMM_TC, extra=None, annotate=True):
    """One training step: loader wait, H2D copy, forward/backward ops, optional extras."""
    op_us = kernel_us if op_us is None else op_us
    loader = loader or (LOADER_MP if g.gprof is None or g.gprof.get("workers", 1) else LOADER_SP)

    def h2d():
        if copy == "pinned":
            g.memcpy("HtoD", "Pinned", "Device", 64 * 3072, copy_us, stream=copy_stream)
        elif copy == "pageable":
            g.memcpy("HtoD", "Pageable", "Device", 64 * 3072, copy_us, stream=copy_stream)

    def ops(first, last):
        def body():
            after = g.stream_ready(copy_stream) if copy_stream != COMPUTE else 0.0
            for i in range(first, last):
                if i % 2 == 0 and gemm:
                    g.op("aten::addmm", gemm, kernel_us * 1.5, op_us, after=after)
                else:
                    g.op("aten::relu", RELU if i % 4 == 1 else ELEMWISE, kernel_us * 0.5, op_us,
                         after=after)
        return body

    def body():
        g.range("user_annotation", loader, lambda: g.work(loader_us))
        if copy:
            g.range("user_annotation", "h2d_copy", h2d)
        half = n_ops // 2
        g.range("user_annotation", "forward", ops(0, half))
        g.range("user_annotation", "backward", ops(half, n_ops))
        if extra:
            extra(g, n)
    g.range("user_annotation", "ProfilerStep#%d" % n, body)


def run(g, steps=12, **kw):
    for n in range(steps):
        step(g, n, **kw)
    return g.document()


# ---- scenarios: name -> document ----

def healthy():
    return run(Gen(trainer_cfg()))


def healthy_pytorch():
    g = Gen(None)
    return run(g, loader=LOADER_MP)


def few_steps():
    return run(Gen(trainer_cfg()), steps=3)


def layer_kernel(name, i, repeat):
    """name, or, where the launches must not repeat (one pass through a model's distinct layers:
    no period to cut steps at), a distinct name for launch i."""
    return name if repeat else "%s_l%d" % (name, i)


def no_steps():
    """No step markers, no optimizer ranges, and launches that do not repeat: one step spans the
    trace."""
    g = Gen(None)
    for i in range(12):
        g.range("cpu_op", "aten::linear", lambda k=layer_kernel(GEMM_TC, i, False): g.kernel(k, 300.0))
        g.work(290.0)
    return g.document()


def startup(first_us, repeat=False):
    """no_steps's loop as a program's first iterations: the first aten::linear spends first_us
    before it launches (the CUDA context, a cuBLAS handle), the GPU idle meanwhile. Unless
    repeat, each launches a kernel of its own (no period in the launches)."""
    g = Gen(None)
    for i in range(12):
        def body(first=first_us if i == 0 else 0.0, k=layer_kernel(GEMM_TC, i, repeat)):
            g.work(first)
            g.kernel(k, 300.0)
        g.range("cpu_op", "aten::linear", body)
        g.work(290.0)
    return g.document()


def startup_launch(first_us, op_us, repeat=False):
    """A loop whose host issues each 100 us kernel in op_us, 40 iterations without step markers;
    the first aten::addmm spends first_us before it launches. Unless repeat, each addmm launches
    a GEMM of its own (no period in the launches)."""
    g = Gen(None)
    for i in range(400):
        name = "aten::addmm" if i % 2 == 0 else "aten::relu"
        first = first_us if i == 0 else 0.0
        g.op(name, layer_kernel(GEMM_TC, i, repeat) if i % 2 == 0 else RELU, 100.0, op_us + first)
    return g.document()


def starved_trainer():
    cfg = trainer_cfg(workers=0, pin_memory=True, non_blocking=True, cpu_count=16)
    return run(Gen(cfg), loader_us=30000.0)


def starved_pytorch():
    return run(Gen(None), loader=LOADER_SP, loader_us=10000.0)


def starved_pytorch_cpu():
    """A PyTorch run on the CPU alone (no GPU, no "gprof" object): GT01 must not ask for
    pin_memory or GPU decoding, nor assume a core count."""
    g = Gen(None, gpu=False)

    def body(g, n):
        for name in ("aten::addmm", "aten::relu", "aten::addmm"):
            g.range("cpu_op", name, lambda: g.work(900.0))
    return run(g, loader=LOADER_SP, loader_us=9000.0, copy=None, n_ops=0, extra=body)


def launch_bound():
    return run(Gen(trainer_cfg()), n_ops=60, kernel_us=20.0, op_us=150.0)


def contended_loop(kernel_us, op_us):
    """The trainer's loop on one core beside a busy loop, as its CPU accounting says: 9 of its
    20 steps hold a 4 ms wait for a core between two operators (the busy loop's slice), the
    others none, and the training thread's run-queue time is those waits (GT19 crit). With 20 us
    kernels behind 150 us of host a launch, the loop is launch-bound in every step, the unwaited
    ones too: GT04 crit, not explained away by the waits (it was info, "explained by GT19", when
    the median step was an unwaited one). With 120 us kernels behind 60 us, the GPU idles only
    in the waited steps, between operators and past the other steps' time there: GT04 quiet."""
    g = Gen(trainer_cfg(cpu_count=1))
    for n in range(20):
        def ops():
            for i in range(14):
                g.op("aten::addmm", GEMM_TC, kernel_us, op_us)
                if n % 2 and n < 18 and i == 6:
                    g.work(4000.0)

        def body():
            g.range("user_annotation", LOADER_MP, lambda: g.work(20.0))
            g.range("user_annotation", "forward", ops)
        g.range("user_annotation", "ProfilerStep#%d" % n, body)
    doc = g.document()
    ms = 1000000
    wall = int(sum(e["dur"] for e in doc["traceEvents"]
                   if e["name"].startswith("ProfilerStep#")) * 1000)
    doc["gprof"].update({"blas_threads": 1, "step_wall_ns": wall,
                         "step_thread_cpu_ns": wall - 36 * ms, "loader_cpu_ns": 0,
                         "loader_runq_ns": 0, "train_runq_ns": 36 * ms, "other_cpu_ns": wall,
                         "loop_wall_ns": wall})
    return doc


def small_kernels():
    g = Gen(trainer_cfg())
    g.inter_kernel = 1.2

    def drain(g, n):
        g.range("user_annotation", "log_metrics", lambda: g.work(800.0))
    return run(g, n_ops=400, kernel_us=8.0, op_us=3.0, copy_us=30.0, extra=drain)


def pageable_copy():
    cfg = trainer_cfg(pin_memory=False, non_blocking=True)
    return run(Gen(cfg), copy="pageable", copy_us=600.0, copy_stream=COMPUTE)


def blocking_copy():
    def item(g, n):
        g.range("cpu_op", "aten::item",
                lambda: g.memcpy("DtoH", "Device", "Pageable", 4, 2.0, api="cudaMemcpy"))
    return run(Gen(trainer_cfg()), kernel_us=400.0, op_us=300.0, extra=item)


def excessive_sync():
    g = Gen(None)

    def body_sync(g, n):
        for _ in range(10):
            g.op("aten::nonzero", ELEMWISE, 300.0, 20.0)
            g.sync("cudaDeviceSynchronize")
    return run(g, loader=LOADER_MP, extra=body_sync)


def sync_gpu_busy():
    """GT08 near miss: each step waits for a long copy on the copy stream while the compute
    stream, queued well ahead by the host, stays busy: the host blocks, the GPU loses nothing."""
    def wait_copy(g, n):
        g.memcpy("HtoD", "Pinned", "Device", 64 * 3072, 1000.0, stream=COPY)
        g.sync(stream=COPY)
    return run(Gen(trainer_cfg()), kernel_us=400.0, op_us=100.0, extra=wait_copy)


def copy_launch_bound():
    """GT09 near miss: a launch-bound loop whose batch copy, on its own stream, is done before
    the host launches the next kernel: the GPU would idle anyway, nothing waits for the copy."""
    def collate(g, n):
        g.range("cpu_op", "aten::stack", lambda: g.work(700.0))
    g = Gen(trainer_cfg())
    for n in range(12):
        def body():
            g.range("user_annotation", LOADER_MP, lambda: g.work(150.0))
            g.range("user_annotation", "h2d_copy", lambda: g.memcpy(
                "HtoD", "Pinned", "Device", 64 * 3072, 600.0, stream=COPY))
            collate(g, n)
            for i in range(60):
                g.op("aten::relu", ELEMWISE, 20.0, 150.0)
        g.range("user_annotation", "ProfilerStep#%d" % n, body)
    return g.document()


def exposed_copy():
    return run(Gen(trainer_cfg(non_blocking=False)), copy_us=1600.0, copy_stream=COMPUTE)


def near_oom():
    g = Gen(trainer_cfg())

    def grow(g, n):
        g.mem(int(0.5 * GIB) if n == 0 else 0, reserved=int(A100_MEM * 0.965))
        g.mem(0)
    g.mem(int(33 * GIB), reserved=int(37 * GIB))
    return run(g, extra=grow)


def near_oom_activations():
    """PyTorch with profile_memory: 30 GiB of weights and state, and each step's 8 activations
    of 1 GiB allocated in forward and freed in backward (95% of 40 GiB at the peak)."""
    def activations(g, n):
        for _ in range(8):
            g.mem(GIB)
            g.work(5.0)
        for _ in range(8):
            g.mem(-GIB)
            g.work(5.0)
    g = Gen()
    g.mem(30 * GIB)
    return run(g, extra=activations)


def allocator_churn():
    def churn(g, n):
        g.api("cudaMalloc", 180.0)
        g.mem(256 << 20, reserved=4 * GIB + ((n % 2) * (256 << 20)))
        g.work(50.0)
        g.mem(-(256 << 20))
        g.api("cudaFree", 120.0)
    return run(Gen(trainer_cfg()), extra=churn)


def memory_growth():
    def leak(g, n):
        g.mem(int(A100_MEM * 0.01))
    return run(Gen(trainer_cfg()), extra=leak)


def memory_stable():
    def steady(g, n):
        g.mem(512 << 20)
        g.mem(-(512 << 20))
    return run(Gen(trainer_cfg()), extra=steady)


def no_tensor_cores():
    return run(Gen(trainer_cfg(amp="off")), gemm=GEMM_FP32)


def fp32_on_pascal():
    g = Gen(trainer_cfg(amp="off", device_name="Tesla P100-PCIE-16GB"), compute_major=6,
            total_mem=16 * GIB)
    return run(g, gemm=GEMM_FP32)


def nchw_convs(transpose_us):
    """Four cuDNN convolutions a step on NCHW tensors: each between the transposes to NHWC and
    back that cuDNN runs around its Tensor Core kernel."""
    def convs(g, n):
        def conv():
            g.kernel(TO_NHWC, transpose_us)
            g.kernel(CONV_TC, 300.0)
            g.kernel(TO_NCHW, transpose_us)
        for _ in range(4):
            g.range("cpu_op", "aten::cudnn_convolution", conv)
    return lambda: run(Gen(), extra=convs)


def step_outliers():
    """One 12 ms checkpoint in step 7 of 12, no CPU accounting: seen once, it shows no period,
    and timing alone cannot tell it from the thread waiting for a core (GT14 at info)."""
    def ckpt(g, n):
        if n == 7:
            g.range("user_annotation", "save_checkpoint", lambda: g.work(12000.0))
    return run(Gen(trainer_cfg()), extra=ckpt)


def uneven_loader():
    """Every third step waits 4x as long for its batch: outliers that are loader waits are GT01's
    (GT14 at info), not a periodic stall."""
    cfg = trainer_cfg(workers=1, device="cpu", pin_memory=False, non_blocking=False, amp="off",
                      dataset_format="png", device_name="", total_device_memory=0,
                      gpu_status="no CUDA device", cpu_count=2)
    g = Gen(cfg, gpu=False)

    def body(g, n):
        g.range("cpu_op", "aten::addmm", lambda: g.work(1000.0))
    for n in range(12):
        step(g, n, loader=LOADER_MP, loader_us=4000.0 if n % 3 == 2 else 1000.0, copy=None,
             n_ops=0, extra=body)
    return g.document()


def warmup_steps():
    """40 steps whose first few run slow (first touches of memory): a warm-up, GT14 at info."""
    def slow_start(g, n):
        if 1 <= n <= 4:
            g.range("cpu_op", "aten::empty", lambda: g.work(9000.0))
    return run(Gen(trainer_cfg()), steps=40, extra=slow_start)


def coarse_trainer(slow):
    """The trainer on the CPU, 42 steps of three long ranges each (forward, backward, the
    optimizer at 43% of the step), the thread on its core throughout (its step args: CPU time
    equal to the step, no wait for a core). Every 7th step is slow: `slow` gives it each range's
    extra time in us. Each part 2.0-2.9x (the machine running slower: a 2-core VM's trainer
    read so, the optimizer's share of the excess 51-58%) is GT14's info; the forward alone
    1.5 ms longer (a stall) is its warn."""
    cfg = trainer_cfg(device="cpu", batch_size=16, pin_memory=False, non_blocking=False,
                      amp="off", device_name="", total_device_memory=0,
                      gpu_status="no CUDA device", cpu_count=2)
    g = Gen(cfg, gpu=False)
    for n in range(42):
        extra = slow if n % 7 == 3 else (0.0, 0.0, 0.0)

        def body():
            g.range("user_annotation", LOADER_MP, lambda: g.work(20.0))
            g.range("user_annotation", "forward", lambda: g.work(260.0 + extra[0]))
            g.range("user_annotation", "backward", lambda: g.work(250.0 + extra[1]))
            g.range("user_annotation", "Optimizer.step#Adam.step", lambda: g.work(400.0 + extra[2]))
            g.work(5.0)
        g.range("user_annotation", "ProfilerStep#%d" % n, body)
    doc = g.document()
    for e in doc["traceEvents"]:
        if e["name"].startswith("ProfilerStep#"):
            e["args"].update({"gprof_thread_cpu_ns": int(e["dur"] * 1000), "gprof_runq_ns": 0})
    return doc


def stolen_trainer(steal_us, first_steps=None):
    """coarse_trainer's stall (every 7th step's forward 1.5 ms longer), the thread off its core
    then and not waiting for one (its CPU time the usual step's): the host took its virtual CPU
    (a VM's steal), as libprof's host steal counter says: `steal_us` of it in one span over the
    run, or over its first `first_steps` steps only. The whole stall stolen (10 ms, one
    /proc/stat tick, over the run) is no outlier of the program: GT14 quiet. 3 ms of it, shared
    among the six stalls (one thread's steps cannot lose the same steal twice), or steal only
    in steps that did not stall, leave the stalls GT14's warn."""
    doc = coarse_trainer((1500.0, 0.0, 0.0))
    steps = [e for e in doc["traceEvents"] if e["name"].startswith("ProfilerStep#")]
    for e in steps:
        if int(e["name"][13:]) % 7 == 3:
            e["args"]["gprof_thread_cpu_ns"] -= 1500000
    last = steps[first_steps - 1] if first_steps else steps[-1]
    t0, t1 = steps[0]["ts"] - 50.0, last["ts"] + last["dur"] + (0.0 if first_steps else 50.0)

    def sample(ts, pct):
        return {"ph": "C", "cat": "cpu_instant_event", "name": "[gprof] host steal %",
                "pid": PID, "tid": PID, "ts": ts, "args": {"value": pct}}
    doc["traceEvents"] += [sample(t0, 100.0 * steal_us / (t1 - t0)), sample(t1, 0)]
    return doc


def idle_gap():
    g = Gen(trainer_cfg())
    for n in range(12):
        step(g, n)
        if n == 5:
            g.range("user_annotation", "evaluate", lambda: g.work(650000.0))
    return g.document()


def comm(exposed):
    def allreduce(g, n):
        def body():
            if exposed:
                start, end = g.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2500.0,
                                      stream=NCCL, after=g.stream_ready(COMPUTE))
                g.gpu_end[COMPUTE] = end    # the optimizer waits for the gradients
            else:
                g.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2500.0, stream=NCCL)
        g.range("user_annotation", "nccl:all_reduce", body)
        if not exposed:
            for _ in range(8):
                g.op("aten::addmm", GEMM_TC, 400.0, 400.0)
        g.op("aten::_foreach_add_", ELEMWISE, 200.0, 40.0)
    return lambda: run(Gen(None), loader=LOADER_MP, extra=allreduce)


def cpu_trainer(workers, cpu_count=16, loader_us=None, acct=None):
    cfg = trainer_cfg(workers=workers, device="cpu", cpu_count=cpu_count, pin_memory=False, non_blocking=False,
                      amp="off", dataset_format="png", device_name="", total_device_memory=0,
                      gpu_status="no CUDA device", **(acct or {}))
    g = Gen(cfg, gpu=False)

    def body(g, n):
        for name in ("aten::addmm", "aten::relu", "aten::addmm", "aten::relu", "aten::addmm"):
            g.range("cpu_op", name, lambda: g.work(900.0))
    if loader_us is None:
        loader_us = 12000.0 if workers == 0 else 100.0
    return run(g, loader=LOADER_SP if workers == 0 else LOADER_MP, loader_us=loader_us, copy=None,
               n_ops=0, extra=body)


def cpu_contended():
    """The trainer on 2 cores with 2 loader threads while other processes keep 1.5 cores busy: its
    CPU accounting says the training thread waited for a core 45% of the loop (GT19). The real
    cases, from runs beside busy loops, are in tests/data/rules/contention."""
    ms = 1000000
    acct = {"blas_threads": 1, "step_wall_ns": 60 * ms, "step_thread_cpu_ns": 33 * ms,
            "loader_cpu_ns": 20 * ms, "loader_runq_ns": 25 * ms, "train_runq_ns": 36 * ms,
            "other_cpu_ns": 120 * ms, "loop_wall_ns": 80 * ms}
    return cpu_trainer(2, cpu_count=2, acct=acct)


def optimizer_bound():
    """A per-parameter optimizer on the host takes most of each step (GT17)."""
    def extra(g, n):
        g.range("user_annotation", "Optimizer.step#Adam.step",
                lambda: [g.range("cpu_op", "aten::add_", lambda: g.work(60.0)) for _ in range(200)])
    return run(Gen(None), loader=LOADER_MP, extra=extra)


def optimizer_bound_trainer(loop_us=0.0):
    """The bundled trainer on the CPU with a small batch: its knob is a 4x batch, and the gain a
    floor of 3/4 of the optimizer's time and of the loop's own time outside every range,
    `loop_us` a step: both are per step (GT17)."""
    cfg = trainer_cfg(device="cpu", batch_size=16, pin_memory=False, non_blocking=False,
                      amp="off", device_name="", total_device_memory=0,
                      gpu_status="no CUDA device")

    def extra(g, n):
        g.range("cpu_op", "aten::addmm", lambda: g.work(400.0))
        g.range("user_annotation", "Optimizer.step#Adam.step", lambda: g.work(1200.0))
        g.work(loop_us)
    return run(Gen(cfg, gpu=False), loader=LOADER_MP, loader_us=20.0, copy=None, n_ops=0,
               extra=extra)


def tiny_cpu_ops():
    """A CPU run whose loss is a Python loop: 300 tiny ops a step with Python between (GT18)."""
    g = Gen(None, gpu=False)

    def body(g, n):
        g.range("cpu_op", "aten::addmm", lambda: g.work(900.0))
        for _ in range(150):
            g.range("cpu_op", "aten::select", lambda: g.work(2.0))
            g.work(3.0)
            g.range("cpu_op", "aten::sub", lambda: g.work(4.0))
            g.work(3.0)
    return run(g, loader=LOADER_MP, loader_us=100.0, copy=None, n_ops=0, extra=body)


# name -> (document, the findings it must fire: "ID:severity" sorted by id; every other rule
# must stay quiet). main() writes the expectations to expected_findings.txt beside the traces,
# which tests/unit/test_analyze_rules.c reads: a scenario and its expectation are one entry.
SCENARIOS = {
    "healthy": (healthy, ""),
    "healthy_pytorch": (healthy_pytorch, ""),
    "few_steps": (few_steps, "GT00:info"),
    "no_steps": (no_steps, "GT00:info"),
    "startup": (lambda: startup(400000.0), "GT00:warn GT02:info"),
    "startup_little": (lambda: startup(3000.0), "GT00:info GT02:info"),
    # a launch-bound loop whose host wait is 14.6% without the first call (warn) and 29.6%
    # (crit): beside 29-31% of start-up, the first reads 34% (crit before: now warn, which it
    # holds without the start-up time), the second 44% (crit, held); GT02's 50.0% busy (warn
    # before) could be 70% without it: info
    "startup_launch_held": (lambda: startup_launch(20000.0, 125.0),
                            "GT00:info GT02:info GT04:warn"),
    "startup_launch_kept": (lambda: startup_launch(20000.0, 150.0),
                            "GT00:info GT02:info GT04:crit"),
    # the same loops launching the same kernels each iteration: steps are cut where the launches
    # repeat (every launch; every two), the first, with the first call, is left out, and the
    # verdict is the steady state's: quiet (GT00 warn before), and GT04 warn at 14.6% (held at
    # warn beside the start-up before, with GT02 info)
    "startup_periodic": (lambda: startup(400000.0, repeat=True), "GT00:info"),
    "startup_launch_periodic": (lambda: startup_launch(20000.0, 125.0, repeat=True),
                                "GT00:info GT04:warn"),
    "starved_trainer": (starved_trainer, "GT01:crit GT02:warn"),
    "starved_pytorch": (starved_pytorch, "GT01:crit GT02:warn"),
    "starved_pytorch_cpu": (starved_pytorch_cpu, "GT01:crit"),
    "launch_bound": (launch_bound, "GT02:crit GT04:crit"),
    "small_kernels": (small_kernels, "GT05:warn"),
    "contended_launch_bound": (lambda: contended_loop(20.0, 150.0),
                               "GT02:crit GT04:crit GT14:info GT19:crit"),
    "contended_gpu_bound": (lambda: contended_loop(120.0, 60.0), "GT02:info GT14:info GT19:crit"),
    "pageable_copy": (pageable_copy, "GT06:crit GT09:warn"),
    # warn, not crit: the host blocks ~26% of the step, but the GPU idles only ~2-3% because of
    # the calls (the rest of the wait is queued work draining): that is what removing them saves
    "blocking_copy": (blocking_copy, "GT07:warn"),
    "excessive_sync": (excessive_sync, "GT08:warn"),
    "sync_gpu_busy": (sync_gpu_busy, ""),
    "exposed_copy": (exposed_copy, "GT09:warn"),
    "copy_launch_bound": (copy_launch_bound, "GT02:crit GT04:crit"),
    "near_oom": (near_oom, "GT10:crit"),
    "near_oom_activations": (near_oom_activations, "GT10:crit"),
    "allocator_churn": (allocator_churn, "GT11:warn"),
    "memory_growth": (memory_growth, "GT12:warn"),
    "memory_stable": (memory_stable, ""),
    "no_tensor_cores": (no_tensor_cores, "GT13:warn"),
    "fp32_on_pascal": (fp32_on_pascal, ""),
    # transposes 8% of kernel time (GT20 warns from 5%), and 1.7%
    "nchw_convs": (nchw_convs(100.0), "GT20:warn"),
    "nchw_convs_short": (nchw_convs(20.0), ""),
    # the checkpoint launches nothing: the GPU's wait for it is GT14's outlier step, not GT04's
    "step_outliers": (step_outliers, "GT02:info GT14:info"),
    "idle_gap": (idle_gap, "GT03:crit"),
    "uneven_loader": (uneven_loader, "GT01:crit GT14:info"),
    # the slow first touches are host work that launches nothing: not GT04's launch overhead
    "warmup_steps": (warmup_steps, "GT02:info GT14:info"),
    "slowed_steps_coarse": (lambda: coarse_trainer((260.0, 300.0, 760.0)), "GT14:info GT17:warn"),
    "stalled_steps_coarse": (lambda: coarse_trainer((1500.0, 0.0, 0.0)), "GT14:warn GT17:warn"),
    "stolen_steps": (lambda: stolen_trainer(10000.0), "GT17:warn"),
    "stolen_little": (lambda: stolen_trainer(3000.0), "GT14:warn GT17:warn"),
    "stolen_elsewhere": (lambda: stolen_trainer(10000.0, first_steps=3), "GT14:warn GT17:warn"),
    "comm_exposed": (comm(True), "GT15:crit"),
    "comm_overlapped": (comm(False), ""),
    "cpu_starved": (lambda: cpu_trainer(0), "GT01:crit"),
    "cpu_fed": (lambda: cpu_trainer(8), ""),
    # a 2-core machine: the one loader thread it can spare still loads slower than the model
    # trains, so GT01 predicts only the part of the wait that thread removes
    "cpu_starved_2core": (lambda: cpu_trainer(0, cpu_count=2), "GT01:crit"),
    # 0.5 ms of a 5 ms step: under the 1 ms floor a PyTorch iterator gets, but our trainer's
    # iterator costs nothing, so the wait is the loader's
    "cpu_small_wait": (lambda: cpu_trainer(0, loader_us=500.0), "GT01:warn"),
    "cpu_contended": (cpu_contended, "GT19:crit"),
    "optimizer_bound": (optimizer_bound, "GT02:warn GT04:crit GT17:crit"),
    "optimizer_bound_trainer": (optimizer_bound_trainer, "GT17:crit"),
    "optimizer_bound_trainer_loop": (lambda: optimizer_bound_trainer(300.0), "GT17:crit"),
    "tiny_cpu_ops": (tiny_cpu_ops, "GT18:crit"),
}


def encode(doc):
    text = json.dumps(doc, separators=(",", ":")).encode()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as f:
        f.write(text)
    return buf.getvalue()


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    out = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "..", "data", "rules")
    os.makedirs(out, exist_ok=True)
    bad = 0
    expected = "".join("%s\t%s\n" % (name, fired) for name, (_, fired) in SCENARIOS.items())
    path = os.path.join(out, "expected_findings.txt")
    if check:
        with open(path, encoding="utf-8") as f:
            if f.read() != expected:
                print("stale expectations: %s (rerun tests/rules/gen_rule_traces.py)" % path)
                bad = 1
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(expected)
    for name, (fn, _) in SCENARIOS.items():
        path = os.path.join(out, name + ".json.gz")
        data = encode(fn())
        if check:
            with open(path, "rb") as f:
                if gzip.decompress(f.read()) != gzip.decompress(data):
                    print("stale fixture: %s (rerun tests/rules/gen_rule_traces.py)" % path)
                    bad = 1
        else:
            with open(path, "wb") as f:
                f.write(data)
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
