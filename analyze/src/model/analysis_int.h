/* analysis_int.h: the private layout of gp_analysis and helpers shared by analysis.c (links,
 * steps, breakdown), gpu_timeline.c, analysis_lists.c (memory, kernels, copies, syncs, launches)
 * and key_avg.c. */
#ifndef GP_ANALYZE_ANALYSIS_INT_H
#define GP_ANALYZE_ANALYSIS_INT_H

#include "gp/analysis.h"
#include "reader/trace_int.h"

#include <pthread.h>

/* A half-open time interval [a, b). */
typedef struct ival {
    int64_t a, b;
} ival;

/* int64 id -> event index, open addressing; key and value share a 12-byte slot (one cache
 * miss, and no more memory than separate arrays: the key is stored as two halves). */
typedef struct id_slot {
    uint32_t key_lo, key_hi, val;
} id_slot;

static inline int id_slot_is(const id_slot *s, int64_t key)
{
    return s->key_lo == (uint32_t)(uint64_t)key && s->key_hi == (uint32_t)((uint64_t)key >> 32);
}

static inline int64_t id_slot_key(const id_slot *s)
{
    return (int64_t)(((uint64_t)s->key_hi << 32) | s->key_lo);
}

/* int64 id -> event index. Two layouts behind one interface: a flat array over [base,
 * base + span) when the ids are dense, as Kineto's correlation and External ids are (one slot
 * per id, and the link passes, which walk events in time order, read it nearly in order);
 * else open addressing. */
typedef struct id_map {
    id_slot *slots; /* hash layout */
    size_t mask, n;
    uint32_t *dense; /* dense layout: slot of key k is dense[k - base] */
    int64_t base;
    uint64_t span;
} id_map;

/* A hash map for about `expected` ids. @return GP_OK or GP_ENOMEM. */
gp_status id_map_init(id_map *m, size_t expected);
/* A map for `count` ids known to lie in [lo, hi]: dense when the range is at most a few times
 * the count (it then costs less memory than the hash), else a hash. */
gp_status id_map_init_range(id_map *m, int64_t lo, int64_t hi, size_t count);
void id_map_release(id_map *m);
/* Insert unless present (the first event with an id wins). @return GP_OK, GP_ENOMEM, or
 * GP_EINVAL for a key outside a dense map's range (it is sized from every key: a bug, reported
 * as an internal error, never as memory). */
gp_status id_map_put(id_map *m, int64_t key, uint32_t val);
uint32_t id_map_get(const id_map *m, int64_t key);

/* Where `key`'s slot lies, to prefetch: lookups walk events in order, and in the hash layout
 * land on random slots, so the link passes prefetch a few events ahead. */
static inline const void *id_map_home(const id_map *m, int64_t key)
{
    if (m->dense) {
        uint64_t k = (uint64_t)key - (uint64_t)m->base;
        return k < m->span ? &m->dense[k] : m->dense;
    }
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return &m->slots[(size_t)(h ^ (h >> 29)) & m->mask];
}

struct gp_analysis {
    const gp_trace *t;
    const gp_event *ev;
    size_t n;
    int64_t kernel_wait_ns;
    int threads; /* for its passes, and for key averages and rules over it */
    /* Per event, 8 bytes in all: link_of is the parent (CPU ranges) or the runtime call (GPU
     * activities), kinds that never overlap (see analysis_parent/analysis_runtime); step_of is
     * derived on demand (analysis_step_of). */
    uint32_t *link_of, *op_of;
    trace_vec steps; /* gp_step */
    gp_step_stats stats;
    trace_vec devices;  /* gp_device_stats */
    trace_vec dev_gaps; /* gp_idle_gap, built on first use (gpu_timeline.c) */
    trace_vec streams;  /* gp_stream_stats */
    trace_vec stream_gaps;
    trace_vec mem_series;        /* gp_mem_series */
    trace_vec mem_points;        /* gp_mem_point, series point into it */
    trace_vec kernels;           /* gp_kernel_stat */
    trace_vec memcpys;           /* gp_memcpy */
    trace_vec syncs;             /* gp_sync */
    trace_vec launches;          /* gp_launch */
    uint32_t n_gaps_counted;     /* gaps counted so far by analysis_gpu */
    int gaps_built;              /* dev_gaps and stream_gaps are filled */
    int launches_built;          /* launches is filled (analysis_lists.c) */
    pthread_mutex_t gaps_mu;     /* guards the lazy fill of the gap lists */
    pthread_mutex_t launches_mu; /* ...and of the launch list (rules run on two threads) */
};

