/* rules_int.h: private interface between the rules engine (rules.c), its helpers
 * (rules_ctx.c: the per-trace view every rule reads; rules_out.c: building a finding) and the
 * rules themselves (rules/rule_<name>.c, one function each, listed in rules.c's table). */
#ifndef GP_ANALYZE_RULES_INT_H
#define GP_ANALYZE_RULES_INT_H

#include "gp/rules.h"
#include "gp/run_config.h"
#include "reader/trace_int.h"

#include <stdarg.h>

/* Rows kept per finding (nsys prints 50; a terminal wants fewer). */
#define RULES_MAX_ROWS 10
#define RULES_MAX_COLS 8

/* The trainer's run configuration ("gprof" object), or what is known of a PyTorch run. `rc` is
 * every key, decoded (gp/run_config.h: unknown is `known` 0, NULL or GP_CFG_UNKNOWN; a POS
 * key's `v` is 0 unknown): the rules read the keys there, counts through rules_count. The
 * fields after it are derived: who wrote the trace and the gating of the CPU accounting the
 * rules share. */
struct rules_cfg {
    gp_run_config rc;
    int libprof; /* libprof wrote it (the trainer, `run -- CMD`, a linked program) */
    /* the trainer's CPU accounting over its loop (ns): steps' wall time, the training thread's
     * CPU time in them, loader threads' CPU time (all 0 unknown); other processes' CPU time (-1
     * unknown) and the loop's wall time (0 unknown) */
    int64_t step_wall, step_cpu, loader_cpu, other_cpu, loop_wall;
    /* the training thread's and the loader threads' time runnable without a core over the loop
     * (ns; -1 unknown) */
    int64_t train_runq, loader_runq;
};

/* A count the trace states (workers, cores, batch size, BLAS threads): its value where it
 * states a positive one, else 0. The rules act on positive counts only: a header's 0 (e.g.
 * `--workers 0`) and no header read alike, as they did when unknown was -1. */
static inline long rules_count(gp_cfg_num n)
{
    return n.known && n.v > 0 ? (long)n.v : 0;
}

/* A sorted, disjoint list of [ts, end) intervals (ns). */
struct rules_ivs {
    int64_t (*iv)[2];
    size_t n, cap;
};

/* Start-up work in the analysed steps where no warm-up step was left out (rules_startup.h):
 * the first calls far slower than their names' later calls, a union within the steps. */
struct rules_startup {
    int64_t ns;
    gp_str name;          /* the costliest one's name (GP_STR_NONE: none) */
    int64_t first, later; /* its duration, and the median of its name's later calls */
};

/* What every rule reads: the analysis plus the analysed steps (warm-up dropped). */
struct rules_ctx {
    const gp_analysis *a;
    const gp_trace *t;
    const gp_event *ev;
    size_t n_ev;
    const gp_step *steps; /* the analysed steps: all steps minus warm-up */
    size_t n_steps, n_all_steps, n_warmup;
    int64_t step_ns;         /* sum of analysed step times (end - ts) */
    int64_t win_ts, win_end; /* first analysed step start .. last analysed step end */
    int64_t bd[GP_BD_COUNT]; /* breakdown summed over analysed steps */
    int has_gpu;
    struct rules_cfg cfg;
    const gp_findings *done;      /* findings of the rules already run (for later phases) */
    gp_profiler_cost cost;        /* the profiler's own cost in the analysed steps (gp_rules_run) */
    struct rules_ivs step_ivs;    /* the analysed steps as intervals */
    int64_t trace_ts;             /* earliest event start: "at" times are relative to it */
    struct rules_startup startup; /* start-up work in the steps (gp_rules_run) */
    /* lazily built caches (rules_ctx.c) */
    struct rules_ivs kernels, comm, copies, busy; /* compute kernels, comm kernels, memcpys, all */
    struct rules_ivs compute; /* the work that occupies the SMs: kernels, comm kernels, memsets */
    int have_ivs;
    struct rules_host_map *host; /* what each host thread was doing (rules_ctx_host_map) */
    uint8_t *name_cls;
    size_t n_name_cls;
};

