#!/usr/bin/env python3
"""Independent check of the trace reader: for every trace in a folder, sum the durations of GPU
activities (kernels, memcpys, memsets) per name straight from the JSON with Python's json module,
and compare with the device rows of `gprof-train report --format csv -n 0`.
usage: kernel_totals.py GPROF_TRAIN TRACES_DIR   (exit 77 when the folder is absent)"""
import csv
import gzip
import io
import json
import os
import subprocess
import sys

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "mtia_ccp_events"}


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw.decode("utf-8"), strict=False)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def python_totals(path):
    totals = {}
    for e in load(path):
        if e.get("ph") != "X" or e.get("cat") not in GPU_CATS or "ts" not in e:
            continue
        name = e.get("name", "")
        us, n = totals.get(name, (0.0, 0))
        totals[name] = (us + max(float(e.get("dur", 0)), 0.0), n + 1)
    return totals


def report_totals(binary, path):
    out = subprocess.run([binary, "report", "--format", "csv", "-n", "0", path],
                         check=True, capture_output=True, text=True).stdout
    rows = {}
    for r in csv.DictReader(io.StringIO(out)):
        if r["device"] == "1":
            rows[r["name"]] = (float(r["device_total_us"]), int(r["calls"]))
    return rows


def main():
    binary, folder = sys.argv[1], sys.argv[2]
    if not os.path.isdir(folder):
        print(f"skip: {folder} is absent")
        return 77
    failed = 0
    for name in sorted(os.listdir(folder)):
        if not (name.endswith(".json") or name.endswith(".json.gz")):
            continue
        path = os.path.join(folder, name)
        want, got = python_totals(path), report_totals(binary, path)
        bad = [k for k in want if k not in got or got[k][1] != want[k][1]
               or abs(got[k][0] - want[k][0]) > 0.001 * want[k][1] + 1e-6]
        bad += [k for k in got if k not in want]
        print(f"{name}: {len(want)} GPU activity names, {sum(n for _, n in want.values())} events,"
              f" {'OK' if not bad else 'MISMATCH'}")
        for k in bad[:5]:
            print(f"  {k!r}: python {want.get(k)} report {got.get(k)}")
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
