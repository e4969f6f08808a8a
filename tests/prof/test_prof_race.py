#!/usr/bin/env python3
"""test_prof_race.py: threads whose first NVTX call races NVTX's initialisation (issue 23) must
lose nothing: every range present and nested on its thread, every mark and start/end range there,
nothing dropped or warned about, and the capture-health ledger ("health_*") counting each record. nvtx_race (injected: NVTX_INJECTION64_PATH) or
nvtx_race_linked (libprof linked and started first), 4 and 16 threads, the first call a push, a
mark, a start/end range, or threads that wait long before it; RUNS times each ($GP_RACE_RUNS).
usage: test_prof_race.py inject|linked BIN_DIR LIB_DIR"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_prof_trace as tp  # noqa: E402

CONFIGS = [(4, 1000, "push"), (16, 300, "push"), (4, 1000, "mark"), (16, 300, "startex"),
           (16, 300, "early")]


def run_once(mode, bindir, libdir, tmp, threads, ranges, first):
    env = dict(os.environ)
    env.pop("GP_PROF_NVTX_LINKED", None)
    env.pop("NVTX_INJECTION64_PATH", None)
    env["GP_PROF_OUT"] = tmp
    exe = "nvtx_race_linked" if mode == "linked" else "nvtx_race"
    if mode == "inject":
        env["NVTX_INJECTION64_PATH"] = os.path.join(libdir, "libgp_prof.so")
    r = subprocess.run([os.path.join(bindir, exe), str(threads), str(ranges), first], env=env,
                       capture_output=True, text=True, timeout=120)
    what = "%s %d threads first=%s" % (mode, threads, first)
    tp.check(r.returncode == 0, "%s: exit 0: %s" % (what, r.stderr))
    want = [tp.json.loads(l) for l in r.stdout.splitlines() if l.startswith('{"tid"')]
    tp.check(len(want) == threads, "%s: every thread reported" % what)
    traces = [f for f in os.listdir(tmp) if ".pt.trace.json" in f and not f.endswith(".tmp")]
    tp.check(len(traces) == 1, "%s: one trace: %s" % (what, traces))
    if len(traces) != 1:
        return
    t = tp.load(os.path.join(tmp, traces[0]))
    for f in traces:
        os.unlink(os.path.join(tmp, f))
    g = t["gprof"]
    tp.check(g.get("dropped_cpu_records") == 0 and not g.get("warnings"),
             "%s: nothing dropped or warned: %s %s" % (what, g.get("dropped_cpu_records"),
                                                       g.get("warnings")))
    ranges = sum(w["outer"] + w["inner"] + w["leaf"] for w in want)
    marks, asyncs = sum(w["marks"] for w in want), sum(w["async"] for w in want)
    ledger = (g.get("health_cpu_ranges"), g.get("health_cpu_marks"), g.get("health_cpu_async"),
              g.get("health_cpu_dropped"))
    tp.check(ledger == (ranges, marks, asyncs, 0),
             "%s: the capture-health ledger counts every record: %s, want %s" %
             (what, ledger, (ranges, marks, asyncs, 0)))
    tp.check(g.get("health_profiler_cost_ns") == g["record_cost_ns"] * (ranges + marks + asyncs)
             and g.get("health_writer_cpu_ns", 0) > 0 and g.get("health_writer_max_behind_ns", -1) >= 0,
             "%s: the ledger's costs: %s" % (what, {k: v for k, v in g.items() if "health" in k}))
    depth = tp.check_nesting(t["traceEvents"])
    levels = {"outer": 0, "inner": 1, "leaf": 2}
    by_tid = {}
    for e in t["traceEvents"]:
        by_tid.setdefault(e.get("tid"), []).append(e)
    for w in want:
        evs = by_tid.get(w["tid"], [])
        for name, level in levels.items():
            got = [e for e in evs if e["ph"] == "X" and e["name"] == name]
            tp.check(len(got) == w[name], "%s: thread %d has %d of %d %r" %
                     (what, w["tid"], len(got), w[name], name))
            tp.check(all(depth[id(e)] == level for e in got),
                     "%s: thread %d: every %r at depth %d" % (what, w["tid"], name, level))
        marks = [e for e in evs if e["ph"] == "i" and e["name"] == "first-mark"]
        tp.check(len(marks) == w["marks"], "%s: thread %d: its mark" % (what, w["tid"]))
    lanes = [e for e in t["traceEvents"] if e["ph"] == "X" and e["name"] == "first-async"]
    tp.check(len(lanes) == sum(w["async"] for w in want),
             "%s: every start/end range (%d)" % (what, len(lanes)))


def main():
    mode, bindir, libdir = sys.argv[1], sys.argv[2], sys.argv[3]
    runs = int(os.environ.get("GP_RACE_RUNS", "3"))
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for threads, ranges, first in CONFIGS:
                n = len(tp.FAILS)
                run_once(mode, bindir, libdir, tmp, threads, ranges, first)
                if len(tp.FAILS) > n:
                    print("run %d of %d failed" % (i + 1, runs))
                    del tp.FAILS[n + 8:]  # a lost thread fails many checks: keep the first few
    print("race %s: %s" % (mode, "FAILED (%d)" % len(tp.FAILS) if tp.FAILS else "ok"))
    return 1 if tp.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
