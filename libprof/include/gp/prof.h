/* gp/prof.h: libprof's public API. CPU ranges, steps, marks and counters recorded into per-thread
 * buffers with no malloc, lock or formatting on the hot path; a writer thread turns them (and, when
 * built with CUPTI, GPU activity) into a Kineto-compatible Chrome trace (gp/trace_schema.h).
 * Typical use: gp_prof_options_init, gp_prof_init, GP_PROF_RANGE/gp_prof_step in the loop,
 * gp_prof_shutdown, gp_prof_trace_path. */
#ifndef GP_LIBPROF_PROF_H
#define GP_LIBPROF_PROF_H

#include <stddef.h>
#include <stdint.h>

#include "gp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#    define GP_PROF_API __attribute__((visibility("default")))
#else
#    define GP_PROF_API
#endif

/** An interned event name (see gp_prof_intern). 0 is "no name"; ids stay valid for the whole
 * process, across gp_prof_init/gp_prof_shutdown cycles. */
typedef uint32_t gp_prof_name;

/** Category a CPU range is written with: "user_annotation" (default, like
 * torch.profiler.record_function) or "cpu_op" (an operator, like aten::linear). */
typedef enum gp_prof_cat { GP_PROF_CAT_USER_ANNOTATION = 0, GP_PROF_CAT_CPU_OP = 1 } gp_prof_cat;

/** What to record (gp_prof_options.record); OR them together. */
enum gp_prof_record_flags {
    GP_PROF_RECORD_CPU = 1 << 0,     /**< this API's ranges, steps, marks, counters */
    GP_PROF_RECORD_NVTX = 1 << 1,    /**< NVTX ranges/marks/thread names (injection or linked) */
    GP_PROF_RECORD_KERNEL = 1 << 2,  /**< CUPTI: kernels */
    GP_PROF_RECORD_MEMCPY = 1 << 3,  /**< CUPTI: memcpy and memset */
    GP_PROF_RECORD_RUNTIME = 1 << 4, /**< CUPTI: CUDA runtime API calls */
    GP_PROF_RECORD_DRIVER = 1 << 5,  /**< CUPTI: CUDA driver API calls (opt-in, verbose) */
    GP_PROF_RECORD_SYNC = 1 << 6,    /**< CUPTI: synchronization and CUDA events */
    GP_PROF_RECORD_MEMORY = 1 << 7,  /**< CUPTI: device memory alloc/free ([memory] events) */
    GP_PROF_RECORD_GPU = GP_PROF_RECORD_KERNEL | GP_PROF_RECORD_MEMCPY | GP_PROF_RECORD_RUNTIME |
                         GP_PROF_RECORD_SYNC | GP_PROF_RECORD_MEMORY,
    GP_PROF_RECORD_DEFAULT = GP_PROF_RECORD_CPU | GP_PROF_RECORD_NVTX | GP_PROF_RECORD_GPU
};

/** gzip choice (gp_prof_options.gzip). AUTO: gzip unless output_path is set and does not end
 * in ".gz". */
enum gp_prof_gzip { GP_PROF_GZIP_AUTO = -1, GP_PROF_GZIP_OFF = 0, GP_PROF_GZIP_ON = 1 };

/** A profiling window like torch.profiler.schedule(skip_first, wait, warmup, active, repeat),
 * counted in steps (gp_prof_step_begin/gp_prof_step). Step n (from 0) is skipped while
 * n < skip_first; after that the cycle is `wait` idle steps, `warmup` steps (GPU tracing on,
 * events discarded), `active` recorded steps, repeated `repeat` times (0 = forever).
 * active == 0 disables the schedule: everything between init and shutdown is recorded. */
typedef struct gp_prof_schedule {
    int skip_first;
    int wait;
    int warmup;
    int active;
    int repeat;
} gp_prof_schedule;

/** Options for gp_prof_init. Fill with gp_prof_options_init, then change what you need.
 * Strings are copied by gp_prof_init; the caller keeps ownership. */
