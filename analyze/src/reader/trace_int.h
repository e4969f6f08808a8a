/* trace_int.h: private parts of gp_trace shared by the reader (trace_read.c, trace_event.c,
 * trace_build.c) and the string interner (arena.c). */
#ifndef GP_ANALYZE_TRACE_INT_H
#define GP_ANALYZE_TRACE_INT_H

#include "gp/trace.h"

#include <stdint.h>
#include <stdlib.h>

/* ---- arena.c: a bump allocator and a string interner. ---- */

typedef struct trace_arena {
    struct arena_block *head;
    size_t used_total;
} trace_arena;

void *trace_arena_alloc(trace_arena *a, size_t n);
char *trace_arena_strdup(trace_arena *a, const char *s, size_t n);
/* Move src's blocks into dst (what was allocated from src stays valid, now owned by dst). */
void trace_arena_adopt(trace_arena *dst, trace_arena *src);
void trace_arena_release(trace_arena *a);

/* Interned strings: ids are dense, 0..n-1, in order of first sight. */
struct trace_budget;

typedef struct trace_intern {
    struct trace_budget *budget; /* the read's memory ceiling while reading, or NULL */
    size_t taken;                /* the bytes taken from it */
    int over_budget;             /* a string was refused: the ceiling was reached */
    trace_arena arena;
    const char **strs; /* id -> NUL-terminated text */
    uint32_t *lens;
    uint32_t n, cap;
    uint32_t *slots; /* open addressing: id + 1, 0 = empty */
    uint64_t *hashes;
    uint32_t mask;
} trace_intern;

int trace_intern_init(trace_intern *in);
void trace_intern_release(trace_intern *in);
/* Stop counting against the budget, giving back what was taken (a part of a split file, whose
 * strings the whole trace interns again) unless `keep`. */
void trace_intern_unbudget(trace_intern *in, int keep);
/* @return the id of s[0..n), adding it when new; GP_STR_NONE when out of memory. */
gp_str trace_intern_str(trace_intern *in, const char *s, size_t n);
/* @return the id of an existing string or GP_STR_NONE. */
gp_str trace_intern_find(const trace_intern *in, const char *s, size_t n);

/* A growable array of fixed-size items. */
typedef struct trace_vec {
    char *data;
    size_t n, cap, item;
} trace_vec;

void trace_vec_init(trace_vec *v, size_t item);
/* @return a pointer to a new zeroed item at the end, or NULL when out of memory. */
void *trace_vec_push(trace_vec *v);
void trace_vec_release(trace_vec *v);
#define TRACE_VEC_AT(v, T, i) (((T *)(v)->data) + (i))

/* ---- the trace. ---- */

/* Per-string cache of derived facts (a category's kind, a name's flags). */
typedef struct trace_str_info {
    int8_t cat_kind;   /* gp_ev_kind, TRACE_CAT_UNKNOWN or TRACE_CAT_UNSET (not computed) */
    uint8_t name_done; /* name_flags computed */
    uint16_t name_flags;
    uint32_t unknown_idx; /* 1 + index in gp_trace.unknown_cats, 0 = none */
} trace_str_info;

/* What an op records that its shape text leaves out, under its External id: the "Concrete
 * Inputs" of an op whose FLOPs need them (aten::conv2d: stride, padding, dilation, groups), and
 * the "Input Dims" as read of an op with a tensor list (aten::cat, aten::stack), which the shape
 * text prints as [] (the exports write the dims as PyTorch did). */
typedef struct trace_op_args {
    int64_t ext_id;
    gp_str concrete; /* the JSON array as read: ["", "", "", "[1, 1]", ...], or GP_STR_NONE */
    gp_str dims;     /* the JSON array as read: [[[2, 1], [2, 1]], []], or GP_STR_NONE */
} trace_op_args;

struct gp_trace {
    gp_trace_info info;
    trace_intern strings;
    trace_arena arena; /* kv texts, warnings, paths */
    gp_event *events;
    size_t n_events;
    gp_track *tracks;
    size_t n_tracks;
    trace_vec gpu;          /* gp_gpu_info */
    trace_vec mem;          /* gp_mem_sample */
    trace_vec py;           /* gp_py_info */
    trace_vec fwdbwd;       /* gp_flow */
    trace_vec comm;         /* gp_comm_info, sorted by ext_id once read */
    trace_vec op_args;      /* trace_op_args, sorted by ext_id once read */
    trace_vec step_sched;   /* gp_step_sched, sorted by ts once read */
    trace_vec counters;     /* gp_counter */
    trace_vec devs;         /* gp_device_props */
    trace_vec config, meta; /* gp_kv */
    trace_vec unknown_cats; /* gp_cat_count */
    trace_vec warnings;     /* const char * */
    gp_trace_quality quality;
    trace_vec quality_warnings; /* const char *: quality.warnings */
};

/* Add a formatted warning to the trace (kept, and logged at WARN). */
void trace_warn(gp_trace *t, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

/* Fill t->quality from the "gprof" config and the events (trace_quality.c). @return GP_OK, or
 * GP_ENOMEM. */
gp_status trace_quality_compute(gp_trace *t);

#define TRACE_CAT_UNKNOWN (-1) /* a category in no table */
#define TRACE_CAT_UNSET   (-2) /* trace_str_info.cat_kind not computed yet */
/* @return the kind of a category string ("kernel", "Kernel", ...), or TRACE_CAT_UNKNOWN. */
int trace_cat_kind(const char *cat, size_t n);
/* @return gp_ev_flags derived from an event name alone (step, loader, comm, sync/launch API). */
/* The bytes of events one read may hold (gp_trace_opts.max_memory), shared by the builders of
 * a split file, whose parts are parsed on several threads. */
typedef struct trace_budget {
    size_t limit; /* 0: no limit */
    _Atomic size_t used;
    uint64_t input_size; /* the file's size on disk (0: unknown, a pipe) */
    unsigned expansion;  /* gp_trace_opts.max_expansion when it set the limit, else 0 */
} trace_budget;

/* The ceiling of a read of `input_size` bytes under `opts` into bg (used = 0). */
void trace_budget_init(trace_budget *bg, const gp_trace_opts *opts, uint64_t input_size);

/* Take n bytes: @return GP_OK, or GP_ENOMEM (nothing taken) when they would pass the limit. */
gp_status trace_budget_take(trace_budget *bg, size_t n);

/* What a read past bg's limit says: the limit, what set it, and how to raise it. */
const char *trace_budget_message(const trace_budget *bg, char *buf, size_t cap);

unsigned trace_name_flags(const char *name, size_t n);
/* Parse "Memcpy HtoD (Pageable -> Device)" into a copy kind and memory kinds. */
void trace_parse_copy_name(const char *name, gp_gpu_info *gi);

/* trace_par.c: the threads a budget allows (0: one per online CPU), at most 2: the reader's and
 * the analysis' passes split in two. The budget comes from the options structs the CLI fills,
 * never from the environment. */
int trace_threads(int budget);
/* fn0(arg0) here and fn1(arg1) on a second thread when `threads` >= 2, then joined; both here,
 * in that order, with one thread or when no thread can be started. The two must not write
 * shared state. */
void trace_par2(int threads, void (*fn0)(void *), void *arg0, void (*fn1)(void *), void *arg1);

#endif
