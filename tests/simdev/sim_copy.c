/* The simulated runtime's copies and sets, with the real pageable-vs-pinned semantics:
 * - from pageable memory, cudaMemcpyAsync waits for the stream's earlier work, then stages the
 *   bytes and returns once they are copied (synchronous in effect); to pageable memory it
 *   returns once the copy is done;
 * - from or to pinned memory (and device to device) it returns at once, and the bytes move
 *   when the stream's work is done up to it (sim_drain: a sync, an event sync, or a stream that
 *   waits on an event recorded after it being drained). A host that writes a pinned source (or
 *   reads a pinned destination) before then races, as on a GPU.
 * Times come from the model's PCIe rates (pinned or pageable) and device-memory bandwidth. */
#include "sim_int.h"

#include "fake_cupti.h"

#include <stdlib.h>
#include <string.h>

/* Work enqueued on a stream and not yet done: a closure, or a wait for another stream's work. */
struct sim_pending {
    uint64_t seq;
    sim_run_fn run; /* NULL: wait for `on`'s work up to on_seq */
    struct CUstream_st *on;
    uint64_t on_seq;
    struct sim_pending *next;
    _Alignas(16) char arg[]; /* the closure's bytes */
};

void sim_drain(struct CUstream_st *s, uint64_t seq)
{
    while (s->head && s->head->seq <= seq) {
        struct sim_pending *p = s->head; /* off the queue first: a wait drains other streams */
        s->head = p->next;
        if (!s->head)
            s->tail = NULL;
        if (p->run)
            p->run(p->arg);
        else
            sim_drain(p->on, p->on_seq);
        free(p);
    }
}

static int enqueue(struct CUstream_st *s, sim_run_fn run, const void *arg, size_t bytes,
                   struct CUstream_st *on, uint64_t on_seq)
{
    struct sim_pending *p = malloc(sizeof(*p) + bytes);
    if (!p)
        return -1;
    p->seq = s->seq;
    p->run = run;
    p->on = on;
    p->on_seq = on_seq;
    p->next = NULL;
    if (bytes) /* a wait carries no argument: memcpy from NULL is undefined even for 0 */
        memcpy(p->arg, arg, bytes);
    if (s->tail)
        s->tail->next = p;
    else
        s->head = p;
    s->tail = p;
    return 0;
}

int sim_defer(struct CUstream_st *s, sim_run_fn run, const void *arg, size_t bytes)
{
    return enqueue(s, run, arg, bytes, NULL, 0);
}

int sim_defer_wait(struct CUstream_st *s, struct CUstream_st *on, uint64_t on_seq)
{
    return enqueue(s, NULL, NULL, 0, on, on_seq);
}

static uint8_t host_kind(const void *p)
{
    return sim_is_pinned(p) ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
                            : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
}

/* A copy's record (kinds, bytes, flags) and its modelled duration; not placed. */
static uint64_t copy_fill(CUpti_ActivityMemcpy6 *m, enum cudaMemcpyKind kind, const void *dst,
                          const void *src, size_t bytes, int async)
{
    memset(m, 0, sizeof(*m));
    m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m->copyKind = kind == cudaMemcpyHostToDevice   ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                  : kind == cudaMemcpyDeviceToHost ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
                                                   : CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    m->srcKind =
            kind == cudaMemcpyHostToDevice ? host_kind(src) : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m->dstKind =
            kind == cudaMemcpyDeviceToHost ? host_kind(dst) : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    int pinned = m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED ||
                 m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    double bw = kind == cudaMemcpyDeviceToDevice ? sim_model.mem_bw / 2
                : pinned                         ? sim_model.pinned_bw
                                                 : sim_model.pageable_bw;
    m->bytes = bytes;
    m->flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    m->contextId = SIM_CONTEXT;
    return (uint64_t)((double)bytes / bw * 1e9) + 1000;
}

/* Place and record a copy on `s`; @return its modelled end. Under sim_lock. */
static uint64_t copy_record(struct CUstream_st *s, enum cudaMemcpyKind kind, const void *dst,
                            const void *src, size_t bytes, int async, uint64_t t0)
{
    CUpti_ActivityMemcpy6 m;
    uint64_t ns = copy_fill(&m, kind, dst, src, bytes, async);
    sim_place(s, t0, ns, kind == cudaMemcpyHostToDevice ? sim_h2d_engine() : NULL, &m.start,
              &m.end);
    m.streamId = s->id;
    fake_cupti_enter();
    m.correlationId = fake_cupti_correlation();
    fake_cupti_device_record((CUpti_Activity *)&m, sizeof(m), m.end, SIM_CONTEXT);
    sim_api(async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
                  : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
            t0, m.correlationId);
    fake_cupti_leave();
    return m.end;
}

