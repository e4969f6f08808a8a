/* gp/rules.h: the rules engine behind `gprof-train diagnose`. A table of rules (GT00 trace quality
 * .. GT15 exposed communication, ../shared/ref/rules_anchors.md §8) reads an analysed trace and
 * gives one finding per rule: severity, the metric against its threshold, evidence rows, time
 * ranges, the recommendation naming the exact knob, and the time a fix would save. Thresholds
 * are named parameters ("GT01.warn_pct") that callers may override. `err` and NULL: the
 * conventions in gp/trace.h. */
#ifndef GP_ANALYZE_RULES_H
#define GP_ANALYZE_RULES_H

#include "gp/analysis.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How bad a finding is. GP_SEV_OK: the rule ran and did not fire (or did not apply). */
typedef enum gp_severity {
    GP_SEV_OK = 0,
    GP_SEV_INFO, /**< worth knowing; never a problem by itself (GT00) */
    GP_SEV_WARN, /**< the moderate threshold was reached */
    GP_SEV_CRIT  /**< the high threshold was reached */
} gp_severity;

/** @return "ok", "info", "warn" or "crit". */
const char *gp_severity_name(gp_severity s);

/** Parse "info", "warn" or "crit" (as --fail-on takes them). @return GP_OK or GP_EINVAL. */
gp_status gp_severity_parse(const char *s, gp_severity *out, gp_error *err);

/** Unit of a metric or an evidence column. */
typedef enum gp_unit {
    GP_UNIT_TEXT = 0, /**< a string cell */
    GP_UNIT_US,       /**< microseconds */
    GP_UNIT_PCT,      /**< percent, 0..100 */
    GP_UNIT_BYTES,
    GP_UNIT_COUNT, /**< a count or a rate such as calls per step */
    GP_UNIT_GBPS   /**< GB/s */
} gp_unit;

/** @return "", "us", "%", "bytes", "count", "GB/s" (as the JSON output spells units). */
const char *gp_unit_name(gp_unit u);

/** A tunable threshold of a rule, with its default value. */
typedef struct gp_rule_param {
    const char *name; /**< "warn_pct": the suffix says the unit (_pct, _ms, _us, _count, ...) */
    double value;     /**< default */
    const char *help; /**< one line: what it means and where the default comes from */
} gp_rule_param;

/** A rule of the catalogue. */
typedef struct gp_rule_info {
    const char *id;    /**< "GT01" */
    const char *name;  /**< "dataloader_starvation" */
    const char *title; /**< "data-loader starvation" */
    const gp_rule_param *params;
    size_t n_params;
} gp_rule_info;

/** @return the number of rules in the catalogue. */
size_t gp_rules_count(void);

/** @return rule `i` (0 .. gp_rules_count()-1, in id order), or NULL. Static storage. */
const gp_rule_info *gp_rules_info(size_t i);

/** A configuration: which rules run and their parameter values. */
typedef struct gp_rules gp_rules;

/** Make a configuration with every rule selected and default parameters.
 * @param out receives it (free with gp_rules_free). @return GP_OK or GP_ENOMEM. */
gp_status gp_rules_new(gp_rules **out, gp_error *err);

/** Free a configuration. NULL is a no-op. */
void gp_rules_free(gp_rules *r);

/** Override a parameter from "RULE.PARAM=VALUE", RULE being an id ("GT01") or a name
 * ("dataloader_starvation"), case-insensitive; VALUE a finite number.
 * @param r the configuration to change. @param assignment the text, as --set takes it.
 * @param err NULL: the status alone.
 * @return GP_OK, or GP_EINVAL with err naming the unknown rule/parameter or the bad value. */
gp_status gp_rules_set(gp_rules *r, const char *assignment, gp_error *err);

/** Restrict the run to `rule` (id or name); call once per rule. Without any call every rule runs.
 * @param r the configuration to change. @param rule "GT01" or "dataloader_starvation".
 * @param err NULL: the status alone. @return GP_OK or GP_EINVAL for an unknown rule. */
