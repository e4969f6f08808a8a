/* prof_int.h: libprof's private cross-file declarations: the session (process-global state,
 * session.c), the name table (names.c), per-thread record rings (thread.c), the run
 * configuration store (config.c), the JSON/gzip output (json_out.c) and the writer (writer.c). */
#ifndef GP_LIBPROF_PROF_INT_H
#define GP_LIBPROF_PROF_INT_H

#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gp/prof.h"

/* ---- clock ---- */

/** Trace clock: CLOCK_REALTIME ns (CUPTI's default clock, so CPU and GPU events align). */
static inline int64_t prof_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/** Hot-path timestamps ("ticks"): the TSC on x86-64 with an invariant TSC (rdtsc costs less
 * than half of clock_gettime here: bench_prof.sh), else CLOCK_REALTIME ns. The writer turns ticks
 * into REALTIME ns with one continuous, non-decreasing function per session (clock.c). */
#if defined(__x86_64__)
#    include <x86intrin.h>
#endif
/* The session object's accessors: `const`, always the same address (see "process-global
 * state" at the end). */
#if defined(__GNUC__)
#    define PROF_STATE_ACCESSOR __attribute__((const))
#else
#    define PROF_STATE_ACCESSOR
#endif
struct prof_session;
PROF_STATE_ACCESSOR struct prof_session *prof_state_session(void);
static inline int prof_ticks_are_tsc(void);
static inline int64_t prof_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(prof_ticks_are_tsc(), 1))
        return (int64_t)__rdtsc();
#endif
    return prof_now();
}

/** Decide the tick source once (GP_PROF_CLOCK=realtime forces clock_gettime). */
void prof_clock_init(void);
/** Writer: measure a (ticks, REALTIME ns) pair; it may extend the tick -> ns function past every
 * tick converted so far (never changing it where it was used). */
void prof_clock_sample(void);
/** prof_clock_sample's arithmetic on a given measurement (unit tests feed it directly). */
void prof_clock_add(int64_t ticks, int64_t ns);
/** Forget the function of the previous session. */
void prof_clock_reset(void);
/** Session start, before the writer: measure the first rate (tens of microseconds), so
 * prof_clock_now_ns is on the function from the first GPU record on. */
void prof_clock_start(void);
/** Now on the trace's clock (the function of the ticks), from any thread: CUPTI stamps its
 * records with it, so GPU API calls and CPU ranges share one clock and nest exactly. */
int64_t prof_clock_now_ns(void);
/** Writer: ticks -> CLOCK_REALTIME ns. */
int64_t prof_ticks_to_ns(int64_t ticks);

/** One segment of the tick -> ns function: from tick `t` on, ns + (ticks - t) * scale / 2^32
 * (scale: ns per tick as fixed point), rounded to the nearest ns. */
typedef struct prof_tick_seg {
    int64_t t;
    int64_t ns;
    uint64_t scale;
} prof_tick_seg;
static inline int64_t prof_seg_ns(const prof_tick_seg *s, int64_t ticks)
{
    unsigned __int128 d = (unsigned __int128)(uint64_t)(ticks - s->t) * s->scale;
    return s->ns + (int64_t)((d + ((unsigned __int128)1 << 31)) >> 32);
}

/** The function's newest two segments, so the writer's hot loop can convert in line; `mode`
 * says how: ticks are ns already, linear from seg[0].t on (seg[1] from seg[1].t on), or call
 * prof_ticks_to_ns. Valid until the next prof_clock_sample. The hot loop raises `max_ticks` to
 * the largest tick it converted in line and hands it back with prof_clock_converted. */
enum prof_map_mode { PROF_MAP_IDENTITY, PROF_MAP_LINEAR, PROF_MAP_CALL };
typedef struct prof_tick_map {
    prof_tick_seg seg[2];
    int64_t max_ticks;
    enum prof_map_mode mode;
} prof_tick_map;
void prof_clock_map(prof_tick_map *m);
/** Writer: `max_ticks` was converted in line (the function is fixed up to there). */
void prof_clock_converted(int64_t max_ticks);

/** Read a (REALTIME, MONOTONIC) pair: MONOTONIC between two REALTIME reads, midpoint kept. */
void prof_clock_anchor(int64_t *realtime_ns, int64_t *monotonic_ns);

