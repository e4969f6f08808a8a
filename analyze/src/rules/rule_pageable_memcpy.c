/* GT06 pageable_memcpy: asynchronous copies (cudaMemcpy*Async) from or to pageable host memory,
 * which the driver stages and runs synchronously. Anchor: nsys cuda_memcpy_async (fires on any);
 * we ask for at least one per analysed step and go crit at 5 % of step time. */
#include "rules/rules_int.h"

#include <math.h>
#include <string.h>

enum { MIN_PER_STEP, CRIT_PCT };
static const gp_rule_param params[] = {
        {"min_per_step", 1, "pageable async copies per step that fire (nsys: any)"},
        {"crit_pct", 5, "their GPU time as a share of step time for crit (ours)"},
};
RULES_INFO(pageable_memcpy, "GT06", "pageable async memcpy", 0, RULES_NEEDS_GPU | RULES_READS_GPU);

static int pageable_async(const struct rules_ctx *c, const gp_memcpy *m)
{
    return !m->is_memset && m->runtime != GP_NONE &&
           (m->src_mem == GP_MEM_PAGEABLE || m->dst_mem == GP_MEM_PAGEABLE) &&
           strstr(rules_ev_name(c, m->runtime), "Async") != NULL;
}

static gp_status gather(const struct rules_ctx *c, struct rules_agg *agg, size_t *n_all,
                        int64_t *gpu, int64_t *host)
{
    size_t n;
    const gp_memcpy *m = gp_analysis_memcpys(c->a, &n);
    *n_all = 0, *gpu = *host = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pageable_async(c, &m[i]))
            continue;
        (*n_all)++;
        if (rules_step_of(c, m[i].event) < 0)
            continue;
        int64_t api = c->ev[m[i].runtime].dur;
        *gpu += m[i].dur, *host += api;
        GP_TRY(rules_agg_add(agg, c->ev[m[i].event].name, c->ev[m[i].runtime].name,
                             rules_op_key(c, m[i].op), m[i].dur, api, m[i].bytes));
    }
    return GP_OK;
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o)
{
    static const char nsys[] = "Asynchronous copies from PAGEABLE memory are staged by the driver "
                               "and run synchronously, blocking the host and the overlap with "
                               "compute.";
    if (c->cfg.rc.trainer) {
        GP_TRY(rules_knob(o, "--pin-memory"));
        return rules_reco(o, "%s Use PINNED memory: --pin-memory%s.", nsys,
                          c->cfg.rc.pin_memory == GP_CFG_OFF ? " (you ran without it)" : "");
    }
    GP_TRY(rules_knob(o, "DataLoader(pin_memory=True) + tensor.to(device, non_blocking=True)"));
    return rules_reco(o,
                      "%s Use PINNED memory: DataLoader(pin_memory=True) and "
                      ".to(device, non_blocking=True); avoid per-tensor .pin_memory() inside "
                      "the loop (it can be ~2x slower).",
                      nsys);
}

gp_status rules_pageable_memcpy(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32];
    size_t n_all;
    int64_t gpu, host;
    struct rules_agg agg = {0};
    gp_status rc = gather(c, &agg, &n_all, &gpu, &host);
    size_t n_in = 0;
    for (size_t i = 0; i < agg.n; i++)
        n_in += agg.rows[i].count;
    double per_step = rules_per_step(c, (double)n_in), share = rules_pct_of_steps(c, gpu);
    rules_measure(o, "pageable_async_per_step", GP_UNIT_COUNT, per_step, ">=", p[MIN_PER_STEP],
                  INFINITY);
    if (o->f.severity && share >= p[CRIT_PCT])
        rules_fire(o, GP_SEV_CRIT, p[MIN_PER_STEP]);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "%zu pageable async copies (%zu in analysed steps, %.1f per step, "
                           "%.1f%% of step time on the GPU)",
                           n_all, n_in, per_step, share);
    if (rc == GP_OK && o->f.severity) {
        rc = rules_copy_evidence(c, o, &agg, 1);
        if (rc == GP_OK)
            rc = rules_gain(o, host, (int64_t)rules_per_step(c, (double)host),
                            "the host would not block for %s per step in these calls",
                            rules_fmt_ns(a, sizeof(a), (int64_t)rules_per_step(c, (double)host)));
        if (rc == GP_OK)
            rc = advise(c, o);
    }
    rules_agg_release(&agg);
    return rc;
}
