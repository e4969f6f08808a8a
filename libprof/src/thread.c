/* thread.c: per-thread state and the hot path. Each thread owns a chain of blocks of fixed-size
 * records (single producer, single consumer: the writer thread) and a stack of open ranges; push,
 * pop, mark and counter append records with no lock or formatting, and no malloc but once per
 * block. Blocks start at 8 KiB and double while the writer falls behind, within one limit for
 * the whole process; drained blocks go back to their thread, and a thread whose chain grew gets
 * its next block allocated and pre-faulted by the writer (the growth phase off the hot path).
 * Threads register once (malloc) into a lock-free list whose nodes are recycled after the thread
 * exits. */
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "prof_int.h"

/* The state is a member of the session object (session.c): prof_state_threads(). */
/* initial-exec: one pointer of static TLS, so no __tls_get_addr call on the hot path. */
static __thread prof_thread *self __attribute__((tls_model("initial-exec")));

static void on_thread_exit(void *p)
{
    prof_thread *t = p;
    atomic_store_explicit(&t->state, PROF_THREAD_DEAD, memory_order_release);
}

static void make_key(void)
{
    pthread_key_create(&prof_state_threads()->exit_key, on_thread_exit);
}

prof_thread *prof_threads_head(void)
{
    return atomic_load_explicit(&prof_state_threads()->threads, memory_order_acquire);
}

/* Reuse a node whose thread exited and whose ring was reaped, else allocate one. */
static prof_thread *claim_node(void)
{
    for (prof_thread *t = prof_threads_head(); t; t = t->next) {
        int want = PROF_THREAD_FREE;
        if (atomic_compare_exchange_strong(&t->state, &want, PROF_THREAD_ALIVE))
            return t;
    }
    prof_thread *t = aligned_alloc(64, (sizeof(prof_thread) + 63) / 64 * 64);
    if (!t)
        return NULL;
    memset(t, 0, sizeof(*t));
    atomic_store(&t->state, PROF_THREAD_ALIVE);
    prof_thread *head = prof_threads_head();
    do
        t->next = head;
    while (!atomic_compare_exchange_weak(&prof_state_threads()->threads, &head, t));
    return t;
}

/* ---- blocks ---- */

static int64_t block_bytes(uint32_t cap)
{
    return (int64_t)(sizeof(prof_block) + (size_t)cap * sizeof(prof_rec));
}

/* A block of `cap` records within the process-wide limit. @return NULL past it or out of
 * memory. Not the hot path: once per block. */
static prof_block *block_new(uint32_t cap)
{
    int64_t bytes = block_bytes(cap);
    int64_t now = atomic_fetch_add(&prof_state_threads()->buf_bytes, bytes) + bytes;
    prof_block *b = now <= prof_state_session()->buf_limit ? malloc((size_t)bytes) : NULL;
    if (!b) {
        atomic_fetch_sub(&prof_state_threads()->buf_bytes, bytes);
        return NULL;
    }
    int64_t peak = atomic_load(&prof_state_threads()->buf_peak);
    while (now > peak && !atomic_compare_exchange_weak(&prof_state_threads()->buf_peak, &peak, now))
        ;
    atomic_init(&b->next, NULL);
    atomic_init(&b->committed, 0);
    b->cap = cap;
    b->recs = (prof_rec *)(b + 1);
    return b;
}

static void block_free(prof_block *b)
{
    if (!b || b->cap == 0)
        return; /* the empty first link lives in the thread's state */
    atomic_fetch_sub(&prof_state_threads()->buf_bytes, block_bytes(b->cap));
    free(b);
}

int64_t prof_buf_bytes(void)
{
    return atomic_load(&prof_state_threads()->buf_bytes);
}

int64_t prof_buf_peak(void)
{
    return atomic_load(&prof_state_threads()->buf_peak);
}

void prof_buf_reset_peak(void)
{
    atomic_store(&prof_state_threads()->buf_peak, atomic_load(&prof_state_threads()->buf_bytes));
}

/* Free every block of `t`'s chain and its spare (no other thread may use them). */
static void chain_free(prof_thread *t)
{
    for (prof_block *b = t->rblk; b;) {
        prof_block *next = atomic_load_explicit(&b->next, memory_order_relaxed);
        block_free(b);
        b = next;
    }
    block_free(atomic_exchange(&t->spare, NULL));
}

/* Start an empty chain for the current session (the owning thread does this itself, so the
 * writer never sees a chain being reset; the previous session's writer has finished). */
