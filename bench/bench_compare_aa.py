"""compare's verdict with runs as the unit, measured on real runs (issue 24 §3).

Runs the bundled trainer on the CPU (`gprof-train run --device cpu --steps S --no-report`;
S = 2000 by default: 300-step runs, under 0.5 s each, differ by ~6% in typical step from run to
run on the shared VM, too much for 5 runs a side to find a 10% change 9 times in 10),
setting A (batch 64) and setting B (batch 71: 11% more samples a step, about 10% more step time)
interleaved A A B A A B ... so that a machine getting busier or quieter touches both alike. Then,
from those runs, with `gprof-train compare ... --vs ...` (text verdict line):
  - A/A, 1 vs 1: each back-to-back pair of A runs; a faster/slower verdict is false. Also the
    largest difference of mean step time between back-to-back A runs (what --run-noise covers);
  - A/A, 5 vs 5: TRIALS random draws of 10 distinct A runs split 5/5; a verdict is false;
  - A/B, 5 vs 5: TRIALS random draws of 5 A runs against 5 B runs; 'slower' is a detection;
  - A/B, 1 vs 1: each B run against the A run before it, for reference.
Trials drawn from one pool of runs are not independent: the rates say how the statistic behaves
on these runs, and the pool size is printed beside them. The true change is the mean of all B
runs against the mean of all A runs (each run's mean step). Targets: A/A false verdicts <= 5%,
detection >= 90%.
usage: bench_compare_aa.py GPROF_TRAIN --out DIR [--a-runs 20] [--b-runs 10] [--steps 2000]
       [--trials 40]"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

VERDICT = re.compile(r"^verdict: ([a-z ]+) \(mean ([-+][0-9.]+)%")
TYPICAL = re.compile(r"typical step ([-+][0-9.]+)%")
DETECT = re.compile(r"(?:changes under|can detect:) ([0-9.]+)%")


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def train(bin_, out, steps, batch):
    before = set(glob.glob(os.path.join(out, "*")))
    p = subprocess.run([bin_, "run", "--device", "cpu", "--steps", str(steps), "--no-report",
                        "-b", str(batch), "-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("run failed: %s" % p.stderr[-2000:])
    (run,) = set(glob.glob(os.path.join(out, "*"))) - before
    (trace,) = glob.glob(os.path.join(run, "*.pt.trace.json*"))
    return trace


def compare(bin_, base, new):
    p = subprocess.run([bin_, "compare", *base, "--vs", *new, "--top", "1"],
                       capture_output=True, text=True)
    for line in p.stdout.splitlines():
        m = VERDICT.match(line)
        if m:
            d, t = DETECT.search(p.stdout), TYPICAL.search(line)
            tested = float(t.group(1)) if t else float(m.group(2))  # before: the mean's
            return (m.group(1), tested, float(d.group(1)) if d else float("nan"),
                    float(m.group(2)))
    sys.exit("compare gave no verdict: %s" % p.stderr[-2000:])


def rate(results, word):
    hits = sum(1 for v, *_ in results if v == word or (word == "any" and v in ("faster", "slower")))
    return hits, len(results)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def record(a):
    """Train the runs, interleaved; save and return them as a pool."""
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    runs_a, runs_b = [], []
    while len(runs_a) < a.a_runs or len(runs_b) < a.b_runs:
        if len(runs_a) < a.a_runs:
            runs_a.append(train(a.bin, os.path.join(a.out, "a"), a.steps, 64))
        if len(runs_a) < a.a_runs and len(runs_a) % 2 == 1:
            runs_a.append(train(a.bin, os.path.join(a.out, "a"), a.steps, 64))
        if len(runs_b) < a.b_runs:
            runs_b.append(train(a.bin, os.path.join(a.out, "b"), a.steps, 71))
    with open(os.path.join(a.out, "pool.json"), "w") as f:
        json.dump({"a": runs_a, "b": runs_b}, f, indent=1)
    return runs_a, runs_b


def read_pool(a):
    with open(a.pool) as f:
        pool = json.load(f)
    runs_a, runs_b = pool["a"], pool["b"]
    if a.half:
        runs_a = runs_a[:len(runs_a) // 2] if a.half == 1 else runs_a[len(runs_a) // 2:]
        runs_b = runs_b[:len(runs_b) // 2] if a.half == 1 else runs_b[len(runs_b) // 2:]
    return runs_a, runs_b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--out")
    ap.add_argument("--pool")
    ap.add_argument("--half", type=int, choices=(1, 2))
    ap.add_argument("--a-runs", type=int, default=20)
    ap.add_argument("--b-runs", type=int, default=10)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--trials", type=int, default=40)
    a = ap.parse_args()
    if bool(a.out) == bool(a.pool):
        ap.error("give --out DIR (record runs) or --pool FILE (evaluate recorded runs)")
    print("machine: %d cores, load average %s at start" % (os.cpu_count(), load()))
    t0 = time.time()
    runs_a, runs_b = read_pool(a) if a.pool else record(a)
    t_runs = time.time() - t0
    rng = random.Random(24)
    aa1 = [compare(a.bin, [x], [y]) for x, y in zip(runs_a, runs_a[1:])]
    aa5, ab5 = [], []
    for _ in range(a.trials):
        pick = rng.sample(runs_a, 10)
        aa5.append(compare(a.bin, pick[:5], pick[5:]))
        ab5.append(compare(a.bin, rng.sample(runs_a, 5), rng.sample(runs_b, 5)))
    ab1 = [compare(a.bin, [runs_a[min(2 * i, len(runs_a) - 1)]], [b]) for i, b in enumerate(runs_b)]
    true = compare(a.bin, runs_a, runs_b)
    what = ("pool %s%s" % (a.pool, ", half %d" % a.half if a.half else "") if a.pool
            else "%d steps each, %.0f s" % (a.steps, t_runs))
    print("runs: %d of A (batch 64), %d of B (batch 71), %s; load average %s at the end"
          % (len(runs_a), len(runs_b), what, load()))
    print("true change B vs A (all runs): mean step %+.1f%%, tested %+.1f%% (%s, detectable "
          "%.1f%%)" % (true[3], true[1], true[0], true[2]))
    drift = [abs(r[3]) for r in aa1]
    print("back-to-back A runs: mean step differs by median %.1f%%, at most %.1f%% (%d pairs)"
          % (median(drift), max(drift), len(drift)))
    drift = [abs(r[1]) for r in aa1]
    print("back-to-back A runs: the tested change (typical step) differs by median %.1f%%, at "
          "most %.1f%%" % (median(drift), max(drift)))
    h, n = rate(aa1, "any")
    print("A/A 1 vs 1: false verdicts %d of %d (%.0f%%); detectable change printed: median %.1f%%"
          % (h, n, 100.0 * h / n, median([r[2] for r in aa1])))
    h, n = rate(aa5, "any")
    print("A/A 5 vs 5: false verdicts %d of %d (%.0f%%, target <= 5%%); detectable: median %.1f%%"
          % (h, n, 100.0 * h / n, median([r[2] for r in aa5])))
    h, n = rate(ab5, "slower")
    print("A/B 5 vs 5: 'slower' %d of %d (%.0f%%, target >= 90%%); change seen: median %+.1f%%; "
          "detectable: median %.1f%%" % (h, n, 100.0 * h / n, median([r[1] for r in ab5]),
                                         median([r[2] for r in ab5])))
    h, n = rate(ab1, "slower")
    print("A/B 1 vs 1: 'slower' %d of %d (%.0f%%), 'faster' %d" % (h, n, 100.0 * h / n,
                                                                  rate(ab1, "faster")[0]))
    print("total %.0f s" % (time.time() - t0))


if __name__ == "__main__":
    main()
