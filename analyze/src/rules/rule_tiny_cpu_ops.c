/* GT18 tiny_cpu_ops: a CPU-bound step made of many tiny operators (a loss or metric written as a
 * Python loop over samples, an LSTMCell unrolled over time, per-element indexing): each op costs
 * the framework's dispatch overhead and the Python between ops, more than its arithmetic.
 * Counted per thread on the leaf operators (a cpu_op with no cpu_op inside it) of the analysed
 * steps, outside the DataLoader and the optimizer (GT01 and GT17 speak for those), so a composite
 * op made only of tiny ops (aten::lstm_cell: addmm, chunk, sigmoid, ...) counts as what it is
 * (issue 24 §2: on the top-level ops such a loop read 23%, and batch 64 took 1.25x batch 4's
 * time). "Tiny" is at most tiny_us, and the gaps between consecutive tiny leaves up to gap_us
 * count with them (the dispatch of the composite op around them, the Python that issues them).
 * A tiny op's own time counts up to the median tiny op's: the rest is taken as its arithmetic,
 * which grows with the batch (an LSTMCell loop at batch 64, whose batch sweep puts 73% of the step
 * in the batch-independent part: whole ops counted said 97%, this says 71%). That share decides
 * whether the rule fires; the gain is priced otherwise (price()).
 * For GPU traces the host's launch cost is GT04's: this rule looks at CPU-only steps.
 * No anchor has this rule (issue 17 §12): thresholds ours. */
#include "gp/trace_schema.h"
#include "rules/rules_int.h"
#include "rules/rules_op_overhead.h"

#include <stdlib.h>
#include <string.h>

enum { TINY_US, GAP_US, MIN_OPS_PER_STEP, WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"tiny_us", 20, "a leaf operator this short or shorter is tiny, us (ours)"},
        {"gap_us", 50, "gaps between tiny operators up to this count with them, us (ours)"},
        {"min_ops_per_step", 100, "...with at least this many tiny operators per step (ours)"},
        {"warn_pct", 25, "tiny operators and the gaps between them, share of step time (ours)"},
        {"crit_pct", 50, "share for crit (ours)"},
};
RULES_INFO(tiny_cpu_ops, "GT18", "many tiny CPU operators", 0,
           RULES_NEEDS_STEPS | RULES_READS_CPU | RULES_HOST_TIMED);

static const gp_evidence_col cols[] = {{"operator (top level)", GP_UNIT_TEXT},
                                       {"calls per step", GP_UNIT_COUNT},
                                       {"tiny ops per step", GP_UNIT_COUNT},
                                       {"time", GP_UNIT_US}};

struct tiny {
    const double *p;
    struct rules_agg agg; /* by top-level op: tiny leaves (count), their time (ns), calls (bytes) */
    int64_t ns;           /* tiny leaves plus the short gaps between them, in steps */
    size_t n;             /* tiny leaves in steps */
    int64_t *durs;        /* first pass: each tiny leaf's duration */
    size_t cap;
    int64_t floor_ns;           /* second pass: a tiny leaf counts up to this (the median) */
    int64_t own_ns, counted_ns; /* second pass: the tiny leaves' own time, and what counts of it */
    size_t records; /* second pass: the profiler's records in steps, outside the others' ranges */
};

/* DataLoader waits and the optimizer: other rules' time. */
static int excluded_range(const char *s)
{
    return strncmp(s, GP_NAME_LOADER_PREFIX, strlen(GP_NAME_LOADER_PREFIX)) == 0 ||
           strncmp(s, "Optimizer.", 10) == 0;
}

/* The next cpu_op on the track after `i` starts at or after `i` ends: nothing inside it. */
static int is_leaf(const struct rules_ctx *c, const gp_track *tr, uint32_t i)
{
    const int64_t end = c->ev[i].ts + c->ev[i].dur;
    for (uint32_t j = i + 1; j < tr->first + tr->count && c->ev[j].ts < end; j++)
        if (c->ev[j].kind == GP_EV_CPU_OP)
            return 0;
    return 1;
}

/* The walk along one track: where the current top-level op and excluded range end. */
struct walk {
    int64_t top_end, skip_end, prev_end; /* prev_end: the last tiny leaf's, or INT64_MIN */
    uint32_t top;                        /* the current top-level op */
    int top_counted;                     /* its call is counted in the evidence */
};