static void attach(prof_thread *t, uint32_t gen)
{
    if (t->rblk)
        chain_free(t);
    atomic_init(&t->first.next, NULL);
    atomic_init(&t->first.committed, 0);
    t->first.cap = 0;
    t->first.recs = NULL;
    t->wblk = t->rblk = &t->first;
    t->wrecs = NULL;
    t->wpos = t->wcap = t->rpos = 0;
    atomic_store_explicit(&t->grow_cap, PROF_BLOCK_MIN, memory_order_relaxed);
    atomic_store_explicit(&t->dropped, 0, memory_order_relaxed);
    atomic_store_explicit(&t->gen, gen, memory_order_release);
}

prof_thread *prof_thread_self(void)
{
    prof_thread *t = self;
    uint32_t gen = atomic_load_explicit(&prof_state_session()->gen, memory_order_acquire);
    if (t && atomic_load_explicit(&t->gen, memory_order_relaxed) == gen)
        return t;
    if (!t) {
        pthread_once(&prof_state_threads()->key_once, make_key);
        t = claim_node();
        if (!t)
            return NULL;
        t->tid = (int)syscall(SYS_gettid);
        t->depth = 0;
        t->last_tick = 0;
        memset(t->cache_ptr, 0, sizeof(t->cache_ptr));
        self = t;
        pthread_setspecific(prof_state_threads()->exit_key, t);
    }
    attach(t, gen);
    return t;
}

/* Taking a spare of at least this many records wakes the writer to prefill the next one. */
#define PREFILL_WAKE_CAP 16384u

/* The block is full: link the spare, or a new block (doubling while the writer is behind),
 * or wait for the writer (lossless mode). @return 1 if there is room now, 0 to drop. */
static int next_block(prof_thread *t)
{
    prof_block *b;
    uint32_t grow = atomic_load_explicit(&t->grow_cap, memory_order_relaxed);
    for (;;) {
        if ((b = atomic_exchange_explicit(&t->spare, NULL, memory_order_acquire)) != NULL) {
            if (b->cap >= PREFILL_WAKE_CAP)
                prof_writer_wake(); /* a large block: have the next one ready before it fills */
            break;
        }
        if ((b = block_new(grow)) != NULL || (b = block_new(PROF_BLOCK_MIN)) != NULL) {
            atomic_store_explicit(&t->grow_cap, grow < PROF_BLOCK_MAX ? grow * 2 : PROF_BLOCK_MAX,
                                  memory_order_relaxed);
            break;
        }
        if (!prof_state_session()->wait_when_full || !atomic_load(&prof_state_session()->running)) {
            atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
            return 0;
        }
        prof_writer_wake(); /* lossless mode: let the writer drain and hand a block back */
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
    atomic_store_explicit(&b->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&b->committed, 0, memory_order_relaxed);
    atomic_store_explicit(&t->wblk->next, b, memory_order_release);
    t->wblk = b;
    t->wrecs = b->recs;
    t->wpos = 0;
    t->wcap = b->cap;
    return 1;
}

void prof_buf_prefill(prof_thread *t)
{
    if (atomic_load_explicit(&t->spare, memory_order_relaxed))
        return;
    uint32_t cap = atomic_load_explicit(&t->grow_cap, memory_order_relaxed);
    if (cap <= 2 * PROF_BLOCK_MIN)
        return; /* one block so far (its first doubled grow_cap): a thread with few records */
    prof_block *b = block_new(cap);
    if (!b)
        return;
    memset(b->recs, 0, (size_t)cap * sizeof(prof_rec)); /* fault its pages in here */
    prof_block *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&t->spare, &none, b, memory_order_release,
                                                 memory_order_relaxed))
        block_free(b);
}

/* Append in line on the hot path (pop): one compare, one copy, one release store. */
static inline void emit(prof_thread *t, const prof_rec *r)
{
    if (__builtin_expect(t->wpos == t->wcap, 0) && !next_block(t))
        return;
    t->wrecs[t->wpos++] = *r;
    atomic_store_explicit(&t->wblk->committed, t->wpos, memory_order_release);
}

void prof_emit(prof_thread *t, const prof_rec *r)
{
    emit(t, r);
}

/* Writer side: a drained block goes back to its thread as the spare, else is freed. */
static void recycle(prof_thread *t, prof_block *b)
{
    prof_block *none = NULL;
    if (b->cap == 0 || atomic_compare_exchange_strong_explicit(
                               &t->spare, &none, b, memory_order_release, memory_order_relaxed))
        return;
    block_free(b);
}

size_t prof_buf_peek(prof_thread *t, const prof_rec **span)
{
    for (;;) {
        prof_block *b = t->rblk;
        uint32_t n = atomic_load_explicit(&b->committed, memory_order_acquire);
        if (t->rpos < n) {
            *span = &b->recs[t->rpos];
            return n - t->rpos;
        }
        if (t->rpos < b->cap)
            return 0; /* the thread is still filling this block */
        prof_block *next = atomic_load_explicit(&b->next, memory_order_acquire);
        if (!next)
            return 0;
        t->rblk = next; /* the thread never touches a block again once it linked the next */
        t->rpos = 0;
        recycle(t, b);
    }
}