typedef struct gp_prof_options {
    /** Trace file to write. NULL: <output_dir>/<host>_<pid>.<ms>.pt.trace.json[.gz]. It is
     * written as <path>.tmp and renamed over a regular file (keeping its mode) or nothing; a
     * symlink is followed (the file it names gets the trace); a character device (/dev/null) is
     * written in place, never replaced (its header is the one written at start); a folder, a
     * FIFO or a symlink to nothing is refused by gp_prof_init (GP_EINVAL). */
    const char *output_path;
    /** Folder for the generated name (created if missing). NULL: $GP_PROF_OUT, else ".". */
    const char *output_dir;
    /** enum gp_prof_gzip. Default GP_PROF_GZIP_AUTO. */
    int gzip;
    /** Most memory all threads' record buffers may hold together, bytes. Each thread's buffer
     * starts at 8 KiB and grows (blocks of up to 2 MiB) while the writer thread falls behind;
     * drained blocks are reused or freed. Only past this limit are records dropped (counted in
     * the trace; or waited for, with wait_when_full). 0 = $GP_PROF_BUFFER_LIMIT ("512M", "2G")
     * if set, else 1 GiB or an eighth of the machine's memory if that is less; at least 64 KiB. */
    size_t buffer_bytes;
    /** enum gp_prof_record_flags. Default GP_PROF_RECORD_DEFAULT. */
    unsigned record;
    /** Profiling window; default all zero (record everything). */
    gp_prof_schedule schedule;
    /** 1: a thread that finds the buffers at their limit waits for the writer (lossless, for
     * benchmarks and tests); 0 (default): the record is dropped and counted in the trace. */
    int wait_when_full;
    /** 1 (default): flush and finish the trace on SIGINT, SIGTERM, SIGHUP and SIGQUIT when
     * their action is the default one (process death), then die by the same signal. */
    int handle_signals;
    /** How often the writer drains buffers and flushes the file, ms. 0 = default (100). A
     * program killed without warning (SIGKILL, a crash) keeps what was flushed: all but about
     * this much of its end, in <output>.tmp, a valid prefix of the trace. */
    int flush_interval_ms;
    /** "producer" in the "gprof" object ("trainer", "inject", "api"). NULL = "api". */
    const char *producer;
    /** "traceName" top-level key; NULL = none. */
    const char *trace_name;
    /** Rank and world size for "distributedInfo"; world_size <= 0 = not written. */
    int rank;
    int world_size;
} gp_prof_options;

/** Fill `opts` with the defaults documented on each field. */
GP_PROF_API void gp_prof_options_init(gp_prof_options *opts);

/** Start profiling this process: open <output>.tmp, start the writer thread and, if built with
 * CUPTI and asked for, GPU activity recording (a CUPTI failure is not an error: CPU ranges are
 * still recorded and the reason goes into "gprof"."gpu_status").
 * @param opts options, or NULL for the defaults.
 * @param err  optional error details.
 * @return GP_OK; GP_EINVAL if a session is already running (e.g. started by injection) or an
 *         option is invalid; GP_EIO if the output cannot be created; GP_ENOMEM.
 * Not thread-safe against gp_prof_shutdown; call from one thread. */
GP_PROF_API gp_status gp_prof_init(const gp_prof_options *opts, gp_error *err);

/** Stop profiling: close any open step, flush GPU activity, drain every thread's buffer, write
 * the end of the trace and rename <output>.tmp to <output>. Also done at exit. Safe to call
 * when no session runs (returns GP_OK). Ranges still open on other threads are dropped.
 * @return GP_OK, or GP_EIO if the trace could not be written completely (the message was
 *         also logged once). */
GP_PROF_API gp_status gp_prof_shutdown(gp_error *err);

/** @return 1 while a session is running (between gp_prof_init and gp_prof_shutdown), else 0. */
GP_PROF_API int gp_prof_running(void);

/** @return the path of the last trace written completely by gp_prof_shutdown (or at signal or
 * exit), or NULL if none yet. Valid until the next gp_prof_init. */
GP_PROF_API const char *gp_prof_trace_path(void);

