/* cli/job_parts.h: a rank's part of a job, for `job` and `summarize`: from its trace (read,
 * analysed, summarised, its read warnings kept as the part's notes) or from its summary (the
 * notes it carries become the warnings), so either prints the same. */
#ifndef GP_CLI_JOB_PARTS_H
#define GP_CLI_JOB_PARTS_H

#include "trace_jobs.h"

#include "gp/job.h"

struct rank_part {
    const char *path;
    gp_job_part *part;
    gp_status rc;
    gp_error err;
    struct trace_warnings warnings;
    int summary; /* `path` is a summary */
};

/* For trace_jobs_run over an array of rank_part: fill the i-th from its path. */
void rank_part_load(size_t i, void *ud);

#endif
