/* gp/analysis.h: metrics derived once from a gp_trace, for reports, rules and exporters:
 * links (runtime <-> GPU activity <-> op), steps, tb_plugin's step-time breakdown, the GPU
 * timeline (busy union, idle gaps with HTA's split), memory series, per-kernel stats, memcpys,
 * syncs, launches, and PyTorch's key averages. Consumers read these; they never re-derive them.
 * Everything returned is borrowed, valid until gp_analysis_free(), and safe to read from threads.
 * `err` and NULL: the conventions in gp/trace.h. */
#ifndef GP_ANALYZE_ANALYSIS_H
#define GP_ANALYZE_ANALYSIS_H

#include "gp/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The analysis of one trace. It borrows the trace: free it before gp_trace_free(). */
typedef struct gp_analysis gp_analysis;

/** Options for gp_analysis_run(); NULL means defaults. */
typedef struct gp_analysis_opts {
    int64_t kernel_wait_ns; /**< HTA consecutive_kernel_delay; 0 = 30000 (30 us) */
    /** Threads for the analysis' passes, and for key averages and rules over it: 0 = one per
     * online CPU; it uses at most 2. */
    int threads;
} gp_analysis_opts;

/** Analyse `t`.
 * @param t the trace, borrowed: keep it until gp_analysis_free.
 * @param opts NULL for defaults.
 * @param out receives the analysis (free with gp_analysis_free).
 * @param err on failure, what failed; NULL: the status alone.
 * @return GP_OK or GP_ENOMEM. Thread-safe for distinct outputs. */
gp_status gp_analysis_run(const gp_trace *t, const gp_analysis_opts *opts, gp_analysis **out,
                          gp_error *err);

/** Free an analysis. NULL is a no-op. */
void gp_analysis_free(gp_analysis *a);

/** @return the trace this analysis was computed from. */
const gp_trace *gp_analysis_trace(const gp_analysis *a);

/* ---- Links between events (indices into gp_trace_events(); GP_NONE when absent). ---- */

/** For a GPU activity: the runtime/driver call with the same correlation id. */
uint32_t gp_analysis_runtime_of(const gp_analysis *a, uint32_t ev);

/** For a GPU activity or runtime call: the CPU op (cpu_op or user_annotation) it belongs to:
 * the op whose "External id" it carries, else the innermost op enclosing the runtime call. */
uint32_t gp_analysis_op_of(const gp_analysis *a, uint32_t ev);

/** For a CPU event (op, annotation, runtime, python): the innermost enclosing CPU event on the
 * same track (PyTorch's cpu_parent). */
uint32_t gp_analysis_parent_of(const gp_analysis *a, uint32_t ev);

/** @return the index in gp_analysis_steps() of the step an event belongs to, or -1: a CPU
 * event by its start inside the host step range, a GPU activity by its runtime call's step. */
int gp_analysis_step_of(const gp_analysis *a, uint32_t ev);

/* ---- Steps and the step-time breakdown (tb_plugin's overview). ---- */

/** Breakdown categories, in tb_plugin's priority order: each instant of a step is given to the
 * first category active then, so the parts sum to the step time exactly. */
typedef enum gp_bd_cat {
    GP_BD_KERNEL = 0,
    GP_BD_MEMCPY,
    GP_BD_MEMSET,
    GP_BD_COMMUNICATION,
    GP_BD_RUNTIME,
    GP_BD_DATALOADER,
    GP_BD_CPU_EXEC,
    GP_BD_OTHER,
    GP_BD_COUNT
} gp_bd_cat;

/** @return "Kernel", "Memcpy", "Memset", "Communication", "Runtime", "DataLoader", "CPU Exec",
 * "Other". */
const char *gp_bd_cat_name(gp_bd_cat c);

