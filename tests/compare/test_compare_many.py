"""gprof-train compare of two folders of many small traces (issue 26): its memory must not grow with
the number of traces. Each side is one folder of N copies of a small trace (one run, its traces
pooled); the peak memory of compare at N = 600 a side must stay within 24 MiB of its peak at
N = 50 a side (it held every trace's full summary until the end: 70 KB a trace, +38 MiB here),
and both must give the same verdict. 600, not more: under ASan on a loaded 2-core machine 1500 a
side took past 300 s.
usage: test_compare_many.py GPROF_TRAIN WORKDIR TRACE"""
import os
import resource
import shutil
import subprocess
import sys

BIN, WORK, TRACE = sys.argv[1], sys.argv[2], sys.argv[3]


def side(name, n):
    d = os.path.join(WORK, "%s%d" % (name, n))
    if not os.path.isdir(d):
        os.makedirs(d + ".part", exist_ok=True)
        for i in range(n):
            shutil.copyfile(TRACE, os.path.join(d + ".part", "t%d.json.gz" % i))
        os.rename(d + ".part", d)
    return d


def peak_kib(n):
    """Run compare in a child of a fresh interpreter, so ru_maxrss is compare's own peak."""
    code = ("import resource,subprocess,sys;"
            "p=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
            "print(p.returncode);print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);"
            "print([l.split('(')[0] for l in p.stdout.splitlines() if l.startswith('verdict:')]);"
            "sys.stderr.write(p.stderr)")
    p = subprocess.run([sys.executable, "-c", code, BIN, "compare", side("a", n), side("b", n)],
                       capture_output=True, text=True)
    rc, kib, verdict = p.stdout.splitlines()[:3]
    if rc != "0":
        print("FAIL: compare of %d traces a side exited %s: %s" % (n, rc, p.stderr))
        sys.exit(1)
    return int(kib), verdict


os.makedirs(WORK, exist_ok=True)
small, v_small = peak_kib(50)
large, v_large = peak_kib(600)
print("peak: %d KiB with 50 traces a side, %d KiB with 600" % (small, large))
fails = 0
if large - small > 24 * 1024:
    print("FAIL: compare's memory grows with the traces: +%d KiB for 1,100 more" % (large - small))
    fails += 1
if v_small != v_large:
    print("FAIL: the verdict changed with copies of the same trace: %s vs %s" % (v_small, v_large))
    fails += 1
print("%d passed, %d failed" % (2 - fails, fails))
sys.exit(1 if fails else 0)
