#!/usr/bin/env python3
"""PyTorch training loops on a real CUDA GPU, each with one fault put in on purpose and its fix,
for checking the diagnosis where only hardware can: the fix timed against the fault in the same
process (interleaved windows, no profiler), and a torch.profiler trace of each side for
`gprof-train diagnose` to read. Exits 77 without a CUDA device (it is a device check, not part
of `make test`).

Each fix that PyTorch can capture is also timed against itself run as one CUDA graph (the step's
launches replayed at once, the batch copied into static buffers first): what removing the fix's
host launch cost gains, the truth for GT04/GT05 on the fix's own trace.

Other rules' fixes for findings a fault's trace has besides its own (ALT: bf16 autocast for
GT13, a prefetch on a copy stream for GT09) are timed against the fault the same way ("alt").

Cases (fault -> fix):
  sync      host work each step (a CPU transform of the next batch) and loss.item() after it,
            so the GPU waits for the host and the host for the GPU -> the loss read every
            50 steps (GT07/GT08)
  pageable  a 28 MiB batch copied from pageable memory each step -> pinned, non_blocking (GT06)
  loader    a DataLoader whose samples take CPU work, num_workers=0 -> 6 workers (GT01)
  fp32      a wide MLP in fp32 (TF32 off) -> bf16 autocast (GT13)
  launch    a deep, narrow MLP at batch 32 -> the whole step as one CUDA graph (GT04/GT05)
  pause     a 40 ms host pause every 10th step -> none (GT14)
  healthy   a bf16 MLP on data already on the GPU (no fix: every rule should stay quiet)

usage: gpu_torch_cases.py OUT_DIR [--cases a,b,...] [--windows N] [--steps N] [--plain CASE]
Writes OUT_DIR/<case>_fault.json.gz, <case>_fix.json.gz, <case>_keyavg.json (the fault trace's
key_averages rows, as PyTorch computes them) and OUT_DIR/measured.json (a case's "graph" entry:
its fix against the fix as a CUDA graph). --plain CASE: run that
case's fault for --steps steps with no profiler of its own (for `gprof-train run -- python3`)."""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

DEV = os.environ.get("GPU_CASES_DEVICE", "cuda")  # "cpu": a smoke test of the script alone
PROFILE_STEPS = 30


def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()


def mlp(width, depth, inp, out=10):
    layers, d = [], inp
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, out))
    return nn.Sequential(*layers).to(DEV)


def train_step(model, opt, x, y, amp=False, cache=True):
    # cache=False inside a CUDA graph capture: autocast's cast cache must not outlive it
    with torch.autocast(DEV, dtype=torch.bfloat16, enabled=amp, cache_enabled=cache):
        loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def captured(model, opt, x, y, amp=False, after=None):
    """The documented whole-step capture: warm up on a side stream, then capture one training
    step on the static x, y (and `after(loss)`, if given); returns the graph's replay."""
    if DEV != "cuda":  # the smoke test on the CPU: the same step, not captured
        return lambda: after(train_step(model, opt, x, y, amp)) if after else train_step(
            model, opt, x, y, amp)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            train_step(model, opt, x, y, amp, cache=False)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = train_step(model, opt, x, y, amp, cache=False)
        if after:
            after(loss)
    return graph.replay


def fed(replay, x, y):
    """A graphed step fed from a host batch: copy it into the static buffers, then replay."""
    def step(hx, hy):
        x.copy_(hx, non_blocking=True)
        y.copy_(hy, non_blocking=True)
        replay()
    return step


def host_work(buf):
    # a CPU transform of the next batch (normalise, clip), ~1-2 ms of one core
    t = buf * 0.5 + 0.1
    t.clamp_(0.0, 1.0)
    return t.sum()


def case_sync():
    model, x = mlp(2048, 6, 2048), torch.randn(512, 2048, device=DEV)
    y = torch.randint(0, 10, (512,), device=DEV)
    opt = torch.optim.Adam(model.parameters())
    cpu_buf = torch.rand(1 << 21)
    state = {"i": 0, "acc": torch.zeros((), device=DEV)}

    def fault():
        host_work(cpu_buf)
        loss = train_step(model, opt, x, y)
        loss.item()

    def fix():
        host_work(cpu_buf)
        loss = train_step(model, opt, x, y)
        state["acc"] += loss.detach()
        state["i"] += 1
        if state["i"] % 50 == 0:
            state["acc"].item()

    model2 = mlp(2048, 6, 2048)
    acc2 = torch.zeros((), device=DEV)
    replay = captured(model2, torch.optim.Adam(model2.parameters(), capturable=True), x, y,
                      after=lambda loss: acc2.add_(loss.detach()))

    def fault_bf16():
        host_work(cpu_buf)
        train_step(model, opt, x, y, amp=True).item()

    ALT["sync"] = {"GT13": fault_bf16}

    def graphed():
        host_work(cpu_buf)
        replay()
        state["i"] += 1
        if state["i"] % 50 == 0:
            acc2.item()

    return fault, fix, graphed