/* ---- records (32 bytes, written by the owning thread, read by the writer) ---- */

enum prof_rec_kind {
    PROF_REC_RANGE = 1, /* t0..t1, name, depth = nesting level */
    PROF_REC_STEP,      /* ProfilerStep#aux, t0..t1 */
    PROF_REC_MARK,      /* instant at t0 */
    PROF_REC_COUNTER,   /* counter at t0, value = bits of a double in aux */
    PROF_REC_BAD_POP,   /* pop with no open range at t0 */
    PROF_REC_ASYNC,     /* NVTX start/end range t0..t1, aux = tid that started it */
    PROF_REC_DEEP,      /* push past PROF_MAX_DEPTH at t0 */
    PROF_REC_SCHED      /* the next step's scheduler figures: t0 = CPU ns, t1 = run-queue ns in
                           it (not ticks), aux = its number; emitted just before the step */
};

typedef struct prof_rec {
    int64_t t0;
    int64_t t1;
    uint64_t aux;
    uint32_t name;
    uint16_t kind;
    uint16_t depth;
} prof_rec;

#define PROF_MAX_DEPTH   256
#define PROF_NAME_CACHE  64 /* per-thread pointer -> id cache for NVTX's dynamic strings */
#define PROF_NAME_MAX_ID (1u << 20)

typedef struct prof_frame {
    int64_t t0;
    uint32_t name;
    uint32_t recorded; /* 1 if the window was recording at push time */
    uint64_t ext;      /* CUPTI external correlation id pushed for this range, or 0 */
} prof_frame;

enum prof_thread_state { PROF_THREAD_ALIVE = 1, PROF_THREAD_DEAD, PROF_THREAD_FREE };

/** A block of records in a thread's chain. The thread appends and publishes `committed`; once a
 * block is full it links the next one (`next`, after its last `committed`). The writer reads the
 * chain from its oldest block and hands drained blocks back (the thread's spare) or frees them. */
typedef struct prof_block {
    _Atomic(struct prof_block *) next;
    _Atomic uint32_t committed; /* records published */
    uint32_t cap;               /* 0: the thread's empty first link (never freed) */
    prof_rec *recs;             /* right after this header in the same allocation */
} prof_block;

/** One thread's state: a chain of blocks, single producer (the thread), single consumer (the
 * writer). Blocks start small (PROF_BLOCK_MIN records) and double while the writer falls behind,
 * within the process-wide limit (the session's buf_limit); past it records are dropped and
 * counted. */
typedef struct prof_thread {
    /* the thread's side */
    prof_block *wblk;          /* block being filled */
    prof_rec *wrecs;           /* wblk->recs */
    uint32_t wpos;             /* records written in wblk */
    uint32_t wcap;             /* wblk->cap */
    _Atomic uint32_t grow_cap; /* size of the next block to allocate (the writer reads it) */
    int depth;
    int64_t last_tick; /* ticks never go back on one thread (vCPUs' TSCs may differ) */
    char pad0[24];
    /* the writer's side */
    prof_block *rblk; /* oldest block not drained */
    uint32_t rpos;    /* records of rblk drained */
    char pad1[52];
    _Atomic(prof_block *) spare; /* a drained block the thread takes before allocating */
    prof_block first;            /* the chain's empty first link */
    _Atomic uint32_t gen;        /* session the chain belongs to (0 = none) */
    _Atomic int state;           /* enum prof_thread_state */
    int tid;
    _Atomic uint64_t dropped; /* records lost past the memory limit */
    struct prof_thread *next; /* registry list; immutable once published */
    const char *cache_ptr[PROF_NAME_CACHE];
    uint32_t cache_id[PROF_NAME_CACHE];
    uint64_t ext_next, ext_end; /* this thread's block of external correlation ids */
    prof_frame stack[PROF_MAX_DEPTH];
} prof_thread;

#define PROF_BLOCK_MIN         256u               /* records in a thread's first block (8 KiB) */
#define PROF_BLOCK_MAX         65536u             /* records in the largest block (2 MiB) */
#define PROF_BUF_LIMIT_DEFAULT ((int64_t)1 << 30) /* see gp_prof_options.buffer_bytes */

/* ---- session (session.c) ---- */

