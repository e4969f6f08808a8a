"""A tiny real PyTorch training loop under the gprof_train API (run by test_api.py).

usage: torch_api_train.py profile OUT   30 SGD steps inside `with gprof_train.profile(out=OUT)`
       torch_api_train.py handler OUT   6 steps under the script's own torch.profiler
                                        (wait=1, warmup=1, active=3), on_trace_ready(OUT)
"""
import sys

import torch
from torch import nn

import gprof_train


def model_and_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))

    def step():
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def main(mode, out):
    step = model_and_step()
    if mode == "profile":
        with gprof_train.profile(out=out) as p:
            for _ in range(30):
                step()
        print("run folder: %s" % p.dir)
        return
    tp = torch.profiler
    with tp.profile(activities=[tp.ProfilerActivity.CPU],
                    schedule=tp.schedule(wait=1, warmup=1, active=3),
                    on_trace_ready=gprof_train.on_trace_ready(out)) as prof:
        for _ in range(6):
            step()
            prof.step()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
