/* GT03 gpu_idle_gaps: long device idle gaps between the first and last GPU activity (within the
 * analysed steps where a warm-up step was left out: a gap before the loop is start-up), each
 * attributed to the CPU range that overlaps it with the highest priority: sync API > memcpy API >
 * other runtime call > DataLoader > named user range > other CPU work. Anchor: nsys gpu_gaps (500
 * ms); the per-gap attribution is ours. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { GAP_MIN_MS, CRIT_PCT };
static const gp_rule_param params[] = {
        {"gap_min_ms", 500, "a device gap at least this long is reported (nsys gpu_gaps)"},
        {"crit_pct", 20, "gaps adding up to this share of the GPU span are crit (ours)"},
};
RULES_INFO(gpu_idle_gaps, "GT03", "long GPU idle gaps", 0, RULES_NEEDS_GPU | RULES_READS_GPU);

static const gp_evidence_col cols[] = {{"start", GP_UNIT_US},
                                       {"duration", GP_UNIT_US},
                                       {"device", GP_UNIT_COUNT},
                                       {"CPU range overlapping", GP_UNIT_TEXT},
                                       {"thread", GP_UNIT_COUNT}};

struct gap {
    int64_t ts, end;
    int device;
    uint32_t who;  /* attributed CPU event, or GP_NONE */
    int64_t score; /* qualifies * 2^60 + priority * 2^56 + overlap */
};

/* A blocking runtime call that covers the gap is the most specific cause, then the loader. */
static int priority(const struct rules_ctx *c, const gp_event *e)
{
    if (e->flags & GP_EVF_SYNC_API)
        return strncmp(gp_trace_str(c->t, e->name), "cudaMemcpy", 10) == 0 ? 5 : 6;
    if (e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER)
        return 4; /* cudaFree, cudaMalloc, module loading: they block the host too */
    if (e->flags & GP_EVF_DATALOADER)
        return 3;
    if (e->kind == GP_EV_USER_ANNOTATION)
        return 2;
    return 1;
}

/* Score one CPU event against the gaps it overlaps (one device's gaps: disjoint, sorted). */
static void attribute(const struct rules_ctx *c, struct gap *g, size_t n, uint32_t i)
{
    const gp_event *e = &c->ev[i];
    int64_t end = e->ts + e->dur;
    if (e->dur <= 0 || (e->flags & GP_EVF_STEP))
        return;
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first gap ending after e starts */
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].end <= e->ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < n && g[k].ts < end; k++) {
        int64_t a = e->ts > g[k].ts ? e->ts : g[k].ts, b = end < g[k].end ? end : g[k].end;
        if (b <= a)
            continue;
        int qual = 2 * (b - a) >= g[k].end - g[k].ts;
        int64_t score =
                ((int64_t)qual << 60) + ((int64_t)(qual ? priority(c, e) : 0) << 56) + (b - a);
        if (score > g[k].score)
            g[k].score = score, g[k].who = i;
    }
}

static int cmp_ts(const void *pa, const void *pb)
{
    const struct gap *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

static int cmp_len(const void *pa, const void *pb)
{
    const struct gap *a = pa, *b = pb;
    int64_t la = a->end - a->ts, lb = b->end - b->ts;
    return la != lb ? (la > lb ? -1 : 1) : cmp_ts(pa, pb);
}

/* Gaps of one device are disjoint and sorted, so each device's run is searched on its own. */
static void attribute_all(const struct rules_ctx *c, struct gap *g, size_t n)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    qsort(g, n, sizeof(*g), cmp_ts);
    for (size_t d0 = 0, d1; d0 < n; d0 = d1) {
        for (d1 = d0; d1 < n && g[d1].device == g[d0].device; d1++)
            ;
        for (size_t t = 0; t < nt; t++)
            if (!tr[t].is_gpu)
                for (uint32_t i = tr[t].first; i < tr[t].first + tr[t].count; i++)
                    attribute(c, g + d0, d1 - d0, i);
    }
    qsort(g, n, sizeof(*g), cmp_len);
}

/* The span GT03 looks at: the analysed steps where a warm-up step was left out, else all. */
static void window(const struct rules_ctx *c, int64_t *lo, int64_t *hi)
{
    *lo = c->n_warmup && c->n_steps ? c->win_ts : INT64_MIN;
    *hi = c->n_warmup && c->n_steps ? c->win_end : INT64_MAX;
}

