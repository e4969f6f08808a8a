#!/usr/bin/env python3
"""The trainer's mlp (784-128-64-10, ReLU) in PyTorch on the CPU for bench_train_acc.sh: Adam 1e-3,
batch 64, inputs (x/255 - 0.5) / 0.5, a reshuffle each epoch, the last partial batch kept,
PyTorch's default Linear init. Reads the IDX .gz files with gzip + numpy; prints the test
accuracy after each epoch as `seed S epoch E test_acc A`."""
import argparse
import gzip

import numpy as np
import torch
from torch import nn

DATA = "/usr/share/datasets/fashion-mnist"


def load(data, prefix):
    with gzip.open(f"{data}/{prefix}-images-idx3-ubyte.gz") as f:
        raw = f.read()
        assert int.from_bytes(raw[:4], "big") == 2051, f"{prefix} images: bad magic"
        x = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(f"{data}/{prefix}-labels-idx1-ubyte.gz") as f:
        raw = f.read()
        assert int.from_bytes(raw[:4], "big") == 2049, f"{prefix} labels: bad magic"
        y = np.frombuffer(raw, np.uint8, offset=8)
    assert len(x) == len(y), f"{prefix}: {len(x)} images vs {len(y)} labels"
    x = torch.from_numpy((x.astype(np.float32) / 255.0 - 0.5) / 0.5)
    return x, torch.from_numpy(y.astype(np.int64))


@torch.no_grad()
def accuracy(net, x, y, batch):
    correct = 0
    for i in range(0, len(x), batch):
        correct += (net(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct / len(x)


def run(seed, epochs, batch, lr, train, test):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                        nn.Linear(64, 10))
    opt = torch.optim.Adam(net.parameters(), lr=lr)  # betas (0.9, 0.999), eps 1e-8
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(seed)
    (x, y), accs = train, []
    for epoch in range(epochs):
        net.train()
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch):  # the last partial batch (60000 % 64 = 32) is kept
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss_fn(net(x[idx]), y[idx]).backward()
            opt.step()
        net.eval()
        accs.append(accuracy(net, *test, 1000))
        print(f"seed {seed} epoch {epoch + 1} test_acc {accs[-1]:.4f}", flush=True)
    return accs[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 42])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data", default=DATA)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    train, test = load(args.data, "train"), load(args.data, "t10k")
    finals = [run(s, args.epochs, args.batch_size, args.lr, train, test) for s in args.seeds]
    a = np.array(finals)
    print(f"torch final: n {len(a)} mean {a.mean():.4f} std {a.std(ddof=1) if len(a) > 1 else 0:.4f}"
          f" min {a.min():.4f} max {a.max():.4f}")


if __name__ == "__main__":
    main()
