# A training loop killed by SIGTERM (sent to itself, as `timeout` or a scheduler would) at its
# 10th optimizer step, inside torch.profiler's recording window (tests/cli/test_run_torch.py:
# the steps recorded so far must still be written, and the process still die of SIGTERM).
import os
import signal

import torch
from torch import nn

model = nn.Linear(64, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    opt.zero_grad()
    model(torch.randn(32, 64)).sum().backward()
    opt.step()
    if step == 9:
        os.kill(os.getpid(), signal.SIGTERM)
