/* GT09 exposed_transfer: copy time that delays compute, as a share of step time, split by
 * direction, with whether copies share a stream with kernels. A copy delays compute where no
 * kernel overlaps it while the next kernel has already been launched (rules_copy_delay): a copy
 * in a launch-bound loop, done before the host launches the next kernel, costs nothing (the GPU
 * would idle anyway), though the priority sweep's Memcpy category counts it. Anchors: tb_plugin's
 * Memcpy category, XProf input 5/20 % (H2D counts as input). */
#include "rules/rules_int.h"

#include <stdio.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 5, "exposed copy time, share of step time (XProf input moderate)"},
        {"crit_pct", 20, "share for crit (XProf input high)"},
};
RULES_INFO(exposed_transfer, "GT09", "exposed (non-overlapped) transfers", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_GPU);

static const gp_evidence_col cols[] = {
        {"direction", GP_UNIT_TEXT},    {"exposed", GP_UNIT_US},
        {"share of step", GP_UNIT_PCT}, {"bytes per step", GP_UNIT_BYTES},
        {"achieved", GP_UNIT_GBPS},     {"streams", GP_UNIT_TEXT}};

/* Does the GPU track (device, stream) run kernels too? */
static int stream_has_kernels(const struct rules_ctx *c, int device, int64_t stream)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    for (size_t t = 0; t < nt; t++) {
        if (!tr[t].is_gpu || tr[t].device != device || tr[t].stream != stream)
            continue;
        for (uint32_t i = tr[t].first; i < tr[t].first + tr[t].count; i++)
            if (c->ev[i].kind == GP_EV_KERNEL)
                return 1;
    }
    return 0;
}

/* Per direction (k0 = copy kind, k1 = stream, k2 = device): exposed ns, GPU ns, bytes. */
static gp_status gather(struct rules_ctx *c, struct rules_agg *agg, int64_t *total)
{
    size_t n;
    const gp_memcpy *m = gp_analysis_memcpys(c->a, &n);
    struct rules_kernel_queue q;
    *total = 0;
    GP_TRY(rules_ctx_intervals(c));
    GP_TRY(rules_kernel_queue_build(c, &q));
    gp_status rc = GP_OK;
    for (size_t i = 0; i < n && rc == GP_OK; i++) {
        if (m[i].is_memset || rules_step_of(c, m[i].event) < 0)
            continue;
        const gp_event *r = m[i].runtime == GP_NONE ? NULL : &c->ev[m[i].runtime];
        int holds = r && r->ts + r->dur > m[i].ts; /* its call returned after it began */
        int64_t exposed = rules_copy_delay(c, &q, m[i].ts, m[i].ts + m[i].dur, holds);
        *total += exposed;
        rc = rules_agg_add(agg, m[i].copy_kind, (uint32_t)m[i].stream, (uint32_t)m[i].device,
                           exposed, m[i].dur, m[i].bytes);
    }
    rules_kernel_queue_release(&q);
    return rc;
}

static gp_status row(const struct rules_ctx *c, struct rules_out *o, const struct rules_agg_row *r,
                     int *same_stream)
{
    char streams[64];
    int shared = stream_has_kernels(c, (int)r->k[2], (int64_t)r->k[1]);
    *same_stream |= shared;
    snprintf(streams, sizeof(streams), "%u%s", r->k[1], shared ? " (shared with kernels)" : "");
    return rules_row(o, (gp_cell[]){{0, gp_copy_kind_name((gp_copy_kind)r->k[0])},
                                    {(double)r->ns / 1e3, NULL},
                                    {rules_pct_of_steps(c, r->ns), NULL},
                                    {rules_per_step(c, (double)r->bytes), NULL},
                                    {r->ns2 ? (double)r->bytes / (double)r->ns2 : 0, NULL},
                                    {0, streams}});
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double e, int same)
{
    const char *why = same ? " The copies run on a stream that also runs kernels, so nothing "
                             "overlaps them."
                           : "";
    if (c->cfg.rc.trainer) {
        int nb = c->cfg.rc.non_blocking == GP_CFG_OFF, pin = c->cfg.rc.pin_memory == GP_CFG_OFF;
        if (nb || pin)
            GP_TRY(rules_knob(o, "%s%s%s", nb ? "--non-blocking" : "", nb && pin ? " " : "",
                              pin ? "--pin-memory" : ""));
        return rules_reco(o,
                          "%.1f%% of step time is spent in copies that compute waits for."
                          "%s --non-blocking copies the next batch on a copy stream while the "
                          "current one trains; --pin-memory makes that copy asynchronous%s.",
                          e, why,
                          nb || pin ? ""
                                    : " (both were on: the copy may be issued too "
                                      "late or be too large for the compute it "
                                      "hides behind)");
    }
    GP_TRY(rules_knob(o, "pin_memory=True + .to(device, non_blocking=True) on a side stream"));
    return rules_reco(o,
                      "%.1f%% of step time is spent in copies that compute waits for.%s "
                      "Prefetch the next batch on a side stream with non_blocking=True and "
                      "pinned memory; keep data resident on the GPU where possible.",
                      e, why);
}

gp_status rules_exposed_transfer(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32];
    struct rules_agg agg = {0};
    int same = 0;
    int64_t exp;
    gp_status rc = gather(c, &agg, &exp);
    double e = rules_pct_of_steps(c, exp);
    rules_measure(o, "exposed_copy_share", GP_UNIT_PCT, e, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "copies that delay compute take %.1f%% of step time (%s per step; "
                           "not overlapped with compute: %.1f%%)",
                           e, rules_fmt_ns(a, sizeof(a), (int64_t)rules_per_step(c, (double)exp)),
                           rules_pct_of_steps(c, c->bd[GP_BD_MEMCPY]));
    if (rc != GP_OK || o->f.severity == GP_SEV_OK) {
        rules_agg_release(&agg);
        return rc;
    }
    rules_agg_finish(&agg);
    rules_cols(o, 6, cols);
    for (size_t i = 0; i < agg.n && i < 5 && rc == GP_OK; i++)
        rc = row(c, o, &agg.rows[i], &same);
    if (rc == GP_OK)
        rc = rules_gain(o, exp, (int64_t)rules_per_step(c, (double)exp),
                        "if the copies overlapped compute");
    if (rc == GP_OK)
        rc = advise(c, o, e, same);
    rules_agg_release(&agg);
    return rc;
}