/* What a finding's cause took from the others' evidence (rules_explain.c): the intervals it
 * made pass (GT19: the time calls stalled waiting for a core, a disjoint union), the share of
 * the time it took from the host's threads where the trace measured it (GT19: the training
 * thread's run-queue wait, % of the loop's wall time; 0 unmeasured) and the knob that comes
 * first ("free the cores first (GT19)"). Empty for most rules. `needs`: every finding's rule's
 * flags (enum rules_needs), which the engine adds, and any a rule sets for this trace. */
struct rules_cause {
    struct rules_ivs ivs;
    double host_wait_pct;
    const char *knob;
    unsigned needs;
    /* the finding's own: its measure reaches warn in its least-waited steps, so the waits for a
     * core cannot explain it away (RULES_WAIT_INFLATED) */
    int holds_unwaited;
};

/* A finding under construction: a gp_finding plus its growable arrays. */
struct rules_out {
    gp_finding f;
    gp_evidence_col cols[RULES_MAX_COLS];
    gp_cell *cells;
    gp_time_range *ranges;
    size_t cap_ranges;
    trace_arena *arena;
    struct rules_cause cause; /* kept by the engine until every rule ran */
};

typedef gp_status (*rules_fn)(struct rules_ctx *c, const double *p, struct rules_out *o);

/* One row of the rule table. Phase-1 rules run after phase 0 and may read ctx->done. */
/* What a rule needs from the trace; the engine reports "not applicable" instead of calling it. */
enum rules_needs {
    RULES_NEEDS_GPU = 1 << 0,   /* GPU activity */
    RULES_NEEDS_STEPS = 1 << 1, /* at least one analysed step */
    /* What the rule reads, for how sure its finding is against libprof's capture-health ledger
     * (rules_ledger.c): records of a kind it reads that were lost make it less sure. */
    RULES_READS_CPU = 1 << 2,  /* CPU ranges: steps, operators, loader waits */
    RULES_READS_GPU = 1 << 3,  /* GPU activity records: kernels, copies, sets, runtime calls */
    RULES_READS_MEM = 1 << 4,  /* memory records (CUPTI's, with the GPU activity records) */
    RULES_HOST_TIMED = 1 << 5, /* its gain is host time, which the profiler's own cost inflates */
    /* its measure grows with the time the host's threads wait for a core: host time against
     * device time (GT04), against other steps (GT14) or one thread's against another's (GT01
     * with loader threads, which sets it in its rules_out's cause: loader threads that wait for
     * a core make the steps wait for batches), not a share of one thread's own time, which an
     * even wait leaves as it was (GT17, GT18, GT01 loading in the training thread) */
    RULES_WAIT_INFLATED = 1 << 6
};

struct rules_def {
    const gp_rule_info *info;
    rules_fn fn;
    int phase;
    int needs; /* enum rules_needs */
};

/* ---- the rules (rules/rule_<name>.c, listed in rules/rules_list.h) ---- */
#define RULES_X(name)                                                                              \
    gp_status rules_##name(struct rules_ctx *c, const double *p, struct rules_out *o);             \
    extern const struct rules_def rules_##name##_def;
#include "rules/rules_list.h"
#undef RULES_X

/* In a rule file, after its `static const gp_rule_param params[]`: its catalogue entry. `phase`
 * 1 runs after every phase-0 rule and may read their findings (ctx->done); `needs` is a mask of
 * enum rules_needs (the engine says "not applicable" instead of calling the rule). */
#define RULES_INFO(name, id, title, phase, needs)                                                  \
    static const gp_rule_info rules_##name##_info = {id, #name, title, params,                     \
                                                     sizeof(params) / sizeof(params[0])};          \
    const struct rules_def rules_##name##_def = {&rules_##name##_info, rules_##name, phase, needs}

/* ---- rules_ctx.c ---- */
gp_status rules_ctx_init(struct rules_ctx *c, const gp_analysis *a, gp_error *err);
void rules_ctx_release(struct rules_ctx *c);
/* A context for another thread: the same trace and steps (shared, read-only) with lazy caches
 * of its own; released with rules_ctx_release_fork, before `src` is released. */
void rules_ctx_fork(struct rules_ctx *dst, const struct rules_ctx *src);
void rules_ctx_release_fork(struct rules_ctx *c);

/* Build the kernel (compute), communication and copy unions once. */
gp_status rules_ctx_intervals(struct rules_ctx *c);

