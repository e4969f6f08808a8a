/* gp/trace.h: a Chrome-trace file (ours or PyTorch/Kineto's, .json or .json.gz) read into compact,
 * arena-allocated event records: interned names, one 48-byte gp_event per event, grouped per
 * (pid, tid) track and sorted by start. The JSON text is never kept. See DESIGN.md "Analysis
 * model". Everything returned is borrowed from the gp_trace and valid until gp_trace_free().
 *
 * Conventions of every analyze header (gp/trace.h, run_config.h, analysis.h, report.h, rules.h,
 * compare.h, job.h): a `gp_error *err` receives the failure's status, file, position and message,
 * and may be NULL: the returned status is then the same, only the detail is lost. An `opts`
 * pointer may be NULL for the defaults where its function says so; `out` parameters are
 * required. Every free function takes NULL as a no-op. Nothing prints or exits: output goes only
 * to a FILE * the caller hands over. */
#ifndef GP_ANALYZE_TRACE_H
#define GP_ANALYZE_TRACE_H

#include "gp/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An opened trace. Immutable after gp_trace_open(): safe to read from many threads. */
typedef struct gp_trace gp_trace;

/** An interned string: an index into the trace's string table (gp_trace_str()). */
typedef uint32_t gp_str;
#define GP_STR_NONE UINT32_MAX /**< no string (absent field) */
#define GP_NONE     UINT32_MAX /**< no event / no record (for uint32_t indices) */
#define GP_ID_NONE  (-1)       /**< absent correlation or External id (int64_t fields) */

/** What an event is, from its `cat` (both Kineto schemas) and, for instants, its name. */
typedef enum gp_ev_kind {
    GP_EV_OTHER = 0,           /**< a known but unclassified category, or no cat */
    GP_EV_CPU_OP,              /**< cpu_op, Operator (2021) */
    GP_EV_USER_ANNOTATION,     /**< user_annotation (ProfilerStep#N, record_function) */
    GP_EV_GPU_USER_ANNOTATION, /**< gpu_user_annotation (annotation projected on a stream) */
    GP_EV_RUNTIME,             /**< cuda_runtime, Runtime (2021), other *_runtime */
    GP_EV_DRIVER,              /**< cuda_driver */
    GP_EV_KERNEL,              /**< kernel, Kernel (2021) */
    GP_EV_MEMCPY,              /**< gpu_memcpy, Memcpy (2021) */
    GP_EV_MEMSET,              /**< gpu_memset, Memset (2021) */
    GP_EV_SYNC,                /**< cuda_sync (GPU-side "Stream Sync", "Event Sync", ...) */
    GP_EV_CUDA_EVENT,          /**< cuda_event */
    GP_EV_PYTHON,              /**< python_function */
    GP_EV_MEMORY,              /**< the "[memory]" instant (allocator sample) */
    GP_EV_INSTANT,             /**< any other instant (ph i/I) */
    GP_EV_OVERHEAD,            /**< overhead */
    GP_EV_COLLECTIVE,          /**< collective_comm */
    GP_EV_TRACE_SPAN,          /**< cat "Trace" (the "PyTorch Profiler (0)" span) */
    GP_EV_KIND_COUNT
} gp_ev_kind;

/** Event flags, derived once per interned name or track. */
enum gp_ev_flags {
    GP_EVF_GPU = 1 << 0,        /**< runs on a device (kernel, memcpy, memset, sync, gpu annot.) */
    GP_EVF_STEP = 1 << 1,       /**< a ProfilerStep#N range on a CPU track */
    GP_EVF_DATALOADER = 1 << 2, /**< enumerate(DataLoader)#*.__next__ or enumerate(DataPipe)#* */
    GP_EVF_COMM = 1 << 3,       /**< communication: nccl:* / gloo:* op, or an nccl kernel */
    GP_EVF_SYNC_API = 1 << 4,   /**< a blocking runtime call: cuda*Synchronize, cudaMemcpy, ... */
    GP_EVF_LAUNCH_API = 1 << 5, /**< a runtime/driver call that enqueues GPU work */
    GP_EVF_FROM_BE = 1 << 6,    /**< built from a B/E pair (not an X event) */
    GP_EVF_DMA = 1 << 7         /**< a kernel named dma* (MTIA): memory, as HTA counts it */
};

