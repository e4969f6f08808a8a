#!/usr/bin/env python3
"""Real torch.profiler traces for GT17 and GT18, each beside what was measured on the same run
without the profiler (issue 24 §2), so a test can hold the rules' verdicts to measured truth.

For each case NAME this writes verdicts/NAME.json.gz (prof.export_chrome_trace(), CPU only) and
verdicts/NAME.measured.json: the median step time and optimizer share over steps timed without
the profiler (the thread's CPU time around the step and around step + zero_grad), before and
after the profiled window in the same process, the profiled steps' own times, the profiler's
cost a step (profiled minus unprofiled windows, interleaved), and for the LSTM cases the step
time over a batch-size sweep. Nothing in the .measured.json is a verdict: the test decides what
a right verdict is from these numbers.

    chrt -f 10 python3 tests/data/torch/make_verdict_traces.py [NAME...]   # with torch

Run it as SCHED_FIFO (chrt, as root) on a shared machine: other processes then cannot take the
core in the middle of a step, and the trace's wall-clock times are the program's own (on this
2-core VM under other engineers' builds, plain runs had steps 2-3x their CPU time).
"""
import gzip
import json
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verdicts")
TIMED = 40  # unprofiled steps timed before and after the profiled window
# The main thread's CPU time, not wall time: on this 2-core machine other processes take the
# cores for milliseconds at a time, which wall time would count as the step's. With one thread
# (torch.set_num_threads(1)) the step's work, the optimizer's and the profiler's all run on it.
CLOCK = time.thread_time


def mlp(width, depth, n_in=64, n_out=10):
    layers, d = [], n_in
    for _ in range(depth):
        layers += [torch.nn.Linear(d, width), torch.nn.ReLU()]
        d = width
    return torch.nn.Sequential(*layers, torch.nn.Linear(d, n_out))


class Case:
    """A model, its optimizer and a batch; step() is one training step, timed in parts."""

    def __init__(self, model, opt, x, y, loss=torch.nn.functional.cross_entropy, stall=None):
        self.model, self.opt, self.x, self.y, self.loss = model, opt, x, y, loss
        self.stall = stall  # (step index, seconds): one pause inside Optimizer.step, on purpose
        self.n = 0
        if stall:
            opt.register_step_post_hook(self._pause)

    def _pause(self, *_):
        if self.stall and self.n == self.stall[0]:
            time.sleep(self.stall[1])

    def step(self):
        t0 = CLOCK()
        out = self.model(self.x)
        self.loss(out, self.y).backward()
        t1 = CLOCK()
        self.opt.step()
        self.opt.zero_grad()
        t2 = CLOCK()
        self.n += 1
        return t2 - t0, t2 - t1


def opt_low():
    """Adam on a mid-size MLP at batch 1024: the optimizer is a small part, about 10% (GT17 must
    not fire)."""
    m = mlp(256, 2, n_in=256)
    return Case(m, torch.optim.Adam(m.parameters(), foreach=False),
                torch.randn(1024, 256), torch.randint(0, 10, (1024,)))


def opt_low_stall():
    """opt_low with one 25 ms pause inside Optimizer.step on the second profiled step: that step's
    optimizer share is then most of it, the others' are small."""
    c = opt_low()
    c.stall = (5 + TIMED + 3, 0.025)  # the 2nd active step: diagnose drops the 1st as warm-up
    c.opt.register_step_post_hook(c._pause)
    return c


def opt_near():
    """Per-parameter Adam on a deeper MLP at batch 96: the optimizer near GT17's 30%."""
    m = mlp(256, 4, n_in=256)
    return Case(m, torch.optim.Adam(m.parameters(), foreach=False),
                torch.randn(96, 256), torch.randint(0, 10, (96,)))


def opt_high():
    """Many parameter tensors, per-parameter Adam, batch 2: the optimizer is most of the step."""
    m = mlp(128, 16, n_in=128)
    return Case(m, torch.optim.Adam(m.parameters(), foreach=False),
                torch.randn(2, 128), torch.randint(0, 10, (2,)))


def opt_foreach():
    """opt_high's model with the multi-tensor Adam (foreach=True): aten::_foreach_* in the
    trace, and still a large optimizer share."""
    m = mlp(128, 16, n_in=128)
    return Case(m, torch.optim.Adam(m.parameters(), foreach=True),
                torch.randn(2, 128), torch.randint(0, 10, (2,)))


