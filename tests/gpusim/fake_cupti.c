/* fake_cupti.c: a simulated libcupti.so.13 for tests (no GPU needed). Built from CUDA 13's own
 * cupti.h, so every entry point has the real prototype and every record the real layout. It keeps
 * CUPTI's contract as libprof relies on it: records in client-supplied buffers, asked for with
 * the buffer-request callback while an internal lock is held, handed back by the completion
 * callback from a worker thread on the flush period and from cuptiActivityFlushAll; dropped
 * records counted when the client refuses a buffer; device work delivered once it has ended.
 * Failure modes are switched on with FAKE_CUPTI (fake_cupti.h). Records are stored as
 * [uint64 size][record, padded to 8 bytes]; cuptiActivityGetNextRecord walks that layout. */
#include "fake_cupti.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT        __attribute__((visibility("default")))
#define ALIGN8(n)     (((n) + 7u) & ~(size_t)7u)
#define MAX_HELD      64
#define MAX_PENDING   (1u << 16)
#define MAX_EXT_DEPTH 64
#define MAX_SLOTS     160 /* buffers being filled: CUPTI's own (slot 0) and one per thread */

typedef struct pending {
    uint8_t rec[512];
    size_t size;
    uint64_t end;
    uint32_t context;
} pending;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    /* switches (FAKE_CUPTI) */
    int busy, old, stall, wsl, late, hoard, fail_kind, work_first, exit_race, per_thread, cc, multi;
    /* client */
    int subscribed;
    CUpti_CallbackFunc callback;
    void *userdata;
    uint8_t cb_enabled[4][1024];
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    CUpti_TimestampCallbackFunc timestamp;
    uint8_t enabled[CUPTI_ACTIVITY_KIND_COUNT];
    uint8_t enables[CUPTI_ACTIVITY_KIND_COUNT]; /* multi: clients that enabled the kind */
    /* multi: a second subscriber beside the first (another tool), with buffers of its own */
    struct {
        int subscribed, detached; /* detached: cuptiFinalize tore CUPTI down under it */
        CUpti_CallbackFunc callback;
        void *userdata;
        uint8_t cb_enabled[4][1024];
        CUpti_BuffersCallbackRequestFunc request;
        CUpti_BuffersCallbackCompleteFunc complete;
        uint64_t buffers, lost; /* buffers handed to it; copies lost (its buffer too small) */
    } co;
    uint32_t period_ms;
    /* the buffer being filled, and full ones kept back (hoard) */
    uint8_t *cur;
    size_t cur_size, cur_used, cur_records;
    /* with per_thread, the buffer being filled (cur) is one of these, swapped in by use_slot */
    struct {
        pid_t tid;
        uint8_t *buf;
        size_t size, used, records;
    } slot[MAX_SLOTS];
    int n_slots, active;
    uint8_t *held[MAX_HELD];
    size_t held_size[MAX_HELD], held_used[MAX_HELD];
    int n_held;
    pending *pend;
    size_t n_pend;
    /* worker */
    pthread_t worker;
    int worker_started, stopping; /* worker_started: it runs (cleared as it ends) */
    pthread_cond_t worker_gone;
    uint64_t late_at;
    /* counters */
    uint32_t next_corr;
    uint64_t made, delivered, dropped, dropped_unread, requests, refused, late_buffers;
    int finalized, timestamp_was_set, latency;
    uint64_t misaligned;
    int64_t ext_open; /* external correlation ids pushed and not popped, all threads */
    pid_t pid;        /* the process that loaded CUPTI: a forked child must never call it */
} F = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER,
       .worker_gone = PTHREAD_COND_INITIALIZER,
       .fail_kind = -1};