/** One event: 48 bytes. Times are integer nanoseconds in the trace's timebase:
 * unix ns = ts + gp_trace_info.base_time_ns. Index events by their position in gp_trace_events().
 */
typedef struct gp_event {
    int64_t ts;     /**< start, ns */
    int64_t dur;    /**< duration, ns (>= 0; 0 for instants) */
    int64_t corr;   /**< CUPTI "correlation" (runtime <-> GPU activity), or GP_ID_NONE */
    int64_t ext_id; /**< "External id" (op <-> runtime <-> GPU activity), or GP_ID_NONE */
    gp_str name;    /**< interned name (ProfilerStep#N kept verbatim) */
    uint32_t track; /**< index into gp_trace_tracks() */
    uint32_t aux;   /**< kind-specific side record; use the accessors below, never directly */
    uint8_t kind;   /**< gp_ev_kind */
    uint8_t ph;     /**< phase character as read: 'X', 'i', ... (B/E pairs become 'X') */
    uint16_t flags; /**< gp_ev_flags */
} gp_event;

/** A (pid, tid) track. Its events are gp_trace_events()[first .. first+count), sorted by
 * ts ascending, then dur descending (so a parent precedes the children it contains). */
typedef struct gp_track {
    int64_t pid, tid; /**< numeric ids; for string ids see pid_str/tid_str (then pid/tid = -1) */
    gp_str pid_str;   /**< string pid ("Spans", "Traces", ""), or GP_STR_NONE */
    gp_str tid_str;   /**< string tid ("stream 7" in 2021 traces), or GP_STR_NONE */
    gp_str name;      /**< thread_name metadata, or GP_STR_NONE */
    gp_str proc_name; /**< process_name metadata, or GP_STR_NONE */
    int is_gpu;       /**< holds GPU activity (kernel/memcpy/memset/sync) */
    int device;       /**< for GPU tracks: device id, else -1 */
    int64_t stream;   /**< for GPU tracks: stream id (from args or "stream N"), else -1 */
    uint32_t first;   /**< index of the first event */
    uint32_t count;   /**< number of events */
} gp_track;

/** Direction of a memcpy, parsed from its name ("Memcpy HtoD (Pageable -> Device)"). */
typedef enum gp_copy_kind {
    GP_COPY_OTHER = 0,
    GP_COPY_HTOD,
    GP_COPY_DTOH,
    GP_COPY_DTOD,
    GP_COPY_HTOH,
    GP_COPY_PTOP
} gp_copy_kind;

/** Memory kind of a copy's source or destination ("Pageable", "Pinned", "Device", ...). */
typedef enum gp_mem_kind {
    GP_MEM_UNKNOWN = 0,
    GP_MEM_PAGEABLE,
    GP_MEM_PINNED,
    GP_MEM_DEVICE,
    GP_MEM_MANAGED,
    GP_MEM_ARRAY
} gp_mem_kind;

/** Side record of a GPU activity (kernel, memcpy, memset, cuda_sync). Absent args are 0/-1. */
typedef struct gp_gpu_info {
    int32_t device;      /**< args.device (or pid), -1 if unknown */
    int32_t registers;   /**< "registers per thread" */
    int64_t stream;      /**< args.stream (or "stream N" tid), -1 if unknown */
    int64_t bytes;       /**< memcpy/memset "bytes", else 0 */
    int32_t grid[3];     /**< kernel grid, 0 if absent */
    int32_t block[3];    /**< kernel block, 0 if absent */
    int32_t shared_mem;  /**< "shared memory" bytes */
    float blocks_per_sm; /**< "blocks per SM" (+inf for "inf"), 0 if absent */
    float warps_per_sm;  /**< "warps per SM" */
    float occupancy;     /**< "est. achieved occupancy %" (0..100), -1 if absent */
    uint8_t copy_kind;   /**< gp_copy_kind (memcpy only) */
    uint8_t src_mem;     /**< gp_mem_kind of the source (memcpy) or target (memset) */
    uint8_t dst_mem;     /**< gp_mem_kind of the destination (memcpy) */
    uint8_t pad;
    gp_str sync_kind;       /**< cuda_sync "cuda_sync_kind" ("Stream Sync", ...), or GP_STR_NONE */
    int64_t wait_on_stream; /**< cuda_sync "wait_on_stream", or -1 */
} gp_gpu_info;

