/* The GPU timeline: per device the busy union of kernels, memcpys and memsets, its idle gaps,
 * HTA's temporal breakdown (compute / communication / memory), tb_plugin's GPU utilization
 * inputs; per stream HTA's idle-time breakdown (host wait / kernel wait / other). */
#include "model/analysis_int.h"
#include "model/sort_runs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A GPU activity in sort order: `key` is its lane's rank (lanes = (device, stream) in order) or,
 * for device order, its device's rank. 16 bytes, as this array is alive with the whole trace. */
typedef struct gpu_ref {
    int64_t ts;
    uint32_t key, ev;
} gpu_ref;

static int cmp_ref(const void *pa, const void *pb)
{
    const gpu_ref *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

/* The distinct (device, stream) lanes of the GPU activities, found through a small hash. */
typedef struct gpu_lane {
    int device;
    int64_t stream;
    uint32_t rank, dev_rank; /* order by (device, stream); order of the device */
} gpu_lane;

typedef struct gpu_lanes {
    trace_vec v;           /* gpu_lane, in order of first sight */
    uint32_t *slots, mask; /* index + 1 */
    uint32_t *by_rank;     /* rank -> index in v */
    int *dev_of;           /* device rank -> device */
} gpu_lanes;

static int64_t ev_end(const gp_analysis *a, uint32_t i)
{
    return a->ev[i].ts + a->ev[i].dur;
}

/* HTA's rule: host wait when the launch started after the previous activity ended. */
static int idle_kind(const gp_analysis *a, uint32_t next, int64_t prev_end, int64_t len)
{
    uint32_t r = analysis_runtime(a, next);
    if (r != GP_NONE && a->ev[r].ts > prev_end)
        return GP_IDLE_HOST_WAIT;
    return len < a->kernel_wait_ns ? GP_IDLE_KERNEL_WAIT : GP_IDLE_OTHER;
}

enum { WANT_ALL, WANT_KERNEL, WANT_COMPUTE, WANT_COMM, WANT_MEMORY };

static int want_ok(const gp_analysis *a, uint32_t i, int want)
{
    int kind = a->ev[i].kind, comm = (a->ev[i].flags & GP_EVF_COMM) != 0;
    int dma = (a->ev[i].flags & GP_EVF_DMA) != 0; /* a kernel that HTA counts as memory */
    switch (want) {
    case WANT_KERNEL:
        return kind == GP_EV_KERNEL;
    case WANT_COMPUTE:
        return kind == GP_EV_KERNEL && !comm && !dma;
    case WANT_COMM:
        return kind == GP_EV_KERNEL && comm;
    case WANT_MEMORY:
        return kind != GP_EV_KERNEL || dma;
    default:
        return 1;
    }
}

/* |union of the refs' intervals passing `want`|, clipped to [lo, hi) when lo < hi. The refs are
 * sorted by start, so the union is merged on the fly (no buffer). */
static int64_t union_of(const gp_analysis *a, const gpu_ref *r, size_t n, int want, int64_t lo,
                        int64_t hi)
{
    int64_t total = 0, ca = 0, cb = 0;
    int open = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && !want_ok(a, r[i].ev, want))
            continue;
        if (i < n && open && r[i].ts <= cb) {
            int64_t e = ev_end(a, r[i].ev);
            cb = e > cb ? e : cb;
            continue;
        }
        if (open) {
            int64_t x = lo < hi && ca < lo ? lo : ca, y = lo < hi && cb > hi ? hi : cb;
            total += y > x ? y - x : 0;
        }
        if (i < n) {
            ca = r[i].ts;
            cb = ev_end(a, r[i].ev);
            open = 1;
        }
    }
    return total;
}

/* Gaps between consecutive activities (running max of ends) of r[0..n), sorted by ts: their
 * idle time by kind and their count; stored in `gaps` unless it is NULL. The gap lists are as
 * large as the GPU activity itself (~40 bytes per kernel), so gp_analysis_run only counts them
 * and gp_analysis_*_gaps() builds them on first use (build_gaps below). */