/** Where steps come from in a trace without ProfilerStep#N markers (gp_step.inferred). */
typedef enum gp_steps_from {
    GP_STEPS_FROM_OPTIMIZER = 1, /**< each ends where an Optimizer.step#... range ends (two or more
                                      of them, on one thread) */
    GP_STEPS_FROM_LAUNCHES = 2   /**< each starts where the host's launch sequence repeats */
} gp_steps_from;

/** One training step. With no ProfilerStep#N in the trace the steps end where PyTorch's optimizer
 * steps end, where it stepped twice or more; else, where the host's launches repeat with a period,
 * each iteration is a step (`inferred` says which); else one synthetic step spans the CPU events
 * (tb_plugin's rule), flagged `synthetic`. */
typedef struct gp_step {
    int64_t num;    /**< N of ProfilerStep#N (-1 if synthetic) */
    uint32_t event; /**< the ProfilerStep event, or GP_NONE */
    int synthetic;
    int inferred;      /**< no markers: a gp_steps_from (num counts the steps from 1), else 0 */
    size_t period;     /**< GP_STEPS_FROM_LAUNCHES: launches per iteration */
    int one_iteration; /**< synthetic: the optimizer stepped exactly once in the trace */
    int64_t host_ts, host_end; /**< the CPU range */
    int64_t ts, end;           /**< aligned to the device as tb_plugin does: end = max(host end,
                                    last end of GPU work launched in the step), start = max(host
                                    start, previous step's end). Breakdown is over [ts, end). */
    int64_t bd[GP_BD_COUNT];   /**< breakdown, ns; sums to end - ts */
    uint32_t n_gpu_ops;        /**< GPU activities launched from inside the host step */
    int64_t mem_alloc_bytes;   /**< churn: sum of positive device "[memory]" Bytes in the step */
    int64_t mem_free_bytes;    /**< sum of |negative| device Bytes in the step */
    int64_t cpu_ns, runq_ns;   /**< the stepping thread's time on a core and runnable waiting for
                                    one in the host step (libprof's step args), or -1 */
    int64_t steal_ns;          /**< of the rest of the host step, what the host may have taken
                                    from its CPU (libprof's steal counter), else 0 */
} gp_step;

/** @return the steps sorted by start, and their count (>= 1 when the trace has events). */
const gp_step *gp_analysis_steps(const gp_analysis *a, size_t *n);

/** Step-time statistics over all steps, in ns. */
typedef struct gp_step_stats {
    size_t n;
    int64_t mean, p50, p95, min, max; /**< of (end - ts); percentiles by nearest rank */
    int64_t bd_mean[GP_BD_COUNT];     /**< per-category mean over steps */
    int64_t bd_total[GP_BD_COUNT];    /**< per-category sum over steps */
} gp_step_stats;

/** @return step statistics; never NULL. */
const gp_step_stats *gp_analysis_step_stats(const gp_analysis *a);

/* ---- GPU timeline. ---- */

/** HTA's classification of an idle interval on a stream. */
typedef enum gp_idle_kind {
    GP_IDLE_HOST_WAIT = 0, /**< the next launch call started after the GPU went idle */
    GP_IDLE_KERNEL_WAIT,   /**< shorter than kernel_wait_ns, launched in time (launch overhead) */
    GP_IDLE_OTHER,         /**< the rest: syncs, event waits, ... */
    GP_IDLE_COUNT
} gp_idle_kind;

/** @return "host wait", "kernel wait", "other". */
const char *gp_idle_kind_name(gp_idle_kind k);

/** An idle interval [ts, end) on a device (stream = -1: no GPU activity on the whole device)
 * or on one stream (HTA's per-stream view). */
typedef struct gp_idle_gap {
    int device;
    int64_t stream;  /**< -1 for device-level gaps */
    int64_t ts, end; /**< ns */
    uint8_t kind;    /**< gp_idle_kind */
    uint32_t prev;   /**< the GPU event that ended before the gap (GP_NONE if none) */
    uint32_t next;   /**< the GPU event that starts the gap's end */
} gp_idle_gap;

