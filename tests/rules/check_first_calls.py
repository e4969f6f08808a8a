#!/usr/bin/env python3
"""GT14 (step outliers) on first-time work against a recurring stall, on real torch.profiler
traces (tests/data/torch/first_calls/, made by make_first_call_traces.py there: a small MLP under
torch.compile(backend="aot_eager", dynamic=False) on the CPU, so each new batch size recompiles).

- shape_changes: batches of 64 but one of 40 (an epoch's last, partial batch) and one of 48: two
  steps slow once by the recompile (0.24-0.48 s against ~1.4 ms), no stall. GT14 must not warn
  (crit 96.1% before: two outliers, no period to test), its rows for exactly the two new-shape
  steps must say "first calls", its summary must name the first-time work with the new shape, and
  its advice must fit (warm up shapes, drop_last), not name checkpoints or GC.
- pause_and_shape: the same partial batch and a 30 ms sleep every 6th step. GT14 must still warn
  (or crit) on the sleeps, its measure leaving the recompile out (below the share of all the
  outliers), the recompile's row "first calls", the sleeps' rows not.

- with H100_TRACE (tests/data/h100/mlp_partial_batch.json.gz, README.md there): the bundled
  trainer on a real GPU, whose step 156 holds the epoch's last, partial batch and spends 14.5 ms
  of its 15.0 in cuBLAS's first call for that shape. GT14 must not warn (warn 10.3% before,
  advising checkpoints and GC) and must read ProfilerStep#156 as first calls.

usage: check_first_calls.py GPROF_TRAIN FIXTURE_DIR [H100_TRACE]
"""
import json
import os
import sys

from check_contention import all_findings

FIRST = "first calls"


def expected(d, name):
    """The profiled steps (ProfilerStep#2 on, after the schedule's wait and warm-up steps) whose
    batch is not the usual 64, and those that slept."""
    with open(os.path.join(d, name + ".steps.json")) as f:
        steps = json.load(f)["profiled"]
    new = {f"ProfilerStep#{i + 2}" for i, s in enumerate(steps) if s["batch"] != 64}
    slept = {f"ProfilerStep#{i + 2}" for i, s in enumerate(steps) if s["slept"]}
    return new, slept


def rows(f):
    return {r[0]: r[4] for r in f["evidence"]["rows"]}


def check_shape_changes(binary, d, bad):
    f = all_findings(binary, os.path.join(d, "shape_changes.json.gz"))["GT14"]
    new, _ = expected(d, "shape_changes")
    firsts = {s for s, grew in rows(f).items() if grew == FIRST}
    reco = f.get("recommendation") or ""
    print(f"shape_changes: GT14 {f['severity']}: {f['summary']}\n  fix: {reco}")
    if f["severity"] in ("warn", "crit"):
        bad.append(f"shape_changes: GT14 {f['severity']} on first-time work")
    if firsts != new:
        bad.append(f"shape_changes: first-call rows {sorted(firsts)}, new shapes {sorted(new)}")
    if "first-time work" not in f["summary"] or "Input Dims [[40, 64]" not in f["summary"]:
        bad.append("shape_changes: the summary does not name the first-time work and its shape")
    if "drop_last=True" not in reco or "warm up" not in reco or "checkpoint" in reco:
        bad.append(f"shape_changes: advice does not fit first-time work: {reco}")


def check_pause_and_shape(binary, d, bad):
    f = all_findings(binary, os.path.join(d, "pause_and_shape.json.gz"))["GT14"]
    new, slept = expected(d, "pause_and_shape")
    r = rows(f)
    firsts = {s for s, grew in r.items() if grew == FIRST}
    share = f["estimated_gain"]["share_of_step_pct"]  # every outlier's excess
    print(f"pause_and_shape: GT14 {f['severity']} {f['metric']['value']:.1f}% "
          f"(all outliers {share:.1f}%): {f['summary']}")
    if f["severity"] not in ("warn", "crit"):
        bad.append(f"pause_and_shape: GT14 {f['severity']} on a 30 ms sleep every 6th step")
    if firsts != new or not slept <= set(r) - firsts:
        bad.append(f"pause_and_shape: first-call rows {sorted(firsts)} (new shape "
                   f"{sorted(new)}), slept {sorted(slept)} among {sorted(r)}")
    if not f["metric"]["value"] < share - 10:
        bad.append(f"pause_and_shape: the measure {f['metric']['value']:.1f}% keeps the "
                   f"recompile in (all outliers {share:.1f}%)")


def check_h100(binary, trace, bad):
    f = all_findings(binary, trace)["GT14"]
    firsts = {s for s, grew in rows(f).items() if grew == FIRST}
    print(f"h100 partial batch: GT14 {f['severity']}: {f['summary']}")
    if f["severity"] in ("warn", "crit") or "ProfilerStep#156" not in firsts:
        bad.append(f"h100: GT14 {f['severity']}, first-call rows {sorted(firsts)}")


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    binary, d = sys.argv[1:3]
    bad = []
    check_shape_changes(binary, d, bad)
    check_pause_and_shape(binary, d, bad)
    if len(sys.argv) == 4:
        check_h100(binary, sys.argv[3], bad)
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
