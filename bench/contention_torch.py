#!/usr/bin/env python3
"""A small CNN on random 28x28 images under torch.profiler (a plain export_chrome_trace: no
thread or core counts in the trace), for GT19's PyTorch cases (bench/accuracy_contention.sh).
usage: contention_torch.py OUT.json THREADS WORKERS [SLOW]
SLOW: a per-sample transform in Python that makes loading the bottleneck (a different fault).
GP_TORCH_TRUTH=1: print to stderr, per step, the training thread's wall time, run-queue wait
(/proc/thread-self/schedstat) and minor page faults: whether a quiet case really did not wait."""
import os
import resource
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset


class Slow(Dataset):
    """Each sample costs a Python loop: a CPU-bound loader."""

    def __init__(self, inner):
        self.inner = inner

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, i):
        sum(range(20000))
        return self.inner[i]


def thread_state():
    """(wall ns, run-queue wait ns, minor faults) of the calling thread."""
    with open("/proc/thread-self/schedstat") as f:
        wait = int(f.read().split()[1])
    return time.perf_counter_ns(), wait, resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def main():
    out, threads, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    slow = len(sys.argv) > 4 and sys.argv[4] == "slow"
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    data = TensorDataset(torch.randn(64 * 16, 1, 28, 28), torch.randint(0, 10, (64 * 16,)))
    loader = DataLoader(Slow(data) if slow else data, batch_size=64, num_workers=workers,
                        shuffle=True)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 7 * 7, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sched = torch.profiler.schedule(wait=1, warmup=2, active=10, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=sched, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
        truth = os.environ.get("GP_TORCH_TRUTH") == "1"
        last = thread_state() if truth else None
        for i, (x, y) in enumerate(loader):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
            if truth:
                now = thread_state()
                print(f"step {i} wall {(now[0] - last[0]) / 1e6:.2f} ms runq "
                      f"{(now[1] - last[1]) / 1e6:.3f} ms faults {now[2] - last[2]}",
                      file=sys.stderr)
                last = now


if __name__ == "__main__":
    main()
