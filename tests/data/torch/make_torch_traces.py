#!/usr/bin/env python3
"""Write real torch.profiler traces and PyTorch's own key_averages() beside each (run from any
folder with a Python that has torch; CPU only; writes into this script's folder).

For each case NAME: NAME.json.gz, the trace as prof.export_chrome_trace() writes it, and
NAME.expected.json, what prof.key_averages() computes on the same run: per row its key (name,
and the input shapes as str() prints them when grouped by shape), count, self CPU total, CPU total
(float microseconds, as PyTorch computes them) and, with profile_memory, CPU Mem and Self CPU Mem
in bytes, and with with_flops the FLOPs (avg.flops, the total over the row's calls); beside
them NAME.table.txt, PyTorch's own key_averages().table() of the run. python_function rows are left
out by key_averages(), as by default.

    pip install torch            # any recent version; the traces record which one wrote them
    python3 tests/data/torch/make_torch_traces.py
"""
import gzip
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

HERE = os.path.dirname(os.path.abspath(__file__))


def mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    return model, opt, x, y


def train_steps(prof, steps=3):
    model, opt, x, y = mlp()
    data = torch.utils.data.TensorDataset(x.repeat(steps, 1), y.repeat(steps))
    for x, y in torch.utils.data.DataLoader(data, batch_size=32):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        prof.step()


def nested_same_name(prof):
    x = torch.randn(256, 256)
    for _ in range(10):
        x.mean()                    # aten::mean inside aten::mean
        torch.div(x, 3.0)           # aten::div
        x.div_(1.0001)              # aten::div_
        with record_function("outer_block"):
            with record_function("outer_block"):  # one record_function inside its namesake
                torch.relu(x)
        with record_function("two_children"):
            with record_function("two_children"):  # not merged: its parent has two children
                x.sum()
            x.sum()


def optimizer_bound(prof, steps):
    """A big MLP at batch 8 with a per-parameter (foreach=False) Adam: the optimizer step takes
    most of the step (GT17 must fire)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(4)])
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
    x, y = torch.randn(8, 1024), torch.randn(8, 1024)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        prof.step()


def tiny_ops_loss(prof, steps):
    """A loss written as a Python loop over the samples: hundreds of tiny slice/select ops per
    step (GT18 must fire)."""
    model, opt, x, y = mlp()
    x, y = x[:10], y[:10]  # a small batch keeps the trace small; the loop still dominates
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        loss = out.new_zeros(())
        for i in range(x.shape[0]):
            loss = loss + (out[i, :5] - out[i, 5:]).abs().sum() * 0.01 + out[i, y[i]] * -0.1
        loss.backward()
        opt.step()
        prof.step()


def conv_mlp(prof, steps):
    """A small conv net with an MLP head, trained a few steps: aten::conv2d, addmm, mm, add and
    mul (in the model, its loss and SGD with momentum) for PyTorch's FLOPs formulas."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(4, 8, 3, stride=2, dilation=2, groups=2), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 5 * 5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=False)
    x, y = torch.randn(6, 1, 14, 14), torch.randint(0, 10, (6,))
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y) + (out * out).mean() * 0.01
        loss.backward()
        opt.step()
        prof.step()


CASES = {
    # name: (profile() keyword arguments, body, group_by_input_shapes)
    "mlp_step": (dict(schedule=dict(wait=1, warmup=1, active=3)), train_steps, False),
    # GT00's advice, schedule(wait=1, warmup=1, active=11): enough steps, no finding
    "gt00_schedule": (dict(schedule=dict(wait=1, warmup=1, active=11)), train_steps, False),
    "with_stack": (dict(with_stack=True), train_steps, False),
    "nested_same_name": (dict(), nested_same_name, False),
    "profile_memory": (dict(profile_memory=True), train_steps, False),
    "record_shapes": (dict(record_shapes=True), train_steps, True),
    # the step is the optimizer (GT17) / many tiny CPU ops (GT18): issue 17 §12
    "optimizer_bound": (dict(schedule=dict(wait=1, warmup=1, active=11)), optimizer_bound, False),
    "tiny_ops_loss": (dict(schedule=dict(wait=1, warmup=1, active=11)), tiny_ops_loss, False),
    # PyTorch's FLOPs column (issue 27 §4): by name and by name + shape, and none without with_flops
    "flops": (dict(with_flops=True, schedule=dict(wait=1, warmup=1, active=3)), conv_mlp, False),
    "flops_shapes": (dict(with_flops=True, record_shapes=True,
                          schedule=dict(wait=1, warmup=1, active=3)), conv_mlp, True),
    # with_stack under a schedule: ProfilerStep#N and Optimizer.* partly overlap Python frames
    "with_stack_steps": (dict(with_stack=True, schedule=dict(wait=1, warmup=1, active=3)),
                         train_steps, False),
    "no_flops": (dict(record_shapes=True, schedule=dict(wait=1, warmup=1, active=3)), conv_mlp,
                 False),
}


def row(avg, by_shape, memory, flops):
    r = {
        "name": avg.key,
        "count": avg.count,
        "self_cpu_us": avg.self_cpu_time_total,
        "cpu_total_us": avg.cpu_time_total,
    }
    if by_shape:
        r["input_shapes"] = str(avg.input_shapes)
    if memory:
        r["cpu_mem_bytes"] = avg.cpu_memory_usage
        r["self_cpu_mem_bytes"] = avg.self_cpu_memory_usage
    if flops:
        r["flops"] = avg.flops
    return r


def write_case(name, kwargs, body, by_shape):
    raw = os.path.join(HERE, name + ".json")
    if "schedule" in kwargs:  # ProfilerStep#N ranges: a trace as a training loop writes one
        sched = torch.profiler.schedule(**kwargs["schedule"])
        steps = sum(kwargs["schedule"].values())
        rest = {k: v for k, v in kwargs.items() if k != "schedule"}
        with profile(activities=[ProfilerActivity.CPU], schedule=sched, **rest,
                     on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
            body(prof, steps)
    else:
        with profile(activities=[ProfilerActivity.CPU], **kwargs) as prof:
            body(prof)
        prof.export_chrome_trace(raw)
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    os.remove(raw)
    memory = kwargs.get("profile_memory", False)
    flops = kwargs.get("with_flops", False)
    averages = prof.key_averages(group_by_input_shape=by_shape)
    rows = [row(a, by_shape, memory, flops) for a in averages]
    if flops or name == "no_flops":
        with open(os.path.join(HERE, name + ".table.txt"), "w") as f:
            f.write(averages.table(sort_by="self_cpu_time_total", row_limit=-1) + "\n")
    doc = {
        "torch": torch.__version__,
        "profile_kwargs": kwargs,
        "group_by_input_shapes": by_shape,
        "rows": sorted(rows, key=lambda r: (r["name"], r.get("input_shapes", ""))),
    }
    with open(os.path.join(HERE, name + ".expected.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    torch.set_num_threads(1)
    for name, (kwargs, body, by_shape) in CASES.items():
        if len(sys.argv) > 1 and name not in sys.argv[1:]:
            continue
        write_case(name, kwargs, body, by_shape)
        print(name)


if __name__ == "__main__":
    main()
