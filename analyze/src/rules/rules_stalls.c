/* rules_stalls.c: operators that took far longer than their own fastest calls, or than their
 * size warrants (GT19). In a training loop the k-th call of an operator in a step (same name,
 * same shape) does the same work every step, so its fastest call is what the work costs; a call
 * a scheduler slice longer (a millisecond or more, and half again its fastest) waited for a
 * core. Where every call waits (2 intra-op threads and 2 busy loops on 2 cores: even the fastest
 * aten::_log_softmax on 64x10 took 2.1 ms), the fastest call says nothing; then the size does:
 * an elementwise or reduction op whose cost grows with its elements (a table of them) should not
 * take longer than a generous allowance per call plus per element. Only on CPU-only traces: on a
 * GPU trace a small op may wait for the device. Counted on self time (less the child ranges)
 * so a wait is counted once, not in every enclosing op: each range's self time is compared. */
#include "rules/rules_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct leaf {
    uint32_t track;
    gp_str name, shape;
    int32_t step, ord;
    int64_t ts, dur, excess, end; /* dur: self time; end: the call's own end */
    int64_t ceiling; /* the most its size warrants, or -1 where the size says nothing */
    int64_t faults;  /* what first-touching its tensors' pages could cost (rules_fault_allow.c) */
};

/* aten ops whose cost is linear in the elements they read and write (after "aten::", without
 * a leading "_" and a trailing "_", "_backward", "_backward_data", "_forward"). */
static const char *const linear_ops[] = {"abs",
                                         "add",
                                         "addcdiv",
                                         "addcmul",
                                         "argmax",
                                         "avg_pool2d",
                                         "cat",
                                         "clamp",
                                         "clamp_min",
                                         "clamp_max",
                                         "copy",
                                         "div",
                                         "exp",
                                         "fill",
                                         "gelu",
                                         "lerp",
                                         "log",
                                         "log_softmax",
                                         "masked_fill",
                                         "max_pool2d",
                                         "max_pool2d_with_indices",
                                         "maximum",
                                         "mean",
                                         "minimum",
                                         "mul",
                                         "native_batch_norm",
                                         "native_dropout",
                                         "native_layer_norm",
                                         "neg",
                                         "nll_loss",
                                         "nll_loss2d",
                                         "pow",
                                         "reciprocal",
                                         "relu",
                                         "rsqrt",
                                         "sigmoid",
                                         "silu",
                                         "softmax",
                                         "sqrt",
                                         "sub",
                                         "sum",
                                         "tanh",
                                         "threshold",
                                         "where",
                                         "zero"};

static int is_linear_op(const char *name)
{
    if (strncmp(name, "aten::", 6) != 0)
        return 0;
    char base[64];
    snprintf(base, sizeof(base), "%s", name + 6 + (name[6] == '_'));
    static const char *const tails[] = {"_backward_data", "_backward", "_forward", "_"};
    for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
        size_t n = strlen(base), k = strlen(tails[t]);
        if (n > k && strcmp(base + n - k, tails[t]) == 0)
            base[n - k] = 0;
    }
    for (size_t i = 0; i < sizeof(linear_ops) / sizeof(linear_ops[0]); i++)
        if (strcmp(base, linear_ops[i]) == 0)
            return 1;
    return 0;
}

#define SHAPE_UNREAD (-1) /* shape_elems: a shape it does not read */
#define NO_CEILING   (-1) /* size_ceiling: the op has no size-based ceiling */

/* Elements of every input in "[[64, 10], [], []]" (a scalar counts 1); SHAPE_UNREAD if unreadable.
 */
static double shape_elems(const char *s)
{
    double total = 0, prod = 1;
    int depth = 0;
    for (; *s; s++) {
        if (*s == '[') {
            if (++depth == 2)
                prod = 1;
        } else if (*s == ']') {
            if (depth-- == 2)
                total += prod;
        } else if (depth == 2 && *s >= '0' && *s <= '9') {
            char *end;
            prod *= strtod(s, &end);
            s = end - 1;
        } else if (depth > 2)
            return SHAPE_UNREAD; /* a list of tensors: not read */
    }
    return depth == 0 ? total : -1;
}

static int64_t size_ceiling(const struct rules_ctx *c, const gp_event *e, gp_str shape,
                            const struct rules_stall_cfg *k)
{
    if (c->has_gpu || shape == GP_STR_NONE || e->kind != GP_EV_CPU_OP || (e->flags & GP_EVF_COMM) ||
        !is_linear_op(gp_trace_str(c->t, e->name)))
        return NO_CEILING;
    double elems = shape_elems(gp_trace_str(c->t, shape));
    return elems < 0 ? -1 : k->size_overhead_ns + (int64_t)(elems * k->size_ns_per_elem);
}

/* A CPU range the stall count reads: an operator or annotation, not a step or a loader wait. */
static int counted(const gp_event *e)
{
    return (e->kind == GP_EV_CPU_OP || e->kind == GP_EV_USER_ANNOTATION) && e->dur > 0 &&
           !(e->flags & (GP_EVF_STEP | GP_EVF_DATALOADER)) && e->name != GP_STR_NONE;
}

