/* GT11 allocator_churn: cudaMalloc/cudaFree (and driver equivalents) called during steady-state
 * steps, and the allocator's reserved bytes dropping within steps: caching-allocator misses
 * from variable shapes or empty_cache(). No anchor has a trace rule for this: ours. */
#include "rules/rules_int.h"

#include <stdlib.h>

enum { WARN_PCT, CRIT_PCT, RESERVED_STEPS_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 1, "allocation-call time, share of step time, with any such call (ours)"},
        {"crit_pct", 5, "share for crit (ours)"},
        {"reserved_steps_pct", 10, "steps in which reserved bytes drop, share that fires (ours)"},
};
RULES_INFO(allocator_churn, "GT11", "allocator churn", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_MEM);

static const gp_evidence_col cols[] = {{"API", GP_UNIT_TEXT},
                                       {"calls", GP_UNIT_COUNT},
                                       {"per step", GP_UNIT_COUNT},
                                       {"total", GP_UNIT_US},
                                       {"longest", GP_UNIT_US}};

/* The allocation calls in analysed steps: their time, per name, and in how many steps. */
static gp_status gather(struct rules_ctx *c, struct rules_agg *agg, int64_t *total,
                        size_t *n_steps_with)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    char *with = calloc(c->n_steps ? c->n_steps : 1, 1);
    if (!with)
        return GP_ENOMEM;
    *total = 0;
    *n_steps_with = 0;
    for (size_t t = 0; t < nt; t++) {
        if (tr[t].is_gpu)
            continue;
        for (uint32_t i = tr[t].first; i < tr[t].first + tr[t].count; i++) {
            const gp_event *e = &c->ev[i];
            long k = rules_step_at(c, e->ts);
            if ((e->kind != GP_EV_RUNTIME && e->kind != GP_EV_DRIVER) ||
                rules_name_class(c, e) != RULES_NC_MALLOC || k < 0)
                continue;
            *total += e->dur;
            *n_steps_with += !with[k];
            with[k] = 1;
            gp_status rc = rules_agg_add(agg, e->name, 0, 0, e->dur, 0, 0);
            if (rc != GP_OK) {
                free(with);
                return rc;
            }
        }
    }
    free(with);
    return GP_OK;
}

/* Does reserved memory drop anywhere in [ts, end)? Segments handed back to the driver mean they
 * will be cudaMalloc'ed again: churn. (Reserved only growing is GT12's memory growth.) */
static int reserved_drops(const gp_mem_series *s, int64_t ts, int64_t end)
{
    const gp_mem_point *p = rules_mem_at(s, ts), *last = s->points + s->n_points;
    for (; p && p + 1 < last && p[1].ts < end; p++)
        if (p[1].reserved < p[0].reserved)
            return 1;
    return 0;
}

/* Analysed steps in which the device's reserved bytes drop. */
static size_t reserved_changes(const struct rules_ctx *c)
{
    size_t n, changed = 0;
    const gp_mem_series *s = gp_analysis_memory(c->a, &n);
    for (size_t i = 0; i < n; i++)
        if (s[i].device_type == 1)
            for (size_t k = 0; k < c->n_steps; k++)
                changed += reserved_drops(&s[i], c->steps[k].ts, c->steps[k].end);
    return changed;
}

gp_status rules_allocator_churn(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int64_t total = 0;
    size_t n_with = 0;
    struct rules_agg agg = {0};
    gp_status rc = gather(c, &agg, &total, &n_with);
    rules_agg_finish(&agg);
    size_t calls = 0, changed = reserved_changes(c);
    for (size_t i = 0; i < agg.n; i++)
        calls += agg.rows[i].count;
    double share = rules_pct_of_steps(c, total);
    double ch = 100.0 * (double)changed / (double)c->n_steps;
    rules_measure(o, "alloc_call_share", GP_UNIT_PCT, share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    /* Calls in one step of several are the allocator reaching a new peak once (the second
     * step of a `with profile():` block around a program's start on an H200: one cudaMalloc,
     * 2.3% of two steps, none in 29 later ones), not churn: GT12 judges growth. */
    if (calls == 0 || (n_with < 2 && c->n_steps >= 2))
        rules_fire(o, GP_SEV_OK, p[WARN_PCT]);
    if (o->f.severity == GP_SEV_OK && ch > p[RESERVED_STEPS_PCT])
        rules_measure(o, "reserved_change_steps", GP_UNIT_PCT, ch, ">=", p[RESERVED_STEPS_PCT],
                      1e300);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "%zu allocation calls in analysed steps (%.1f%% of step time); "
                           "reserved memory dropped in %zu of %zu steps",
                           calls, share, changed, c->n_steps);
    rules_cols(o, 5, cols);
    for (size_t i = 0; i < agg.n && i < 5 && rc == GP_OK && o->f.severity; i++)
        rc = rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, agg.rows[i].k[0])},
                                      {(double)agg.rows[i].count, NULL},
                                      {rules_per_step(c, (double)agg.rows[i].count), NULL},
                                      {(double)agg.rows[i].ns / 1e3, NULL},
                                      {(double)agg.rows[i].ns_max / 1e3, NULL}});
    rules_agg_release(&agg);
    if (rc != GP_OK || !o->f.severity)
        return rc;
    if (total > 0)
        GP_TRY(rules_gain(o, total, (int64_t)rules_per_step(c, (double)total),
                          "the allocation calls would be cache hits"));
    if (!c->cfg.rc.trainer)
        GP_TRY(rules_knob(o, "no torch.cuda.empty_cache() in the loop; fixed/bucketed shapes"));
    return rules_reco(o, "The allocator calls cudaMalloc/cudaFree during steady-state steps. "
                         "Usually caused by variable input shapes or empty_cache(): pad or bucket "
                         "shapes, warm up with the largest batch, avoid torch.cuda.empty_cache() "
                         "in the loop, consider PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.");
}
