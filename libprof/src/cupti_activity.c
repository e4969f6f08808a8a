/* cupti_activity.c: GPU activity through CUPTI's Activity API. One subscriber; fixed-size,
 * aligned, capped buffers; the completion callback only queues a buffer for the writer thread,
 * which converts it (cupti_convert.c). Any CUPTI failure leaves a CPU-only session whose trace
 * says why. Also the CUDA injection entry point, InitializeInjection. */
#include <stdlib.h>
#include <string.h>

#include "cupti_int.h"
#include "gp/log.h"

#define BUF_BYTES       (8u << 20)
#define MAX_OUTSTANDING (256u << 20) /* allocated and not yet converted */

typedef struct done_buf {
    uint8_t *buf;
    size_t valid;
    struct done_buf *next;
} done_buf;

static const cupti_api *api;
static CUpti_SubscriberHandle subscriber;
static _Atomic int gpu_state; /* 0 off, 1 recording, -1 failed */
static int forked;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static done_buf *queue_head, *queue_tail;
static _Atomic size_t outstanding;
static _Atomic uint64_t refused_buffers, cupti_dropped;
static CUpti_ActivityKind enabled[16];
static int n_enabled;
static cupti_conv conv;

void CUPTIAPI cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *max_records = 0;
    *size = BUF_BYTES;
    *buf = NULL;
    if (atomic_fetch_add(&outstanding, BUF_BYTES) + BUF_BYTES <= MAX_OUTSTANDING)
        *buf = aligned_alloc(64, BUF_BYTES);
    if (!*buf) { /* CUPTI >= 13 drops and counts records when refused */
        atomic_fetch_sub(&outstanding, BUF_BYTES);
        atomic_fetch_add(&refused_buffers, 1);
    }
}

void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                     size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    done_buf *d = malloc(sizeof(*d));
    if (!d) {
        free(buf);
        atomic_fetch_sub(&outstanding, BUF_BYTES);
        return;
    }
    *d = (done_buf){buf, valid, NULL};
    pthread_mutex_lock(&qlock);
    if (queue_tail)
        queue_tail->next = d;
    else
        queue_head = d;
    queue_tail = d;
    pthread_mutex_unlock(&qlock);
}

/* cudaDeviceReset destroys pending device records: flush before it runs. */
static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)ud;
    const CUpti_CallbackData *cb = data;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
        cb->callbackSite == CUPTI_API_ENTER && atomic_load(&gpu_state) == 1)
        api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static const char *api_name(int driver, uint32_t cbid)
{
    const char *name = NULL;
    if (api->GetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
                             cbid, &name) != CUPTI_SUCCESS)
        return NULL;
    return name;
}

/* Enable what `record` asks for; @return how many GPU kinds are on. */
static int enable_kinds(unsigned record, CUptiResult *last_err)
{
    static const struct {
        unsigned flag;
        CUpti_ActivityKind kind;
    } table[] = {
            {~0u, CUPTI_ACTIVITY_KIND_DEVICE},
            {GP_PROF_RECORD_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
            {GP_PROF_RECORD_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY},
            {GP_PROF_RECORD_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET},
            {GP_PROF_RECORD_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME},
            {GP_PROF_RECORD_DRIVER, CUPTI_ACTIVITY_KIND_DRIVER},
            {GP_PROF_RECORD_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
            {GP_PROF_RECORD_SYNC, CUPTI_ACTIVITY_KIND_CUDA_EVENT},
            {GP_PROF_RECORD_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2},
            {GP_PROF_RECORD_GPU, CUPTI_ACTIVITY_KIND_OVERHEAD},
            {GP_PROF_RECORD_GPU, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION},
    };
    int on = 0;
    n_enabled = 0;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (!(record & table[i].flag))
            continue;
        /* Device records are emitted once, at driver init: the trainer starts the profiler
         * after CUDA, so ask CUPTI to replay them (deviceProperties, blocks per SM). */
        CUptiResult rc = table[i].kind == CUPTI_ACTIVITY_KIND_DEVICE && api->ActivityEnableAndDump
                                 ? api->ActivityEnableAndDump(table[i].kind)
                                 : api->ActivityEnable(table[i].kind);
        if (rc != CUPTI_SUCCESS) {
            *last_err = rc;
            GP_LOG(GP_LOG_DEBUG, "cuptiActivityEnable(%d): %s", (int)table[i].kind,
                   cupti_error(api, rc));
            continue;
        }
        enabled[n_enabled++] = table[i].kind;
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
                 what, cupti_error(api, rc));
    atomic_store(&gpu_state, -1);
    return -1;
}

int prof_gpu_start(unsigned record, char *why, size_t why_len)
{
    if (forked || atomic_load(&gpu_state) == 1)
        return forked ? -1 : 0;
    if (!(api = cupti_load(why, why_len))) {
        atomic_store(&gpu_state, -1);
        return -1;
    }
    cupti_conv_init(&conv, prof_g.pid, api_name);
    CUptiResult rc = api->Subscribe(&subscriber, (CUpti_CallbackFunc)on_callback, NULL);
    if (rc != CUPTI_SUCCESS)
        return fail("cuptiSubscribe", rc, why, why_len);
    api->EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    api->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); /* = gettid(), like our ranges */
    rc = api->ActivityRegisterCallbacks(cupti_buffer_requested, cupti_buffer_completed);
    CUptiResult last = CUPTI_SUCCESS;
    if (rc != CUPTI_SUCCESS || enable_kinds(record, &last) == 0) {
        api->Unsubscribe(subscriber);
        return fail(rc != CUPTI_SUCCESS ? "cuptiActivityRegisterCallbacks" : "cuptiActivityEnable",
                    rc != CUPTI_SUCCESS ? rc : last, why, why_len);
    }
    api->ActivityFlushPeriod(500);
    atomic_store(&gpu_state, 1);
    return 0;
}