def case_pageable():
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(8),
                          nn.Flatten(), nn.Linear(32 * 64, 10)).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    shape = (256, 3, 96, 96)  # 28 MiB of fp32
    pageable, pinned = torch.rand(shape), torch.rand(shape).pin_memory()
    y = torch.randint(0, 10, (256,), device=DEV)

    def fault():
        train_step(model, opt, pageable.to(DEV), y)

    def fix():
        train_step(model, opt, pinned.to(DEV, non_blocking=True), y)

    copies, nxt = (torch.cuda.Stream() if DEV == "cuda" else None), {}

    def prefetch():
        with torch.cuda.stream(copies):
            nxt["x"] = pinned.to(DEV, non_blocking=True)

    def overlapped():  # GT09's fix: the next batch copied on a side stream during this step
        torch.cuda.current_stream().wait_stream(copies)
        xb = nxt["x"]
        xb.record_stream(torch.cuda.current_stream())
        prefetch()
        train_step(model, opt, xb, y)

    if copies:
        prefetch()
        ALT["pageable"] = {"GT13": lambda: train_step(model, opt, pageable.to(DEV), y, amp=True),
                           "GT09": overlapped}

    model2 = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(8),
                           nn.Flatten(), nn.Linear(32 * 64, 10)).to(DEV)
    xs = pinned.to(DEV)
    step = fed(captured(model2, torch.optim.SGD(model2.parameters(), lr=0.01), xs, y), xs, y)
    return fault, fix, (lambda: step(pinned, y))


class SlowSamples(torch.utils.data.Dataset):
    """Each sample costs CPU work (a small image's augmentation in numpy terms)."""

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = torch.rand(3, 64, 64, generator=g)
        for _ in range(2):
            img = torch.nn.functional.avg_pool2d(img[None], 3, 1, 1)[0]
        return img, i % 10


EXTRA = {}  # case -> a measurement of its own, run after the case's windows
ALT = {}  # case -> {rule: the fault with that rule's fix instead}


def loader_rate(make, batches=60):
    """ms a batch that the fix's DataLoader delivers on its own, its prefetch drained first:
    no fix of the training step makes a step shorter than this."""
    it = make(6)
    for _ in range(40):  # 6 workers x prefetch_factor 4, and more
        next(it)
    t0 = time.perf_counter()
    for _ in range(batches):
        next(it)
    return (time.perf_counter() - t0) * 1e3 / batches


def loader_model():
    return nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                         nn.Linear(64 * 16, 10)).to(DEV)


def case_loader():
    model = loader_model()
    opt = torch.optim.Adam(model.parameters())
    ds = SlowSamples()
    iters = {}

    def make(workers):
        dl = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=workers, pin_memory=True,
                                         persistent_workers=workers > 0,
                                         prefetch_factor=4 if workers else None)
        return iter(dl)

    iters["fault"], iters["fix"], iters["graphed"] = make(0), make(6), make(6)

    def step(key):
        x, y = next(iters[key])
        train_step(model, opt, x.to(DEV, non_blocking=True), y.to(DEV, non_blocking=True))

    EXTRA["loader"] = lambda: {"loader_only_ms": loader_rate(make)}
    model2 = loader_model()
    xs, ys = (t.to(DEV) for t in next(iters["graphed"]))
    fed_step = fed(captured(model2, torch.optim.Adam(model2.parameters(), capturable=True), xs,
                            ys), xs, ys)
    return (lambda: step("fault")), (lambda: step("fix")), (
        lambda: fed_step(*next(iters["graphed"])))


