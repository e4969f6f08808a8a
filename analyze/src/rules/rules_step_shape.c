/* rules_step_shape.c: each analysed step's longest stretch without a range boundary on its own
 * thread and its range count, and the outlier steps slowed all over (rules_step_shape.h). */
#include "rules/rules_step_shape.h"

#include <stdlib.h>

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

static int64_t longest_stretch(struct bounds *b)
{
    qsort(b->v, b->n, sizeof(*b->v), cmp_i64);
    int64_t best = 0;
    for (size_t i = 1; i < b->n; i++)
        best = b->v[i] - b->v[i - 1] > best ? b->v[i] - b->v[i - 1] : best;
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

static void add_slowed(const struct rules_step_shape *sh, int64_t med_longest, int64_t excess,
                       struct rules_slowed *w)
{
    int64_t grew = sh->longest - med_longest;
    uint32_t d = sh->ranges > w->ranges ? sh->ranges - w->ranges : w->ranges - sh->ranges;
    if (!sh->known || 10 * (uint64_t)d > w->ranges || 2 * grew >= excess)
        return;
    w->n++;
    w->excess += excess;
    w->grew = grew > w->grew ? grew : w->grew;
}

gp_status rules_slowed_steps(const struct rules_ctx *c, const size_t *at, size_t n, int own,
                             int64_t med, struct rules_slowed *w)
{
    *w = (struct rules_slowed){0};
    struct rules_step_shape *sh = malloc((c->n_steps ? c->n_steps : 1) * sizeof(*sh));
    if (!sh)
        return GP_ENOMEM;
    int64_t med_longest = 0;
    gp_status rc = rules_step_shapes(c, sh);
    if (rc == GP_OK)
        rc = median_shape(c, sh, &med_longest, &w->ranges);
    for (size_t k = 0; k < n && rc == GP_OK && w->ranges; k++) {
        const gp_step *s = &c->steps[at[k]];
        int64_t t = s->end - s->ts - (own ? s->runq_ns : 0);
        add_slowed(&sh[at[k]], med_longest, t - med, w);
    }
    free(sh);
    return rc;
}