/* First pass (durs): keep the duration. Second: count the leaf and the gap before it. */
static gp_status add_leaf(const struct rules_ctx *c, struct tiny *t, struct walk *w,
                          const gp_event *e, int first)
{
    if (first) {
        if (t->n == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 1024;
            int64_t *d = realloc(t->durs, cap * sizeof(*d));
            if (!d)
                return GP_ENOMEM;
            t->durs = d, t->cap = cap;
        }
        t->durs[t->n++] = e->dur;
        return GP_OK;
    }
    const int64_t gap_ns = (int64_t)(t->p[GAP_US] * 1e3);
    int64_t gap = w->prev_end != INT64_MIN ? e->ts - w->prev_end : gap_ns + 1;
    int64_t own = e->dur < t->floor_ns ? e->dur : t->floor_ns;
    int64_t ns = own + (gap >= 0 && gap <= gap_ns ? gap : 0);
    t->own_ns += e->dur;
    t->counted_ns += own;
    t->ns += ns;
    t->n++;
    w->prev_end = e->ts + e->dur;
    GP_TRY(rules_agg_add(&t->agg, c->ev[w->top].name, 0, 0, ns, 0, !w->top_counted));
    w->top_counted = 1;
    return GP_OK;
}

/* One CPU track: events are sorted by start, parents first. */
static gp_status scan_track(const struct rules_ctx *c, const gp_track *tr, struct tiny *t,
                            int first)
{
    struct walk w = {INT64_MIN, INT64_MIN, INT64_MIN, 0, 0};
    const int64_t tiny_ns = (int64_t)(t->p[TINY_US] * 1e3);
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &c->ev[i];
        if (e->ts < w.skip_end)
            continue;
        if (e->kind == GP_EV_USER_ANNOTATION && e->name != GP_STR_NONE &&
            excluded_range(gp_trace_str(c->t, e->name))) {
            w.skip_end = e->ts + e->dur;
            w.prev_end = INT64_MIN;
            continue;
        }
        if (!first && rules_host_record(e) && rules_step_at(c, e->ts) >= 0)
            t->records++;
        if (e->kind != GP_EV_CPU_OP)
            continue;
        if (e->ts >= w.top_end) /* a top-level op */
            w.top = i, w.top_end = e->ts + e->dur, w.top_counted = 0;
        if (!is_leaf(c, tr, i))
            continue;
        if (e->dur > tiny_ns || rules_step_at(c, e->ts) < 0)
            w.prev_end = INT64_MIN;
        else
            GP_TRY(add_leaf(c, t, &w, e, first));
    }
    return GP_OK;
}

static int cmp_time(const void *pa, const void *pb)
{
    const struct rules_agg_row *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return a->k[0] < b->k[0] ? -1 : a->k[0] > b->k[0];
}

static gp_status evidence(const struct rules_ctx *c, struct rules_out *o, struct tiny *t)
{
    size_t n = t->agg.n;
    struct rules_agg_row *rows = t->agg.rows;
    qsort(rows, n, sizeof(*rows), cmp_time); /* the slots index is not used after this */
    rules_cols(o, 4, cols);
    for (size_t i = 0; i < n && i < 6; i++)
        GP_TRY(rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, rows[i].k[0])},
                                        {rules_per_step(c, (double)rows[i].bytes), NULL},
                                        {rules_per_step(c, (double)rows[i].count), NULL},
                                        {(double)rows[i].ns / 1e3, NULL}}));
    return GP_OK;
}

/* A recurrent cell called once per time step among the rows evidence() shows, or NULL. */
static const struct rules_agg_row *cell_loop(const struct rules_ctx *c, const struct tiny *t)
{
    static const char *const cells[] = {"aten::lstm_cell", "aten::gru_cell", "aten::rnn_tanh_cell",
                                        "aten::rnn_relu_cell"};
    for (size_t i = 0; i < t->agg.n && i < 6; i++)
        for (size_t k = 0; k < sizeof(cells) / sizeof(cells[0]); k++)
            if (strcmp(gp_trace_str(c->t, t->agg.rows[i].k[0]), cells[k]) == 0)
                return &t->agg.rows[i];
    return NULL;
}