/** Side record of a "[memory]" instant (PyTorch's allocator sample, profile_memory=True). */
typedef struct gp_mem_sample {
    int64_t addr;            /**< "Addr", 0 if absent (OOM records) */
    int64_t bytes;           /**< "Bytes": > 0 allocation, < 0 free */
    int64_t total_allocated; /**< "Total Allocated" after this record */
    int64_t total_reserved;  /**< "Total Reserved" after this record */
    int32_t device_type;     /**< "Device Type": 0 CPU, 1 CUDA */
    int32_t device_id;       /**< "Device Id": -1 for CPU */
} gp_mem_sample;

/** Side record of a python_function event (with_stack=True): the Python tracer's ids, which
 * TensorBoard's Module view reads. Absent ids are -1. */
typedef struct gp_py_info {
    int64_t id;        /**< "Python id" */
    int64_t parent_id; /**< "Python parent id" */
    int64_t module_id; /**< "Python module id": the frame is an nn.Module call */
} gp_py_info;

/** What PyTorch records of a collective (record_param_comms and, from PyTorch 2.1, the NCCL
 * kernels it launches, which copy its args): keyed by the events' "External id", so a kernel
 * and its record_param_comms share one. Absent strings are GP_STR_NONE, absent numbers -1. */
typedef struct gp_comm_info {
    int64_t ext_id;     /**< "External id" of the event(s) that carried it */
    gp_str coll;        /**< "Collective name" ("allreduce", "_allgather_base", ...) */
    gp_str pg;          /**< "Process Group Name" ("0", "1", ...: the same on every rank) */
    gp_str dtype;       /**< "dtype" */
    int64_t seq;        /**< "Seq": the collective's sequence number in its process group */
    int64_t in_nelems;  /**< "In msg nelems" */
    int64_t out_nelems; /**< "Out msg nelems" */
    int64_t group_size; /**< "Group size" */
} gp_comm_info;

/** What the scheduler said of a libprof step's thread over the step (its args GP_ARG_STEP_CPU
 * and GP_ARG_STEP_RUNQ, Linux schedstat), keyed by the step's start and thread. */
typedef struct gp_step_sched {
    int64_t ts, pid, tid; /**< the step event's start and thread (-1 for string ids) */
    int64_t cpu_ns;       /**< the thread's time on a core in the step */
    int64_t runq_ns;      /**< its time runnable but waiting for a core */
} gp_step_sched;

/** A "fwdbwd" flow end (PyTorch links a forward op to its backward: 's' at the forward, 'f' at
 * the backward, one id). Other flows are only counted (gp_trace_info.n_flows). */
typedef struct gp_flow {
    int64_t ts;       /**< ns, in the events' timebase */
    int64_t id;       /**< the flow id, -1 if absent */
    int64_t pid, tid; /**< numeric ids (-1 for string ones) */
    char ph;          /**< 's' or 'f' ('t' kept as read) */
} gp_flow;

/** A counter sample ("ph":"C" with a numeric "value" arg, as libprof's gp_prof_counter writes
 * them), kept for the exports; the analysis does not use them. */
typedef struct gp_counter {
    int64_t ts;   /**< ns, in the events' timebase */
    double value; /**< args.value */
    gp_str name;  /**< the counter's name */
    int64_t pid;  /**< numeric pid (-1 for a string one) */
} gp_counter;

