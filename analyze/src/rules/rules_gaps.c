/* rules_gaps.c: waits for a core that fall between operators (GT19's timing-only measure). A
 * thread that loses its core at a system call between two ranges waits where no range shows
 * it: the trainer beside one busy loop with 3 loader threads waited 43.5% of its time for a
 * core (its accounting), most of it in the steps' time outside every range (46% of step time
 * there, against 0.8% on a quiet run), which the calls' stalls missed. As with the calls
 * (rules_stalls.c), a training loop repeats itself: the k-th gap of a step (the time on the
 * stepping thread's track between its ranges, any range, at any depth) does the same untraced
 * work every step, so its fastest over the steps is what that work costs, and a gap a slice
 * longer and `ratio` times it waited. Gaps are compared among steps with as many gaps (a step
 * of another shape, an extra range, is its own group), in groups of 3 or more. A gap is also
 * where a program sleeps, reads or writes a file, which no range shows: a wait for a core lasts
 * a few scheduler slices (the longest gap past its fastest beside 1-3 busy loops: 8.9 ms, with
 * 2 intra-op threads beside 2 loops), so a gap longer than its fastest by over max_gap_ns is
 * the program's own pause (a 100 ms sleep every 8 steps: GT14's), not counted, and so are a
 * group's waits that come every N steps (own_pause). Only on CPU-only traces: on a GPU trace
 * the thread may wait for the device between its ranges. */
#include "rules/rules_int.h"

#include <stdlib.h>

struct gap {
    int32_t n_gaps, k, step;
    int64_t dur, end;
};

static gp_status push_gap(struct gap **v, size_t *n, size_t *cap, struct gap g)
{
    GP_TRY(rules_reserve((void **)v, cap, *n, sizeof(**v), 1024));
    (*v)[(*n)++] = g;
    return GP_OK;
}

/* The gaps of step `i` on its own track, numbered from 0, each knowing how many its step has. */
static gp_status step_gaps(const struct rules_ctx *c, size_t i, struct gap **v, size_t *n,
                           size_t *cap)
{
    const gp_step *s = &c->steps[i];
    size_t first = *n, n_tracks;
    const gp_track *tr = &gp_trace_tracks(c->t, &n_tracks)[c->ev[s->event].track];
    int64_t cur = s->host_ts;
    for (uint32_t j = s->event + 1; j < tr->first + tr->count && c->ev[j].ts < s->host_end; j++) {
        const gp_event *e = &c->ev[j];
        if (e->dur <= 0 || e->ts + e->dur <= cur)
            continue;
        if (e->ts > cur)
            GP_TRY(push_gap(v, n, cap, (struct gap){0, 0, (int32_t)i, e->ts - cur, e->ts}));
        cur = e->ts + e->dur < s->host_end ? e->ts + e->dur : s->host_end;
    }
    if (s->host_end > cur)
        GP_TRY(push_gap(v, n, cap, (struct gap){0, 0, (int32_t)i, s->host_end - cur, s->host_end}));
    for (size_t g = first; g < *n; g++)
        (*v)[g].n_gaps = (int32_t)(*n - first), (*v)[g].k = (int32_t)(g - first);
    return GP_OK;
}

static int cmp_gap(const void *pa, const void *pb)
{
    const struct gap *a = pa, *b = pb;
    if (a->n_gaps != b->n_gaps)
        return a->n_gaps < b->n_gaps ? -1 : 1;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    return a->dur < b->dur ? -1 : a->dur > b->dur;
}

/* A gap's wait (v[g] the fastest of its group): its time beyond that, a slice or more and
 * `ratio` times it, and no more than a wait for a core lasts (max_gap_ns): a longer one is the
 * program's own pause. 0 where none. */
static int64_t gap_wait(const struct gap *v, size_t g, size_t i, const struct rules_stall_cfg *k)
{
    int64_t x = v[i].dur - v[g].dur;
    if (x < k->min_ns || x > k->max_gap_ns || (double)v[i].dur < k->ratio * (double)v[g].dur)
        return 0;
    return x;
}

/* Do the group's waits come every N >= 2 steps, as the program's own pause (logging, a
 * checkpoint, a sleep every so many steps) leaves them? Waits for a core land on random steps:
 * a 15 ms sleep every 8 steps between no ranges read as 48.5% waiting before this test. */
static int own_pause(const struct gap *v, size_t g, size_t e, const struct rules_stall_cfg *k,
                     size_t *at)
{
    size_t n = 0;
    for (size_t i = g; i < e; i++)
        if (gap_wait(v, g, i, k))
            at[n++] = (size_t)v[i].step;
    if (n < 3)
        return 0;
    qsort(at, n, sizeof(*at), rules_cmp_size);
    return at[n - 1] - at[0] >= 2 * (n - 1) && rules_periodic(at, n);
}

static gp_status mark_gaps(struct gap *v, size_t n, const struct rules_stall_cfg *k,
                           struct rules_stalls *s, uint8_t *hit, size_t *at)
{
    for (size_t g = 0, e; g < n; g = e) {
        for (e = g + 1; e < n && v[e].n_gaps == v[g].n_gaps && v[e].k == v[g].k; e++)
            ;
        if (e - g < 3 || own_pause(v, g, e, k, at))
            continue;
        s->gaps += e - g;
        for (size_t i = g; i < e; i++) {
            int64_t x = gap_wait(v, g, i, k);
            if (!x)
                continue;
            GP_TRY(rules_ivs_push(&s->ivs, v[i].end - x, v[i].end));
            if (!s->gap_stalled || v[g].dur < s->gap_fastest)
                s->gap_fastest = v[g].dur;
            s->gap_worst = v[i].dur > s->gap_worst ? v[i].dur : s->gap_worst;
            s->gap_ns += x;
            s->gap_stalled++;
            hit[v[i].step] = 1;
        }
    }
    return GP_OK;
}

gp_status rules_gaps_scan(const struct rules_ctx *c, const struct rules_stall_cfg *k,
                          struct rules_stalls *s, uint8_t *hit)
{
    if (c->has_gpu)
        return GP_OK;
    struct gap *v = NULL;
    size_t n = 0, cap = 0;
    gp_status rc = GP_OK;
    for (size_t i = 0; i < c->n_steps && rc == GP_OK; i++)
        if (c->steps[i].event != GP_NONE && !c->steps[i].synthetic)
            rc = step_gaps(c, i, &v, &n, &cap);
    if (rc == GP_OK && n > 1)
        qsort(v, n, sizeof(*v), cmp_gap);
    size_t *at = rc == GP_OK ? malloc((c->n_steps ? c->n_steps : 1) * sizeof(*at)) : NULL;
    if (rc == GP_OK)
        rc = at ? mark_gaps(v, n, k, s, hit, at) : GP_ENOMEM;
    free(at);
    free(v);
    return rc;
}