static gp_status collect(const struct rules_ctx *c, const double *p, struct gap **out, size_t *n,
                         int64_t *total)
{
    size_t ng;
    int64_t lo, hi;
    const gp_idle_gap *dg = gp_analysis_device_gaps(c->a, &ng);
    window(c, &lo, &hi);
    *out = NULL, *n = 0, *total = 0;
    for (size_t i = 0; i < ng; i++) {
        int64_t ts = dg[i].ts > lo ? dg[i].ts : lo, end = dg[i].end < hi ? dg[i].end : hi;
        if (end <= ts || (double)(end - ts) < p[GAP_MIN_MS] * 1e6)
            continue;
        if (!*out && !(*out = calloc(ng - i, sizeof(**out))))
            return GP_ENOMEM;
        (*out)[(*n)++] = (struct gap){ts, end, dg[i].device, GP_NONE, -1};
        *total += end - ts;
    }
    return GP_OK;
}

static gp_status rows(const struct rules_ctx *c, struct rules_out *o, const struct gap *g, size_t n)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    for (size_t i = 0; i < n && i < RULES_MAX_ROWS; i++) {
        const char *who = g[i].who == GP_NONE ? "(no CPU range)" : rules_ev_name(c, g[i].who);
        double tid = g[i].who == GP_NONE ? -1 : (double)tr[c->ev[g[i].who].track].tid;
        GP_TRY(rules_row(o, (gp_cell[]){{(double)(g[i].ts - c->trace_ts) / 1e3, NULL},
                                        {(double)(g[i].end - g[i].ts) / 1e3, NULL},
                                        {g[i].device, NULL},
                                        {0, who},
                                        {tid, NULL}}));
        GP_TRY(rules_range(o, g[i].ts, g[i].end, rules_strf(o, "GPU idle: %s", who)));
    }
    return GP_OK;
}

static int64_t gpu_span(const struct rules_ctx *c)
{
    size_t nd;
    int64_t span = 0, lo, hi;
    const gp_device_stats *d = gp_analysis_devices(c->a, &nd);
    window(c, &lo, &hi);
    for (size_t i = 0; i < nd; i++) {
        int64_t ts = d[i].span_ts > lo ? d[i].span_ts : lo;
        int64_t end = d[i].span_end < hi ? d[i].span_end : hi;
        span += end > ts ? end - ts : 0;
    }
    return span;
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, const struct gap *g)
{
    char a[32];
    const char *who = g->who == GP_NONE ? NULL : rules_ev_name(c, g->who);
    return rules_reco(o,
                      "The GPU idles for more than %s at a time. The longest gap (%s) "
                      "overlaps %s%s%s on the host: run it less often, asynchronously, or "
                      "outside the training loop. Otherwise add ranges (record_function / "
                      "NVTX) to see what the CPU does then.",
                      rules_fmt_ns(a, sizeof(a), (int64_t)(o->f.threshold * 1e3)),
                      rules_fmt_ns((char[32]){0}, 32, g->end - g->ts), who ? "'" : "",
                      who ? who : "no recorded CPU range", who ? "'" : "");
}

gp_status rules_gpu_idle_gaps(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32];
    struct gap *g;
    size_t n;
    int64_t total, span = gpu_span(c);
    GP_TRY(collect(c, p, &g, &n, &total));
    double longest = 0;
    for (size_t i = 0; i < n; i++)
        if ((double)(g[i].end - g[i].ts) > longest)
            longest = (double)(g[i].end - g[i].ts);
    rules_measure(o, "longest_gap", GP_UNIT_US, longest / 1e3, ">=", p[GAP_MIN_MS] * 1e3, INFINITY);
    gp_status rc = rules_summary(o,
                                 "%zu device gap%s of %s or more, %s in all (%.1f%% of the "
                                 "GPU span)",
                                 n, n == 1 ? "" : "s",
                                 rules_fmt_ns(a, sizeof(a), (int64_t)(p[GAP_MIN_MS] * 1e6)),
                                 rules_fmt_ns((char[32]){0}, 32, total),
                                 span ? 100.0 * (double)total / (double)span : 0.0);
    if (rc == GP_OK && n > 0) {
        if (span && 100.0 * (double)total / (double)span >= p[CRIT_PCT])
            rules_fire(o, GP_SEV_CRIT, p[GAP_MIN_MS] * 1e3);
        attribute_all(c, g, n);
        rules_cols(o, 5, cols);
        rc = rows(c, o, g, n);
        if (rc == GP_OK)
            rc = rules_gain(o, total, c->n_steps ? total / (int64_t)c->n_steps : total,
                            "up to %s if the GPU never waited in these gaps",
                            rules_fmt_ns(a, sizeof(a), total));
        if (rc == GP_OK)
            rc = advise(c, o, &g[0]);
    }
    free(g);
    return rc;
}