void prof_buf_release(prof_thread *t, size_t n)
{
    t->rpos += (uint32_t)n;
}

static int drained(prof_thread *t)
{
    const prof_rec *span;
    return prof_buf_peek(t, &span) == 0 && t->rblk == t->wblk;
}

void prof_threads_reap(uint32_t gen)
{
    for (prof_thread *t = prof_threads_head(); t; t = t->next) {
        if (atomic_load_explicit(&t->state, memory_order_acquire) != PROF_THREAD_DEAD)
            continue;
        if (atomic_load(&t->gen) == gen && !drained(t))
            continue; /* still has records for this session */
        if (t->rblk)
            chain_free(t);
        t->rblk = t->wblk = NULL;
        atomic_store(&t->gen, 0);
        atomic_store_explicit(&t->state, PROF_THREAD_FREE, memory_order_release);
    }
}

void prof_threads_after_fork(void)
{
    /* The child has only the forking thread; other nodes stay owned by nobody. */
    prof_thread *me = self;
    for (prof_thread *t = prof_threads_head(); t; t = t->next)
        if (t != me)
            atomic_store(&t->state, PROF_THREAD_DEAD);
    if (me)
        me->tid = (int)syscall(SYS_gettid);
}

/* ---- public hot path ---- */

/* The calling thread, attached to the current session. */
static inline prof_thread *fast_self(void)
{
    prof_thread *t = self;
    if (__builtin_expect(t != NULL, 1) &&
        atomic_load_explicit(&t->gen, memory_order_relaxed) ==
                atomic_load_explicit(&prof_state_session()->gen, memory_order_relaxed))
        return t;
    return prof_thread_self();
}

#define EXT_BLOCK 4096 /* ids a thread takes from the process counter at a time */

/* Only while CUPTI records: the range gets an id unique in the process (below 2^53, so
 * JavaScript viewers keep it exact), pushed on CUPTI's external correlation stack. */
static void push_external_id(prof_thread *t, prof_frame *f)
{
    if (t->ext_next == t->ext_end) {
        t->ext_next = atomic_fetch_add(&prof_state_session()->ext_counter, EXT_BLOCK) + 1;
        t->ext_end = t->ext_next + EXT_BLOCK;
    }
    f->ext = t->ext_next++;
    prof_gpu_ext_push(f->ext);
}

static void push_on(prof_thread *t, uint32_t name, unsigned flag)
{
    int64_t now = prof_thread_ticks(t);
    if (t->depth >= PROF_MAX_DEPTH) {
        prof_rec r = {now, now, 0, name, PROF_REC_DEEP, (uint16_t)t->depth};
        prof_emit(t, &r);
        t->depth++;
        return;
    }
    prof_frame *f = &t->stack[t->depth++];
    f->t0 = now;
    f->name = name;
    f->recorded = (uint32_t)prof_recording(flag);
    f->ext = 0;
    if (__builtin_expect(atomic_load_explicit(&prof_state_session()->gpu_ext, memory_order_relaxed),
                         0) &&
        f->recorded)
        push_external_id(t, f);
}

void gp_prof_push(gp_prof_name name)
{
    if (!atomic_load_explicit(&prof_state_session()->running, memory_order_relaxed))
        return;
    prof_thread *t = fast_self();
    if (t)
        push_on(t, name, GP_PROF_RECORD_CPU);
}

void prof_nvtx_push(prof_thread *t, uint32_t name)
{
    push_on(t, name, GP_PROF_RECORD_NVTX);
}

/* Shared by gp_prof_pop and NVTX's pop. */
static void pop_on(prof_thread *t)
{
    int64_t now = prof_thread_ticks(t);
    if (t->depth == 0) {
        prof_rec r = {now, now, 0, 0, PROF_REC_BAD_POP, 0};
        emit(t, &r);
        return;
    }
    int d = --t->depth;
    if (d >= PROF_MAX_DEPTH)
        return;
    prof_frame *f = &t->stack[d];
    if (f->ext)
        prof_gpu_ext_pop();
    if (f->recorded) {
        prof_rec r = {f->t0, now, f->ext, f->name, PROF_REC_RANGE, (uint16_t)d};
        emit(t, &r);
    }
}

void gp_prof_pop(void)
{
    if (!atomic_load_explicit(&prof_state_session()->running, memory_order_relaxed))
        return;
    prof_thread *t = fast_self();
    if (t)
        pop_on(t);
}

void gp_prof_mark(gp_prof_name name)
{
    if (!prof_recording(GP_PROF_RECORD_CPU))
        return;
    prof_thread *t = prof_thread_self();
    if (!t)
        return;
    int64_t now = prof_thread_ticks(t);
    prof_rec r = {now, now, 0, name, PROF_REC_MARK, (uint16_t)t->depth};
    prof_emit(t, &r);
}

