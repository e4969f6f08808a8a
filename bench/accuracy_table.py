#!/usr/bin/env python3
"""The accuracy suite's one table (issue 24 §1): per rule, true/false positives and negatives,
precision and recall over every source, and the predicted gain beside the measured one where a
fix was timed.

Sources: the bundled trainer on the CPU (bench_accuracy.py --json), the simulated GPU
(accuracy_gpu.py --json), PyTorch CPU loops (accuracy_torch.py --json), the trainer and a
PyTorch CNN beside busy loops (accuracy_contention.sh's GP_CONTENTION_JSON, one case a line),
and multi-rank jobs (accuracy_job.py, imported if present: its cases() and make(case, dir) give
the jobs, `gprof-train job` the verdicts; they judge GT16 only). A case is judged on the rules it
lists (GPU, contention, job cases), else (CPU and PyTorch cases) on every rule but GT16, except
those it allows (consequences of its fault). Every rule GT00-GT20 gets a row, and so do the
techniques the GPU cases judge from the findings' knobs (accuracy_gpu.TECHNIQUES: T-ckpt,
activation checkpointing; T-graphs, CUDA graphs), with checkpointing's predicted beside measured
memory saving (GiB).

usage: accuracy_table.py GPROF_TRAIN [--cpu FILE] [--gpu FILE] [--torch FILE]
                         [--contention FILE] [--no-job] [--cases] [--markdown]
--cases: list every case with the rules it must fire and those that fired.
--markdown: the table (with each rule's title) and the cases as README's markdown."""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import accuracy_gpu  # noqa: E402
import gain_stats  # noqa: E402


def job_results(binary):
    """GT16's verdicts on accuracy_job.py's cases, as suite results ([] without the module)."""
    try:
        import accuracy_job
    except ImportError:
        return []
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in accuracy_job.cases():
            d = os.path.join(tmp, case["name"])
            accuracy_job.make(case, d)
            fired, rank, cost = accuracy_job.verdict(binary, d)
            must = ["GT16"] if case["rank"] is not None else []
            gain = None
            if case.get("cost_ms") and cost is not None:  # the cost a step, as a gain's stand-in
                gain = {"rule": "GT16", "case": case["name"], "predicted": cost,
                        "measured": case["cost_ms"], "unit": "ms"}
            # a straggler named at the wrong rank counts as a miss and a false alarm
            out.append({"name": case["name"], "source": "job", "must": must, "may": [],
                        "fired": ["GT16"] if fired else [],
                        "wrong_rank": bool(fired and must and rank != case["rank"]),
                        "rules": ["GT16"], "gain": gain})
    return out


def load(path):
    """A JSON list of cases, or one case a line."""
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        text = f.read().strip()
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


ALL_RULES = ["GT%02d" % i for i in range(21)] + sorted(accuracy_gpu.TECHNIQUES)


def judged(results):
    """Every rule a result is judged on: its own list, or (CPU cases) all the suite's rules but
    GT16, which needs a job."""
    everything = sorted(set(ALL_RULES) | {x for r in results
                                          for x in r["must"] + r["fired"] + r.get("rules", [])})
    for r in results:
        if "rules" not in r:
            r["rules"] = [x for x in everything if x != "GT16"]
    return everything


def counts(results, rule):
    tp = fp = fn = tn = 0
    for r in results:
        if rule not in r["rules"] or (rule in r["may"] and rule not in r["must"]):
            continue
        must, got = rule in r["must"], rule in r["fired"] and not r.get("wrong_rank")
        tp += must and got
        fn += must and not got
        fp += (rule in r["fired"]) and not (must and got)
        tn += not must and rule not in r["fired"]
    return tp, fp, fn, tn


def gains_of(results, rule):
    """'pred/meas±pm%, ... (N of M within 25%[, K unresolved])': a ± where the measurement has
    one; unresolved where its interval straddles an end of the 25% band (gain_stats.judge)."""
    g = [r["gain"] for r in results if r.get("gain") and r["gain"]["rule"] == rule and
         r["gain"].get("predicted") is not None and r["gain"].get("measured") is not None]
    if not g:
        return "-"
    pairs = ", ".join(gain_stats.fmt(x["predicted"], x["measured"], x.get("measured_pm"),
                                     x.get("unit", "%")) for x in g)
    v = [gain_stats.judge(x["predicted"], x["measured"], x.get("measured_pm")) for x in g]
    unresolved = v.count("unresolved")
    return "%s (%d of %d within 25%%%s)" % (
        pairs, v.count("within"), len(g),
        ", %d unresolved: the ± spans an end of the band" % unresolved if unresolved else "")


