/* GT04 host_launch_bound: device idle time that HTA classifies as host wait (the launch call of
 * the next GPU activity started after the GPU went idle), less what the data loader covers
 * (GT01's), as a share of step time. Evidence: the CPU work that kept the GPU waiting. Anchors:
 * HTA idle-time breakdown, XProf kernel-launch 3/15 %, nsys cuda_kern_exec_sum queue time. */
#include "rules/rules_int.h"

#include <stdlib.h>

enum { WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 3, "host-wait idle share of step time (XProf kernel launch, moderate)"},
        {"crit_pct", 15, "host-wait idle share for crit (XProf kernel launch, high)"},
};
RULES_INFO(host_launch_bound, "GT04", "host launch-bound", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_GPU | RULES_HOST_TIMED |
                   RULES_WAIT_INFLATED);

static const gp_evidence_col cols[] = {{"CPU work while the GPU waits", GP_UNIT_TEXT},
                                       {"gaps", GP_UNIT_COUNT},
                                       {"idle before launch", GP_UNIT_US},
                                       {"share of step", GP_UNIT_PCT}};

#define SCAN_BACK 64 /* CPU events looked at before each launch that ends a gap */
#define SCAN_MISS 8  /* ...stopping after this many in a row miss the gap, once one covers it */

/* The CPU event that best explains a host-wait gap: among events on the launching thread that
 * cover at least half of it, the innermost (latest start); else the one covering most. Also the
 * part of the gap the data loader covers (that is starvation, GT01's, not launch overhead). */
/* Per event: the latest end of any event up to it on its track, steps left out (they are never
 * evidence). Where it is before a gap's start, nothing at or before that event can overlap the
 * gap, so the scan back stops there with the answer it would have reached. */
static int64_t *ends_so_far(const struct rules_ctx *c)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    int64_t *m = malloc((c->n_ev ? c->n_ev : 1) * sizeof(*m));
    for (size_t k = 0; k < nt && m; k++) {
        int64_t hi = INT64_MIN;
        for (uint32_t i = tr[k].first; i < tr[k].first + tr[k].count; i++) {
            const gp_event *e = &c->ev[i];
            if (!(e->flags & GP_EVF_STEP) && e->ts + e->dur > hi)
                hi = e->ts + e->dur;
            m[i] = hi;
        }
    }
    return m;
}

static uint32_t explain(const struct rules_ctx *c, const int64_t *ends, const gp_idle_gap *g,
                        int64_t *loader)
{
    uint32_t rt = g->next == GP_NONE ? GP_NONE : gp_analysis_runtime_of(c->a, g->next),
             best = GP_NONE;
    int64_t best_ov = 0, len = g->end - g->ts;
    int best_qual = 0, miss = 0;
    *loader = 0;
    if (rt == GP_NONE)
        return GP_NONE;
    const gp_track *tr = &gp_trace_tracks(c->t, &(size_t){0})[c->ev[rt].track];
    for (uint32_t i = rt + 1, k = 0; i-- > tr->first && k < SCAN_BACK && miss < SCAN_MISS; k++) {
        if (ends && ends[i] <= g->ts)
            break; /* every later step back misses the gap */
        const gp_event *e = &c->ev[i];
        int64_t a = e->ts > g->ts ? e->ts : g->ts, end = e->ts + e->dur;
        int64_t ov = (end < g->end ? end : g->end) - a;
        miss = ov <= 0 && best_qual ? miss + 1 : 0;
        if (ov <= 0 || (e->flags & GP_EVF_STEP))
            continue;
        if (e->flags & GP_EVF_DATALOADER) {
            *loader = ov > *loader ? ov : *loader;
            continue;
        }
        int qual = 2 * ov >= len;
        if ((qual && !best_qual) || (qual && best_qual && e->ts > c->ev[best].ts) ||
            (!qual && !best_qual && ov > best_ov))
            best = i, best_ov = ov, best_qual = qual;
    }
    return best;
}

/* Sum device gaps of each kind inside the analysed steps; host-wait time not covered by the
 * loader goes to `agg` by the CPU event that explains it. */
static gp_status split_idle(struct rules_ctx *c, int64_t idle[GP_IDLE_COUNT], struct rules_agg *agg)
{
    size_t ng;
    const gp_idle_gap *g = gp_analysis_device_gaps(c->a, &ng);
    int64_t *ends = ng ? ends_so_far(c) : NULL; /* NULL (no memory): the plain scan */
    gp_status rc = GP_OK;
    for (size_t i = 0; i < ng; i++) {
        int64_t in = rules_ivs_overlap(&c->step_ivs, g[i].ts, g[i].end), loader;
        if (in <= 0 || g[i].kind >= GP_IDLE_COUNT)
            continue;
        if (g[i].kind != GP_IDLE_HOST_WAIT) {
            idle[g[i].kind] += in;
            continue;
        }
        uint32_t who = explain(c, ends, &g[i], &loader);
        in = in > loader ? in - loader : 0;
        idle[GP_IDLE_HOST_WAIT] += in;
        if (in > 0 && rc == GP_OK)
            rc = rules_agg_add(agg, who == GP_NONE ? GP_STR_NONE : c->ev[who].name, 0, 0, in, 0, 0);
    }
    free(ends);
    return rc;
}

/* Median launch-call duration and the share of launches that queued (positive launch delay).
 * A call that launched several activities (cudaGraphLaunch: adjacent in the launch list) is one
 * launch, its delay its first activity's. */