def case_fp32():
    torch.backends.cuda.matmul.allow_tf32 = False
    model, x = mlp(4096, 4, 4096), torch.randn(2048, 4096, device=DEV)
    y = torch.randint(0, 10, (2048,), device=DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model2 = mlp(4096, 4, 4096)
    graphed = captured(model2, torch.optim.SGD(model2.parameters(), lr=0.01), x, y, amp=True)
    return (lambda: train_step(model, opt, x, y)), (
        lambda: train_step(model, opt, x, y, amp=True)), graphed


def case_launch():
    model, x = mlp(128, 40, 128), torch.randn(32, 128, device=DEV)
    y = torch.randint(0, 10, (32,), device=DEV)
    opt = torch.optim.Adam(model.parameters(), capturable=True)
    ALT["launch"] = {"GT13": lambda: train_step(model, opt, x, y, amp=True)}
    model2 = mlp(128, 40, 128)
    replay = captured(model2, torch.optim.Adam(model2.parameters(), capturable=True), x, y)
    return (lambda: train_step(model, opt, x, y)), replay, None  # the fix is the graph


def case_pause():
    model, x = mlp(4096, 4, 4096), torch.randn(1024, 4096, device=DEV)
    y = torch.randint(0, 10, (1024,), device=DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    state = {"i": 0}

    def fault():
        state["i"] += 1
        if state["i"] % 10 == 0:
            sync()
            time.sleep(0.040)
        train_step(model, opt, x, y, amp=True)

    model2 = mlp(4096, 4, 4096)
    graphed = captured(model2, torch.optim.SGD(model2.parameters(), lr=0.01), x, y, amp=True)
    return fault, (lambda: train_step(model, opt, x, y, amp=True)), graphed


def case_healthy():
    model, x = mlp(4096, 6, 4096), torch.randn(4096, 4096, device=DEV)
    y = torch.randint(0, 10, (4096,), device=DEV)
    opt = torch.optim.AdamW(model.parameters(), fused=True)
    step = lambda: train_step(model, opt, x, y, amp=True)  # noqa: E731
    model2 = mlp(4096, 6, 4096)
    graphed = captured(model2, torch.optim.AdamW(model2.parameters(), fused=True,
                                                 capturable=True), x, y, amp=True)
    return step, None, graphed  # the graph of the step itself (it has no fault)


CASES = {"sync": case_sync, "pageable": case_pageable, "loader": case_loader, "fp32": case_fp32,
         "launch": case_launch, "pause": case_pause, "healthy": case_healthy}


def time_window(step, steps, skip):
    """ms a step over steps-skip steps, after skip untimed ones (a loader refills, a queue
    drains), the GPU drained at both ends."""
    for _ in range(skip):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(steps - skip):
        step()
    sync()
    return (time.perf_counter() - t0) * 1e3 / (steps - skip)


# Untimed steps before each window, where a case's queue must drain first: the loader's 6
# workers hold 24 prefetched batches, which a 40-step window with 6 untimed steps used up
# while timing (the fix ran 3.1-4.1 ms steps against the workers' 4.0-4.8 ms a batch).
SKIP = {"loader": 40}


def measure(fault, fix, windows, steps, skip=None):
    a, b = [], []
    skip = max(5, steps // 6) if skip is None else skip
    for w in range(windows):
        order = [(fault, a), (fix, b)] if w % 2 == 0 else [(fix, b), (fault, a)]
        for fn, out in order:
            if fn is not None:
                out.append(time_window(fn, steps + skip - max(5, steps // 6), skip=skip))
    res = {"fault_ms": statistics.median(a), "fault_windows_ms": a}
    if b:
        res.update(fix_ms=statistics.median(b), fix_windows_ms=b,
                   gain_pct=100.0 * (1.0 - statistics.median(b) / statistics.median(a)))
    return res


def key_rows(prof):
    rows = []
    for e in prof.key_averages():
        rows.append({k: getattr(e, k, None) for k in (
            "key", "count", "cpu_time_total", "self_cpu_time_total", "device_time_total",
            "self_device_time_total", "cpu_memory_usage", "device_memory_usage")})
    return rows


def profile(step, path):
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    sched = torch.profiler.schedule(wait=1, warmup=3, active=PROFILE_STEPS)
    with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                profile_memory=True) as prof:
        for _ in range(PROFILE_STEPS + 4):
            step()
            prof.step()
    prof.export_chrome_trace(path)
    return prof


def run_case(name, out, windows, steps):
    fault, fix, graphed = CASES[name]()
    for _ in range(10):  # warm-up: cuBLAS handles, allocator, autotuning, loader workers
        for fn in (fault, fix, graphed):
            if fn:
                fn()
    sync()
    skip = SKIP.get(name)
    res = measure(fault, fix, windows, steps, skip)
    if graphed:  # the fix (or a healthy step) against itself as one CUDA graph
        res["graph"] = measure(fix or fault, graphed, windows, steps, skip)
    if name in EXTRA:
        res.update(EXTRA[name]())
    for rule, alt in ALT.get(name, {}).items():
        res.setdefault("alt", {})[rule] = measure(fault, alt, windows, steps, skip)
    prof = profile(fault, os.path.join(out, name + "_fault.json.gz"))
    with open(os.path.join(out, name + "_keyavg.json"), "w") as f:
        json.dump(key_rows(prof), f)
    if fix:
        profile(fix, os.path.join(out, name + "_fix.json.gz"))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--windows", type=int, default=4)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--plain")
    args = ap.parse_args()
    if DEV == "cuda" and not torch.cuda.is_available():
        print("gpu_torch_cases: no CUDA device: skipped", file=sys.stderr)
        return 77
    os.makedirs(args.out, exist_ok=True)
    if args.plain:
        fault = CASES[args.plain]()[0]
        for _ in range(args.steps):
            fault()
        sync()
        return 0
    results = {"device": torch.cuda.get_device_name() if DEV == "cuda" else DEV, "torch": torch.__version__}
    for name in args.cases.split(","):
        t0 = time.time()
        try:
            results[name] = run_case(name, args.out, args.windows, args.steps)
        except Exception as e:  # one case's failure must not lose the others
            results[name] = {"error": "%s: %s" % (type(e).__name__, e)}
        results[name]["wall_s"] = round(time.time() - t0, 1)
        print(name, json.dumps(results[name]), flush=True)
        with open(os.path.join(args.out, "measured.json"), "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
