/* gp/export.h: write what viewers open from an analysed trace: Chrome JSON for Perfetto with the
 * diagnosis findings as an annotation track, a torch-tb-profiler run directory for TensorBoard,
 * and a self-contained HTML report with inline SVG charts. Output is deterministic (no wall-clock
 * times). A file is written under a temporary name beside it, then renamed over it (keeping its
 * mode; a symlink is followed and stays), so a failure leaves no partial file; a device or a
 * FIFO, or a stream handed in the options, is written directly and never replaced. */
#ifndef GP_EXPORT_EXPORT_H
#define GP_EXPORT_EXPORT_H

#include "gp/analysis.h"
#include "gp/compare.h"
#include "gp/job.h"
#include "gp/rules.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Options shared by the exporters; NULL means defaults (no findings). All borrowed. */
typedef struct gp_export_opts {
    const gp_findings *findings; /**< diagnosis of the same trace (fired ones are shown), or NULL */
    const char *title; /**< report/run title (e.g. the trace's file name); NULL = from the path */
    /** Called with a temporary file's path when an export creates it and with NULL once it is
     * renamed or removed, so a signal handler can remove a half-written file; may be NULL. */
    void (*temp_file)(const char *path, void *ud);
    void *temp_file_ud; /**< passed to temp_file */
    /** Write here instead of to the path, which then only names the output in errors (the CLI's
     * "-" is stdout); flushed, not closed. NULL: the path. */
    FILE *stream;
} gp_export_opts;

/**
 * Write Chrome-trace JSON for ui.perfetto.dev (gzip when `path` ends in ".gz"): every slice
 * nested per thread (a partially overlapping one moves to an overflow thread), ac2g launch
 * flows in the v1 s/f style, process/thread names and sort order, memory as counter tracks,
 * and each finding's ranges as slices on a "gprof-train findings" track ("GT01 data-loader
 * starvation"), one thread per finding.
 * @return GP_OK, GP_EIO (with the path in `err`) or GP_ENOMEM.
 */
gp_status gp_export_perfetto(const gp_analysis *a, const gp_export_opts *opts, const char *path,
                             gp_error *err);

/**
 * Write Perfetto's native protobuf trace (Trace / TracePacket / TrackEvent; gzip when `path`
 * ends in ".gz"), streamed packet by packet: a track per thread and per CUDA stream (slices that
 * overlap without nesting on child tracks "NAME (overlap K)", as the JSON export places them),
 * slices with their arguments as debug annotations, launch -> GPU activity flows, allocator
 * samples as byte counters, interned names and categories, a clock snapshot (time 0 = the
 * trace's first event), and each finding's ranges as slices on a "gprof-train findings" track.
 * @return GP_OK, GP_EIO (with the path in `err`) or GP_ENOMEM.
 */
gp_status gp_export_perfetto_proto(const gp_analysis *a, const gp_export_opts *opts,
                                   const char *path, gp_error *err);

/** How a job's export reads a rank's trace again: `open` gives its analysis (or an error),
 * `close` frees it; one rank is open at a time. */
typedef struct gp_export_rank_reader {
    gp_status (*open)(void *ud, const char *path, const gp_analysis **out, gp_error *err);
    void (*close)(void *ud, const gp_analysis *a);
    void *ud;
} gp_export_rank_reader;

/**
 * Write a finished job (gp/job.h) as one Perfetto protobuf trace: a process "rank N (clock
 * +X ms, ±Y us)" per rank (X its clock offset, Y gp_job_rank.clock_spread, what is left of its
 * clock's uncertainty) holding the rank's tracks as gp_export_perfetto_proto() writes them, on
 * the job's aligned clock (time 0: the earliest aligned event), and a "collective waits" track
 * with a slice "wait for rank L (OP)" from each of its arrivals at a collective where rank L
 * was late to L's arrival. The traces are read again through `rd`, one at a time.
 * @return GP_OK; GP_EINVAL when a rank other than the first shares no collective with it (its
 * clock cannot be aligned; named in `err`); an error of `rd`; GP_EIO or GP_ENOMEM.
 */