static gp_status push_leaf(struct leaf **v, size_t *n, size_t *cap, struct leaf l)
{
    GP_TRY(rules_reserve((void **)v, cap, *n, sizeof(**v), 1024));
    (*v)[(*n)++] = l;
    return GP_OK;
}

/* The ranges a CPU track holds open at each event: their ends, and the record each one is
 * (-1: none; -2: a loader wait, whose insides are GT01's). */
struct open_range {
    int64_t end;
    long rec;
};

/* One CPU track: each counted range with its self time (its duration less its direct
 * children's), so a wait is counted once, in the range it fell in, and an op whose children
 * are small (a convolution's aten::empty) still counts with its own time. */
static gp_status scan_track(const struct rules_ctx *c, const struct rules_stall_cfg *k, uint32_t t,
                            struct leaf **v, size_t *n, size_t *cap)
{
    size_t n_tracks, depth = 0;
    const gp_track *tr = &gp_trace_tracks(c->t, &n_tracks)[t];
    struct open_range st[64];
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &c->ev[i];
        if (e->dur <= 0)
            continue;
        while (depth && st[depth - 1].end <= e->ts)
            depth--;
        long parent = depth ? st[depth - 1].rec : -1;
        if (parent >= 0)
            (*v)[parent].dur -= e->dur;
        long rec = parent == -2 || (e->flags & GP_EVF_DATALOADER) ? -2 : -1;
        long step = rec == -1 && counted(e) ? rules_step_at(c, e->ts) : -1;
        if (step >= 0) {
            gp_str shape = gp_trace_event_shape(c->t, e);
            GP_TRY(push_leaf(v, n, cap,
                             (struct leaf){t, e->name, shape, (int32_t)step, 0, e->ts, e->dur, 0,
                                           e->ts + e->dur, size_ceiling(c, e, shape, k),
                                           rules_call_faults(c, e, shape, k->fault_ns_per_page)}));
            rec = (long)*n - 1;
        }
        if (depth < sizeof(st) / sizeof(st[0]))
            st[depth++] = (struct open_range){e->ts + e->dur, rec};
    }
    return GP_OK;
}

static gp_status collect(const struct rules_ctx *c, const struct rules_stall_cfg *k,
                         struct leaf **out, size_t *n_out)
{
    size_t n_tracks, n = 0, cap = 0;
    const gp_track *tracks = gp_trace_tracks(c->t, &n_tracks);
    struct leaf *v = NULL;
    for (size_t t = 0; t < n_tracks; t++) {
        gp_status rc = tracks[t].is_gpu ? GP_OK : scan_track(c, k, (uint32_t)t, &v, &n, &cap);
        if (rc != GP_OK)
            return free(v), rc;
    }
    *out = v, *n_out = n;
    return GP_OK;
}

static int cmp_in_step(const void *pa, const void *pb)
{
    const struct leaf *a = pa, *b = pb;
    RULES_CMP(a->track, b->track);
    RULES_CMP(a->name, b->name);
    RULES_CMP(a->shape, b->shape);
    RULES_CMP(a->step, b->step);
    RULES_CMP(a->ts, b->ts);
    return 0;
}

static int cmp_group(const void *pa, const void *pb)
{
    const struct leaf *a = pa, *b = pb;
    RULES_CMP(a->track, b->track);
    RULES_CMP(a->name, b->name);
    RULES_CMP(a->shape, b->shape);
    RULES_CMP(a->ord, b->ord);
    RULES_CMP(a->dur, b->dur);
    return 0;
}

static int cmp_row(const void *pa, const void *pb)
{
    const struct leaf *a = pa, *b = pb;
    RULES_CMP(a->name, b->name);
    RULES_CMP(a->shape, b->shape);
    return 0;
}

static int cmp_stall(const void *pa, const void *pb)
{
    const struct rules_stall_row *a = pa, *b = pb;
    RULES_CMP(b->stall_ns, a->stall_ns);
    RULES_CMP(a->name, b->name);
    return 0;
}

static int same_group(const struct leaf *a, const struct leaf *b)
{
    return a->track == b->track && a->name == b->name && a->shape == b->shape && a->ord == b->ord;
}

/* Number each call within its (thread, op, shape, step): the k-th call of a step. With fewer
 * than 5 steps there are too few calls per k: every call of an op and shape is one group, and
 * only where the trace has shapes (without, one name covers every size: a weight init's
 * aten::uniform_ took 33 us to 1.5 s on one trace). */
static void number_calls(const struct rules_ctx *c, struct leaf *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_in_step);
    for (size_t i = 1; i < n && c->n_steps >= 5; i++) {
        const struct leaf *p = &v[i - 1];
        int same = p->track == v[i].track && p->name == v[i].name && p->shape == v[i].shape &&
                   p->step == v[i].step;
        v[i].ord = same ? p->ord + 1 : 0;
    }
}

