#!/usr/bin/env python3
"""The key-averages table of `gprof-train report --format json` on real torch.profiler traces
(tests/data/torch, written by make_torch_traces.py) equals PyTorch's own prof.key_averages() on
the same run, row for row: the same keys, counts, self CPU and CPU totals, and with profile_memory
CPU Mem and Self CPU Mem. No torch is needed here: the expected tables are committed.

Tolerance: PyTorch computes times as float microseconds (start_ns / 1000, then differences and
sums of floats); the trace holds the same starts and ends in whole nanoseconds, which the report
sums exactly and prints with three decimals. A time agrees when within 1e-6 us (PyTorch's float
error on these files is below 1e-10 us); counts and bytes are exact.

The text table's cells as PyTorch's table prints them: "CPU time avg" is cpu_total / count
divided in floating point and rounded to 3 decimals (not the nanoseconds divided as integers),
equal to PyTorch's unless its float total puts the exact value within 1e-6 us of a rounding tie
(then either neighbour); "Input Shapes" is str(input_shapes) cut at the column's width (80 at
most), without "...". With with_flops, each row's FLOPs (the total over its calls) equal
FunctionEventAvg.flops, and the "Total FLOPs" column is the one PyTorch's own table of the run
prints (NAME.table.txt): there exactly when PyTorch's is, in its unit, the same cells.
usage: torch_key_averages.py GPROF_TRAIN DATA_DIR"""
import json
import math
import os
import re
import subprocess
import sys


def report_rows(binary, trace, by_shape):
    cmd = [binary, "report", "--format", "json", "-n", "0", trace]
    if by_shape:
        cmd += ["--group-by", "name+shape"]
    doc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    (trace,) = doc["traces"]
    return trace["rows"]


def table(binary, trace, by_shape):
    """The text table's cells: a dict per row, by header, in the table's order."""
    cmd = [binary, "report", "-n", "0", trace] + (["--group-by", "name+shape"] if by_shape else [])
    return parse_table(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def parse_table(text):
    """A table as PyTorch's _build_table lays it out: a dict of cells per row, by header."""
    lines = text.split("\n")
    seps = [i for i, ln in enumerate(lines) if ln.startswith("---")]
    spans = [(m.start(), m.end()) for m in re.finditer("-+", lines[seps[0]])]
    head = [lines[seps[0] + 1][a:b].strip() for a, b in spans]
    return [dict(zip(head, (ln[a:b] for a, b in spans))) for ln in lines[seps[1] + 1:seps[2]]]


def fmt_us(us):
    return f"{us / 1e6:.3f}s" if us >= 1e6 else f"{us / 1e3:.3f}ms" if us >= 1e3 else f"{us:.3f}us"


def cells_ok(want, rows, cells):
    """rows: the JSON rows in the table's order; cells: the table's."""
    errors = []
    for r, c in zip(rows, cells):
        w = want.get((r["name"], r.get("input_shapes", "")))
        if w is None or r["device"]:
            continue
        avg = w["cpu_total_us"] / w["count"]
        frac = avg * 1000 - math.floor(avg * 1000)
        ok = {fmt_us(avg)} if abs(frac - 0.5) > 1e-6 else {fmt_us(avg - 1e-5), fmt_us(avg + 1e-5)}
        if c["CPU time avg"].strip() not in ok:
            errors.append(f"{r['name']}: CPU time avg {c['CPU time avg'].strip()} not {ok}")
        if "Input Shapes" in c:
            shapes = r["input_shapes"][:80]
            if c["Input Shapes"].strip() != shapes.strip() or "..." in c["Input Shapes"]:
                errors.append(f"{r['name']}: Input Shapes {c['Input Shapes']!r} not {shapes!r}")
    return errors


def flops_cells(cells):
    """The FLOPs column's header and its cells by row (name, shapes), sorted."""
    heads = [h for h in (cells[0] if cells else {}) if h.startswith("Total ") and "FLOPs" in h]
    if not heads:
        return None, []
    return heads[0], sorted((c["Name"].strip(), c.get("Input Shapes", "").strip(),
                             c[heads[0]].strip()) for c in cells)


def flops_table_ok(path, cells):
    """The FLOPs column as PyTorch's own table of the run prints it (NAME.table.txt): there
    exactly when PyTorch's is, the same unit, and row for row the same cells."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        theirs = flops_cells(parse_table(f.read()))
    ours = flops_cells(cells)
    if ours[0] != theirs[0]:
        return [f"FLOPs column {ours[0]!r}, PyTorch's {theirs[0]!r}"]
    return [f"FLOPs cells {o} != PyTorch's {t}" for o, t in zip(ours[1], theirs[1]) if o != t]


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
        if "flops" in w and g.get("flops") != w["flops"]:
            errors.append(f"{key}: flops {g.get('flops')} != {w['flops']}")
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
        path = os.path.join(data, name + ".json.gz")
        rows = report_rows(binary, path, by_shape)
        got = {(r["name"], r.get("input_shapes", "")): r for r in rows if not r["device"]}
        cells = table(binary, path, by_shape)
        errors = compare(want, got, memory) + cells_ok(want, rows, cells)
        errors += flops_table_ok(os.path.join(data, name + ".table.txt"), cells)
        print(f"{name}: {len(want)} rows, {'ok' if not errors else f'{len(errors)} differences'}")
        for e in errors:
            print("   ", e)
        failed += bool(errors)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