gp_status gp_export_job_perfetto_proto(const gp_job *j, const gp_export_rank_reader *rd,
                                       const gp_export_opts *opts, const char *path, gp_error *err);

/**
 * Write a finished job (gp/job.h) as one HTML page in the report's style, the Distributed view:
 * cards, GT16 with its evidence, each rank's step breakdown, waits and clock (offset and what is
 * left of its uncertainty), who waited for whom (per pair of ranks: how often and how long, the
 * 50 longest), the 20 collectives that waited longest, and the command for the job's Perfetto
 * timeline. Only `title`, `stream` and `temp_file` of `opts` are used.
 * @return GP_OK, GP_EIO or GP_ENOMEM.
 */
gp_status gp_export_job_html(const gp_job *j, const gp_export_opts *opts, const char *path,
                             gp_error *err);

/** The same job timeline as gp_export_job_perfetto_proto() in Chrome JSON (gzip when `path` ends
 * in ".gz"): a process per rank named as there, a thread per track of its trace ("GPU 0 /
 * stream 7"), and "collective waits" threads; baseTimeNanoseconds is the job's time 0.
 * @return as gp_export_job_perfetto_proto(). */
gp_status gp_export_job_perfetto(const gp_job *j, const gp_export_rank_reader *rd,
                                 const gp_export_opts *opts, const char *path, gp_error *err);

/** @return 1 when `path` names a Perfetto protobuf trace (".pftrace", ".perfetto-trace", either
 * with ".gz"), else 0. */
int gp_export_perfetto_is_proto_name(const char *path);

/**
 * Write a torch-tb-profiler run: `logdir/run/<worker>.<unix ms>.pt.trace.json.gz`, creating the
 * directories. Steps stay on the CPU thread only, traceEvents is the last key, runtime and driver
 * calls use the "Runtime" category that 0.4.3 (and later) map to Runtime; 0.4.3 ignores
 * "cuda_runtime", which would leave every operator with zero device time.
 * @param run the run's directory name (NULL: "gprof"). @param out_path receives the file's path
 * (may be NULL). @return GP_OK, GP_EINVAL (bad run name), GP_EIO or GP_ENOMEM.
 */
gp_status gp_export_tensorboard(const gp_analysis *a, const gp_export_opts *opts,
                                const char *logdir, const char *run, char *out_path, size_t out_cap,
                                gp_error *err);

/**
 * Write one self-contained HTML file (no network, no external fonts; one inline script, allowed
 * by its hash, sorts the tables): summary, the step-time breakdown per step, GPU utilisation and
 * memory over time (inline SVG, findings' ranges highlighted) and each device's memory peaks,
 * the top-20 ops and kernels, and the findings with their evidence and their track and first
 * slice in the Perfetto export.
 * @return GP_OK, GP_EIO or GP_ENOMEM.
 */
gp_status gp_export_html(const gp_analysis *a, const gp_export_opts *opts, const char *path,
                         gp_error *err);

/**
 * Write a comparison (gp/compare.h, after gp_compare_finish) as one self-contained HTML page in
 * the report's style: the verdict and step times, both sides' step-time breakdown as two bars on
 * one scale, the `top` ops and kernels that moved most, peak memory, and the findings resolved,
 * new and still there, each with BASE's predicted gain beside the measured one. Only `title`
 * (NULL: the first trace of each side), `stream` and `temp_file` of `opts` are used.
 * @return GP_OK, GP_EIO or GP_ENOMEM.
 */
gp_status gp_export_compare_html(const gp_compare *c, size_t top, const gp_export_opts *opts,
                                 const char *path, gp_error *err);

#ifdef __cplusplus
}
#endif
#endif
