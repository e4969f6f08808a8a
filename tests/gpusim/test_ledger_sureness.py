#!/usr/bin/env python3
"""test_ledger_sureness.py: `diagnose` states how sure each finding is against libprof's
capture-health ledger (issue 23 item 5). fault_app (a training loop on the simulated driver and
CUPTI, libprof linked) runs with records lost, and the findings of its trace are read as JSON:
  gpu_drops  a launch-bound loop (GT04) while the simulated CUPTI hoards buffers
             (FAKE_CUPTI=hoard=8), so libprof's cap makes it drop GPU records: every finding
             of a rule that reads GPU records is less sure and says what share was dropped;
             rules that read only CPU ranges do not mention it
  cpu_drops  the smallest record memory (GP_PROF_BUFFER_LIMIT=64K) under thousands of CPU ops a
             step: rules that read CPU ranges name the loss, rules that read only GPU records
             do not
usage: test_ledger_sureness.py CASE FAULT_APP_DIR GPROF_TRAIN"""
import json
import os
import subprocess
import sys
import tempfile

# What each rule reads (the RULES_READS_* of its `needs`, analyze/src/rules/rule_*.c)
GPU_RULES = {"GT02", "GT03", "GT04", "GT05", "GT06", "GT07", "GT08", "GT09", "GT13", "GT15"}
MEM_RULES = {"GT10", "GT11", "GT12"}
CPU_RULES = {"GT01", "GT14", "GT17", "GT18", "GT19"}
SURE = ("low", "medium", "high")
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def run(app_dir, tmp, args, env_extra):
    trace = os.path.join(tmp, "trace.json")
    env = dict(os.environ, FAULT_TRACE=trace,
               GP_PROF_CUPTI=os.path.join(app_dir, "libcupti.so.13"), **env_extra)
    if "address" in os.environ.get("GP_SANITIZE", ""):
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    p = subprocess.run([os.path.join(app_dir, "fault_app")] + args, env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit("fault_app %s: exit %d: %s" % (args, p.returncode, p.stderr))
    with open(trace) as f:
        return trace, json.load(f)["gprof"]


def with_gain(binary, trace):
    """The findings with a gain restated without the profiler: id -> without_profiler."""
    p = subprocess.run([binary, "diagnose", "--format", "json", trace], capture_output=True,
                       text=True, check=True)
    found = {}
    for f in json.loads(p.stdout)["traces"][0]["findings"]:
        g = f["estimated_gain"]
        if g and g["without_profiler"]:
            found[f["id"]] = g["without_profiler"]
    return found


def expect_loss(rid, u, pct, words):
    c = u.get("capture")
    check(c is not None, "%s: the ledger's word on the finding" % rid)
    if c is None:
        return
    want = "low" if pct >= 1.0 else "medium"
    check(c["sure"] == want, "%s: %.1f%% lost is %s, got %s" % (rid, pct, want, c["sure"]))
    check(words in c["why"] and words in u["why"], "%s: the why names the loss: %r" % (rid, u))
    check("%.1f%%" % pct in c["why"], "%s: the share %.1f%% in %r" % (rid, pct, c["why"]))
    check(SURE.index(u["sure"]) <= SURE.index(c["sure"]), "%s: the loss bounds how sure" % rid)


def expect_quiet(rid, u, words):
    c = u.get("capture")
    check(c is not None and words not in c["why"] and words not in u["why"],
          "%s reads no such records: %r" % (rid, u))


def usable(app_dir, binary, tmp, args, env, lost_key, kinds):
    """Run fault_app until its trace lost records (`lost_key`) and holds a finding with a gain
    of a rule of each set in `kinds`: how much is lost, and so what fires, follows the writer's
    and CUPTI's timing (at most 4 runs, or one for each of a list of environments). @return the ledger and findings."""
    for e in env if isinstance(env, list) else [env] * 4:
        trace, g = run(app_dir, tmp, args, e)
        found = with_gain(binary, trace)
        if g[lost_key] > 0 and all(set(found) & k for k in kinds):
            return g, found
    check(False, "%s > 0 and findings of %s in every run: %r, %s"
          % (lost_key, kinds, g[lost_key], sorted(found)))
    return g, found


def case_gpu_drops(app_dir, binary, tmp):
    g, found = usable(app_dir, binary, tmp,
                      ["--host-us", "100", "--kernel-us", "10", "--kernels", "40"],
                      # libprof keeps at most 256 buffers (CUPTI_MAX_HELD) and the fake holds
                      # each after N records until a flush gives them back: with 8, 2,048 of the
                      # ~2,560 records of 20 steps are kept in a plain build; with 4 every kernel
                      # record (delivered after the API records) was lost there, and no GPU rule
                      # could run, while a TSan build, slower, drops nothing at 8 (its flushes
                      # come between). The drop must be partial: try each in turn.
                      [{"FAKE_CUPTI": "hoard=%d" % h} for h in (8, 4, 6, 12, 3) * 2],
                      "health_gpu_dropped",
                      [GPU_RULES | MEM_RULES])
    lost = g["health_gpu_dropped"]
    pct = 100.0 * lost / (lost + g["health_gpu_records"])
    for rid in set(found) & (GPU_RULES | MEM_RULES):
        expect_loss(rid, found[rid], pct, "of GPU activity records")
    for rid in set(found) & CPU_RULES:
        expect_quiet(rid, found[rid], "GPU")
    print("gpu_drops: %.1f%% of GPU records dropped; findings %s" % (pct, sorted(found)))


def case_cpu_drops(app_dir, binary, tmp):
    # 2,500 launches a step from CPU ops of 10 us: more records than 64 KiB holds before the
    # writer drains them; a 60 ms loader wait a step (GT01) keeps steps whole enough to read
    g, found = usable(app_dir, binary, tmp,
                      ["--loader-us", "60000", "--kernels", "2500", "--host-us", "10",
                       "--kernel-us", "1"], {"GP_PROF_BUFFER_LIMIT": "64K"},
                      "health_cpu_dropped", [GPU_RULES, CPU_RULES])
    lost = g["health_cpu_dropped"]
    made = sum(g["health_cpu_" + k] for k in ("ranges", "marks", "counters", "async"))
    pct = 100.0 * lost / (lost + made)
    for rid in set(found) & GPU_RULES:
        expect_quiet(rid, found[rid], "CPU records")
    for rid in set(found) & CPU_RULES:
        expect_loss(rid, found[rid], pct, "of CPU records were dropped")
    print("cpu_drops: %.1f%% of CPU records dropped; findings %s" % (pct, sorted(found)))


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    case, app_dir, binary = sys.argv[1:]
    cases = {"gpu_drops": case_gpu_drops, "cpu_drops": case_cpu_drops}
    with tempfile.TemporaryDirectory() as tmp:
        cases[case](app_dir, binary, tmp)
    if FAILS:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
