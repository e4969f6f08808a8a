/* GT18 tiny_cpu_ops: a CPU-bound step made of many tiny operators (a loss or metric written as a
 * Python loop over samples, per-element indexing): each op costs the framework's dispatch
 * overhead and the Python between ops, more than its arithmetic. Counted per thread on the
 * top-level operators (cpu_op not inside another cpu_op) of the analysed steps, outside the
 * DataLoader and the optimizer (GT01 and GT17 speak for those); "tiny" is at most tiny_us, and
 * the gaps between consecutive tiny ops up to gap_us count with them (the Python that issues
 * them). For GPU traces the host's launch cost is GT04's: this rule looks at CPU-only steps.
 * No anchor has this rule (issue 17 §12): thresholds ours. */
#include "gp/trace_schema.h"
#include "rules_int.h"

#include <stdlib.h>
#include <string.h>

enum { TINY_US, GAP_US, MIN_OPS_PER_STEP, WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"tiny_us", 20, "an operator this short or shorter is tiny, us (ours)"},
        {"gap_us", 50, "gaps between tiny operators up to this count with them, us (ours)"},
        {"min_ops_per_step", 100, "...with at least this many tiny operators per step (ours)"},
        {"warn_pct", 25, "tiny operators and the gaps between them, share of step time (ours)"},
        {"crit_pct", 50, "share for crit (ours)"},
};
RULES_INFO(tiny_cpu_ops, "GT18", "many tiny CPU operators", 0, RULES_NEEDS_STEPS);

static const gp_evidence_col cols[] = {{"operator", GP_UNIT_TEXT},
                                       {"calls per step", GP_UNIT_COUNT},
                                       {"mean duration", GP_UNIT_US},
                                       {"total", GP_UNIT_US}};

struct tiny {
    const double *p;
    struct rules_agg agg; /* by name: count, time */
    int64_t ns;           /* tiny ops plus the short gaps between them, in steps */
    size_t n;             /* tiny top-level ops in steps */
};

/* DataLoader waits and the optimizer: other rules' time. */
static int excluded_range(const char *s)
{
    return strncmp(s, GP_NAME_LOADER_PREFIX, strlen(GP_NAME_LOADER_PREFIX)) == 0 ||
           strncmp(s, "Optimizer.", 10) == 0;
}

/* One CPU track: events are sorted by start, parents first. */
static gp_status scan_track(const struct rules_ctx *c, const gp_track *tr, struct tiny *t)
{
    int64_t op_end = INT64_MIN, skip_end = INT64_MIN, prev_end = INT64_MIN;
    const int64_t tiny_ns = (int64_t)(t->p[TINY_US] * 1e3), gap_ns = (int64_t)(t->p[GAP_US] * 1e3);
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &c->ev[i];
        if (e->ts < skip_end)
            continue;
        if (e->kind == GP_EV_USER_ANNOTATION && e->name != GP_STR_NONE &&
            excluded_range(gp_trace_str(c->t, e->name))) {
            skip_end = e->ts + e->dur;
            prev_end = INT64_MIN;
            continue;
        }
        if (e->kind != GP_EV_CPU_OP || e->ts < op_end)
            continue; /* not an operator, or inside one */
        op_end = e->ts + e->dur;
        if (e->dur > tiny_ns || rules_step_at(c, e->ts) < 0) {
            prev_end = INT64_MIN;
            continue;
        }
        int64_t gap = prev_end != INT64_MIN ? e->ts - prev_end : gap_ns + 1;
        t->ns += e->dur + (gap >= 0 && gap <= gap_ns ? gap : 0);
        t->n++;
        prev_end = op_end;
        GP_TRY(rules_agg_add(&t->agg, e->name, 0, 0, e->dur, 0, 0));
    }
    return GP_OK;
}

static int cmp_count(const void *pa, const void *pb)
{
    const struct rules_agg_row *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return a->k[0] < b->k[0] ? -1 : a->k[0] > b->k[0];
}

static gp_status evidence(const struct rules_ctx *c, struct rules_out *o, struct tiny *t)
{
    size_t n = t->agg.n;
    struct rules_agg_row *rows = t->agg.rows;
    qsort(rows, n, sizeof(*rows), cmp_count); /* the slots index is not used after this */
    rules_cols(o, 4, cols);
    for (size_t i = 0; i < n && i < 6; i++)
        GP_TRY(rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, rows[i].k[0])},
                                        {rules_per_step(c, (double)rows[i].count), NULL},
                                        {(double)rows[i].ns / (double)rows[i].count / 1e3, NULL},
                                        {(double)rows[i].ns / 1e3, NULL}}));
    return GP_OK;
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double share, double ops)
{
    if (c->cfg.trainer && c->cfg.batch_size > 0) {
        GP_TRY(rules_knob(o, "--batch-size %ld", c->cfg.batch_size * 4));
        return rules_reco(o,
                          "%.0f tiny operators per step take %.0f%% of it: their cost is per "
                          "call, so a larger batch (--batch-size %ld, you ran %ld) does more "
                          "work per call.",
                          ops, share, c->cfg.batch_size * 4, c->cfg.batch_size);
    }
    GP_TRY(rules_knob(o, "vectorise the per-sample loop (one op over the batch); torch.compile"));
    return rules_reco(o,
                      "%.0f tiny operators per step (the most frequent below) and the Python "
                      "between them take %.0f%% of the step: each costs the dispatcher's "
                      "overhead, more than its arithmetic. Replace loops over samples or "
                      "elements by one operation over the batch (indexing with a tensor, "
                      "gather, masks), or let torch.compile fuse them; a larger batch does more "
                      "work per call.",
                      ops, share);
}

gp_status rules_tiny_cpu_ops(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    if (c->has_gpu)
        return rules_summary(o, "GPU trace: the host's launch cost is GT04's (not applicable)");
    struct tiny t = {p, {0}, 0, 0};
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    gp_status rc = GP_OK;
    for (size_t i = 0; i < nt && rc == GP_OK; i++)
        if (!tr[i].is_gpu)
            rc = scan_track(c, &tr[i], &t);
    double share = rules_pct_of_steps(c, t.ns), ops = rules_per_step(c, (double)t.n);
    if (ops >= p[MIN_OPS_PER_STEP])
        rules_measure(o, "tiny_op_share", GP_UNIT_PCT, share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "%.0f tiny CPU operators per step (at most %.0f us each); with the "
                           "gaps between them %.1f%% of step time",
                           ops, p[TINY_US], share);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = evidence(c, o, &t);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = rules_gain(o, t.ns, (int64_t)rules_per_step(c, (double)t.ns),
                        "at most the tiny operators' time; one vectorised op costs about one of "
                        "them");
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = advise(c, o, share, ops);
    rules_agg_release(&t.agg);
    return rc;
}
