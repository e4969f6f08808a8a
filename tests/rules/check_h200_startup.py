#!/usr/bin/env python3
"""Start-up on a real GPU (tests/data/h200_startup/: bench/gpu_startup_cases.py on an H200,
README.md there): PyTorch loops profiled with `with profile():` from the program's start, no
ProfilerStep markers, beside the same loop's scheduled profile (`*_sched`: its steady state).

- One iteration (`*_cold1`: the optimizer stepped once): the trace is that iteration, its first,
  on top of the CUDA context and the model's creation. GT00 must warn, and no rule that judges
  time may warn (before: GT04 crit and GT02 crit on the conv model, GT02 crit and GT06 warn on
  the bf16 MLP, where 31% and 35% of first calls were found).
- Several iterations (`*_cold3`, `*_cold30`, `*_warm3`): the steps end where the optimizer's
  steps end and the first is left out, so the verdict is the steady state's. With 30 iterations
  the loud findings must be the scheduled trace's exactly; with 3 (two analysed steps) they may
  tip a finding the steady state has at info over its tier, but no rule the steady state keeps
  quiet (`ok`) may warn (before: GT02 crit and GT06 warn on a bf16 MLP the GPU paces, GT11 warn
  on one cudaMalloc in the second of three iterations).
- The bundled trainer's `run --device cuda --steps 1` (`trainer_mlp_steps1`: one marked step,
  its first, 130 ms where the next takes 0.65 ms): GT00 must warn and no rule that judges time
  may warn (before: GT04 crit and GT02 crit, with 28% of the step found as first calls). The same
  for its cnn (`trainer_cnn_steps1`, 51 ms), where only 6% of the step is found as first calls
  (cuDNN's heuristics run on the host outside any recorded call): the trainer's first step is
  start-up however little of it is found (before: GT04 crit and GT02 crit).
- The launch-bound MLP (its scheduled trace, 2.3 MB, is not stored; it said GT04 crit, GT02
  crit): GT04 must fire on its 3-iteration traces.
- The same loop under an injected libprof (`injected_launch_cut`: `run --no-torch`, no CPU
  operators, no markers, 6 s of start-up, cut after its 28th iteration): the steps must come from
  the repeating launches (20 or more analysed), their mean within 15% of the 15.5 ms a step the
  loop timed itself under the profiler, and the verdict the scheduled trace's: GT04 and GT02
  loud, GT03, GT06 and GT11 not (before: one 6.8 s step, GT03 crit on the 5.9 s of the weights'
  initialisation); GT00 advises marking the steps (not profiling more of them).
- The scheduled traces (`conv`, `paced`) with their ProfilerStep#N and Optimizer.* ranges taken
  out: the steps must come from the repeating launches (20 or more) and the loud findings must
  be the marked trace's (before: one step spanning the trace).

usage: check_h200_startup.py GPROF_TRAIN FIXTURE_DIR
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

from check_contention import all_findings as findings

INJECTED_STEP_MS = 15.5  # the loop's own timing of its steps, under the injected profiler
JUDGE_TIME = {"GT01", "GT02", "GT03", "GT04", "GT05", "GT06", "GT07", "GT08", "GT09", "GT11",
              "GT13", "GT14", "GT17", "GT18", "GT19", "GT20"}


def loud(fs):
    return {k for k, f in fs.items() if f["severity"] in ("warn", "crit")}


def check(binary, d, bad):
    def trace(name):
        return findings(binary, os.path.join(d, "startup_%s.json.gz" % name))

    def first_iteration(name):  # GT00 warns; no rule that judges time warns
        fs = findings(binary, os.path.join(d, name + ".json.gz"))
        sev = fs["GT00"]["severity"]
        print("%s: GT00 %s; loud %s" % (name, sev, sorted(loud(fs))))
        if sev != "warn" or loud(fs) & JUDGE_TIME:
            bad.append("%s: GT00 %s, loud %s" % (name, sev, sorted(loud(fs))))

    sched = {m: trace(m + "_sched") for m in ("conv", "paced")}
    first_iteration("trainer_mlp_steps1")
    first_iteration("trainer_cnn_steps1")
    for m in ("conv", "launch", "paced"):
        first_iteration("startup_%s_cold1" % m)
    for m, runs in (("conv", ("cold3", "warm3", "cold30")), ("paced", ("cold3", "warm3", "cold30")),
                    ("launch", ("cold3", "warm3"))):
        want = loud(sched[m]) if m in sched else {"GT04", "GT02"}
        quiet = {k for k, f in sched[m].items() if f["severity"] == "ok"} if m in sched else set()
        for run in runs:
            fs = trace("%s_%s" % (m, run))
            got = loud(fs)
            steps = (fs["GT00"].get("metric") or {}).get("value")
            print("%s_%s: %s steps analysed; loud %s (steady state: %s)" % (
                m, run, steps, sorted(got), sorted(want)))
            if steps != (29 if run == "cold30" else 2):  # the optimizer's steps less the first
                bad.append("%s_%s: %s steps analysed" % (m, run, steps))
            if run == "cold30" and got != want:
                bad.append("%s_cold30: loud %s, the steady state %s" % (m, sorted(got),
                                                                       sorted(want)))
            if got & quiet:
                bad.append("%s_%s: %s warn, quiet in the steady state" % (m, run,
                                                                         sorted(got & quiet)))
            if m == "launch" and "GT04" not in got:
                bad.append("%s_%s: GT04 %s on a launch-bound loop" % (m, run,
                                                                      fs["GT04"]["severity"]))


def check_stripped(binary, d, bad):
    """The scheduled traces with their ProfilerStep#N and Optimizer.* ranges taken out: the steps
    must come from the repeating launches, and the verdict must not change."""
    for m in ("conv", "paced"):
        src = os.path.join(d, "startup_%s_sched.json.gz" % m)
        with gzip.open(src, "rt") as f:
            doc = json.load(f)
        doc["traceEvents"] = [e for e in doc["traceEvents"] if not marker(e)]
        with tempfile.TemporaryDirectory() as tmp:
            dst = os.path.join(tmp, "stripped_%s.json.gz" % m)
            with gzip.open(dst, "wt") as f:
                json.dump(doc, f)
            out = subprocess.run([binary, "diagnose", dst, "-f", "json"], capture_output=True,
                                 text=True, check=False)
        t = json.loads(out.stdout)["traces"][0]
        got = loud({f["id"]: f for f in t["findings"]})
        want = loud(findings(binary, src))
        print("%s_sched without markers: %d steps, loud %s (marked: %s)" % (
            m, t["steps"], sorted(got), sorted(want)))
        if t["steps"] < 20 or got != want:
            bad.append("%s_sched without markers: %d steps, loud %s, marked %s" % (
                m, t["steps"], sorted(got), sorted(want)))


def marker(e):
    name = e.get("name", "")
    return e.get("cat") in ("user_annotation", "gpu_user_annotation") and (
        name.startswith("ProfilerStep#") or name.startswith("Optimizer."))


def check_injected(binary, d, bad):
    path = os.path.join(d, "injected_launch_cut.json.gz")
    out = subprocess.run([binary, "diagnose", path, "-f", "json"], capture_output=True, text=True,
                         check=False)
    t = json.loads(out.stdout)["traces"][0]
    fs = {f["id"]: f for f in t["findings"]}
    got, mean_ms = loud(fs), t["mean_step_us"] / 1e3
    print("injected_launch_cut: %d steps analysed, mean %.1f ms; loud %s" % (
        t["steps_analysed"], mean_ms, sorted(got)))
    if t["steps_analysed"] < 20 or abs(mean_ms - INJECTED_STEP_MS) > 0.15 * INJECTED_STEP_MS:
        bad.append("injected_launch_cut: %d steps analysed, mean %.1f ms (the loop: %.1f ms)" % (
            t["steps_analysed"], mean_ms, INJECTED_STEP_MS))
    if not {"GT04", "GT02"} <= got or got & {"GT03", "GT06", "GT11"}:
        bad.append("injected_launch_cut: loud %s" % sorted(got))
    reco = fs["GT00"].get("recommendation") or ""
    if not reco.startswith("Mark each iteration as a step"):  # not "profile 10 steps": 27 were
        bad.append("injected_launch_cut: GT00 advises %r" % reco[:60])


def main():
    binary, d = sys.argv[1], sys.argv[2]
    bad = []
    check(binary, d, bad)
    check_injected(binary, d, bad)
    check_stripped(binary, d, bad)
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
