#!/usr/bin/env python3
"""`report`'s key averages against PyTorch's own, on real GPU traces (tests/data/h200/: each
<case>_keyavg.json is key_averages() of the profiler that wrote <case>_fault.json.gz, in the same
process on an H200). Every row of torch's must have a row of ours with the same name that matches
it on calls, CPU total, self CPU, device total and self device (0.5 us or 0.1%), with none left
out: the second row torch keeps for an annotation of a CUDA run (ProfilerStep*, Optimizer.step#...:
its GPU-side copy, CPU time 0, device time its span; report listed none until 2026-11-26), and,
in fp32_fault, CUPTI's overhead events ("Command Buffer Full": the launch queue was full) and the
calls and operators they sit in (cudaLaunchKernel, aten::addmm, aten::linear, ProfilerStep*):
torch puts those events in the op tree of the thread that stops the profiler and gives them the
GPU work of the op they start in (report left them out until 2026-11-27).

usage: check_h200_keyavg.py GPROF_TRAIN FIXTURE_DIR"""
import glob
import json
import os
import subprocess
import sys

FIELDS = (("count", "calls"), ("cpu_time_total", "cpu_total_us"),
          ("self_cpu_time_total", "self_cpu_us"), ("device_time_total", "device_total_us"),
          ("self_device_time_total", "self_device_us"))


def same(t, o):
    return all(abs(t[tk] - o[ok]) <= max(0.5, 1e-3 * abs(t[tk])) for tk, ok in FIELDS)


def ours(binary, trace):
    p = subprocess.run([binary, "report", "-f", "json", "-n", "0", trace], capture_output=True,
                       text=True, timeout=120)
    rows = {}
    for r in json.loads(p.stdout)["traces"][0]["rows"]:
        rows.setdefault(r["name"], []).append(r)
    return rows


def main():
    binary, d = sys.argv[1], sys.argv[2]
    bad, n = [], 0
    for ref in sorted(glob.glob(os.path.join(d, "*_keyavg.json"))):
        case = os.path.basename(ref)[:-len("_keyavg.json")]
        got = ours(binary, os.path.join(d, case + "_fault.json.gz"))
        with open(ref) as fh:
            rows = json.load(fh)
        for t in rows:
            n += 1
            mine = got.get(t["key"], [])
            if not any(same(t, o) for o in mine):
                bad.append(f"{case}: {t['key']}: torch {[t[tk] for tk, _ in FIELDS]}, ours "
                           f"{[[o[ok] for _, ok in FIELDS] for o in mine]}")
    print(f"{n} rows compared, {len(bad)} differ")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