/** Intern `name` as a user_annotation name. Same string -> same id. Takes a lock and may
 * malloc: call once per name (at startup or via GP_PROF_RANGE's cache), not per event.
 * Thread-safe; works before gp_prof_init. @return the id, or 0 if name is NULL or the name
 * table is full (2^20 names). */
GP_PROF_API gp_prof_name gp_prof_intern(const char *name);

/** Like gp_prof_intern with an explicit category. "x" as CPU_OP and as USER_ANNOTATION are
 * two different ids. */
GP_PROF_API gp_prof_name gp_prof_intern_cat(const char *name, gp_prof_cat cat);

/** Begin a range named `name` on the calling thread. Hot path: no malloc, lock or formatting.
 * Ranges nest per thread (max depth 256; deeper pushes are counted and ignored).
 * Thread-safe; a no-op when no session runs or the window is not recording. */
GP_PROF_API void gp_prof_push(gp_prof_name name);

/** End the innermost range of the calling thread. A pop with no open range is recorded as a
 * warning in the trace ("gprof"."warnings"), never a crash. Thread-safe. */
GP_PROF_API void gp_prof_pop(void);

/** Begin step ProfilerStep#N on the calling thread (N counts from 0 per session), ending the
 * previous step if one is open, and advance the schedule. @return N, or -1 if no session. */
GP_PROF_API int64_t gp_prof_step_begin(void);

/** End the open step, if any (a no-op otherwise). */
GP_PROF_API void gp_prof_step_end(void);

/** torch.profiler's prof.step(): end the current step and begin the next.
 * @return the new step number, or -1 if no session. */
GP_PROF_API int64_t gp_prof_step(void);

/** Record an instant event ("ph":"i", thread scope) named `name` now. Hot path. */
GP_PROF_API void gp_prof_mark(gp_prof_name name);

/** Record counter `name` = `value` now ("ph":"C"). Hot path. */
GP_PROF_API void gp_prof_counter(gp_prof_name name, double value);

/** Name the calling thread in the trace ("thread_name" metadata). Copies `name` (truncated to
 * 63 bytes). Not hot path; thread-safe; works before gp_prof_init. */
GP_PROF_API void gp_prof_thread_name(const char *name);

/** Add `key` = value to the trace's top-level "gprof" object (keys: GP_CFG_* in
 * gp/trace_schema.h). Setting a key again replaces it. Strings are copied. Works before
 * gp_prof_init and between sessions: the values are kept for every later trace of the process
 * (gp_prof_config_clear forgets them). Thread-safe (takes a lock). */
GP_PROF_API void gp_prof_config_str(const char *key, const char *value);
/** See gp_prof_config_str. */
GP_PROF_API void gp_prof_config_int(const char *key, int64_t value);
/** See gp_prof_config_str; written as true/false. */
GP_PROF_API void gp_prof_config_bool(const char *key, int value);
/** See gp_prof_config_str; non-finite values are written as null. */
GP_PROF_API void gp_prof_config_double(const char *key, double value);
/** See gp_prof_config_str; an array of `n` strings (e.g. GP_CFG_COMMAND = argv). */
GP_PROF_API void gp_prof_config_strv(const char *key, const char *const *values, int n);
/** Forget every key set with gp_prof_config_*. */
GP_PROF_API void gp_prof_config_clear(void);

/** @return nanoseconds on the trace clock (CLOCK_REALTIME, CUPTI's default), for callers that
 * time things themselves. Thread-safe. */
GP_PROF_API int64_t gp_prof_now_ns(void);

/** @return the calling thread's time runnable but waiting for a core so far (ns, Linux's
 * /proc/thread-self/schedstat), or -1 where the system does not say. Read it around a loop and
 * record the difference (GP_CFG_TRAIN_RUNQ with GP_CFG_LOOP_WALL) so the trace says how much of
 * the loop's time the thread had no core. Thread-safe; opens a file: not for the hot path. */
GP_PROF_API int64_t gp_prof_thread_runq_ns(void);

