#!/usr/bin/env python3
"""test_simdev.py: `gprof-train run --device cuda` on the simulated device (tests/simdev)
against `--device cpu` from the same seed: the final weights (--checkpoint) and loss must match
within the precision's tolerance, the run must have trained on the simulated device (never the
CPU backend), and its trace must hold kernels, copies, memory events, flows and steps, say
gpu_status "simulated" with the timing model, and be read by `report` and `diagnose`.
usage: test_simdev.py CASE GPROF_TRAIN SIM_MODULE FAKE_DIR DATA_DIR"""
import gzip
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

FAILS = []
CKPT_HEADER = 40  # magic 8, version/model/optimizer/reserved 16, n_params 8, t 8


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def weights(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack_from("<Q", data, 24)[0]
    return struct.unpack_from("<%df" % n, data, CKPT_HEADER)


def optimizer_steps(path):
    """The optimizer steps applied (Adam's t): a step the loss scaler skipped does not count."""
    with open(path, "rb") as f:
        return struct.unpack_from("<q", f.read(CKPT_HEADER), 32)[0]


def sim_env(extra=None):
    env = dict(os.environ)
    env["GP_TRAIN_CUDA_LIB"] = MODULE
    env["GP_PROF_CUPTI"] = os.path.join(FAKE_DIR, "libcupti.so.13")
    env["LD_LIBRARY_PATH"] = FAKE_DIR + ":" + env.get("LD_LIBRARY_PATH", "")
    env.update(extra or {})
    return env


def train(tmp, name, device, args, env=None):
    out = os.path.join(tmp, name)
    ckpt = os.path.join(tmp, name + ".ckpt")
    cmd = [BIN, "run", "--device", device, "--data", DATA, "--seed", "7", "--no-report",
           "--out", out, "--checkpoint", ckpt] + args
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "%s: run exits 0 (got %d): %s" % (name, p.returncode, p.stderr[-800:]))
    run_dir = [l[5:] for l in p.stdout.splitlines() if l.startswith("run: ")]
    summary = {}
    if run_dir:
        with open(os.path.join(run_dir[0], "summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
    return p, summary, ckpt


def compare(base_ckpt, cpu_ckpt, gpu_ckpt, cpu, gpu, tol, what):
    """How far the device's weights are from the CPU's, as a share of how far the CPU's moved
    from the weights both started from (L2 norms over all weights)."""
    if not all(os.path.exists(p) for p in (base_ckpt, cpu_ckpt, gpu_ckpt)):
        check(False, what + ": checkpoints written")
        return
    w0, a, b = weights(base_ckpt), weights(cpu_ckpt), weights(gpu_ckpt)
    moved = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, w0)))
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    rel = diff / moved if moved else float("inf")
    print("%s: %d weights moved %.3g (L2); |cpu - cuda| %.3g = %.3g of that (tolerance %g)"
          % (what, len(a), moved, diff, rel, tol))
    check(len(a) == len(b) == len(w0) and rel <= tol,
          "%s: weights within %g of the CPU's movement (got %.3g)" % (what, tol, rel))
    ta, tb = optimizer_steps(cpu_ckpt), optimizer_steps(gpu_ckpt)
    check(ta == tb, "%s: %d optimizer steps applied, the CPU %d" % (what, tb, ta))
    la, lb = cpu.get("final_loss"), gpu.get("final_loss")
    check(la is not None and lb is not None and abs(la - lb) <= tol * max(1, abs(la)),
          "%s: final loss %s vs the CPU's %s" % (what, lb, la))


