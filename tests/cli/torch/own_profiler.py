# A PyTorch script that runs its own torch.profiler and writes its trace to argv[1], outside the
# run folder (tests/cli/test_run_torch.py: gprof-train must not profile it a second time); with
# argv[2] == "legacy", the older torch.autograd.profiler.profile around each step instead.
import sys

import torch
from torch import nn

model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
if sys.argv[2:] == ["legacy"]:
    for _ in range(3):
        with torch.autograd.profiler.profile() as prof:
            opt.zero_grad()
            model(torch.randn(32, 64)).sum().backward()
            opt.step()
    prof.export_chrome_trace(sys.argv[1])
    print("own trace written")
    sys.exit(0)
sched = torch.profiler.schedule(wait=1, warmup=1, active=5, repeat=1)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                            schedule=sched) as prof:
    for _ in range(10):
        opt.zero_grad()
        model(torch.randn(32, 64)).sum().backward()
        opt.step()
        prof.step()
prof.export_chrome_trace(sys.argv[1])
print("own trace written")