class LstmNet(torch.nn.Module):
    """An LSTMCell unrolled over T steps, then an elementwise-heavy layer: thousands of small
    operators per step whose cost is per call, not per sample."""

    def __init__(self, t=10, n_in=16, hidden=32):
        super().__init__()
        self.t, self.hidden = t, hidden
        self.cell = torch.nn.LSTMCell(n_in, hidden)
        self.scale = torch.nn.Parameter(torch.ones(hidden))
        self.shift = torch.nn.Parameter(torch.zeros(hidden))
        self.head = torch.nn.Linear(hidden, 10)

    def forward(self, x):
        h = c = x.new_zeros(x.shape[1], self.hidden)
        for i in range(self.t):
            h, c = self.cell(x[i], (h, c))
            for _ in range(3):  # elementwise-heavy: a gated, rescaled residual per time step
                h = h + torch.tanh(h * self.scale + self.shift) * torch.sigmoid(h)
        return self.head(h)


class LstmSeqNet(torch.nn.Module):
    """GT18's fix for LstmNet: the cell loop as one nn.LSTM over the sequence and the
    elementwise layer over the whole sequence at once (the same arithmetic, in few ops)."""

    def __init__(self, ref):
        super().__init__()
        self.lstm = torch.nn.LSTM(ref.cell.input_size, ref.hidden)
        self.scale, self.shift, self.head = ref.scale, ref.shift, ref.head

    def forward(self, x):
        h, _ = self.lstm(x)
        for _ in range(3):
            h = h + torch.tanh(h * self.scale + self.shift) * torch.sigmoid(h)
        return self.head(h[-1])


def lstm_fixed(batch):
    c = lstm(batch)
    m = LstmSeqNet(c.model)
    return Case(m, torch.optim.SGD(m.parameters(), lr=0.01), c.x, c.y)


def fix_gain(batch, rounds=8, steps=8):
    """GT18's fix timed: the LSTMCell loop against LstmSeqNet at `batch`, without the profiler,
    in interleaved windows (the thread's CPU time a step; medians over all the windows)."""
    return fix_gain_of(lstm(batch), lstm_fixed(batch), rounds, steps)


def fix_gain_of(loop, fixed, rounds=8, steps=8):
    """A fix timed: case `loop` against case `fixed` (the same arithmetic in fewer ops) without
    the profiler, in interleaved windows; medians of the thread's CPU time a step, and each
    round's gain (its two windows side by side: a pair, for the gain's interval)."""
    timed(loop, 5), timed(fixed, 5)
    a, b, rounds_pct = [], [], []
    for _ in range(rounds):
        ra, rb = timed(loop, steps)[0], timed(fixed, steps)[0]
        a, b = a + ra, b + rb
        rounds_pct.append(100 * (1 - statistics.median(rb) / statistics.median(ra)))
    ma, mb = statistics.median(a), statistics.median(b)
    return {"loop_ms": 1e3 * ma, "fixed_ms": 1e3 * mb, "fix_gain_pct": 100 * (ma - mb) / ma,
            "round_gains_pct": rounds_pct}


def lstm(batch):
    torch.manual_seed(0)
    m = LstmNet()
    c = Case(m, torch.optim.SGD(m.parameters(), lr=0.01),
             torch.randn(m.t, batch, 16), torch.randint(0, 10, (batch,)))
    c.batch = batch
    return c


def huber_loop(out, y):
    """A smooth-L1 loss written as a Python loop over the samples: a dozen tiny ops a sample
    (indexing, elementwise, a mean), each on one sample's few numbers, and as many in backward."""
    total = out.new_zeros(())
    for i in range(out.shape[0]):
        d = out[i] - y[i]
        a = d.abs()
        total = total + torch.where(a < 1, 0.5 * d * d, a - 0.5).mean()
    return total / out.shape[0]


def huber_batched(out, y):
    """huber_loop's fix: the same arithmetic as one pass over the batch."""
    d = out - y
    a = d.abs()
    return torch.where(a < 1, 0.5 * d * d, a - 0.5).mean(1).sum() / out.shape[0]