typedef struct prof_session {
    _Atomic int running;   /* between init and shutdown */
    _Atomic int recording; /* running and inside the profiling window */
    _Atomic uint32_t gen;  /* incremented by every init */
    unsigned record;       /* gp_prof_record_flags */
    int wait_when_full;
    int64_t buf_limit; /* bytes all threads' blocks may hold together */
    int pid;
    _Atomic int gpu_ext;          /* 1: ranges push CUPTI external correlation ids */
    _Atomic uint64_t ext_counter; /* external ids handed out, in blocks per thread */
    int tsc;                      /* 1: ticks are TSC cycles (clock.c decides) */
    int tick_gap;                 /* ticks in at least 2 ns (1 ns where the tick is one) */
    int64_t base_ns;              /* the trace's base time (writer and the GPU converter) */
} prof_session;

static inline int prof_ticks_are_tsc(void)
{
    return prof_state_session()->tsc;
}

/** @return 1 if the window is recording and `flag` is asked for. Hot path. */
static inline int prof_recording(unsigned flag)
{
    const prof_session *s = prof_state_session();
    return atomic_load_explicit(&s->recording, memory_order_relaxed) && (s->record & flag);
}

/** Record the window's active intervals (writer reads them to filter GPU records). */
int prof_window_contains(int64_t t);

/* ---- names (names.c) ---- */

/** @return the interned string of `id` (NULL if unknown). Lock-free; any thread. */
const char *prof_name_str(uint32_t id);
/** @return the category of `id`. */
gp_prof_cat prof_name_cat(uint32_t id);
/** @return how many ids have been handed out (ids are 1..count). */
uint32_t prof_name_count(void);
/** Intern a string of `len` bytes (need not be NUL-terminated). */
uint32_t prof_intern_n(const char *s, size_t len, gp_prof_cat cat);
/** Record `name_id` as the name of OS thread `tid`; prof_thread_names copies the table. */
void prof_thread_name_set(int tid, uint32_t name_id);
/** Copy up to `cap` (tid, name) pairs; @return how many. */
int prof_thread_names(int *tids, uint32_t *names, int cap);

/* ---- the scheduler's figures for the calling thread (sched.c) ---- */

typedef struct prof_sched {
    int64_t cpu_ns;  /* on a core so far */
    int64_t runq_ns; /* runnable, waiting for a core, so far */
} prof_sched;
/** Read them (/proc/thread-self/schedstat); @return 0, or -1 where the system does not say. */
int prof_sched_read(prof_sched *s);
/** @return the calling thread's schedstat file, open (close it), or -1. */
int prof_sched_open(void);
/** prof_sched_read from a file prof_sched_open gave (the thread that opened it). */
int prof_sched_read_fd(int fd, prof_sched *s);

/* ---- the host's steal of this machine's CPUs (steal.c) ---- */

typedef struct prof_steal {
    int fd;    /* /proc/stat, or -1: no samples */
    char *buf; /* its text */
    size_t cap;
    int64_t *last; /* per CPU: its steal at the last pass (ticks), -1 unknown */
    long n_cpus;
    int64_t t_last;      /* REALTIME ns of the last pass */
    int64_t ns_per_tick; /* /proc/stat's unit */
    int seen;            /* some steal seen: every pass from then on is a sample */
} prof_steal;
/** One sample: from t0 to t1 (REALTIME ns), the most one CPU lost to the host, % of the span. */
typedef struct prof_steal_sample {
    int64_t t0, t1;
    double pct;
} prof_steal_sample;
/** Open /proc/stat and take the first reading at `now`; without it, no samples follow. */
void prof_steal_start(prof_steal *s, int64_t now);
/** A pass at `now`, at least `min_span` ns after the last; @return 1 with a sample in `out`
 * once some steal was seen, else 0. */
int prof_steal_pass(prof_steal *s, int64_t now, int64_t min_span, prof_steal_sample *out);
/** Parse /proc/stat's text (`n` bytes): update each CPU's reading, and the most steal one CPU
 * gained since its last (ticks). @return 0, or -1 without a CPU line that has a steal column. */
int prof_steal_parse(prof_steal *s, const char *buf, size_t n, int64_t *max_ticks);
void prof_steal_stop(prof_steal *s);

/* ---- threads and rings (thread.c) ---- */

/** @return the calling thread's state, registering it on first use (may malloc); NULL if out
 * of memory. Its chain is attached to the current session. */