static gp_status advise_cell(const struct rules_ctx *c, struct rules_out *o, double share,
                             double ops, const struct rules_agg_row *row)
{
    const char *cell = gp_trace_str(c->t, row->k[0]);
    GP_TRY(rules_knob(o, "one nn.%s over the whole sequence; torch.compile; a larger batch",
                      strstr(cell, "gru")    ? "GRU"
                      : strstr(cell, "lstm") ? "LSTM"
                                             : "RNN"));
    return rules_reco(o,
                      "%.0f tiny operators per step and the dispatch between them take %.0f%% "
                      "of the step: a recurrent cell called once per time step (%s, below) runs "
                      "%.0f tiny ops a call, each costing the dispatcher's overhead more than its "
                      "arithmetic. Run the whole sequence as one layer (nn.LSTM, nn.GRU), or let "
                      "torch.compile fuse the loop; the cost is per call, so a larger batch costs "
                      "little more time a step.",
                      ops, share, cell, (double)row->count / (double)(row->bytes ? row->bytes : 1));
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double share, double ops,
                        const struct rules_agg_row *cell)
{
    if (c->cfg.rc.trainer && rules_count(c->cfg.rc.batch_size) > 0) {
        GP_TRY(rules_knob(o, "--batch-size %ld", rules_count(c->cfg.rc.batch_size) * 4));
        return rules_reco(o,
                          "%.0f tiny operators per step take %.0f%% of it: their cost is per "
                          "call, so a larger batch (--batch-size %ld, you ran %ld) does more "
                          "work per call.",
                          ops, share, rules_count(c->cfg.rc.batch_size) * 4,
                          rules_count(c->cfg.rc.batch_size));
    }
    if (cell)
        return advise_cell(c, o, share, ops, cell);
    GP_TRY(rules_knob(o, "vectorise the per-sample loop (one op over the batch); torch.compile"));
    return rules_reco(o,
                      "%.0f tiny operators per step (under the operators below) and the dispatch "
                      "and Python between them take %.0f%% of the step: each costs the "
                      "dispatcher's overhead, more than its arithmetic. Replace loops over "
                      "samples or elements by one operation over the batch (indexing with a "
                      "tensor, gather, masks), or let torch.compile fuse them; a larger batch "
                      "does more work per call.",
                      ops, share);
}

/* The gain: what one vectorised op over the batch saves, the per-call cost of the loop's
 * operators (rules_op_overhead.c: each operator's own time up to a per-call cost read off the
 * trace's view operators, the autograd engine's records and the interpreter between top-level
 * operators in full, only operators called in a loop; the median step's), net of the profiler's
 * records there: each record costs the thread time between and inside the ops, which a run
 * without the profiler does not spend and fusing the loop cannot save.
 * Measured (bench/gt18_sweep.py, 2026-11-27, each fix timed beside its trace): two families
 * at batches 4-512, an LSTMCell loop (its tiny ops grow in size with the batch) and a loss
 * looped over the samples (they grow in number), 72 traces in 6 sweeps (load 0.5-3, one at
 * 4-5). Counting each tiny leaf up to the median tiny leaf and the gaps between them (the model
 * before) put 39 of 72 outside 25% of the fix: the LSTM at batches 256-512 at -31% to +230%
 * (the median grows with the batch, and aten::mm's GEMM after its aten::resolve_conj child is
 * a "gap" between leaves: 3 us at batch 4, 29 us at 512), the loss loop at batches 64-512 at
 * -25% to -61% (half of every op's time set aside as arithmetic that ops on 32 numbers do not
 * have, the autograd engine's records capped) and at batch 4 at +47% to +163% (the MLP's ops
 * counted as the loop's). This model: 8 of 72 outside (of the 60 its constants were chosen on,
 * 6; of the 12 after, 2): the LSTM at batches 4-64 at -9% to +19%, at 128 -36% (load 4-5) and
 * -3% to +10%, at 256-512 +31%, -30% (load 4-5), +71% and +112% (where those runs' fixes
 * gained 22.8% and 13.1%: the fix itself measured 22.8-41.3% at batch 256 and 13.1-30.1% at
 * 512 over six runs each) and the 8 others within 25%; the loss loop at -33% (batch 128, load
 * 4-5), -29% (512), +37% (batch 4, a fix of 25.5%), the 33 others at -24% to +4%.
 * Where over half of the looped ATen ops' own time is set aside as arithmetic (ARITH_PCT: the
 * LSTM at 128-512, 22 traces with the stored ones) the fix measured 0.47-1.56x the prediction
 * (17 of 22 at 0.76-1.10x), and the gain says it is at most medium-sure. */
#define ARITH_PCT 50.0