def pct(a, b):
    return "%5.0f%%" % (100.0 * a / b) if b else "     -"


def rule_names(bin_):
    """GTxx -> its title, from `diagnose --list-rules` ({} where that fails)."""
    try:
        out = subprocess.run([bin_, "diagnose", "--list-rules"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    names = {"T-ckpt": "activation checkpointing advised (GT10)",
             "T-graphs": "CUDA graphs advised (GT04/GT05)", "GT16": "straggler (jobs)"}
    for line in out.splitlines():
        m = re.match(r"^(GT[0-9]+) +[a-z0-9_]+ +(.+)$", line)
        if m:
            names[m.group(1)] = m.group(2)
    return names


def print_cases_markdown(results):
    """Every case as a markdown table row: its source, the rules it must fire, those that fired."""
    print("\n| case | source | must fire | fired | may fire |")
    print("|---|---|---|---|---|")
    for r in results:
        may = "any" if len(r["may"]) > 10 else ", ".join(r["may"])
        print("| `%s` | %s | %s | %s | %s |" % (r["name"], r["source"],
                                               ", ".join(r["must"]) or "-",
                                               ", ".join(r["fired"]) or "-", may))


def print_cases(results, markdown=False):
    if markdown:
        return print_cases_markdown(results)
    print("\ncase                              source      must           fired")
    for r in results:
        may = "ANY" if len(r["may"]) > 10 else ",".join(r["may"])
        print("%-33s %-11s %-14s %s%s" % (r["name"], r["source"], ",".join(r["must"]) or "-",
                                         ",".join(r["fired"]) or "-",
                                         "  (may: %s)" % may if may else ""))


def print_table(results, markdown=False, names=None):
    rules = judged(results)
    names = names or {}
    by_source = {}
    for r in results:
        by_source[r["source"]] = by_source.get(r["source"], 0) + 1
    print("\n== accuracy: %s cases" % ", ".join("%d %s" % (n, s) for s, n in
                                                sorted(by_source.items())))
    if markdown:
        print("| rule | TP | FP | FN | TN | precision | recall | predicted / measured gain |")
        print("|---|---|---|---|---|---|---|---|")
    else:
        print("rule   TP  FP  FN  TN  precision  recall  cases +/-  predicted/measured gain")
    for rule in rules:
        tp, fp, fn, tn = counts(results, rule)
        flag = "" if (not tp + fp or tp / (tp + fp) >= 0.9) and (not tp + fn or
                                                                 tp / (tp + fn) >= 0.9) \
            else "  < 0.9"
        if markdown:
            g = gains_of(results, rule)
            print("| %s | %d | %d | %d | %d | %s | %s | %s |" % (
                (rule + " " + names[rule]) if rule in names else rule, tp, fp, fn, tn,
                pct(tp, tp + fp).strip(), pct(tp, tp + fn).strip(),
                "" if g == "-" else g))
            continue
        print("%-5s %3d %3d %3d %3d     %s  %s  %4d/%-4d %s%s" % (
            rule, tp, fp, fn, tn, pct(tp, tp + fp), pct(tp, tp + fn), tp + fn, fp + tn,
            gains_of(results, rule), flag))
    timed = [r["gain"] for r in results if r.get("gain") and
             r["gain"].get("predicted") is not None and r["gain"].get("measured") is not None]
    errors = [abs(x["predicted"] - x["measured"]) / x["measured"] * 100 for x in timed
              if x["measured"] > 0]
    v = [gain_stats.judge(x["predicted"], x["measured"], x.get("measured_pm")) for x in timed]
    if errors:
        print("gain error: median %.0f%%, worst %.0f%% of the measured gain over %d timed fixes "
              "(goal: within 25%%): %d within, %d off, %d unresolved (the measurement's ± spans "
              "an end of the 25%% band)" % (statistics.median(errors), max(errors), len(errors),
                                       v.count("within"), v.count("off"), v.count("unresolved")))


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    opt = lambda k: args[args.index(k) + 1] if k in args else None  # noqa: E731
    results = sum((load(opt(k)) for k in ("--cpu", "--gpu", "--torch", "--contention")), [])
    if "--no-job" not in args:
        results += job_results(args[0])
    if not results:
        print("accuracy_table: no results")
        return 1
    markdown = "--markdown" in args
    if "--cases" in args:
        print_cases(results, markdown)
    print_table(results, markdown, rule_names(args[0]) if markdown else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