prof_thread *prof_thread_self(void);
/** Append `r` to the calling thread's chain; drops (and counts) past the memory limit. */
void prof_emit(prof_thread *t, const prof_rec *r);
/** @return the calling thread's tick, at least the session's tick_gap after the last one it
 * took: a thread's times never go back (the TSCs of a VM's vCPUs may differ) and two of its events
 * never share a nanosecond, so nesting is unambiguous in the trace. Hot path. */
static inline int64_t prof_thread_ticks(prof_thread *t)
{
    int64_t now = prof_ticks(), min = t->last_tick + prof_state_session()->tick_gap;
    now = now > min ? now : min;
    t->last_tick = now;
    return now;
}
/** @return the first registered thread (walk with ->next). */
prof_thread *prof_threads_head(void);
/** Writer side: the oldest unread records of `t`, in place (a contiguous span that stays valid
 * until released); @return how many. */
size_t prof_buf_peek(prof_thread *t, const prof_rec **span);
/** Writer side: give `t` (a thread that is recording, whose chain has grown past its first
 * block) a spare block of its next size when it has none, allocated and its pages touched here:
 * its next block then costs it no malloc and no page faults (a thread taking a large spare wakes
 * the writer for the next one). */
void prof_buf_prefill(prof_thread *t);
/** Writer side: hand `n` records read with prof_buf_peek back. */
void prof_buf_release(prof_thread *t, size_t n);
/** Writer side: free the chains of threads that exited and are drained. */
void prof_threads_reap(uint32_t gen);
/** Bytes all threads' blocks hold now, and the most they held this session. */
int64_t prof_buf_bytes(void);
int64_t prof_buf_peak(void);
/** Forget the previous session's peak. */
void prof_buf_reset_peak(void);
/** The time one recorded range costs its thread (push and pop: two clock reads, the frame, one
 * record), timed on scratch state whose records go nowhere; the median of 5 rounds of 256.
 * Written to the trace header (record_cost_ns) so an analysis can take the profiler's own time
 * out of a step. @return ns per range; 0 when it cannot be measured (out of memory). */
int64_t prof_range_cost_ns(void);
/** Begin/end an NVTX start/end range (any thread may end it). */
uint64_t prof_async_start(uint32_t name);
void prof_async_end(uint64_t id);
/** Intern a dynamic NVTX string through the calling thread's pointer cache. */
uint32_t prof_intern_cached_dyn(prof_thread *t, const char *s);
/** NVTX push on `t` (the calling thread), recorded if NVTX capture is on. */
void prof_nvtx_push(prof_thread *t, uint32_t name);
/** NVTX pop on the calling thread. @return the depth left, or -1 if nothing was open. */
int prof_nvtx_pop(void);
/** Forget per-thread state after fork() in the child. */
void prof_threads_after_fork(void);

/* ---- config (config.c) ---- */

struct prof_out;
/** Write the "gprof" object's members (without braces), comma-separated, starting with a
 * comma if `lead_comma`. The caller adds automatic keys around them. */
void prof_config_write(struct prof_out *o, int lead_comma);
/** @return 1 if `key` was set by the user. */
int prof_config_has(const char *key);

/* ---- output (json_out.c) ---- */

/** Buffered output to a file, plain or gzip. On the first I/O error it stops writing, keeps
 * `failed` set and `err` filled; callers check once at the end. */
typedef struct prof_out {
    char *buf;
    size_t len;
    size_t cap;
    int fd;
    int gzip;
    void *z; /* z_stream * */
    unsigned char *zbuf;
    int failed;
    char err[256];
    uint64_t bytes_out;
    int stream;         /* a device (/dev/null): written in order, the header once */
    int header_written; /* the header region went out */
} prof_out;

gp_status prof_out_open(prof_out *o, const char *path, int gzip, gp_error *err);
/** A memory-only output of `cap` bytes (overflow sets `failed`); release with prof_out_close. */
gp_status prof_out_mem_init(prof_out *o, size_t cap);
/** Bytes of header text reserved at the start of the file (stored block limit: < 64 KiB). */
#define PROF_HEADER_TEXT 16384
/** @return bytes the header region takes in the file. */
size_t prof_out_header_size(const prof_out *o);
/** (Re)write the header region at offset 0 with `text` (n <= PROF_HEADER_TEXT bytes, padded
 * with spaces); the first call must come before any other output. @return 0 or -1. */