/* Sort and merge intervals in place. @return the new count. */
size_t ival_merge(ival *v, size_t n);
/* @return the total length of disjoint intervals. */
int64_t ival_total(const ival *v, size_t n);
/* out = a minus b (both sorted, disjoint); out needs room for na + nb. @return count. */
size_t ival_subtract(const ival *a, size_t na, const ival *b, size_t nb, ival *out);
/* @return |union(v) within [lo, hi)| for sorted, disjoint v. */
int64_t ival_clip_total(const ival *v, size_t n, int64_t lo, int64_t hi);

/* The thread count an analysis was made with (gp_analysis_opts.threads, resolved). */
int analysis_threads_of(const gp_analysis *a);

/* analysis_link.c: parent_of, runtime_of and op_of of every event (and the steps, found on
 * one of its threads). @return GP_OK, GP_ENOMEM, or GP_EINVAL as id_map_put. */
gp_status analysis_link_all(gp_analysis *a);
/* analysis_steps.c: the ProfilerStep ranges (a->steps); their alignment to the device; the
 * step-time statistics. @return GP_OK or GP_ENOMEM. */
gp_status analysis_find_steps(gp_analysis *a);
/* analysis_period.c: where analysis_find_steps found neither markers nor optimizer steps (one
 * synthetic step), the steps from the host's repeating launches, once GPU work is linked to its
 * launch calls; else the synthetic step stays. @return GP_OK or GP_ENOMEM. */
gp_status analysis_steps_from_launches(gp_analysis *a);
/* analysis_steal.c: each step's steal_ns, once the steps are final (after
 * analysis_steps_from_launches). @return GP_OK or GP_ENOMEM. */
gp_status analysis_steps_steal(gp_analysis *a);
void analysis_align_steps(gp_analysis *a);
gp_status analysis_step_stats(gp_analysis *a);
/* qsort's comparison of int64_t values, ascending. */
int analysis_cmp_i64(const void *pa, const void *pb);
/* analysis_breakdown.c: each step's bd. @return GP_OK or GP_ENOMEM. */
gp_status analysis_breakdown(gp_analysis *a);

/* gpu_timeline.c */
gp_status analysis_gpu(gp_analysis *a); /* GP_OK or GP_ENOMEM */
/* analysis_lists.c */
gp_status analysis_lists(gp_analysis *a); /* GP_OK or GP_ENOMEM */

static inline int analysis_is_gpu_work(int kind)
{
    return kind == GP_EV_KERNEL || kind == GP_EV_MEMCPY || kind == GP_EV_MEMSET;
}

static inline int analysis_is_cpu_range(int kind)
{
    return kind == GP_EV_CPU_OP || kind == GP_EV_USER_ANNOTATION || kind == GP_EV_RUNTIME ||
           kind == GP_EV_DRIVER || kind == GP_EV_PYTHON;
}

/* @return the innermost enclosing CPU range of event i on its track, or GP_NONE. */
static inline uint32_t analysis_parent(const gp_analysis *a, uint32_t i)
{
    return analysis_is_cpu_range(a->ev[i].kind) ? a->link_of[i] : GP_NONE;
}

/* @return the runtime call that launched GPU activity i (by correlation), or GP_NONE. */
static inline uint32_t analysis_runtime(const gp_analysis *a, uint32_t i)
{
    const gp_event *e = &a->ev[i];
    return (e->flags & GP_EVF_GPU) && e->kind != GP_EV_GPU_USER_ANNOTATION ? a->link_of[i]
                                                                           : GP_NONE;
}

#define ANALYSIS_NO_STEP (-1) /* analysis_step_of: in no step */
/* @return the step of event i (a GPU activity: its runtime call's), or ANALYSIS_NO_STEP. */
int32_t analysis_step_of(const gp_analysis *a, uint32_t i);

#endif