def lossloop(batch, loss=huber_loop):
    """GT18's second family: an MLP (64-256-256-32) with SGD whose loss is huber_loop; the tiny
    ops grow in number with the batch, not in size (the LSTM loop's grow in size)."""
    torch.manual_seed(0)
    m = mlp(256, 2, n_in=64, n_out=32)
    c = Case(m, torch.optim.SGD(m.parameters(), lr=0.01), torch.randn(batch, 64),
                torch.randn(batch, 32), loss=loss)
    c.batch = batch
    return c


def lossloop_fixed(batch):
    return lossloop(batch, huber_batched)


CASES = {  # name: (builder, active profiled steps)
    "opt_low": (opt_low, 12),
    "opt_low_2steps": (opt_low_stall, 3),  # 2 analysed steps, the first with a stall
    "opt_low_stall": (opt_low_stall, 12),
    "opt_near": (opt_near, 12),
    "opt_high": (opt_high, 8),
    "opt_foreach": (opt_foreach, 8),
    "lstm_b4": (lambda: lstm(4), 5),
    "lstm_b64": (lambda: lstm(64), 5),
}
SWEEP = (4, 16, 64)


def timed(case, n):
    steps, opts = [], []
    for _ in range(n):
        s, o = case.step()
        steps.append(s), opts.append(o)
        time.sleep(0.002)  # run as SCHED_FIFO (below), stay clear of its 95% throttle
    return steps, opts


def summary(steps, opts):
    return {"step_ms": 1e3 * statistics.median(steps),
            "opt_share_pct": 100 * statistics.median(o / s for o, s in zip(opts, steps)),
            "opt_share_of_sum_pct": 100 * sum(opts) / sum(steps)}


def profiled(case, active, raw=None, **kwargs):
    sched = schedule(wait=1, warmup=1, active=active)
    times = []
    time.sleep(0.05)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched,
                 on_trace_ready=lambda p: raw and p.export_chrome_trace(raw), **kwargs) as prof:
        for _ in range(2 + active):
            times.append(case.step())
            prof.step()
    return times[2:]


def sweep(seconds=1.0):
    out = {}
    for b in SWEEP:
        c = lstm(b)
        timed(c, 5)
        steps, _ = timed(c, max(10, int(seconds / max(1e-4, statistics.median(timed(c, 5)[0])))))
        out[str(b)] = 1e3 * statistics.median(steps)
    return out


def profiler_cost(case, active, rounds=8, **kwargs):
    """The profiler's cost a step: profiled minus unprofiled windows, interleaved; the median of
    the rounds' differences (each of medians), so slow drift of the machine cancels."""
    without, with_, diff = [], [], []
    for _ in range(rounds):
        w0 = timed(case, active)[0]
        w1 = [s for s, _ in profiled(case, active, **kwargs)]
        without += w0
        with_ += w1
        diff.append(statistics.median(w1) - statistics.median(w0))
    return {"rounds": rounds, "steps": active, "step_without_ms": 1e3 * statistics.median(without),
            "step_with_ms": 1e3 * statistics.median(with_),
            "cost_ms": 1e3 * statistics.median(diff)}


def write_case(name, build, active):
    torch.manual_seed(0)
    case = build()
    timed(case, 5)  # warm-up: the allocator, Adam's state
    before = timed(case, TIMED)
    raw = os.path.join(HERE, name + ".json")
    prof = profiled(case, active, raw)
    after = timed(case, TIMED)
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    os.remove(raw)
    doc = {"torch": torch.__version__, "threads": torch.get_num_threads(),
           "batch": getattr(case, "batch", len(case.x)),
           "schedule": {"wait": 1, "warmup": 1, "active": active},
           "unprofiled": summary(*map(lambda a, b: a + b, before, after)),
           "unprofiled_before": summary(*before), "unprofiled_after": summary(*after),
           "profiled": summary([s for s, _ in prof], [o for _, o in prof]),
           "profiler_cost": profiler_cost(case, active)}
    if name.startswith("lstm"):
        doc["batch_sweep_step_ms"] = sweep()
    with open(os.path.join(HERE, name + ".measured.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    torch.set_num_threads(1)
    os.makedirs(HERE, exist_ok=True)
    for name, (build, active) in CASES.items():
        if len(sys.argv) > 1 and name not in sys.argv[1:]:
            continue
        write_case(name, build, active)
        print(name)


if __name__ == "__main__":
    main()
