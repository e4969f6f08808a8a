#!/usr/bin/env python3
"""The trainer's model and loop in PyTorch eager, for bench_train.sh: one epoch of Fashion-MNIST
(batch 64, Adam 1e-3, normalise (0.5, 0.5)) on CUDA; prints training samples/s."""
import argparse
import gzip
import time

import numpy as np
import torch
from torch import nn

DATA = "/usr/share/datasets/fashion-mnist"


def load(prefix):
    with gzip.open(f"{DATA}/{prefix}-images-idx3-ubyte.gz") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f"{DATA}/{prefix}-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = torch.from_numpy(x.astype(np.float32) / 255.0 * 2 - 1)
    return torch.utils.data.TensorDataset(x, torch.from_numpy(y.astype(np.int64)))


def model(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64),
                             nn.ReLU(), nn.Linear(64, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args()
    dev = torch.device("cuda")
    loader = torch.utils.data.DataLoader(load("train"), batch_size=64, shuffle=True,
                                         num_workers=args.workers, pin_memory=True)
    net = model(args.model).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    n = 0
    t0 = time.perf_counter()
    for x, y in loader:
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
        n += x.shape[0]
    torch.cuda.synchronize()
    print(f"{n / (time.perf_counter() - t0):.0f}")


if __name__ == "__main__":
    main()