static _Thread_local struct {
    CUpti_ExternalCorrelationKind kind[MAX_EXT_DEPTH];
    uint64_t id[MAX_EXT_DEPTH];
    int depth;
} ext;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((constructor)) static void read_switches(void)
{
    const char *s = getenv("FAKE_CUPTI");
    F.busy = s && strstr(s, "busy") != NULL;
    F.old = s && strstr(s, "old") != NULL;
    F.stall = s && strstr(s, "stall") != NULL;
    F.wsl = s && strstr(s, "wsl") != NULL;
    F.late = s && strstr(s, "late") != NULL;
    F.work_first = s && strstr(s, "work_first") != NULL;
    F.exit_race = s && strstr(s, "exit_race") != NULL;
    F.per_thread = s && strstr(s, "per_thread") != NULL;
    F.multi = s && strstr(s, "multi") != NULL;
    const char *h = s ? strstr(s, "hoard=") : NULL;
    F.hoard = h ? atoi(h + 6) : 0;
    const char *cc = s ? strstr(s, "cc=") : NULL;
    F.cc = cc ? atoi(cc + 3) : 9;
    const char *k = s ? strstr(s, "fail_kind=") : NULL;
    F.fail_kind = k ? atoi(k + 10) : -1;
    /* static, not calloc'ed: a leak check after the library is unmapped would report it */
    static pending pend_store[MAX_PENDING];
    F.pend = pend_store;
    F.pid = getpid();
}

/* A forked child calling CUPTI: FAKE_CUPTI_STATS.child names the call (the child's state is a
 * copy of the parent's, its driver unusable). */
static void child_check(const char *fn)
{
    const char *path = getenv("FAKE_CUPTI_STATS");
    if (getpid() == F.pid || !path)
        return;
    char child[4096];
    snprintf(child, sizeof(child), "%s.child", path);
    FILE *f = fopen(child, "a");
    if (f) {
        fprintf(f, "%s\n", fn);
        fclose(f);
    }
}

static int buffers_held(void);

/* Still attached at exit: a subscriber, a kind enabled, or buffer callbacks registered. */
static int attached(void)
{
    int on = F.subscribed || F.request != NULL;
    for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
        on |= F.enabled[k];
    return on;
}

__attribute__((destructor)) static void write_stats(void)
{
    pthread_mutex_lock(&F.lock); /* the worker may still run: it stops delivering */
    F.stopping = 1;
    const char *path = getenv("FAKE_CUPTI_STATS");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) {
        pthread_mutex_unlock(&F.lock);
        return;
    }
    fprintf(f,
            "{\"made\":%llu,\"delivered\":%llu,\"dropped\":%llu,\"requests\":%llu,"
            "\"refused\":%llu,\"late_buffers\":%llu,\"timestamp_callback\":%d,"
            "\"finalized\":%d,\"attached\":%d,\"held\":%d,\"misaligned\":%llu,"
            "\"ext_open\":%lld,\"co_buffers\":%llu,\"co_lost\":%llu,\"co_detached\":%d}\n",
            (unsigned long long)F.made, (unsigned long long)F.delivered,
            (unsigned long long)F.dropped, (unsigned long long)F.requests,
            (unsigned long long)F.refused, (unsigned long long)F.late_buffers,
            F.timestamp != NULL || F.timestamp_was_set, F.finalized, attached(), buffers_held(),
            (unsigned long long)F.misaligned,
            (long long)__atomic_load_n(&F.ext_open, __ATOMIC_RELAXED),
            (unsigned long long)F.co.buffers, (unsigned long long)F.co.lost, F.co.detached);
    fclose(f);
    pthread_mutex_unlock(&F.lock);
}

EXPORT uint64_t fake_cupti_now(void)
{
    CUpti_TimestampCallbackFunc fn = __atomic_load_n(&F.timestamp, __ATOMIC_ACQUIRE);
    if (fn)
        return fn();
    return clock_ns(F.wsl ? CLOCK_MONOTONIC_RAW : CLOCK_REALTIME);
}

/* ---- buffers (under F.lock) ---- */

/* Make slot `i`'s buffer the current one (F.cur...). */
static void use_slot(int i)
{
    if (i == F.active)
        return;
    F.slot[F.active].buf = F.cur;
    F.slot[F.active].size = F.cur_size;
    F.slot[F.active].used = F.cur_used;
    F.slot[F.active].records = F.cur_records;
    F.cur = F.slot[i].buf;
    F.cur_size = F.slot[i].size;
    F.cur_used = F.slot[i].used;
    F.cur_records = F.slot[i].records;
    F.active = i;
}

/* The calling thread's slot (per_thread), else CUPTI's own. */
static int thread_slot(void)
{
    if (!F.per_thread)
        return 0;
    pid_t tid = gettid();
    for (int i = 1; i < F.n_slots; i++)
        if (F.slot[i].tid == tid)
            return i;
    if (F.n_slots == 0)
        F.n_slots = 1;
    if (F.n_slots == MAX_SLOTS)
        return 0;
    F.slot[F.n_slots].tid = tid;
    return F.n_slots++;
}

