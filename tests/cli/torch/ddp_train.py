# A DistributedDataParallel MLP on the gloo backend, 24 steps a rank, for torchrun
# --nproc-per-node 2 (tests/cli/test_run_torch.py): each rank's trace, then the job view.
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(dist.get_rank())
model = DDP(nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(24):
    opt.zero_grad()
    nn.functional.cross_entropy(model(torch.randn(64, 128)), torch.randint(0, 10, (64,))).backward()
    opt.step()
dist.destroy_process_group()