/** One entry of deviceProperties[] (index = device id). Absent fields are 0 / GP_STR_NONE. */
typedef struct gp_device_props {
    int id;
    gp_str name;
    int64_t total_global_mem;
    int compute_major, compute_minor;
    int num_sms;
    int max_threads_per_block, max_threads_per_sm;
    int regs_per_block, regs_per_sm;
    int warp_size;
    int64_t shared_mem_per_block, shared_mem_per_sm;
} gp_device_props;

/** Type of a gp_kv value. */
typedef enum gp_kv_type {
    GP_KV_NULL = 0,
    GP_KV_BOOL,
    GP_KV_INT,
    GP_KV_DOUBLE,
    GP_KV_STRING,
    GP_KV_JSON /**< an array or object, kept as compact JSON text in `str` */
} gp_kv_type;

/** A key/value from the "gprof" config object or the trace's other top-level keys. */
typedef struct gp_kv {
    const char *key;
    gp_kv_type type;
    int64_t i;       /**< INT and BOOL (0/1); DOUBLE truncated */
    double d;        /**< INT, DOUBLE and BOOL as a double */
    const char *str; /**< STRING value or JSON text; NULL for other types */
} gp_kv;

/** A category the reader does not know, with how many events carried it. */
typedef struct gp_cat_count {
    const char *cat;
    uint64_t count;
} gp_cat_count;

/** Facts about the file and the read, for reports and rules. */
typedef struct gp_trace_info {
    const char *path;       /**< as given to gp_trace_open (or the name for _mem) */
    int gzip;               /**< input was gzip (detected by magic bytes) */
    int array_form;         /**< top level was [ ... ] rather than { ... } */
    int truncated;          /**< the file ended early; everything complete was kept */
    int old_schema;         /**< 2021 categories (Operator/Runtime/Kernel/...) were seen */
    int schema_version;     /**< "schemaVersion", 0 if absent */
    int64_t base_time_ns;   /**< "baseTimeNanoseconds", 0 if absent (absolute timestamps) */
    int rank;               /**< distributedInfo.rank, -1 if absent */
    int world_size;         /**< distributedInfo.world_size, 0 if absent */
    const char *backend;    /**< distributedInfo.backend, or NULL */
    int64_t ts_min, ts_max; /**< earliest start and latest end over stored events (ns) */
    uint64_t bytes_read;    /**< JSON bytes consumed (uncompressed) */
    uint64_t n_events;      /**< events stored */
    uint64_t n_flows;       /**< flow events (s/t/f) skipped: links use correlation ids */
    uint64_t n_counters;    /**< counter events (C): not analysed (gp_trace_counters keeps those
                                 with a numeric "value") */
    uint64_t n_metadata;    /**< metadata events (M) applied to tracks */
    uint64_t n_skipped;     /**< other events skipped (unknown ph, unmatched E, no ts) */
    uint64_t n_no_ts;       /**< of n_skipped: X/B/E/i/I/R events without "ts" (a warning) */
    uint64_t n_no_ph;       /**< of n_skipped: events without "ph" (a warning) */
    uint64_t n_neg_dur;     /**< of n_skipped: X events with a negative "dur" (a warning) */
    uint64_t n_unknown_cat; /**< events whose category is unknown (still stored, GP_EV_OTHER) */
} gp_trace_info;

/** Reader flags. */
enum gp_trace_flags {
    GP_TRACE_STRICT = 1 << 0,   /**< a truncated file is an error instead of a warning */
    GP_TRACE_NO_MMAP = 1 << 1,  /**< stream a plain file instead of mapping it (tests) */
    GP_TRACE_SPLIT_ANY = 1 << 2 /**< cut an input of any size into parts (tests, fuzzing) */
};

/** The least memory gp_trace_opts.max_expansion allows, however small the file. */
#define GP_TRACE_EXPANSION_FLOOR ((uint64_t)256 << 20)

