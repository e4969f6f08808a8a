#!/usr/bin/env python3
"""GT00's advice and its threshold agree (issue 17 §11): the schedule GT00 recommends on a trace
with too few steps is the one tests/data/torch/gt00_schedule.json.gz was made with (by
torch.profiler itself), and on that trace GT00 finds nothing to complain about.
usage: gt00_advice.py GPROF_TRAIN DATA_DIR"""
import json
import os
import re
import subprocess
import sys


def gt00(binary, trace):
    out = subprocess.run([binary, "diagnose", "--format", "json", "--rule", "GT00", trace],
                         capture_output=True, text=True).stdout
    (finding,) = json.loads(out)["traces"][0]["findings"]
    return finding


def main():
    binary, data = sys.argv[1:3]
    few = gt00(binary, os.path.join(data, "mlp_step.json.gz"))
    assert few["fired"], few
    advised = re.search(r"schedule\(wait=(\d+), warmup=(\d+), active=(\d+)\)", few["recommendation"])
    assert advised, few["recommendation"]
    with open(os.path.join(data, "gt00_schedule.expected.json")) as f:
        made = json.load(f)["profile_kwargs"]["schedule"]
    want = [str(made[k]) for k in ("wait", "warmup", "active")]
    assert list(advised.groups()) == want, (advised.groups(), made)
    ok = gt00(binary, os.path.join(data, "gt00_schedule.json.gz"))
    assert not ok["fired"], ok
    print(f"ok: GT00 advises schedule{tuple(map(int, want))}, and a trace made so passes GT00")


if __name__ == "__main__":
    main()
