#!/usr/bin/env python3
"""torch.profiler's own cost per record, measured (issue 24 §2): the same training step timed
without the profiler and inside a profiled window, interleaved in one process, for each of
torch.profiler's options (record_shapes, profile_memory, with_stack), on a model of many tiny
operators and on a plain MLP. Each profiled window's trace goes through `gprof-train diagnose`,
which says how many host records a step holds and what it estimates the profiler's cost to be;
the table sets that estimate beside the measured one (step time with minus without).

    chrt -f 10 python3 bench/torch_profiler_cost.py GPROF_TRAIN [--rounds N] [--json OUT]

Needs torch (CPU is enough). One thread (torch.set_num_threads(1)), as the fixtures in
tests/data/torch; times are the thread's CPU time, and SCHED_FIFO (chrt) keeps other load from
stretching the profiled steps. The per-record costs it prints are what rules_cost.c's constants
come from.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "data", "torch"))
import make_verdict_traces as cases  # noqa: E402  (the models of the GT17/GT18 fixtures)

OPTIONS = {
    "default": {},
    "record_shapes": {"record_shapes": True},
    "profile_memory": {"profile_memory": True},
    "with_stack": {"with_stack": True},
    "all three": {"record_shapes": True, "profile_memory": True, "with_stack": True},
}
MODELS = {"lstm_b4": lambda: cases.lstm(4), "opt_near": cases.opt_near}


def diagnose(binary, raw):
    out = subprocess.run([binary, "diagnose", "--format", "json", "--rule", "GT00", raw],
                         capture_output=True, text=True, check=True).stdout
    tr = json.loads(out)["traces"][0]
    return tr["profiler_cost"], tr


def measure(binary, model, kwargs, rounds, n, tmp):
    torch.manual_seed(0)
    case = MODELS[model]()
    cases.timed(case, 10)
    raw = os.path.join(tmp, f"{model}.json")
    cases.profiled(case, n, raw, **kwargs)
    est, _ = diagnose(binary, raw)
    m = cases.profiler_cost(case, n, rounds, **kwargs)
    recs, cost_us = est["records_per_step"], 1e3 * m["cost_ms"]
    return {"model": model, "options": kwargs, "step_without_us": 1e3 * m["step_without_ms"],
            "step_with_us": 1e3 * m["step_with_ms"], "measured_us": cost_us,
            "records_per_step": recs,
            "measured_ns_per_record": 1e3 * cost_us / recs if recs else None,
            "estimated_us": est["per_step_us"], "estimated_ns_per_record": est["record_cost_ns"],
            "source": est["source"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    print(f"{'model':10} {'options':15} {'without':>9} {'with':>9} {'measured':>9} "
          f"{'records':>8} {'ns/rec':>7} {'estimate':>9} {'est/meas':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in MODELS:
            for name, kwargs in OPTIONS.items():
                r = measure(a.binary, model, kwargs, a.rounds, a.steps, tmp)
                r["option_name"] = name
                rows.append(r)
                ratio = r["estimated_us"] / r["measured_us"] if r["measured_us"] > 0 else 0
                print(f"{model:10} {name:15} {r['step_without_us']:8.0f}u {r['step_with_us']:8.0f}u"
                      f" {r['measured_us']:8.0f}u {r['records_per_step']:8.0f}"
                      f" {r['measured_ns_per_record'] or 0:7.0f} {r['estimated_us']:8.0f}u"
                      f" {ratio:8.2f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
