#!/usr/bin/env python3
"""The diagnosis against what bench/gpu_torch_cases.py measured on a real GPU: for each case, the
rule its fault is for, that rule's verdict and predicted gain (the share of the step without the
profiler) beside the gain its fix measured, the other rules that warned, and the step the trace
would take without the profiler beside the step timed without it.

Then the same for the fixes' own traces (a healthy step's where the case has no fix), whose
launch cost the script measured by running the step as one CUDA graph: GT04's verdict and
predicted gain beside that measured gain, and GT05's.

usage: gpu_torch_judge.py GPROF_TRAIN DIR   (DIR: gpu_torch_cases.py's output folder)
Exit 0; a line per case, then how many predicted gains are within 25% of the measured ones."""
import json
import os
import subprocess
import sys

RULE_FOR = {"sync": "GT08", "pageable": "GT06", "loader": "GT01", "fp32": "GT13",
            "launch": "GT04", "pause": "GT14", "healthy": None}


def diagnose(binary, path):
    p = subprocess.run([binary, "diagnose", "--format", "json", path], capture_output=True,
                       text=True, timeout=300)
    if not p.stdout.strip():
        return None
    return json.loads(p.stdout)["traces"][0]


def predicted(f):
    w = (f.get("estimated_gain") or {}).get("without_profiler") or {}
    if "low_pct" not in w:
        return None, None
    return w["low_pct"], w["high_pct"]


def unprofiled_step(t):
    for f in t["findings"]:
        w = (f.get("estimated_gain") or {}).get("without_profiler") or {}
        if f["fired"] and "step_us" in w:
            return w["step_us"] / 1e3
    return None


def judge(binary, d, case, m):
    t = diagnose(binary, os.path.join(d, case + "_fault.json.gz"))
    if t is None:
        return None
    fired = {f["id"]: f for f in t["findings"] if f["fired"] and f["severity"] in ("warn", "crit")}
    rule = RULE_FOR.get(case)
    row = {"case": case, "rule": rule or "-", "measured": m.get("gain_pct")}
    if rule:
        f = next(f for f in t["findings"] if f["id"] == rule)
        row["verdict"] = f["severity"]
        row["low"], row["high"] = predicted(f)
    row["others"] = sorted(k for k in fired if k != rule)
    row["step_est"], row["step_meas"] = unprofiled_step(t), m.get("fault_ms")
    return row


def within(row):
    if row.get("low") is None or row.get("measured") is None:
        return None
    lo, hi, meas = row["low"], row["high"], row["measured"]
    return lo - 0.25 * meas <= meas <= hi + 0.25 * meas


def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def verdict(t, rule):
    f = next(f for f in t["findings"] if f["id"] == rule)
    lo, hi = predicted(f)
    return f["severity"], lo, hi


def judge_graphs(binary, d, measured):
    """GT04 on each fix's trace against the fix's own step as one CUDA graph."""
    print("\nthe fix as one CUDA graph (GT04's fix) against the fix's trace:")
    print("case      trace   GT04     predicted    measured  within  GT05     predicted")
    good = total = 0
    for case, m in measured.items():
        g = m.get("graph") if isinstance(m, dict) else None
        if not g or "gain_pct" not in g:
            continue
        side = "fix" if os.path.exists(os.path.join(d, case + "_fix.json.gz")) else "fault"
        t = diagnose(binary, os.path.join(d, "%s_%s.json.gz" % (case, side)))
        if t is None:
            continue
        sev, lo, hi = verdict(t, "GT04")
        sev5, lo5, hi5 = verdict(t, "GT05")
        row = {"low": lo, "high": hi, "measured": g["gain_pct"]}
        ok = within(row) if sev in ("warn", "crit") else None
        total += ok is not None
        good += bool(ok)
        pr = lambda a, b: "%s-%s%%" % (fmt(a, ".0f"), fmt(b, ".0f")) if a is not None else "-"
        print("%-9s %-7s %-8s %-12s %-9s %-7s %-8s %s" % (
            case, side, sev, pr(lo, hi), fmt(g["gain_pct"], ".1f") + "%",
            {None: "-", True: "yes", False: "no"}[ok], sev5, pr(lo5, hi5)))
    print("GT04's predicted gains within 25%% of the graph's measured: %d of %d" % (good, total))


def judge_alts(binary, d, measured):
    """Other findings of a fault's trace against their own fixes timed on the fault (ALT)."""
    print("\nother findings of the faults' traces, their fixes timed on the fault:")
    print("case      rule  verdict  predicted    measured  within")
    for case, m in measured.items():
        alts = m.get("alt") if isinstance(m, dict) else None
        t = diagnose(binary, os.path.join(d, case + "_fault.json.gz")) if alts else None
        for rule, g in (alts or {}).items():
            if t is None or "gain_pct" not in g:
                continue
            sev, lo, hi = verdict(t, rule)
            ok = within({"low": lo, "high": hi, "measured": g["gain_pct"]}) \
                if sev in ("warn", "crit") else None
            pred = "%s-%s%%" % (fmt(lo, ".0f"), fmt(hi, ".0f")) if lo is not None else "-"
            print("%-9s %-5s %-8s %-12s %-9s %s" % (
                case, rule, sev, pred, fmt(g["gain_pct"], ".1f") + "%",
                {None: "-", True: "yes", False: "no"}[ok]))


def main():
    binary, d = sys.argv[1], sys.argv[2]
    with open(os.path.join(d, "measured.json")) as fh:
        measured = json.load(fh)
    print("case      rule  verdict  predicted    measured  within  step est/timed   others warn+")
    good = total = 0
    for case in RULE_FOR:
        m = measured.get(case)
        row = judge(binary, d, case, m) if m and "error" not in m else None
        if not row:
            continue
        ok = within(row)
        total += ok is not None
        good += bool(ok)
        pred = ("%s-%s%%" % (fmt(row["low"], ".0f"), fmt(row["high"], ".0f"))
                if row.get("low") is not None else "-")
        print("%-9s %-5s %-8s %-12s %-9s %-7s %5s/%-8s %s" % (
            case, row["rule"], row.get("verdict", "-"), pred,
            fmt(row["measured"], ".1f") + "%" if row["measured"] is not None else "-",
            {None: "-", True: "yes", False: "no"}[ok], fmt(row["step_est"], ".2f"),
            fmt(row["step_meas"], ".2f") + " ms", ",".join(row["others"]) or "-"))
    print("predicted gains within 25%% of the measured: %d of %d" % (good, total))
    judge_graphs(binary, d, measured)
    judge_alts(binary, d, measured)
    return 0


if __name__ == "__main__":
    sys.exit(main())
