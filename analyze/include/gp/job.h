/* gp/job.h: one distributed job seen across its ranks (issue 15). Each rank's trace is analysed
 * alone and summarised into a small gp_job_part (per-step metrics and its collectives), so a job
 * of any size needs memory for the traces being read at once plus a few bytes per step and per
 * collective. The job then aligns the ranks by step number, aligns their clocks on collectives
 * where wall clocks disagree, finds which rank arrived last at each collective and how long the
 * others waited, and runs GT16 (straggler rank). Output: text, JSON and NDJSON (one line a rank).
 * `err` and NULL: the conventions in gp/trace.h. */
#ifndef GP_ANALYZE_JOB_H
#define GP_ANALYZE_JOB_H

#include "gp/analysis.h"
#include "gp/rules.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One rank's summary, built from its analysis; owns copies of everything it keeps. */
typedef struct gp_job_part gp_job_part;

/** A job: the parts of its ranks, then (after gp_job_finish) the cross-rank view. */
typedef struct gp_job gp_job;

/** @return the collective's operation as NCCL names it ("AllReduce", "AllGather", "ReduceScatter",
 * "Broadcast", "Reduce", "AllToAll", "SendRecv", "Send", "Recv"), "Generic" for RCCL's generic
 * kernel, or "other". Static storage. */
const char *gp_job_comm_op(const char *name);

/** Summarise one rank. The rank comes from distributedInfo, else from the file name ("rank3",
 * "rank_3", "rank-3"), else it is given in gp_job_finish() by argument order.
 * @param a the analysed trace (not kept). @param out receives the part (free: gp_job_part_free,
 * or hand it to gp_job_add). @return GP_OK or GP_ENOMEM. Thread-safe for distinct outputs. */
gp_status gp_job_part_new(const gp_analysis *a, gp_job_part **out, gp_error *err);

/** Free a part. NULL is a no-op. */
void gp_job_part_free(gp_job_part *p);

/** The schema tag of a rank's summary (gp_job_summary_write); a later version changes the
 * number. */
#define GP_JOB_SUMMARY_SCHEMA "gprof-train.summary/1"

/** Write part `p` (made by gp_job_part_new, before gp_job_add) as a summary: one JSON object,
 * schema GP_JOB_SUMMARY_SCHEMA, that gp_job_summary_read turns back into an equal part (its
 * fields: README.md, "Summaries"). @return GP_OK, GP_ENOMEM or GP_EIO. */
gp_status gp_job_summary_write(FILE *out, const gp_job_part *p, gp_error *err);

/** @return 1 when the file at `path` begins as a summary ({"schema": "gprof-train.summary/...),
 * 0 otherwise (a trace, or a file that cannot be read). */
int gp_job_is_summary(const char *path);

/** Read a summary into a part, as gp_job_part_new makes it from the trace.
 * @return GP_OK; GP_EIO (cannot read), GP_EPARSE (err names the position and the problem: not
 * JSON, another schema, a field of the wrong type) or GP_ENOMEM. */
gp_status gp_job_summary_read(const char *path, gp_job_part **out, gp_error *err);

/** Keep a note of what the rank's trace lost or left unfinished (its read warnings): a summary
 * carries them, so `job` can say them as it would reading the trace. @return GP_OK or
 * GP_ENOMEM. */
gp_status gp_job_part_add_note(gp_job_part *p, const char *note, gp_error *err);

/** @return the part's notes, in order, and their count. */
const char *const *gp_job_part_notes(const gp_job_part *p, size_t *n);

/** Make an empty job. @return GP_OK or GP_ENOMEM. */
gp_status gp_job_new(gp_job **out, gp_error *err);

/** Free a job and its parts. NULL is a no-op. */
void gp_job_free(gp_job *j);

/** Add a rank's part; the job takes ownership (also on failure). @return GP_OK or GP_ENOMEM. */
gp_status gp_job_add(gp_job *j, gp_job_part *p, gp_error *err);

/** Override a GT16 threshold: "GT16.PARAM=VALUE" or "straggler.PARAM=VALUE".
 * @return GP_OK, or GP_EINVAL naming the unknown parameter or bad value. */
gp_status gp_job_set(gp_job *j, const char *assignment, gp_error *err);

/** @return GT16's rule description (id, name, parameters with defaults). Static storage. */
const gp_rule_info *gp_job_rule_info(void);

/** Build the cross-rank view: ranks, clock offsets, collectives, GT16.
 * @return GP_OK, GP_EINVAL (two traces of the same rank; no trace) or GP_ENOMEM. */
gp_status gp_job_finish(gp_job *j, gp_error *err);

/** One rank of the job. Times in ns; per-step values are means over the steps every rank has
 * (all of the rank's steps when they share none). */
