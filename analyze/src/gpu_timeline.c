/* The GPU timeline: per device the busy union of kernels, memcpys and memsets, its idle gaps,
 * HTA's temporal breakdown (compute / communication / memory), tb_plugin's GPU utilization
 * inputs; per stream HTA's idle-time breakdown (host wait / kernel wait / other). */
#include "analysis_int.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct gpu_ref {
    int device;
    int64_t stream, ts;
    uint32_t ev;
} gpu_ref;

static int cmp_ref(const void *pa, const void *pb)
{
    const gpu_ref *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

static int cmp_ref_dev(const void *pa, const void *pb)
{
    const gpu_ref *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

static int64_t ev_end(const gp_analysis *a, uint32_t i)
{
    return a->ev[i].ts + a->ev[i].dur;
}

/* HTA's rule: host wait when the launch started after the previous activity ended. */
static int idle_kind(const gp_analysis *a, uint32_t next, int64_t prev_end, int64_t len)
{
    uint32_t r = a->runtime_of[next];
    if (r != GP_NONE && a->ev[r].ts > prev_end)
        return GP_IDLE_HOST_WAIT;
    return len < a->kernel_wait_ns ? GP_IDLE_KERNEL_WAIT : GP_IDLE_OTHER;
}

enum { WANT_ALL, WANT_KERNEL, WANT_COMPUTE, WANT_COMM, WANT_MEMORY };

static int want_ok(const gp_analysis *a, uint32_t i, int want)
{
    int kind = a->ev[i].kind, comm = (a->ev[i].flags & GP_EVF_COMM) != 0;
    switch (want) {
    case WANT_KERNEL:
        return kind == GP_EV_KERNEL;
    case WANT_COMPUTE:
        return kind == GP_EV_KERNEL && !comm;
    case WANT_COMM:
        return kind == GP_EV_KERNEL && comm;
    case WANT_MEMORY:
        return kind != GP_EV_KERNEL;
    default:
        return 1;
    }
}

/* |union of the refs' intervals passing `want`|, clipped to [lo, hi) when lo < hi. */
static int64_t union_of(const gp_analysis *a, const gpu_ref *r, size_t n, int want, ival *buf,
                        int64_t lo, int64_t hi)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (want_ok(a, r[i].ev, want))
            buf[k++] = (ival){r[i].ts, ev_end(a, r[i].ev)};
    k = ival_merge(buf, k);
    return lo < hi ? ival_clip_total(buf, k, lo, hi) : ival_total(buf, k);
}

/* Gaps between consecutive activities (running max of ends) of r[0..n), sorted by ts: their
 * idle time by kind and their count; stored in `gaps` unless it is NULL. The gap lists are as
 * large as the GPU activity itself (~40 bytes per kernel), so gp_analysis_run only counts them
 * and gp_analysis_*_gaps() builds them on first use (build_gaps below). */
static int add_gaps(gp_analysis *a, const gpu_ref *r, size_t n, trace_vec *gaps, int64_t stream,
                    int64_t idle[GP_IDLE_COUNT], uint32_t *first, uint32_t *count)
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
                return -1;
            if (g)
                *g = (gp_idle_gap){r[i].device,   stream, prev_end, r[i].ts,
                                   (uint8_t)kind, prev,   r[i].ev};
        }
        if (ev_end(a, r[i].ev) > prev_end) {
            prev_end = ev_end(a, r[i].ev);
            prev = r[i].ev;
        }
    }
    *first = a->n_gaps_counted;
    *count = k;
    a->n_gaps_counted += k;
    return 0;
}

static int device_pass(gp_analysis *a, const gpu_ref *r, size_t n, ival *buf)
{
    gp_device_stats *d = trace_vec_push(&a->devices);
    if (!d)
        return -1;
    d->device = r[0].device;
    d->span_ts = r[0].ts;
    for (size_t i = 0; i < n; i++) {
        int kind = a->ev[r[i].ev].kind;
        d->span_end = ev_end(a, r[i].ev) > d->span_end ? ev_end(a, r[i].ev) : d->span_end;
        d->n_kernels += kind == GP_EV_KERNEL;
        d->n_memcpy += kind == GP_EV_MEMCPY;
        d->n_memset += kind == GP_EV_MEMSET;
    }
    d->busy_ns = union_of(a, r, n, WANT_ALL, buf, 0, 0);
    d->kernel_busy_ns = union_of(a, r, n, WANT_KERNEL, buf, 0, 0);
    d->compute_ns = union_of(a, r, n, WANT_COMPUTE, buf, 0, 0);
    d->comm_ns = union_of(a, r, n, WANT_COMM, buf, 0, 0);
    d->memory_ns = union_of(a, r, n, WANT_MEMORY, buf, 0, 0);
    if (a->steps.n) {
        int64_t lo = TRACE_VEC_AT(&a->steps, gp_step, 0)->ts;
        int64_t hi = TRACE_VEC_AT(&a->steps, gp_step, a->steps.n - 1)->end;
        d->steps_ns = hi - lo;
        d->step_kernel_busy_ns = lo < hi ? union_of(a, r, n, WANT_KERNEL, buf, lo, hi) : 0;
    }
    return add_gaps(a, r, n, NULL, -1, d->idle_ns, &d->first_gap, &d->n_gaps);
}