static gp_status add_gaps(gp_analysis *a, const gpu_ref *r, size_t n, trace_vec *gaps, int device,
                          int64_t stream, int64_t idle[GP_IDLE_COUNT], uint32_t *first,
                          uint32_t *count)
{
    uint32_t k = 0;
    int64_t prev_end = ev_end(a, r[0].ev);
    uint32_t prev = r[0].ev;
    for (size_t i = 1; i < n; i++) {
        if (r[i].ts > prev_end) {
            int kind = idle_kind(a, r[i].ev, prev_end, r[i].ts - prev_end);
            idle[kind] += r[i].ts - prev_end;
            k++;
            gp_idle_gap *g = gaps ? trace_vec_push(gaps) : NULL;
            if (gaps && !g)
                return GP_ENOMEM;
            if (g)
                *g = (gp_idle_gap){device, stream, prev_end, r[i].ts, (uint8_t)kind, prev, r[i].ev};
        }
        if (ev_end(a, r[i].ev) > prev_end) {
            prev_end = ev_end(a, r[i].ev);
            prev = r[i].ev;
        }
    }
    *first = a->n_gaps_counted;
    *count = k;
    a->n_gaps_counted += k;
    return GP_OK;
}

static gp_status device_pass(gp_analysis *a, const gpu_ref *r, size_t n, int device)
{
    gp_device_stats *d = trace_vec_push(&a->devices);
    if (!d)
        return GP_ENOMEM;
    d->device = device;
    d->span_ts = r[0].ts;
    for (size_t i = 0; i < n; i++) {
        int kind = a->ev[r[i].ev].kind;
        d->span_end = ev_end(a, r[i].ev) > d->span_end ? ev_end(a, r[i].ev) : d->span_end;
        d->n_kernels += kind == GP_EV_KERNEL;
        d->n_memcpy += kind == GP_EV_MEMCPY;
        d->n_memset += kind == GP_EV_MEMSET;
    }
    d->busy_ns = union_of(a, r, n, WANT_ALL, 0, 0);
    d->kernel_busy_ns = union_of(a, r, n, WANT_KERNEL, 0, 0);
    d->compute_ns = union_of(a, r, n, WANT_COMPUTE, 0, 0);
    d->comm_ns = union_of(a, r, n, WANT_COMM, 0, 0);
    d->memory_ns = union_of(a, r, n, WANT_MEMORY, 0, 0);
    if (a->steps.n) {
        int64_t lo = TRACE_VEC_AT(&a->steps, gp_step, 0)->ts;
        int64_t hi = TRACE_VEC_AT(&a->steps, gp_step, a->steps.n - 1)->end;
        d->steps_ns = hi - lo;
        d->step_kernel_busy_ns = lo < hi ? union_of(a, r, n, WANT_KERNEL, lo, hi) : 0;
    }
    return add_gaps(a, r, n, NULL, device, -1, d->idle_ns, &d->first_gap, &d->n_gaps);
}

static gp_status stream_pass(gp_analysis *a, const gpu_ref *r, size_t n, const gpu_lane *l)
{
    gp_stream_stats *s = trace_vec_push(&a->streams);
    if (!s)
        return GP_ENOMEM;
    s->device = l->device;
    s->stream = l->stream;
    s->n_events = n;
    s->busy_ns = union_of(a, r, n, WANT_ALL, 0, 0);
    return add_gaps(a, r, n, NULL, l->device, l->stream, s->idle_ns, &s->first_gap, &s->n_gaps);
}

static uint64_t lane_hash(int device, int64_t stream)
{
    uint64_t h = ((uint64_t)stream * 0x9E3779B97F4A7C15ull) ^ (uint32_t)device;
    return (h ^ (h >> 31)) * 0xC2B2AE3D27D4EB4Full;
}

static gp_status lanes_grow(gpu_lanes *ls)
{
    uint32_t mask = ls->mask ? ls->mask * 2 + 1 : 63;
    uint32_t *slots = calloc((size_t)mask + 1, sizeof(uint32_t));
    if (!slots)
        return GP_ENOMEM;
    for (uint32_t k = 0; k < ls->v.n; k++) {
        const gpu_lane *l = TRACE_VEC_AT(&ls->v, gpu_lane, k);
        uint64_t i = lane_hash(l->device, l->stream) & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = k + 1;
    }
    free(ls->slots);
    ls->slots = slots;
    ls->mask = mask;
    return GP_OK;
}

