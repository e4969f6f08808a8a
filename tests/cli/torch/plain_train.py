# A plain PyTorch training script with no profiler code: an MLP, a DataLoader with two worker
# processes over a TensorDataset, SGD, 30 steps (tests/cli/test_run_torch.py).
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(30 * 64, 128)
y = torch.randint(0, 10, (30 * 64,))
loader = DataLoader(TensorDataset(x, y), batch_size=64, num_workers=2)
model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
for xb, yb in loader:
    opt.zero_grad()
    loss = loss_fn(model(xb), yb)
    loss.backward()
    opt.step()
print("loss %.3f" % loss.item())
