#!/usr/bin/env python3
"""GT04 and GT06 against what their fixes gained on a real GPU (tests/data/h100/: PyTorch loops on
an H100, two runs of bench/gpu_torch_cases.py; README.md there). A fix that stops the host from
stalling cannot make a step shorter than the GPU's work in it:
- pageable_fault: a 27 MiB batch copied from pageable memory each step. GT06 priced the host's
  3.7 ms blocked in the copy (62-70% of the step), but the GPU ran the step's kernels in that
  time too: pinned copies gained 36% and 44%. GT06's range without the profiler must hold the
  measured gain within 25% of it.
- sync_fix: host work each step, the loss read every 50 steps; the GPU busy 2.7 ms of a 2.8-3.0
  ms step. Captured as one CUDA graph it gained -3% and 5%, where GT04 said crit (15% and 37% of
  the profiled step): GT04 must not warn.
- pause_fix: a bf16 MLP at batch 1024 whose graph gained 41% and 58%: GT04 must still fire.

usage: check_h100.py GPROF_TRAIN FIXTURE_DIR   (FIXTURE_DIR holds run1/, run2/)
"""
import json
import os
import sys

from check_contention import all_findings as findings


def unprofiled_range(f):
    w = (f.get("estimated_gain") or {}).get("without_profiler") or {}
    return w.get("low_pct"), w.get("high_pct")


def loud(f):
    return f["severity"] in ("warn", "crit")


def check_run(binary, d, bad):
    with open(os.path.join(d, "measured.json")) as fh:
        m = json.load(fh)
    name = os.path.basename(d)
    gt06 = findings(binary, os.path.join(d, "pageable_fault.json.gz"))["GT06"]
    lo, hi = unprofiled_range(gt06)
    meas = m["pageable"]["gain_pct"]
    print(f"{name} pageable: GT06 {gt06['severity']} {lo}-{hi}% (measured {meas:.1f}%)")
    if lo is None or not lo - 0.25 * meas <= meas <= hi + 0.25 * meas:
        bad.append(f"{name} pageable: GT06 {lo}-{hi}%, pinned copies gained {meas:.1f}%")
    for case, want in (("sync", False), ("pause", True)):
        f = findings(binary, os.path.join(d, f"{case}_fix.json.gz"))["GT04"]
        graph = m[case]["graph"]["gain_pct"]
        print(f"{name} {case}_fix: GT04 {f['severity']} (graph gained {graph:.1f}%)")
        if loud(f) != want:
            bad.append(f"{name} {case}_fix: GT04 {f['severity']}, a CUDA graph gained "
                       f"{graph:.1f}%")


def main():
    binary, d = sys.argv[1], sys.argv[2]
    bad = []
    for run in sorted(os.listdir(d)):
        if os.path.isdir(os.path.join(d, run)):
            check_run(binary, os.path.join(d, run), bad)
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
