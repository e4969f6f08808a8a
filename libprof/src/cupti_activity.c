/* cupti_activity.c: GPU activity through CUPTI's Activity API. One subscriber (from CUPTI 13.3
 * on other tools may subscribe beside it); fixed-size, aligned, capped buffers; the completion
 * callback only queues a buffer for the writer thread, which converts it (cupti_convert.c). Any
 * CUPTI failure leaves a CPU-only session whose trace says why. Also the CUDA injection entry
 * point, InitializeInjection. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_int.h"
#include "gp/log.h"

#define BUF_BYTES       CUPTI_BUF_BYTES
#define MAX_OUTSTANDING CUPTI_MAX_OUTSTANDING

typedef cupti_done_buf done_buf;

/* The state is a member of the session object (session.c): prof_state_cupti(). */

static done_buf *take_queue(void);

/* Buffers CUPTI holds (handed out, not yet completed), with the number of forced flushes
 * started when handed out. A buffer handed out while a flush ran (another thread's first record
 * during the exit flush) may stay with CUPTI through that flush and, empty, through the next:
 * only one that two whole flushes left with CUPTI means another client took the callbacks. */
#define MAX_HELD CUPTI_MAX_HELD

static void held_add(uint8_t *buf)
{
    pthread_mutex_lock(&prof_state_cupti()->held_lock);
    for (size_t i = 0; i < MAX_HELD; i++) {
        if (!prof_state_cupti()->held[i]) {
            prof_state_cupti()->held[i] = buf;
            prof_state_cupti()->held_flush[i] = prof_state_cupti()->flushes;
            break;
        }
    }
    pthread_mutex_unlock(&prof_state_cupti()->held_lock);
}

static void held_remove(uint8_t *buf)
{
    pthread_mutex_lock(&prof_state_cupti()->held_lock);
    for (size_t i = 0; i < MAX_HELD; i++)
        if (prof_state_cupti()->held[i] == buf)
            prof_state_cupti()->held[i] = NULL;
    pthread_mutex_unlock(&prof_state_cupti()->held_lock);
}

/* Before a forced flush: @return its number (1, 2, ...). */
static uint64_t flush_begin(void)
{
    pthread_mutex_lock(&prof_state_cupti()->held_lock);
    uint64_t k = ++prof_state_cupti()->flushes;
    pthread_mutex_unlock(&prof_state_cupti()->held_lock);
    return k;
}

/* After forced flush `k`: @return 1 if a buffer handed out before flush k-1 started is still
 * held by CUPTI (flushes k-1 and k both ran over it). */
static int held_after_flush(uint64_t k)
{
    int stale = 0;
    pthread_mutex_lock(&prof_state_cupti()->held_lock);
    for (size_t i = 0; i < MAX_HELD; i++)
        stale |= prof_state_cupti()->held[i] && prof_state_cupti()->held_flush[i] + 1 < k;
    pthread_mutex_unlock(&prof_state_cupti()->held_lock);
    return stale;
}

void CUPTIAPI cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *max_records = 0;
    *size = BUF_BYTES;
    *buf = NULL;
    if (atomic_fetch_add(&prof_state_cupti()->outstanding, BUF_BYTES) + BUF_BYTES <=
        MAX_OUTSTANDING)
        *buf = aligned_alloc(64, BUF_BYTES);
    if (!*buf) { /* CUPTI drops the records and counts them itself */
        atomic_fetch_sub(&prof_state_cupti()->outstanding, BUF_BYTES);
        atomic_fetch_add(&prof_state_cupti()->refused_buffers, 1);
        return;
    }
    held_add(*buf);
}

void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                     size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    held_remove(buf);
    /* After the session stopped (a late buffer from CUPTI's worker): never into the next one. */
    done_buf *d = atomic_load(&prof_state_cupti()->gpu_state) == 1 ? malloc(sizeof(*d)) : NULL;
    if (!d) {
        atomic_fetch_add(&prof_state_cupti()->late_buffers,
                         atomic_load(&prof_state_cupti()->gpu_state) != 1);
        free(buf);
        atomic_fetch_sub(&prof_state_cupti()->outstanding, BUF_BYTES);
        return;
    }
    *d = (done_buf){buf, valid, NULL};
    pthread_mutex_lock(&prof_state_cupti()->qlock);
    if (prof_state_cupti()->queue_tail)
        prof_state_cupti()->queue_tail->next = d;
    else
        prof_state_cupti()->queue_head = d;
    prof_state_cupti()->queue_tail = d;
    pthread_mutex_unlock(&prof_state_cupti()->qlock);
}

