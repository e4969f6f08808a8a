#!/usr/bin/env python3
"""bench/gain_stats.py's verdict on a predicted gain against a measured one with its 95%
interval: "within" only where every gain in the interval is one the prediction is within 25% of,
"off" only where none is, "unresolved" across an end, and the pairs asked for to settle it.
The cases are the accuracy suite's PNG loader fix on 2026-11-27 (predicted 48-49%, measured
32.7 ± 7.9 and 40.0 ± 5.9 in two runs): the median alone said "off" in one and "within" in the
other. usage: test_gain_stats.py BENCH_DIR"""
import sys

sys.path.insert(0, sys.argv[1])
import gain_stats as g  # noqa: E402

CASES = [
    # pred, measured, ±, verdict
    (48.9, 32.7, 7.9, "unresolved"),  # the interval 24.8-40.6 reaches 39.1 (48.9 / 1.25)
    (48.1, 40.0, 5.9, "unresolved"),  # 34.1-45.9 starts below 38.5
    (48.9, 20.0, 5.0, "off"),         # 15-25: far under 39.1
    (48.9, 47.0, 3.0, "within"),      # 44-50 inside 39.1-65.2
    (40.0, 40.0, 20.0, "unresolved"),  # wider than the whole range
    (81.1, 88.0, None, "within"),     # a point (simulated device): |err| <= 25% of it
    (2.4, 3.3, None, "off"),          # 3.3 > 2.4 / 0.75
    (-5.0, 3.0, 1.0, "off"),          # no positive gain is within 25% of a loss
    (None, 3.0, 1.0, "unresolved"),
]


def main():
    bad = []
    for pred, meas, pm, want in CASES:
        got = g.judge(pred, meas, pm)
        if got != want:
            bad.append(f"judge({pred}, {meas}, {pm}) = {got}, expected {want}")
    # pairs: none more where the verdict is settled; more, capped, where it is open
    settled = g.pairs_needed([47.0] * 5, 3.0, 48.9)
    open_ = g.pairs_needed([32.7] * 5, 7.9, 48.9)
    if settled != 5:
        bad.append(f"settled verdict asks for {settled} pairs, not 5")
    if not 5 < open_ <= 40:
        bad.append(f"open verdict asks for {open_} pairs, not 6-40")
    if g.pairs_needed([39.1] * 5, 7.9, 48.9) != 40:
        bad.append("a median on the range's end asks for the cap")
    for b in bad:
        print("FAIL:", b)
    print(f"{len(CASES)} verdicts and 3 pair counts checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
