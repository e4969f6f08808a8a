/* gp/compare.h: two sets of runs compared, BASE against NEW (issues 14, 24): step time with a
 * verdict that tells a change from run-to-run variation, the step-time breakdown, the
 * key-averages rows and device activities that moved most, peak memory, and the findings
 * resolved, new and still there. Each trace is analysed alone and summarised into a small
 * gp_compare_part (its analysed step times, breakdown, key-averages totals, peak memory,
 * findings); a side holds one or more runs, and a run one or more traces (the ranks or
 * processes of one run, whose steps are pooled).
 *
 * The verdict takes runs as the unit (gp_change_test_runs): identical runs differ (on a 2-core
 * VM, back-to-back runs of the bundled trainer by up to ~4% in mean step time when quiet, and by
 * a median 2-5%, up to 20-40%, under a load of 2-3), far more than the spread of steps within
 * one run shows, so a test over steps calls drift a regression. NEW is "faster" or "slower" only
 * when the change of the runs' typical step exceeds the smallest change the data can detect;
 * otherwise "no clear change". With fewer than 3 steps on a side
 * there is no test: "too few steps". Steps are the analysed ones (the first, warm-up step of a
 * trace with ProfilerStep#N ranges is dropped, as diagnose does).
 * `err` and NULL: the conventions in gp/trace.h. */
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

/** Add a trace's part to a side as a run of its own, labelled `label` (its path: copied); the
 * comparison takes ownership of `p` (also on failure). @return GP_OK or GP_ENOMEM. */
gp_status gp_compare_add(gp_compare *c, gp_compare_side side, const char *label, gp_compare_part *p,
                         gp_error *err);

/** As gp_compare_add, into run `run` of the side (any number the caller picks: parts given the
 * same number are one run, e.g. the ranks of one job, and their steps are pooled). */
gp_status gp_compare_add_run(gp_compare *c, gp_compare_side side, size_t run, const char *label,
                             gp_compare_part *p, gp_error *err);

/** How much identical runs differ: the smallest change (%) of the typical step that one run
 * against one run can tell from run-to-run variation; with several runs a side it is a prior
 * worth 4 runs, their own spread the rest. Measured on back-to-back identical 2000-step runs of
 * the bundled trainer on the shared 2-core VM (40 runs recorded at load 2-3, /work/aa/pool2k,
 * bench_compare_aa.py): their typical steps differed by a median 1.6% but 5 pairs in 39 by
 * 12-19% (a run the other core left mostly free): 18% leaves 1 of 39 pairs beyond it. On a machine
 * whose runs differ less, measure it and pass it (compare --run-noise). */
#define GP_COMPARE_RUN_NOISE_PCT 18.0

/** Set the one-run-against-one-run detectable change (default GP_COMPARE_RUN_NOISE_PCT); call
 * before gp_compare_finish. */
void gp_compare_set_run_noise(gp_compare *c, double pct);

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

/** One run's values in time order: its analysed step times, or (sweep) its one time. */
typedef struct gp_run_values {
    const double *v;
    size_t n;
} gp_run_values;

/** A change tested with runs as the unit. Percentages are of BASE. */
typedef struct gp_change_test {
    size_t n_runs[2];
    double change_pct;           /**< (new - base) / base * 100, means of the run means */
    double typical_change_pct;   /**< the change of the typical step, the one tested (NAN) */
    double ci_lo_pct, ci_hi_pct; /**< 95% interval of typical_change_pct (NAN: not tested) */
    double detectable_pct;       /**< the interval's half-width: the smallest change the data
                                      can tell from run-to-run variation (NAN: not tested) */
    double p_value;              /**< two-sided, of the change against no change (NAN) */
    double spread_pct;           /**< p75 / p25 of a run's values, - 1, in %, over the runs:
                                      wide on a busy machine; reported, not tested (0: not
                                      tested) */
    gp_verdict verdict;          /**< GP_VERDICT_TOO_FEW: a side without runs or values */
} gp_change_test;

/** Test whether `now`'s runs differ from `base`'s. Each run is one value: the log of its typical
 * step, its upper-quartile value (the mean and the median of a run on a shared machine move
 * with the share of steps the other load slowed; see compare_stats.c). The test is Student's t
 * on those values: their variance pooled from both sides (k_base - 1 + k_new - 1 degrees of
 * freedom) and from a prior worth 4 degrees of freedom, the run-to-run variance expected before
 * seeing several runs: `run_noise_pct` (how much identical runs differ, measured) is the
 * detectable change of one run against one run, and a run of few values adds the quartile's
 * sampling error; the spread of a run's values within it does not widen the prior (it says
 * nothing of how runs differ). A side's centre is the Huber M-estimate of its runs' values (c = 2
 * of the pooled run standard deviations; their mean with one or two runs), so that one run far
 * from its siblings (a machine left free for that run) cannot decide the verdict. The interval
 * is the change of the centres +- t(0.975, 4 + k_base - 1 + k_new - 1) times the standard error,
 * sqrt(variance * 1.01 * (1/k_base + 1/k_new)) (1.01: the Huber estimate's variance over the
 * mean's on normal values; 1 for a side of one or two runs); "faster" or "slower" when it
 * excludes zero. Deterministic; values must be > 0. */
void gp_change_test_runs(const gp_run_values *base, size_t nb, const gp_run_values *now, size_t nn,
                         double run_noise_pct, gp_change_test *out);

/** Step time on both sides (index: gp_compare_side), in ns. */
typedef struct gp_compare_steps {
    size_t n_traces[2], n_runs[2], n_steps[2];
    int64_t mean[2];             /**< the mean of the run means (each run's steps pooled) */
    int64_t p50[2], p95[2];      /**< percentiles by nearest rank over the pooled steps */
    double change_pct;           /**< (new mean - base mean) / base mean * 100 */
    double typical_change_pct;   /**< gp_change_test's: the change tested (NAN: too few) */
    double ci_lo_pct, ci_hi_pct; /**< 95% interval of typical_change_pct (NAN: too few) */
    double detectable_pct;       /**< the smallest change the data can detect (NAN: too few) */
    double run_noise_pct;        /**< the same for one run against one run, by assumption */
    double p_value;              /**< two-sided, runs as the unit (NAN: too few) */
    double spread_pct;           /**< gp_change_test's spread_pct */
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
 *    "base": {"traces": [PATH], "runs": N, "steps": N}, "new": {...},
 *    "step_time": {"mean_us": [B, N], "p50_us": [B, N], "p95_us": [B, N], "change_pct": NUM,
 *                  "typical_change_pct": NUM|null, "ci95_pct": [LO, HI]|null,
 *                  "detectable_pct": NUM|null, "spread_pct": NUM|null,
 *                  "run_noise_pct": NUM, "p_value": NUM|null, "verdict": STR},
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
 * finding fired on BASE and has a metric on NEW).
 * @param out the stream. @param c the finished comparison. @param format text or JSON.
 * @param top how many ops and kernels rows that moved to list. @param err NULL: the status alone.
 * @return GP_OK or GP_EIO when a write fails. */
gp_status gp_compare_write(FILE *out, const gp_compare *c, gp_compare_format format, size_t top,
                           gp_error *err);

/* ---- The comparison's parts, for other writers (the HTML page of viewer-export) ---- */

/** One side: its traces, analysed steps, breakdown and peak memory. Borrowed from `c`. */
typedef struct gp_compare_side_info {
    size_t n_traces, n_runs, n_steps;
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