gp_status gp_rules_select(gp_rules *r, const char *rule, gp_error *err);

/** @return the current value of rule `i`'s parameter `j` (NAN when out of range). */
double gp_rules_param(const gp_rules *r, size_t i, size_t j);

/** @return whether rule `i` is selected. */
int gp_rules_selected(const gp_rules *r, size_t i);

/** One evidence column. */
typedef struct gp_evidence_col {
    const char *name; /**< "step", "loader wait", ... */
    gp_unit unit;
} gp_evidence_col;

/** One evidence cell: `text` for GP_UNIT_TEXT columns, `num` (in the column's unit) otherwise. */
typedef struct gp_cell {
    double num;
    const char *text;
} gp_cell;

/** A time range the finding points at, in the trace's timebase (ns, as gp_event.ts). */
typedef struct gp_time_range {
    int64_t ts, end;
    const char *label;
} gp_time_range;

/** One rule's result on one trace. Strings and arrays are borrowed from the gp_findings. */
typedef struct gp_finding {
    const gp_rule_info *rule;
    gp_severity severity;    /**< GP_SEV_OK when the rule did not fire */
    const char *metric_name; /**< "loader_share" */
    gp_unit metric_unit;
    double metric;              /**< the measured value (NAN when not applicable) */
    double threshold;           /**< the tier reached, or the lowest firing tier when OK */
    double warn_threshold;      /**< the lowest firing tier of `metric`; NAN where the rule
                                     fired on another condition */
    const char *cmp;            /**< ">=" (fires at or above) or "<" (fires below) */
    const char *summary;        /**< one line on what was measured; never NULL */
    const char *recommendation; /**< what to change and why; NULL when OK */
    const char *knob;           /**< the exact setting ("--workers 8", "pin_memory=True"); NULL */
    int64_t gain_ns;            /**< estimated time saved over the analysed steps; -1 unknown */
    int64_t gain_step_ns;       /**< the same per step; -1 unknown */
    const char *gain_text;      /**< "the step would drop from 41.0 ms to 12.0 ms"; NULL */
    /** the profiler's own cost per step inside gain_step_ns, where the rule measured it (GT18:
     * the records of the operators it counts); -1 unknown. Known, the gain without the profiler
     * is one share, (gain_step_ns - this) / (step - profiler's cost), not a range. */
    int64_t gain_prof_step_ns;
    /** where the rule's own pricing of the gain is a model measured to err beyond what the
     * trace's steps and the profiler's cost say (GT18 when most of the tiny ops' time is taken
     * for arithmetic): why; the gain without the profiler is then at most medium-sure, and
     * its why leads with this. NULL otherwise. */
    const char *gain_why;
    const gp_evidence_col *cols;
    size_t n_cols;
    const gp_cell *cells; /**< row-major, n_rows * n_cols, most costly row first */
    size_t n_rows;
    const gp_time_range *ranges;
    size_t n_ranges;
} gp_finding;

/** The findings of one run over one trace. */
typedef struct gp_findings gp_findings;

/** Run the selected rules over `a`.
 * @param r the configuration (gp_rules_new); NULL: every rule with default parameters.
 * @param a the analysis.
 * @param out receives the findings (free with gp_findings_free); they borrow nothing from `a`
 * or its trace, so those may be freed first.
 * @param err NULL: the status alone.
 * @return GP_OK or GP_ENOMEM. Thread-safe for distinct outputs. */
gp_status gp_rules_run(const gp_rules *r, const gp_analysis *a, gp_findings **out, gp_error *err);

/** @return the findings, fired ones first, most costly (largest gain, then severity) first, then
 * the rules that did not fire in id order; and their count. */
const gp_finding *gp_findings_get(const gp_findings *f, size_t *n);

/** @return the trace path, the step counts and mean analysed step time of the run. */
const char *gp_findings_trace(const gp_findings *f);
size_t gp_findings_steps(const gp_findings *f, size_t *analysed, int64_t *mean_step_ns);