static void launch_stats(const struct rules_ctx *c, int64_t *median, double *queued_pct,
                         size_t *n_in)
{
    size_t nl, k = 0, q = 0;
    const gp_launch *l = gp_analysis_launches(c->a, &nl);
    int64_t *d = malloc((nl ? nl : 1) * sizeof(*d));
    for (size_t i = 0; i < nl; i++) {
        const gp_event *r = &c->ev[l[i].runtime];
        if (rules_step_at(c, r->ts) < 0 || (i && l[i].runtime == l[i - 1].runtime))
            continue;
        if (d)
            d[k] = r->dur;
        k++;
        q += l[i].launch_delay > 0;
    }
    *median = d ? rules_median(d, k) : 0;
    *queued_pct = k ? 100.0 * (double)q / (double)k : 0;
    *n_in = k;
    free(d);
}

static gp_status evidence(struct rules_ctx *c, struct rules_out *o, struct rules_agg *agg)
{
    rules_agg_finish(agg);
    rules_cols(o, 4, cols);
    for (size_t i = 0; i < agg->n && i < 5; i++) {
        const struct rules_agg_row *r = &agg->rows[i];
        const char *name = r->k[0] == GP_STR_NONE ? "(no CPU range)" : gp_trace_str(c->t, r->k[0]);
        GP_TRY(rules_row(o, (gp_cell[]){{0, name},
                                        {(double)r->count, NULL},
                                        {(double)r->ns / 1e3, NULL},
                                        {rules_pct_of_steps(c, r->ns), NULL}}));
    }
    return GP_OK;
}

/* The step makes host syncs: a CUDA graph cannot capture it; fewer, fused ops still help. */
static gp_status advise_synced(const struct rules_ctx *c, struct rules_out *o, double h,
                               double syncs)
{
    if (c->cfg.rc.trainer && rules_count(c->cfg.rc.batch_size) > 0)
        GP_TRY(rules_knob(o, "--batch-size %ld", rules_count(c->cfg.rc.batch_size) * 2));
    else
        GP_TRY(rules_knob(o, "torch.compile(model); no .item()/sync in the loop"));
    return rules_reco(o,
                      "The GPU idles %.1f%% of step time because the host launches work too "
                      "slowly, but each step waits for the device %.1f times (syncs, blocking "
                      "copies): a CUDA graph cannot capture that. Remove the syncs first, then "
                      "capture the step (torch.cuda.graphs; the trainer's --cuda-graphs); "
                      "meanwhile fewer, fused ops (torch.compile) or a larger batch.",
                      h, syncs);
}

/* CUDA graphs: the step's launches replayed as one, so the host-wait idle goes. */
static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double h, int64_t gain_step,
                        double launches)
{
    char a[32];
    double syncs = rules_host_syncs_per_step(c);
    if (syncs >= 1)
        return advise_synced(c, o, h, syncs);
    GP_TRY(rules_knob_for(c, o, "--cuda-graphs",
                          "torch.cuda.graphs / torch.compile(model, mode=\"reduce-overhead\")"));
    return rules_reco(o,
                      "The GPU idles %.1f%% of step time because the host launches work too "
                      "slowly. Capture the step in a CUDA graph (torch.cuda.graphs, or "
                      "torch.compile(mode=\"reduce-overhead\"); the bundled trainer's "
                      "--cuda-graphs): its %.0f launches replay as one, saving up to the "
                      "host-wait idle, %s a step. Fewer, fused ops (torch.compile; the trainer's "
                      "--fused) or a larger batch%s cut the launches too.",
                      h, launches, rules_fmt_ns(a, sizeof(a), gain_step),
                      c->cfg.rc.trainer && rules_count(c->cfg.rc.batch_size) > 0 ? " (--batch-size)"
                                                                                 : "");
}

gp_status rules_host_launch_bound(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32];
    int64_t idle[GP_IDLE_COUNT] = {0}, med;
    double queued;
    size_t n_launch;
    struct rules_agg agg = {0};
    gp_status rc = split_idle(c, idle, &agg);
    double h = rules_pct_of_steps(c, idle[GP_IDLE_HOST_WAIT]);
    launch_stats(c, &med, &queued, &n_launch);
    rules_measure(o, "host_wait_share", GP_UNIT_PCT, h, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "GPU idle waiting for the host %.1f%% of step time, loader wait "
                           "excluded (kernel wait "
                           "%.1f%%, other %.1f%%); %.0f launches per step, median launch call "
                           "%s, %.0f%% of launches queued",
                           h, rules_pct_of_steps(c, idle[GP_IDLE_KERNEL_WAIT]),
                           rules_pct_of_steps(c, idle[GP_IDLE_OTHER]),
                           rules_per_step(c, (double)n_launch), rules_fmt_ns(a, sizeof(a), med),
                           queued);
    if (rc == GP_OK && o->f.severity > GP_SEV_OK) {
        rc = evidence(c, o, &agg);
        if (rc == GP_OK)
            rc = rules_gain(o, idle[GP_IDLE_HOST_WAIT],
                            (int64_t)rules_per_step(c, (double)idle[GP_IDLE_HOST_WAIT]),
                            "if launches kept ahead of the GPU, host-wait idle would vanish");
        if (rc == GP_OK)
            rc = advise(c, o, h, (int64_t)rules_per_step(c, (double)idle[GP_IDLE_HOST_WAIT]),
                        rules_per_step(c, (double)n_launch));
    }
    rules_agg_release(&agg);
    return rc;
}