/* Buffers the client handed over and has not got back. */
static int buffers_held(void)
{
    int n = F.n_held + (F.cur != NULL);
    for (int i = 0; i < F.n_slots; i++)
        n += i != F.active && F.slot[i].buf != NULL;
    return n;
}

/* multi: the second subscriber's copy of a buffer's records, in a buffer it supplies. */
static void copy_to_co(const uint8_t *buf, size_t used)
{
    if (!F.co.request || !F.co.complete || used == 0)
        return;
    uint8_t *mine = NULL;
    size_t size = 0, max_records = 0;
    F.co.request(&mine, &size, &max_records);
    if (!mine || size < used) {
        F.co.lost++;
        return;
    }
    memcpy(mine, buf, used);
    F.co.buffers++;
    F.co.complete(NULL, 0, mine, size, used);
}

static void hand_back(uint8_t *buf, size_t size, size_t used)
{
    copy_to_co(buf, used);
    if (F.complete)
        F.complete(NULL, 0, buf, size, used);
}

static void retire_current(int keep)
{
    if (!F.cur)
        return;
    if (keep && F.n_held < MAX_HELD) {
        F.held[F.n_held] = F.cur;
        F.held_size[F.n_held] = F.cur_size;
        F.held_used[F.n_held++] = F.cur_used;
    } else {
        hand_back(F.cur, F.cur_size, F.cur_used);
    }
    F.cur = NULL;
    F.cur_used = F.cur_records = 0;
}

/* Room for `need` bytes, asking the client for a buffer (with the lock held) when needed. */
static int make_room(size_t need)
{
    if (F.cur && (F.cur_used + need > F.cur_size || (F.hoard && F.cur_records >= (size_t)F.hoard)))
        retire_current(F.hoard > 0);
    if (F.cur)
        return 0;
    if (!F.request)
        return -1;
    size_t max_records = 0;
    F.requests++;
    F.request(&F.cur, &F.cur_size, &max_records);
    if (F.cur && ((uintptr_t)F.cur & 7)) {
        F.misaligned++; /* CUPTI needs 8-byte aligned buffers: unusable */
        F.cur = NULL;
    }
    if (!F.cur || F.cur_size < need) {
        F.refused += F.cur == NULL;
        F.cur = NULL; /* a buffer too small is never used */
        return -1;
    }
    return 0;
}

static void put(const void *rec, size_t size)
{
    size_t need = 8 + ALIGN8(size);
    if (make_room(need) != 0) {
        F.dropped++;
        F.dropped_unread++;
        return;
    }
    uint64_t sz = size;
    memcpy(F.cur + F.cur_used, &sz, 8);
    memcpy(F.cur + F.cur_used + 8, rec, size);
    memset(F.cur + F.cur_used + 8 + size, 0, ALIGN8(size) - size);
    F.cur_used += need;
    F.cur_records++;
    F.delivered++;
}

static int kind_on(const void *rec)
{
    CUpti_ActivityKind k = ((const CUpti_Activity *)rec)->kind;
    return (unsigned)k < CUPTI_ACTIVITY_KIND_COUNT && F.enabled[k];
}

/* Device records that have ended go to the buffer; with `force`, the rest too, without
 * timestamps (CUPTI cannot stamp work still running). */
