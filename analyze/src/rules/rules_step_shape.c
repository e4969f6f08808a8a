/* rules_step_shape.c: each analysed step's longest stretch without a range boundary on its own
 * thread and its range count, and the outlier steps slowed all over (rules_step_shape.h). */
#include "rules/rules_step_shape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

struct bounds {
    int64_t *v;
    size_t n, cap;
};

static gp_status push(struct bounds *b, int64_t t)
{
    GP_TRY(rules_reserve((void **)&b->v, &b->cap, b->n, sizeof(*b->v), 256));
    b->v[b->n++] = t;
    return GP_OK;
}

/* Every start and end of a range inside the step on its thread, with the step's own ends. */
static gp_status step_bounds(const struct rules_ctx *c, const gp_step *s, struct bounds *b,
                             uint32_t *ranges)
{
    size_t n_tracks;
    const gp_track *tr = &gp_trace_tracks(c->t, &n_tracks)[c->ev[s->event].track];
    b->n = 0, *ranges = 0;
    GP_TRY(push(b, s->host_ts));
    GP_TRY(push(b, s->host_end));
    for (uint32_t i = rules_track_first_at(c, tr, s->host_ts);
         i < tr->first + tr->count && c->ev[i].ts < s->host_end; i++) {
        const gp_event *e = &c->ev[i];
        if (e->dur <= 0 || (e->flags & GP_EVF_STEP))
            continue;
        int64_t end = e->ts + e->dur < s->host_end ? e->ts + e->dur : s->host_end;
        GP_TRY(push(b, e->ts));
        GP_TRY(push(b, end));
        ++*ranges;
    }
    return GP_OK;
}

/* The stretches between consecutive bounds, in order, in place: b->n becomes their count. */
static void to_stretches(struct bounds *b)
{
    qsort(b->v, b->n, sizeof(*b->v), cmp_i64);
    for (size_t i = 1; i < b->n; i++)
        b->v[i - 1] = b->v[i] - b->v[i - 1];
    b->n = b->n ? b->n - 1 : 0;
}

static int64_t longest_stretch(const struct bounds *b)
{
    int64_t best = 0;
    for (size_t i = 0; i < b->n; i++)
        best = b->v[i] > best ? b->v[i] : best;
    return best;
}

gp_status rules_step_shapes(const struct rules_ctx *c, struct rules_step_shape *out)
{
    struct bounds b = {0};
    gp_status rc = GP_OK;
    for (size_t i = 0; i < c->n_steps && rc == GP_OK; i++) {
        const gp_step *s = &c->steps[i];
        out[i] = (struct rules_step_shape){0};
        if (s->event == GP_NONE || s->synthetic)
            continue;
        rc = step_bounds(c, s, &b, &out[i].ranges);
        if (rc == GP_OK && out[i].ranges) {
            to_stretches(&b);
            out[i].longest = longest_stretch(&b);
            out[i].known = 1;
        }
    }
    free(b.v);
    return rc;
}

static gp_status median_shape(const struct rules_ctx *c, const struct rules_step_shape *sh,
                              int64_t *longest, uint32_t *ranges)
{
    int64_t *v = malloc(2 * c->n_steps * sizeof(*v));
    if (!v)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < c->n_steps; i++)
        if (sh[i].known)
            v[n] = sh[i].longest, v[c->n_steps + n++] = sh[i].ranges;
    *longest = rules_median(v, n);
    *ranges = (uint32_t)rules_median(v + c->n_steps, n);
    free(v);
    return GP_OK;
}

/* Steps whose every stretch's median is taken, at most: evenly spaced among those of the usual
 * shape, so a trace of thousands of ops a step keeps a few MB. */
#define ALIGNED_STEPS 63

/* Each stretch's median over the steps of the usual shape (`ranges` ranges, so 2 * ranges + 1
 * stretches in the same order: the same ranges run in the same order), for comparing an outlier
 * step's stretches with their own usual length rather than with the usual longest one. */
struct aligned {
    int64_t *med;
    size_t n;
};

