/* trace_build.h: the reader's state while a trace streams in: the lexer, tracks being filled,
 * event chunks, B/E stacks and metadata to apply at the end. Shared by trace_read.c (top level),
 * trace_event.c (one event) and trace_build.c (finalize: group, sort, index). */
#ifndef GP_ANALYZE_TRACE_BUILD_H
#define GP_ANALYZE_TRACE_BUILD_H

#include "reader/json_lex.h"
#include "reader/trace_int.h"

#define BUILD_CHUNK_EVENTS 65536

/* Events in file order are kept in chunks of up to BUILD_CHUNK_EVENTS (a chunk adopted from a
 * part of a split file may be less than full). */
typedef struct build_chunk {
    gp_event *ev;
    size_t n;
} build_chunk;

/* A track while reading: its key, counters and the open B events. */
typedef struct build_track {
    int64_t pid, tid;
    gp_str pid_str, tid_str;
    gp_str name;
    uint64_t count;
    trace_vec open_b; /* gp_event, B events waiting for their E */
} build_track;

/* process_name metadata, applied to every track of the pid at the end. */
typedef struct build_proc {
    int64_t pid;
    gp_str pid_str;
    gp_str name;
} build_proc;

enum raw_seen {
    SEEN_TS = 1 << 0,
    SEEN_DUR = 1 << 1,
    SEEN_DEVICE = 1 << 2,
    SEEN_STREAM = 1 << 3,
    SEEN_OCC = 1 << 4,
    SEEN_COMM = 1 << 5, /* a collective's args (record_param_comms, NCCL kernels) */
    SEEN_VALUE = 1 << 6,
    SEEN_CONCRETE = 1 << 7, /* "Concrete Inputs": its JSON text is in concrete_buf */
    SEEN_DIMS_LIST = 1 << 8 /* "Input Dims" holds a tensor list: its JSON text is in dims_buf */
};

/* An element as read, before it becomes a gp_event. */
typedef struct raw_ev {
    unsigned seen;
    char ph;
    gp_str name, cat, pid_str, tid_str, shape, sync_kind, meta_name;
    gp_str coll, pg, dtype; /* "Collective name", "Process Group Name", "dtype" */
    int64_t seq, in_nelems, out_nelems, group_size;
    int64_t ts, dur, pid, tid;
    int64_t corr, ext, stream, device, bytes, wait_on_stream;
    int64_t addr, mbytes, talloc, tres, devtype, devid;
    int64_t py_id, py_parent, py_module;
    int64_t step_cpu, step_runq; /* a libprof step's GP_ARG_STEP_CPU, GP_ARG_STEP_RUNQ */
    int64_t flow_id;
    int32_t grid[3], block[3], regs, shmem;
    float bps, wps, occ;
    double value; /* a counter's */
} raw_ev;

/* A recently interned string: checked by length and memcmp before use (see trace_event.c). */
typedef struct build_str_cache {
    const char *s; /* the interned copy */
    uint32_t n;
    gp_str id;
} build_str_cache;

#define BUILD_STR_CACHE 256

typedef struct trace_builder {
    gp_trace *t;
    json_lex lex;
    build_chunk *chunks;
    size_t n_chunks, cap_chunks;
    uint64_t n_events;
    trace_vec tracks;      /* build_track */
    uint32_t *track_slots; /* open addressing: index + 1 */
    uint32_t track_mask;
    uint32_t last_track;
    uint32_t *gpu_slots; /* distinct GPU side records, open addressing: index + 1 */
    uint32_t gpu_mask;
    trace_vec procs;    /* build_proc */
    trace_vec str_info; /* trace_str_info, by string id */
    char *shape_buf;    /* Input Dims text being built */
    size_t shape_len, shape_cap;
    char *concrete_buf; /* the event's "Concrete Inputs" JSON text, as read */
    size_t concrete_len, concrete_cap;
    char *dims_buf; /* the event's "Input Dims" JSON text, as read, when it holds a tensor list */
    size_t dims_len, dims_cap;
    int dims_list;      /* shape_value met a tensor list */
    gp_str memory_name; /* "[memory]" */
    gp_str fwdbwd_cat;  /* "fwdbwd" */
    int part;           /* parses a later part of a split file (trace_split.c) */
    uint64_t orphan_e;  /* in a part: E events with no open B on their track */
    build_str_cache str_cache[BUILD_STR_CACHE]; /* direct-mapped, in front of the interner */
    trace_budget *budget;                       /* the read's memory limit for events, or NULL */
    int over_budget;                            /* an append failed because of it */
    int threads;                                /* gp_trace_opts.threads: 0 = one per core */
} trace_builder;