int prof_out_write_header(prof_out *o, const char *text, size_t n);
/** Push buffered bytes to the file; `sync` makes gzip output decodable up to here. */
void prof_out_flush(prof_out *o, int sync);
/** Finish (gzip trailer), fsync-free close. @return 0 if everything was written. */
int prof_out_close(prof_out *o);
void prof_out_raw(prof_out *o, const char *s, size_t n);
static inline void prof_out_str(prof_out *o, const char *s);
/** Write `s` (n bytes) as a JSON string with quotes; invalid UTF-8 becomes U+FFFD. */
void prof_out_json_str(prof_out *o, const char *s, size_t n);
void prof_out_i64(prof_out *o, int64_t v);
void prof_out_u64(prof_out *o, uint64_t v);
/** Write ns as microseconds with three decimals ("12.345"), negatives clamped to 0. */
void prof_out_us(prof_out *o, int64_t ns);
/** Write a double in shortest round-trip form ("null" when not finite). */
void prof_out_double(prof_out *o, double v);
/** Escape `s` (n bytes) as JSON string contents (no quotes) into malloc'd memory. */
char *prof_json_escape(const char *s, size_t n, size_t *out_len);

/* Two ASCII digits for each of 0..99: the formatters below emit two digits a step. */
#define PROF_DIGIT_PAIRS                                                                           \
    "00010203040506070809101112131415161718192021222324252627282930313233"                         \
    "343536373839404142434445464748495051525354555657585960616263646566"                           \
    "676869707172737475767778798081828384858687888990919293949596979899"

/** @return the number of decimal digits of `v` (1..20): log2 via clz, then one compare. */
static inline int prof_u64_digits(uint64_t v)
{
    static const uint64_t p10[20] = {1ULL,
                                     10ULL,
                                     100ULL,
                                     1000ULL,
                                     10000ULL,
                                     100000ULL,
                                     1000000ULL,
                                     10000000ULL,
                                     100000000ULL,
                                     1000000000ULL,
                                     10000000000ULL,
                                     100000000000ULL,
                                     1000000000000ULL,
                                     10000000000000ULL,
                                     100000000000000ULL,
                                     1000000000000000ULL,
                                     10000000000000000ULL,
                                     100000000000000000ULL,
                                     1000000000000000000ULL,
                                     10000000000000000000ULL};
    uint64_t x = v | 1;
    int t = ((64 - __builtin_clzll(x)) * 1233) >> 12; /* floor(log10(x)) or one more */
    return t - (x < p10[t]) + 1;
}

/** Write exactly 8 digits of `v` (< 10^8, zero-padded) at d. */
static inline void prof_put_8(char *d, uint32_t v)
{
    static const char pairs[] = PROF_DIGIT_PAIRS;
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(d, pairs + 2 * (hi / 100), 2);
    memcpy(d + 2, pairs + 2 * (hi % 100), 2);
    memcpy(d + 4, pairs + 2 * (lo / 100), 2);
    memcpy(d + 6, pairs + 2 * (lo % 100), 2);
}

/** Format `v` at p (needs 20 bytes); @return the end. Right to left, two digits a step in
 * 32-bit arithmetic: the writer's hot loop formats two numbers an event (bench_prof.sh). */
static inline char *prof_put_u64(char *p, uint64_t v)
{
    static const char pairs[] = PROF_DIGIT_PAIRS;
    int n = prof_u64_digits(v);
    char *t = p + n;
    while (v >= 100000000ULL) {
        uint64_t q = v / 100000000ULL;
        t -= 8;
        prof_put_8(t, (uint32_t)(v - q * 100000000ULL));
        v = q;
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100) {
        uint32_t q = w / 100;
        t -= 2;
        memcpy(t, pairs + 2 * (w - q * 100), 2);
        w = q;
    }
    if (w >= 10)
        memcpy(t - 2, pairs + 2 * w, 2);
    else
        t[-1] = (char)('0' + w);
    return p + n;
}

