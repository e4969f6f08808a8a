#!/usr/bin/env python3
"""How right is the diagnosis? (issue 14 item 4; a benchmark, not a timed test.)

A suite of bundled-trainer configurations on this machine's CPU, each with a known bottleneck
put in on purpose (or none), the findings it must produce and, implicitly, every other finding
it must not (a rule firing where the suite expects nothing counts as a false positive). Each case
is trained for --steps steps under the profiler and diagnosed; the script prints each rule's
precision and recall over the suite. Then, for each case with a fix, `gprof-train sweep` times
the baseline against the fixed setting without the profiler and the predicted gain (the finding's
saving per step over its mean step) is set beside the measured one (the drop of time per N
steps, or per epoch where the fix changes the batch size); it prints the error |predicted -
measured| in percentage points, median and worst.

The measured gain is the median of per-pair gains (sweep alternates its settings, so the k-th
runs of the baseline and of the fix ran side by side) with the half-width of its bootstrap 95%
interval (gain_stats.py). A fix whose interval straddles an end of the gains its prediction is
within 25% of gets more pairs (a second sweep, --no-profile) up to --max-pairs and --pair-budget
seconds: IDX's --workers 1 gains a few percent of a 1.5 s run, and a pair's gain on this shared
2-core VM scatters by 7-18 points (standard deviation, 2026-11-26 at load 6-13; about 6
estimated from quiet sweeps' spreads), so 5 pairs give about ±7 points or more against a band
of ±2-3, and 36 pairs at load 7-10 gave ±3.9. Each verdict says "unresolved" where the
interval still straddles an end, rather than calling a prediction right or wrong on noise.

Rules the CPU cannot reach (no GPU activity): GT02-GT13 and GT15 need kernels, copies, syncs or
device memory; GT16 needs a multi-rank job; GT18 needs >= 100 tiny operators a step, which the
bundled trainer never runs (accuracy_torch.py has its cases). GT14 (step outliers) has no knob
to inject; it is only expected not to fire. GT19 (CPU contention) is judged where the load is
put in on purpose (accuracy_contention.sh); here it may fire: its verdict follows the machine's
load, which the runs' own autogroup at nice -20 lessens but does not remove (at load 10 the
idx-adam-b512 run's training thread waited for a core 15% of the time).

usage: bench_accuracy.py GPROF_TRAIN [--png DIR] [--steps N] [--repeat N] [--out DIR]
                         [--json FILE] [--max-pairs N] [--pair-budget SECONDS] [--only CASE]
--json: the per-case verdicts and the timed gains, for accuracy_table.py's merged table.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

import gain_stats


# name, trainer flags, findings that must fire (warn or crit), the fix to sweep (KEY, BASE, FIX,
# steps each timed run trains: about a second, so a run's noise is a few percent of it; None for
# a fix that changes the batch size, timed per epoch)
SUITE = [
    # batches of 256: a PNG batch's decode is then several ms, well above GT01's 1 ms floor
    ("png-workers0", ["--data", "{png}", "--batch-size", "256", "--workers", "0"], ["GT01"],
     ("workers", "0", "1", 400)),
    # (png-workers-all, all cores but one decoding, is gone: its premise, a PNG batch taking
    # ~3x its training time to decode, no longer held on this VM with the files in the page
    # cache. Decoding took about as long as training, so on 2026-11-27 the loader waited
    # 2.4%, 3.9% and 5.4% of the step in three runs and 70.6% in a fourth, with the files read
    # from disk: no label fits both.)
    # SGD: Adam's update is 40% of a 64-sample mlp step on the CPU, which GT17 rightly reports.
    # Even IDX batches cost ~0.1 ms to assemble in the training thread, 15% of the step.
    # 400 IDX steps take 0.2 s: the measured gain ranged from 4% to 16% over four bench runs
    ("idx-sgd-workers0", ["--optimizer", "sgd", "--workers", "0"], ["GT01"],
     ("workers", "0", "1", 2000)),
    ("idx-sgd-workers1", ["--optimizer", "sgd", "--workers", "1"], [], None),
    ("idx-adam-b16", ["--workers", "1", "--batch-size", "16"], ["GT17"],
     ("batch-size", "16", "64", None)),
    ("idx-adam-b512", ["--workers", "1", "--batch-size", "512"], [], None),
]

# Each run (and each sweep, with the runs it starts) in a session of its own whose autogroup has
# nice -20 (Linux, as root): the machine's other load then takes little from it, so the cases'
# verdicts are for the quiet host they are labelled for (accuracy_contention.sh makes the cases
# under load on purpose). Not SCHED_FIFO: the trainer's loader and OpenBLAS threads would then
# never yield to each other.
ISOLATE = 'echo -20 >/proc/self/autogroup 2>/dev/null || true; exec "$@"'


def run(cmd, **kw):
    return subprocess.run(["setsid", "-w", "sh", "-c", ISOLATE, "sh"] + cmd,
                          capture_output=True, text=True, **kw)


def fired(bin_, args, steps, out):
    shutil.rmtree(out, ignore_errors=True)
    p = run([bin_, "run", "--device", "cpu", "--steps", str(steps), "--no-report", "-o", out]
            + args)
    if p.returncode != 0:
        sys.exit("run %s failed:\n%s" % (args, p.stderr))
    runs = [os.path.join(out, d) for d in os.listdir(out)]
    d = run([bin_, "diagnose", "--format", "json"] + runs)
    doc = json.loads(d.stdout)
    return sorted({f["id"] for t in doc["traces"] for f in t["findings"]
                   if f["severity"] in ("warn", "crit")})


def classify(results):
    rules = sorted({r for _, must, got in results for r in must + got})
    rows = []
    for rule in rules:
        tp = sum(1 for _, must, got in results if rule in must and rule in got)
        fn = sum(1 for _, must, got in results if rule in must and rule not in got)
        fp = sum(1 for _, must, got in results if rule not in must and rule in got)
        prec = tp / (tp + fp) if tp + fp else float("nan")
        rec = tp / (tp + fn) if tp + fn else float("nan")
        rows.append((rule, tp, fp, fn, prec, rec))
    return rows


def sweep_cmd(bin_, args, fix, repeat, steps, out):
    key, base, new, timed_steps = fix
    fixed = []
    for i in range(0, len(args), 2):  # the case's other flags stay fixed
        if args[i] != "--" + key:
            fixed += ["--vary", "%s=%s" % (args[i][2:], args[i + 1])]
    cmd = [bin_, "sweep", "--vary", "device=cpu", "--vary", "%s=%s,%s" % (key, base, new),
           "--repeat", str(repeat), "--profile-steps", str(steps), "-o", out] + fixed
    return cmd + (["--steps", str(timed_steps)] if timed_steps else [])


def sweep(cmd, name, out):
    shutil.rmtree(out, ignore_errors=True)
    p = run(cmd)
    if p.returncode != 0:
        sys.exit("sweep for %s failed:\n%s" % (name, p.stderr))
    print(p.stdout)
    with open(os.path.join(out, "sweep.json")) as f:
        doc = json.load(f)
    return doc, gain_stats.pair_gains(*(s["times_s"] for s in doc["settings"][:2]))


def gain(bin_, name, args, fix, rule, a, out):
    """The rule's predicted gain (the first sweep's profiled baseline) and the measured one: the
    median of per-pair gains with its ± (gain_stats), more pairs timed (--no-profile) while the ±
    leaves the verdict open (gain_stats.judge), up to --max-pairs and --pair-budget seconds."""
    # the profiled window as long as a timed run, so that the prediction meets the same spell of
    # the machine's load as the runs that measure it (100 IDX steps last 0.1 s: their windows saw
    # the other core free or busy, 7.3-7.6% or 0.0-1.4% predicted, within one sweep's minutes)
    cmd = sweep_cmd(bin_, args, fix, a.repeat, max(a.steps, fix[3] or 0), out)
    doc, pairs = sweep(cmd, name, out)
    pred = sweep_meas = None
    for x in doc["predictions"]:
        if x["id"] == rule:
            pred, sweep_meas = x["predicted_gain_pct"], x["measured_gain_pct"]
    meas, pm = gain_stats.median_pm(pairs)
    pair_s = sum(statistics.median(s["times_s"]) for s in doc["settings"][:2] if s["times_s"])
    want = min(gain_stats.pairs_needed(pairs, pm, pred, cap=a.max_pairs),
               len(pairs) + int(a.pair_budget / max(pair_s, 1e-3)), 32 + len(pairs))
    if want > len(pairs):
        more = sweep_cmd(bin_, args, fix, want - len(pairs), a.steps, out + "-more")
        _, extra = sweep(more + ["--no-profile"], name, out + "-more")
        pairs += extra
        meas, pm = gain_stats.median_pm(pairs)
    return {"rule": rule, "case": name, "predicted": pred, "measured": meas,
            "measured_pm": pm, "pairs": pairs, "sweep_measured": sweep_meas}


def say_verdict(g):
    if g["verdict"] == "unresolved":
        lo, hi = gain_stats.accepted(g["predicted"]) or (0, 0)
        return ("unresolved: the measured %.1f-%.1f%% (95%%) holds gains the prediction is "
                "within 25%% of (%.1f-%.1f%%) and gains it is not, so it cannot tell"
                % (g["measured"] - g["measured_pm"], g["measured"] + g["measured_pm"], lo, hi))
    return "%s 25%%" % ("within" if g["verdict"] == "within" else "off by more than")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--png", default="fmnist-png")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-pairs", type=int, default=40,
                    help="paired runs a fix may get while its ± leaves the verdict open")
    ap.add_argument("--pair-budget", type=float, default=90,
                    help="seconds of extra paired runs a fix may take")
    ap.add_argument("--out", default="/tmp/gp_bench_accuracy")
    ap.add_argument("--json", help="write the cases' verdicts and gains here")
    ap.add_argument("--no-gains", action="store_true", help="verdicts only: no sweeps")
    ap.add_argument("--only", action="append", help="run only this case (repeatable)")
    a = ap.parse_args()
    done = os.path.join(a.png, ".prepared")  # a prepare cut short is not a dataset
    prepared = all(os.path.isdir(os.path.join(a.png, d)) for d in ("train", "test"))
    if os.path.isdir(a.png) and not os.path.exists(done) and not prepared:
        sys.exit("%s exists and is not a prepared PNG folder (no train/ and test/)" % a.png)
    if not os.path.isdir(a.png):
        p = run([a.bin, "prepare", "--format", "png", a.png])
        if p.returncode != 0:
            shutil.rmtree(a.png, ignore_errors=True)
            sys.exit("cannot prepare %s: %s" % (a.png, p.stderr))
        open(done, "w").close()
    results = []
    suite = [c for c in SUITE if not a.only or c[0] in a.only]
    for name, args, must, _ in suite:
        args = [x.replace("{png}", a.png) for x in args]
        got = fired(a.bin, args, a.steps, os.path.join(a.out, name))
        results.append((name, must, got))
        print("%-14s must %-12s fired %s" % (name, ",".join(must) or "-", ",".join(got) or "-"))
    print("\nrule  TP FP FN  precision  recall")
    for rule, tp, fp, fn, prec, rec in classify(results):
        print("%-5s %2d %2d %2d  %8.0f%%  %5.0f%%" % (rule, tp, fp, fn, prec * 100, rec * 100))
    errors, rel, gains, verdicts = [], [], {}, []
    for name, args, must, fix in suite:
        if not fix or a.no_gains:
            continue
        args = [x.replace("{png}", a.png) for x in args]
        g = gain(a.bin, name, args, fix, must[0], a, os.path.join(a.out, "sweep-" + name))
        gains[name] = g
        pred, meas, pm = g["predicted"], g["measured"], g["measured_pm"]
        if pred is None or meas is None:
            print("%s: %s predicted %s, measured %s (not comparable)"
                  % (name, must[0], pred, "-" if meas is None else "%.1f%% ± %.1f" % (meas, pm)))
            continue
        g["verdict"] = gain_stats.judge(pred, meas, pm)
        verdicts.append(g["verdict"])
        errors.append(abs(pred - meas))
        rel.append(abs(pred - meas) / meas * 100 if meas > 0 else float("inf"))
        print("%s: %s predicted %.1f%% faster, measured %.1f%% ± %.1f (median of %d paired runs; "
              "the sweep's %.1f%%): error %.1f points (%.0f%% of the measured gain): %s"
              % (name, must[0], pred, meas, pm, len(g["pairs"]), g["sweep_measured"] or 0,
                 errors[-1], rel[-1], say_verdict(g)))
    if errors:
        print("gain error: median %.1f points, worst %.1f points over %d fixes; worst %.0f%% of "
              "the measured gain (goal: within 25%%): %d within, %d off, %d unresolved"
              % (statistics.median(errors), max(errors), len(errors), max(rel),
                 verdicts.count("within"), verdicts.count("off"), verdicts.count("unresolved")))
    if a.json:  # GT19 may: its verdict follows this machine's load, which nice -20 only lessens
        with open(a.json, "w") as f:
            json.dump([{"name": n, "source": "cpu", "must": m, "may": ["GT19"], "fired": g,
                        "gain": gains.get(n)} for n, m, g in results], f, indent=1)


if __name__ == "__main__":
    main()