def load_trace(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def check_trace(summary, what, need_kernels):
    path = summary.get("trace")
    check(path and os.path.exists(path), what + ": trace written")
    if not (path and os.path.exists(path)):
        return None
    t = load_trace(path)
    g = t.get("gprof", {})
    check(g.get("gpu_status") == "simulated", "%s: gpu_status simulated (got %r)"
          % (what, g.get("gpu_status")))
    check("sim-h100-roofline" in g.get("gpu_timing_model", ""), what + ": timing model named")
    check("(simulated" in g.get("device_name", ""), what + ": device name says simulated")
    ev = t["traceEvents"]
    cats = {}
    for e in ev:
        cats.setdefault(e.get("cat"), []).append(e)
    names = {e["name"] for e in cats.get("kernel", [])}
    for k in need_kernels:
        check(any(k in n for n in names), "%s: a kernel named like %s (got %s)"
              % (what, k, sorted(names)[:12]))
    check(len(cats.get("gpu_memcpy", [])) > 0, what + ": copies")
    check(len(cats.get("gpu_memset", [])) > 0, what + ": memsets")
    check(any(e.get("ph") == "i" and e.get("name") == "[memory]" for e in ev),
          what + ": [memory] events")
    check(len(cats.get("ac2g", [])) > 0, what + ": launch flows (ac2g)")
    check(any(str(e.get("name", "")).startswith("ProfilerStep#") for e in ev), what + ": steps")
    return path


def read_back(path, what):
    for cmd in (["report", path], ["diagnose", path]):
        p = subprocess.run([BIN] + cmd, capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "%s: %s exits 0 (%d): %s" % (what, cmd[0], p.returncode,
                                                             p.stderr[-400:]))
        if cmd[0] == "diagnose":
            check("GPU activity not recorded" not in p.stdout, what + ": diagnose sees GPU work")
        if cmd[0] == "report":
            check("sim_gemm" in p.stdout or "sim_lt_gemm" in p.stdout,
                  what + ": report lists the GEMM kernels")


def start(tmp, model, args=()):
    """Weights both backends start from: two CPU steps, saved."""
    name = "base_%d" % len(os.listdir(tmp))
    _, _, base = train(tmp, name, "cpu", ["--model", model, "--steps", "2", "--batch-size", "8"]
                       + list(args))
    return base


def versus_cpu(tmp, base, args, amp, tol, what, env=None, gpu_args=()):
    """The same steps from `base` on the CPU and on the simulated device; @return the device's
    run (process, summary)."""
    args = ["--resume", base] + args
    _, cpu, cpu_ckpt = train(tmp, what + "_cpu", "cpu", args)
    p, gpu, gpu_ckpt = train(tmp, what + "_cuda", "cuda", args + ["--amp", amp] + list(gpu_args),
                             sim_env(env))
    check(gpu.get("device") == "cuda", what + ": the run says device cuda")
    compare(base, cpu_ckpt, gpu_ckpt, cpu, gpu, tol, what)
    return p, gpu


def check_progress_loss(stderr):
    """The CUDA backend reads the loss back every 50 steps and at an epoch's end: a progress line
    before the first read says 'loss -', never a made-up 'loss 0.0000' (seen on an H200)."""
    lines = re.findall(r"^epoch \d+/\d+ step (\d+)/(\d+) loss (\S+)", stderr, re.M)
    early = [loss for k, n, loss in lines if int(k) < min(int(n), 50)]
    ends = [loss for k, n, loss in lines if k == n]
    check(lines and all(loss == "-" for loss in early) and ends and
          all(re.fullmatch(r"[0-9.]+", loss) and float(loss) > 0 for loss in ends),
          "progress: 'loss -' before the first read-back, the loss at the epoch's end: %r" % lines)


def case_mlp_fp32(tmp):
    base = start(tmp, "mlp")
    args = ["--steps", "6", "--batch-size", "16", "--accumulate", "2"]
    p, gpu = versus_cpu(tmp, base, args, "off", TOL["off"], "mlp_fp32")
    check("timing model sim-h100-roofline" in p.stderr, "run names the timing model: "
          + p.stderr[:300])
    check_progress_loss(p.stderr)
    path = check_trace(gpu, "mlp fp32", ["sim_lt_gemm_bias_f32", "sim_gemm_f32", "relu_fwd",
                                         "adam"])
    if path:
        read_back(path, "mlp fp32")
    # cublasLtMatmul refusing: the fallback (cublasGemmEx + bias kernel) gives the same weights
    _, lt = versus_cpu(tmp, base, args, "off", TOL["off"], "mlp_fp32_lt_fails",
                       {"SIMDEV_LT_FAIL": "1"})
    lt_trace = lt.get("trace")
    if lt_trace and os.path.exists(lt_trace):
        names = {e["name"] for e in load_trace(lt_trace)["traceEvents"] if e.get("cat") == "kernel"}
        check(not any("sim_lt_gemm" in n for n in names) and any("bias_add" in n for n in names),
              "with cublasLtMatmul failing, the forward runs cublasGemmEx and the bias kernel")


def case_mlp_amp(tmp):
    base = start(tmp, "mlp")
    args = ["--steps", "6", "--batch-size", "16", "--accumulate", "2"]
    for amp, kernels in (("fp16", ["sim_gemm_f16", "cast_kernel", "unscale_kernel", "amp_update"]),
                         ("bf16", ["sim_gemm_bf16", "cast_kernel", "amp_update"])):
        _, gpu = versus_cpu(tmp, base, args, amp, TOL[amp], "mlp_" + amp)
        check_trace(gpu, "mlp " + amp, kernels)
    # SGD, unlike Adam, is not blind to the gradients' scale: the loss scale must be divided out
    sgd = ["--optimizer", "sgd", "--lr", "0.01"]
    versus_cpu(tmp, start(tmp, "mlp", sgd), args + sgd, "fp16", TOL["fp16_sgd"], "mlp_fp16_sgd")


def kernels_of(summary):
    path = summary.get("trace")
    if not (path and os.path.exists(path)):
        return []
    return [e for e in load_trace(path)["traceEvents"] if e.get("cat") == "kernel"]


def case_cnn(tmp):
    base = start(tmp, "cnn")
    args = ["--model", "cnn", "--steps", "4", "--batch-size", "8"]
    _, gpu = versus_cpu(tmp, base, args, "off", TOL["off"], "cnn_fp32")
    check_trace(gpu, "cnn fp32", ["sim_cudnn_fwd_implicit_precomp_gemm", "sim_cudnn_bwd_filter",
                                  "sim_cudnn_bwd_data", "pool_fwd", "bias_grad"])
    ks = kernels_of(gpu)
    check(not any("fwd_implicit_gemm" in k["name"] for k in ks),
          "cnn fp32: without --cudnn-benchmark no algorithm is timed")
    _, bench = versus_cpu(tmp, base, args, "off", TOL["off"], "cnn_bench",
                          gpu_args=["--cudnn-benchmark"])
    ks = kernels_of(bench)
    # the search runs every forward algorithm once per (layer, batch size); only it runs the
    # slowest (implicit_gemm), and the chosen one (precomp) runs at each of those shapes
    searched = sum(1 for k in ks if k["name"] == "sim_cudnn_fwd_implicit_gemm")
    shapes = {tuple(k["args"].get("grid", [])) for k in ks
              if k["name"] == "sim_cudnn_fwd_implicit_precomp_gemm"}
    print("cnn --cudnn-benchmark: %d searches, %d shapes" % (searched, len(shapes)))
    check(searched == len(shapes) > 0, "cnn --cudnn-benchmark: one search per shape (%d searches, "
          "%d shapes)" % (searched, len(shapes)))


def case_mlp_loader(tmp):
    """The loader's modes: pinned slots filled by workers, copied on the copy stream (events),
    and pinned with blocking copies; each trains as the CPU does. The simulated device does its
    work in stream order when something waits for it, so a backend that hands a pinned slot back
    to the loader before its copy's event was waited on trains on a later batch's bytes (taking
    the cudaEventSynchronize out of cuda_input_done moves the weights by 0.43 of their
    movement)."""
    base = start(tmp, "mlp")
    args = ["--steps", "6", "--batch-size", "16", "--workers", "2"]
    for what, gpu_args, stream_apart in (
            ("pinned_copy_stream", ["--pin-memory", "--non-blocking"], True),
            ("pinned_blocking", ["--pin-memory"], False),
            ("pageable_copy_stream", ["--non-blocking"], True)):
        _, gpu = versus_cpu(tmp, base, args, "off", TOL["off"], "mlp_" + what, gpu_args=gpu_args)
        path = gpu.get("trace")
        if not (path and os.path.exists(path)):
            check(False, what + ": trace written")
            continue
        ev = load_trace(path)["traceEvents"]
        h2d = [e for e in ev if e.get("cat") == "gpu_memcpy" and "HtoD" in e["name"]]
        kernel_streams = {e["tid"] for e in ev if e.get("cat") == "kernel"}
        pinned = "--pin-memory" in gpu_args
        batch = [e for e in h2d if 1000 < e.get("args", {}).get("bytes", 0) < 100000]  # not state
        check(len(batch) >= 6, "%s: a batch copy a step (%d)" % (what, len(batch)))
        check(all(("Pinned" in e["name"]) == pinned for e in batch),
              "%s: batch copies from %s memory: %s" % (what, "pinned" if pinned else "pageable",
                                                        sorted({e["name"] for e in batch})))
        apart = all(e["tid"] not in kernel_streams for e in batch)
        check(apart == stream_apart, "%s: batch copies %s the kernels' stream" %
              (what, "apart from" if stream_apart else "on"))


def case_refusals(tmp):
    """What the backend refuses on an older GPU: bf16 below 8.0, any GPU below 7.5; refused
    before training, and never by training on the CPU instead."""
    for cc, amp, why in (("75", "bf16", "compute capability 7.5"),
                         ("70", "off", "compute capability 7.0")):
        out = os.path.join(tmp, "refused_" + cc)
        p = subprocess.run([BIN, "run", "--device", "cuda", "--amp", amp, "--data", DATA,
                            "--steps", "1", "--no-report", "--out", out],
                           env=sim_env({"SIMDEV_CC": cc}), capture_output=True, text=True,
                           timeout=600)
        check(p.returncode != 0 and why in p.stderr,
              "cc %s, --amp %s: refused naming the %s (%d): %s" % (cc, amp, why, p.returncode,
                                                                p.stderr[-300:]))
        summaries = [d for d, _, files in os.walk(out) if "summary.json" in files]
        check("epoch" not in p.stdout and not summaries,
              "cc %s, --amp %s: nothing trained" % (cc, amp))
    _, ok, _ = train(tmp, "fp16_on_75", "cuda", ["--steps", "1", "--amp", "fp16"],
                     sim_env({"SIMDEV_CC": "75"}))
    check(ok.get("device") == "cuda", "cc 7.5 trains --amp fp16 on the device")


def device_peak(summary):
    """The most device memory the trace's [memory] events show allocated at once (0: none)."""
    path = summary.get("trace")
    if not (path and os.path.exists(path)):
        return 0
    return max([e["args"].get("Total Allocated", 0) for e in load_trace(path)["traceEvents"]
                if e.get("name") == "[memory]" and e.get("args", {}).get("Device Type") == 1]
               or [0])


def case_knobs(tmp):
    """--zero-grad none and --checkpoint-activations on the device: the CPU's weights from the
    same start (gradients written, not added, after a step, across micro-batches; dropped
    activations recomputed in backward), and checkpointing lowers the activation bytes and the
    trace's device-memory peak."""
    base = start(tmp, "mlp")
    args = ["--steps", "6", "--batch-size", "16", "--accumulate", "2", "--zero-grad", "none"]
    versus_cpu(tmp, base, args, "off", TOL["off"], "mlp_zero_grad_none")
    base = start(tmp, "cnn")
    cnn = ["--model", "cnn", "--steps", "4", "--batch-size", "8", "--accumulate", "2"]
    _, ckpt = versus_cpu(tmp, base, cnn + ["--checkpoint-activations", "--zero-grad", "none"],
                         "off", TOL["off"], "cnn_ckpt_zero_grad_none")
    # fp16: the recompute reads the cast input and the fp16 weights, and gives the activations
    # forward made: the same weights as without checkpointing (the CPU has no fp16 to compare)
    fp16 = ["--resume", base, "--amp", "fp16", "--zero-grad", "none"] + cnn
    _, kept16, kept16_ckpt = train(tmp, "cnn_fp16_cuda", "cuda", fp16, sim_env())
    _, ckpt16, ckpt16_ckpt = train(tmp, "cnn_fp16_ckpt_cuda", "cuda",
                                   fp16 + ["--checkpoint-activations"], sim_env())
    compare(base, kept16_ckpt, ckpt16_ckpt, kept16, ckpt16, 1e-6, "cnn_fp16_ckpt_vs_kept")
    _, plain, _ = train(tmp, "cnn_plain_cuda", "cuda", ["--resume", base] + cnn, sim_env())
    a, b = ckpt.get("activation_bytes", 0), plain.get("activation_bytes", 0)
    print("cnn activation bytes: %d checkpointed, %d kept" % (a, b))
    check(0 < a < b, "cnn: --checkpoint-activations lowers activation_bytes (%d vs %d)" % (a, b))
    pa, pb = device_peak(ckpt), device_peak(plain)
    print("cnn device-memory peak: %d checkpointed, %d kept" % (pa, pb))
    check(0 < pa < pb and pb - pa == b - a,
          "cnn: the trace's device-memory peak falls by the activation bytes saved (%d vs %d)"
          % (pa, pb))
    # the recompute: each batch's backward runs both convolutions' forward again
    conv = [sum(1 for k in kernels_of(x) if k["name"].startswith("sim_cudnn_fwd"))
            for x in (ckpt, plain)]
    batches = sum(1 for e in load_trace(plain["trace"])["traceEvents"] if e.get("ph") == "X"
                  and str(e.get("name", "")).startswith("ProfilerStep#")) if plain.get("trace") else 0
    print("cnn convolution forwards: %d checkpointed, %d kept, %d batches" % (*conv, batches))
    check(batches > 0 and conv[0] - conv[1] == 2 * batches,
          "cnn: --checkpoint-activations recomputes the 2 convolutions in each backward")
    for what, summary, want in (("checkpointed", ckpt, "none"), ("plain", plain, "zero")):
        path = summary.get("trace")
        g = load_trace(path).get("gprof", {}) if path and os.path.exists(path) else {}
        check(str(g.get("zero_grad")) == want, "cnn %s: the trace says zero_grad %s (got %r)"
              % (what, want, g.get("zero_grad")))


def case_cnn_bench_shapes(tmp):
    """--cudnn-benchmark with 6 (layer, batch size) shapes, more than the 4 descriptor sets a
    layer caches: batches of 13, the last training batch of 5 (96 samples) and the last test
    batch of 1 (40), over 2 epochs. Each shape is searched once (the fake cuDNN's own count),
    the test batch's forward only, and never inside a profiled step."""
    log = os.path.join(tmp, "searches.log")
    args = ["--model", "cnn", "--batch-size", "13", "--epochs", "2"]
    _, gpu = versus_cpu(tmp, start(tmp, "cnn"), args, "off", TOL["off"], "cnn_bench_shapes",
                        {"SIMDEV_DNN_SEARCH_LOG": log}, ["--cudnn-benchmark"])
    lines = open(log).read().split("\n") if os.path.exists(log) else []
    searches = {}
    for line in filter(None, lines):
        searches[line] = searches.get(line, 0) + 1
    print("cudnn searches:", searches)
    for n in (13, 5, 1):
        for layer in ("1 28 28", "32 14 14"):
            for d in ("fwd", "bwd_filter") if n != 1 else ("fwd",):
                key = "%s %d %s" % (d, n, layer)
                check(searches.get(key) == 1, "%s searched once (%s)" % (key, searches.get(key)))
    check(searches.get("bwd_data 13 32 14 14") == 1 and "bwd_data 13 1 28 28" not in searches,
          "the second convolution's data gradient searched once, the first's never")
    check(not any(k.startswith(("bwd_data 1 ", "bwd_filter 1 ")) for k in searches),
          "the test batch (forward only) has no backward search")
    check(len(searches) == 12 and all(v == 1 for v in searches.values()),
          "12 searches, one each: %s" % searches)
    path = gpu.get("trace")
    if not (path and os.path.exists(path)):
        check(False, "cnn_bench_shapes: trace written")
        return
    ev = load_trace(path)["traceEvents"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X"
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    # only a forward search runs implicit_gemm (the slowest): one a shape
    timed = [e for e in ev if e.get("cat") == "kernel" and e["name"] == "sim_cudnn_fwd_implicit_gemm"]
    runtime = {e["args"].get("correlation"): e for e in ev if e.get("cat") == "cuda_runtime"}
    launches = [runtime.get(k["args"].get("correlation")) for k in timed]
    inside = [k for k, l in zip(timed, launches)
              if l and any(a <= l["ts"] < b for a, b in steps)]
    print("search kernels: %d, launched inside a step: %d, steps: %d"
          % (len(timed), len(inside), len(steps)))
    check(len(timed) == 6 and all(launches) and len(steps) == 16 and not inside,
          "no search launched inside a profiled step (%d of %d)" % (len(inside), len(timed)))


def runtime_calls(ev):
    return [e for e in ev if e.get("cat") == "cuda_runtime"]


def step_ranges(ev):
    return sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X"
                  and str(e.get("name", "")).startswith("ProfilerStep#"))


def launches_per_step(ev):
    """Kernel-launch API calls (cudaLaunchKernel, cudaGraphLaunch) in each step, in order."""
    calls = [e for e in runtime_calls(ev) if e["name"] in ("cudaLaunchKernel", "cudaGraphLaunch")]
    return [sum(1 for c in calls if a <= c["ts"] < b) for a, b in step_ranges(ev)]


def host_wait_shares(ev):
    """GT04's host wait inside each step: the idle time before a kernel whose launch call began
    after the step's previous kernel ended (the GPU waited for the host to launch), as a share
    of the step. The wait before a step's first kernel (loader, copy) is left out: on the
    simulated device the host computes the device work itself, which no graph removes."""
    api = {e["args"].get("correlation"): e for e in runtime_calls(ev)}
    ks = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    shares = []
    for a, b in step_ranges(ev):
        wait, prev_end = 0.0, None
        for k in ks:
            launch = api.get(k["args"].get("correlation"))
            if not launch or not a <= launch["ts"] < b:
                continue
            if prev_end is not None and launch["ts"] > prev_end and k["ts"] > prev_end:
                wait += k["ts"] - prev_end
            prev_end = max(prev_end or 0.0, k["ts"] + k["dur"])
        shares.append(wait / (b - a) if b > a else 0.0)
    return shares


def median(xs):
    return sorted(xs)[len(xs) // 2] if xs else 0.0


def graph_trace_checks(ev, what):
    """Every step but a capture is one cudaGraphLaunch, and its kernels are linked to it."""
    launches = {e["args"].get("correlation"): e for e in runtime_calls(ev)
                if e["name"] == "cudaGraphLaunch"}
    ks = [e for e in ev if e.get("cat") == "kernel"]
    in_graph = [k for k in ks if k["args"].get("correlation") in launches]
    flows = {e.get("id") for e in ev if e.get("cat") == "ac2g"}
    linked = [c for c in launches if c in flows]
    print("%s: %d graph launches, %d of %d kernels from them, %d launches with flows"
          % (what, len(launches), len(in_graph), len(ks), len(linked)))
    per = [sum(1 for k in in_graph if k["args"].get("correlation") == c) for c in launches]
    check(len(launches) > 0 and min(per) >= 10,
          "%s: each graph launch's kernels carry its correlation (%s)" % (what, per))
    check(len(linked) == len(launches), "%s: each cudaGraphLaunch has its flow to its kernels"
          % what)
    names = {e["name"] for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"}
    check("CUDAGraph.replay" in names and "CUDAGraph.capture" in names,
          "%s: capture and replay ranges (%s)" % (what, sorted(names)[:10]))


def case_graphs(tmp):
    """--cuda-graphs: the CPU's weights from the same start (mlp fp32 over 3 epochs, the last,
    partial batch captured too; mlp fp16 with the loss scaler on the device and accumulation;
    the cnn with --cudnn-benchmark searched before capture), the eager device run's weights, a
    trace with one cudaGraphLaunch a step whose kernels are linked to it, fewer launch calls a
    step and less GPU time waiting on the host than without graphs."""
    base = start(tmp, "mlp")
    args = ["--epochs", "3", "--batch-size", "20", "--non-blocking", "--pin-memory"]
    _, graph = versus_cpu(tmp, base, args, "off", TOL["off"], "mlp_graphs",
                          gpu_args=["--cuda-graphs"])
    _, eager, eager_ckpt = train(tmp, "mlp_eager_cuda", "cuda", ["--resume", base] + args,
                                 sim_env())
    compare(base, eager_ckpt, os.path.join(tmp, "mlp_graphs_cuda.ckpt"), eager, graph, 1e-6,
            "mlp_graphs_vs_eager")
    paths = [x.get("trace") for x in (graph, eager)]
    if not all(p and os.path.exists(p) for p in paths):
        check(False, "graphs: traces written")
        return
    gev, eev = (load_trace(p)["traceEvents"] for p in paths)
    check(load_trace(paths[0]).get("gprof", {}).get("cuda_graphs") is True,
          "the trace's gprof header says cuda_graphs")
    graph_trace_checks(gev, "mlp fp32")
    gl, el = launches_per_step(gev), launches_per_step(eev)
    captures = sum(1 for e in gev if e.get("name") == "CUDAGraph.capture")
    print("launch calls a step: graphs %s, eager %s; %d captures" % (gl, el, captures))
    # 96 samples in batches of 20: 4 full and one of 16 an epoch, the two input buffers taking
    # turns (the evaluation's 2 batches keep the turn). Each (buffer, size) runs eagerly once,
    # then is captured: full batches in both buffers, and the partial one in buffer 0, which it
    # fills in the first and third epochs (in buffer 1 in the second: a warm-up only)
    check(captures == 3, "three captures: the full batch in each buffer, the partial one (%d)"
          % captures)
    warmups, replays = 4, len(gl) - 4 - captures
    check(len(gl) == 15 and sorted(gl)[:replays] == [1] * replays
          and min(sorted(gl)[replays:]) >= 19 and min(el) >= 19,
          "one launch call in each of the %d replayed steps, against %s eager" % (replays, min(el)))
    hg, he = median(host_wait_shares(gev)), median(host_wait_shares(eev))
    print("GPU waiting on the host inside a step (median): %.1f%% with graphs, %.1f%% without"
          % (100 * hg, 100 * he))
    check(hg < he / 4, "graphs cut the GPU's wait on launches (%.3g vs %.3g)" % (hg, he))
    amp = ["--steps", "6", "--batch-size", "16", "--accumulate", "2", "--zero-grad", "none"]
    _, g16 = versus_cpu(tmp, base, amp, "fp16", TOL["fp16"], "mlp_fp16_graphs",
                        gpu_args=["--cuda-graphs"])
    if g16.get("trace") and os.path.exists(g16["trace"]):
        graph_trace_checks(load_trace(g16["trace"])["traceEvents"], "mlp fp16")
    cnn = ["--model", "cnn", "--steps", "4", "--batch-size", "8"]
    versus_cpu(tmp, start(tmp, "cnn"), cnn, "off", TOL["off"], "cnn_graphs",
               gpu_args=["--cuda-graphs", "--cudnn-benchmark"])
    # the fused step captured: its optimizer zeroes the gradients inside the graph
    versus_cpu(tmp, base, ["--steps", "6", "--batch-size", "16", "--fused"], "off", TOL["off"],
               "mlp_fused_graphs", gpu_args=["--cuda-graphs"])
    p = subprocess.run([BIN, "run", "--device", "cpu", "--cuda-graphs", "--data", DATA, "--steps",
                        "1", "--no-report", "--out", os.path.join(tmp, "cpu_graphs")],
                       capture_output=True, text=True, timeout=600)
    check(p.returncode == 2 and "--cuda-graphs" in p.stderr and "CPU" in p.stderr,
          "--device cpu --cuda-graphs: refused with exit 2 (%d): %s" % (p.returncode,
                                                                    p.stderr[-300:]))


def kernels_per_step(summary):
    path = summary.get("trace")
    if not (path and os.path.exists(path)):
        return 0, set()
    ev = load_trace(path)["traceEvents"]
    steps = step_ranges(ev)
    api = {e["args"].get("correlation"): e for e in runtime_calls(ev)}
    ks = [k for k in ev if k.get("cat") == "kernel"]
    inside = [k for k in ks if any(a <= api.get(k["args"].get("correlation"), {}).get("ts", -1) < b
                                   for a, b in steps)]
    return len(inside) / len(steps) if steps else 0, {k["name"] for k in inside}


def case_fused(tmp):
    """--fused on the device: the CPU's --fused weights from the same start (fp32 with the bias
    and ReLU in cuBLASLt's epilogue, and with cuBLASLt refusing: the GEMM then one bias+ReLU
    kernel; fp16 with accumulation; the cnn's linear layers, with checkpointing too; --zero-grad
    none), and fewer
    kernels a step than without it: no ReLU kernels after a linear layer, no bias-gradient
    kernels, no memset of the gradients."""
    base = start(tmp, "mlp")
    args = ["--steps", "6", "--batch-size", "16", "--fused"]
    _, fused = versus_cpu(tmp, base, args, "off", TOL["off"], "mlp_fused")
    _, plain, _ = train(tmp, "mlp_unfused_cuda", "cuda", ["--resume", base] + args[:-1],
                        sim_env())
    (kf, nf), (kp, np_) = kernels_per_step(fused), kernels_per_step(plain)
    print("mlp kernels a step: %.1f fused, %.1f not" % (kf, kp))
    check(0 < kf <= kp - 4, "--fused: at least 4 kernels fewer a step (%.1f vs %.1f)" % (kf, kp))
    check("sim_lt_gemm_bias_relu_f32" in nf and not any("relu_fwd" in n for n in nf)
          and any("relu_bias_grad" in n for n in nf) and not any("relu_bwd" in n for n in nf),
          "--fused: the GEMM's epilogue applies the ReLU, the ReLU's backward sums the bias "
          "gradient (%s)" % sorted(nf))
    sets = [sum(1 for e in load_trace(x["trace"])["traceEvents"] if e.get("cat") == "gpu_memset")
            if x.get("trace") and os.path.exists(x["trace"]) else 0 for x in (fused, plain)]
    print("memsets: %d fused, %d not (6 steps)" % tuple(sets))
    check(sets[1] - sets[0] == 6, "--fused: the step zeroes the gradients, no memset (%s)" % sets)
    _, lt, _ = train(tmp, "mlp_fused_lt_fails_cuda", "cuda",
                     ["--resume", base] + args, sim_env({"SIMDEV_LT_FAIL": "1"}))
    compare(base, os.path.join(tmp, "mlp_fused_cuda.ckpt"),
            os.path.join(tmp, "mlp_fused_lt_fails_cuda.ckpt"), fused, lt, TOL["off"],
            "mlp_fused_lt_fails")
    check(any("bias_relu_kernel" in n for n in kernels_per_step(lt)[1]),
          "--fused with cuBLASLt refusing: the GEMM, then one bias+ReLU kernel")
    acc = ["--accumulate", "2"]
    versus_cpu(tmp, base, args + acc, "fp16", TOL["fp16"], "mlp_fused_fp16")
    versus_cpu(tmp, base, args + acc + ["--zero-grad", "none"], "off", TOL["off"],
               "mlp_fused_zero_grad_none")
    cnn = ["--model", "cnn", "--steps", "4", "--batch-size", "8", "--fused"]
    cnn_base = start(tmp, "cnn")
    versus_cpu(tmp, cnn_base, cnn, "off", TOL["off"], "cnn_fused")
    versus_cpu(tmp, cnn_base, cnn + ["--checkpoint-activations"], "off", TOL["off"],
               "cnn_fused_checkpointed")


def case_channels_last(tmp):
    """--channels-last on the device: the cnn's convolutions on NHWC tensor descriptors, bias,
    ReLU and max-pool on NHWC activations, the first linear layer's flatten in NCHW order: the
    CPU's --channels-last weights from the same start (with --cudnn-benchmark, with
    checkpointing and --fused, under --cuda-graphs, in bf16), and the trace's convolutions are
    NHWC."""
    base = start(tmp, "cnn")
    args = ["--model", "cnn", "--steps", "4", "--batch-size", "8", "--channels-last"]
    _, gpu = versus_cpu(tmp, base, args, "off", TOL["off"], "cnn_channels_last",
                        gpu_args=["--cudnn-benchmark"])
    names = {k["name"] for k in kernels_of(gpu)}
    convs = [n for n in names if n.startswith("sim_cudnn_")]
    check(convs and all(n.endswith("_nhwc") for n in convs)
          and any("pool_nhwc_fwd" in n for n in names) and any("layout_kernel" in n for n in names),
          "--channels-last: NHWC convolutions and pooling, the flatten's reorder (%s)"
          % sorted(names))
    versus_cpu(tmp, base, args + ["--checkpoint-activations", "--fused"], "off", TOL["off"],
               "cnn_channels_last_ckpt_fused")
    versus_cpu(tmp, base, args, "off", TOL["off"], "cnn_channels_last_graphs",
               gpu_args=["--cuda-graphs"])
    versus_cpu(tmp, base, args + ["--amp", "bf16"], "bf16", TOL["bf16"],
               "cnn_channels_last_bf16")


# ||w_cuda - w_cpu|| as a share of ||w_cpu - w_start||, per --amp
# (measured on 2026-11-26: fp32 2e-7 to 9e-7, fp16 2e-4 to 2.5e-3, bf16 0.044 to 0.092, fp16 with
# SGD 6.4e-3; a defect moves the weights by more than their whole movement)
TOL = {"off": 1e-4, "fp16": 2e-2, "bf16": 0.25, "fp16_sgd": 0.05}


CASES = {"mlp_fp32": case_mlp_fp32, "mlp_amp": case_mlp_amp, "cnn": case_cnn,
         "mlp_loader": case_mlp_loader, "refusals": case_refusals, "knobs": case_knobs,
         "cnn_bench_shapes": case_cnn_bench_shapes, "graphs": case_graphs,
         "fused": case_fused, "channels_last": case_channels_last}


def main():
    global BIN, MODULE, FAKE_DIR, DATA
    case, BIN, MODULE, FAKE_DIR, DATA = sys.argv[1:6]
    with tempfile.TemporaryDirectory() as tmp:
        CASES[case](tmp)
    print("%s: %d failure(s)" % (case, len(FAILS)))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
