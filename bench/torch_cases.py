#!/usr/bin/env python3
"""One PyTorch case of the accuracy suite (bench/accuracy_torch.py), run with a python that has
torch: the models of tests/data/torch/make_verdict_traces.py (an LSTMCell loop, an MLP whose loss
is a Python loop over the samples, MLPs with Adam) trained on the CPU with one thread, a profiled
window exported as a Chrome trace, and what the same process measured without the profiler, as
JSON on stdout:
  step_ms       the median step (the thread's CPU time, as make_verdict_traces.py times it)
  opt_share_pct the optimizer's median share of a step (Optimizer.step + zero_grad)
  fix_gain_pct  for GT18's families (lstm_bN, lossloop_bN): GT18's fix timed, the loop against
                the same arithmetic in few ops (make_verdict_traces.fix_gain_of: interleaved
                windows, the thread's CPU time), GT18's measured gain. lstm_bN: an LSTMCell
                loop against one nn.LSTM and one elementwise pass over the sequence;
                lossloop_bN: an MLP whose smooth-L1 loss is a Python loop over the samples
                against the same loss as one pass over the batch
  per_op_pct    for the LSTM cases: the batch-independent part of the step, from a batch-size
                sweep (the line through the step times at batches 4-1024, at batch 0, over
                the line's value at this case's batch): what all per-operator overhead costs,
                an upper bound on the fix's gain (nn.LSTM still runs some ops)

usage: torch_cases.py [--trace-only] [--no-sweep] NAME TRACE
  NAME: lstm_bN, lossloop_bN (any batch N), opt_low, opt_near, opt_high, opt_foreach, mlp_big
--trace-only: the trace and step_ms/opt_share_pct, not GT18's fix or the batch sweep
(accuracy_contention.sh's cases under load judge the verdicts only); --no-sweep: not the sweep
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "data", "torch"))
import make_verdict_traces as mv  # noqa: E402
import torch  # noqa: E402


def mlp_big():
    """SGD on a wide MLP at batch 256: large GEMMs, few ops, a small optimizer share."""
    m = mv.mlp(1024, 2, n_in=784)
    return mv.Case(m, torch.optim.SGD(m.parameters(), lr=0.01), torch.randn(256, 784),
                   torch.randint(0, 10, (256,)))


def family(name):
    """'lstm_bN' or 'lossloop_bN': (the loop's builder, its fix's builder, the batch)."""
    fam, _, b = name.rpartition("_b")
    if fam == "lstm" and b.isdigit():
        return mv.lstm, mv.lstm_fixed, int(b)
    if fam == "lossloop" and b.isdigit():
        return mv.lossloop, mv.lossloop_fixed, int(b)
    return None


BUILDERS = {
    "opt_low": (mv.opt_low, 12),
    "opt_near": (mv.opt_near, 12),
    "opt_high": (mv.opt_high, 12),
    "opt_foreach": (mv.opt_foreach, 12),
    "mlp_big": (mlp_big, 12),
}


SWEEP = (4, 64, 256, 1024)  # wide: at 4-64 the batch's own time is within the noise


def per_op_pct(batch):
    """The sweep's intercept (the least-squares line through the median step times at SWEEP's
    batches, at batch 0) as a share of the line's step time at `batch`."""
    sweep = {}
    for b in SWEEP:
        c = mv.lstm(b)
        mv.timed(c, 5)
        sweep[b] = 1e3 * statistics.median(mv.timed(c, 30)[0])
    xs, ys = list(sweep), list(sweep.values())
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    at0 = max(0.0, my - slope * mx)
    return 100.0 * at0 / (at0 + max(0.0, slope) * batch), sweep


def main():
    args = sys.argv[1:]
    trace_only, no_sweep = "--trace-only" in args, "--no-sweep" in args
    name, trace = [a for a in args if not a.startswith("--")]
    torch.set_num_threads(1)
    torch.manual_seed(0)
    fam = family(name)
    build, active = (lambda: fam[0](fam[2]), 8) if fam else BUILDERS[name]
    case = build()
    mv.timed(case, 5)  # warm-up: the allocator, Adam's state
    before = mv.timed(case, 20)
    # run as SCHED_FIFO (accuracy_torch.py), a thread that ran 0.95 s of a second is stopped
    # for the rest of it (the kernel's real-time budget): a whole second asleep, then a profiled
    # window shorter than that, so no step waits for the budget
    time.sleep(1.0)
    mv.profiled(case, active, trace)
    after = mv.timed(case, 20)
    out = mv.summary(before[0] + after[0], before[1] + after[1])
    if fam and not trace_only:
        out.update(mv.fix_gain_of(fam[0](fam[2]), fam[1](fam[2])))
    if fam and fam[0] is mv.lstm and not trace_only and not no_sweep:
        out["per_op_pct"], out["sweep_ms"] = per_op_pct(case.batch)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
