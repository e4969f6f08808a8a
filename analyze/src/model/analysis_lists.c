/* Lists derived from the trace for rules and reports: memory series per device (and per-step
 * churn), per-kernel statistics, memcpys/memsets with what launched them, syncs, launches. */
#include "model/analysis_int.h"
#include "model/sort_runs.h"

#include <stdlib.h>
#include <string.h>

typedef struct mem_ref {
    int dtype, did;
    int64_t ts;
    uint32_t ev;
} mem_ref;

static int cmp_mem(const void *pa, const void *pb)
{
    const mem_ref *a = pa, *b = pb;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    if (a->did != b->did)
        return a->did < b->did ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

static void mem_point(gp_analysis *a, gp_mem_series *s, const mem_ref *r)
{
    const gp_mem_sample *m = gp_trace_mem_sample(a->t, &a->ev[r->ev]);
    gp_mem_point *p = TRACE_VEC_AT(&a->mem_points, gp_mem_point, a->mem_points.n++);
    *p = (gp_mem_point){r->ts, m->total_allocated, m->total_reserved, r->ev};
    if (s->n_points++ == 0 || m->total_allocated > s->peak_allocated) {
        s->peak_allocated = m->total_allocated;
        s->peak_allocated_ts = r->ts;
    }
    if (s->n_points == 1 || m->total_reserved > s->peak_reserved) {
        s->peak_reserved = m->total_reserved;
        s->peak_reserved_ts = r->ts;
    }
    int32_t k = analysis_step_of(a, r->ev);
    gp_step *st = k >= 0 && r->dtype == 1 ? TRACE_VEC_AT(&a->steps, gp_step, k) : NULL;
    if (m->bytes > 0) {
        s->total_alloc_bytes += m->bytes;
        s->n_allocs++;
        if (st)
            st->mem_alloc_bytes += m->bytes;
    } else if (m->bytes < 0) {
        s->total_free_bytes -= m->bytes;
        s->n_frees++;
        if (st)
            st->mem_free_bytes -= m->bytes;
    }
}

static gp_status memory(gp_analysis *a)
{
    size_t n = 0;
    mem_ref *r = malloc((a->n + 1) * sizeof(*r));
    if (!r)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_mem_sample *m = gp_trace_mem_sample(a->t, &a->ev[i]);
        if (m)
            r[n++] = (mem_ref){m->device_type, m->device_id, a->ev[i].ts, i};
    }
    qsort(r, n, sizeof(*r), cmp_mem);
    /* reserve all points up front: series keep pointers into mem_points */
    for (size_t k = 0; k < n; k++)
        if (!trace_vec_push(&a->mem_points)) {
            free(r);
            return GP_ENOMEM;
        }
    a->mem_points.n = 0;
    for (size_t i = 0, j; i < n; i = j) {
        gp_mem_series *s = trace_vec_push(&a->mem_series);
        if (!s) {
            free(r);
            return GP_ENOMEM;
        }
        s->device_type = r[i].dtype;
        s->device_id = r[i].did;
        s->points = TRACE_VEC_AT(&a->mem_points, gp_mem_point, a->mem_points.n);
        for (j = i; j < n && r[j].dtype == r[i].dtype && r[j].did == r[i].did; j++)
            mem_point(a, s, &r[j]);
    }
    free(r);
    return GP_OK;
}

typedef struct kstat_key {
    gp_kernel_stat k;
    const char *name;
} kstat_key;

