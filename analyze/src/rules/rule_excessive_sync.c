/* GT08 excessive_sync: cudaDeviceSynchronize, cudaStreamSynchronize and cudaEventSynchronize
 * inside steps, priced by the GPU idle time they cause (from each call's start to the next GPU
 * work after it returns; rules_idle_cost.c): a sync the GPU works through costs the step
 * nothing, and the host's wait while work drains is not lost. Also device-wide syncs per step.
 * Anchor: nsys cuda_api_sync (lists every call, no threshold); the thresholds are ours. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdio.h>

enum { WARN_PCT, CRIT_PCT, DEVICE_SYNCS_PER_STEP, MIN_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 5, "GPU idle sync calls cause, share of step time (ours)"},
        {"crit_pct", 20, "share for crit (ours)"},
        {"device_syncs_per_step", 1, "device-wide syncs per step that fire by themselves (ours)"},
        {"min_pct", 1, "...when they block at least this share of step time (ours)"},
};
RULES_INFO(excessive_sync, "GT08", "excessive synchronisation", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_GPU);

static const gp_evidence_col cols[] = {{"API", GP_UNIT_TEXT},
                                       {"CPU op", GP_UNIT_TEXT},
                                       {"calls per step", GP_UNIT_COUNT},
                                       {"total", GP_UNIT_US},
                                       {"longest", GP_UNIT_US}};

/* The start of the first launch call on `track` at or after ts, or `end` if none before it. */
static int64_t next_launch_on(const struct rules_ctx *c, uint32_t track, int64_t ts, int64_t end)
{
    size_t n, lo = 0, hi;
    const gp_launch *l = gp_analysis_launches(c->a, &n);
    for (hi = n; lo < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->ev[l[mid].runtime].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && c->ev[l[lo].runtime].ts < end; lo++)
        if (c->ev[l[lo].runtime].track == track)
            return c->ev[l[lo].runtime].ts;
    return end;
}

/* What a sync that idles the GPU also costs: the host work that launches nothing (rules_host_use)
 * between its return and its thread's next launch runs while the GPU has nothing queued, where
 * without the sync it would overlap the work queued before it: up to the GPU's busy time in a
 * step's length before the sync (not from its step's start: where steps are cut without markers,
 * the sync can open one). Real H200 trace, loss.item() after each step then 0.6 ms of CPU ops on
 * a CPU tensor: the sync itself idled the GPU 0.3% of step time (the profiled host barely kept
 * the GPU busy), the overlap is 12%; reading the loss every 50 steps gained 13.4% measured. */
static int64_t overlap_lost(struct rules_ctx *c, const struct rules_host_map *m, const gp_sync *s)
{
    long k = rules_step_of(c, s->event);
    int64_t end = s->ts + s->dur, u[RULES_HOST_USES];
    const gp_step *st = &c->steps[k];
    int64_t next = next_launch_on(c, c->ev[s->event].track, end, c->win_end);
    if (rules_host_split(c, m, c->ev[s->event].track, end, next, u, NULL) != GP_OK)
        return 0;
    int64_t busy = rules_ivs_overlap(&c->compute, s->ts - (st->end - st->ts), s->ts);
    return u[RULES_HOST_WORK] < busy ? u[RULES_HOST_WORK] : busy;
}

static gp_status gather(struct rules_ctx *c, struct rules_agg *agg, int64_t *total, int64_t *idle,
                        int64_t *overlap, size_t *n_dev, size_t *n_wait)
{
    size_t n;
    struct rules_stall stall = {0};
    const struct rules_host_map *m;
    const gp_sync *s = gp_analysis_syncs(c->a, &n);
    *total = *idle = *overlap = 0, *n_dev = *n_wait = 0;
    GP_TRY(rules_ctx_intervals(c));
    GP_TRY(rules_ctx_host_map(c, &m));
    gp_status rc = GP_OK;
    for (size_t i = 0; i < n && rc == GP_OK; i++) {
        if (rules_step_of(c, s[i].event) < 0)
            continue;
        *n_wait += !s[i].gpu_side && s[i].kind == GP_SYNC_STREAM_WAIT;
        if (!rules_sync_blocks_host(&s[i]))
            continue;
        int64_t caused;
        rc = rules_stall_add(c, &stall, s[i].ts, s[i].ts + s[i].dur, &caused);
        if (rc != GP_OK || caused <= 0)
            continue; /* the GPU worked through it: it cost the step nothing */
        *total += s[i].dur;
        *idle += caused;
        *overlap += overlap_lost(c, m, &s[i]);
        *n_dev += s[i].kind == GP_SYNC_DEVICE;
        rc = rules_agg_add(agg, c->ev[s[i].event].name, rules_op_key(c, s[i].op), 0, s[i].dur, 0,
                           0);
    }
    return rc;
}

