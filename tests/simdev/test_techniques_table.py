#!/usr/bin/env python3
"""test_techniques_table.py: bench/bench_techniques.py's simulated-device table (issue 31 item 5)
on the smallest run (mlp, 2 steps): every technique the CUDA backend has gets a row labelled
simulated with its peak device memory and the simulator's modelled device time a step, --fused
lowers that time, and a build without the simulated device skips the table with a line, exit 0.
usage: test_techniques_table.py SCRIPT GPROF_TRAIN BUILD_DIR DATA_DIR"""
import os
import re
import subprocess
import sys
import tempfile

ROWS = ("bf16 autocast", "activation checkpointing", "zero_grad(set_to_none)",
        "fused bias+ReLU, step", "CUDA graphs (step replay)")
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def table(script, binary, sim, out, data):
    cmd = [sys.executable, script, binary, out, "--only", "sim", "--sim", sim, "--sim-steps", "2",
           "--data", data]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(p.stdout + p.stderr[-2000:])
    return p


def main():
    script, binary, build, data = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        p = table(script, binary, build, os.path.join(tmp, "sim"), data)
        check(p.returncode == 0, "the table exits 0 (got %d)" % p.returncode)
        lines = p.stdout.splitlines()
        for name in ROWS:
            row = [l for l in lines if l[10:].startswith(name)]
            check(len(row) == 1, "one row for %s" % name)
            if not row:
                continue
            check(row[0].startswith("simulated "), "%s: labelled simulated" % name)
            check(len(re.findall(r"\d+\.\d MiB", row[0])) >= 2, "%s: peak device memory" % name)
            m = re.search(r"model (\d+) -> (\d+) us/step device", row[0])
            check(m is not None, "%s: the modelled device time a step" % name)
            if m and name.startswith("fused"):
                check(int(m.group(2)) < int(m.group(1)), "--fused lowers the modelled time")
        check("channels-last" not in p.stdout, "no channels-last row for the mlp")
        empty = os.path.join(tmp, "no-sim")
        os.mkdir(empty)
        p = table(script, binary, empty, os.path.join(tmp, "skip"), data)
        check(p.returncode == 0 and "simulated device: skipped" in p.stdout,
              "a build without the simulated device: a line, exit 0")
    print("FAILED: %d" % len(FAILS) if FAILS else "ok")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
