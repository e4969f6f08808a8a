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

struct pageable {
    int64_t gpu, host, bytes; /* in the analysed steps: the copies' GPU time, the host blocked
                                 in their calls, their bytes */
};

static gp_status gather(const struct rules_ctx *c, struct rules_agg *agg, size_t *n_all,
                        struct pageable *pg)
{
    size_t n;
    const gp_memcpy *m = gp_analysis_memcpys(c->a, &n);
    *n_all = 0;
    *pg = (struct pageable){0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        if (!pageable_async(c, &m[i]))
            continue;
        (*n_all)++;
        if (rules_step_of(c, m[i].event) < 0)
            continue;
        int64_t api = c->ev[m[i].runtime].dur;
        pg->gpu += m[i].dur, pg->host += api, pg->bytes += (int64_t)m[i].bytes;
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

/* Pinned host-to-device bandwidth a fix can expect, GB/s: PCIe 5 x16 from compute capability 9
 * (an H100's pinned 27 MiB batch copied at 55 GB/s, where pageable took 11 GB/s), PCIe 4 from 8,
 * PCIe 3 before and where the trace does not say (ours: the bus is not in the trace). */
static double pinned_gbps(const struct rules_ctx *c)
{
    int major = rules_compute_major(c);
    return major >= 9 ? 50.0 : major >= 8 ? 24.0 : 12.0;
}

/* The gain per step: the host no longer blocks in the calls, but the step stays no shorter than
 * the GPU's work, which still holds the copies at pinned speed. On an H100 (bench/
 * gpu_torch_cases.py) a 27 MiB pageable batch blocked the host 3.7 ms a step, said 65% of it,
 * while pinned copies gained 36%: the GPU ran the step's kernels in the blocked time too. */
static int64_t gain_per_step(struct rules_ctx *c, const struct pageable *pg)
{
    int64_t n = (int64_t)c->n_steps;
    if (n <= 0 || rules_ctx_intervals(c) != GP_OK)
        return 0;
    int64_t host = pg->host / n, gpu = pg->gpu / n;
    int64_t pinned = (int64_t)((double)pg->bytes / (double)n / pinned_gbps(c));
    int64_t floor = rules_ivs_in_steps(c, &c->busy) / n - gpu + (pinned < gpu ? pinned : gpu);
    int64_t left = c->step_ns / n - floor;
    return host < left ? host : left > 0 ? left : 0;
}

gp_status rules_pageable_memcpy(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32], b[32];
    size_t n_all;
    struct pageable pg;
    struct rules_agg agg = {0};
    gp_status rc = gather(c, &agg, &n_all, &pg);
    int64_t gpu = pg.gpu;
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
        int64_t g = gain_per_step(c, &pg);
        if (rc == GP_OK)
            rc = rules_gain(
                    o, g * (int64_t)c->n_steps, g,
                    "the host would not block for %s per step in these calls, but the "
                    "step stays no shorter than the GPU's work, with the copies at "
                    "pinned speed (%.0f GB/s assumed: %s a step)",
                    rules_fmt_ns(a, sizeof(a), (int64_t)rules_per_step(c, (double)pg.host)),
                    pinned_gbps(c),
                    rules_fmt_ns(b, sizeof(b),
                                 (int64_t)rules_per_step(c, (double)pg.bytes / pinned_gbps(c))));
        if (rc == GP_OK)
            rc = advise(c, o);
    }
    rules_agg_release(&agg);
    return rc;
}
