"""gprof-train compare with runs as the unit (issue 24 §3), on run sets a generator writes here:
traces with known step times (a run-level offset, then +-2% uniform jitter per step, fixed seeds),
so every verdict is decided by construction, not by timing.
- one run against one run, 3% apart (drift between identical runs): no clear change, and the
  one-run warning, whose figure is --run-noise (default 18%: the shared VM's runs), not the
  spread of the steps; --fail-if-slower 1 does not trip;
- one run against one run, 15% apart, --run-noise 5 (a quiet machine, runs up to ~4% apart):
  slower, still with the one-run warning; at the default 18%, no clear change;
- 5 runs against 5, 10% apart, as files with --vs and as folders of run folders: slower;
- 5 against 5 of one setting whose runs drift (sides 1.2% apart): no clear change;
- a folder of run folders is one run per folder; a run folder with several traces is one run.
usage: test_compare_runs.py GPROF_TRAIN WORKDIR"""
import json
import os
import random
import re
import shutil
import subprocess
import sys

BIN, WORK = sys.argv[1], sys.argv[2]
FAILS = []
STEP_US = 10000.0
STEPS = 41  # the first is the warm-up step compare leaves out


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def write_trace(path, offset_pct, seed, pid):
    """One trace: STEPS ProfilerStep#N ranges of STEP_US * (1 + offset) * (1 +- 2%), each with
    a loader wait and an op inside, back to back on one thread."""
    rng = random.Random(seed)
    events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
               "args": {"name": "python"}}]
    ts = 1000.0
    for i in range(STEPS):
        dur = round(STEP_US * (1 + offset_pct / 100) * (1 + rng.uniform(-0.02, 0.02)), 3)
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i,
                       "pid": pid, "tid": pid, "ts": ts, "dur": dur})
        events.append({"ph": "X", "cat": "user_annotation",
                       "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                       "pid": pid, "tid": pid, "ts": ts + 1, "dur": 100.0})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": pid,
                       "ts": ts + 200, "dur": round(dur - 300, 3)})
        ts += dur + 5
    doc = {"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": events}
    with open(path, "w") as f:
        json.dump(doc, f)


def run_set(name, offsets, seed, change_pct=0.0):
    """A folder of run folders, one per offset, as `run -o DIR` leaves them. @return the run
    folders' trace paths and the folder."""
    top = os.path.join(WORK, name)
    shutil.rmtree(top, ignore_errors=True)
    paths = []
    for i, off in enumerate(offsets):
        d = os.path.join(top, "mlp-%02d" % i)
        os.makedirs(d)
        with open(os.path.join(d, "summary.json"), "w") as f:
            f.write("{}\n")
        p = os.path.join(d, "host_%d.1700000000000.pt.trace.json" % (100 + i))
        write_trace(p, (1 + change_pct / 100) * (1 + off / 100) * 100 - 100, seed + i, 100 + i)
        paths.append(p)
    return paths, top


def compare(*args):
    return subprocess.run([BIN, "compare"] + list(args), capture_output=True, text=True)


def verdict(p):
    lines = [l for l in p.stdout.splitlines() if l.startswith("verdict: ")]
    return lines[0] if lines else "(no verdict line) " + p.stderr


def says(p, word, change_pct):
    """The verdict line reads `verdict: WORD (mean +X%...` with X within 0.6 of change_pct."""
    m = re.match(r"verdict: ([a-z ]+) \(mean ([-+][0-9.]+)%", verdict(p))
    return bool(m) and m.group(1) == word and abs(float(m.group(2)) - change_pct) < 0.6


BASE5 = [-2.0, 1.0, 0.0, -1.0, 2.0]
DRIFT5 = [-0.5, 2.5, 1.0, 0.0, 3.0]  # one setting's runs again: 1.2% above BASE5 on average
NEW5 = [1.0, -2.0, 0.5, 2.0, -1.5]


