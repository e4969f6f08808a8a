#!/usr/bin/env python3
"""The key-averages table of `gprof-train report --format json` on real torch.profiler traces
(tests/data/torch, written by make_torch_traces.py) equals PyTorch's own prof.key_averages() on
the same run, row for row: the same keys, counts, self CPU and CPU totals, and with profile_memory
CPU Mem and Self CPU Mem. No torch is needed here: the expected tables are committed.

Tolerance: PyTorch computes times as float microseconds (start_ns / 1000, then differences and
sums of floats); the trace holds the same starts and ends in whole nanoseconds, which the report
sums exactly and prints with three decimals. A time agrees when within 1e-6 us (PyTorch's float
error on these files is below 1e-10 us); counts and bytes are exact.
usage: torch_key_averages.py GPROF_TRAIN DATA_DIR"""
import json
import os
import subprocess
import sys


def report_rows(binary, trace, by_shape):
    cmd = [binary, "report", "--format", "json", "-n", "0", trace]
    if by_shape:
        cmd += ["--group-by", "name+shape"]
    doc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    (trace,) = doc["traces"]
    return {(r["name"], r.get("input_shapes", "")): r for r in trace["rows"] if not r["device"]}


def time_ok(got, want):
    return abs(got - want) <= 1e-6


def compare(want, got, memory):
    errors = []
    for key, w in want.items():
        g = got.get(key)
        if g is None:
            errors.append(f"{key}: missing")
            continue
        n = w["count"]
        if g["calls"] != n:
            errors.append(f"{key}: count {g['calls']} != {n}")
        for ours, theirs in (("self_cpu_us", "self_cpu_us"), ("cpu_total_us", "cpu_total_us")):
            if not time_ok(g[ours], w[theirs]):
                errors.append(f"{key}: {ours} {g[ours]} != {w[theirs]:.3f}")
        if memory:
            for ours in ("cpu_mem_bytes", "self_cpu_mem_bytes"):
                if g.get(ours) != w[ours]:
                    errors.append(f"{key}: {ours} {g.get(ours)} != {w[ours]}")
    errors += [f"{key}: not in PyTorch's table" for key in got if key not in want]
    return errors


def main():
    binary, data = sys.argv[1], sys.argv[2]
    failed = 0
    for name in sorted(f[:-len(".expected.json")] for f in os.listdir(data)
                       if f.endswith(".expected.json")):
        with open(os.path.join(data, name + ".expected.json")) as f:
            exp = json.load(f)
        by_shape = exp["group_by_input_shapes"]
        memory = exp["profile_kwargs"].get("profile_memory", False)
        want = {(r["name"], r.get("input_shapes", "")): r for r in exp["rows"]}
        got = report_rows(binary, os.path.join(data, name + ".json.gz"), by_shape)
        errors = compare(want, got, memory)
        print(f"{name}: {len(want)} rows, {'ok' if not errors else f'{len(errors)} differences'}")
        for e in errors:
            print("   ", e)
        failed += bool(errors)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
