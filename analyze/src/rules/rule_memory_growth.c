/* GT12 memory_growth: allocated device memory at the end of each analysed step, fitted by least
 * squares; fires when the fitted growth over the window reaches a share of capacity and the
 * series rises in most steps (a leak). Anchor: SageMaker GPUMemoryIncrease (5 %); rest ours.
 * Allocations are made by the host, so each step is sampled where its host range ends: at the
 * device-aligned end a host running several steps ahead in bursts (a full launch queue) shows
 * its steps' allocations bunched, and a steady leak rose in only a third of the steps. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdlib.h>

enum { WARN_PCT, CRIT_PCT, MONOTONE_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 5, "fitted growth over the analysed steps, share of capacity (SageMaker)"},
        {"crit_pct", 20, "growth for crit (ours)"},
        {"monotone_pct", 80, "steps that must end higher than the previous one (ours)"},
};
RULES_INFO(memory_growth, "GT12", "memory growth across steps", 0, RULES_READS_MEM);

static const gp_evidence_col cols[] = {{"step", GP_UNIT_TEXT}, {"allocated at end", GP_UNIT_BYTES}};

/* Least-squares slope of y over 0..n-1. */
static double slope(const double *y, size_t n)
{
    double mx = (double)(n - 1) / 2.0, my = 0, sxy = 0, sxx = 0;
    for (size_t i = 0; i < n; i++)
        my += y[i] / (double)n;
    for (size_t i = 0; i < n; i++) {
        sxy += ((double)i - mx) * (y[i] - my);
        sxx += ((double)i - mx) * ((double)i - mx);
    }
    return sxx > 0 ? sxy / sxx : 0;
}

static const gp_mem_series *device_series(const struct rules_ctx *c)
{
    size_t n;
    const gp_mem_series *s = gp_analysis_memory(c->a, &n);
    for (size_t i = 0; i < n; i++)
        if (s[i].device_type == 1 && s[i].n_points > 0)
            return &s[i];
    return NULL;
}

static gp_status evidence(const struct rules_ctx *c, struct rules_out *o, const double *y)
{
    rules_cols(o, 2, cols);
    size_t every = (c->n_steps + RULES_MAX_ROWS - 1) / RULES_MAX_ROWS;
    for (size_t i = 0; i < c->n_steps; i += every ? every : 1)
        GP_TRY(rules_row(o, (gp_cell[]){{0, rules_ev_name(c, c->steps[i].event)}, {y[i], NULL}}));
    return GP_OK;
}

gp_status rules_memory_growth(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32];
    const gp_mem_series *s = device_series(c);
    int64_t cap = s ? rules_device_mem(c, s->device_id) : 0;
    if (!s)
        return rules_summary(o, "no device memory samples: %s", rules_no_device_mem_why(c));
    if (cap <= 0 || c->n_steps < 3)
        return rules_summary(o, cap <= 0 ? "device capacity unknown: not applicable"
                                         : "fewer than 3 steps: not applicable");
    double *y = malloc(c->n_steps * sizeof(*y));
    if (!y)
        return GP_ENOMEM;
    size_t rises = 0;
    for (size_t i = 0; i < c->n_steps; i++) {
        y[i] = (double)rules_mem_at(s, c->steps[i].host_end)->allocated;
        rises += i > 0 && y[i] > y[i - 1];
    }
    double k = slope(y, c->n_steps), growth = 100.0 * k * (double)(c->n_steps - 1) / (double)cap;
    double mono = 100.0 * (double)rises / (double)(c->n_steps - 1);
    rules_measure(o, "growth_share", GP_UNIT_PCT, growth, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (mono < p[MONOTONE_PCT])
        rules_fire(o, GP_SEV_OK, p[WARN_PCT]);
    gp_status rc = rules_summary(o,
                                 "allocated memory changes by %s per step (%.1f%% of capacity "
                                 "over %zu steps), rising in %.0f%% of steps",
                                 rules_fmt_bytes(a, sizeof(a), k), growth, c->n_steps, mono);
    if (rc == GP_OK && o->f.severity) {
        rc = evidence(c, o, y);
        if (rc == GP_OK)
            rc = rules_reco(o,
                            "Allocated memory grows by %s per step. Look for tensors kept "
                            "across steps: losses appended without .detach()/.item(), caches "
                            "that grow, record_shapes while profiling a long run.",
                            rules_fmt_bytes(a, sizeof(a), k));
    }
    free(y);
    return rc;
}
