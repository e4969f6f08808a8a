#!/usr/bin/env python3
"""GT18's predicted gain against its fix, timed, over a batch sweep of its two families
(bench/torch_cases.py: lstm_bN, an LSTMCell loop; lossloop_bN, a loss written as a loop over
the samples). Each case runs as accuracy_torch.py runs it (its own session, SCHED_FIFO where
root; the fix timed in interleaved windows, the thread's CPU time, without the profiler), then
`diagnose -r GT18`; one line a case, and with --json the table (the traces kept with --keep).

usage: gt18_sweep.py GPROF_TRAIN [--batches 4,16,...] [--families lstm,lossloop]
                     [--json FILE] [--keep DIR] [--repeat N]
       gt18_sweep.py GPROF_TRAIN --rediagnose FILE...   (a --json table whose traces were kept:
                     each trace diagnosed again, its earlier prediction beside the new one)"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import accuracy_torch as at


def gt18(binary, trace):
    p = subprocess.run([binary, "diagnose", "-f", "json", "-r", "GT18", trace],
                       capture_output=True, text=True)
    f = json.loads(p.stdout)["traces"][0]["findings"][0]
    return f["severity"], at.predicted(f) if f["severity"] in ("warn", "crit") else None


def err(pred, measured):
    return "-" if pred is None else "%+.0f%%" % (100 * (pred / measured - 1))


def rediagnose(binary, files):
    rows = [r for f in files for r in json.load(open(f))]
    out = 0
    for r in rows:
        sev, pred = gt18(binary, r["trace"])
        bad = pred is None or abs(pred / r["measured"] - 1) > 0.25
        out += bad
        print("%-14s r%d measured %5.1f%%  before %5s %5s  now %-4s %5s %5s%s" % (
            r["case"], r["rep"], r["measured"],
            "-" if r["predicted"] is None else "%.1f" % r["predicted"],
            err(r["predicted"], r["measured"]), sev, "-" if pred is None else "%.1f" % pred,
            err(pred, r["measured"]), "  (outside 25%)" if bad else ""))
    print("%d of %d outside 25%% of the measured gain" % (out, len(rows)))
    return 0


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("binary")
    ap.add_argument("--batches", default="4,16,64,128,256,512")
    ap.add_argument("--families", default="lstm,lossloop")
    ap.add_argument("--json")
    ap.add_argument("--keep")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--rediagnose", nargs="+")
    a = ap.parse_args()
    if a.rediagnose:
        return rediagnose(a.binary, a.rediagnose)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        keep = a.keep or tmp
        os.makedirs(keep, exist_ok=True)
        for rep in range(a.repeat):
            for fam in a.families.split(","):
                for b in a.batches.split(","):
                    name = "%s_b%s" % (fam, b)
                    trace = os.path.join(keep, "%s.r%d.pt.trace.json" % (name, rep))
                    m = at.run_case(name, trace, ["--no-sweep"])
                    sev, pred = gt18(a.binary, trace)
                    load = os.getloadavg()[0]
                    rows.append({"case": name, "rep": rep, "trace": trace, "severity": sev,
                                 "predicted": pred, "measured": m["fix_gain_pct"],
                                 "loop_ms": m["loop_ms"], "fixed_ms": m["fixed_ms"],
                                 "load": load})
                    err = "" if pred is None else "%+.0f%%" % (100 * (pred / m["fix_gain_pct"] - 1))
                    print("%-14s r%d GT18 %-4s predicted %5s measured %5.1f%% %6s  "
                          "(loop %.2f ms, fixed %.2f ms, load %.1f)" % (
                              name, rep, sev, "-" if pred is None else "%.1f" % pred,
                              m["fix_gain_pct"], err, m["loop_ms"], m["fixed_ms"], load),
                          flush=True)
                    if a.json:
                        with open(a.json, "w") as f:
                            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