/** Intern `lit` once into `*cache` (thread-safe, lock-free after the first call); used by the
 * macros below. `cache` must be a static gp_prof_name initialised to 0. */
static inline gp_prof_name gp_prof_intern_cached(gp_prof_name *cache, const char *lit,
                                                 gp_prof_cat cat)
{
#if defined(__GNUC__)
    gp_prof_name id = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (id == 0) {
        id = gp_prof_intern_cat(lit, cat);
        __atomic_store_n(cache, id, __ATOMIC_RELEASE);
    }
    return id;
#else
    if (*cache == 0)
        *cache = gp_prof_intern_cat(lit, cat);
    return *cache;
#endif
}

/** Used by GP_PROF_RANGE's cleanup; do not call directly. */
static inline void gp_prof_scope_end(int *unused)
{
    (void)unused;
    gp_prof_pop();
}

/* ---- Instrumentation macros. They compile to nothing unless GP_WITH_PROF is defined (linking
 * the gp_prof CMake target defines it). `lit` must be a string literal or a string that lives
 * as long as the process; it is interned once per call site. ---- */
#define GP_PROF_CAT2(a, b) a##b
#define GP_PROF_CAT(a, b)  GP_PROF_CAT2(a, b)
#if defined(GP_WITH_PROF)
/** Push a range named `lit`; pop it with GP_PROF_POP. */
#    define GP_PROF_PUSH(lit) GP_PROF_PUSH_CAT(lit, GP_PROF_CAT_USER_ANNOTATION)
/** Push a range with category `cat` (a gp_prof_cat). */
#    define GP_PROF_PUSH_CAT(lit, cat)                                                             \
        do {                                                                                       \
            static gp_prof_name gp_prof_nm_cache;                                                  \
            gp_prof_push(gp_prof_intern_cached(&gp_prof_nm_cache, (lit), (cat)));                  \
        } while (0)
/** Pop the innermost range. */
#    define GP_PROF_POP() gp_prof_pop()
/** Instant mark named `lit`. */
#    define GP_PROF_MARK(lit)                                                                      \
        do {                                                                                       \
            static gp_prof_name gp_prof_nm_cache;                                                  \
            gp_prof_mark(                                                                          \
                    gp_prof_intern_cached(&gp_prof_nm_cache, (lit), GP_PROF_CAT_USER_ANNOTATION)); \
        } while (0)
/** Counter `lit` = `value`. */
#    define GP_PROF_COUNTER(lit, value)                                                            \
        do {                                                                                       \
            static gp_prof_name gp_prof_nm_cache;                                                  \
            gp_prof_counter(                                                                       \
                    gp_prof_intern_cached(&gp_prof_nm_cache, (lit), GP_PROF_CAT_USER_ANNOTATION),  \
                    (value));                                                                      \
        } while (0)
#    if defined(__GNUC__)
/** A range named `lit` from here to the end of the enclosing block (GCC/Clang cleanup). */
#        define GP_PROF_RANGE(lit) GP_PROF_RANGE_CAT(lit, GP_PROF_CAT_USER_ANNOTATION)
/** GP_PROF_RANGE with category `cat`. */
#        define GP_PROF_RANGE_CAT(lit, cat)                                                        \
            GP_PROF_PUSH_CAT(lit, cat);                                                            \
            int GP_PROF_CAT(gp_prof_scope_, __LINE__)                                              \
                    __attribute__((cleanup(gp_prof_scope_end), unused)) = 0
#    endif
#else
#    define GP_PROF_PUSH(lit)           ((void)0)
#    define GP_PROF_PUSH_CAT(lit, cat)  ((void)0)
#    define GP_PROF_POP()               ((void)0)
#    define GP_PROF_MARK(lit)           ((void)0)
#    define GP_PROF_COUNTER(lit, value) ((void)0)
#    define GP_PROF_RANGE(lit)          ((void)0)
#    define GP_PROF_RANGE_CAT(lit, cat) ((void)0)
#endif

#ifdef __cplusplus
}
#endif
#endif