int trace_builder_init(trace_builder *b, gp_trace *t);
/* Take over a chunk holding n events, allocated (malloc) with room for BUILD_CHUNK_EVENTS as
 * trace_builder_append allocates them: later appends may fill it. @return GP_OK or GP_ENOMEM. */
gp_status trace_builder_adopt(trace_builder *b, gp_event *ev, size_t n);
void trace_builder_release(trace_builder *b);

/* Parse one element of traceEvents at b->lex.p (after whitespace) and store it.
 * @return GP_OK, GP_MORE (nothing stored: refill and call again) or GP_EPARSE. */
gp_status trace_event_parse(trace_builder *b);

/* Store a parsed element as an event (or apply it: metadata, B/E pairing, counting).
 * @return GP_OK, or GP_ENOMEM when out of memory. */
gp_status trace_store_event(trace_builder *b, const raw_ev *r);

/* Move the events into the trace: grouped per track, tracks sorted, each sorted by start.
 * @return GP_OK, or GP_ENOMEM when out of memory. */
gp_status trace_builder_finish(trace_builder *b);

/* @return the track of (pid, tid, pid_str, tid_str), created when new; GP_NONE when out of memory.
 */
uint32_t trace_builder_track(trace_builder *b, const raw_ev *r);

/* Side record `g` into t->gpu, stored unless an equal one is (bytewise, padding zeroed); *id
 * its index. @return GP_OK or GP_ENOMEM. */
gp_status trace_builder_gpu(trace_builder *b, const gp_gpu_info *g, uint32_t *id);

/* @return room for one more event (chunked storage), or NULL when out of memory. */
gp_event *trace_builder_append(trace_builder *b);

/* Count `n` events of category `cat` (registering it as unknown when it is). @return GP_OK or
 * GP_ENOMEM. */
gp_status trace_builder_count_cat(trace_builder *b, gp_str cat, uint64_t n);

/* @return the cached facts of string `id`, or NULL when out of memory. */
trace_str_info *trace_builder_str_info(trace_builder *b, gp_str id);

/* ---- trace_split.c: one mapped file parsed on several threads. ---- */

struct trace_source;
typedef struct trace_split trace_split;

/* A new, empty trace (also the scratch trace of a split part). @return NULL when out of memory. */
gp_trace *trace_new_empty(const char *path);

/* Plan parts of the events in [start, end) of a mapped source and start one thread per later
 * part; the caller parses the first part itself and stops at *split_at. @return NULL (and
 * *split_at = NULL) when the input is small, threads are 1 or no event boundary was found. */
trace_split *trace_split_start(const struct trace_source *src, const char *start, const char *end,
                               const char **split_at);

/* The caller reached *split_at at an event boundary: wait for the parts and merge them into `b`
 * in file order. *resume is where to go on: after traceEvents' ']' (*closed = 1), or, when a
 * part could not be used (an error, an E whose B came earlier, a false boundary), after the last
 * merged event (*closed = 0; left unchanged when none was: the caller's position before its
 * ','), to parse on from there in order. Frees `sp`. @return GP_OK, or GP_ENOMEM when out of
 * memory. */
gp_status trace_split_join(trace_split *sp, trace_builder *b, const char **resume, int *closed);

/* Wait for the parts and drop them (the caller did not stop at the split point). NULL: no-op. */
void trace_split_free(trace_split *sp);

#endif