static void move_ended(int force)
{
    use_slot(0); /* device records: CUPTI's own buffer */
    uint64_t now = fake_cupti_now();
    size_t kept = 0;
    for (size_t i = 0; i < F.n_pend; i++) {
        pending *p = &F.pend[i];
        if (p->end > now && !force) {
            if (kept != i)
                F.pend[kept] = *p;
            kept++;
            continue;
        }
        if (p->end > now) {
            CUpti_ActivityKernel10 *k = (void *)p->rec;
            if (k->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE)
                ((CUpti_ActivityGraphTrace2 *)(void *)p->rec)->start =
                        ((CUpti_ActivityGraphTrace2 *)(void *)p->rec)->end = 0;
            else if (k->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                k->start = k->end = 0;
            else if (k->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
                ((CUpti_ActivityMemcpy6 *)(void *)p->rec)->start =
                        ((CUpti_ActivityMemcpy6 *)(void *)p->rec)->end = 0;
            else
                ((CUpti_ActivityMemset4 *)(void *)p->rec)->start =
                        ((CUpti_ActivityMemset4 *)(void *)p->rec)->end = 0;
        }
        put(p->rec, p->size);
    }
    F.n_pend = kept;
}

/* Every buffer being filled, CUPTI's own first: a thread's API records come back after the
 * kernels they launched (per_thread). */
static void flush_locked(int force)
{
    move_ended(force);
    for (int i = 0; i < F.n_held; i++)
        hand_back(F.held[i], F.held_size[i], F.held_used[i]);
    F.n_held = 0;
    for (int i = 0; i < (F.n_slots ? F.n_slots : 1); i++) {
        use_slot(i);
        if ((force && !F.exit_race) || (F.cur && F.cur_records))
            retire_current(0); /* exit_race: an empty buffer stays, even when forced */
    }
    use_slot(0);
    if (force && F.exit_race && !F.cur && F.request) {
        size_t max_records = 0; /* another thread's first record, as the flush ends */
        F.requests++;
        F.request(&F.cur, &F.cur_size, &max_records);
    }
}

/* ---- worker: delivers on the flush period, and the late buffer ---- */

static void deliver_late(void)
{
    use_slot(0);
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = fake_cupti_now() - 1000;
    k.end = k.start + 500;
    k.name = "late_kernel";
    k.streamId = 7;
    k.correlationId = fake_cupti_correlation();
    F.made++;
    put(&k, sizeof(k));
    F.late_buffers += F.cur != NULL;
    retire_current(0);
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&F.lock);
    while (!F.stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        uint32_t ms = F.late_at ? 10 : F.period_ms ? F.period_ms : 1000;
        until.tv_sec += ms / 1000;
        until.tv_nsec += (long)(ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&F.wake, &F.lock, &until);
        if (F.stopping) {
            break;
        } else if (F.late_at && fake_cupti_now() >= F.late_at) {
            F.late_at = 0;
            deliver_late();
        } else if (!F.stall && !F.stopping) {
            flush_locked(0);
        }
    }
    F.worker_started = 0;
    pthread_cond_broadcast(&F.worker_gone);
    pthread_mutex_unlock(&F.lock);
    return NULL;
}

static void start_worker(void)
{
    if (!F.worker_started && pthread_create(&F.worker, NULL, worker, NULL) == 0) {
        pthread_detach(F.worker); /* cuptiFinalize waits for it to end */
        F.worker_started = 1;
    }
}

/* ---- the side door (fake_cupti.h) ---- */

EXPORT void fake_cupti_enter(void)
{
    pthread_mutex_lock(&F.lock);
}

EXPORT void fake_cupti_leave(void)
{
    pthread_mutex_unlock(&F.lock);
}

EXPORT uint32_t fake_cupti_correlation(void)
{
    return __atomic_add_fetch(&F.next_corr, 1, __ATOMIC_RELAXED);
}

/* Under F.lock (fake_cupti_enter). */
EXPORT int fake_cupti_enabled(CUpti_ActivityKind kind)
{
    return (unsigned)kind < CUPTI_ACTIVITY_KIND_COUNT && F.enabled[kind];
}

EXPORT void fake_cupti_api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end,
                           uint32_t corr)
{
    if (!fake_cupti_enabled(kind))
        return;
    use_slot(thread_slot());
    /* one record per kind pushed: its innermost id */
    for (int i = ext.depth - 1; i >= 0 && F.enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION];
         i--) {
        int inner = 1;
        for (int j = i + 1; j < ext.depth; j++)
            inner &= ext.kind[j] != ext.kind[i];
        if (!inner)
            continue;
        CUpti_ActivityExternalCorrelation e;
        memset(&e, 0, sizeof(e));
        e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        e.externalKind = ext.kind[i];
        e.externalId = ext.id[i];
        e.correlationId = corr;
        F.made++;
        put(&e, sizeof(e));
    }
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof(a));
    a.kind = kind;
    a.cbid = cbid;
    a.start = start;
    a.end = end;
    a.processId = (uint32_t)getpid();
    a.threadId = (uint32_t)gettid();
    a.correlationId = corr;
    F.made++;
    put(&a, sizeof(a));
}

