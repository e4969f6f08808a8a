/* GT00 trace_quality: is the analysis trustworthy? Too few steps, no ProfilerStep markers, GPU
 * activity with no launch correlation, a truncated file, records the profiler dropped. Info only
 * (anchors: Composer's >= 10 data points, XProf's "No step time measured"). */
#include "rules_int.h"

#include "gp/trace_schema.h"

#include <string.h>

enum { MIN_STEPS, MAX_UNCORRELATED_PCT };
static const gp_rule_param params[] = {
        {"min_steps", 10, "fewer analysed steps than this is flagged (Composer: 10 data points)"},
        {"max_uncorrelated_pct", 5, "GPU activities without a launch call above this share"},
};
RULES_INFO(trace_quality, "GT00", "trace quality");

static const gp_evidence_col cols[] = {{"problem", GP_UNIT_TEXT}, {"effect", GP_UNIT_TEXT}};

static gp_status problem(struct rules_out *o, int *n, const char *what, const char *effect)
{
    (*n)++;
    return rules_row(o, (gp_cell[]){{0, what}, {0, effect}});
}

/* Share of GPU activities that no runtime call launched (HTA drops those). */
static double uncorrelated_pct(const struct rules_ctx *c, uint64_t *n_gpu)
{
    size_t nd, nl;
    const gp_device_stats *d = gp_analysis_devices(c->a, &nd);
    gp_analysis_launches(c->a, &nl);
    *n_gpu = 0;
    for (size_t i = 0; i < nd; i++)
        *n_gpu += d[i].n_kernels + d[i].n_memcpy + d[i].n_memset;
    if (*n_gpu == 0)
        return 0.0;
    return nl >= *n_gpu ? 0.0 : 100.0 * (double)(*n_gpu - nl) / (double)*n_gpu;
}

static gp_status dropped(const struct rules_ctx *c, struct rules_out *o, int *n)
{
    size_t nk;
    const gp_kv *kv = gp_trace_config(c->t, &nk);
    const gp_kv *d = gp_kv_find(kv, nk, GP_CFG_DROPPED_RECORDS);
    if (d && d->type == GP_KV_INT && d->i > 0)
        GP_TRY(problem(o, n, rules_strf(o, "the profiler dropped %lld records", (long long)d->i),
                       "GPU activity is missing: time-based metrics are low bounds"));
    const gp_kv *g = gp_kv_find(kv, nk, GP_CFG_GPU_STATUS);
    if (g && g->type == GP_KV_STRING && c->cfg.device && strcmp(c->cfg.device, "cuda") == 0 &&
        strcmp(g->str, "recorded") != 0)
        GP_TRY(problem(o, n, rules_strf(o, "GPU activity not recorded: %s", g->str),
                       "GPU rules cannot run"));
    return GP_OK;
}

gp_status rules_trace_quality(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int n = 0;
    uint64_t n_gpu;
    double unc = uncorrelated_pct(c, &n_gpu);
    rules_cols(o, 2, cols);
    rules_measure(o, "steps_analysed", GP_UNIT_COUNT, (double)c->n_steps, "<", 0, 0);
    o->f.threshold = p[MIN_STEPS];
    if (c->n_all_steps == 1 && c->steps[0].synthetic)
        GP_TRY(problem(o, &n, "no ProfilerStep#N markers", "the whole trace is one step"));
    else if ((double)c->n_steps < p[MIN_STEPS])
        GP_TRY(problem(
                o, &n,
                rules_strf(o, "only %zu steps analysed (first dropped as warm-up)", c->n_steps),
                "step statistics and outliers are approximate"));
    if (unc > p[MAX_UNCORRELATED_PCT])
        GP_TRY(problem(o, &n, rules_strf(o, "%.1f%% of GPU activities have no launch call", unc),
                       "launch, copy and sync rules miss them"));
    if (gp_trace_get_info(c->t)->truncated)
        GP_TRY(problem(o, &n, "the trace file is truncated", "the last steps may be incomplete"));
    GP_TRY(dropped(c, o, &n));
    if (n == 0)
        return rules_summary(o,
                             "%zu steps analysed of %zu, %llu GPU activities, %.1f%% without "
                             "a launch call",
                             c->n_steps, c->n_all_steps, (unsigned long long)n_gpu, unc);
    rules_fire(o, GP_SEV_INFO, p[MIN_STEPS]);
    GP_TRY(rules_summary(o, "the analysis is limited by %d problem%s with this trace", n,
                         n > 1 ? "s" : ""));
    if (c->cfg.trainer)
        return rules_reco(o,
                          "Profile at least %.0f steady-state steps: gprof-train run --steps "
                          "%.0f or more.",
                          p[MIN_STEPS], p[MIN_STEPS] + 2);
    return rules_reco(o,
                      "Profile at least %.0f steady-state steps with "
                      "torch.profiler.schedule(wait=1, warmup=1, active=%.0f) and call "
                      "prof.step() every iteration, so ProfilerStep#N ranges are recorded.",
                      p[MIN_STEPS], p[MIN_STEPS]);
}