/** Per-stream totals (HTA get_idle_time_breakdown). */
typedef struct gp_stream_stats {
    int device;
    int64_t stream;
    uint64_t n_events;              /**< kernels, memcpys and memsets */
    int64_t busy_ns;                /**< sum of durations (union on this stream) */
    int64_t idle_ns[GP_IDLE_COUNT]; /**< idle time per kind */
    uint32_t first_gap, n_gaps;     /**< this stream's gaps in gp_analysis_stream_gaps() */
} gp_stream_stats;

/** Per-device totals over the device's GPU span (first GPU start .. last GPU end). */
typedef struct gp_device_stats {
    int device;
    int64_t span_ts, span_end;      /**< span of kernels, memcpys and memsets */
    int64_t busy_ns;                /**< |union of kernel, memcpy, memset intervals| */
    int64_t kernel_busy_ns;         /**< |union of kernel intervals| */
    int64_t step_kernel_busy_ns;    /**< |kernel union within [first step, last step end)|:
                                         tb_plugin's GPU Utilization numerator */
    int64_t steps_ns;               /**< last step end - first step start (its denominator) */
    int64_t idle_ns[GP_IDLE_COUNT]; /**< device-level gaps by kind; sum = span - busy */
    int64_t compute_ns, comm_ns, memory_ns; /**< HTA temporal breakdown: union of each type */
    uint64_t n_kernels, n_memcpy, n_memset;
    uint32_t first_gap, n_gaps; /**< this device's gaps in gp_analysis_device_gaps() */
} gp_device_stats;

/** @return per-device stats sorted by device, and their count (0 without GPU activity). */
const gp_device_stats *gp_analysis_devices(const gp_analysis *a, size_t *n);

/** @return device-level idle gaps (the complement of the busy union within the span), sorted by
 * (device, ts). The kind of a gap comes from the event that ends it: host wait if its launch
 * call started after the gap began, kernel wait if shorter than kernel_wait_ns, else other. */
const gp_idle_gap *gp_analysis_device_gaps(const gp_analysis *a, size_t *n);

/** @return per-stream stats sorted by (device, stream), and their count. */
const gp_stream_stats *gp_analysis_streams(const gp_analysis *a, size_t *n);

/** @return per-stream gaps exactly as HTA defines them (consecutive activities on a stream,
 * host wait if ts_runtime > prev_end), sorted by (device, stream, ts). */
const gp_idle_gap *gp_analysis_stream_gaps(const gp_analysis *a, size_t *n);

/* ---- Memory. ---- */

/** One point of a memory series: the allocator's totals after a "[memory]" record. */
typedef struct gp_mem_point {
    int64_t ts;
    int64_t allocated, reserved;
    uint32_t event;
} gp_mem_point;

/** The memory series of one device (device_type 1) or of the host (device_type 0). */
typedef struct gp_mem_series {
    int device_type, device_id;
    const gp_mem_point *points; /**< sorted by ts */
    size_t n_points;
    int64_t peak_allocated, peak_allocated_ts;
    int64_t peak_reserved, peak_reserved_ts;
    int64_t total_alloc_bytes, total_free_bytes; /**< churn over the trace */
    uint64_t n_allocs, n_frees;
} gp_mem_series;

/** @return the memory series sorted by (device_type, device_id), and their count (0 when the
 * trace was recorded without profile_memory). */
const gp_mem_series *gp_analysis_memory(const gp_analysis *a, size_t *n);

/* ---- GPU activity lists. ---- */

/** Per-kernel-name statistics (kernels only; memcpy/memset are in gp_analysis_memcpys()). */
typedef struct gp_kernel_stat {
    gp_str name;
    uint64_t count;
    int64_t total_ns, min_ns, max_ns, mean_ns;
    double blocks_per_sm, occupancy; /**< duration-weighted means (occupancy -1 if absent) */
} gp_kernel_stat;