typedef struct gp_job_rank {
    int rank;               /**< distributedInfo.rank, the file name's, or by order */
    const char *rank_from;  /**< "distributedInfo", "file name" or "order" */
    const char *path;       /**< the trace */
    const char *host;       /**< "<host>" of a "<host>_<pid>..." file name, or "" */
    size_t n_steps;         /**< steps used (aligned by number) */
    int64_t step_mean;      /**< mean step time */
    int64_t step_p95;       /**< p95 step time (nearest rank) */
    int64_t compute;        /**< |compute kernels| per step (union) */
    int64_t comm;           /**< |communication kernels| per step (union) */
    int64_t exposed_comm;   /**< communication not overlapped by compute, per step */
    int64_t idle;           /**< GPU idle per step (no kernel, memcpy or memset) */
    int64_t loader;         /**< DataLoader per step (tb_plugin's breakdown) */
    int64_t clock_offset;   /**< subtracted from this rank's times to align it on collectives */
    uint64_t n_collectives; /**< collectives matched with other ranks */
    uint64_t n_last;        /**< of those, where this rank arrived last (by more than min_lag) */
    int64_t held;           /**< per step: how long the typical rank waited for this one, with
                                 nothing to compute (each wait once, job_held.c) */
    int64_t waited;         /**< per step: how long this rank waited for the last one */
    int64_t start;          /**< its trace's first event, unix ns on its own clock */
    uint64_t n_clock_refs;  /**< collectives its clock offset was measured on (shared with the
                                 first rank; the first rank: its matched ones). 0 on a rank
                                 other than the first: its clock cannot be aligned */
    int64_t clock_spread;   /**< what is left of clock uncertainty after alignment: the largest
                                 distance of its matched collectives' ends from the others'
                                 median end (0 when none was matched) */
} gp_job_rank;

/** @return the ranks sorted by rank, and their count. Valid after gp_job_finish. */
const gp_job_rank *gp_job_ranks(const gp_job *j, size_t *n);

/** One collective, matched across ranks by its process group (else its stream), its name (else
 * its operation), its size where every rank's must be equal, and its number in the group
 * (PyTorch's "Seq" where recorded, else its order among such calls in the step); a rank whose
 * call ends more than GT16.match_us from the others' after clock alignment is left out of it
 * (another collective under the same key: one was missing on that rank). */
typedef struct gp_job_collective {
    int64_t step;     /**< ProfilerStep number, or -1 outside steps */
    uint32_t index;   /**< 0-based order among the first rank's collectives in that step */
    const char *op;   /**< gp_job_comm_op() of the kernel */
    uint32_t n_ranks; /**< ranks that took part */
    int last_rank;    /**< the rank that arrived last */
    int64_t lag;      /**< its arrival minus the median arrival of the others */
    int64_t waited;   /**< sum over ranks of (last arrival - their arrival) */
    int64_t ts;       /**< the last arrival, unix ns, on the first rank's clock */
    int64_t transfer; /**< the last rank's call: from its arrival to its end */
} gp_job_collective;

/** @return the collectives sorted by (step, index), and their count. Valid after finish. */
const gp_job_collective *gp_job_collectives(const gp_job *j, size_t *n);

/** A rank's wait at a collective where another rank arrived last (by at least GT16.min_lag_us
 * over the median arrival): unix ns on the job's aligned clock (the first rank's). */
typedef struct gp_job_wait {
    int64_t ts;     /**< this rank's arrival (its call's start) */
    int64_t until;  /**< the last rank's arrival: ts == until on the last rank itself */
    int64_t end;    /**< its call's end */
    int last_rank;  /**< the rank waited for */
    const char *op; /**< gp_job_comm_op() of the collective */
} gp_job_wait;

/** @return how many waits the rank at index `i` of gp_job_ranks() has. Valid after finish. */
size_t gp_job_rank_n_waits(const gp_job *j, size_t i);

/** @return wait `k` (< gp_job_rank_n_waits) of the rank at index `i`, in matching order. */
gp_job_wait gp_job_rank_wait(const gp_job *j, size_t i, size_t k);

/** @return the largest distributedInfo.world_size of the traces (0 when none says): more than
 * the ranks given means the job is seen in part. Valid after finish. */
int gp_job_world_size(const gp_job *j);

/** @return GT16's finding, as a gp_findings of one item named "job (N ranks)"; valid after
 * finish, until gp_job_free. */
const gp_findings *gp_job_findings(const gp_job *j);

/** Output formats of gp_job_write(). */
typedef enum gp_job_format { GP_JOB_TEXT = 0, GP_JOB_JSON, GP_JOB_NDJSON } gp_job_format;

/** Parse "text", "json" or "ndjson". @return GP_OK or GP_EINVAL. */
gp_status gp_job_format_parse(const char *s, gp_job_format *out, gp_error *err);

/** Flags of gp_job_write(). */
enum gp_job_write_flags {
    GP_JOB_PER_OP = 1 << 0,  /**< NDJSON: also a line per rank x collective operation */
    GP_JOB_PER_COLL = 1 << 1 /**< NDJSON: also a line per collective */
};

/** Write the finished job to `out`. Text: the rank table, the collectives that waited longest and
 * GT16. JSON: one document, schema "gprof-train.job/1": {"schema", "ranks": [...], "steps":
 * [{"step", "slowest_rank", "max_us", "min_us"}], "collectives": [...], "diagnose": <the
 * gprof-train.diagnose/1 document of GT16>}. NDJSON: one object a line, "kind": "rank" (the
 * fields of gp_job_rank in us, plus "job") and with GP_JOB_PER_OP "kind": "rank_op" ("rank",
 * "op", "calls", "time_us", "waited_us"), with GP_JOB_PER_COLL "kind": "collective" ("step",
 * "index", "op", "ranks", "last_rank", "lag_us", "waited_us", "transfer_us").
 * @param out the stream. @param j the finished job (gp_job_finish). @param format as above.
 * @param flags gp_job_write_flags, or 0. @param job names the job in NDJSON lines (NULL: "").
 * @param err NULL: the status alone. @return GP_OK or GP_EIO. */
gp_status gp_job_write(FILE *out, const gp_job *j, gp_job_format format, unsigned flags,
                       const char *job, gp_error *err);

#ifdef __cplusplus
}
#endif
#endif
