#!/usr/bin/env python3
"""The accuracy suite's PyTorch cases (issue 24 §1): real torch.profiler traces of small CPU
training loops (bench/torch_cases.py, run with the torch venv of scripts/torch_venv.sh or
GP_TORCH_PYTHON), each with a fault put in on purpose or none, diagnosed by `gprof-train
diagnose`. GT18 (many tiny CPU operators): an LSTMCell loop at batches 4, 16, 64 and 256, whose
step is mostly per-operator overhead, against the same loop at batch 1024 (the near miss: its
arithmetic grows with the batch) and a wide MLP, and a second family, an MLP whose loss is a
Python loop over the samples (batches 4-256: its tiny ops grow in number with the batch); GT17
(optimizer-bound): per-parameter Adam on many small tensors (per-tensor and foreach) against
Adam at batch 1024 and the rest. Each case
runs in its own session (autogroup nice -20, SCHED_FIFO where root) so the machine's other load
takes little of it. Predicted gains are set beside what the same process measured without the
profiler: GT18's beside its fix timed (the loop against one nn.LSTM over the sequence, or the
loss as one pass over the batch, interleaved windows), GT17's beside the optimizer's median
share of the step. GT18's fix is timed in 8 rounds, each a window of the loop beside one of the
fix: the measured gain is the median of the rounds' gains with its bootstrap 95% interval
(gain_stats), judged as the trainer's paired runs are. The predicted gain is the share of the
step without the profiler where the rule priced its gain net of the profiler's own cost (one
share: GT18), else the share of the profiled step.

usage: accuracy_torch.py GPROF_TRAIN [--json FILE] [--keep DIR] [--fast]
--fast: the cases marked for ctest (torch_accuracy_verdicts), judged on GT17 and GT18 only (a
one-off stall of a short profiled window can fire GT14 or GT19); exit 1 if one is wrong.
Without a python that has torch it prints why and writes no cases (exit 0)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import gain_stats

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.environ.get("GP_TORCH_VENV", os.path.expanduser("~/.cache/gprof-train/torch-venv"))
PY = os.environ.get("GP_TORCH_PYTHON", os.path.join(VENV, "bin", "python"))
# The fast set (ctest) holds the LSTM at batch 2048 as its GT18 negative, not the near miss at
# 1024: that one reads 22-23% against GT18's 25% on a quiet machine and crossed it in a clean
# clone's `make test` and in 2 of 3 runs beside a busy loop (2026-11-27), so the full suite
# keeps it and reports its flips; at 2048 the loop reads 8%.
FAST = ("lstm_b4", "lstm_b2048", "lossloop_b16", "opt_high", "opt_low")
JUDGED_FAST = ("GT17", "GT18")

# name, rules that must fire, rules that may (opt_near sits at GT17's 30%: warn is fair, quiet
# too), the rule whose gain is timed and the measured key of torch_cases.py
CASES = [
    ("lstm_b4", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("lstm_b16", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("lstm_b64", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("lstm_b256", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("lstm_b1024", [], [], None),
    ("lstm_b2048", [], [], None),
    # the second family: a loss looped over the samples, its fix one pass over the batch
    ("lossloop_b4", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("lossloop_b16", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("lossloop_b64", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("lossloop_b256", ["GT18"], [], ("GT18", "fix_gain_pct")),
    ("mlp_big", [], [], None),
    # at batch 2 the 16-layer MLP's forward and backward are tiny ops too: GT18 is fair there
    ("opt_high", ["GT17"], ["GT18"], ("GT17", "opt_share_pct")),
    ("opt_foreach", ["GT17"], ["GT18"], ("GT17", "opt_share_pct")),
    ("opt_near", [], ["GT17"], None),
    ("opt_low", [], [], None),
]
ISOLATE = ("echo -20 >/proc/self/autogroup 2>/dev/null || true; "
           "if chrt -f 10 true 2>/dev/null; then exec chrt -f 10 \"$@\"; fi; exec \"$@\"")


def run_case(name, trace, flags=()):
    p = subprocess.run(["setsid", "-w", "sh", "-c", ISOLATE, "sh", PY,
                        os.path.join(HERE, "torch_cases.py"), *flags, name, trace],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit("torch_cases.py %s: exit %d: %s" % (name, p.returncode, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])


def findings(binary, trace):
    p = subprocess.run([binary, "diagnose", "--format", "json", trace], capture_output=True,
                       text=True, check=True)
    return json.loads(p.stdout)["traces"][0]["findings"]


def predicted(f):
    """The finding's gain: without the profiler where the rule priced that as one share."""
    g = f.get("estimated_gain") or {}
    w = g.get("without_profiler") or {}
    if w.get("step_us") and w.get("low_pct") == w.get("high_pct"):
        return w["low_pct"]
    return g.get("share_of_step_pct")


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("binary")
    ap.add_argument("--json")
    ap.add_argument("--keep")
    ap.add_argument("--fast", action="store_true")
    a = ap.parse_args()
    if subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode != 0:
        print("accuracy_torch: no python with torch at %s: PyTorch cases skipped" % PY)
        return 0
    results, bad = [], []
    with tempfile.TemporaryDirectory() as tmp:
        keep = a.keep or tmp
        os.makedirs(keep, exist_ok=True)
        for name, must, may, timed in [c for c in CASES if not a.fast or c[0] in FAST]:
            trace = os.path.join(keep, name + ".pt.trace.json")
            measured = run_case(name, trace)
            fs = findings(a.binary, trace)
            fired = sorted({f["id"] for f in fs if f["severity"] in ("warn", "crit")})
            gain = None
            if timed:
                f = [x for x in fs if x["id"] == timed[0] and x["severity"] in ("warn", "crit")]
                pred = predicted(f[0]) if f else None
                gain = {"rule": timed[0], "case": name, "predicted": pred,
                        "measured": measured.get(timed[1])}
                if measured.get("round_gains_pct"):  # the rounds as pairs: median and its ±
                    gain["measured"], gain["measured_pm"] = \
                        gain_stats.median_pm(measured["round_gains_pct"])
            results.append({"name": name, "source": "torch", "must": must, "may": may,
                            "fired": fired, "gain": gain})
            wrong = [x for x in must if x not in fired] + \
                [x for x in fired if x not in must + may and (not a.fast or x in JUDGED_FAST)]
            bad += [name] if wrong else []
            print("%-12s must %-6s fired %-16s %s%s" % (
                name, ",".join(must) or "-", ",".join(fired) or "-",
                "ok" if not wrong else "WRONG (%s)" % ",".join(wrong),
                "" if not gain else "  %s predicted %s%%, measured %.1f%%%s" % (
                    gain["rule"], "-" if gain["predicted"] is None else
                    "%.1f" % gain["predicted"], gain["measured"] or 0,
                    " ± %.1f" % gain["measured_pm"] if "measured_pm" in gain else "")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if a.fast and bad else 0


if __name__ == "__main__":
    sys.exit(main())
