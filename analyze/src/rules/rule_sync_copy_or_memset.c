/* GT07 sync_copy_or_memset: blocking copy and memset calls (cudaMemcpy, cudaMemset, not ...Async)
 * inside steps, e.g. .item(), .cpu(), print(tensor). Priced by the GPU idle time they cause
 * (from each call's start to the next GPU work after it returns), as a share of step time: the
 * host's time blocked while queued work drains costs the step nothing, and removing the call
 * saves only the idle device time (rules_idle_cost.c). Anchors: nsys cuda_memcpy_sync /
 * cuda_memset_sync; the thresholds are ours. */
#include "rules/rules_int.h"

enum { WARN_PCT, CRIT_PCT, MIN_PER_STEP };
static const gp_rule_param params[] = {
        {"warn_pct", 1, "GPU idle these calls cause, share of step time (ours)"},
        {"crit_pct", 5, "share for crit (ours)"},
        {"min_per_step", 1, "blocking calls per step needed to fire"},
};
RULES_INFO(sync_copy_or_memset, "GT07", "blocking copies and memsets", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_GPU);

static gp_status gather(struct rules_ctx *c, struct rules_agg *agg, int64_t *host, int64_t *idle,
                        size_t *n_d2h, size_t *n_h2d)
{
    size_t n;
    struct rules_stall stall = {0};
    const gp_memcpy *m = gp_analysis_memcpys(c->a, &n);
    *host = *idle = 0, *n_d2h = *n_h2d = 0;
    for (size_t i = 0; i < n; i++) {
        if (!m[i].blocking || m[i].runtime == GP_NONE || rules_step_of(c, m[i].event) < 0)
            continue;
        const gp_event *r = &c->ev[m[i].runtime];
        int64_t api = r->dur, caused;
        GP_TRY(rules_stall_add(c, &stall, r->ts, r->ts + r->dur, &caused));
        *host += api;
        *idle += caused;
        *n_d2h += m[i].copy_kind == GP_COPY_DTOH;
        *n_h2d += m[i].copy_kind == GP_COPY_HTOD;
        GP_TRY(rules_agg_add(agg, c->ev[m[i].event].name, c->ev[m[i].runtime].name,
                             rules_op_key(c, m[i].op), api, 0, m[i].bytes));
    }
    return GP_OK;
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, size_t n_d2h, size_t n_h2d)
{
    static const char base[] = "Each blocking copy or memset waits for all queued GPU work.";
    if (c->cfg.rc.trainer && n_h2d > 0 && c->cfg.rc.non_blocking == GP_CFG_OFF) {
        GP_TRY(rules_knob(o, "--non-blocking"));
        return rules_reco(o,
                          "%s --non-blocking copies batches with cudaMemcpyAsync on a copy "
                          "stream instead (you ran without it).",
                          base);
    }
    if (!c->cfg.rc.trainer)
        GP_TRY(rules_knob(o, "tensor.to(device, non_blocking=True); no .item()/.cpu() per step"));
    return rules_reco(o,
                      "%s Use cudaMemcpy*Async / non_blocking=True; avoid .item(), .cpu() and "
                      "print(tensor) inside the loop (%.1f device-to-host reads per step): "
                      "log metrics every k steps.",
                      base, rules_per_step(c, (double)n_d2h));
}

gp_status rules_sync_copy_or_memset(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int64_t host, idle;
    size_t n_d2h, n_h2d, n_in = 0;
    struct rules_agg agg = {0};
    gp_status rc = gather(c, &agg, &host, &idle, &n_d2h, &n_h2d);
    for (size_t i = 0; i < agg.n; i++)
        n_in += agg.rows[i].count;
    double b = rules_pct_of_steps(c, idle), per_step = rules_per_step(c, (double)n_in);
    rules_measure(o, "blocked_share", GP_UNIT_PCT, b, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (per_step < p[MIN_PER_STEP])
        rules_fire(o, GP_SEV_OK, p[WARN_PCT]);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "%.1f blocking copies/memsets per step (%.1f device-to-host): GPU "
                           "idle %.1f%% of step time because of them (host blocked %.1f%%)",
                           per_step, rules_per_step(c, (double)n_d2h), b,
                           rules_pct_of_steps(c, host));
    if (rc == GP_OK && o->f.severity) {
        rc = rules_copy_evidence(c, o, &agg, 0);
        if (rc == GP_OK)
            rc = rules_gain(o, idle, (int64_t)rules_per_step(c, (double)idle),
                            "the GPU idle time these calls cause (the host's wait while queued "
                            "work drains is not lost)");
        if (rc == GP_OK)
            rc = advise(c, o, n_d2h, n_h2d);
    }
    rules_agg_release(&agg);
    return rc;
}
