/* gp/compare.h: two sets of traces compared, BASE against NEW (issue 14): step time with a
 * verdict that tells a change from noise, the step-time breakdown, the key-averages rows and
 * device activities that moved most, peak memory, and the findings resolved, new and still there.
 * Each trace is analysed alone and summarised into a small gp_compare_part (its analysed step
 * times, breakdown, key-averages totals, peak memory, findings); a side may hold several traces
 * (ranks or repeats), whose steps are pooled.
 *
 * The verdict: NEW is "faster" or "slower" only when both a two-sided Mann-Whitney U test on the
 * per-step times gives p < 0.05 and the 95% bootstrap confidence interval of the change of the
 * mean step time (2000 resamples, fixed seed: the same inputs always give the same interval)
 * excludes zero; otherwise "no clear change". With fewer than 3 steps on a side there is no
 * test: "too few steps". Steps are the analysed ones (the first, warm-up step of a trace with
 * ProfilerStep#N ranges is dropped, as diagnose does). */
#ifndef GP_ANALYZE_COMPARE_H
#define GP_ANALYZE_COMPARE_H

#include "gp/analysis.h"
#include "gp/rules.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One trace's summary; owns copies of everything it keeps. */
typedef struct gp_compare_part gp_compare_part;

/** A comparison: the parts of both sides, then (after gp_compare_finish) the differences. */
typedef struct gp_compare gp_compare;

/** The two sides. */
typedef enum gp_compare_side { GP_CMP_BASE = 0, GP_CMP_NEW = 1 } gp_compare_side;

/** Summarise one trace and run `rules` (NULL: defaults) on it. @param a the analysed trace (not
 * kept). @param out receives the part (free with gp_compare_part_free, or hand it to
 * gp_compare_add). @return GP_OK or GP_ENOMEM. Thread-safe for distinct outputs. */
gp_status gp_compare_part_new(const gp_analysis *a, const gp_rules *rules, gp_compare_part **out,
                              gp_error *err);

/** Free a part. NULL is a no-op. */
void gp_compare_part_free(gp_compare_part *p);

/** Make an empty comparison. @return GP_OK or GP_ENOMEM. */
gp_status gp_compare_new(gp_compare **out, gp_error *err);

/** Free a comparison and its parts. NULL is a no-op. */
void gp_compare_free(gp_compare *c);

/** Add a trace's part to a side, labelled `label` (its path: copied); the comparison takes
 * ownership of `p` (also on failure). @return GP_OK or GP_ENOMEM. */
gp_status gp_compare_add(gp_compare *c, gp_compare_side side, const char *label, gp_compare_part *p,
                         gp_error *err);

/** Compute the differences. @return GP_OK, GP_EINVAL (a side without a trace or without a
 * step) or GP_ENOMEM. */
gp_status gp_compare_finish(gp_compare *c, gp_error *err);

/** The step-time verdict. */
typedef enum gp_verdict {
    GP_VERDICT_SAME = 0, /**< no clear change: within the noise */
    GP_VERDICT_FASTER,
    GP_VERDICT_SLOWER,
    GP_VERDICT_TOO_FEW /**< fewer than 3 steps on a side: not tested */
} gp_verdict;

/** @return "no clear change", "faster", "slower", "too few steps". */
const char *gp_verdict_name(gp_verdict v);

/** Step time on both sides (index: gp_compare_side), in ns. */
typedef struct gp_compare_steps {
    size_t n_traces[2], n_steps[2];
    int64_t mean[2], p50[2], p95[2]; /**< percentiles by nearest rank over the pooled steps */
    double change_pct;               /**< (new mean - base mean) / base mean * 100 */
    double ci_lo_pct, ci_hi_pct;     /**< 95% bootstrap interval of change_pct (NAN: too few) */
    double p_value;                  /**< Mann-Whitney U, two-sided (NAN: too few) */
    gp_verdict verdict;
} gp_compare_steps;

/** @return the step-time result (after gp_compare_finish); never NULL. */
const gp_compare_steps *gp_compare_step_result(const gp_compare *c);

/** Output formats of gp_compare_write(). */
typedef enum gp_compare_format { GP_COMPARE_TEXT = 0, GP_COMPARE_JSON } gp_compare_format;