/** @return the Python frames (python_function events, recorded with with_stack=True) per analysed
 * step; 0 without. The profiler slows Python-heavy parts of a step (a DataLoader, a Python loss)
 * more than the rest, so a gain measured there may be high without the profiler. */
double gp_findings_python_frames(const gp_findings *f);

/** Where the per-record cost of gp_profiler_cost came from. */
typedef enum gp_cost_source {
    GP_COST_NONE = 0, /**< no host records in the analysed steps, or too few gaps to estimate */
    GP_COST_MEASURED, /**< measured by the profiler in the process (libprof's record_cost_ns) */
    GP_COST_GAPS,     /**< estimated from the trace: the 10th percentile of the gaps between
                           consecutive records on a thread, which hold the profiler's work
                           between two records and some of the program's (on the high side);
                           at most 4 us, the per-op cost PyTorch documents for its costliest
                           profiler mode, where the program works in the gaps */
    GP_COST_TORCH     /**< a trace not from libprof: the gaps' estimate times what
                           torch.profiler's records were measured to cost beyond it (2.5x; an
                           op with record_shapes 3x; memory records and CUDA runtime calls 1x;
                           at most 4 us), rules_cost.c */
} gp_cost_source;

/** The profiler's own time in the analysed steps, as far as the trace shows it: its host
 * records (CPU ops, annotations, runtime and driver calls, Python frames, memory samples) times
 * the cost of one, plus the "overhead" events CUPTI reports. GPU-side instrumentation that
 * leaves no record is not seen. */
typedef struct gp_profiler_cost {
    int64_t per_step_ns;     /**< mean per analysed step: records + overhead events + step reads */
    int64_t overhead_ns;     /**< of it, "overhead" events inside the steps, per step */
    int64_t step_reads_ns;   /**< of it, libprof's scheduler reads at step boundaries (steps with
                                  gprof_thread_cpu_ns / gprof_runq_ns), per step */
    int64_t cupti_api_ns;    /**< of it, what CUPTI's tracing adds to the CUDA runtime and driver
                                  calls of a libprof trace (rules_cost.c), per step */
    double records_per_step; /**< host records per analysed step */
    int64_t record_cost_ns;  /**< per record (0 with GP_COST_NONE) */
    gp_cost_source source;
    double step_cv; /**< spread of analysed step times: stddev / mean (NAN with < 2 steps) */
} gp_profiler_cost;

/** @return the profiler's own cost in the analysed steps; never NULL. */
const gp_profiler_cost *gp_findings_profiler_cost(const gp_findings *f);

/** @return the mean analysed step as it would take without the profiler: less the profiler's
 *  own cost, but no shorter than the GPU's busy time in it; 0 without analysed steps. */
int64_t gp_findings_unprofiled_step_ns(const gp_findings *f);

/** How far a gain without the profiler can be trusted. */
typedef enum gp_sureness { GP_SURE_LOW = 0, GP_SURE_MEDIUM, GP_SURE_HIGH } gp_sureness;

/** A finding's gain restated for a run without the profiler. With S the mean analysed step, G
 * the gain per step and O the profiler's cost per step (gp_profiler_cost), the run without the
 * profiler has a step of S - O when that cost is on the step's critical path, and a gain of G
 * less whatever part of O fell in the time the fix removes: so the share of the step the fix
 * saves lies in [max(0, G - O) / (S - O), min(G, S - O) / (S - O)] (the profiled share G / S is
 * inside it). */
typedef struct gp_unprofiled_gain {
    int64_t step_ns;          /**< S - O: the step without the profiler */
    double low_pct, high_pct; /**< bounds of the share of that step the fix saves */
    gp_sureness sure;
    char why[224]; /**< what limits `sure`: "12 steps, step times within 3%, ..." */
    /** libprof's capture-health ledger on this finding: capture_known is 1 when the trace has
     * one (PyTorch's do not); then capture_sure is what it allows (it bounds `sure`): records
     * lost of a kind the rule reads, GPU records with no or impossible times for GPU rules, the
     * profiler's cost for host-timed rules; capture_why names the worst ("2.1% of GPU activity
     * records were dropped"), "" when there is none. */
    int capture_known;
    gp_sureness capture_sure;
    char capture_why[96];
} gp_unprofiled_gain;