/* A call's stall: its time beyond its group's fastest call (`ratio` times it) less what
 * first-touch faults of its tensors could cost, where that is a slice or more; or its time
 * beyond what its size warrants, whichever is more. A call slower than its fastest by a slice
 * that the faults cover is counted in `faulted`. */
static int64_t stall_of(const struct leaf *l, int64_t fastest, const struct rules_stall_cfg *k,
                        int *faulted)
{
    int64_t x = fastest >= 0 ? l->dur - fastest : 0;
    if (x < k->min_ns || (double)l->dur < k->ratio * (double)fastest)
        x = 0;
    *faulted = x > 0 && x - l->faults < k->min_ns;
    x = *faulted ? 0 : x - (x > 0 ? l->faults : 0);
    int64_t over = l->ceiling >= 0 ? l->dur - l->ceiling : 0;
    if (over >= k->min_ns && over > x)
        return *faulted = 0, over;
    return x;
}

static gp_status mark_stalls(const struct rules_ctx *c, struct leaf *v, size_t n,
                             const struct rules_stall_cfg *k, struct rules_stalls *s, uint8_t *hit)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_group);
    for (size_t g = 0, e; g < n; g = e) {
        for (e = g + 1; e < n && same_group(&v[g], &v[e]); e++)
            ;
        /* too few calls to know what the work costs, or calls of any size */
        int known = e - g >= 3 && !(c->n_steps < 5 && v[g].shape == GP_STR_NONE);
        for (size_t i = g; i < e; i++) {
            int faulted;
            int64_t x = stall_of(&v[i], known ? v[g].dur : -1, k, &faulted);
            s->faulted += faulted;
            s->fault_ns += faulted ? v[i].dur - v[g].dur : 0;
            if (x <= 0)
                continue;
            v[i].excess = x;
            /* where in the call it waited is not known: its last `x` ns stand for it */
            GP_TRY(rules_ivs_push(&s->ivs, v[i].end - x, v[i].end));
            s->stall_ns += x;
            s->stalled++;
            hit[v[i].step] = 1;
        }
        s->calls += e - g;
    }
    return GP_OK;
}

/* An op whose every call took longer than its size warrants: its fastest call waited too. */
static void note_inflated(const struct rules_stall_row *r, int64_t ceiling, int64_t min_ns,
                          struct rules_stalls *s)
{
    if (ceiling < 0 || r->fastest - ceiling < min_ns)
        return;
    s->inflated++;
    if (!s->inflated_ceiling || (double)r->fastest / (double)ceiling >
                                        (double)s->inflated_fastest / (double)s->inflated_ceiling)
        s->inflated_name = r->name, s->inflated_shape = r->shape, s->inflated_fastest = r->fastest,
        s->inflated_ceiling = ceiling;
}

static gp_status make_rows(struct leaf *v, size_t n, int64_t min_ns, struct rules_stalls *s)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_row);
    for (size_t g = 0, e; g < n; g = e) {
        struct rules_stall_row r = {v[g].name, v[g].shape, 0, 0, v[g].dur, 0, 0};
        for (e = g; e < n && v[e].name == v[g].name && v[e].shape == v[g].shape; e++) {
            r.calls++;
            r.stalled += v[e].excess > 0;
            r.stall_ns += v[e].excess;
            r.fastest = v[e].dur < r.fastest ? v[e].dur : r.fastest;
            r.worst = v[e].dur > r.worst ? v[e].dur : r.worst;
        }
        note_inflated(&r, v[g].ceiling, min_ns, s);
        if (!r.stalled)
            continue;
        struct rules_stall_row *nr = realloc(s->rows, (s->n + 1) * sizeof(*nr));
        if (!nr)
            return GP_ENOMEM;
        s->rows = nr;
        s->rows[s->n++] = r;
    }
    if (s->n) /* rows is NULL without a stall */
        qsort(s->rows, s->n, sizeof(*s->rows), cmp_stall);
    return GP_OK;
}

gp_status rules_stalls_scan(const struct rules_ctx *c, const struct rules_stall_cfg *k,
                            struct rules_stalls *s)
{
    memset(s, 0, sizeof(*s));
    struct leaf *v = NULL;
    size_t n = 0;
    GP_TRY(collect(c, k, &v, &n));
    uint8_t *hit = calloc(c->n_steps ? c->n_steps : 1, 1);
    if (!hit)
        return free(v), GP_ENOMEM;
    number_calls(c, v, n);
    gp_status rc = mark_stalls(c, v, n, k, s, hit);
    if (rc == GP_OK)
        rc = rules_gaps_scan(c, k, s, hit);
    for (size_t i = 0; i < c->n_steps; i++)
        s->steps_hit += hit[i];
    rules_ivs_merge(&s->ivs);
    if (rc == GP_OK)
        rc = make_rows(v, n, k->min_ns, s);
    free(hit);
    free(v);
    if (rc != GP_OK)
        rules_stalls_release(s);
    return rc;
}

void rules_stalls_release(struct rules_stalls *s)
{
    free(s->rows);
    free(s->ivs.iv);
    memset(s, 0, sizeof(*s));
}
