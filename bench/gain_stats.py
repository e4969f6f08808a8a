"""A timed fix's measured gain with its uncertainty, and an honest "within 25%" judgement
(issue 24 §1), shared by bench_accuracy.py and accuracy_table.py.

`sweep` runs its settings in alternating order (A B B A A B ...), so the k-th timed run of the
baseline and the k-th of the fix ran next to each other: each such pair meets the same load, and
the ratio of the pair cancels what drifts between pairs. The measured gain is the median of the
per-pair gains (100 * (1 - fix/base)); its uncertainty is the half-width of a bootstrap 95%
interval of that median over the pairs.

A prediction is within 25% of a true gain g where |pred - g| <= 0.25 g, that is where g lies in
[pred / 1.25, pred / 0.75]. With the measurement's interval [meas - pm, meas + pm] for g, the
verdict is "within" where the whole interval lies in that range, "off" where none of it does,
and "unresolved" where it straddles an end: more pairs could still go either way (an
equivalence test, as TOST). On this 2-core VM the same trainer step ran 2.1 ms in one process
and 3.1 ms in the next (2026-11-27, quiet), so 5 pairs of the PNG loader's fix gave medians of
32.7-44.5% over four runs against one prediction of 48-50%: with the median alone, two runs said
"within" and two "off" of the same prediction.
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


def accepted(pred, band=BAND):
    """The true gains the prediction is within the band of: (lo, hi), or None for none."""
    if pred > 0:
        return pred / (1 + band), pred / (1 - band)
    return (0.0, 0.0) if pred == 0 else None


def pairs_needed(gains, pm, pred, band=BAND, cap=40):
    """Pairs for the interval to settle the verdict (its half-width under the distance from the
    median to the nearest end of the accepted range; it shrinks as one over the root of the
    pairs), at most `cap`."""
    med = statistics.median(gains) if gains else 0.0
    if pm is None or pred is None or judge(pred, med, pm, band) != "unresolved":
        return len(gains)
    acc = accepted(pred, band)
    dist = min(abs(med - acc[0]), abs(med - acc[1])) if acc else 0.0
    if dist < 1e-9 or not gains:
        return cap
    return min(cap, int(len(gains) * (pm / dist) ** 2) + 1)


def judge(pred, meas, pm=None, band=BAND):
    """'within', 'off' or 'unresolved': where the measured interval lies wholly inside the true
    gains the prediction is within the band of, wholly outside them, or across an end. Without
    a ± (a simulated device's deterministic timing) the interval is the point."""
    if pred is None or meas is None:
        return "unresolved"
    acc = accepted(pred, band)
    lo, hi = (meas - pm, meas + pm) if pm is not None else (meas, meas)
    if acc is None or hi < acc[0] or lo > acc[1]:
        return "off"
    return "within" if acc[0] <= lo and hi <= acc[1] else "unresolved"


def fmt(pred, meas, pm=None, unit="%"):
    """'8.0/12.1±2.3%': predicted / measured ± uncertainty."""
    s = "%.1f/%.1f" % (pred, meas)
    if pm is not None:
        s += "±%.1f" % pm
    return s + unit