static gp_status price(const struct rules_ctx *c, struct rules_out *o, const struct tiny *t)
{
    char a[32], b[32];
    const gp_profiler_cost *k = &c->cost;
    struct rules_op_overhead v;
    GP_TRY(rules_op_overhead(c, excluded_range, &v));
    double looped = v.ops ? (double)v.looped / (double)v.ops : 0;
    double prof = (double)t->records * (double)k->record_cost_ns * looped;
    prof = prof < (double)v.ns ? prof : (double)v.ns;
    GP_TRY(rules_gain(o, v.ns, v.step_ns,
                      "the per-call cost of the operators called in a loop (their own time; "
                      "an ATen op whose median call is over %s, three view ops', that much a "
                      "call) and the interpreter between them, of which %s a step is the "
                      "profiler's cost of its records; one vectorised op costs about one of "
                      "them",
                      rules_fmt_ns(a, sizeof(a), v.cap_ns),
                      rules_fmt_ns(b, sizeof(b), (int64_t)rules_per_step(c, prof))));
    o->f.gain_prof_step_ns = k->record_cost_ns > 0 ? (int64_t)rules_per_step(c, prof) : -1;
    double arith = v.aten_self_ns > 0 ? 100.0 * (double)(v.aten_self_ns - v.aten_counted_ns) /
                                                (double)v.aten_self_ns
                                      : 0;
    if (arith > ARITH_PCT &&
        !(o->f.gain_why = rules_strf(o,
                                     "%.0f%% of the looped ATen ops' own time is taken for "
                                     "arithmetic the fix keeps (over half: fixes measured "
                                     "0.47-1.56x such a prediction in 22 runs, 17 at "
                                     "0.76-1.10x)",
                                     arith)))
        return GP_ENOMEM;
    return GP_OK;
}

/* Two passes over the CPU tracks: the tiny leaves' median, then the count. */
static gp_status scan(const struct rules_ctx *c, struct tiny *t)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    for (int first = 1; first >= 0; first--) {
        if (!first) {
            t->floor_ns = rules_median(t->durs, t->n);
            t->n = 0;
        }
        for (size_t i = 0; i < nt; i++)
            if (!tr[i].is_gpu)
                GP_TRY(scan_track(c, &tr[i], t, first));
    }
    return GP_OK;
}

/* The gain without the profiler, % of the step, as the finding will restate it (rules_cost.c:
 * net of the profiler's records, of the median step less the profiler's cost). */
static double unprofiled_gain_pct(const struct rules_ctx *c, const struct rules_out *o)
{
    gp_unprofiled_gain g;
    if (!c->n_steps)
        return 100.0;
    rules_unprofiled_point(c->done, &o->f, &g);
    return g.step_ns > 0 ? g.low_pct : 100.0;
}

/* The tiny operators' share says how much of the step they and their gaps take; the gain says
 * how much one operation over the batch would save. Where that gain without the profiler is under
 * warn_pct, the step is not made of per-call overhead, whatever the share: an LSTMCell loop at
 * batch 1024 read 26-27% of its step in tiny operators while nn.LSTM over the sequence gained
 * 0.4-2.1% (thread CPU time, interleaved, 2026-11-27, load 0.9; the gain said 18-20%). The rule
 * then does not fire, and its summary says why. */
static gp_status worth_it(const struct rules_ctx *c, const double *p, struct rules_out *o,
                          double share, double ops)
{
    double gain = unprofiled_gain_pct(c, o);
    if (o->f.gain_step_ns < 0 || gain >= p[WARN_PCT])
        return GP_OK;
    rules_fire(o, GP_SEV_OK, p[WARN_PCT]);
    o->f.gain_ns = o->f.gain_step_ns = o->f.gain_prof_step_ns = -1;
    o->f.gain_why = NULL;
    return rules_summary(o,
                         "%.0f tiny CPU operators per step (leaf operators of at most %.0f us "
                         "each); with the gaps between them %.1f%% of step time, but their "
                         "per-call cost, what one operation over the batch would save, is about "
                         "%.1f%% of the step without the profiler: the rest is arithmetic",
                         ops, p[TINY_US], share, gain);
}

gp_status rules_tiny_cpu_ops(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    if (c->has_gpu)
        return rules_summary(o, "GPU trace: the host's launch cost is GT04's (not applicable)");
    struct tiny t = {.p = p};
    gp_status rc = scan(c, &t);
    double share = rules_pct_of_steps(c, t.ns), ops = rules_per_step(c, (double)t.n);
    if (ops >= p[MIN_OPS_PER_STEP])
        rules_measure(o, "tiny_op_share", GP_UNIT_PCT, share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (rc == GP_OK)
        rc = rules_summary(o,
                           "%.0f tiny CPU operators per step (leaf operators of at most %.0f us "
                           "each); with the gaps between them %.1f%% of step time",
                           ops, p[TINY_US], share);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = evidence(c, o, &t);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = price(c, o, &t);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = worth_it(c, p, o, share, ops);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = advise(c, o, share, ops, cell_loop(c, &t));
    rules_agg_release(&t.agg);
    free(t.durs);
    return rc;
}
