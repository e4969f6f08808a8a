/* gprof-train job: one distributed job's rank traces compared (issue 15): the per-rank table,
 * who waits for whom at each collective, and GT16 (straggler rank). Traces are read a few at a
 * time and each is reduced to a small summary before the next, so memory follows --jobs, not
 * the number of ranks. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"
#include "job_parts.h"
#include "trace_jobs.h"

#include "gp/job.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const usage[] = {
        "gprof-train job [options] TRACE|SUMMARY|DIR...",
        NULL,
};

/* Read every trace or summary into `j`, in argument order. */
static int gather(gp_job *j, const struct trace_paths *paths, long threads)
{
    struct rank_part *rs = calloc(paths->n ? paths->n : 1, sizeof(*rs));
    if (!rs)
        return cli_error("out of memory");
    for (size_t i = 0; i < paths->n; i++)
        rs[i].path = paths->v[i];
    trace_jobs_run(paths->n, threads, rank_part_load, rs);
    int rc = CLI_OK;
    for (size_t i = 0; i < paths->n; i++) {
        trace_warnings_print(&rs[i].warnings, rs[i].path);
        gp_error err;
        if (rc == CLI_OK && rs[i].rc != GP_OK)
            rc = cli_error_from(&rs[i].err, rs[i].rc);
        else if (rc == CLI_OK && gp_job_add(j, rs[i].part, &err) != GP_OK)
            rc = cli_error_from(&err, GP_ENOMEM);
        else if (rc != CLI_OK)
            gp_job_part_free(rs[i].part);
        trace_warnings_release(&rs[i].warnings);
    }
    free(rs);
    return rc;
}

static int run_job(const struct trace_paths *paths, const struct opt_list *sets, gp_job_format fmt,
                   unsigned flags, const char *name, long threads)
{
    gp_job *j = NULL;
    gp_error err;
    gp_status st = gp_job_new(&j, &err);
    for (int i = 0; st == GP_OK && i < sets->n; i++)
        st = gp_job_set(j, sets->items[i], &err);
    int rc = st == GP_OK ? gather(j, paths, threads) : cli_error_from(&err, st);
    if (rc == CLI_OK && (st = gp_job_finish(j, &err)) == GP_OK) {
        size_t n;
        gp_job_ranks(j, &n);
        if (gp_job_world_size(j) > (int)n)
            cli_warn("%zu trace%s of a job of %d ranks (distributedInfo.world_size): a "
                     "straggler among the other %zu is not seen",
                     n, n == 1 ? "" : "s", gp_job_world_size(j), (size_t)gp_job_world_size(j) - n);
        st = gp_job_write(stdout, j, fmt, flags, name, &err);
    }
    if (rc == CLI_OK && st != GP_OK)
        rc = cli_error_from(&err, st);
    gp_job_free(j);
    return rc;
}

int cmd_job(int argc, const char **argv)
{
    const char *max_memory = NULL;
    const char *format = "text", *name = NULL;
    struct opt_list sets = {0};
    int per_op = 0, per_coll = 0;
    long jobs = 0;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('f', "format", &format, "FMT", "text (default), json or ndjson"),
            OPT_BOOL(0, "per-op", &per_op, "ndjson: also a line per rank and collective op"),
            OPT_BOOL(0, "per-collective", &per_coll, "ndjson: also a line per collective"),
            OPT_STR(0, "job", &name, "NAME", "ndjson: the job's name in every line"),
            OPT_LIST(0, "set", &sets, "GT16.PARAM=VALUE",
                     "override a threshold, e.g. GT16.min_lag_us=500"),
            OPT_JOBS(&jobs),
            OPT_MAX_MEMORY(&max_memory),
            OPT_END(),
    };
    const struct opt_help help = {
            "job", usage,
            "Compare the rank traces of one distributed job: per rank, step time (mean, p95),\n"
            "compute, communication, exposed communication, GPU idle and DataLoader per step,\n"
            "ranks aligned by step number and clocks aligned on collectives; which rank arrives\n"
            "last at each collective and how long the others wait; GT16 names a straggler rank\n"
            "and what makes it slow in its own trace. Takes traces and their summaries\n"
            "('gprof-train summarize'), in any mix: the result is the same.",
            "examples:\n"
            "    gprof-train job runs/ddp-job/\n"
            "    gprof-train job rank*.pt.trace.json.gz --format json\n"
            "    gprof-train job traces/ --format ndjson --per-op --job run42 > run42.ndjson\n"
            "    gprof-train job summaries/    # written by 'gprof-train summarize' on each node\n",
            NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (cli_set_max_memory(max_memory) != CLI_OK)
        return CLI_ERROR;
    gp_job_format fmt;
    gp_error err;
    struct trace_paths paths = {0};
    gp_status st = gp_job_format_parse(format, &fmt, &err);
    int rc = st == GP_OK ? CLI_OK : cli_error_from(&err, st);
    if (rc == CLI_OK && n == 0)
        rc = cli_error("no trace given"), cli_hint("gprof-train job TRACE|DIR...");
    paths.summaries = 1;
    if (rc == CLI_OK && n > 0 && (rc = trace_paths_expand(&paths, argv, n)) == CLI_OK)
        rc = run_job(&paths, &sets, fmt,
                     (per_op ? GP_JOB_PER_OP : 0) | (per_coll ? GP_JOB_PER_COLL : 0), name, jobs);
    trace_paths_release(&paths);
    return rc;
}
