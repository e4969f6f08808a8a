"""A timed fix's measured gain with its uncertainty, and an honest "within 25%" judgement
(issue 24 §1), shared by bench_accuracy.py and accuracy_table.py.

`sweep` runs its settings in alternating order (A B B A A B ...), so the k-th timed run of the
baseline and the k-th of the fix ran next to each other: each such pair meets the same load, and
the ratio of the pair cancels what drifts between pairs. The measured gain is the median of the
per-pair gains (100 * (1 - fix/base)); its uncertainty is the half-width of a bootstrap 95%
interval of that median over the pairs. A prediction is judged against the 25% band around the
measured gain only where the measurement can resolve it: where the uncertainty is wider than the
band, the verdict is "unresolved" unless the prediction lies outside band and uncertainty both.
"""
import random
import statistics

BAND = 0.25  # a predicted gain within 25% of the measured one (issue 24)


def pair_gains(base, fix):
    """Per-pair gains in percent from two lists of run times, paired by position."""
    return [100.0 * (1.0 - f / b) for b, f in zip(base, fix) if b > 0]


def median_pm(gains, resamples=2000, seed=1):
    """(median, half-width of its bootstrap 95% interval); (None, None) without gains."""
    if not gains:
        return None, None
    med = statistics.median(gains)
    if len(gains) < 2:
        return med, float("inf")
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(gains, k=len(gains)))
                  for _ in range(resamples))
    lo, hi = meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]
    return med, (hi - lo) / 2


def pairs_needed(gains, pm, band=BAND, cap=40):
    """Pairs for the uncertainty to fit inside the band around the median (it shrinks as one over
    the root of the pairs), at most `cap`."""
    med = statistics.median(gains) if gains else 0.0
    if pm is None or pm <= band * abs(med):
        return len(gains)
    if abs(med) < 1e-9:
        return cap
    return min(cap, int(len(gains) * (pm / (band * abs(med))) ** 2) + 1)


def judge(pred, meas, pm=None, band=BAND):
    """'within', 'off' or 'unresolved' (the measurement's own uncertainty is wider than the band
    and the prediction is not outside both)."""
    if pred is None or meas is None:
        return "unresolved"
    width = band * max(meas, 0.0)
    err = abs(pred - meas)
    if pm is not None and pm > width:
        return "off" if err > width + pm else "unresolved"
    return "within" if err <= width and meas > 0 else "off"


def fmt(pred, meas, pm=None, unit="%"):
    """'8.0/12.1±2.3%': predicted / measured ± uncertainty."""
    s = "%.1f/%.1f" % (pred, meas)
    if pm is not None:
        s += "±%.1f" % pm
    return s + unit