void gp_prof_counter(gp_prof_name name, double value)
{
    if (!prof_recording(GP_PROF_RECORD_CPU))
        return;
    prof_thread *t = prof_thread_self();
    if (!t)
        return;
    int64_t now = prof_thread_ticks(t);
    prof_rec r = {now, now, 0, name, PROF_REC_COUNTER, 0};
    memcpy(&r.aux, &value, sizeof(value));
    prof_emit(t, &r);
}

void gp_prof_thread_name(const char *name)
{
    if (!name)
        return;
    size_t n = strnlen(name, 63);
    prof_thread_name_set((int)syscall(SYS_gettid), prof_intern_n(name, n, 0));
}

/* ---- NVTX support ---- */

uint32_t prof_intern_cached_dyn(prof_thread *t, const char *s)
{
    if (!s)
        return 0;
    size_t slot = ((uintptr_t)s >> 3) & (PROF_NAME_CACHE - 1);
    /* The pointer may be a reused buffer: check the contents too (names are short). */
    if (t->cache_ptr[slot] == s) {
        const char *known = prof_name_str(t->cache_id[slot]);
        if (known && strcmp(known, s) == 0)
            return t->cache_id[slot];
    }
    uint32_t id = gp_prof_intern(s);
    t->cache_ptr[slot] = s;
    t->cache_id[slot] = id;
    return id;
}

int prof_nvtx_pop(void)
{
    if (!atomic_load_explicit(&prof_state_session()->running, memory_order_relaxed))
        return -1;
    prof_thread *t = prof_thread_self();
    if (!t)
        return -1;
    int depth = t->depth;
    pop_on(t);
    return depth > 0 ? depth - 1 : -1;
}

/* NVTX start/end ranges may end on another thread: open ones live in a fixed table. */
#define ASYNC_SLOTS PROF_ASYNC_SLOTS
typedef prof_async_slot async_slot;

uint64_t prof_async_start(uint32_t name)
{
    if (!prof_recording(GP_PROF_RECORD_NVTX))
        return 0;
    prof_thread *t = prof_thread_self();
    if (!t)
        return 0;
    uint64_t id = atomic_fetch_add(&prof_state_threads()->async_next, 1);
    for (int probe = 0; probe < 8; probe++) {
        async_slot *s = &prof_state_threads()->async_tab[(id + (uint64_t)probe) % ASYNC_SLOTS];
        uint64_t want = 0;
        if (atomic_compare_exchange_strong(&s->id, &want, UINT64_MAX)) {
            s->t0 = prof_ticks();
            s->name = name;
            s->tid = t->tid;
            atomic_store_explicit(&s->id, id, memory_order_release);
            return id;
        }
    }
    atomic_fetch_add(&t->dropped, 1);
    return 0;
}

void prof_async_end(uint64_t id)
{
    if (id == 0 || id == UINT64_MAX)
        return;
    int64_t now = prof_ticks();
    for (int probe = 0; probe < 8; probe++) {
        async_slot *s = &prof_state_threads()->async_tab[(id + (uint64_t)probe) % ASYNC_SLOTS];
        if (atomic_load_explicit(&s->id, memory_order_acquire) != id)
            continue;
        prof_rec r = {s->t0, now, (uint64_t)s->tid, s->name, PROF_REC_ASYNC, 0};
        atomic_store_explicit(&s->id, 0, memory_order_release);
        prof_thread *t = atomic_load(&prof_state_session()->running) ? prof_thread_self() : NULL;
        if (t)
            prof_emit(t, &r);
        return;
    }
}

/* ---- the cost of a record ---- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t prof_range_cost_ns(void)
{
    enum { ROUNDS = 5, RANGES = PROF_BLOCK_MIN };
    prof_thread *t = calloc(1, sizeof(*t));
    prof_rec *recs = malloc(RANGES * sizeof(*recs));
    int64_t round_ns[ROUNDS];
    if (!t || !recs) {
        free(t), free(recs);
        return 0;
    }
    prof_block b = {.cap = RANGES, .recs = recs};
    t->wblk = &b, t->wrecs = recs, t->wcap = RANGES;
    for (int r = 0; r < ROUNDS; r++) {
        t->wpos = 0;
        int64_t t0 = mono_ns();
        for (int i = 0; i < RANGES; i++) {
            push_on(t, 1, GP_PROF_RECORD_CPU);
            t->stack[t->depth - 1].recorded = 1; /* time the recorded path, window or not */
            pop_on(t);
        }
        round_ns[r] = mono_ns() - t0;
    }
    free(t), free(recs);
    qsort(round_ns, ROUNDS, sizeof(round_ns[0]), cmp_i64);
    return (round_ns[ROUNDS / 2] + RANGES / 2) / RANGES;
}