/* A context created (add) or about to be destroyed (remove): the exit sync waits for each. */
static void context_seen(CUcontext ctx, int add)
{
    pthread_mutex_lock(&prof_state_cupti()->held_lock);
    int i = 0;
    while (i < prof_state_cupti()->n_contexts && prof_state_cupti()->contexts[i] != ctx)
        i++;
    if (add && i == prof_state_cupti()->n_contexts && i < CUPTI_MAX_CONTEXTS)
        prof_state_cupti()->contexts[prof_state_cupti()->n_contexts++] = ctx;
    else if (!add && i < prof_state_cupti()->n_contexts)
        prof_state_cupti()->contexts[i] =
                prof_state_cupti()->contexts[--prof_state_cupti()->n_contexts];
    pthread_mutex_unlock(&prof_state_cupti()->held_lock);
}

/* cudaDeviceReset destroys pending device records: flush before it runs. Contexts created and
 * destroyed are tracked for the exit sync. */
static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)ud;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        const CUpti_ResourceData *rd = data;
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ||
            cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
            context_seen(rd->context, cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
        return;
    }
    const CUpti_CallbackData *cb = data;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
        cb->callbackSite == CUPTI_API_ENTER && atomic_load(&prof_state_cupti()->gpu_state) == 1)
        prof_state_cupti()->api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static const char *api_name(int driver, uint32_t cbid)
{
    const char *name = NULL;
    if (prof_state_cupti()->api->GetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API
                                                        : CUPTI_CB_DOMAIN_RUNTIME_API,
                                                 cbid, &name) != CUPTI_SUCCESS)
        return NULL;
    return name;
}

