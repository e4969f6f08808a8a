/* viewer-export/src/export_int.h: private cross-file API of gp_export: the output sink (memory,
 * file or gzip; a regular file is written to a temporary name and renamed on success, a stream
 * handed in, a device or a FIFO is written directly), escaping for JSON and HTML,
 * and the inline-SVG chart emitters the HTML report uses. */
#ifndef GP_EXPORT_EXPORT_INT_H
#define GP_EXPORT_EXPORT_INT_H

#include "gp/status.h"
#include "gp/trace.h"

struct gp_export_opts;

#include <stddef.h>
#include <stdint.h>

/* ---- Output sink. Write calls never fail on their own: the first failure is remembered and
 * reported by export_out_close(), so emitters stay free of error plumbing. ---- */
typedef struct export_out {
    char *buf;
    size_t len, cap;
    void *file; /* FILE * or gzFile; NULL in memory mode */
    int gzip;
    int borrowed;    /* `file` is the caller's stream (gp_export_opts.stream): flushed only */
    int err_no;      /* errno of the first failure (ENOMEM for allocation), 0 if none */
    char path[4096]; /* the file written: a symlink's target once resolved */
    char tmp[4160];  /* the temporary name; empty when written directly */
    void (*temp_file)(const char *path, void *ud);
    void *temp_file_ud;
} export_out;

/** Start an in-memory sink; take the text with export_out_take(). */
void export_out_init_mem(export_out *o);

/** Open `path` for writing; gzip when `path` ends in ".gz". Nothing there, a regular file or a
 * symlink to one: written to `<file>.tmp.<pid>` beside the file and renamed over it at close,
 * keeping a replaced file's mode (the symlink itself stays). A character device, a FIFO or a
 * socket: written directly, never replaced. A directory or a dangling symlink: GP_EIO.
 * `opts->stream` (opts may be NULL), when set, is written instead of `path`; `opts->temp_file`
 * hears of the temporary file. */
gp_status export_out_open(export_out *o, const char *path, const struct gp_export_opts *opts,
                          gp_error *err);

/** Flush, close and rename onto the final path (direct outputs: flush and close). Frees the sink.
 * On any earlier or current failure the temporary file is removed and GP_EIO (or GP_ENOMEM)
 * returned. */
gp_status export_out_close(export_out *o, gp_error *err);

/** Give up: close and remove the temporary file, free the sink. */
void export_out_abort(export_out *o);

/** Memory mode: @return the NUL-terminated text (caller frees) and its length; NULL on OOM. */
char *export_out_take(export_out *o, size_t *len);

