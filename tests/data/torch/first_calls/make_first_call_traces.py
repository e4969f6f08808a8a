#!/usr/bin/env python3
"""Real torch.profiler traces (CPU) for GT14's first-time work against a recurring stall.

A small MLP under torch.compile (backend "aot_eager": no C++ compiler needed; dynamic=False, so
each new batch size recompiles, as it does for a partial last batch, eval or variable sequence
lengths), trained on batches of 64 after 3 unprofiled warm-up steps, profiled with
record_shapes=True (wait=1, warmup=1, then the steps listed):

  shape_changes      batches of 64 but one of 40 (an epoch's last, partial batch) and one of 48
                     (another shape): two steps slow once, by the recompile (about 0.2-0.6 s on
                     this 2-core VM against ~1 ms a step); no stall
  pause_and_shape    the same partial batch of 40, and a 30 ms sleep every 6th step (a periodic
                     stall: logging, a checkpoint)

Writes NAME.json.gz (prof.export_chrome_trace(), gzipped) and NAME.steps.json: each profiled
step's batch size and whether it slept, for the test to check GT14's rows against.

    sh scripts/torch_venv.sh python3 tests/data/torch/first_calls/make_first_call_traces.py
"""
import gzip
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

HERE = os.path.dirname(os.path.abspath(__file__))
PAUSE_S, PAUSE_EVERY = 0.030, 6

CASES = {
    "shape_changes": ([64] * 9 + [40] + [64] * 7 + [48] + [64] * 5, False),
    "pause_and_shape": ([64] * 9 + [40] + [64] * 14, True),
}


def make(name, sizes, pause):
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    compiled = torch.compile(model, backend="aot_eager", dynamic=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step(b):
        x, y = torch.randn(b, 64), torch.randint(0, 10, (b,))
        opt.zero_grad()
        torch.nn.functional.cross_entropy(compiled(x), y).backward()
        opt.step()

    for _ in range(3):  # the first shape's compile, outside the profiled window
        step(64)
    sizes = [64, 64] + sizes  # the schedule's wait and warm-up steps
    record = []
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=len(sizes) - 2)) as prof:
        for i, b in enumerate(sizes):
            step(b)
            slept = pause and i >= 2 and (i - 2) % PAUSE_EVERY == PAUSE_EVERY - 1
            if slept:
                time.sleep(PAUSE_S)
            record.append({"batch": b, "slept": bool(slept)})
            prof.step()
    path = os.path.join(HERE, name + ".json")
    prof.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.GzipFile(path + ".gz", "wb", mtime=0) as g:
        g.write(f.read())
    os.remove(path)
    with open(os.path.join(HERE, name + ".steps.json"), "w") as f:
        json.dump({"profiled": record[2:], "pause_s": PAUSE_S if pause else 0}, f, indent=1)
        f.write("\n")


def main():
    torch.set_num_threads(1)
    for name in sys.argv[1:] or CASES:
        make(name, *CASES[name])
        print(name, "written")


if __name__ == "__main__":
    main()