struct copy_job {
    void *dst;
    const void *src;
    size_t bytes;
};

static void run_copy(void *arg)
{
    struct copy_job *j = arg;
    memcpy(j->dst, j->src, j->bytes);
}

/* A copy enqueued on a capturing stream: a node, if it is a device or pinned async copy (a
 * pageable or blocking one cannot be captured). Under sim_lock. */
static cudaError_t capture_copy(struct CUgraph_st *g, enum cudaMemcpyKind kind, void *dst,
                                const void *src, size_t bytes, int async, int pinned, uint64_t t0)
{
    if (!async || (kind != cudaMemcpyDeviceToDevice && !pinned))
        return sim_capture_invalidate(g);
    CUpti_ActivityMemcpy6 m;
    uint64_t ns = copy_fill(&m, kind, dst, src, bytes, async);
    struct copy_job j = {dst, src, bytes};
    return sim_capture_node(g, (CUpti_Activity *)&m, sizeof(m), ns, run_copy, &j, sizeof(j),
                            CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, t0);
}

static enum cudaMemcpyKind resolve(enum cudaMemcpyKind kind)
{
    return kind == cudaMemcpyDefault ? cudaMemcpyDeviceToDevice : kind;
}

static cudaError_t copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                        cudaStream_t stream, int async)
{
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    kind = resolve(kind);
    if (kind == cudaMemcpyHostToHost)
        return cudaErrorInvalidValue;
    if (!async && sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    sim_lock();
    struct CUstream_st *s = sim_stream(stream);
    const void *host = kind == cudaMemcpyHostToDevice ? src : dst;
    int pinned = kind != cudaMemcpyDeviceToDevice && sim_is_pinned(host);
    if (sim_capturing(s)) {
        cudaError_t rc = capture_copy(sim_capturing(s), kind, dst, src, bytes, async, pinned, t0);
        sim_unlock();
        return rc;
    }
    /* an async pinned or device copy runs in stream order; any other is done at the call,
     * after the stream's earlier work */
    int deferred = async && (pinned || kind == cudaMemcpyDeviceToDevice);
    uint64_t before = s->busy_until;
    if (!deferred)
        sim_drain(s, UINT64_MAX);
    if (!pinned && kind == cudaMemcpyHostToDevice) { /* staged: the stream's work first */
        sim_unlock();
        sim_wait_until(before);
        sim_lock();
    }
    uint64_t end = copy_record(s, kind, dst, src, bytes, async, t0);
    int wait = !async || !pinned;
    int rc = 0;
    struct copy_job j = {dst, src, bytes};
    if (deferred)
        rc = sim_defer(s, run_copy, &j, sizeof(j));
    else
        run_copy(&j);
    sim_unlock();
    if (rc)
        return cudaErrorMemoryAllocation;
    if (wait)
        sim_wait_until(end);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return copy(dst, src, bytes, kind, stream, 1);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    return copy(dst, src, bytes, kind, NULL, 0);
}

struct set_job {
    void *p;
    int value;
    size_t bytes;
};

static void run_set(void *arg)
{
    struct set_job *j = arg;
    memset(j->p, j->value, j->bytes);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream)
{
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = bytes;
    m.value = (uint32_t)value;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.contextId = SIM_CONTEXT;
    uint64_t ns = sim_kernel_ns(0, (double)bytes, 0);
    struct set_job j = {p, value, bytes};
    sim_lock();
    struct CUstream_st *s = sim_stream(stream);
    if (sim_capturing(s)) {
        cudaError_t rc =
                sim_capture_node(sim_capturing(s), (CUpti_Activity *)&m, sizeof(m), ns, run_set, &j,
                                 sizeof(j), CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, t0);
        sim_unlock();
        return rc;
    }
    sim_place(s, t0, ns, NULL, &m.start, &m.end);
    int deferred = sim_defer(s, run_set, &j, sizeof(j));
    m.streamId = s->id;
    fake_cupti_enter();
    m.correlationId = fake_cupti_correlation();
    fake_cupti_device_record((CUpti_Activity *)&m, sizeof(m), m.end, SIM_CONTEXT);
    sim_api(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, t0, m.correlationId);
    fake_cupti_leave();
    sim_unlock();
    return deferred ? cudaErrorMemoryAllocation : cudaSuccess;
}