/* Enable what `record` asks for; @return how many GPU kinds are on. */
static int enable_kinds(unsigned record, CUptiResult *last_err)
{
    /* Driver calls with kernels: the converter keeps only those that launch GPU work (Triton,
     * NVRTC) unless every driver call is asked for. Never CUPTI_ACTIVITY_KIND_GRAPH_TRACE: it
     * replaces the kernel records of a graph launch's nodes by one record per launch; with
     * kernels on, each node comes as a kernel with the launch's correlation id and its graph
     * and node ids. */
    static const struct {
        unsigned flag;
        CUpti_ActivityKind kind;
        const char *what;
    } table[] = {
            {~0u, CUPTI_ACTIVITY_KIND_DEVICE, "devices"},
            {GP_PROF_RECORD_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels"},
            {GP_PROF_RECORD_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
            {GP_PROF_RECORD_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
            {GP_PROF_RECORD_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API"},
            {GP_PROF_RECORD_DRIVER | GP_PROF_RECORD_KERNEL, CUPTI_ACTIVITY_KIND_DRIVER,
             "driver API"},
            {GP_PROF_RECORD_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization"},
            {GP_PROF_RECORD_SYNC, CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA events"},
            {GP_PROF_RECORD_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2, "memory"},
            {GP_PROF_RECORD_GPU, CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"},
            {GP_PROF_RECORD_GPU, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external correlation"},
    };
    int on = 0;
    prof_state_cupti()->n_enabled = 0;
    /* GPU work waits for API records only if they come */
    prof_state_cupti()->conv.wait_for_api = 0;
    prof_state_cupti()->failed_kinds[0] = '\0';
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (!(record & table[i].flag))
            continue;
        /* Device records are emitted once, at driver init: the trainer starts the profiler
         * after CUDA, so ask CUPTI to replay them (deviceProperties, blocks per SM). */
        CUptiResult rc = table[i].kind == CUPTI_ACTIVITY_KIND_DEVICE &&
                                         prof_state_cupti()->api->ActivityEnableAndDump
                                 ? prof_state_cupti()->api->ActivityEnableAndDump(table[i].kind)
                                 : prof_state_cupti()->api->ActivityEnable(table[i].kind);
        if (rc != CUPTI_SUCCESS) {
            *last_err = rc;
            size_t len = strlen(prof_state_cupti()->failed_kinds);
            snprintf(prof_state_cupti()->failed_kinds + len,
                     sizeof(prof_state_cupti()->failed_kinds) - len, "%s%s (%s)", len ? ", " : "",
                     table[i].what, cupti_error(prof_state_cupti()->api, rc));
            continue;
        }
        prof_state_cupti()->enabled[prof_state_cupti()->n_enabled++] = table[i].kind;
        if (table[i].kind == CUPTI_ACTIVITY_KIND_RUNTIME ||
            table[i].kind == CUPTI_ACTIVITY_KIND_DRIVER)
            prof_state_cupti()->conv.wait_for_api = 1;
        on += table[i].kind != CUPTI_ACTIVITY_KIND_DEVICE;
    }
    return on;
}

static int fail(const char *what, CUptiResult rc, char *why, size_t why_len)
{
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(why, why_len,
                 "no GPU activity could be recorded: CUPTI is held by another tool "
                 "(Nsight Systems, Nsight Compute or compute-sanitizer?)");
    else
        snprintf(why, why_len,
                 "no GPU activity could be recorded: %s failed: %s (no CUDA driver "
                 "or GPU?)",
                 what, cupti_error(prof_state_cupti()->api, rc));
    atomic_store(&prof_state_cupti()->gpu_state, -1);
    return -1;
}

static uint64_t CUPTIAPI gpu_timestamp(void)
{
    return (uint64_t)prof_clock_now_ns();
}

int prof_gpu_start(unsigned record, char *why, size_t why_len)
{
    if (prof_state_cupti()->forked || atomic_load(&prof_state_cupti()->gpu_state) == 1)
        return prof_state_cupti()->forked ? -1 : 0;
    if (!(prof_state_cupti()->api = cupti_load(why, why_len))) {
        atomic_store(&prof_state_cupti()->gpu_state, -1);
        return -1;
    }
    cupti_conv_init(&prof_state_cupti()->conv, prof_state_session()->pid, api_name);
    /* a handle from an earlier session may be gone */
    pthread_mutex_lock(&prof_state_cupti()->held_lock);
    prof_state_cupti()->n_contexts = 0;
    pthread_mutex_unlock(&prof_state_cupti()->held_lock);
    CUptiResult rc = prof_state_cupti()->api->Subscribe(&prof_state_cupti()->subscriber,
                                                        (CUpti_CallbackFunc)on_callback, NULL);
    if (rc != CUPTI_SUCCESS)
        return fail("cuptiSubscribe", rc, why, why_len);
    prof_state_cupti()->api->EnableCallback(1, prof_state_cupti()->subscriber,
                                            CUPTI_CB_DOMAIN_RUNTIME_API,
                                            CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    prof_state_cupti()->api->EnableCallback(1, prof_state_cupti()->subscriber,
                                            CUPTI_CB_DOMAIN_RESOURCE,
                                            CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    prof_state_cupti()->api->EnableCallback(1, prof_state_cupti()->subscriber,
                                            CUPTI_CB_DOMAIN_RESOURCE,
                                            CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    /* = gettid(), like our ranges */
    prof_state_cupti()->api->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    /* CUPTI's own clock is CLOCK_MONOTONIC_RAW on WSL: stamp with ours, before any kind is on */
    if (prof_state_cupti()->api->ActivityRegisterTimestampCallback)
        prof_state_cupti()->api->ActivityRegisterTimestampCallback(gpu_timestamp);
    prof_state_cupti()->conv.all_driver = (record & GP_PROF_RECORD_DRIVER) != 0;
    rc = prof_state_cupti()->api->ActivityRegisterCallbacks(cupti_buffer_requested,
                                                            cupti_buffer_completed);
    CUptiResult last = CUPTI_SUCCESS;
    if (rc != CUPTI_SUCCESS || enable_kinds(record, &last) == 0) {
        prof_state_cupti()->api->Unsubscribe(prof_state_cupti()->subscriber);
        return fail(rc != CUPTI_SUCCESS ? "cuptiActivityRegisterCallbacks" : "cuptiActivityEnable",
                    rc != CUPTI_SUCCESS ? rc : last, why, why_len);
    }
    /* Started before the flush period is set: that call may wake CUPTI's worker, whose buffer
     * (the device records just replayed) must not be taken for a late one and freed. */
    atomic_store(&prof_state_cupti()->gpu_state, 1);
    prof_state_cupti()->api->ActivityFlushPeriod(500);
    atomic_store(&prof_state_session()->gpu_ext,
                 prof_state_cupti()->api->ActivityPushExternalCorrelationId &&
                         prof_state_cupti()->api->ActivityPopExternalCorrelationId &&
                         (record & GP_PROF_RECORD_GPU));
    return 0;
}

/* The status line: "recorded", or which kinds CUPTI refused. */
static void set_recorded_status(void)
{
    char status[256];
    if (prof_state_cupti()->failed_kinds[0])
        snprintf(status, sizeof(status), "recorded, except: %s", prof_state_cupti()->failed_kinds);
    prof_set_gpu_status(prof_state_cupti()->failed_kinds[0] ? status : "recorded");
}

void prof_gpu_ensure_started(void)
{
    if (!atomic_load(&prof_state_session()->running) ||
        atomic_load(&prof_state_cupti()->gpu_state) != 0)
        return;
    char why[256];
    if (prof_gpu_start(prof_state_session()->record, why, sizeof(why)) == 0)
        set_recorded_status();
    else
        prof_set_gpu_status(why);
}

void prof_gpu_started_status(void)
{
    set_recorded_status();
}

void prof_gpu_flush(void)
{
    if (atomic_load(&prof_state_cupti()->gpu_state) != 1)
        return;
    uint64_t k = flush_begin();
    prof_state_cupti()->api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    size_t n = 0;
    if (prof_state_cupti()->api->ActivityGetNumDroppedRecords(NULL, 0, &n) == CUPTI_SUCCESS)
        atomic_fetch_add(&prof_state_cupti()->cupti_dropped, n); /* reading resets it */
    if (held_after_flush(k) && !prof_state_cupti()->taken_over) {
        prof_state_cupti()->taken_over = 1;
        prof_set_gpu_status("recorded until another profiler in the program (torch.profiler, "
                            "Kineto?) took over CUPTI's activity buffers: GPU activity after "
                            "that is missing");
    }
}

/* The driver entry points the exit sync needs, by their exported names (cuda.h maps some to
 * a _v2). */
#define DRIVER_NAME_(x) #x
#define DRIVER_NAME(x)  DRIVER_NAME_(x)
struct driver_sync {
    __typeof__(&cuCtxSynchronize) sync;
    __typeof__(&cuDeviceGetCount) count;
    __typeof__(&cuDeviceGet) get;
    __typeof__(&cuDevicePrimaryCtxGetState) state;
    __typeof__(&cuDevicePrimaryCtxRetain) retain;
    __typeof__(&cuDevicePrimaryCtxRelease) release;
    __typeof__(&cuCtxPushCurrent) push;
    __typeof__(&cuCtxPopCurrent) pop;
};

static int driver_sync_load(void *h, struct driver_sync *d)
{
    *(void **)&d->sync = dlsym(h, DRIVER_NAME(cuCtxSynchronize));
    *(void **)&d->count = dlsym(h, DRIVER_NAME(cuDeviceGetCount));
    *(void **)&d->get = dlsym(h, DRIVER_NAME(cuDeviceGet));
    *(void **)&d->state = dlsym(h, DRIVER_NAME(cuDevicePrimaryCtxGetState));
    *(void **)&d->retain = dlsym(h, DRIVER_NAME(cuDevicePrimaryCtxRetain));
    *(void **)&d->release = dlsym(h, DRIVER_NAME(cuDevicePrimaryCtxRelease));
    *(void **)&d->push = dlsym(h, DRIVER_NAME(cuCtxPushCurrent));
    *(void **)&d->pop = dlsym(h, DRIVER_NAME(cuCtxPopCurrent));
    int all = d->sync && d->count && d->get && d->state && d->retain && d->release;
    return all && d->push && d->pop ? 0 : -1;
}

/* Wait for `ctx`'s work. */
static void sync_context(const struct driver_sync *d, CUcontext ctx)
{
    if (d->push(ctx) == CUDA_SUCCESS) {
        d->sync();
        d->pop(&ctx);
    }
}

/* Wait for device `ordinal`'s primary context if it is active (never creating one). */
static void sync_primary(const struct driver_sync *d, int ordinal)
{
    CUdevice dev;
    unsigned flags;
    int active = 0;
    CUcontext ctx;
    if (d->get(&dev, ordinal) != CUDA_SUCCESS || d->state(dev, &flags, &active) != CUDA_SUCCESS ||
        !active || d->retain(&ctx, dev) != CUDA_SUCCESS)
        return;
    sync_context(d, ctx);
    d->release(dev);
}

void prof_gpu_sync(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return;
    struct driver_sync d;
    if (driver_sync_load(h, &d) == 0) {
        d.sync(); /* the calling thread's context; CUDA_ERROR_INVALID_CONTEXT without one */
        int n = 0;
        if (d.count(&n) != CUDA_SUCCESS)
            n = 0;
        for (int i = 0; i < n; i++)
            sync_primary(&d, i);
        CUcontext seen[CUPTI_MAX_CONTEXTS];
        pthread_mutex_lock(&prof_state_cupti()->held_lock);
        int k = prof_state_cupti()->n_contexts;
        memcpy(seen, prof_state_cupti()->contexts, (size_t)k * sizeof(seen[0]));
        pthread_mutex_unlock(&prof_state_cupti()->held_lock);
        for (int i = 0; i < k; i++) /* created during the session, not destroyed */
            sync_context(&d, seen[i]);
    }
    dlclose(h);
}

/* The signal path: the interrupted thread may hold CUPTI's (or malloc's) lock, so the forced
 * flush runs on a thread of its own and is waited for at most FLUSH_WAIT_MS; past that, the
 * trace ends with what CUPTI handed over already. */
#define FLUSH_WAIT_MS 500

static void *flusher(void *arg)
{
    (void)arg;
    prof_gpu_flush();
    atomic_store(&prof_state_cupti()->flusher_done, 1);
    return NULL;
}

static void flush_bounded(void)
{
    pthread_t th;
    atomic_store(&prof_state_cupti()->flusher_done, 0);
    if (pthread_create(&th, NULL, flusher, NULL) != 0)
        return;
    pthread_detach(th);
    for (int ms = 0; ms < FLUSH_WAIT_MS && !atomic_load(&prof_state_cupti()->flusher_done); ms++) {
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    if (!atomic_load(&prof_state_cupti()->flusher_done))
        prof_warn("GPU activity of the last %d ms may be missing: CUPTI could not be flushed "
                  "when the signal came (the interrupted thread was inside CUDA)",
                  FLUSH_WAIT_MS);
}

/* Disable the kinds, hand back CUPTI's buffers and detach. */
static void detach_cupti(void)
{
    for (int i = 0; i < prof_state_cupti()->n_enabled; i++)
        prof_state_cupti()->api->ActivityDisable(prof_state_cupti()->enabled[i]);
    /* CUPTI gives back the buffers it still holds: records made since the exit flush, freed
     * below, never left in CUPTI's hands */
    prof_state_cupti()->api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    prof_state_cupti()->api->Unsubscribe(prof_state_cupti()->subscriber);
    /* detach: no CUPTI overhead after the session; not while another client uses CUPTI, which
     * cuptiFinalize would tear down under it: one that took the buffers over (torch.profiler),
     * or, from CUPTI 13.3 on, any subscriber beside us (we cannot see them) */
    const cupti_api *api = prof_state_cupti()->api;
    if (api->Finalize && !prof_state_cupti()->taken_over &&
        api->version < CUPTI_VERSION_MULTI_SUBSCRIBER)
        api->Finalize();
}

void prof_gpu_stop(int process_exiting)
{
    if (atomic_load(&prof_state_cupti()->gpu_state) != 1)
        return;
    atomic_store(&prof_state_session()->gpu_ext, 0);
    if (!process_exiting) /* at exit the records were flushed and written, and CUDA may be gone */
        detach_cupti();
    atomic_store(&prof_state_cupti()->gpu_state, 0);
    for (done_buf *d = take_queue(), *next; d; d = next) { /* arrived after the last drain */
        next = d->next;
        free(d->buf);
        free(d);
        atomic_fetch_sub(&prof_state_cupti()->outstanding, BUF_BYTES);
    }
}

static done_buf *take_queue(void)
{
    pthread_mutex_lock(&prof_state_cupti()->qlock);
    done_buf *d = prof_state_cupti()->queue_head;
    prof_state_cupti()->queue_head = prof_state_cupti()->queue_tail = NULL;
    pthread_mutex_unlock(&prof_state_cupti()->qlock);
    return d;
}

void prof_gpu_drain(prof_out *o, int final, int from_signal)
{
    if (final && atomic_load(&prof_state_cupti()->gpu_state) == 1 && !prof_state_cupti()->forked) {
        if (from_signal)
            flush_bounded();
        else
            prof_gpu_flush();
    }
    for (done_buf *d = take_queue(), *next; d; d = next) {
        next = d->next;
        CUpti_Activity *rec = NULL;
        while (prof_state_cupti()->api && prof_state_cupti()->api->ActivityGetNextRecord(
                                                  d->buf, d->valid, &rec) == CUPTI_SUCCESS)
            cupti_conv_record(&prof_state_cupti()->conv, o, rec);
        free(d->buf);
        free(d);
        atomic_fetch_sub(&prof_state_cupti()->outstanding, BUF_BYTES);
    }
    if (final && prof_state_cupti()->api)
        cupti_conv_finish(&prof_state_cupti()->conv, o);
    if (final && prof_state_cupti()->conv.no_timestamp)
        prof_warn("%llu GPU record(s) had no timestamps (CUPTI device buffers exhausted)",
                  (unsigned long long)prof_state_cupti()->conv.no_timestamp);
    if (final && prof_gpu_dropped())
        prof_warn("%llu GPU record(s) dropped by CUPTI (its buffers full, or %llu buffer "
                  "request(s) refused: %u MiB were waiting for the writer)",
                  (unsigned long long)prof_gpu_dropped(),
                  (unsigned long long)atomic_load(&prof_state_cupti()->refused_buffers),
                  MAX_OUTSTANDING >> 20);
}

void prof_gpu_health_get(prof_gpu_health *h)
{
    const cupti_conv *c = &prof_state_cupti()->conv;
    if (!prof_state_cupti()->api) {
        memset(h, 0, sizeof(*h));
        return;
    }
    *h = (prof_gpu_health){c->records, c->no_timestamp, c->end_before_start, c->before_launch,
                           c->outside_window};
}

int prof_gpu_device_props(prof_out *o)
{
    return prof_state_cupti()->api ? cupti_conv_device_props(&prof_state_cupti()->conv, o) : 0;
}

void prof_gpu_metadata(prof_out *o)
{
    if (prof_state_cupti()->api)
        cupti_conv_metadata(&prof_state_cupti()->conv, o);
}

void prof_gpu_config(prof_out *o)
{
    if (prof_state_cupti()->api && atomic_load(&prof_state_cupti()->gpu_state) != -1)
        cupti_conv_config(&prof_state_cupti()->conv, o);
}

void prof_gpu_after_fork(void)
{
    /* CUDA cannot be used in a forked child; never touch CUPTI there */
    prof_state_cupti()->forked = 1;
    atomic_store(&prof_state_session()->gpu_ext, 0);
    atomic_store(&prof_state_cupti()->gpu_state, -1);
}

/* CUPTI's own count: it includes the records of the buffers we refused. */
uint64_t prof_gpu_dropped(void)
{
    return atomic_load(&prof_state_cupti()->cupti_dropped);
}

void prof_gpu_ext_push(uint64_t id)
{
    prof_state_cupti()->api->ActivityPushExternalCorrelationId(
            CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void prof_gpu_ext_pop(void)
{
    uint64_t last;
    prof_state_cupti()->api->ActivityPopExternalCorrelationId(
            CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

/** CUDA's injection entry point (CUDA_INJECTION64_PATH): runs inside the first cuInit. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    if (!atomic_load(&prof_state_session()->running))
        prof_inject_start("CUDA injection", 1);
    else
        prof_gpu_ensure_started();
    return 1;
}