/** Options for gp_trace_open(); NULL means defaults. */
typedef struct gp_trace_opts {
    unsigned flags;         /**< gp_trace_flags */
    size_t max_value_bytes; /**< largest single event/top-level value accepted; 0 = 64 MiB */
    /** Bytes the events read may take (each event is sizeof(gp_event) bytes, allocated in
     * chunks), and the names (their text and index); past it the read fails with a parse error
     * naming the file and position. The analysis of a trace takes about as much again.
     * 0: no limit. */
    size_t max_memory;
    /** A second ceiling, for inputs that expand (a gzip bomb: 55 M events from 14.6 MB): the
     * events and names may take this many times the file's size on disk (compressed, for gzip;
     * 0 for a pipe), or GP_TRACE_EXPANSION_FLOOR if that is more. The lower of the two ceilings
     * applies. 0: none. */
    unsigned max_expansion;
    /** Threads parsing one file: its parts (a big file is cut in up to 16) and the passes
     * after them. 0 = one per online CPU. */
    int threads;
} gp_trace_opts;

/** Read a trace file: Chrome-trace JSON, plain or gzip (by magic bytes), object or array form,
 * Kineto's current and 2021 schemas, relative or absolute, integer or fractional timestamps.
 * The file is streamed in chunks; memory is proportional to the events kept, not the file.
 * A file that ends inside traceEvents loads with info.truncated set and a warning (an error with
 * GP_TRACE_STRICT).
 * @param path file to read.
 * @param opts NULL for defaults.
 * @param out receives the trace (caller frees with gp_trace_free); NULL on failure.
 * @param err on failure: the file, byte offset (uncompressed), line, column and the problem;
 *        NULL: the same status without them.
 * @return GP_OK, GP_EIO (cannot read), GP_EPARSE (malformed), GP_ENOMEM. Thread-safe. */
gp_status gp_trace_open(const char *path, const gp_trace_opts *opts, gp_trace **out, gp_error *err);

/** gp_trace_open() on a buffer (plain or gzip JSON).
 * @param data, len the document (not kept: copied or inflated as needed).
 * @param name used as the path in errors and gp_trace_info. Other parameters as gp_trace_open. */
gp_status gp_trace_open_mem(const void *data, size_t len, const char *name,
                            const gp_trace_opts *opts, gp_trace **out, gp_error *err);

/** Free a trace and everything borrowed from it. NULL is a no-op. */
void gp_trace_free(gp_trace *t);

/** @return facts about the file and the read; never NULL. */
const gp_trace_info *gp_trace_get_info(const gp_trace *t);

/** @return all events, track by track (see gp_track), and their count in `*n`. */
const gp_event *gp_trace_events(const gp_trace *t, size_t *n);

/** @return the tracks, sorted by (pid, tid) with numeric ids first, and their count. */
const gp_track *gp_trace_tracks(const gp_trace *t, size_t *n);

/** @return the text of an interned string; "" for GP_STR_NONE or an out-of-range id. */
const char *gp_trace_str(const gp_trace *t, gp_str id);

/** @return the GPU side record of a kernel/memcpy/memset/cuda_sync event, else NULL. */
const gp_gpu_info *gp_trace_gpu_info(const gp_trace *t, const gp_event *e);

/** @return the allocator sample of a GP_EV_MEMORY event, else NULL. */
const gp_mem_sample *gp_trace_mem_sample(const gp_trace *t, const gp_event *e);

/** @return the "fwdbwd" flow ends, in file order, and their count. */
const gp_flow *gp_trace_fwdbwd_flows(const gp_trace *t, size_t *n);

/** @return the counter samples ("value" counters), in file order, and their count. */
const gp_counter *gp_trace_counters(const gp_trace *t, size_t *n);

/** @return the Python ids of a python_function event, else NULL (none, or not Python). */
const gp_py_info *gp_trace_py_info(const gp_trace *t, const gp_event *e);

/** @return a cpu_op/user_annotation's "Input Dims" as Python prints them ("[[64, 64], []]"),
 * interned, or GP_STR_NONE when the trace has no shapes. */
gp_str gp_trace_event_shape(const gp_trace *t, const gp_event *e);

/** @return the "Concrete Inputs" of an aten::conv2d op as the trace's JSON array text
 * ('["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]'), or GP_STR_NONE: kept for that op only,
 * whose FLOPs need its stride, padding, dilation and groups (gp_op_flops). */
gp_str gp_trace_event_concrete(const gp_trace *t, const gp_event *e);