/* ---- rules_host_use.c: what a thread was doing over a window ---- */
/* Each instant of a CPU thread goes to its outermost classifying range (a "top"): a loader wait,
 * an operator that calls the CUDA runtime (or a runtime call outside operators) or a short one
 * that does not, a longer one that does not (host work on CPU tensors), or none (outside
 * operators: Python, a sleep). */
struct rules_agg;
enum rules_host_use {
    RULES_HOST_LOADER,
    RULES_HOST_LAUNCH,
    RULES_HOST_WORK,
    RULES_HOST_OFF_OPS,
    RULES_HOST_USES
};
struct rules_host_map {
    uint8_t *launching; /* per event: it or a range inside it calls the CUDA runtime/driver */
    uint32_t *top;      /* the tops' event indices, by track, each track's in order of start */
    uint32_t *track_at; /* per track, its first entry in `top`; [n_tracks] the count */
    size_t n_tracks;
    int64_t dispatch_ns; /* median launching operator: an op launching nothing that takes
                            longer computes on the host; a shorter one (a view, an allocation,
                            a gradient stored) is part of issuing the step's work */
};
void rules_host_map_release(struct rules_host_map *m);
/* c's host map, built on first use and kept with the context's other lazy caches (GT04 and
 * GT08 both read it). GP_ENOMEM when it cannot be built. */
gp_status rules_ctx_host_map(struct rules_ctx *c, const struct rules_host_map **out);
/* Track `track`'s time in [ts, end) by use into use[]; the launching and working tops' shares
 * added to `by` (NULL: none) keyed (name, use). GP_ENOMEM where `by` cannot grow. */
gp_status rules_host_split(const struct rules_ctx *c, const struct rules_host_map *m,
                           uint32_t track, int64_t ts, int64_t end, int64_t use[RULES_HOST_USES],
                           struct rules_agg *by);

/* ---- rules_idle_cost.c: what a stall costs the GPU ---- */
/* GPU idle host-blocking calls cause: compute idle from a call's start to the first compute work
 * at or after its end (0 when compute stays busy throughout), less the copies that work waits
 * for on its own stream, at most the call's duration; calls made
 * before the GPU resumed after the previous one join its stall (idle capped by their summed
 * duration). Add calls in time order to a zeroed stall; `idle` is what this call adds. */
struct rules_stall {
    int64_t ts, resume, blocked, idle;
};
gp_status rules_stall_add(struct rules_ctx *c, struct rules_stall *s, int64_t ts, int64_t end,
                          int64_t *idle);
/* Kernels by device start, with their launch call's start. */
struct rules_launched {
    int64_t gpu_ts, call_ts;
};
struct rules_kernel_queue {
    struct rules_launched *k;
    size_t n;
};
gp_status rules_kernel_queue_build(const struct rules_ctx *c, struct rules_kernel_queue *q);
void rules_kernel_queue_release(struct rules_kernel_queue *q);
/* Copy time over [ts, end) that delays compute: not overlapped by kernels, from when the next
 * kernel to start was launched (before that the GPU would idle for the host anyway), or from
 * its start where its call `holds_host` (blocked the host while it ran). Needs
 * rules_ctx_intervals. */
int64_t rules_copy_delay(struct rules_ctx *c, const struct rules_kernel_queue *q, int64_t ts,
                         int64_t end, int holds_host);

/* Index of the first interval of `ivs` whose end is after ts (ivs->n if none). */
size_t rules_ivs_lower(const struct rules_ivs *ivs, int64_t ts);
/* The first event of track `tr` starting at or after ts (a track's events are sorted by start). */
uint32_t rules_track_first_at(const struct rules_ctx *c, const gp_track *tr, int64_t ts);
/* Room for n + 1 elements of `size` bytes in the growable array *v of capacity *cap (doubling,
 * from `first`): GP_ENOMEM, with *v untouched, where it cannot grow. */
gp_status rules_reserve(void **v, size_t *cap, size_t n, size_t size, size_t first);
/* |ivs ∩ [ts, end)| */
int64_t rules_ivs_overlap(const struct rules_ivs *ivs, int64_t ts, int64_t end);
/* Append [ts, end); then rules_ivs_merge before rules_ivs_overlap. Free with free(ivs->iv). */
gp_status rules_ivs_push(struct rules_ivs *ivs, int64_t ts, int64_t end);
/* Sort and merge in place into a disjoint union. */
void rules_ivs_merge(struct rules_ivs *ivs);