/** Format ns as microseconds with three decimals at p (needs 25 bytes); @return the end. */
static inline char *prof_put_us(char *p, int64_t ns)
{
    static const char pairs[] = PROF_DIGIT_PAIRS;
    if (ns < 0)
        ns = 0;
    uint64_t us = (uint64_t)ns / 1000;
    unsigned frac = (unsigned)((uint64_t)ns - us * 1000);
    p = prof_put_u64(p, us);
    p[0] = '.';
    p[1] = (char)('0' + frac / 100);
    memcpy(p + 2, pairs + 2 * (frac % 100), 2);
    return p + 4;
}

/** Make room for `n` more bytes at o->buf + o->len (n <= the buffer size; for a memory buffer
 * n <= 64: what does not fit goes to its slack and the buffer is marked failed). */
static inline void prof_out_reserve(prof_out *o, size_t n)
{
    if (o->len + n > o->cap) {
        prof_out_flush(o, 0);
        if (o->fd < 0) {
            o->failed = 1;
            o->len = o->cap;
        }
    }
}

static inline void prof_out_str(prof_out *o, const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    prof_out_raw(o, s, n);
}

/* ---- writer (writer.c) ---- */

typedef struct prof_writer_cfg {
    const char *path; /* final path; the writer writes path + ".tmp" */
    int gzip;
    int flush_ms;
    int64_t base_ns;
    int64_t anchor_real;
    int64_t anchor_mono;
    const char *producer;
    const char *trace_name;
    int rank;
    int world_size;
    uint32_t gen;
    int64_t range_cost_ns; /* prof_range_cost_ns() at init */
    int mode;   /* the mode of the regular file the trace replaces; 0: none there (0644) */
    int device; /* path is a character device (/dev/null): written in place, never renamed or
                   removed */
} prof_writer_cfg;

/** Open the output and start the writer thread (with SIGINT/SIGTERM blocked). */
gp_status prof_writer_start(const prof_writer_cfg *cfg, gp_error *err);
/** Wake the writer now. Async-signal-safe. */
void prof_writer_wake(void);
/** Ask the writer to finish the trace and wait for it (max `timeout_ms`, 0 = forever).
 * @return 0 if finished and renamed, -1 on I/O failure, -2 on timeout. */
int prof_writer_finish(int timeout_ms, int from_signal);
/** Forget the writer in a forked child (no thread there; the parent owns the file). */
void prof_writer_forget(void);
/** Start a session for an injected library unless one runs (`via` names the entry point;
 * `gpu`: start CUPTI now, else only when CUDA's injection calls us).
 * @return 0 if a session runs afterwards, -1 (logged once) if not. */
int prof_inject_start(const char *via, int gpu);
/** Add a warning string to "gprof"."warnings" (copied; thread-safe, not hot path). */
void prof_warn(const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 1, 2)))
#endif
        ;
/** Start a new event in "traceEvents" (writes the separator, counts the event). */
void prof_event_sep(prof_out *o);
/** Write one complete ("X") event; GPU conversion uses it too. */
void prof_write_x(prof_out *o, const char *cat, uint32_t name, int64_t pid, int64_t tid, int64_t t0,
                  int64_t t1);
/** CPU time the last session's writer thread used, formatting (user) and in write(2) and
 * the file system (sys); valid after shutdown. */
void prof_writer_cpu_ns(int64_t *user_ns, int64_t *sys_ns);
/** @return events written in this session so far (writer thread only). */
uint64_t prof_writer_events(void);
/** Set "gpu_status" (copied). */
void prof_set_gpu_status(const char *status);

/* ---- GPU (cupti_*.c when GP_HAVE_CUPTI; stubs in session.c otherwise) ---- */

/** Start CUPTI activity recording. @return 0, or -1 with `why` filled (CPU-only run). */
int prof_gpu_start(unsigned record, char *why, size_t why_len);
/** Flush GPU activity (forced) and hand every buffer to the writer. */
void prof_gpu_flush(void);
/** Wait for every context's work (the caller's, each device's active primary context, those
 * created during the session) through the driver the program loaded; not on the signal path. */
void prof_gpu_sync(void);
/** Stop recording (disable kinds) after a final flush. process_exiting: called from the exit
 * handler, where CUDA's own exit handler (registered after ours, so run before it) may have
 * destroyed the contexts already: CUPTI is left as it is, since cuptiActivityDisable then
 * crashed (SIGSEGV on an H200, CUPTI 13.0, driver 580), turning a program's exit status 0 into
 * 139 after its trace was written. */