/** @return kernel stats sorted by total_ns descending, ties by name, and their count. */
const gp_kernel_stat *gp_analysis_kernel_stats(const gp_analysis *a, size_t *n);

/** Whether a kernel's name says it runs on Tensor Cores: torch-tb-profiler's list (from NVIDIA
 * PyProf) plus the newer cuBLAS/CUTLASS/Hopper spellings (rules_anchors.md §8 GT13); a SIMT
 * CUTLASS kernel is not one. The one definition for GT13 and every view that counts them. */
int gp_kernel_uses_tensor_cores(const char *name);

/** A memcpy or memset on the device, with what launched it. */
typedef struct gp_memcpy {
    uint32_t event;   /**< the GPU event */
    uint32_t runtime; /**< the launching runtime call, or GP_NONE */
    uint32_t op;      /**< the owning CPU op, or GP_NONE */
    int is_memset;
    uint8_t copy_kind;        /**< gp_copy_kind */
    uint8_t src_mem, dst_mem; /**< gp_mem_kind */
    int blocking;             /**< launched by a synchronous call (cudaMemcpy, not ...Async) */
    int device;
    int64_t stream;
    int64_t bytes;
    int64_t ts, dur;
} gp_memcpy;

/** @return memcpys and memsets sorted by ts, and their count. */
const gp_memcpy *gp_analysis_memcpys(const gp_analysis *a, size_t *n);

/** What a synchronisation waits for. */
typedef enum gp_sync_kind {
    GP_SYNC_DEVICE = 0,  /**< cudaDeviceSynchronize, cuCtxSynchronize */
    GP_SYNC_STREAM,      /**< cudaStreamSynchronize, cuStreamSynchronize */
    GP_SYNC_EVENT,       /**< cudaEventSynchronize, cuEventSynchronize */
    GP_SYNC_STREAM_WAIT, /**< cudaStreamWaitEvent (GPU-side wait; the host does not block) */
    GP_SYNC_MEMCPY,      /**< a synchronous cudaMemcpy / cudaMemset */
    GP_SYNC_OTHER
} gp_sync_kind;

/** @return "device", "stream", "event", "stream wait", "memcpy", "other". */
const char *gp_sync_kind_name(gp_sync_kind k);

/** A synchronisation: a blocking host call, or a GPU-side cuda_sync record. */
typedef struct gp_sync {
    uint32_t event; /**< runtime/driver call or cuda_sync event */
    uint32_t op;    /**< the CPU op it belongs to, or GP_NONE */
    uint8_t kind;   /**< gp_sync_kind */
    int gpu_side;   /**< 1 for cuda_sync events (the GPU's view), 0 for host calls */
    int64_t ts, dur;
} gp_sync;

/** @return syncs sorted by ts, and their count. */
const gp_sync *gp_analysis_syncs(const gp_analysis *a, size_t *n);

/** A launch: a runtime/driver call and one GPU activity it enqueued (joined on correlation). */
typedef struct gp_launch {
    uint32_t runtime;     /**< the runtime/driver event */
    uint32_t gpu;         /**< the kernel/memcpy/memset */
    uint32_t op;          /**< the owning CPU op, or GP_NONE */
    int64_t launch_delay; /**< max(0, gpu.ts - (runtime.ts + runtime.dur)), HTA's definition */
} gp_launch;

/** @return launches sorted by the runtime call's ts, and their count. GPU activities with no
 * runtime call in the trace are not listed (gp_analysis_runtime_of() gives GP_NONE). */
const gp_launch *gp_analysis_launches(const gp_analysis *a, size_t *n);

/* ---- Key averages (PyTorch's prof.key_averages()). ---- */