/* |ivs ∩ analysed steps| */
int64_t rules_ivs_in_steps(const struct rules_ctx *c, const struct rules_ivs *ivs);

/* Aggregation of rows by up to three keys (interned names or ids): count, time and bytes. */
struct rules_agg_row {
    uint32_t k[3];
    uint64_t count;
    int64_t ns, ns2, ns_max, bytes;
};
struct rules_agg {
    struct rules_agg_row *rows; /* one per distinct key */
    size_t n, cap;
    uint32_t *slots; /* open addressing over rows: index + 1, 0 = empty */
    size_t mask;
};
/* Add one measurement under a key: rows with equal keys are summed as they come (one row per
 * key, found by hash: a rule may add a row per gap or per copy, millions on a big trace). */
gp_status rules_agg_add(struct rules_agg *g, uint32_t k0, uint32_t k1, uint32_t k2, int64_t ns,
                        int64_t ns2, int64_t bytes);
/* Sort the rows by ns descending (ties by keys). */
void rules_agg_finish(struct rules_agg *g);
void rules_agg_release(struct rules_agg *g);

/* Memory: the allocator totals in force at `ts` (the last point at or before it; the first point
 * before any), and the capacity of device `id` (deviceProperties, else the "gprof" config; 0). */
const gp_mem_point *rules_mem_at(const gp_mem_series *s, int64_t ts);
int64_t rules_device_mem(const struct rules_ctx *c, int id);
/* ---- rules_ckpt.c: what activation checkpointing would save (GT10) ---- */
struct rules_ckpt {
    int64_t activations; /* bytes a step's allocations rise to its peak (median), 0 unknown */
    size_t n_allocs;     /* allocations in that rise (median) */
    int64_t saving;      /* bytes checkpointing would save; -1 unknown */
    int64_t forward_ns;  /* its time cost a step: kernels launched before the peak (median) */
    int from_trainer;    /* saving is the trainer's checkpoint_saving_bytes */
};
gp_status rules_ckpt_estimate(const struct rules_ctx *c, const gp_mem_series *s,
                              struct rules_ckpt *out);
/* Host calls that wait for the device (syncs, blocking copies and sets; not cudaStreamWaitEvent)
 * inside the analysed steps, per step: a CUDA graph cannot capture a step that makes them. */
double rules_host_syncs_per_step(const struct rules_ctx *c);
/* The highest compute capability (major) among the trace's devices; 0 unknown. */
int rules_compute_major(const struct rules_ctx *c);
/* The summary of a Tensor Core rule on a device without them (`major` < 7; 0 unknown). */
gp_status rules_summary_no_tensor_cores(struct rules_out *o, int major);
/* Why a memory rule has no device series to read: no GPU activity at all; no [memory] records
 * (PyTorch: profile_memory off; libprof: CUPTI's memory records missing); or only host
 * allocations (profile_memory on, nothing on a GPU). */
const char *rules_no_device_mem_why(const struct rules_ctx *c);

/* The analysed step index (0-based among analysed steps) of event `i`, or -1. */
long rules_step_of(const struct rules_ctx *c, uint32_t i);

/* Name classes of runtime/driver calls and kernels, cached per interned name. */
enum rules_name_class {
    RULES_NC_NONE = 0,
    RULES_NC_MALLOC,  /* cudaMalloc*, cudaFree*, cuMemAlloc*, cuMemCreate, cuMemFree* ... */
    RULES_NC_TC,      /* a Tensor Core kernel */
    RULES_NC_GEMM_FP, /* a GEMM/conv kernel that is not a Tensor Core kernel */
    RULES_NC_OTHER
};
enum rules_name_class rules_name_class(struct rules_ctx *c, const gp_event *e);

/* The analysed step index holding `ts`, or -1. */
long rules_step_at(const struct rules_ctx *c, int64_t ts);
/* Does a DataLoader range of the trace name `iter` ("_SingleProcessDataLoaderIter": PyTorch's
 * num_workers=0; "_MultiProcessingDataLoaderIter": worker processes)? */
int rules_loader_iter(const struct rules_ctx *c, const char *iter);