/** @return an op's "Input Dims" as the trace wrote them: the JSON text as read where they hold a
 * tensor list ('[[[2, 1], [2, 1]], []]', which gp_trace_event_shape prints "[[], []]"), else
 * gp_trace_event_shape(). For the exports. */
gp_str gp_trace_event_dims(const gp_trace *t, const gp_event *e);

/** @return the collective metadata recorded under External id `ext_id`, or NULL (none, or the
 * trace records no collective args). */
const gp_comm_info *gp_trace_comm_info(const gp_trace *t, int64_t ext_id);

/** @return the scheduler args of step event `e` (GP_EVF_STEP), or NULL (not a step, or the
 * trace records none: PyTorch's steps, libprof's where the system does not say). */
const gp_step_sched *gp_trace_step_sched(const gp_trace *t, const gp_event *e);

/** @return deviceProperties[] (position = device id) and their count (0 if absent). */
const gp_device_props *gp_trace_devices(const gp_trace *t, size_t *n);

/** @return the top-level "gprof" run-config object as key/values (n = 0 when absent:
 * e.g. a PyTorch trace). Keys are in gp/trace_schema.h (GP_CFG_*). */
const gp_kv *gp_trace_config(const gp_trace *t, size_t *n);

/** @return the other top-level keys (traceEvents, deviceProperties, gprof excluded). */
const gp_kv *gp_trace_meta(const gp_trace *t, size_t *n);

/** @return the entry named `key` in kv[0..n), or NULL. */
const gp_kv *gp_kv_find(const gp_kv *kv, size_t n, const char *key);

/** @return categories the reader did not recognise, sorted by name, and their count. */
const gp_cat_count *gp_trace_unknown_cats(const gp_trace *t, size_t *n);

/** @return warnings from the read (truncation, lenient escapes, ...), and their count. */
const char *const *gp_trace_warnings(const gp_trace *t, size_t *n);

/** What the profiler said it lost, and whether it finished the trace: from the "gprof" header
 * of a gprof-train trace (zeros and no warnings for other traces) and the events read. */
typedef struct gp_trace_quality {
    int incomplete;              /**< "complete": false (the program died, or is still running:
                                      a .tmp) or the file ends early (info.truncated) */
    uint64_t dropped_cpu;        /**< CPU records dropped past the buffer limit */
    uint64_t dropped_gpu;        /**< GPU activity records dropped (CUPTI) */
    uint64_t dropped_other;      /**< "dropped_records" not split into CPU and GPU (older traces) */
    uint64_t n_cpu;              /**< CPU ranges and instants read */
    uint64_t n_gpu;              /**< GPU activities, CUDA API calls and memory samples read */
    const char *const *warnings; /**< the header's "warnings" (unbalanced pops, deep ranges...) */
    size_t n_warnings;
} gp_trace_quality;

/** @return what the trace says was lost or unfinished; never NULL, valid until gp_trace_free. */
const gp_trace_quality *gp_trace_get_quality(const gp_trace *t);

/** @return the percentage of `dropped` records among dropped + `kept` (0 when both are 0). */
double gp_trace_dropped_pct(uint64_t dropped, uint64_t kept);

/** @return a static lowercase name for a kind ("kernel", "cpu_op", ...). */
const char *gp_ev_kind_name(gp_ev_kind kind);

/** @return "HtoD", "DtoH", ... for a copy kind; "Pageable", "Pinned", ... for a memory kind. */
const char *gp_copy_kind_name(gp_copy_kind kind);
const char *gp_mem_kind_name(gp_mem_kind kind);

/** @return 1 when `name` is communication (what sets GP_EVF_COMM): an NCCL kernel under any name
 * NCCL has used (ncclKernel_*, ncclDevKernel_*, nccl<Op>RingLLKernel_* of NCCL <= 2.6, with or
 * without a "void " prefix and argument list), RCCL's (the same, plus mscclKernel_*), or a c10d
 * op (nccl:*, gloo:*, c10d::*); 0 otherwise and for NULL. */
int gp_trace_is_comm_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