void prof_gpu_stop(int process_exiting);
/** Writer side: convert pending GPU buffers into events. */
void prof_gpu_drain(prof_out *o, int final, int from_signal);
/** Set gpu_status after a successful prof_gpu_start: "recorded", or the kinds CUPTI refused. */
void prof_gpu_started_status(void);
/** Writer side: write deviceProperties members (without brackets). @return count. */
int prof_gpu_device_props(prof_out *o);
/** Writer side: GPU process/stream metadata events, each preceded by a comma. */
void prof_gpu_metadata(prof_out *o);
/** Writer side: "gprof" members about the GPU, each preceded by a comma. */
void prof_gpu_config(prof_out *o);
/** CUDA injection: start GPU recording in the running session if it is not on yet. */
void prof_gpu_ensure_started(void);
/** In a forked child: never call CUPTI again. */
void prof_gpu_after_fork(void);
/** @return records CUPTI dropped so far. */
uint64_t prof_gpu_dropped(void);
/** GPU activity records converted so far and, of the timed ones, those with impossible times
 * (the capture-health ledger). Writer thread. */
typedef struct prof_gpu_health {
    uint64_t records, no_timestamp, end_before_start, before_launch, outside_window;
} prof_gpu_health;
void prof_gpu_health_get(prof_gpu_health *h);
/** Link the GPU work launched inside a range to it: CUPTI's external correlation stack
 * (cuptiActivityPushExternalCorrelationId), as Kineto does for ops. Only while gpu_ext is set. */
void prof_gpu_ext_push(uint64_t id);
void prof_gpu_ext_pop(void);

/* ---- process-global state ----
 * All of it is one object, the session, that only session.c names (style guide 3.1;
 * lint_libprof_state checks the objects): one member per module, each reached through its
 * accessor prof_state_<module>(), which only that module calls; the core (prof_session above,
 * prof_state_session) is shared. The accessors are `const` (always the same address), so a
 * function that uses its state several times calls its accessor once. Per-thread state
 * (thread.c's `self`) stays with its code. */

/* clock.c */
#define PROF_CLOCK_MEASURED 64 /* the rate is measured over up to 64 measurements back */
typedef struct prof_clock_state {
    int inited; /* prof_clock_init ran: the tick source is chosen */
    int64_t m_ticks[PROF_CLOCK_MEASURED], m_ns[PROF_CLOCK_MEASURED];
    int n_measured; /* total taken; the last PROF_CLOCK_MEASURED are kept */
    prof_tick_seg *knots;
    size_t n_knots, cap_knots;
    int64_t max_converted; /* the largest tick converted so far */
    int64_t last_steer;    /* where the last measurement started its segments */
    int64_t min_width;     /* the narrowest reading's ticks around the clock read; 0: none yet */
    /* tests: replaces a reading's tick, clock and tick reads (NULL: the real ones) */
    void (*read_hook)(int64_t *ticks_before, int64_t *ns, int64_t *ticks_after);
    /* The newest two segments, published for other threads (prof_clock_now_ns: CUPTI's
     * timestamp callback) under a sequence lock, and the largest tick they converted: the writer
     * never moves the function there either. */
    _Atomic uint32_t pub_seq;
    _Atomic int64_t pub_t[2], pub_ns[2];
    _Atomic uint64_t pub_scale[2];
    _Atomic int pub_valid;
    _Atomic int64_t pub_max_used; /* INT64_MIN until a tick is converted */
} prof_clock_state;
PROF_STATE_ACCESSOR prof_clock_state *prof_state_clock(void);

/* config.c */
#define PROF_MAX_CFG 128
enum prof_cfg_type { PROF_CFG_STR, PROF_CFG_INT, PROF_CFG_BOOL, PROF_CFG_DOUBLE, PROF_CFG_STRV };
typedef struct prof_cfg_entry {
    char *key;
    enum prof_cfg_type type;
    int64_t i;
    double d;
    char **strv; /* PROF_CFG_STR: strv[0]; PROF_CFG_STRV: n strings */
    int n;
} prof_cfg_entry;
typedef struct prof_config_state {
    prof_cfg_entry cfg[PROF_MAX_CFG];
    int n_cfg;
    pthread_mutex_t lock;
} prof_config_state;
PROF_STATE_ACCESSOR prof_config_state *prof_state_config(void);