/** Sort keys, as PyTorch spells them (cuda_* and device_* are the same key). */
typedef enum gp_sort_key {
    GP_SORT_CPU_TIME = 0,         /**< "cpu_time": average CPU total per call */
    GP_SORT_CUDA_TIME,            /**< "cuda_time", "device_time": average device total per call */
    GP_SORT_CPU_TIME_TOTAL,       /**< "cpu_time_total" */
    GP_SORT_CUDA_TIME_TOTAL,      /**< "cuda_time_total", "device_time_total" */
    GP_SORT_SELF_CPU_TIME_TOTAL,  /**< "self_cpu_time_total" */
    GP_SORT_SELF_CUDA_TIME_TOTAL, /**< "self_cuda_time_total", "self_device_time_total" */
    GP_SORT_COUNT                 /**< "count" */
} gp_sort_key;

/** Parse a PyTorch sort key name. @return GP_OK or GP_EINVAL (err lists the valid keys). */
gp_status gp_sort_key_parse(const char *s, gp_sort_key *out, gp_error *err);

/** The one default order of operator tables (report without --sort, run's table, the HTML
 * report): @return GP_SORT_CUDA_TIME_TOTAL when `a` has device activity, else
 * GP_SORT_CPU_TIME_TOTAL. */
gp_sort_key gp_sort_key_default(const gp_analysis *a);

/** Row grouping. */
typedef enum gp_group_by {
    GP_GROUP_NAME = 0,  /**< one row per name (ProfilerStep#N folded into ProfilerStep*) */
    GP_GROUP_NAME_SHAPE /**< one row per (name, Input Dims) */
} gp_group_by;

/** One key-averages row. Times in ns. Device rows (kernels, memcpys, memsets) have no CPU time;
 * CPU rows get the device time of the GPU work linked to them and their children. Memory is
 * PyTorch's: the bytes of the [memory] records (any thread) that fall inside the op, self = less
 * its children's; records inside no op are the row "[memory]". */
typedef struct gp_keyavg_row {
    const char *name;  /**< ProfilerStep#N shown as "ProfilerStep*" */
    const char *shape; /**< Input Dims text for GP_GROUP_NAME_SHAPE ("[]" for none), else "" */
    int is_device;     /**< a GPU activity row */
    int is_annotation; /**< a user_annotation (record_function): keyed apart from an op */
    uint64_t count;
    int64_t self_cpu, cpu_total;
    int64_t self_device, device_total;
    int64_t cpu_mem, self_cpu_mem;       /**< "CPU Mem", "Self CPU Mem" (bytes) */
    int64_t device_mem, self_device_mem; /**< "CUDA Mem", "Self CUDA Mem" (bytes) */
    uint64_t flops; /**< FLOPs over its calls as PyTorch estimates them (with_flops traces) */
} gp_keyavg_row;

/** A computed key-averages table. */
typedef struct gp_keyavg {
    gp_keyavg_row *rows;
    size_t n_rows;
    int64_t self_cpu_total;    /**< "Self CPU time total" */
    int64_t self_device_total; /**< "Self CUDA time total" (device rows only, as PyTorch) */
    int has_device;            /**< any GPU activity: print the CUDA columns */
    int has_memory;        /**< [memory] records (profile_memory=True): print the CPU Mem columns */
    int has_device_memory; /**< some row has self device memory: print the CUDA Mem columns */
    int has_flops;         /**< recorded with with_flops=True: rows carry FLOPs */
} gp_keyavg;

/** Compute key averages, sorted by `key` descending, ties by name then shape ascending.
 * @param a the analysis. @param group rows per name or per (name, shape). @param key the order.
 * @param out caller storage, released with gp_keyavg_release().
 * @param err NULL: the status alone. @return GP_OK or GP_ENOMEM. */
gp_status gp_keyavg_compute(const gp_analysis *a, gp_group_by group, gp_sort_key key,
                            gp_keyavg *out, gp_error *err);

/** Free what gp_keyavg_compute() put in `k` (not `k` itself). NULL is a no-op. */
void gp_keyavg_release(gp_keyavg *k);

#ifdef __cplusplus
}
#endif
#endif