EXPORT void fake_cupti_host_record(const CUpti_Activity *rec, size_t size)
{
    if (!kind_on(rec))
        return;
    use_slot(thread_slot());
    F.made++;
    put(rec, size);
}

EXPORT void fake_cupti_sync_record(CUpti_ActivitySynchronizationType type, uint64_t start,
                                   uint32_t corr, uint32_t context, uint32_t stream)
{
    CUpti_ActivitySynchronization2 y;
    memset(&y, 0, sizeof(y));
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = type;
    y.start = start;
    y.end = fake_cupti_now();
    y.correlationId = corr;
    y.contextId = context;
    y.streamId = stream;
    fake_cupti_host_record((CUpti_Activity *)&y, sizeof(y));
}

EXPORT void fake_cupti_device_record(const CUpti_Activity *rec, size_t size, uint64_t end,
                                     uint32_t context)
{
    if (!kind_on(rec) || size > sizeof(F.pend[0].rec))
        return;
    F.made++;
    if (F.work_first) { /* before the call's own records, timestamps already known */
        use_slot(0);
        put(rec, size);
        return;
    }
    if (F.n_pend == MAX_PENDING) {
        F.dropped++;
        F.dropped_unread++;
        return;
    }
    pending *p = &F.pend[F.n_pend++];
    memcpy(p->rec, rec, size);
    p->size = size;
    p->end = end;
    p->context = context;
}

EXPORT void fake_cupti_graph_launch(const CUpti_ActivityKernel10 *nodes, int n,
                                    const CUpti_ActivityGraphTrace2 *graph, uint32_t context)
{
    if (F.enabled[CUPTI_ACTIVITY_KIND_GRAPH_TRACE]) { /* the nodes' kernel records are not made */
        fake_cupti_device_record((const CUpti_Activity *)graph, sizeof(*graph), graph->end,
                                 context);
        return;
    }
    for (int i = 0; i < n; i++)
        fake_cupti_device_record((const CUpti_Activity *)&nodes[i], sizeof(nodes[i]), nodes[i].end,
                                 context);
}

EXPORT void fake_cupti_synchronize(uint32_t context)
{
    for (;;) {
        pthread_mutex_lock(&F.lock);
        uint64_t last = 0;
        for (size_t i = 0; i < F.n_pend; i++)
            if (F.pend[i].context == context && F.pend[i].end > last)
                last = F.pend[i].end;
        pthread_mutex_unlock(&F.lock);
        uint64_t now = fake_cupti_now();
        if (last <= now)
            return;
        struct timespec d = {0, (long)(last - now < 1000000u ? last - now : 1000000u)};
        nanosleep(&d, NULL);
    }
}

/* Subscriber `who`'s callback (0 the first, 1 the second: multi) if it enabled (domain, cbid),
 * else NULL; its user data. */
static CUpti_CallbackFunc enabled_callback(int who, CUpti_CallbackDomain domain,
                                           CUpti_CallbackId cbid, void **userdata)
{
    if ((unsigned)domain >= 4 || cbid >= 1024)
        return NULL;
    pthread_mutex_lock(&F.lock);
    CUpti_CallbackFunc fn =
            who == 0 ? (F.subscribed && F.cb_enabled[domain][cbid] ? F.callback : NULL)
                     : (F.co.subscribed && F.co.cb_enabled[domain][cbid] ? F.co.callback : NULL);
    *userdata = who == 0 ? F.userdata : F.co.userdata;
    pthread_mutex_unlock(&F.lock);
    return fn;
}

EXPORT void fake_cupti_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                CUpti_ApiCallbackSite site)
{
    CUpti_CallbackData d;
    memset(&d, 0, sizeof(d));
    d.callbackSite = site;
    d.correlationId = fake_cupti_correlation();
    for (int who = 0; who < 2; who++) { /* each subscriber that enabled it */
        void *userdata;
        CUpti_CallbackFunc fn = enabled_callback(who, domain, cbid, &userdata);
        if (fn)
            fn(userdata, domain, cbid, &d);
    }
}

