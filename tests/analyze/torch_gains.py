#!/usr/bin/env python3
"""GT18's predicted gain against its fix, measured (issue 24: within 25% of the measured gain).
Each case in tests/data/torch/gains (made by make_gain_traces.py) is a torch.profiler trace of one
of GT18's two families at one batch and the gain of its fix, timed without the profiler on the
same machine: an LSTMCell loop (lstm_bN) against one nn.LSTM, and an MLP whose loss is a Python
loop over the samples (lossloop_bN) against the same loss as one pass over the batch. The
median-capped model before (each tiny leaf up to the median one, the gaps between leaves) said
73.5% for lossloop_b4 (fix 27.7%: the MLP's ops counted as the loop's) and 48.9% for
lossloop_b64 (fix 83.3%). GT18 must fire, price its gain without the profiler as one share
(the profiler's records inside the tiny ops are its own cost, not the loop's: the profiled
share said 79% where the fix gained 71%, 72% for 57%, 53% for 34%), and that share must be
within 25% of the measured gain, or, where GT18 says its pricing is a model that errs there
(most of the tiny ops' time taken for arithmetic: 'fixes measured A-Bx such a prediction in N
of M runs' in the gain's why, at most medium-sure), the measured gain must lie within the A-B it states.
lstm_b256_load9 is such a case (an LSTMCell loop at batch 256 at load 9: 49.7% predicted, 28.8%
measured; made by make_gain_traces.write). No torch is needed here.
Where the fix gains under GT18's 25%, GT18 must stay quiet: lstm_b1024 (an LSTMCell loop at batch
1024, whose tiny operators read 26-27% of the step while nn.LSTM gained 0.4-2.1%; GT18 fired).
usage: torch_gains.py GPROF_TRAIN GAINS_DIR"""
import json
import os
import re
import subprocess
import sys


QUIET_UNDER = 25.0  # GT18's warn_pct: a fix that gains less is no finding


def gt18(binary, trace):
    out = subprocess.run([binary, "diagnose", "-f", "json", "-r", "GT18", trace],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{trace}: diagnose exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)["traces"][0]["findings"][0]


def check(binary, data, name):
    with open(os.path.join(data, name + ".measured.json")) as f:
        measured = json.load(f)["fix_gain_pct"]
    f = gt18(binary, os.path.join(data, name + ".json.gz"))
    if measured < QUIET_UNDER:
        print(f"{name}: GT18 {f['severity']} (measured {measured:.1f}%): {f['summary']}")
        return [] if f["severity"] not in ("warn", "crit") else [
            f"GT18 {f['severity']} where the fix gained {measured:.1f}%"]
    if f["severity"] not in ("warn", "crit"):
        return [f"GT18 {f['severity']} where the fix gained {measured:.0f}%"]
    w = f["estimated_gain"]["without_profiler"]
    print(f"{name}: GT18 {f['severity']}, predicted {w['low_pct']:.1f}-{w['high_pct']:.1f}% "
          f"without the profiler ({f['estimated_gain']['share_of_step_pct']:.1f}% of the "
          f"profiled step), measured {measured:.1f}%")
    if abs(w["high_pct"] - w["low_pct"]) > 0.5:
        return [f"the gain without the profiler is a range, {w['low_pct']:.0f}-{w['high_pct']:.0f}%"]
    if abs(w["low_pct"] - measured) <= 0.25 * measured:
        return []
    band = re.search(r"fixes measured ([0-9.]+)-([0-9.]+)x such a prediction", w["why"])
    if not band or w["sure"] == "high":
        return [f"predicted {w['low_pct']:.1f}%, measured {measured:.1f}%: more than 25% apart, "
                f"and the finding says it is {w['sure']}-sure: {w['why']}"]
    lo, hi = float(band.group(1)), float(band.group(2))
    print(f"   unsure of its split ({w['sure']}): measured {measured / w['low_pct']:.2f}x the "
          f"prediction, stated {lo}-{hi}x")
    if not lo * w["low_pct"] <= measured <= hi * w["low_pct"]:
        return [f"predicted {w['low_pct']:.1f}%, measured {measured:.1f}%: outside the stated "
                f"{lo}-{hi}x"]
    return []


def main():
    binary, data = sys.argv[1:3]
    names = sorted(f[:-len(".measured.json")] for f in os.listdir(data)
                   if f.endswith(".measured.json"))
    errors = [f"{n}: {e}" for n in names for e in check(binary, data, n)]
    for e in errors:
        print("FAIL", e)
    return 1 if errors or not names else 0


if __name__ == "__main__":
    sys.exit(main())