/** Restate `f`'s gain (a finding of `fs`) without the profiler. @return 1 and fills *out, or 0
 * when `f` has no gain in time. */
int gp_finding_unprofiled_gain(const gp_findings *fs, const gp_finding *f, gp_unprofiled_gain *out);

/** @return "high", "medium" or "low". */
const char *gp_sureness_name(gp_sureness s);

/** @return the highest severity among the findings (GP_SEV_OK when none fired). */
gp_severity gp_findings_max_severity(const gp_findings *f);

/** Free findings. NULL is a no-op. */
void gp_findings_free(gp_findings *f);

/** Output formats of gp_findings_write(). */
typedef enum gp_findings_format {
    GP_FINDINGS_TEXT = 0,
    GP_FINDINGS_JSON,
    GP_FINDINGS_TEXT_BRIEF /**< text, the rules that did not fire named on one line */
} gp_findings_format;

/** Parse "text" or "json". @return GP_OK or GP_EINVAL. */
gp_status gp_findings_format_parse(const char *s, gp_findings_format *out, gp_error *err);

/** Write the findings of `n` traces to `out` (a stream the caller owns) as text (a section per
 * trace) or as one JSON document, schema "gprof-train.diagnose/1":
 *
 *   {"schema": "gprof-train.diagnose/1",
 *    "max_severity": "ok"|"info"|"warn"|"crit",          over all traces
 *    "traces": [{
 *      "trace": PATH, "steps": N, "steps_analysed": N, "mean_step_us": US,
 *      "python_frames_per_step": NUM (with_stack=True traces; 0 without), "max_severity": SEV,
 *      "profiler_cost": {"per_step_us": NUM, "overhead_per_step_us": NUM,
 *                        "records_per_step": NUM, "record_cost_ns": NUM,
 *                        "source": "none"|"measured"|"gaps", "step_cv": NUM|null},
 *      "findings": [{                                      order of gp_findings_get()
 *        "id": "GT01", "name": "dataloader_starvation", "title": "data-loader starvation",
 *        "severity": SEV, "fired": BOOL,
 *        "metric": {"name": STR, "value": NUM|null, "unit": UNIT, "threshold": NUM,
 *                   "cmp": ">="|"<"},
 *        "summary": STR, "recommendation": STR|null, "knob": STR|null,
 *        "estimated_gain": {"total_us": NUM, "per_step_us": NUM, "share_of_step_pct": NUM,
 *                           "text": STR|null,           share of the mean analysed step
 *                           "without_profiler": {"step_us": NUM|null, "low_pct": NUM,
 *                                                "high_pct": NUM, "sure": "low"|"medium"|"high",
 *                                                "why": STR,
 *                                                "capture": {"sure": SURE, "why": STR}}} | null,
 *                           ("capture": libprof traces only, its capture-health ledger's word)
 *        "evidence": {"columns": [{"name": STR, "unit": UNIT}], "rows": [[NUM|STR, ...]]},
 *        "ranges": [{"start_us": NUM, "dur_us": NUM, "label": STR}]   trace timebase
 *      }]
 *    }]}
 *
 * UNIT is "", "us", "%", "bytes", "count" or "GB/s"; numbers use at most 3 decimals. Fields are
 * only ever added within schema version 1, never renamed or removed.
 * @param out the stream. @param f the findings of each trace, f[0..n), none NULL.
 * @param n how many (0: no traces). @param format text, brief text or JSON.
 * @param err NULL: the status alone. @return GP_OK or GP_EIO when a write fails. */
gp_status gp_findings_write(FILE *out, const gp_findings *const *f, size_t n,
                            gp_findings_format format, gp_error *err);

#ifdef __cplusplus
}
#endif
#endif