/** Parse "text" or "json". @return GP_OK or GP_EINVAL. */
gp_status gp_compare_format_parse(const char *s, gp_compare_format *out, gp_error *err);

/** Write the comparison (after gp_compare_finish) as text or as JSON, schema
 * "gprof-train.compare/1":
 *
 *   {"schema": "gprof-train.compare/1",
 *    "base": {"traces": [PATH], "steps": N}, "new": {...},
 *    "step_time": {"mean_us": [B, N], "p50_us": [B, N], "p95_us": [B, N], "change_pct": NUM,
 *                  "ci95_pct": [LO, HI]|null, "p_value": NUM|null, "verdict": STR},
 *    "breakdown": [{"category": STR, "base_us": NUM, "new_us": NUM, "change_us": NUM}],
 *    "ops": [ROW], "kernels": [ROW],     the `top` rows that moved most, per step
 *      ROW: {"name": STR, "status": "changed"|"new"|"vanished", "calls": [B, N],
 *            "time_us": [B, N], "change_us": NUM}
 *    "peak_memory_bytes": [B|null, N|null],
 *    "findings": [{"id": STR, "title": STR, "status": "resolved"|"new"|"still"|"not applicable",
 *                  "severity": [SEV, SEV], "metric": [NUM|null, NUM|null], "unit": UNIT,
 *                  "predicted_gain_us": NUM|null, "measured_gain_us": NUM|null}]}
 *
 * Per-step values divide a side's totals by its steps. Ops are key-averages CPU rows (time: self
 * CPU), kernels its device rows (kernels, memcpys, memsets; time: device time). A finding is
 * fired at warn or above ("not applicable": fired on BASE, no metric on NEW); predicted gain is
 * BASE's estimate per step, measured the drop of the mean step time (both null unless the
 * finding fired on BASE and has a metric on NEW). @return GP_OK or GP_EIO when a write fails. */
gp_status gp_compare_write(FILE *out, const gp_compare *c, gp_compare_format format, size_t top,
                           gp_error *err);

/* ---- The comparison's parts, for other writers (the HTML page of viewer-export) ---- */

/** One side: its traces, analysed steps, breakdown and peak memory. Borrowed from `c`. */
typedef struct gp_compare_side_info {
    size_t n_traces, n_steps;
    const char *const *labels; /**< the traces' paths, n_traces of them */
    double bd_ns[GP_BD_COUNT]; /**< the step-time breakdown, mean per analysed step */
    int64_t peak_alloc;        /**< highest device bytes allocated; -1: not recorded */
} gp_compare_side_info;

/** Fill `out` with a side of a finished comparison. */
void gp_compare_side_get(const gp_compare *c, gp_compare_side side, gp_compare_side_info *out);

/** A key-averages row that moved, per step. `status` is "changed", "new" or "vanished". */
typedef struct gp_compare_row {
    const char *name, *status;
    double calls[2], time_ns[2]; /**< time: self CPU for ops, device time for device rows */
} gp_compare_row;

/** The rows of one kind that moved most (`device`: kernels, memcpys and memsets; else ops), the
 * most moved first, as the text and JSON list them. @return the count written (at most cap). */
size_t gp_compare_moved(const gp_compare *c, int device, gp_compare_row *out, size_t cap);

/** A rule that fired (warn or above) on either side. `status` is "resolved", "new", "still" or
 * "not applicable"; metric[s] is NAN where a side has none; predicted_gain_ns is BASE's estimate
 * per step, or -1 (see gp_compare_write). Strings borrowed from `c`. */
typedef struct gp_compare_finding {
    const char *id, *title, *status, *metric_name;
    gp_severity sev[2];
    double metric[2];
    gp_unit unit;
    int64_t predicted_gain_ns;
} gp_compare_finding;

/** @return the findings that fired on either side, in rule order (at most cap written). */
size_t gp_compare_findings(const gp_compare *c, gp_compare_finding *out, size_t cap);

/** A finding's metric as the text shows it ("1.234 ms", "78.6%", "512.0 MiB", "n/a" for NAN).
 * @return buf. */
const char *gp_compare_fmt_metric(char *buf, size_t cap, double v, gp_unit u);

#ifdef __cplusplus
}
#endif
#endif