void export_out_write(export_out *o, const void *p, size_t n);
void export_out_puts(export_out *o, const char *s);
void export_out_printf(export_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** A JSON string literal with its quotes: control characters escaped, invalid UTF-8 bytes
 * replaced by U+FFFD, so any trace name yields valid JSON. NULL writes "". */
void export_out_json_str(export_out *o, const char *s);

/** HTML text or attribute value: & < > " ' escaped, control characters dropped, invalid UTF-8
 * replaced by U+FFFD. NULL writes nothing. */
void export_out_html(export_out *o, const char *s);

/** A nanosecond time as microseconds with three decimals ("1234.567"), exactly. */
void export_out_us(export_out *o, int64_t ns);

/** Length of the valid UTF-8 sequence at `s` (1..4), or 0 if it is invalid. */
size_t export_utf8_len(const unsigned char *s);

/* ---- Chrome-trace events shared by the Perfetto and TensorBoard writers. ---- */
struct gp_analysis;

enum export_ev_mode {
    EXPORT_EV_PERFETTO = 0, /* memory as counters, names for every process and thread */
    EXPORT_EV_TB = 1        /* torch-tb-profiler: [memory] instants, CPU-only steps */
};

typedef struct export_ev_opts {
    enum export_ev_mode mode;
    int old_runtime_cat; /* write runtime/driver calls as cat "Runtime" (tb 0.4.3) */
    int64_t t0;          /* subtracted from every ts (ns) */
    int64_t job_pid;     /* a job's rank (Perfetto mode): every track a thread of this pid */
    int64_t flow_base;   /* added to launch flow ids (unique across a job's ranks) */
} export_ev_opts;

/** Write the trace's events, metadata, flows (and counters) as comma-separated JSON objects
 * into an open traceEvents array. `*first` says whether nothing was written there yet and is
 * updated. @return GP_OK or GP_ENOMEM. */
gp_status export_write_events(export_out *o, const struct gp_analysis *a, const export_ev_opts *eo,
                              int *first, gp_error *err);

/* ---- Lanes (export_lanes.c): where each slice of a track goes so that all nest. ---- */
typedef struct export_lane {
    int64_t *ends; /* end times of the slices open on the lane, innermost last */
    size_t depth, cap;
} export_lane;

typedef struct export_lanes {
    export_lane *v;
    uint32_t n, cap;
} export_lanes;

/** Told of each slice closed on lane `k`, with its end time. */
typedef void (*export_lane_closed)(void *ud, uint32_t k, int64_t end);

/** Place [ts, end) (slices in order of start, longest first): @return its lane, -1 on OOM.
 * Slices ending by `ts` are closed first on the lanes it passes over. */
int export_lanes_place(export_lanes *ls, int64_t ts, int64_t end);
/** The same, on lane `first` or a later one. */
int export_lanes_place_from(export_lanes *ls, int64_t ts, int64_t end, uint32_t first);

/** Of the track's events ev[first .. first+count): mark in conflict[0 .. count) each Python frame
 * (python_function) that partly overlaps an op or annotation (starts inside one and ends after
 * it, or outlasts one that starts inside it): with_stack's frames around record_function's enter
 * and exit do, against ProfilerStep#N, Optimizer.* and enumerate(DataLoader). @return 0, -1 on
 * OOM. */
int export_lanes_python_conflicts(const gp_event *ev, uint32_t first, uint32_t count,
                                  uint8_t *conflict);

/** Close the slices of lane `k` that end by `ts`, innermost first, telling `closed` (NULL: no
 * one). */
void export_lanes_close(export_lanes *ls, uint32_t k, int64_t ts, export_lane_closed closed,
                        void *ud);

void export_lanes_free(export_lanes *ls);

/** The Chrome-trace category of an event kind (GP_EV_*). */
const char *export_kind_cat(unsigned kind);

/** The name the exports give a track's process ("GPU 0", process_name, "process 12") and its
 * thread ("stream 7", thread_name, "thread 3"); `buf` may be used. */
struct gp_trace;
struct gp_track;
const char *export_process_name(const struct gp_trace *t, const struct gp_track *tr, char *buf,
                                size_t cap);
const char *export_thread_name(const struct gp_trace *t, const struct gp_track *tr, char *buf,
                               size_t cap);

/** A thread's place among its process's threads: its stream on a GPU, else its tid (0..2^24). */
int32_t export_thread_sort(const struct gp_track *tr);

/** A finding's ranges sorted, overlapping ones merged (a merged range loses its label), so its
 * slices never overlap: `*n` of them, freed by the caller; NULL when out of memory. */
struct gp_time_range;
struct gp_finding;
struct gp_time_range *export_finding_ranges(const struct gp_finding *f, size_t *n);

/* ---- A job's timeline (perfetto_job.c), shared by its protobuf and JSON writers. ---- */
struct gp_job;
struct gp_job_rank;
struct gp_job_wait;

/** GP_EINVAL naming the first rank (after the first) whose clock no collective ties to the
 * first rank's, else GP_OK. */
gp_status export_job_check_aligned(const struct gp_job *j, gp_error *err);
/** The job's time 0: the earliest first event of a rank, aligned unix ns. */
int64_t export_job_t0(const struct gp_job *j);
/** "rank N (clock +X ms, ±Y us)" into buf. */
const char *export_job_rank_name(const struct gp_job_rank *r, char *buf, size_t cap);
/** Rank i's waits (until > ts), sorted by start, longest first: `*n` of them (caller frees);
 * NULL when out of memory. */
struct gp_job_wait *export_job_waits(const struct gp_job *j, size_t i, size_t *n);

/** Rank i of a job read again: its summary, its analysis (rd's until closed) and what to subtract
 * from its trace's times to put them on the job's clock with time 0 at `t0`. */
typedef struct export_job_rank {
    const struct gp_job_rank *r;
    const struct gp_analysis *a;
    int64_t shift;
} export_job_rank;
struct gp_export_rank_reader;
gp_status export_job_open_rank(const struct gp_job *j, size_t i, int64_t t0,
                               const struct gp_export_rank_reader *rd, export_job_rank *x,
                               gp_error *err);

/** A fresh numeric pid/tid for synthetic tracks; never one a real process uses (< 2^22). */
#define EXPORT_SYNTH_ID_BASE 0x7F000000LL

/* ---- Inline SVG charts. ---- */

/** Stacked bars: n_bars bars of n_series parts each, values[bar * n_series + series] >= 0. */
typedef struct export_bar_chart {
    const char *title;  /* aria-label and <title> */
    const char *y_unit; /* "ms" */
    size_t n_bars, n_series;
    const char *const *series_names;
    const char *const *colors;
    const double *values;
    const char *const *bar_labels; /* tooltip/axis text per bar */
} export_bar_chart;

/** One series of a line chart: points (x[i], y[i]) sorted by x. */
typedef struct export_series {
    const char *name, *color;
    const double *x, *y;
    size_t n;
    int steps; /* draw as a step function (value holds until the next point) */
    int fill;  /* fill the area under the line */
} export_series;

/** A highlighted x range with a short label ("GT01"), drawn behind the series. */
typedef struct export_band {
    double x0, x1;
    const char *label, *tooltip, *color;
    int row; /* label row (0..3), so overlapping bands' labels do not collide */
} export_band;

typedef struct export_line_chart {
    const char *title;
    const char *x_unit, *y_unit;
    double x_min, x_max;
    double y_min, y_max; /* y_max <= y_min: from the data */
    const export_series *series;
    size_t n_series;
    const export_band *bands;
    size_t n_bands;
} export_line_chart;

void export_svg_stacked_bars(export_out *o, const export_bar_chart *c);
void export_svg_line_chart(export_out *o, const export_line_chart *c);

/** A "nice" tick step (1, 2 or 5 times a power of ten) for about `n` ticks over `range`. */
double export_nice_step(double range, int n);

#endif
