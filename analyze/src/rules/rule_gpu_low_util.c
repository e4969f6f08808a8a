/* GT02 gpu_low_util: the share of step time the GPU is busy (kernels, copies, memsets), plus
 * nsys-style windows: the analysed span cut into equal chunks, each measured over the step time
 * inside it, low ones coalesced. Runs after the other rules to name the one that explains the most
 * idle time. Anchors: nsys gpu_time_util (50 %, 30 chunks), tb_plugin R2 (< 0.5). */
#include "rules/rules_int.h"

#include <math.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT, WINDOWS, WINDOW_LOW_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 50, "GPU busy share of step time below this fires (nsys, tb_plugin R2)"},
        {"crit_pct", 20, "busy share below this is crit (ours)"},
        {"windows", 30, "equal windows over the analysed steps (nsys chunks)"},
        {"window_low_pct", 50, "a window busy less than this is low (nsys threshold)"},
};
RULES_INFO(gpu_low_util, "GT02", "low GPU utilisation", 1, RULES_NEEDS_GPU | RULES_READS_GPU);

static const gp_evidence_col cols[] = {
        {"window start", GP_UNIT_US}, {"duration", GP_UNIT_US}, {"GPU busy", GP_UNIT_PCT}};

/* GPU busy share of the step time inside [ts, end); -1 when no step time falls there. */
static double busy_pct(const struct rules_ctx *c, int64_t ts, int64_t end)
{
    int64_t steps = 0, busy = 0;
    for (size_t i = 0; i < c->step_ivs.n; i++) {
        int64_t a = c->step_ivs.iv[i][0] > ts ? c->step_ivs.iv[i][0] : ts;
        int64_t b = c->step_ivs.iv[i][1] < end ? c->step_ivs.iv[i][1] : end;
        if (b > a)
            steps += b - a, busy += rules_ivs_overlap(&c->busy, a, b);
    }
    return steps > 0 ? 100.0 * (double)busy / (double)steps : -1;
}

/* Emit a coalesced run of low windows [ts, end) with its busy share (of step time). */
static gp_status low_run(struct rules_ctx *c, struct rules_out *o, int64_t ts, int64_t end)
{
    double busy = busy_pct(c, ts, end);
    GP_TRY(rules_row(o, (gp_cell[]){{(double)(ts - c->trace_ts) / 1e3, NULL},
                                    {(double)(end - ts) / 1e3, NULL},
                                    {busy, NULL}}));
    return rules_range(o, ts, end, rules_strf(o, "GPU busy %.0f%%", busy));
}

static gp_status windows(struct rules_ctx *c, const double *p, struct rules_out *o, int *n_low)
{
    long n = p[WINDOWS] >= 1 ? (long)p[WINDOWS] : 1;
    int64_t span = c->win_end - c->win_ts, chunk = (span + n - 1) / n, run = -1;
    *n_low = 0;
    if (chunk <= 0)
        return GP_OK;
    for (long i = 0; i <= n; i++) {
        int64_t ts = c->win_ts + i * chunk, end = ts + chunk < c->win_end ? ts + chunk : c->win_end;
        double b = i < n && end > ts ? busy_pct(c, ts, end) : -1;
        int low = b >= 0 && b < p[WINDOW_LOW_PCT];
        *n_low += low;
        if (low && run < 0)
            run = ts;
        if (!low && run >= 0) {
            GP_TRY(low_run(c, o, run, ts < c->win_end ? ts : c->win_end));
            run = -1;
        }
    }
    return GP_OK;
}

/* The fired rule (other than GT00/GT02) that would save the most time. */
static const gp_finding *best_explanation(const struct rules_ctx *c)
{
    size_t n;
    const gp_finding *f = gp_findings_get(c->done, &n), *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (f[i].severity < GP_SEV_WARN || f[i].gain_ns <= 0)
            continue;
        if (!best || f[i].gain_ns > best->gain_ns)
            best = &f[i];
    }
    return best;
}

static gp_status advise(struct rules_ctx *c, struct rules_out *o, double u)
{
    char a[32];
    const gp_finding *best = best_explanation(c);
    if (best)
        return rules_reco(o,
                          "The GPU is busy only %.1f%% of step time. Most of the idle time is "
                          "explained by %s (%s): fixing it would save about %s per step.",
                          u, best->rule->id, best->rule->title,
                          rules_fmt_ns(a, sizeof(a), best->gain_step_ns));
    if (c->cfg.rc.trainer && rules_count(c->cfg.rc.batch_size) > 0)
        GP_TRY(rules_knob(o, "--batch-size %ld", rules_count(c->cfg.rc.batch_size) * 2));
    else if (!c->cfg.rc.trainer)
        GP_TRY(rules_knob(o, "a larger batch size"));
    return rules_reco(o,
                      "The GPU is busy only %.1f%% of step time and no other rule explains "
                      "the idle time: the batch may be too small to fill the GPU. Try a "
                      "larger batch (it may change convergence).",
                      u);
}

gp_status rules_gpu_low_util(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int n_low;
    if (c->n_steps == 0)
        return rules_summary(o, "no steps to measure");
    GP_TRY(rules_ctx_intervals(c));
    double u = rules_pct_of_steps(c, rules_ivs_in_steps(c, &c->busy));
    rules_measure(o, "gpu_busy_share", GP_UNIT_PCT, u, "<", p[WARN_PCT], p[CRIT_PCT]);
    rules_cols(o, 3, cols);
    GP_TRY(windows(c, p, o, &n_low));
    if (o->f.severity == GP_SEV_OK && n_low > 0)
        rules_fire(o, GP_SEV_INFO, p[WINDOW_LOW_PCT]);
    GP_TRY(rules_summary(o, "the GPU is busy %.1f%% of step time; %d of %.0f windows below %.0f%%",
                         u, n_low, p[WINDOWS], p[WINDOW_LOW_PCT]));
    if (o->f.severity == GP_SEV_OK) {
        o->f.n_rows = o->f.n_ranges = 0;
        return GP_OK;
    }
    if (o->f.severity == GP_SEV_INFO)
        return rules_reco(o,
                          "Overall the GPU is busy %.1f%% of step time, but %d windows fall "
                          "below %.0f%%: see what the host does in those time ranges.",
                          u, n_low, p[WINDOW_LOW_PCT]);
    return advise(c, o, u);
}