static int cmp_kstat(const void *pa, const void *pb)
{
    const kstat_key *a = pa, *b = pb;
    if (a->k.total_ns != b->k.total_ns)
        return a->k.total_ns > b->k.total_ns ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Sort by total descending, ties by name text. */
static gp_status sort_kstats(gp_analysis *a)
{
    size_t n = a->kernels.n;
    kstat_key *keys = malloc((n + 1) * sizeof(*keys));
    if (!keys)
        return GP_ENOMEM;
    gp_kernel_stat *k = (gp_kernel_stat *)a->kernels.data;
    for (size_t i = 0; i < n; i++)
        keys[i] = (kstat_key){k[i], gp_trace_str(a->t, k[i].name)};
    qsort(keys, n, sizeof(*keys), cmp_kstat);
    for (size_t i = 0; i < n; i++)
        k[i] = keys[i].k;
    free(keys);
    return GP_OK;
}

static gp_status kernel_stats(gp_analysis *a)
{
    uint32_t *slot = NULL;
    size_t nstr = 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->ev[i].kind == GP_EV_KERNEL && a->ev[i].name != GP_STR_NONE &&
            a->ev[i].name + 1 > nstr)
            nstr = a->ev[i].name + 1;
    if (!(slot = calloc(nstr + 1, sizeof(*slot))))
        return GP_ENOMEM;
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        if (e->kind != GP_EV_KERNEL || e->name == GP_STR_NONE)
            continue;
        gp_kernel_stat *k;
        if (!slot[e->name]) {
            if (!(k = trace_vec_push(&a->kernels)))
                break;
            k->name = e->name;
            k->min_ns = INT64_MAX;
            k->occupancy = 0;
            slot[e->name] = (uint32_t)a->kernels.n;
        }
        k = TRACE_VEC_AT(&a->kernels, gp_kernel_stat, slot[e->name] - 1);
        const gp_gpu_info *g = gp_trace_gpu_info(a->t, e);
        k->count++;
        k->total_ns += e->dur;
        k->min_ns = e->dur < k->min_ns ? e->dur : k->min_ns;
        k->max_ns = e->dur > k->max_ns ? e->dur : k->max_ns;
        if (g) { /* accumulate duration-weighted sums; divided below */
            k->blocks_per_sm += g->blocks_per_sm * (double)e->dur;
            k->occupancy += g->occupancy >= 0 ? g->occupancy * (double)e->dur : 0;
        }
    }
    free(slot);
    gp_kernel_stat *k = (gp_kernel_stat *)a->kernels.data;
    for (size_t i = 0; i < a->kernels.n; i++) {
        double w = k[i].total_ns > 0 ? (double)k[i].total_ns : 1.0;
        k[i].mean_ns = k[i].total_ns / (int64_t)k[i].count;
        k[i].blocks_per_sm /= w;
        k[i].occupancy /= w;
    }
    return sort_kstats(a);
}

static int cmp_memcpy(const void *pa, const void *pb)
{
    const gp_memcpy *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->event > b->event) - (a->event < b->event);
}

static gp_status memcpys(gp_analysis *a)
{
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        if (e->kind != GP_EV_MEMCPY && e->kind != GP_EV_MEMSET)
            continue;
        const gp_gpu_info *g = gp_trace_gpu_info(a->t, e);
        gp_memcpy *m = trace_vec_push(&a->memcpys);
        if (!m)
            return GP_ENOMEM;
        uint32_t r = analysis_runtime(a, i);
        *m = (gp_memcpy){i,
                         r,
                         a->op_of[i],
                         e->kind == GP_EV_MEMSET,
                         g->copy_kind,
                         g->src_mem,
                         g->dst_mem,
                         0,
                         g->device,
                         g->stream,
                         g->bytes,
                         e->ts,
                         e->dur};
        m->blocking = r != GP_NONE && (a->ev[r].flags & GP_EVF_SYNC_API) != 0;
    }
    if (a->memcpys.n)
        qsort(a->memcpys.data, a->memcpys.n, sizeof(gp_memcpy), cmp_memcpy);
    return GP_OK;
}

static int sync_kind_of_name(const char *s)
{
    if (strstr(s, "DeviceSynchronize") || strstr(s, "CtxSynchronize"))
        return GP_SYNC_DEVICE;
    if (strstr(s, "StreamSynchronize"))
        return GP_SYNC_STREAM;
    if (strstr(s, "EventSynchronize"))
        return GP_SYNC_EVENT;
    if (strstr(s, "StreamWaitEvent") || strstr(s, "Stream Wait Event"))
        return GP_SYNC_STREAM_WAIT;
    if (strstr(s, "Memcpy") || strstr(s, "Memset"))
        return GP_SYNC_MEMCPY;
    if (strstr(s, "Stream Sync"))
        return GP_SYNC_STREAM;
    if (strstr(s, "Event Sync"))
        return GP_SYNC_EVENT;
    if (strstr(s, "Context Sync") || strstr(s, "Device Sync"))
        return GP_SYNC_DEVICE;
    return GP_SYNC_OTHER;
}

/* Events are already in track order; syncs are sorted by ts at the end. */
static int cmp_sync(const void *pa, const void *pb)
{
    const gp_sync *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->event > b->event) - (a->event < b->event);
}