void prof_gpu_ensure_started(void)
{
    if (!atomic_load(&prof_g.running) || atomic_load(&gpu_state) != 0)
        return;
    char why[256];
    prof_set_gpu_status(prof_gpu_start(prof_g.record, why, sizeof(why)) == 0 ? "recorded" : why);
}

void prof_gpu_flush(void)
{
    if (atomic_load(&gpu_state) != 1)
        return;
    api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    size_t n = 0;
    if (api->ActivityGetNumDroppedRecords(NULL, 0, &n) == CUPTI_SUCCESS)
        atomic_fetch_add(&cupti_dropped, n); /* reading resets CUPTI's counter */
}

void prof_gpu_stop(void)
{
    if (atomic_load(&gpu_state) != 1)
        return;
    for (int i = 0; i < n_enabled; i++)
        api->ActivityDisable(enabled[i]);
    api->Unsubscribe(subscriber);
    atomic_store(&gpu_state, 0);
}

static done_buf *take_queue(void)
{
    pthread_mutex_lock(&qlock);
    done_buf *d = queue_head;
    queue_head = queue_tail = NULL;
    pthread_mutex_unlock(&qlock);
    return d;
}

void prof_gpu_drain(prof_out *o, int final)
{
    if (final && atomic_load(&gpu_state) == 1 && !forked)
        prof_gpu_flush(); /* also on the signal path, from the writer thread */
    for (done_buf *d = take_queue(), *next; d; d = next) {
        next = d->next;
        CUpti_Activity *rec = NULL;
        while (api && api->ActivityGetNextRecord(d->buf, d->valid, &rec) == CUPTI_SUCCESS)
            cupti_conv_record(&conv, o, rec);
        free(d->buf);
        free(d);
        atomic_fetch_sub(&outstanding, BUF_BYTES);
    }
    if (final && conv.no_timestamp)
        prof_warn("%llu GPU record(s) had no timestamps (CUPTI device buffers exhausted)",
                  (unsigned long long)conv.no_timestamp);
    if (final && prof_gpu_dropped())
        prof_warn("%llu GPU record(s) dropped by CUPTI (buffers full or refused)",
                  (unsigned long long)prof_gpu_dropped());
}

int prof_gpu_device_props(prof_out *o)
{
    return api ? cupti_conv_device_props(&conv, o) : 0;
}

void prof_gpu_metadata(prof_out *o)
{
    if (api)
        cupti_conv_metadata(&conv, o);
}

void prof_gpu_config(prof_out *o)
{
    if (api && atomic_load(&gpu_state) != -1)
        cupti_conv_config(&conv, o);
}

void prof_gpu_after_fork(void)
{
    forked = 1; /* CUDA cannot be used in a forked child; never touch CUPTI there */
    atomic_store(&gpu_state, -1);
}

uint64_t prof_gpu_dropped(void)
{
    return atomic_load(&cupti_dropped) + atomic_load(&refused_buffers);
}

/** CUDA's injection entry point (CUDA_INJECTION64_PATH): runs inside the first cuInit. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    if (!atomic_load(&prof_g.running))
        prof_inject_start("CUDA injection", 1);
    else
        prof_gpu_ensure_started();
    return 1;
}
