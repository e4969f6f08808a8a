#!/usr/bin/env python3
"""`report`'s key averages against PyTorch's own, on real GPU traces (tests/data/h200/: each
<case>_keyavg.json is key_averages() of the profiler that wrote <case>_fault.json.gz, in the same
process on an H200). Every row must match on calls, CPU total, self CPU, device total and self
device (0.5 us or 0.1%), except the rows listed in KNOWN, which torch's in-memory table computes
from what the exported trace does not hold the same way (the step and optimizer annotations of a
CUDA run: their CPU total is 0 there, their device time the GPU-side annotation's; CUPTI's
overhead events such as "Command Buffer Full", and the launch calls and operators they sit in).

usage: check_h200_keyavg.py GPROF_TRAIN FIXTURE_DIR"""
import glob
import json
import os
import subprocess
import sys

KNOWN = ("ProfilerStep*", "Optimizer.step#")
# in a trace with CUPTI's "Command Buffer Full" events (fp32: the launch queue filled up)
KNOWN_QUEUE_FULL = KNOWN + ("Command Buffer Full", "cudaLaunchKernel", "aten::linear",
                            "aten::addmm")
FIELDS = (("count", "calls"), ("cpu_time_total", "cpu_total_us"),
          ("self_cpu_time_total", "self_cpu_us"), ("device_time_total", "device_total_us"),
          ("self_device_time_total", "self_device_us"))


def ours(binary, trace):
    p = subprocess.run([binary, "report", "-f", "json", "-n", "0", trace], capture_output=True,
                       text=True, timeout=120)
    return {r["name"]: r for r in json.loads(p.stdout)["traces"][0]["rows"]}


def main():
    binary, d = sys.argv[1], sys.argv[2]
    bad, n = [], 0
    for ref in sorted(glob.glob(os.path.join(d, "*_keyavg.json"))):
        case = os.path.basename(ref)[:-len("_keyavg.json")]
        got = ours(binary, os.path.join(d, case + "_fault.json.gz"))
        with open(ref) as fh:
            rows = json.load(fh)
        full = any(t["key"] == "Command Buffer Full" for t in rows)
        for t in rows:
            if t["key"].startswith(KNOWN_QUEUE_FULL if full else KNOWN):
                continue
            n += 1
            o = got.get(t["key"])
            if o is None:
                bad.append(f"{case}: {t['key']}: no row")
                continue
            for tk, ok in FIELDS:
                if abs(t[tk] - o[ok]) > max(0.5, 1e-3 * abs(t[tk])):
                    bad.append(f"{case}: {t['key']}: {tk} {t[tk]:.3f}, ours {o[ok]:.3f}")
    print(f"{n} rows compared, {len(bad)} differ")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