static int stream_pass(gp_analysis *a, const gpu_ref *r, size_t n, ival *buf)
{
    gp_stream_stats *s = trace_vec_push(&a->streams);
    if (!s)
        return -1;
    s->device = r[0].device;
    s->stream = r[0].stream;
    s->n_events = n;
    s->busy_ns = union_of(a, r, n, WANT_ALL, buf, 0, 0);
    return add_gaps(a, r, n, NULL, r[0].stream, s->idle_ns, &s->first_gap, &s->n_gaps);
}

static size_t collect(const gp_analysis *a, gpu_ref *r)
{
    size_t n = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        if (!analysis_is_gpu_work(a->ev[i].kind))
            continue;
        const gp_gpu_info *g = gp_trace_gpu_info(a->t, &a->ev[i]);
        r[n++] = (gpu_ref){g ? g->device : -1, g ? g->stream : -1, a->ev[i].ts, i};
    }
    return n;
}

/* The GPU activities in stream order (cmp_ref) or device order (cmp_ref_dev). */
static gpu_ref *sorted_refs(const gp_analysis *a, int (*cmp)(const void *, const void *), size_t *n)
{
    gpu_ref *r = malloc((a->n + 1) * sizeof(*r));
    *n = r ? collect(a, r) : 0;
    size_t s = 1;
    while (r && s < *n && cmp(&r[s - 1], &r[s]) <= 0)
        s++;
    if (r && s < *n) /* a total order: skipping an in-order input changes nothing */
        qsort(r, *n, sizeof(*r), cmp);
    return r;
}

int analysis_gpu(gp_analysis *a)
{
    size_t n;
    gpu_ref *r = sorted_refs(a, cmp_ref, &n);
    ival *buf = malloc((n + 1) * sizeof(*buf));
    int rc = r && buf ? 0 : -1;
    a->n_gaps_counted = 0;
    for (size_t i = 0, j; rc == 0 && i < n; i = j) {
        for (j = i; j < n && r[j].device == r[i].device && r[j].stream == r[i].stream; j++)
            ;
        rc = stream_pass(a, r + i, j - i, buf);
    }
    if (r)
        qsort(r, n, sizeof(*r), cmp_ref_dev);
    a->n_gaps_counted = 0;
    for (size_t i = 0, j; rc == 0 && i < n; i = j) {
        for (j = i; j < n && r[j].device == r[i].device; j++)
            ;
        rc = device_pass(a, r + i, j - i, buf);
    }
    free(r);
    free(buf);
    return rc;
}

/* Store the gaps of every stream (stream_dev = 0) or device (1), in the order analysis_gpu
 * counted them, so first_gap/n_gaps index the stored list. */
static int store_gaps(gp_analysis *a, int stream_dev)
{
    size_t n;
    gpu_ref *r = sorted_refs(a, stream_dev ? cmp_ref_dev : cmp_ref, &n);
    if (!r)
        return -1;
    int64_t idle[GP_IDLE_COUNT] = {0};
    uint32_t first, count;
    int rc = 0;
    a->n_gaps_counted = 0;
    for (size_t i = 0, j; rc == 0 && i < n; i = j) {
        for (j = i;
             j < n && r[j].device == r[i].device && (stream_dev || r[j].stream == r[i].stream); j++)
            ;
        rc = add_gaps(a, r + i, j - i, stream_dev ? &a->dev_gaps : &a->stream_gaps,
                      stream_dev ? -1 : r[i].stream, idle, &first, &count);
    }
    free(r);
    return rc;
}

static void build_gaps(const gp_analysis *ca)
{
    gp_analysis *a = (gp_analysis *)(uintptr_t)ca; /* a lazily filled cache, under gaps_mu */
    pthread_mutex_lock(&a->gaps_mu);
    if (!a->gaps_built) {
        a->dev_gaps.n = a->stream_gaps.n = 0;
        if (store_gaps(a, 0) != 0 || store_gaps(a, 1) != 0)
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