EXPORT void fake_cupti_resource(CUpti_CallbackId cbid, CUcontext ctx)
{
    CUpti_ResourceData d;
    memset(&d, 0, sizeof(d));
    d.context = ctx;
    for (int who = 0; who < 2; who++) {
        void *userdata;
        CUpti_CallbackFunc fn = enabled_callback(who, CUPTI_CB_DOMAIN_RESOURCE, cbid, &userdata);
        if (fn)
            fn(userdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, &d);
    }
}

EXPORT void fake_cupti_device_reset(void)
{
    pthread_mutex_lock(&F.lock);
    F.dropped += F.n_pend;
    F.n_pend = 0;
    use_slot(0);
    if (F.cur) { /* records not yet handed to the client are lost with the device state */
        F.delivered -= F.cur_records;
        F.dropped += F.cur_records;
        F.cur_used = F.cur_records = 0;
    }
    pthread_mutex_unlock(&F.lock);
}

/* ---- CUPTI's API ---- */

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    child_check(__func__);
    *version = F.old ? 120000 : F.multi ? 130300 : CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    switch (result) {
    case CUPTI_SUCCESS:
        *str = "CUPTI_SUCCESS";
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    case CUPTI_ERROR_NOT_COMPATIBLE:
        *str = "CUPTI_ERROR_NOT_COMPATIBLE";
        break;
    case CUPTI_ERROR_INVALID_PARAMETER:
        *str = "CUPTI_ERROR_INVALID_PARAMETER";
        break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
        *str = "CUPTI_ERROR_MAX_LIMIT_REACHED";
        break;
    default:
        *str = "CUPTI_ERROR_UNKNOWN";
        break;
    }
    return CUPTI_SUCCESS;
}

/* CUDA's own exit handler, registered when CUPTI starts (after the client's: so it runs first at
 * exit), tears the contexts down; a later cuptiActivityDisable crashed with SIGSEGV on an H200
 * (CUPTI 13.0, driver 580, 2026-11-26: cuda_app under injection exited 139 after its trace was
 * written). Whether the runtime's or CUPTI's handler does it was not established; the fake
 * does what was seen: the calls that detach crash from then on, flushing still works. */
static atomic_int cuda_exited;

static void on_cuda_exit(void)
{
    atomic_store(&cuda_exited, 1);
}

static void register_exit_handler(void)
{
    atexit(on_cuda_exit);
}

static void crash_if_cuda_exited(const char *call)
{
    if (!atomic_load(&cuda_exited))
        return;
    fprintf(stderr,
            "fake CUPTI: %s after CUDA's exit handler tore the contexts down "
            "(the real CUPTI 13.0 crashed here)\n",
            call);
    raise(SIGSEGV);
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    static pthread_once_t exit_handler = PTHREAD_ONCE_INIT;
    child_check(__func__);
    pthread_once(&exit_handler, register_exit_handler);
    pthread_mutex_lock(&F.lock);
    CUptiResult rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (!F.busy && !F.subscribed) {
        F.subscribed = 1;
        F.callback = callback;
        F.userdata = userdata;
        *subscriber = (CUpti_SubscriberHandle)&F;
        rc = CUPTI_SUCCESS;
    } else if (!F.busy && F.multi && !F.co.subscribed) { /* CUPTI 13.3+: one beside the first */
        F.co.subscribed = 1;
        F.co.detached = 0;
        F.co.callback = callback;
        F.co.userdata = userdata;
        *subscriber = (CUpti_SubscriberHandle)&F.co;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&F.lock);
    return rc;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    child_check(__func__);
    crash_if_cuda_exited(__func__);
    if (subscriber == (CUpti_SubscriberHandle)&F.co && F.co.subscribed) {
        pthread_mutex_lock(&F.lock);
        F.co.subscribed = 0;
        memset(F.co.cb_enabled, 0, sizeof(F.co.cb_enabled));
        pthread_mutex_unlock(&F.lock);
        return CUPTI_SUCCESS;
    }
    if (subscriber != (CUpti_SubscriberHandle)&F || !F.subscribed)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&F.lock);
    F.subscribed = 0;
    memset(F.cb_enabled, 0, sizeof(F.cb_enabled));
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    child_check(__func__);
    int co = subscriber == (CUpti_SubscriberHandle)&F.co && F.co.subscribed;
    if ((subscriber != (CUpti_SubscriberHandle)&F && !co) || (unsigned)domain >= 4 || cbid >= 1024)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&F.lock);
    (co ? F.co.cb_enabled : F.cb_enabled)[domain][cbid] = enable != 0;
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    child_check(__func__);
    return type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? CUPTI_SUCCESS
                                                        : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete)
{
    child_check(__func__);
    if (!request || !complete)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&F.lock);
    if (F.multi && F.request && F.request != request) { /* a second client, buffers its own */
        F.co.request = request;
        F.co.complete = complete;
    } else { /* one client: a second one (torch.profiler) silently takes over */
        F.request = request;
        F.complete = complete;
    }
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    child_check(__func__);
    if (!fn)
        return CUPTI_ERROR_INVALID_PARAMETER;
    __atomic_store_n(&F.timestamp, fn, __ATOMIC_RELEASE);
    return CUPTI_SUCCESS;
}

