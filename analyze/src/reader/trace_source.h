/* trace_source.h: the bytes of a trace, delivered in blocks by a producer thread (read(2) for
 * plain files, zlib for gzip, so inflating overlaps parsing) or as one in-memory window. Each
 * block has room in front so the unfinished tail of the previous block can be copied before it,
 * keeping the current JSON unit contiguous without copying the whole stream. */
#ifndef GP_ANALYZE_TRACE_SOURCE_H
#define GP_ANALYZE_TRACE_SOURCE_H

#include "gp/status.h"
#include "gp/trace.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define SOURCE_NBLOCKS 4

typedef struct source_block {
    char *base;    /* allocation: prefix area, then data */
    char *data;    /* base + prefix */
    size_t n;      /* bytes in data */
    uint64_t off;  /* stream offset of data[0] */
    uint64_t line; /* newlines before data[0] */
    int last;      /* no data after this block */
} source_block;

typedef struct trace_source {
    const char *path;
    int gzip;
    size_t block_size, prefix;
    /* producer side */
    int fd;
    void *gz; /* gzFile */
    pthread_t thread;
    int threaded;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    source_block blocks[SOURCE_NBLOCKS];
    unsigned filled, taken; /* counters: blocks produced / consumed */
    int stop, failed;
    char fail_msg[200];
    gp_status fail_code; /* GP_EPARSE for corrupt gzip data, else 0 (GP_EIO) */
    uint64_t prod_off, prod_line;
    /* consumer side */
    source_block *cur; /* block being parsed, NULL in memory mode */
    const char *win;   /* window start (may precede cur->data by the copied tail) */
    const char *win_end;
    uint64_t win_off; /* stream offset of win */
    uint64_t win_col; /* bytes on win[0]'s line before it (a window starts mid-line) */
    /* memory mode */
    char *owned; /* decompressed copy of a gzip buffer */
    void *map;   /* a plain file mapped read-only (MAP_PRIVATE), or NULL */
    size_t map_len;
    int guard; /* map_guard slot of the mapping, -1 if none */
    size_t max_unit;
    char too_big_msg[96];
    struct trace_budget *budget; /* the read's memory limit, for the builders of split parts */
    uint64_t input_size;         /* a regular file's size on disk, a buffer's length, else 0 */
    unsigned flags;              /* gp_trace_flags of the read (GP_TRACE_NO_MMAP, ..._SPLIT_ANY) */
    int threads;                 /* gp_trace_opts.threads: 0 = one per core */
} trace_source;

/* Open `path` (gzip detected by magic bytes). A plain regular file is mapped and parsed as one
 * window (no read copies); gzip, pipes and files that cannot be mapped stream through the
 * producer thread. `max_unit` bounds how much unfinished tail can be carried into the next block.
 * `flags`: gp_trace_flags (GP_TRACE_NO_MMAP streams a plain file too).
 */
gp_status trace_source_open_file(trace_source *s, const char *path, size_t max_unit, unsigned flags,
                                 gp_error *err);

/* @return 1 when the mapped file shrank while it was parsed: past its new end the window reads
 * as zeros (map_guard.c), so a parse error there means the trace was cut short. */
int trace_source_shrank(const trace_source *s);

/* A buffer as the whole input (gzip inflated into an owned copy). */
gp_status trace_source_open_mem(trace_source *s, const void *data, size_t len, const char *name,
                                size_t max_unit, gp_error *err);

/* Whether the value parsed from `from` to `to` is longer than `max_unit` once its leading
 * whitespace and ',' are skipped: the rule the streamed path applies when it carries an unfinished
 * value into the next block, applied to a whole window too, so every path accepts the same inputs.
 * s->too_big_msg then says so. */
int trace_source_too_big(trace_source *s, const char *from, const char *to);

/* Get the first window. *eof is set when nothing follows it. */
gp_status trace_source_first(trace_source *s, const char **p, const char **end, int *eof,
                             gp_error *err);

/* Continue after [keep, win_end) is unfinished: the next window starts with a copy of it.
 * On GP_OK, *p points to the copy of `keep`. */
gp_status trace_source_refill(trace_source *s, const char *keep, const char **p, const char **end,
                              int *eof, gp_error *err);

/* The whole input is one window in memory (a mapped file, a caller's buffer or an inflated
 * copy), not streamed: parts of it can be parsed on several threads. */
static inline int trace_source_whole(const trace_source *s)
{
    return !s->threaded;
}

/* madvise(DONTNEED) granularity behind the parsing cursor */
#define TRACE_DROP_STRIDE ((ptrdiff_t)8 << 20)

const char *trace_source_drop_now(const trace_source *s, const char *from, const char *to);

/* A mapped file: let the kernel drop the pages of [from, to) (already parsed), so resident memory
 * stays flat while parsing; they fault back in from the page cache if read again (an error's
 * line number). @return the new `from` (page-aligned progress), unchanged when below the stride.
 * Called after every event: the stride test touches nothing shared between the parsing threads
 * (reading `s` each time missed the cache, its line being written by another thread). */
static inline const char *trace_source_drop(const trace_source *s, const char *from, const char *to)
{
    return to - from < TRACE_DROP_STRIDE ? from : trace_source_drop_now(s, from, to);
}

/* @return the stream offset of a position in the current window. */
uint64_t trace_source_offset(const trace_source *s, const char *pos);

/* Line (1-based) and column (1-based, 0 = unknown) of a position in the current window. */
void trace_source_line_col(const trace_source *s, const char *pos, long *line, long *col);

/* Stop the producer and free everything. */
void trace_source_close(trace_source *s);

#endif