/* @return the index of lane (device, stream), added when new; GP_NONE when out of memory. */
static uint32_t lane_of(gpu_lanes *ls, int device, int64_t stream)
{
    if ((ls->v.n + 1) * 2 > ls->mask && lanes_grow(ls) != 0)
        return GP_NONE;
    uint64_t i = lane_hash(device, stream) & ls->mask;
    for (; ls->slots[i]; i = (i + 1) & ls->mask) {
        const gpu_lane *l = TRACE_VEC_AT(&ls->v, gpu_lane, ls->slots[i] - 1);
        if (l->device == device && l->stream == stream)
            return ls->slots[i] - 1;
    }
    gpu_lane *l = trace_vec_push(&ls->v);
    if (!l)
        return GP_NONE;
    l->device = device;
    l->stream = stream;
    ls->slots[i] = (uint32_t)ls->v.n;
    return (uint32_t)(ls->v.n - 1);
}

static void lanes_release(gpu_lanes *ls)
{
    trace_vec_release(&ls->v);
    free(ls->slots);
    free(ls->by_rank);
    free(ls->dev_of);
}

static int cmp_lane(const void *pa, const void *pb)
{
    const gpu_lane *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->stream > b->stream) - (a->stream < b->stream);
}

/* Rank the lanes by (device, stream) and their devices: by_rank, rank, dev_rank, dev_of. */
static gp_status rank_lanes(gpu_lanes *ls)
{
    size_t n = ls->v.n;
    gpu_lane *s = malloc((n + 1) * sizeof(*s));
    ls->by_rank = malloc((n + 1) * sizeof(uint32_t));
    ls->dev_of = malloc((n + 1) * sizeof(int));
    if (!s || !ls->by_rank || !ls->dev_of) {
        free(s);
        return GP_ENOMEM;
    }
    for (uint32_t k = 0; k < n; k++) {
        s[k] = *TRACE_VEC_AT(&ls->v, gpu_lane, k);
        s[k].rank = k; /* the lane's index, while sorting */
    }
    qsort(s, n, sizeof(*s), cmp_lane);
    uint32_t nd = 0;
    for (uint32_t k = 0; k < n; k++) {
        gpu_lane *l = TRACE_VEC_AT(&ls->v, gpu_lane, s[k].rank);
        if (k == 0 || s[k].device != s[k - 1].device)
            ls->dev_of[nd++] = s[k].device;
        l->rank = k;
        l->dev_rank = nd - 1;
        ls->by_rank[k] = s[k].rank;
    }
    free(s);
    return GP_OK;
}

/* The GPU activities, keyed by their lane's index. */
static gpu_ref *collect(const gp_analysis *a, gpu_lanes *ls, size_t *out_n)
{
    size_t n = 0, k = 0;
    for (uint32_t i = 0; i < a->n; i++)
        n += analysis_is_gpu_work(a->ev[i].kind);
    gpu_ref *r = malloc((n + 1) * sizeof(*r));
    uint32_t last = GP_NONE;
    for (uint32_t i = 0; i < a->n && r; i++) {
        if (!analysis_is_gpu_work(a->ev[i].kind))
            continue;
        const gp_gpu_info *g = gp_trace_gpu_info(a->t, &a->ev[i]);
        int dev = g ? g->device : -1;
        int64_t stream = g ? g->stream : -1;
        const gpu_lane *l = last != GP_NONE ? TRACE_VEC_AT(&ls->v, gpu_lane, last) : NULL;
        if (!l || l->device != dev || l->stream != stream) /* a track is usually one lane */
            last = lane_of(ls, dev, stream);
        if (last == GP_NONE) {
            free(r);
            return NULL;
        }
        r[k++] = (gpu_ref){a->ev[i].ts, last, i};
    }
    *out_n = n;
    return r;
}

/* Re-key refs (keyed by lane index, or by lane rank when from_rank) by lane rank or, by_dev,
 * by device rank, and sort them: a total order, so the result is unique; each stream is one run. */
static void order_refs(gpu_ref *r, size_t n, const gpu_lanes *ls, int by_dev, int from_rank)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t lane = from_rank ? ls->by_rank[r[i].key] : r[i].key;
        const gpu_lane *l = TRACE_VEC_AT(&ls->v, gpu_lane, lane);
        r[i].key = by_dev ? l->dev_rank : l->rank;
    }
    sort_runs(r, n, sizeof(*r), cmp_ref); /* a run per stream */
}

/* The GPU activities in (device, stream, ts) order (order_refs re-sorts them by device). */
static gpu_ref *sorted_refs(const gp_analysis *a, gpu_lanes *ls, size_t *n)
{
    memset(ls, 0, sizeof(*ls));
    trace_vec_init(&ls->v, sizeof(gpu_lane));
    gpu_ref *r = collect(a, ls, n);
    if (r && rank_lanes(ls) != 0) {
        free(r);
        r = NULL;
    }
    if (r)
        order_refs(r, *n, ls, 0, 0);
    return r;
}

