#!/usr/bin/env python3
"""Start-up on a real CUDA GPU: PyTorch training loops profiled from the program's start, without
a schedule (no ProfilerStep markers, so nothing is left out as warm-up), beside the same loop's
steady state, for checking GT00's start-up reading and the demotion of the findings it explains
where only hardware has the real first calls (CUDA context creation, lazy module loading, cuBLAS
and cuDNN handles and heuristics). Each run is a fresh process: a context is created once.

Runs per model (OUT_DIR/startup_<model>_<mode>.json.gz):
  cold<K>   everything inside `with profile():` (the model's creation and .to("cuda") too), then
            K training steps: the HTA AlexNet pattern
  warm<K>   the model on the GPU before the profiler starts, then K steps inside it
  sched     10 untimed steps, then a scheduled profile (wait 1, warmup 3, active 30): the steady
            state's own verdict, what the cold runs' findings should agree with once start-up
            is left out
  and, without the profiler, the steady step (200 steps after 20) and the wall time from the
  process's start to the end of its first step (OUT_DIR/startup_measured.json).

Models: launch (a 40-layer MLP 128 wide at batch 32: the host paces it), paced (a bf16 MLP 4096
wide at batch 4096: the GPU paces it), conv (a small CNN, fp32: cuDNN's first calls).

usage: gpu_startup_cases.py OUT_DIR [--models a,b] [--cold 1,3,30] [--warm 3] [--no-sched]
Exits 77 without a CUDA device (a device check, not part of `make test`)."""
import argparse
import json
import os
import subprocess
import sys
import time

T0 = time.perf_counter()  # as near the process's start as Python allows
DEV = os.environ.get("GPU_CASES_DEVICE", "cuda")  # "cpu": a smoke test of the script alone


def build(name, torch, nn, dev):
    if name == "conv":
        model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
                              nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
                              nn.Flatten(), nn.Linear(64 * 16, 10)).to(dev)
        x, n, amp = torch.randn(64, 3, 64, 64, device=dev), 64, False
        opt = torch.optim.Adam(model.parameters())
    else:
        width, depth, n, amp = (128, 40, 32, False) if name == "launch" else (4096, 6, 4096, True)
        layers, d = [], width
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
        layers.append(nn.Linear(width, 10))
        model = nn.Sequential(*layers).to(dev)
        x = torch.randn(n, width, device=dev)
        opt = (torch.optim.AdamW(model.parameters(), fused=True) if amp
               else torch.optim.Adam(model.parameters()))
    y = torch.randint(0, 10, (n,), device=dev)

    def step():
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=amp):
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def child(model, mode, out):
    import torch
    import torch.nn as nn
    from torch.profiler import ProfilerActivity, profile, schedule
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEV == "cuda" else [])

    def sync():
        if DEV == "cuda":
            torch.cuda.synchronize()
    path = os.path.join(out, "startup_%s_%s.json.gz" % (model, mode))
    opts = dict(activities=acts, record_shapes=True, profile_memory=True)
    if mode.startswith("cold"):
        with profile(**opts) as prof:
            step = build(model, torch, nn, DEV)
            for _ in range(int(mode[4:])):
                step()
            sync()
        prof.export_chrome_trace(path)
    elif mode.startswith("warm"):
        step = build(model, torch, nn, DEV)
        sync()
        with profile(**opts) as prof:
            for _ in range(int(mode[4:])):
                step()
            sync()
        prof.export_chrome_trace(path)
    elif mode == "sched":
        step = build(model, torch, nn, DEV)
        for _ in range(10):
            step()
        with profile(schedule=schedule(wait=1, warmup=3, active=30), **opts) as prof:
            for _ in range(34):
                step()
                prof.step()
        prof.export_chrome_trace(path)
    else:  # time: no profiler
        step = build(model, torch, nn, DEV)
        step()
        sync()
        first = time.perf_counter() - T0
        for _ in range(20):
            step()
        sync()
        t = time.perf_counter()
        for _ in range(200):
            step()
        sync()
        ms = (time.perf_counter() - t) * 1e3 / 200
        print(json.dumps({"step_ms": ms, "to_first_step_end_s": first}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--models", default="launch,paced,conv")
    ap.add_argument("--cold", default="1,3,30")
    ap.add_argument("--warm", default="3")
    ap.add_argument("--no-sched", action="store_true", help="leave the scheduled runs out")
    ap.add_argument("--child", nargs=2, metavar=("MODEL", "MODE"))
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], args.out)
    import torch
    if DEV == "cuda" and not torch.cuda.is_available():
        print("gpu_startup_cases: no CUDA device: skipped", file=sys.stderr)
        return 77
    os.makedirs(args.out, exist_ok=True)
    modes = (["cold" + k for k in args.cold.split(",") if k] +
             ["warm" + k for k in args.warm.split(",") if k] +
             ([] if args.no_sched else ["sched"]) + ["time"])
    res = {"device": torch.cuda.get_device_name() if DEV == "cuda" else DEV, "torch": torch.__version__}
    for model in args.models.split(","):
        for mode in modes:
            t = time.time()
            p = subprocess.run([sys.executable, __file__, args.out, "--child", model, mode],
                               capture_output=True, text=True, timeout=300)
            r = {"rc": p.returncode, "wall_s": round(time.time() - t, 1)}
            if p.returncode:
                r["stderr"] = p.stderr[-2000:]
            elif mode == "time":
                r.update(json.loads(p.stdout.strip().splitlines()[-1]))
            res["%s_%s" % (model, mode)] = r
            print(model, mode, json.dumps(r), flush=True)
            with open(os.path.join(args.out, "startup_measured.json"), "w") as f:
                json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