static void dump_device(uint32_t id)
{
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof(d));
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = id;
    use_slot(0);
    d.name = "Simulated GPU (gprof-train tests)";
    d.globalMemorySize = 80ull << 30;
    d.computeCapabilityMajor = (uint32_t)F.cc;
    d.computeCapabilityMinor = 0;
    d.numMultiprocessors = 132;
    d.maxThreadsPerBlock = 1024;
    d.maxWarpsPerMultiprocessor = 64;
    d.numThreadsPerWarp = 32;
    d.maxRegistersPerBlock = 65536;
    d.maxRegistersPerMultiprocessor = 65536;
    d.maxSharedMemoryPerBlock = 49152;
    d.maxSharedMemoryPerMultiprocessor = 233472;
    F.made++;
    put(&d, sizeof(d));
}

static CUptiResult enable(CUpti_ActivityKind kind, int dump)
{
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if ((int)kind == F.fail_kind)
        return CUPTI_ERROR_NOT_COMPATIBLE;
    pthread_mutex_lock(&F.lock);
    F.enabled[kind] = 1;
    F.enables[kind] += F.enables[kind] < 255;
    for (uint32_t id = 0; dump && kind == CUPTI_ACTIVITY_KIND_DEVICE && id < 2; id++)
        dump_device(id); /* fake_cuda.c's two devices */
    start_worker();
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    child_check(__func__);
    return enable(kind, 0);
}

