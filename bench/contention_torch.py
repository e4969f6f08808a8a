#!/usr/bin/env python3
"""A small CNN on random 28x28 images under torch.profiler (a plain export_chrome_trace: no
thread or core counts in the trace), for GT19's PyTorch cases (bench/accuracy_contention.sh).
usage: contention_torch.py OUT.json THREADS WORKERS [SLOW]
SLOW: a per-sample transform in Python that makes loading the bottleneck (a different fault)."""
import sys

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
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()


if __name__ == "__main__":
    main()
