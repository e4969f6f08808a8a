/* The per-call cost of a loop's operators, from their own times (rules_op_overhead.h).
 * An operator's own time is its duration less its direct children's: a composite's GEMM
 * (aten::mm's after its aten::resolve_conj child) is its own time, not a gap between leaves.
 * - The per-call cap is OVERHEAD_X times the trace's median view operator (as_strided, view,
 *   t, select...: no data touched, all per call). Measured where the arithmetic is nil (an
 *   LSTMCell loop at batch 4, a loss looped over samples of 32 numbers), a compute operator's
 *   median took 2-5x the view operators' (mul 3.0-3.2x, add 3.6x, tanh 3.8x, where 3.5-3.8x,
 *   sub 4.5-5.1x, add_ 1.9-2.2x); at batch 512 the LSTM's took 9-54x (mul 13.5x, mm 54x).
 * - An ATen operator whose median call is within the cap is per call throughout (its slower
 *   calls are the same call delayed, not more data); one above it does arithmetic, and each
 *   of its calls counts up to the cap (capping every call instead, at 4x, put the loss loop
 *   at -15% to -43% of its fix at batches 64-512; this, at -9% to -33%).
 * - The autograd engine's own records (autograd::engine::evaluate_function: ..., XBackward0)
 *   run no arithmetic (their ATen children do): all their own time is per call.
 * - The interpreter's time between top-level operators is per call (the loop's Python).
 * - Only operators called LOOP_CALLS or more times a step are a loop's: one vectorised op
 *   replaces those; a model's layers, called a few times a step, stay (a loss looped over 4
 *   samples beside an MLP: all operators counted said 45-75% where the fix gained 31%). The
 *   interpreter's time counts in the share of operators counted.
 * OVERHEAD_X and LOOP_CALLS were chosen on 60 traces of two families (rule_tiny_cpu_ops.c's
 * price()); without record_shapes a trace whose calls of one name all have one size cannot
 * split a call into per-call and per-element parts by itself: the view operators are the
 * trace's own measure of a call with no data. */
#include "rules/rules_op_overhead.h"

#include <stdlib.h>
#include <string.h>

#define OVERHEAD_X 3
#define LOOP_CALLS 8

struct op {
    uint32_t name;
    long step;
    int64_t self;
};

struct open_op {
    int64_t end;
    long op; /* index into ops, or -1: outside the analysed steps */
};

struct scan {
    struct op *ops;
    size_t n, cap;
    struct open_op *stack;
    size_t sp, stack_cap;
    int64_t *python;  /* by analysed step: the interpreter's time between top-level ops */
    int64_t *counted; /* by analysed step: the looped ops' per-call cost */
};

static int is_view(const char *s)
{
    static const char *const views[] = {
            "aten::as_strided",  "aten::view",      "aten::t",
            "aten::transpose",   "aten::select",    "aten::slice",
            "aten::expand",      "aten::unsqueeze", "aten::squeeze",
            "aten::permute",     "aten::detach",    "detach",
            "aten::alias",       "aten::narrow",    "aten::_reshape_alias",
            "aten::resolve_conj"};
    for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
        if (strcmp(s, views[i]) == 0)
            return 1;
    return 0;
}

/* An autograd engine record: no arithmetic of its own. */
static int is_autograd(const char *s)
{
    return strncmp(s, "aten::", 6) != 0 && (strstr(s, "autograd::") || strstr(s, "Backward"));
}

/* `v` (n of *cap elements of `size` bytes) with room for one more, or NULL (v kept). */
static void *room(void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return v;
    size_t grown = *cap ? 2 * *cap : 256;
    void *p = realloc(v, grown * size);
    if (p)
        *cap = grown;
    return p;
}

static gp_status push(struct scan *s, const gp_event *e, long step)
{
    struct open_op *st = room(s->stack, s->sp, &s->stack_cap, sizeof(*st));
    if (!st)
        return GP_ENOMEM;
    s->stack = st;
    s->stack[s->sp++] = (struct open_op){e->ts + e->dur, step >= 0 ? (long)s->n : -1};
    if (step < 0)
        return GP_OK;
    struct op *ops = room(s->ops, s->n, &s->cap, sizeof(*ops));
    if (!ops)
        return GP_ENOMEM;
    s->ops = ops;
    s->ops[s->n++] = (struct op){e->name, step, e->dur};
    return GP_OK;
}

/* One CPU track (sorted by start, parents first): each operator's own time, and the gaps
 * between top-level operators of one step with no skipped range between them. */