static gp_status syncs(gp_analysis *a)
{
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        int host = (e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER) &&
                   (e->flags & GP_EVF_SYNC_API);
        if (!host && e->kind != GP_EV_SYNC)
            continue;
        const gp_gpu_info *g = gp_trace_gpu_info(a->t, e);
        const char *what = host || !g || g->sync_kind == GP_STR_NONE
                                   ? gp_trace_str(a->t, e->name)
                                   : gp_trace_str(a->t, g->sync_kind);
        gp_sync *s = trace_vec_push(&a->syncs);
        if (!s)
            return GP_ENOMEM;
        uint32_t r = host ? i : analysis_runtime(a, i);
        *s = (gp_sync){i,
                       r != GP_NONE ? a->op_of[r] : GP_NONE,
                       (uint8_t)sync_kind_of_name(what),
                       !host,
                       e->ts,
                       e->dur};
    }
    if (a->syncs.n)
        qsort(a->syncs.data, a->syncs.n, sizeof(gp_sync), cmp_sync);
    return GP_OK;
}

typedef struct launch_key {
    int64_t ts;   /* the launch call's start */
    uint32_t gpu; /* its GPU event: unique, so the order is total */
    uint32_t at;  /* index in the unsorted list */
} launch_key;

static int cmp_launch(const void *pa, const void *pb)
{
    const launch_key *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

static gp_status launches(gp_analysis *a)
{
    for (uint32_t i = 0; i < a->n; i++) {
        uint32_t r = analysis_runtime(a, i);
        if (!analysis_is_gpu_work(a->ev[i].kind) || r == GP_NONE)
            continue;
        gp_launch *l = trace_vec_push(&a->launches);
        if (!l)
            return GP_ENOMEM;
        int64_t delay = a->ev[i].ts - (a->ev[r].ts + a->ev[r].dur);
        *l = (gp_launch){r, i, a->op_of[i], delay > 0 ? delay : 0};
    }
    /* Sort 16-byte keys, then move each launch once: half the bytes qsort would move. */
    size_t n = a->launches.n;
    launch_key *keys = malloc((n + 1) * sizeof(*keys));
    gp_launch *sorted = malloc((n + 1) * sizeof(*sorted));
    if (!keys || !sorted) {
        free(keys), free(sorted);
        return GP_ENOMEM;
    }
    gp_launch *l = (gp_launch *)a->launches.data;
    for (size_t i = 0; i < n; i++)
        keys[i] = (launch_key){a->ev[l[i].runtime].ts, l[i].gpu, (uint32_t)i};
    sort_runs(keys, n, sizeof(*keys), cmp_launch); /* a run per stream */
    for (size_t i = 0; i < n; i++)
        sorted[i] = l[keys[i].at];
    if (n)
        memcpy(l, sorted, n * sizeof(*l));
    free(keys);
    free(sorted);
    return GP_OK;
}

gp_status analysis_lists(gp_analysis *a)
{
    if (memory(a) || kernel_stats(a) || memcpys(a) || syncs(a))
        return GP_ENOMEM;
    return GP_OK;
}

/* The launch list is as long as the GPU activity and its sort needs twice that again, so it is
 * built on first use (report never asks for it), like the gap lists. */
static void build_launches(const gp_analysis *ca)
{
    gp_analysis *a = (gp_analysis *)(uintptr_t)ca; /* a lazily filled cache, under launches_mu */
    pthread_mutex_lock(&a->launches_mu);
    if (!a->launches_built) {
        if (launches(a) != 0)
            a->launches.n = 0; /* out of memory: no launches */
        a->launches_built = 1;
    }
    pthread_mutex_unlock(&a->launches_mu);
}

const gp_mem_series *gp_analysis_memory(const gp_analysis *a, size_t *n)
{
    *n = a->mem_series.n;
    return (const gp_mem_series *)a->mem_series.data;
}

const gp_kernel_stat *gp_analysis_kernel_stats(const gp_analysis *a, size_t *n)
{
    *n = a->kernels.n;
    return (const gp_kernel_stat *)a->kernels.data;
}

const gp_memcpy *gp_analysis_memcpys(const gp_analysis *a, size_t *n)
{
    *n = a->memcpys.n;
    return (const gp_memcpy *)a->memcpys.data;
}

const gp_sync *gp_analysis_syncs(const gp_analysis *a, size_t *n)
{
    *n = a->syncs.n;
    return (const gp_sync *)a->syncs.data;
}

const gp_launch *gp_analysis_launches(const gp_analysis *a, size_t *n)
{
    build_launches(a);
    *n = a->launches.n;
    return (const gp_launch *)a->launches.data;
}

const char *gp_sync_kind_name(gp_sync_kind k)
{
    static const char *const names[] = {"device",      "stream", "event",
                                        "stream wait", "memcpy", "other"};
    return (unsigned)k <= GP_SYNC_OTHER ? names[k] : "other";
}