static gp_status evidence(const struct rules_ctx *c, struct rules_out *o, struct rules_agg *agg)
{
    rules_agg_finish(agg);
    rules_cols(o, 5, cols);
    for (size_t i = 0; i < agg->n && i < 5; i++) {
        const struct rules_agg_row *r = &agg->rows[i];
        GP_TRY(rules_row(
                o, (gp_cell[]){{0, gp_trace_str(c->t, r->k[0])},
                               {0, r->k[1] == GP_STR_NONE ? "-" : gp_trace_str(c->t, r->k[1])},
                               {rules_per_step(c, (double)r->count), NULL},
                               {(double)r->ns / 1e3, NULL},
                               {(double)r->ns_max / 1e3, NULL}}));
    }
    return GP_OK;
}

/* The summary's word on overlap_lost, where there is any. */
static const char *overlap_note(char *buf, size_t cap, double pct)
{
    buf[0] = 0;
    if (pct > 0)
        snprintf(buf, cap, "; host work after them that would overlap the GPU's work %.1f%%", pct);
    return buf;
}

gp_status rules_excessive_sync(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int64_t total, idle, overlap;
    size_t n_dev, n_wait, n_in = 0;
    struct rules_agg agg = {0};
    gp_status rc = gather(c, &agg, &total, &idle, &overlap, &n_dev, &n_wait);
    double ov = rules_pct_of_steps(c, overlap);
    char note[96];
    idle += overlap;
    for (size_t i = 0; i < agg.n; i++)
        n_in += agg.rows[i].count;
    double y = rules_pct_of_steps(c, idle), dev = rules_per_step(c, (double)n_dev);
    rules_measure(o, "sync_share", GP_UNIT_PCT, y, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (o->f.severity == GP_SEV_OK && dev >= p[DEVICE_SYNCS_PER_STEP] && y >= p[MIN_PCT])
        rules_measure(o, "device_syncs_per_step", GP_UNIT_COUNT, dev,
                      ">=", p[DEVICE_SYNCS_PER_STEP], INFINITY);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "%.1f host syncs per step that idle the GPU (%.1f device-wide, %.1f "
                           "stream waits): GPU idle %.1f%% of step time because of them (host "
                           "blocked %.1f%%%s)",
                           rules_per_step(c, (double)n_in), dev, rules_per_step(c, (double)n_wait),
                           y, rules_pct_of_steps(c, total), overlap_note(note, sizeof(note), ov));
    if (rc == GP_OK && o->f.severity) {
        rc = evidence(c, o, &agg);
        if (rc == GP_OK)
            rc = rules_gain(o, idle, (int64_t)rules_per_step(c, (double)idle),
                            "the GPU idle time the syncs cause (the host's wait while queued "
                            "work drains is not lost)%s",
                            overlap > 0 ? ", with the host work after them that would overlap "
                                          "the GPU's work without them"
                                        : "");
        if (rc == GP_OK && !c->cfg.rc.trainer)
            rc = rules_knob(o, "no torch.cuda.synchronize()/.item()/.nonzero() in the loop");
        if (rc == GP_OK)
            rc = rules_reco(o, "Synchronisation APIs block the host until all issued CUDA work is "
                               "complete. Avoid excessive synchronisation; use asynchronous CUDA "
                               "events (cudaStreamWaitEvent, cudaEventSynchronize) instead of "
                               "host syncs. In PyTorch the usual sources are .item(), .nonzero(), "
                               "boolean-mask indexing and torch.cuda.synchronize() in the loop.");
    }
    rules_agg_release(&agg);
    return rc;
}