/* The interned name of CPU op `op` for grouping evidence, or GP_STR_NONE for none or a step. */
gp_str rules_op_key(const struct rules_ctx *c, uint32_t op);

/* The name of event `i` (GP_NONE gives ""). */
const char *rules_ev_name(const struct rules_ctx *c, uint32_t i);

/* Per-step mean of a total over the analysed steps (0 without steps). */
double rules_per_step(const struct rules_ctx *c, double total);

/* Share of the analysed step time, in percent. */
double rules_pct_of_steps(const struct rules_ctx *c, int64_t ns);

/* The k-th smallest of n int64 values (0-based, k clamped to n - 1; reorders `v`); 0 when n == 0.
 */
int64_t rules_kth(int64_t *v, size_t n, size_t k);

/* Median of n int64 values (reorders `v`); 0 when n == 0. */
int64_t rules_median(int64_t *v, size_t n);

/* In a qsort comparator: return the order of a and b where they differ (ties fall through to
 * the next key). */
#define RULES_CMP(a, b)                                                                            \
    if ((a) != (b))                                                                                \
    return (a) < (b) ? -1 : 1

/* ---- rules_acct.c: the trainer's CPU accounting ---- */
/* What the trainer's CPU accounting says (all unknown on other traces). */
struct rules_acct {
    int known;          /* the training thread's wait for a core is measured */
    int per_step;       /* ...in each analysed step (libprof's step args), not over the loop */
    double wait_share;  /* its time runnable without a core, % of wall time */
    double loader_run;  /* loader threads' share of a core while runnable; -1 unknown */
    double other_cores; /* other processes' mean busy cores; -1 unknown */
    long threads;       /* this run's compute threads: training, loader workers, extra OpenBLAS */
};
struct rules_acct rules_read_acct(const struct rules_ctx *c);
/* Every analysed step carries its thread's run-queue time (gp_step.runq_ns)? */
int rules_step_waits_known(const struct rules_ctx *c);
/* A step's time; with `own` (its waits known), less what its thread lost to others in it:
 * waiting for a core (the scheduler's run-queue time) and, on a virtual machine, to the host
 * (steal_ns), which a load on the machine adds, not the program. */
static inline int64_t rules_step_time(const gp_step *s, int own)
{
    int64_t d = s->end - s->ts - (own ? s->runq_ns + s->steal_ns : 0);
    return d > 0 ? d : 0;
}
/* Did the host take time from some analysed step (gp_step.steal_ns)? */
int rules_steps_stolen(const struct rules_ctx *c);
double rules_wait_lost_pct(const struct rules_ctx *c, const struct rules_acct *a);

/* ---- rules_stalls.c: operators far slower than their own fastest calls (GT19) ---- */
struct rules_stall_row {
    gp_str name, shape; /* shape GP_STR_NONE where the trace has none */
    uint64_t calls, stalled;
    int64_t fastest, worst, stall_ns;
};
struct rules_stalls {
    struct rules_stall_row *rows; /* ops with a stall, most stalled time first */
    size_t n;
    int64_t stall_ns;           /* the calls' time beyond their group's fastest call, stalls only */
    uint64_t calls, stalled;    /* leaf calls compared (in groups of >= 3), of them stalls */
    size_t steps_hit;           /* analysed steps with a stall */
    uint64_t gaps, gap_stalled; /* gaps between ranges compared (rules_gaps.c), of them waits */
    int64_t gap_ns;             /* the waits' time beyond their gap's fastest */
    int64_t gap_fastest, gap_worst; /* of the groups with a wait: the fastest gap, the longest */
    uint64_t faulted; /* calls a slice slower than their fastest, all of it faults' cost */
    int64_t fault_ns; /* ...their time beyond their fastest */
    size_t inflated;  /* ops whose fastest call took longer than their size warrants */
    gp_str inflated_name, inflated_shape; /* the one most over, its fastest call and ceiling */
    int64_t inflated_fastest, inflated_ceiling;
    struct rules_ivs ivs; /* each stall as the last `excess` ns of its call or gap, a union */
};
struct rules_stall_cfg {
    int64_t min_ns;           /* a stall is at least this long... */
    double ratio;             /* ...and this many times its group's fastest call */
    int64_t size_overhead_ns; /* the most a linear-cost op may take per call... */
    double size_ns_per_elem;  /* ...plus per element of its inputs (CPU-only traces) */
    double fault_ns_per_page; /* a call's first-touch page faults may cost this a page */
    int64_t max_gap_ns;       /* a wait between operators is no longer than this */
};
/* Group the leaf CPU ranges of the analysed steps by (thread, name, shape, k-th call in its
 * step); a call min_ns and ratio times longer than its group's fastest, or min_ns beyond what
 * its size warrants, is a stall. */
