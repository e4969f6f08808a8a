/* The simulated CUDA runtime: one device (properties of the timing model's GPU), device and
 * pinned host memory with their MEMORY2 records, streams, events and the synchronizing calls,
 * which wait for the modelled clock. Copies and sets are in sim_copy.c. */
#include "sim_int.h"

#include "fake_cupti.h"

#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PINNED 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st legacy = {.id = 7}; /* the simulated driver's default stream */
static struct CUstream_st *streams = &legacy;
static uint32_t next_stream = 13;
static uint64_t h2d_engine;
static size_t device_used;
static struct {
    void *p;
    size_t bytes;
} pinned[MAX_PINNED];
static _Thread_local int thread_ready;

void sim_lock(void)
{
    pthread_mutex_lock(&lock);
}

void sim_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

/* As the runtime does on a thread's first call: the device's primary context made current. */
void sim_thread_init(void)
{
    if (thread_ready)
        return;
    CUcontext ctx;
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    thread_ready = 1;
}

struct CUstream_st *sim_stream(cudaStream_t s)
{
    return s ? s : &legacy;
}

void sim_place(struct CUstream_st *s, uint64_t t0, uint64_t ns, uint64_t *after, uint64_t *start,
               uint64_t *end)
{
    uint64_t at = t0 + sim_model.launch_ns;
    if (s->busy_until > at)
        at = s->busy_until;
    if (after && *after > at)
        at = *after;
    *start = at;
    *end = at + ns;
    s->busy_until = *end;
    if (after)
        *after = *end;
    s->seq++;
}

void sim_wait_until(uint64_t t)
{
    for (uint64_t now = fake_cupti_now(); now < t; now = fake_cupti_now()) {
        uint64_t d = t - now < 1000000u ? t - now : 1000000u;
        struct timespec ts = {0, (long)d};
        nanosleep(&ts, NULL);
    }
}

void sim_api(uint32_t cbid, uint64_t t0, uint32_t corr)
{
    fake_cupti_api(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, t0, fake_cupti_now(), corr);
}

/* An API call with no device work: just its record. */
static void api_only(uint32_t cbid, uint64_t t0)
{
    fake_cupti_enter();
    sim_api(cbid, t0, fake_cupti_correlation());
    fake_cupti_leave();
}

/* ---- the device ---- */

/* Compute capability: 9.0 (the H100 of the timing model), or SIMDEV_CC (e.g. 75: a T4's 7.5, to
 * see what the backend refuses there). */
static int compute_capability(void)
{
    const char *cc = getenv("SIMDEV_CC");
    int v = cc ? atoi(cc) : 0;
    return v > 0 ? v : 90;
}

cudaError_t cudaGetDeviceCount(int *n)
{
    sim_thread_init();
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    sim_thread_init();
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (device != 0)
        return cudaErrorInvalidDevice;
    *value = attr == cudaDevAttrComputeCapabilityMajor   ? compute_capability() / 10
             : attr == cudaDevAttrComputeCapabilityMinor ? compute_capability() % 10
             : attr == cudaDevAttrMultiProcessorCount    ? 132
                                                         : 0;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (device != 0)
        return cudaErrorInvalidDevice;
    memset(prop, 0, sizeof(*prop));
    int cc = compute_capability();
    if (cc == 90)
        snprintf(prop->name, sizeof(prop->name),
                 "NVIDIA H100 80GB HBM3 (simulated, timing model sim-h100-roofline-v1)");
    else
        snprintf(prop->name, sizeof(prop->name),
                 "simulated GPU of compute capability %d.%d (timing model sim-h100-roofline-v1)",
                 cc / 10, cc % 10);
    prop->major = cc / 10;
    prop->minor = cc % 10;
    prop->totalGlobalMem = sim_model.device_memory;
    prop->multiProcessorCount = 132;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument";
    case cudaErrorNotReady:
        return "device not ready";
    case cudaErrorStreamCaptureUnsupported:
        return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
        return "operation failed due to a previous error during capture";
    case cudaErrorIllegalState:
        return "the operation cannot be performed in the present state";
    default:
        return "simulated CUDA error";
    }
}

cudaError_t cudaGetLastError(void)
{
    return sim_take_launch_error();
}

/* ---- memory ---- */

static void memory_record(CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind,
                          const void *p, size_t bytes, uint32_t corr)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = op;
    m.memoryKind = kind;
    m.correlationId = corr;
    m.address = (uint64_t)(uintptr_t)p;
    m.bytes = bytes;
    m.timestamp = fake_cupti_now();
    m.processId = (uint32_t)getpid();
    m.contextId = SIM_CONTEXT;
    m.streamId = legacy.id;
    fake_cupti_host_record((CUpti_Activity *)&m, sizeof(m));
}

static void memory_event(int alloc, int pin, const void *p, size_t bytes, uint64_t t0)
{
    static const uint32_t cbid[2][2] = {
            {CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020},
            {CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
             CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020}};
    fake_cupti_enter();
    uint32_t corr = fake_cupti_correlation();
    memory_record(alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                        : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                  pin ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, p,
                  bytes, corr);
    sim_api(cbid[alloc][pin], t0, corr);
    fake_cupti_leave();
}