/* names.c: names live in fixed chunks that never move, so reading one by id takes no lock */
#define PROF_NAME_CHUNK_BITS  12
#define PROF_MAX_THREAD_NAMES 4096
typedef struct prof_name_entry {
    const char *str;
    uint32_t len;
    uint32_t cat;
} prof_name_entry;
typedef struct prof_names_state {
    _Atomic(prof_name_entry *) chunks[PROF_NAME_MAX_ID >> PROF_NAME_CHUNK_BITS];
    _Atomic uint32_t count; /* ids 1..count are valid */
    pthread_mutex_t lock;
    uint32_t *hash_ids; /* open addressing, 0 = empty */
    uint32_t hash_cap;
    int tn_tid[PROF_MAX_THREAD_NAMES]; /* OS thread names */
    uint32_t tn_name[PROF_MAX_THREAD_NAMES];
    int tn_count;
} prof_names_state;
PROF_STATE_ACCESSOR prof_names_state *prof_state_names(void);

/* thread.c */
#define PROF_ASYNC_SLOTS 4096
typedef struct prof_async_slot { /* an open NVTX start/end range (may end on another thread) */
    _Atomic uint64_t id;         /* 0 = free */
    int64_t t0;
    uint32_t name;
    int tid;
} prof_async_slot;
typedef struct prof_threads_state {
    _Atomic(prof_thread *) threads; /* the registry: a list, nodes never freed */
    pthread_key_t exit_key;
    pthread_once_t key_once;
    _Atomic int64_t buf_bytes, buf_peak; /* record memory held by all threads' blocks */
    prof_async_slot async_tab[PROF_ASYNC_SLOTS];
    _Atomic uint64_t async_next; /* 1 at start */
} prof_threads_state;
PROF_STATE_ACCESSOR prof_threads_state *prof_state_threads(void);

/* writer.c */
#define PROF_MAX_WARN 64
#define PROF_MAX_TIDS 4096
typedef struct prof_async_range {
    int64_t t0, t1;
    uint32_t name;
    int tid;
} prof_async_range;
typedef struct prof_tid_info {
    int tid;
    uint64_t bad_pops;
    uint64_t deep;
} prof_tid_info;
typedef struct prof_writer_state {
    pthread_t th;
    int started;
    sem_t wake;
    _Atomic int stop;        /* 1: finish requested */
    _Atomic int from_signal; /* 1: ... by a signal handler */
    _Atomic int state;       /* 0 running, 1 finished ok, -1 failed */
    prof_writer_cfg cfg;
    char path[PATH_MAX], tmp[PATH_MAX], producer[32], trace_name[256];
    prof_out out;
    int need_comma;
    int io_reported;
    uint64_t n_events;
    char **esc; /* escaped name per id, lazily built */
    uint32_t *esc_len;
    unsigned char *esc_op; /* 1: category cpu_op */
    char **head;           /* per name: the start of its range events (write_range) */
    uint32_t *head_len;
    uint32_t esc_cap;
    prof_tid_info tids[PROF_MAX_TIDS];
    int n_tids;
    prof_async_range *async;
    size_t n_async, cap_async;
    int64_t last_sync_ns, last_header_ns;
    int64_t cpu_user_ns, cpu_sys_ns; /* the writer thread's CPU time, set when it ends */
    /* the capture-health ledger: records drained by kind (enum prof_rec_kind), and the most a
     * pass found its oldest record waiting (ns) */
    uint64_t n_kind[8];
    int64_t max_behind_ns;
    /* the last PROF_REC_SCHED read, for the step record that follows it on its thread */
    prof_rec sched;
    int sched_tid;
    prof_steal steal;     /* the host's steal, sampled once a pass (steal.c) */
    char thread_tail[64]; /* the current thread's ,"pid":P,"tid":T,"ts": */
    size_t thread_tail_len;
    int meta_tids[PROF_MAX_TIDS]; /* thread names, read for the metadata */
    uint32_t meta_names[PROF_MAX_TIDS];
    /* warnings and the GPU status, set from any thread */
    pthread_mutex_t warn_lock;
    char *warnings[PROF_MAX_WARN];
    int n_warnings;
    uint64_t warnings_lost;
    char gpu_status[256];
} prof_writer_state;
PROF_STATE_ACCESSOR prof_writer_state *prof_state_writer(void);

#endif