def test_one_run_drift():
    (a,), _ = run_set("drift_base", [0.0], 1)
    (b,), _ = run_set("drift_new", [3.0], 2)
    p = compare(a, b, "--fail-if-slower", "1")
    check(p.returncode == 0, "3%% drift tripped --fail-if-slower 1: exit %d" % p.returncode)
    check(says(p, "no clear change", 3), "3% drift: " + verdict(p))
    # --run-noise and the quartile's sampling error (40 steps spread +-2%: ~0.3%), no more
    for args, noise in (([], 18.0), (["--run-noise", "5"], 5.0)):
        p = compare(a, b, *args)
        m = re.search(r"one run per side: changes under ([0-9.]+)% can't be told from run-to-run "
                      r"variation", p.stdout)
        check(m and noise <= float(m.group(1)) < noise + 0.5, "no one-run warning:\n" + p.stdout)


def test_one_run_big_change():
    (a,), _ = run_set("big_base", [0.0], 3)
    (b,), _ = run_set("big_new", [15.0], 4)
    p = compare(a, b, "--run-noise", "5")
    check(p.returncode == 0, "15%%: exit %d: %s" % (p.returncode, p.stderr))
    check(says(p, "slower", 15), "15% 1 vs 1: " + verdict(p))
    check("one run per side: changes under" in p.stdout, "no one-run warning:\n" + p.stdout)
    p = compare(a, b)
    check(says(p, "no clear change", 15), "15% 1 vs 1, default --run-noise: " + verdict(p))


def test_five_runs_ten_percent():
    base, base_dir = run_set("ten_base", BASE5, 10)
    new, new_dir = run_set("ten_new", NEW5, 20, change_pct=10)
    p = compare(*base, "--vs", *new)
    check(says(p, "slower", 10), "5 vs 5, 10%: " + verdict(p))
    check("5 vs 5 runs" in verdict(p), "runs counted: " + verdict(p))
    check("smallest change these runs can detect: " in p.stdout, "no detectable line")
    p = compare(base_dir, new_dir, "--format", "json")
    doc = json.loads(p.stdout) if p.returncode == 0 else {}
    st = doc.get("step_time", {})
    check(st.get("verdict") == "slower", "folders of run folders, 10%%: %s %s" % (st, p.stderr))
    check(doc.get("base", {}).get("runs") == 5 and doc.get("new", {}).get("runs") == 5,
          "runs in JSON: %s" % doc.get("base"))
    check(0 < (st.get("detectable_pct") or 0) < 5, "detectable_pct: %s" % st)


def test_five_runs_same_setting():
    base, base_dir = run_set("aa_base", BASE5, 30)
    new, new_dir = run_set("aa_new", DRIFT5, 40)
    for args in ([*base, "--vs", *new], [base_dir, new_dir]):
        p = compare(*args, "--fail-if-slower", "0")
        check(p.returncode == 0, "A/A 5 vs 5 tripped the gate: exit %d %s" % (p.returncode, p.stderr))
        check(says(p, "no clear change", 1.2), "A/A 5 vs 5: " + verdict(p))


def test_run_folder_with_ranks():
    """A run folder holding two traces is one run, not two (ranks of one job)."""
    _, base_dir = run_set("ranks_base", [0.0], 50)
    first = os.path.join(base_dir, "mlp-00")
    write_trace(os.path.join(first, "host_200.1700000000000.pt.trace.json"), 0.0, 51, 200)
    _, new_dir = run_set("ranks_new", [0.5], 52)
    p = compare(first, os.path.join(new_dir, "mlp-00"))
    check("BASE  1 run, 2 traces, 80 steps analysed" in p.stdout, "ranks:\n" + p.stdout + p.stderr)


def test_bad_folder():
    empty = os.path.join(WORK, "empty_runs")
    shutil.rmtree(empty, ignore_errors=True)
    os.makedirs(os.path.join(empty, "mlp-00"))
    p = compare(empty, empty)
    check(p.returncode == 2 and "or the run folders under it" in p.stderr,
          "empty folder of run folders: %d %s" % (p.returncode, p.stderr))


def main():
    os.makedirs(WORK, exist_ok=True)
    for t in (test_one_run_drift, test_one_run_big_change, test_five_runs_ten_percent,
              test_five_runs_same_setting, test_run_folder_with_ranks, test_bad_folder):
        t()
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