static gp_status scan_track(const struct rules_ctx *c, const gp_track *tr,
                            int (*skip)(const char *), struct scan *s)
{
    int64_t skip_end = INT64_MIN, top_end = INT64_MIN;
    long top_step = -1;
    s->sp = 0;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &c->ev[i];
        if (e->ts < skip_end)
            continue;
        if (e->kind == GP_EV_USER_ANNOTATION && e->name != GP_STR_NONE &&
            skip(gp_trace_str(c->t, e->name))) {
            skip_end = e->ts + e->dur, top_end = INT64_MIN;
            continue;
        }
        if (e->kind != GP_EV_CPU_OP)
            continue;
        while (s->sp && s->stack[s->sp - 1].end <= e->ts)
            s->sp--;
        long step = rules_step_at(c, e->ts);
        if (s->sp == 0) {
            if (step >= 0 && step == top_step && top_end != INT64_MIN && e->ts >= top_end)
                s->python[step] += e->ts - top_end;
            top_end = e->ts + e->dur, top_step = step;
        } else if (s->stack[s->sp - 1].op >= 0) {
            s->ops[s->stack[s->sp - 1].op].self -= e->dur;
        }
        GP_TRY(push(s, e, step));
    }
    return GP_OK;
}

static int cmp_name(const void *pa, const void *pb)
{
    const struct op *a = pa, *b = pb;
    return a->name < b->name ? -1 : a->name > b->name;
}

/* The median own time of the view operators, or of all where there are none. */
static int64_t view_median(const struct rules_ctx *c, const struct scan *s, int64_t *tmp)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->ops[i].name != GP_STR_NONE && is_view(gp_trace_str(c->t, s->ops[i].name)))
            tmp[n++] = s->ops[i].self;
    if (n == 0)
        for (size_t i = 0; i < s->n; i++)
            tmp[n++] = s->ops[i].self;
    return rules_median(tmp, n);
}

/* The median own time of the operators ops[i .. j). */
static int64_t name_median(const struct scan *s, size_t i, size_t j, int64_t *tmp)
{
    for (size_t k = i; k < j; k++)
        tmp[k - i] = s->ops[k].self;
    return rules_median(tmp, j - i);
}

/* Count the operators of each name (s->ops sorted by name) called LOOP_CALLS+ times a step: in
 * full for the autograd engine's and for a name whose median call is within the per-call cap,
 * else each call up to the cap. */
static void count(const struct rules_ctx *c, struct scan *s, struct rules_op_overhead *o,
                  int64_t *tmp)
{
    const double min_calls = LOOP_CALLS * (double)(c->n_steps ? c->n_steps : 1);
    for (size_t i = 0, j; i < s->n; i = j) {
        for (j = i; j < s->n && s->ops[j].name == s->ops[i].name; j++)
            ;
        if ((double)(j - i) < min_calls)
            continue;
        const char *name = s->ops[i].name != GP_STR_NONE ? gp_trace_str(c->t, s->ops[i].name) : "";
        int autograd = is_autograd(name);
        int64_t cap = autograd || name_median(s, i, j, tmp) <= o->cap_ns ? INT64_MAX : o->cap_ns;
        for (size_t k = i; k < j; k++) {
            int64_t self = s->ops[k].self > 0 ? s->ops[k].self : 0;
            int64_t counted = self < cap ? self : cap;
            s->counted[s->ops[k].step] += counted;
            if (!autograd)
                o->aten_self_ns += self, o->aten_counted_ns += counted;
        }
        o->looped += j - i;
    }
}

/* The steps' totals, and the median step's: a step stalled by another process stretches the
 * interpreter's gaps, not the loop's work. */
static void per_step(const struct rules_ctx *c, struct scan *s, struct rules_op_overhead *o)
{
    double looped = (double)o->looped / (double)s->n;
    for (size_t i = 0; i < c->n_steps; i++) {
        o->python_ns += s->python[i];
        s->counted[i] += (int64_t)((double)s->python[i] * looped);
        o->ns += s->counted[i];
    }
    o->step_ns = rules_median(s->counted, c->n_steps);
}

gp_status rules_op_overhead(const struct rules_ctx *c, int (*skip)(const char *range),
                            struct rules_op_overhead *out)
{
    *out = (struct rules_op_overhead){0};
    struct scan s = {0};
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    if (c->n_steps == 0)
        return GP_OK;
    s.python = calloc(c->n_steps, sizeof(*s.python));
    s.counted = calloc(c->n_steps, sizeof(*s.counted));
    gp_status rc = s.python && s.counted ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i < nt && rc == GP_OK; i++)
        if (!tr[i].is_gpu)
            rc = scan_track(c, &tr[i], skip, &s);
    int64_t *tmp = rc == GP_OK && s.n ? malloc(s.n * sizeof(*tmp)) : NULL;
    if (rc == GP_OK && s.n && !tmp)
        rc = GP_ENOMEM;
    if (rc == GP_OK && s.n) {
        out->cap_ns = OVERHEAD_X * view_median(c, &s, tmp);
        qsort(s.ops, s.n, sizeof(*s.ops), cmp_name);
        count(c, &s, out, tmp);
        out->ops = s.n;
        per_step(c, &s, out);
    }
    free(tmp);
    free(s.ops);
    free(s.stack);
    free(s.python);
    free(s.counted);
    return rc;
}