static gp_status aligned_medians(const struct rules_ctx *c, const struct rules_step_shape *sh,
                                 uint32_t ranges, struct aligned *m)
{
    size_t same = 0, k = 0, n = 2 * (size_t)ranges + 1;
    for (size_t i = 0; i < c->n_steps; i++)
        same += sh[i].known && sh[i].ranges == ranges;
    size_t rows = same < ALIGNED_STEPS ? same : ALIGNED_STEPS, seen = 0;
    struct bounds b = {0};
    int64_t *v = malloc((rows * n + n) * sizeof(*v));
    gp_status rc = v ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i < c->n_steps && rc == GP_OK && k < rows; i++) {
        if (!sh[i].known || sh[i].ranges != ranges || seen++ * rows / same != k)
            continue; /* the k-th of `rows` evenly spaced among the `same` */
        uint32_t r;
        rc = step_bounds(c, &c->steps[i], &b, &r);
        to_stretches(&b);
        for (size_t j = 0; rc == GP_OK && j < n; j++)
            v[j * rows + k] = j < b.n ? b.v[j] : 0;
        k++;
    }
    for (size_t j = 0; rc == GP_OK && j < n; j++)
        v[rows * n + j] = rules_median(v + j * rows, k);
    if (rc == GP_OK && k) {
        memmove(v, v + rows * n, n * sizeof(*v));
        *m = (struct aligned){v, n};
    } else {
        free(v);
    }
    free(b.v);
    return rc;
}

/* Slowed all over, from the outlier step's own stretches against their medians: the one that
 * grew most holds under halfway between its usual share of the step (`med`) and all of the
 * excess. A machine running slower stretches each by the step's factor, so the one that grew most
 * holds about its usual share; a stall puts nearly all of the excess in one. With only a few
 * long ranges a step (the trainer on the CPU: forward, backward and the optimizer, the
 * optimizer 42% of the step) every part slowed 2.3-2.9x put 51% of one step's excess in the
 * optimizer, which "under half" read as a stall. */
static gp_status aligned_slowed(const struct rules_ctx *c, const gp_step *s,
                                const struct aligned *m, int64_t med, int64_t excess, int *slowed,
                                int64_t *grew)
{
    struct bounds b = {0};
    uint32_t r;
    gp_status rc = step_bounds(c, s, &b, &r);
    size_t at = 0;
    int64_t most = INT64_MIN;
    if (rc == GP_OK) {
        to_stretches(&b);
        for (size_t j = 0; j < b.n && j < m->n; j++)
            if (b.v[j] - m->med[j] > most)
                most = b.v[j] - m->med[j], at = j;
    }
    free(b.v);
    *grew = most;
    *slowed = rc == GP_OK && b.n == m->n &&
              2.0 * (double)most * (double)med < (double)excess * (double)(med + m->med[at]);
    return rc;
}

static void add_slowed(int64_t grew, int64_t excess, struct rules_slowed *w)
{
    w->n++;
    w->excess += excess;
    if (grew > w->grew)
        w->grew = grew, w->grew_excess = excess;
}

/* One outlier: slowed all over where its longest stretch grew by under half its excess over the
 * usual longest (the same ranges within a tenth), or, with the usual shape, where its own
 * stretches say so (aligned_slowed: few long ranges a step, where one holds much of the step). */
static gp_status judge_outlier(const struct rules_ctx *c, const struct rules_step_shape *sh,
                               const struct aligned *m, int64_t med_longest, const gp_step *s,
                               int64_t med, int64_t excess, struct rules_slowed *w)
{
    int64_t grew = sh->longest - med_longest;
    uint32_t d = sh->ranges > w->ranges ? sh->ranges - w->ranges : w->ranges - sh->ranges;
    if (!sh->known || 10 * (uint64_t)d > w->ranges)
        return GP_OK;
    if (2 * grew < excess) {
        add_slowed(grew, excess, w);
        return GP_OK;
    }
    if (!m->n || sh->ranges != w->ranges)
        return GP_OK;
    int slowed;
    GP_TRY(aligned_slowed(c, s, m, med, excess, &slowed, &grew));
    if (slowed)
        add_slowed(grew, excess, w);
    return GP_OK;
}

gp_status rules_slowed_steps(const struct rules_ctx *c, const size_t *at, size_t n, int own,
                             int64_t med, struct rules_slowed *w)
{
    *w = (struct rules_slowed){0};
    struct rules_step_shape *sh = malloc((c->n_steps ? c->n_steps : 1) * sizeof(*sh));
    if (!sh)
        return GP_ENOMEM;
    int64_t med_longest = 0;
    struct aligned m = {0};
    gp_status rc = rules_step_shapes(c, sh);
    if (rc == GP_OK)
        rc = median_shape(c, sh, &med_longest, &w->ranges);
    if (rc == GP_OK && w->ranges)
        rc = aligned_medians(c, sh, w->ranges, &m);
    for (size_t k = 0; k < n && rc == GP_OK && w->ranges; k++) {
        const gp_step *s = &c->steps[at[k]];
        int64_t t = rules_step_time(s, own);
        rc = judge_outlier(c, &sh[at[k]], &m, med_longest, s, med, t - med, w);
    }
    free(m.med);
    free(sh);
    return rc;
}
