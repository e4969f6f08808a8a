#!/usr/bin/env python3
"""Check `gprof-train diagnose --format json` against the documented schema
("gprof-train.diagnose/1", see gp_findings_write() in analyze/include/gp/rules.h).
Usage: check_json.py GPROF_TRAIN TRACE|DIR...   Exit 0 when every document conforms."""
import json
import subprocess
import sys

SEVERITIES = ["ok", "info", "warn", "crit"]
UNITS = {"", "us", "%", "bytes", "count", "GB/s"}
NUM = (int, float)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def check_finding(f, where):
    keys = ["id", "name", "title", "severity", "fired", "metric", "summary", "recommendation",
            "knob", "estimated_gain", "evidence", "ranges"]
    check(list(f)[:len(keys)] == keys, "%s: keys %s" % (where, list(f)))
    check(f["severity"] in SEVERITIES, where + ": severity")
    check(f["fired"] == (f["severity"] != "ok"), where + ": fired vs severity")
    m = f["metric"]
    check(set(m) == {"name", "value", "unit", "threshold", "cmp"}, where + ": metric keys")
    check(m["value"] is None or isinstance(m["value"], NUM), where + ": metric value")
    check(m["unit"] in UNITS and m["cmp"] in (">=", "<"), where + ": metric unit/cmp")
    check(isinstance(f["summary"], str) and f["summary"], where + ": summary")
    check(f["fired"] or f["recommendation"] is None, where + ": quiet rule with advice")
    g = f["estimated_gain"]
    check(g is None or (set(g) == {"total_us", "per_step_us", "share_of_step_pct", "text",
                                   "without_profiler"}
                        and isinstance(g["total_us"], NUM)), where + ": gain")
    if g is not None:
        check_unprofiled(g, where)
    ev = f["evidence"]
    cols = ev["columns"]
    check(all(c["unit"] in UNITS for c in cols), where + ": column units")
    for row in ev["rows"]:
        check(len(row) == len(cols), where + ": row width")
        for c, v in zip(cols, row):
            check(isinstance(v, str) if c["unit"] == "" else (v is None or isinstance(v, NUM)),
                  where + ": cell type of " + c["name"])
    for r in f["ranges"]:
        check(set(r) == {"start_us", "dur_us", "label"} and r["dur_us"] >= 0, where + ": range")


def check_unprofiled(g, where):
    """The gain restated without the profiler: bounds that hold the profiled share when the
    profiler's cost is off the critical path, and a word on how sure. A rule that measured the
    profiler's part of its own gain (GT18: the records among its tiny ops) gives one share
    (low == high), net of that part, which need not hold the profiled share."""
    u = g["without_profiler"]
    keys = {"step_us", "low_pct", "high_pct", "sure", "why"}
    check(set(u) in (keys, keys | {"capture"}), where + ": unprofiled keys")
    check(0 <= u["low_pct"] <= u["high_pct"] <= 100, where + ": unprofiled bounds")
    check(u["sure"] in SURE and u["why"], where + ": sure")
    if "capture" in u:
        check_capture(u, where)
    point = u["low_pct"] == u["high_pct"] and 0 < u["low_pct"] < 100
    if u["step_us"] is not None and g["share_of_step_pct"] <= 100 and not point:
        check(u["low_pct"] - 0.01 <= g["share_of_step_pct"] <= u["high_pct"] + 0.01,
              where + ": profiled share %s outside [%s, %s]"
              % (g["share_of_step_pct"], u["low_pct"], u["high_pct"]))


SURE = ("low", "medium", "high")


def check_capture(u, where):
    """libprof's capture-health ledger on the finding: it bounds how sure, and the why names a
    loss whenever it lowers it."""
    c = u["capture"]
    check(set(c) == {"sure", "why"} and c["sure"] in SURE, where + ": capture keys")
    check((c["sure"] == "high") == (c["why"] == ""), where + ": capture why iff a loss")
    check(SURE.index(u["sure"]) <= SURE.index(c["sure"]), where + ": capture bounds sure")
    check(c["why"] in u["why"], where + ": the why names the loss")


def check_cost(t):
    """The profiler's own cost per trace: records times a cost, plus CUPTI's overhead events,
    libprof's scheduler reads at step boundaries and what CUPTI adds to the CUDA calls."""
    k = t["profiler_cost"]
    check(set(k) == {"per_step_us", "overhead_per_step_us", "step_reads_per_step_us",
                     "cupti_api_per_step_us", "records_per_step", "record_cost_ns", "source",
                     "step_cv"},
          t["trace"] + ": profiler_cost keys")
    check(k["source"] in ("none", "measured", "gaps", "torch"), t["trace"] + ": cost source")
    est = k["records_per_step"] * k["record_cost_ns"] / 1e3 + k["overhead_per_step_us"] + \
        k["step_reads_per_step_us"] + k["cupti_api_per_step_us"]
    check(abs(k["per_step_us"] - est) <= 0.01 + 1e-3 * est, t["trace"] + ": cost sum")


def rule_ids(binary):
    """The catalogue as `diagnose --list-rules` prints it: a finding per rule, no more."""
    out = subprocess.run([binary, "diagnose", "--list-rules"], stdout=subprocess.PIPE,
                         check=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("GT")}


def check_doc(doc, catalogue):
    check(doc["schema"] == "gprof-train.diagnose/1", "schema")
    worst = 0
    for t in doc["traces"]:
        for k in ("trace", "steps", "steps_analysed", "mean_step_us", "max_severity", "findings",
                  "profiler_cost"):
            check(k in t, "trace key " + k)
        check_cost(t)
        fired = [f["fired"] for f in t["findings"]]
        check(fired == sorted(fired, reverse=True), t["trace"] + ": fired findings first")
        ids = [f["id"] for f in t["findings"]]
        check(len(ids) == len(set(ids)) and set(ids) == catalogue,
              t["trace"] + ": one finding per rule of the catalogue")
        sev = max(SEVERITIES.index(f["severity"]) for f in t["findings"])
        check(SEVERITIES[sev] == t["max_severity"], t["trace"] + ": max_severity")
        worst = max(worst, sev)
        for f in t["findings"]:
            check_finding(f, "%s %s" % (t["trace"], f["id"]))
    check(SEVERITIES[worst] == doc["max_severity"], "document max_severity")


def main(argv):
    out = subprocess.run([argv[1], "diagnose", "--format", "json"] + argv[2:],
                         stdout=subprocess.PIPE, check=True).stdout
    doc = json.loads(out)
    check_doc(doc, rule_ids(argv[1]))
    print("ok: %d traces" % len(doc["traces"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