gp_status rules_stalls_scan(const struct rules_ctx *c, const struct rules_stall_cfg *k,
                            struct rules_stalls *s);
void rules_stalls_release(struct rules_stalls *s);

/* ---- rules_periodic.c ---- */
/* Are the steps at `at` (indices among the analysed steps, ascending) evenly spaced, as a stall
 * that comes every N steps leaves them? 3/4 of the spacings within a quarter of their median;
 * under 3 steps: 1 (nothing tells). */
int rules_periodic(const size_t *at, size_t n);
/* qsort's comparison of size_t values, ascending. */
int rules_cmp_size(const void *pa, const void *pb);

/* ---- rules_gaps.c: waits between operators (GT19) ---- */
/* The gaps between the ranges on each analysed step's track (CPU-only traces), grouped by
 * (gaps in the step, k-th gap); a gap min_ns and ratio times longer than its group's fastest
 * waited: its excess joins s (gap_ns, gap_stalled, ivs) and its step is marked in `hit`. */
gp_status rules_gaps_scan(const struct rules_ctx *c, const struct rules_stall_cfg *k,
                          struct rules_stalls *s, uint8_t *hit);

/* ---- rules_fault_allow.c: what first-touch page faults could add to a call (GT19) ---- */
/* Elements of the inputs in op `name`'s shape text plus an output's: their broadcast envelope,
 * or a convolution's output where that is more (RULES_UNREADABLE_SHAPE: unreadable). */
#define RULES_UNREADABLE_SHAPE (-1.0)
double rules_touched_elems(const char *name, const char *shape);
/* Those elements' 4 KiB pages (4 bytes each) times ns_per_page; 0 where unreadable. */
int64_t rules_fault_allowance(const char *name, const char *shape, double ns_per_page);
/* The same for a CPU op of a CPU-only trace with shapes; 0 on a GPU trace (its tensors are the
 * device's) or without shapes. */
int64_t rules_call_faults(const struct rules_ctx *c, const gp_event *e, gp_str shape,
                          double ns_per_page);

/* ---- rules_out.c: filling in a finding ---- */
/* Record the measurement. `cmp` is ">=" or "<"; the tiers decide the severity. */
void rules_measure(struct rules_out *o, const char *name, gp_unit unit, double value,
                   const char *cmp, double warn, double crit);
