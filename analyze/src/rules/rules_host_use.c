/* rules_host_use.c: what a thread was doing over a window, by its outermost ranges. A range that
 * classifies is "top": a data-loader wait (enumerate(DataLoader)#...__next__, with all it holds:
 * GT01's), else an operator (cpu_op) or a runtime/driver call outside any operator. An operator
 * that calls the CUDA runtime somewhere inside it (a launch, a copy, an allocation) is
 * launching: all of it, its dispatch included, is what a CUDA graph replays as one; so is one
 * that calls nothing but is no longer than the median launching operator (a view, a gradient
 * stored). A longer one that calls nothing ran on the host (ops on CPU tensors: 50-275 us each
 * on an H200 host, against 10-35 us for the launching ones), which no graph can capture. Steps,
 * annotations and Python frames hold tops and are not tops themselves; time under none is the
 * thread outside operators (Python between ops, a sleep, host code the profiler did not record). */
#include "rules/rules_int.h"

#include <stdlib.h>

static int is_top_kind(const gp_event *e)
{
    if (e->flags & GP_EVF_STEP)
        return 0;
    return (e->flags & GP_EVF_DATALOADER) || e->kind == GP_EV_CPU_OP || e->kind == GP_EV_RUNTIME ||
           e->kind == GP_EV_DRIVER;
}

/* Per event, 1 when it or a range inside it calls the CUDA runtime or driver (a launch, a copy,
 * an allocation: work a graph replays or its memory pool spares): each call marks its enclosing
 * ranges up to one already marked. */
static uint8_t *launching_marks(const struct rules_ctx *c)
{
    uint8_t *m = calloc(c->n_ev ? c->n_ev : 1, 1);
    for (uint32_t i = 0; i < c->n_ev && m; i++)
        if (c->ev[i].kind == GP_EV_RUNTIME || c->ev[i].kind == GP_EV_DRIVER)
            for (uint32_t e = i; e != GP_NONE && !m[e]; e = gp_analysis_parent_of(c->a, e))
                m[e] = 1;
    return m;
}

/* The nearest enclosing top of event i (itself when it is one), GP_NONE if none; `anc` holds
 * the answers for the events before it (a parent comes before what it holds). */
static uint32_t top_of(const struct rules_ctx *c, const uint32_t *anc, uint32_t i)
{
    uint32_t p = gp_analysis_parent_of(c->a, i);
    if (p != GP_NONE && p < i && anc[p] != GP_NONE)
        return anc[p];
    return is_top_kind(&c->ev[i]) ? i : GP_NONE;
}

/* The median duration of the launching operators: what issuing one op takes here. `buf` has
 * room for n. */
static int64_t median_launching(const struct rules_ctx *c, const struct rules_host_map *m,
                                uint32_t n, uint32_t *buf)
{
    size_t k = 0;
    for (uint32_t j = 0; j < n; j++)
        if (c->ev[m->top[j]].kind == GP_EV_CPU_OP && m->launching[m->top[j]])
            buf[k++] = m->top[j];
    int64_t *d = (int64_t *)malloc((k ? k : 1) * sizeof(*d)), med = 0;
    if (d) {
        for (size_t j = 0; j < k; j++)
            d[j] = c->ev[buf[j]].dur;
        med = rules_median(d, k);
    }
    free(d);
    return med;
}

static gp_status host_map_build(const struct rules_ctx *c, struct rules_host_map *m)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    uint32_t *anc = malloc((c->n_ev ? c->n_ev : 1) * sizeof(*anc));
    *m = (struct rules_host_map){0};
    m->launching = launching_marks(c);
    m->top = malloc((c->n_ev ? c->n_ev : 1) * sizeof(*m->top));
    m->track_at = malloc((nt + 1) * sizeof(*m->track_at));
    if (!anc || !m->launching || !m->top || !m->track_at) {
        free(anc);
        rules_host_map_release(m);
        return GP_ENOMEM;
    }
    uint32_t n = 0;
    for (size_t k = 0; k < nt; k++) {
        m->track_at[k] = n;
        for (uint32_t i = tr[k].first; i < tr[k].first + tr[k].count; i++) {
            anc[i] = tr[k].is_gpu ? GP_NONE : top_of(c, anc, i);
            if (anc[i] == i)
                m->top[n++] = i;
        }
    }
    m->track_at[nt] = n;
    m->n_tracks = nt;
    m->dispatch_ns = median_launching(c, m, n, anc);
    free(anc);
    return GP_OK;
}

gp_status rules_ctx_host_map(struct rules_ctx *c, const struct rules_host_map **out)
{
    if (!c->host) {
        struct rules_host_map *m = malloc(sizeof(*m));
        if (!m || host_map_build(c, m) != GP_OK) {
            free(m);
            return GP_ENOMEM;
        }
        c->host = m;
    }
    *out = c->host;
    return GP_OK;
}

void rules_host_map_release(struct rules_host_map *m)
{
    free(m->launching);
    free(m->top);
    free(m->track_at);
    *m = (struct rules_host_map){0};
}

static enum rules_host_use use_of(const struct rules_ctx *c, const struct rules_host_map *m,
                                  uint32_t i)
{
    const gp_event *e = &c->ev[i];
    if (e->flags & GP_EVF_DATALOADER)
        return RULES_HOST_LOADER;
    if (e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER || m->launching[i] ||
        e->dur <= m->dispatch_ns)
        return RULES_HOST_LAUNCH;
    return RULES_HOST_WORK;
}

/* The first top of track k that ends after ts (tops are disjoint and in order of start). */
static uint32_t first_top_after(const struct rules_ctx *c, const struct rules_host_map *m,
                                uint32_t k, int64_t ts)
{
    uint32_t lo = m->track_at[k], hi = m->track_at[k + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->ev[m->top[mid]].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > m->track_at[k]) {
        const gp_event *p = &c->ev[m->top[lo - 1]];
        lo -= p->ts + p->dur > ts;
    }
    return lo;
}

gp_status rules_host_split(const struct rules_ctx *c, const struct rules_host_map *m,
                           uint32_t track, int64_t ts, int64_t end, int64_t use[RULES_HOST_USES],
                           struct rules_agg *by)
{
    int64_t at = ts; /* covered up to here (tops that overlap by clock skew count once) */
    for (int u = 0; u < RULES_HOST_USES; u++)
        use[u] = 0;
    if (track >= m->n_tracks)
        return GP_OK;
    for (uint32_t j = first_top_after(c, m, track, ts);
         j < m->track_at[track + 1] && c->ev[m->top[j]].ts < end; j++) {
        uint32_t i = m->top[j];
        int64_t a = c->ev[i].ts > at ? c->ev[i].ts : at, b = c->ev[i].ts + c->ev[i].dur;
        b = b < end ? b : end;
        if (b <= a)
            continue;
        enum rules_host_use u = use_of(c, m, i);
        use[RULES_HOST_OFF_OPS] += a - at;
        use[u] += b - a;
        at = b;
        if (by && u != RULES_HOST_LOADER)
            GP_TRY(rules_agg_add(by, c->ev[i].name, (uint32_t)u, 0, b - a, 0, 0));
    }
    use[RULES_HOST_OFF_OPS] += end - at;
    return GP_OK;
}