/* Device allocations carry their size in front, 256-byte aligned as cudaMalloc's. */
cudaError_t cudaMalloc(void **p, size_t bytes)
{
    if (sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    *p = NULL;
    sim_lock();
    int fits = bytes <= sim_model.device_memory - device_used;
    if (fits)
        device_used += bytes;
    sim_unlock();
    char *base = fits ? aligned_alloc(256, 256 + ((bytes + 255) & ~(size_t)255)) : NULL;
    if (!base)
        return cudaErrorMemoryAllocation;
    *(size_t *)base = bytes;
    *p = base + 256;
    memory_event(1, 0, *p, bytes, t0);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (!p)
        return cudaSuccess;
    if (sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    char *base = (char *)p - 256;
    size_t bytes = *(size_t *)base;
    sim_lock();
    sim_drain_all(); /* cudaFree waits for the device's work */
    device_used -= bytes;
    sim_unlock();
    memory_event(0, 0, p, bytes, t0);
    free(base);
    return cudaSuccess;
}

int sim_is_pinned(const void *p)
{
    const char *c = p;
    for (int i = 0; i < MAX_PINNED; i++)
        if (pinned[i].p && c >= (char *)pinned[i].p && c < (char *)pinned[i].p + pinned[i].bytes)
            return 1;
    return 0;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    if (sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    (void)flags;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    *p = malloc(bytes ? bytes : 1);
    int slot = -1;
    sim_lock();
    for (int i = 0; *p && i < MAX_PINNED && slot < 0; i++)
        if (!pinned[i].p)
            slot = i;
    if (slot >= 0) {
        pinned[slot].p = *p;
        pinned[slot].bytes = bytes;
    }
    sim_unlock();
    if (slot < 0) {
        free(*p);
        *p = NULL;
        return cudaErrorMemoryAllocation;
    }
    memory_event(1, 1, *p, bytes, t0);
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    if (sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    size_t bytes = 0;
    sim_lock();
    sim_drain_all(); /* cudaFreeHost waits for the device's work */
    for (int i = 0; i < MAX_PINNED; i++)
        if (pinned[i].p == p) {
            bytes = pinned[i].bytes;
            pinned[i].p = NULL;
        }
    sim_unlock();
    memory_event(0, 1, p, bytes, t0);
    free(p);
    return cudaSuccess;
}

uint64_t *sim_h2d_engine(void)
{
    return &h2d_engine;
}

/* ---- streams and events ---- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *out, unsigned int flags)
{
    (void)flags;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    struct CUstream_st *s = calloc(1, sizeof(*s));
    if (!s)
        return cudaErrorMemoryAllocation;
    sim_lock();
    s->id = next_stream++;
    s->next = streams;
    streams = s;
    sim_unlock();
    *out = s;
    api_only(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, t0);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    sim_lock();
    sim_drain(s, UINT64_MAX);
    for (struct CUstream_st **p = &streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    sim_unlock();
    free(s);
    return cudaSuccess;
}

void sim_drain_all(void)
{
    for (struct CUstream_st *s = streams; s; s = s->next)
        sim_drain(s, UINT64_MAX);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    *e = calloc(1, sizeof(**e));
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream)
{
    uint64_t t0;
    cudaError_t refused;
    /* events inside a capture (fork/join) are not simulated */
    struct CUstream_st *s = sim_enter_uncaptured(stream, &t0, &refused);
    if (!s)
        return refused;
    e->s = s;
    e->seq = s->seq;
    e->at = s->busy_until;
    sim_unlock();
    api_only(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, t0);
    return cudaSuccess;
}

/* A synchronizing call's SYNCHRONIZATION and API records, from t0 to now. */
static void sync_records(CUpti_ActivitySynchronizationType type, uint32_t stream, uint32_t cbid,
                         uint64_t t0)
{
    fake_cupti_enter();
    uint32_t corr = fake_cupti_correlation();
    fake_cupti_sync_record(type, t0, corr, SIM_CONTEXT, stream);
    sim_api(cbid, t0, corr);
    fake_cupti_leave();
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t e, unsigned int flags)
{
    (void)flags;
    uint64_t t0;
    cudaError_t refused;
    /* an event from outside the capture: not allowed */
    struct CUstream_st *s = sim_enter_uncaptured(stream, &t0, &refused);
    if (!s)
        return refused;
    if (e->s && e->s != s && sim_defer_wait(s, e->s, e->seq) != 0) {
        sim_unlock();
        return cudaErrorMemoryAllocation;
    }
    if (e->s) {
        if (e->at > s->busy_until)
            s->busy_until = e->at;
    }
    sim_unlock();
    sync_records(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, s->id,
                 CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, t0);
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    sim_wait_until(e->at);
    sim_lock();
    if (e->s)
        sim_drain(e->s, e->seq);
    sim_unlock();
    sync_records(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE,
                 CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                 CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, t0);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    if (sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    sim_lock();
    struct CUstream_st *s = sim_stream(stream);
    uint64_t until = s->busy_until;
    sim_unlock();
    sim_wait_until(until);
    sim_lock();
    sim_drain(s, UINT64_MAX);
    sim_unlock();
    sync_records(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, s->id,
                 CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, t0);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (sim_capture_unsafe())
        return cudaErrorStreamCaptureUnsupported;
    sim_thread_init();
    uint64_t t0 = fake_cupti_now(), until = 0;
    sim_lock();
    for (struct CUstream_st *s = streams; s; s = s->next)
        until = s->busy_until > until ? s->busy_until : until;
    sim_unlock();
    sim_wait_until(until);
    sim_lock();
    sim_drain_all();
    sim_unlock();
    sync_records(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
                 CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                 CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, t0);
    return cudaSuccess;
}