EXPORT CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
    child_check(__func__);
    return enable(kind, 1);
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    child_check(__func__);
    crash_if_cuda_exited(__func__);
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&F.lock);
    /* multi: the kind stays on while another client has it enabled */
    F.enables[kind] -= F.enables[kind] > 0;
    F.enabled[kind] = F.multi && F.enables[kind] > 0;
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                              CUpti_Activity **record)
{
    size_t off = 0;
    if (*record) {
        uint8_t *r = (uint8_t *)*record;
        uint64_t size;
        memcpy(&size, r - 8, 8);
        off = (size_t)(r - buffer) + ALIGN8(size);
    }
    if (off + 8 > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(void *)(buffer + off + 8);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    child_check(__func__);
    pthread_mutex_lock(&F.lock);
    if (!F.request) { /* before cuptiActivityRegisterCallbacks */
        pthread_mutex_unlock(&F.lock);
        return CUPTI_ERROR_INVALID_OPERATION;
    }
    flush_locked((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
    if (F.late && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) {
        F.late_at = fake_cupti_now() + 50000000u;
        pthread_cond_signal(&F.wake);
    }
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    child_check(__func__);
    pthread_mutex_lock(&F.lock);
    F.period_ms = ms;
    pthread_cond_signal(&F.wake);
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
    child_check(__func__);
    (void)stream;
    if (ctx)
        return CUPTI_ERROR_INVALID_PARAMETER; /* one global queue, as in CUPTI 13 */
    pthread_mutex_lock(&F.lock);
    *n = F.dropped_unread; /* reading resets it, as the real one does */
    F.dropped_unread = 0;
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
    child_check(__func__);
    if (ext.depth == MAX_EXT_DEPTH)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    ext.kind[ext.depth] = kind;
    ext.id[ext.depth++] = id;
    __atomic_add_fetch(&F.ext_open, 1, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *last)
{
    child_check(__func__);
    if (ext.depth == 0 || ext.kind[ext.depth - 1] != kind)
        return CUPTI_ERROR_INVALID_PARAMETER;
    ext.depth--;
    __atomic_sub_fetch(&F.ext_open, 1, __ATOMIC_RELAXED);
    if (last)
        *last = ext.id[ext.depth];
    return CUPTI_SUCCESS;
}

/* Kernel records have `queued` and `submitted` only when this is on (CUPTI 13: off). */
EXPORT CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
    child_check(__func__);
    __atomic_store_n(&F.latency, enable != 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

EXPORT int fake_cupti_latency(void)
{
    return __atomic_load_n(&F.latency, __ATOMIC_RELAXED);
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    child_check(__func__);
    *timestamp = fake_cupti_now();
    return CUPTI_SUCCESS;
}

/* Detach: every buffer goes back (a late one too), the worker ends, the client's callbacks
 * and kinds are forgotten; any later call starts CUPTI again. */
EXPORT CUptiResult cuptiFinalize(void)
{
    child_check(__func__);
    crash_if_cuda_exited(__func__);
    pthread_mutex_lock(&F.lock);
    if (F.subscribed) {
        pthread_mutex_unlock(&F.lock);
        return CUPTI_ERROR_INVALID_OPERATION; /* unsubscribe first */
    }
    if (F.late_at) {
        F.late_at = 0;
        deliver_late();
    }
    flush_locked(1);
    for (int i = 0; i < (F.n_slots ? F.n_slots : 1); i++) {
        use_slot(i);
        retire_current(0);
    }
    use_slot(0);
    F.stopping = 1;
    pthread_cond_signal(&F.wake);
    while (F.worker_started)
        pthread_cond_wait(&F.worker_gone, &F.lock);
    F.stopping = 0;
    F.request = NULL;
    F.complete = NULL;
    /* CUPTI leaves the process: every subscriber beside the first loses it too */
    F.co.detached |= F.co.subscribed || F.co.complete != NULL;
    F.co.subscribed = 0;
    F.co.request = NULL;
    F.co.complete = NULL;
    memset(F.enables, 0, sizeof(F.enables));
    F.timestamp_was_set |= F.timestamp != NULL;
    __atomic_store_n(&F.timestamp, NULL, __ATOMIC_RELEASE);
    memset(F.enabled, 0, sizeof(F.enabled));
    F.finalized++;
    pthread_mutex_unlock(&F.lock);
    return CUPTI_SUCCESS;
}

/* Names as CUPTI gives them (with the version suffix libprof strips). */
EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                        const char **name)
{
    static const struct {
        CUpti_CallbackDomain domain;
        uint32_t cbid;
        const char *name;
    } names[] = {
#define RT(n) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##n, #n}
#define DR(n)                                                                                      \
    {                                                                                              \
        CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##n, #n                                \
    }
            RT(cudaLaunchKernel_v7000),
            RT(cudaMemcpyAsync_v3020),
            RT(cudaMemsetAsync_v3020),
            RT(cudaMemcpy_v3020),
            RT(cudaMemset_v3020),
            RT(cudaMalloc_v3020),
            RT(cudaFree_v3020),
            RT(cudaMallocHost_v3020),
            RT(cudaFreeHost_v3020),
            RT(cudaDeviceSynchronize_v3020),
            RT(cudaStreamSynchronize_v3020),
            RT(cudaDeviceReset_v3020),
            RT(cudaGraphLaunch_v10000),
            DR(cuLaunchKernel),
            DR(cuMemAlloc_v2),
            DR(cuMemFree_v2),
            DR(cuMemHostAlloc),
            DR(cuMemFreeHost),
            DR(cuMemcpyHtoDAsync_v2),
            DR(cuMemcpyDtoHAsync_v2),
            DR(cuMemsetD8Async),
            DR(cuMemcpyHtoD_v2),
            DR(cuMemcpyDtoH_v2),
            DR(cuMemsetD8_v2),
            DR(cuCtxSynchronize),
            DR(cuStreamSynchronize),
            DR(cuGraphLaunch),
#undef RT
#undef DR
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i].domain == domain && names[i].cbid == cbid) {
            *name = names[i].name;
            return CUPTI_SUCCESS;
        }
    }
    return CUPTI_ERROR_INVALID_PARAMETER;
}