/* Fire at `sev` with `threshold` (for rules whose condition is not one metric). */
void rules_fire(struct rules_out *o, gp_severity sev, double threshold);
gp_status rules_summary(struct rules_out *o, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
gp_status rules_reco(struct rules_out *o, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
gp_status rules_knob(struct rules_out *o, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* The knob: the bundled trainer's flag on its traces, the PyTorch call on any other. */
gp_status rules_knob_for(const struct rules_ctx *c, struct rules_out *o, const char *trainer,
                         const char *torch);
gp_status rules_gain(struct rules_out *o, int64_t total_ns, int64_t per_step_ns, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));
/* Set the evidence columns: pairs of (name, unit), n of them. */
void rules_cols(struct rules_out *o, size_t n, const gp_evidence_col *cols);
/* Append a row; `cells` has n_cols entries (text is copied). Rows past RULES_MAX_ROWS are
 * dropped, so add them most costly first. */
gp_status rules_row(struct rules_out *o, const gp_cell *cells);
gp_status rules_range(struct rules_out *o, int64_t ts, int64_t end, const char *label);
/* The evidence table of copy rules (GT06, GT07) from rows keyed (copy name, API name, CPU op)
 * with ns = GPU time, ns2 = host time blocked; `gpu_time` 0 leaves the GPU time column out. */
gp_status rules_copy_evidence(const struct rules_ctx *c, struct rules_out *o, struct rules_agg *agg,
                              int gpu_time);
/* printf into the findings' arena; NULL on ENOMEM. */
const char *rules_strf(struct rules_out *o, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Human formats used in summaries: "12.3 ms", "1.5 MiB". Write into buf (>= 32 bytes). */
const char *rules_fmt_ns(char *buf, size_t cap, int64_t ns);
const char *rules_fmt_bytes(char *buf, size_t cap, double bytes);

/* ---- rules_explain.c: one verdict across rules ---- */
/* After every rule ran (items[i]'s cause in causes[i]): a fired finding whose evidence another
 * fired finding's cause explains -- half or more of the time its ranges point at lies in that
 * cause's intervals, its own fix would gain under 1% of the step while the cause stands, or its
 * knob sets a setting the cause's knob sets to another value -- is demoted to info, its knob
 * the cause's, its recommendation saying so. Frees the causes'
 * intervals; does nothing more when `rc`, the rules' status, is not GP_OK. @return rc or
 * GP_ENOMEM. */
gp_status rules_explain(gp_findings *fs, struct rules_cause *causes, gp_status rc);

/* ---- rules_worth.c: a fired finding whose fix would gain under 3% of the step is info ---- */
gp_status rules_small_gains(gp_findings *fs);

/* ---- rules_host_wait.c: a step without the profiler (no shorter than the GPU's busy time in
 * it), and the most a fix of the GPU's work alone can shorten it by (down to the host's own
 * work, net of the profiler's cost), per analysed step ---- */
int64_t rules_unprofiled_step_ns(struct rules_ctx *c);
int64_t rules_gpu_fix_cap_ns(struct rules_ctx *c);
/* A host call that blocks until the GPU is done (device, stream or event synchronize). */
int rules_sync_blocks_host(const gp_sync *s);

/* libprof's capture-health ledger as the sureness of findings reads it (rules_ledger.c); known 0
 * for a trace without one (PyTorch's, libprof's before it): then it says nothing. */
struct rules_ledger {
    int known;
    double cpu_dropped_pct; /* CPU records dropped, of those made and dropped */
    double gpu_dropped_pct; /* GPU activity records CUPTI dropped, of those converted and dropped */
    double gpu_bad_pct;     /* GPU records with no or impossible times, of those converted */
    double cost_pct;        /* the profiler's cost in the program's threads, of the trace's span */
};

/* rules_ledger.c: read `c`'s ledger into *out. */
void rules_ledger_read(const struct rules_ctx *c, struct rules_ledger *out);
/* Bound g->sure of `f` (a finding of `fs`) by the ledger and name the loss in g->why; fills
 * g->capture_*. */
void rules_ledger_sureness(const gp_findings *fs, const gp_finding *f, gp_unprofiled_gain *g);

/* The findings object (rules.c builds it; findings_fmt.c reads it). */
struct gp_findings {
    gp_finding *items;
    size_t n;
    trace_arena arena;
    const char *trace;
    size_t n_steps, n_analysed;
    int64_t mean_step_ns;
    int64_t median_step_ns;        /* of the analysed steps: a step without the stalls of a few */
    double python_frames_per_step; /* with_stack=True traces: their Python frames per step */
    gp_profiler_cost cost;         /* the profiler's own time in the analysed steps */
    int64_t gpu_busy_step_ns;      /* the GPU's busy time a step: a step without the profiler
                                      takes no less, however much host time the profiler took */
    struct rules_ledger ledger;    /* libprof's capture-health ledger, as shares */
};

/* Step s without the profiler: s less the profiler's cost, but no shorter than the GPU's busy time
 * in it (rules_cost.c). */
int64_t rules_unprofiled(int64_t step, int64_t cost, int64_t gpu_busy);
/* A point gain (f's, net of its profiler's part) as a share of the median step without the
 * profiler (rules_cost.c); `fs` holds the trace's steps and cost (a rule reads c->done). */
void rules_unprofiled_point(const gp_findings *fs, const gp_finding *f, gp_unprofiled_gain *out);
/* rules_cost.c: the profiler's own time in the analysed steps of `c`. @return GP_OK or
 * GP_ENOMEM. */
gp_status rules_profiler_cost(const struct rules_ctx *c, gp_profiler_cost *out);
/* Is `e` a record the profiler made on a host thread (each costs that thread time)? */
int rules_host_record(const gp_event *e);

#endif
