#!/usr/bin/env python3
"""GT17's and GT18's verdicts, and the profiler's cost, held to what was measured without the
profiler on the same runs (issue 24 §2). The traces and the measurements beside them are in
tests/data/torch/verdicts, written by make_verdict_traces.py; no torch is needed here. The right
verdict is decided from the measured numbers, not written down per file:

GT17 (from the optimizer's measured share m of the step, thread CPU time, median over steps):
  - fewer than 5 analysed steps: never warn or crit; when it fires, info with "profile N more
    steps" (N to reach 5);
  - m < 20%: does not fire; m < 40%: never crit; m >= 45%: warn or crit;
  - when it fires at warn or crit, its "without the profiler" range holds m (5 points' slack);
  - where the trace shows aten::_foreach_* inside the optimizer, it never advises foreach=True.
GT18 (from the LSTM cases' batch sweep: step time t(b) = fixed + per-sample x b, fitted):
  - where the fixed part is >= 90% of the step at the case's batch, it fires;
  - where it fires, its gain without the profiler is at most the fixed share (10 points'
    slack), what a run without any per-op cost would save, and at least half of it: the fix
    (one nn.LSTM) keeps some ops, so the sweep bounds the gain from above; torch_gains.py holds
    the gain to the fix itself, timed.
The profiler's cost: where the measured cost (profiled minus unprofiled step, interleaved
windows) is at least 15% of the step, the estimate per step is within a factor 2 of it (the
gaps alone said 2.7-6.5x too little).
usage: torch_verdicts.py GPROF_TRAIN VERDICTS_DIR"""
import gzip
import json
import os
import subprocess
import sys

MIN_STEPS = 5


def diagnose(binary, trace):
    out = subprocess.run([binary, "diagnose", "--format", "json", "--rule", "GT17", "--rule",
                          "GT18", trace], capture_output=True, text=True).stdout
    (doc,) = json.loads(out)["traces"]
    return doc, {f["id"]: f for f in doc["findings"]}


def shows_foreach(trace):
    with gzip.open(trace, "rt") as f:
        return any(e.get("name", "").startswith("aten::_foreach_")
                   for e in json.load(f)["traceEvents"])


def check_gt17(doc, f, measured, foreach):
    m, n, sev = measured["unprofiled"]["opt_share_pct"], doc["steps_analysed"], f["severity"]
    errors = []
    if n < MIN_STEPS:
        if sev in ("warn", "crit"):
            errors.append(f"{n} steps analysed, GT17 {sev}")
        if sev == "info" and f"profile {MIN_STEPS - n} more steps" not in f["recommendation"]:
            errors.append(f"info without 'profile {MIN_STEPS - n} more steps'")
        return errors
    if m < 20 and f["fired"]:
        errors.append(f"optimizer {m:.1f}% measured, GT17 {sev}")
    if m < 40 and sev == "crit":
        errors.append(f"optimizer {m:.1f}% measured, GT17 crit")
    if m >= 45 and sev not in ("warn", "crit"):
        errors.append(f"optimizer {m:.1f}% measured, GT17 {sev}")
    if sev in ("warn", "crit"):
        w = f["estimated_gain"]["without_profiler"]
        if not w["low_pct"] - 5 <= m <= w["high_pct"] + 5:
            errors.append(f"optimizer {m:.1f}% measured, outside {w['low_pct']:.1f}-"
                          f"{w['high_pct']:.1f}% without the profiler")
    if foreach and "foreach=True" in (f.get("recommendation") or "") + (f.get("knob") or ""):
        errors.append("advises foreach=True to a trace with aten::_foreach_* ops")
    return errors


def fixed_share(sweep, batch):
    """Least squares t(b) = a + k b over the sweep: the batch-independent share at `batch`."""
    pts = [(int(b), t) for b, t in sweep.items()]
    mb = sum(b for b, _ in pts) / len(pts)
    mt = sum(t for _, t in pts) / len(pts)
    k = sum((b - mb) * (t - mt) for b, t in pts) / sum((b - mb) ** 2 for b, _ in pts)
    a = mt - k * mb
    return 100 * a / (a + k * batch)


def check_gt18(f, measured, batch):
    fixed = fixed_share(measured["batch_sweep_step_ms"], batch)
    errors = []
    if fixed >= 90 and not f["fired"]:
        errors.append(f"the sweep's fixed part is {fixed:.0f}% of the step, GT18 {f['severity']}")
    if f["fired"]:
        w = f["estimated_gain"]["without_profiler"]
        if not fixed / 2 <= w["low_pct"] <= w["high_pct"] <= fixed + 10:
            errors.append(f"GT18 predicts {w['low_pct']:.0f}-{w['high_pct']:.0f}%, the sweep's "
                          f"fixed part is {fixed:.0f}%")
        print(f"   GT18 {f['severity']}: predicts {w['low_pct']:.0f}-{w['high_pct']:.0f}% "
              f"without the profiler; the sweep's batch-independent part {fixed:.0f}%")
    return errors


def check_cost(doc, measured):
    m = measured["profiler_cost"]
    without, cost = m["step_without_ms"], m["cost_ms"]
    est = doc["profiler_cost"]["per_step_us"] / 1e3
    print(f"   profiler: measured {cost:.2f} ms a step, estimated {est:.2f} ms")
    if cost < 0.15 * without:
        return []
    if not cost / 2 <= est <= cost * 2:
        return [f"profiler cost estimated {est:.2f} ms a step, measured {cost:.2f} ms"]
    return []


def main():
    binary, data = sys.argv[1:3]
    failed = 0
    for name in sorted(f[:-len(".measured.json")] for f in os.listdir(data)
                       if f.endswith(".measured.json")):
        with open(os.path.join(data, name + ".measured.json")) as f:
            measured = json.load(f)
        trace = os.path.join(data, name + ".json.gz")
        doc, found = diagnose(binary, trace)
        print(f"{name}: GT17 {found['GT17']['severity']}, GT18 {found['GT18']['severity']}")
        errors = check_gt17(doc, found["GT17"], measured, shows_foreach(trace))
        if "batch_sweep_step_ms" in measured:
            errors += check_gt18(found["GT18"], measured, measured["batch"])
        errors += check_cost(doc, measured)
        for e in errors:
            print(f"FAIL {name}: {e}")
        failed += bool(errors)
    print(f"{failed} of the cases failed" if failed else "ok: every verdict agrees with the "
          "measurements")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