static size_t group_end(const gpu_ref *r, size_t n, size_t i)
{
    size_t j = i;
    while (j < n && r[j].key == r[i].key)
        j++;
    return j;
}

gp_status analysis_gpu(gp_analysis *a)
{
    size_t n = 0;
    gpu_lanes ls;
    gpu_ref *r = sorted_refs(a, &ls, &n);
    gp_status rc = r ? GP_OK : GP_ENOMEM;
    a->n_gaps_counted = 0;
    for (size_t i = 0, j; rc == GP_OK && i < n; i = j) {
        j = group_end(r, n, i);
        rc = stream_pass(a, r + i, j - i, TRACE_VEC_AT(&ls.v, gpu_lane, ls.by_rank[r[i].key]));
    }
    if (r)
        order_refs(r, n, &ls, 1, 1);
    a->n_gaps_counted = 0;
    for (size_t i = 0, j; rc == GP_OK && i < n; i = j) {
        j = group_end(r, n, i);
        rc = device_pass(a, r + i, j - i, ls.dev_of[r[i].key]);
    }
    free(r);
    lanes_release(&ls);
    return rc;
}

/* Store the gaps of every stream, then of every device, in the order analysis_gpu counted them
 * (the same two orderings of one collection), so first_gap/n_gaps index the stored lists. */
static gp_status store_gaps(gp_analysis *a)
{
    size_t n = 0;
    gpu_lanes ls;
    gpu_ref *r = sorted_refs(a, &ls, &n);
    int64_t idle[GP_IDLE_COUNT] = {0};
    uint32_t first, count;
    gp_status rc = r ? GP_OK : GP_ENOMEM;
    a->n_gaps_counted = 0;
    for (size_t i = 0, j; rc == GP_OK && i < n; i = j) {
        j = group_end(r, n, i);
        const gpu_lane *l = TRACE_VEC_AT(&ls.v, gpu_lane, ls.by_rank[r[i].key]);
        rc = add_gaps(a, r + i, j - i, &a->stream_gaps, l->device, l->stream, idle, &first, &count);
    }
    if (r)
        order_refs(r, n, &ls, 1, 1);
    a->n_gaps_counted = 0;
    for (size_t i = 0, j; rc == GP_OK && i < n; i = j) {
        j = group_end(r, n, i);
        rc = add_gaps(a, r + i, j - i, &a->dev_gaps, ls.dev_of[r[i].key], -1, idle, &first, &count);
    }
    free(r);
    lanes_release(&ls);
    return rc;
}

static void build_gaps(const gp_analysis *ca)
{
    gp_analysis *a = (gp_analysis *)(uintptr_t)ca; /* a lazily filled cache, under gaps_mu */
    pthread_mutex_lock(&a->gaps_mu);
    if (!a->gaps_built) {
        a->dev_gaps.n = a->stream_gaps.n = 0;
        if (store_gaps(a) != 0)
            a->dev_gaps.n = a->stream_gaps.n = 0; /* out of memory: no gaps */
        a->gaps_built = 1;
    }
    pthread_mutex_unlock(&a->gaps_mu);
}

const gp_device_stats *gp_analysis_devices(const gp_analysis *a, size_t *n)
{
    *n = a->devices.n;
    return (const gp_device_stats *)a->devices.data;
}

const gp_idle_gap *gp_analysis_device_gaps(const gp_analysis *a, size_t *n)
{
    build_gaps(a);
    *n = a->dev_gaps.n;
    return (const gp_idle_gap *)a->dev_gaps.data;
}

const gp_stream_stats *gp_analysis_streams(const gp_analysis *a, size_t *n)
{
    *n = a->streams.n;
    return (const gp_stream_stats *)a->streams.data;
}

const gp_idle_gap *gp_analysis_stream_gaps(const gp_analysis *a, size_t *n)
{
    build_gaps(a);
    *n = a->stream_gaps.n;
    return (const gp_idle_gap *)a->stream_gaps.data;
}

const char *gp_idle_kind_name(gp_idle_kind k)
{
    static const char *const names[] = {"host wait", "kernel wait", "other"};
    return (unsigned)k < GP_IDLE_COUNT ? names[k] : "other";
}
