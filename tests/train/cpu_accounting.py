#!/usr/bin/env python3
"""The trainer's CPU accounting in its trace's "gprof" header (issue 24 §2: GT19 and GT01 read
it): a CPU run with one loader thread on the IDX fixture records the training thread's CPU time
within its steps' wall time, its loader thread's CPU time, both threads' run-queue time
(Linux /proc/thread-self/schedstat), the other processes' CPU time and OpenBLAS's threads.

usage: cpu_accounting.py GPROF_TRAIN IDX_FIXTURE_DIR
"""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile


def header(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["gprof"]


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([binary, "run", "--device", "cpu", "--data", fixture, "--batch-size",
                              "16", "--steps", "20", "--workers", "1", "--no-report", "--out", tmp],
                             capture_output=True, text=True, check=False)
        if run.returncode != 0:
            print(run.stdout, run.stderr)
            return 1
        traces = glob.glob(os.path.join(tmp, "*", "*.pt.trace.json.gz"))
        if not traces:
            print("skipped: no trace (built without the profiler)")
            return 77
        g = header(traces[0])
    bad = []

    def check(name, ok):
        print(("ok   " if ok else "FAIL ") + name)
        if not ok:
            bad.append(name)

    keys = ("blas_threads", "step_wall_ns", "step_thread_cpu_ns", "loader_cpu_ns", "loop_wall_ns",
            "other_cpu_ns")
    for k in keys:
        check(f"{k} recorded", isinstance(g.get(k), int))
    if bad:
        return 1
    check("OpenBLAS threads >= 1", g["blas_threads"] >= 1)
    check("steps' wall time > 0", g["step_wall_ns"] > 0)
    check("training thread's CPU time within the steps' wall time",
          0 < g["step_thread_cpu_ns"] <= g["step_wall_ns"] * 1.02)
    check("the loader thread used CPU time", g["loader_cpu_ns"] > 0)
    check("the loop covers the steps", g["loop_wall_ns"] >= g["step_wall_ns"])
    check("other processes' CPU time >= 0", g["other_cpu_ns"] >= 0)
    if os.path.exists("/proc/thread-self/schedstat"):
        for k in ("train_runq_ns", "loader_runq_ns"):
            check(f"{k} recorded, >= 0", isinstance(g.get(k), int) and g[k] >= 0)
        check("run-queue time within the loop",
              g.get("train_runq_ns", 0) <= g["loop_wall_ns"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
