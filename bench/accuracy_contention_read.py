#!/usr/bin/env python3
"""Helpers of accuracy_contention.sh.

  accuracy_contention_read.py RULE < diagnose.json
      one line: "fire <severity> <metric>% <gain>%" or "quiet - <metric>% -", and the knob
      after a tab (the rule's on the first trace)
  accuracy_contention_read.py --strip IN.json.gz OUT.json.gz
      the same trace without the trainer's CPU accounting (its "gprof" keys and libprof's step
      args): what the rule sees of a PyTorch run
  accuracy_contention_read.py --mean-step < diagnose.json
      the mean step time in us
  accuracy_contention_read.py --record NAME EXPECT < diagnose.json
      the case as one JSON line for accuracy_table.py: judged on GT19 (EXPECT: fire or quiet;
      `any`: GT19 not judged), on GT14 (no outliers are put in: beside the load its outliers
      must defer to GT19 or say the machine ran slower), and on GT01 where the case starves the
      loader on purpose
"""
import gzip
import json
import sys

ACCOUNTING = ("step_wall_ns", "step_thread_cpu_ns", "loader_cpu_ns", "other_cpu_ns",
              "loop_wall_ns", "train_runq_ns", "loader_runq_ns")
STEP_ARGS = ("gprof_thread_cpu_ns", "gprof_runq_ns")  # trace_schema.h GP_ARG_STEP_*


def strip(src, dst):
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    for k in ACCOUNTING:
        doc.get("gprof", {}).pop(k, None)
    for ev in doc.get("traceEvents", []):
        args = ev.get("args") if isinstance(ev, dict) else None
        if isinstance(args, dict):
            for k in STEP_ARGS:
                args.pop(k, None)
            if not args and str(ev.get("name", "")).startswith("ProfilerStep#"):
                del ev["args"]
    with gzip.open(dst, "wt") as f:
        json.dump(doc, f)


def verdict(rule):
    trace = json.load(sys.stdin)["traces"][0]
    f = next(x for x in trace["findings"] if x["id"] == rule)
    metric = f["metric"]["value"] if f.get("metric") else 0
    if not f["fired"]:
        print(f"quiet - {metric:.1f}% -")
        return
    gain = (f.get("estimated_gain") or {}).get("share_of_step_pct", 0)
    print(f"fire {f['severity']} {metric:.1f}% {gain:.1f}%\t{f.get('knob') or ''}")


STARVED = ("starved_png", "torch_starved")  # the loader in the training thread, on purpose


def record(name, expect):
    trace = json.load(sys.stdin)["traces"][0]
    fired = sorted({f["id"] for f in trace["findings"] if f["severity"] in ("warn", "crit")})
    base = name.split(".")[0]
    extra = ["GT01"] if base in STARVED else []
    judged = ["GT14"] + ([] if expect == "any" else ["GT19"]) + extra
    print(json.dumps({"name": name, "source": "contention", "must":
                      (["GT19"] if expect == "fire" else []) + extra, "may": [],
                      "fired": fired, "rules": judged}))


def main():
    if sys.argv[1] == "--strip":
        strip(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--record":
        record(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--mean-step":
        print(json.load(sys.stdin)["traces"][0]["mean_step_us"])
    else:
        verdict(sys.argv[1])


if __name__ == "__main__":
    main()
