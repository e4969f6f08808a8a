/* gprof-train job: one distributed job's rank traces compared (issue 15): the per-rank table,
 * who waits for whom at each collective, and GT16 (straggler rank). Traces are read a few at a
 * time and each is reduced to a small summary before the next, so memory follows --jobs, not
 * the number of ranks. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"
#include "job_parts.h"
#include "trace_jobs.h"

#include "gp/export.h"
#include "gp/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --perfetto: each rank's trace read again, one at a time. */
struct rank_reader {
    gp_trace *t;
};

static gp_status reader_open(void *ud, const char *path, const gp_analysis **out, gp_error *err)
{
    struct rank_reader *r = ud;
    gp_analysis *a = NULL;
    gp_status rc = trace_open_held(path, &r->t, &a, err);
    *out = a;
    return rc;
}

static void reader_close(void *ud, const gp_analysis *a)
{
    struct rank_reader *r = ud;
    trace_release_held(r->t, (gp_analysis *)a);
    r->t = NULL;
}

static int write_timeline(const gp_job *j, const char *path)
{
    struct rank_reader r = {0};
    gp_export_rank_reader rd = {reader_open, reader_close, &r};
    gp_error err;
    gp_status st = gp_export_perfetto_is_proto_name(path)
                           ? gp_export_job_perfetto_proto(j, &rd, NULL, path, &err)
                           : gp_export_job_perfetto(j, &rd, NULL, path, &err);
    if (st != GP_OK)
        return cli_error_from(&err, st);
    fprintf(stderr, "perfetto: %s\n", path);
    return CLI_OK;
}

static int write_html(const gp_job *j, const char *path)
{
    gp_error err;
    gp_status st = gp_export_job_html(j, NULL, path, &err);
    if (st != GP_OK)
        return cli_error_from(&err, st);
    fprintf(stderr, "html: %s\n", path);
    return CLI_OK;
}

/* Where the job goes besides the report on stdout. */
struct job_outputs {
    const char *perfetto, *html;
};

static int run_job(const struct trace_paths *paths, const struct opt_list *sets, gp_job_format fmt,
                   unsigned flags, const char *name, long threads, const struct job_outputs *out)
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
        rc = out->perfetto ? write_timeline(j, out->perfetto) : CLI_OK;
        if (rc == CLI_OK && out->html)
            rc = write_html(j, out->html);
        if (rc == CLI_OK)
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
    struct job_outputs out = {0};
    struct opt_list sets = {0};
    int per_op = 0, per_coll = 0;
    long jobs = 0;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('f', "format", &format, "FMT", "text (default), json or ndjson"),
            OPT_BOOL(0, "per-op", &per_op, "ndjson: also a line per rank and collective op"),
            OPT_BOOL(0, "per-collective", &per_coll, "ndjson: also a line per collective"),
            OPT_STR(0, "job", &name, "NAME", "ndjson: the job's name in every line"),
            OPT_STR(0, "html", &out.html, "OUT.html",
                    "also write the Distributed view: ranks, who waited for whom, GT16"),
            OPT_STR(0, "perfetto", &out.perfetto, "OUT",
                    "also write the job on one Perfetto timeline: a process per rank on the "
                    "aligned clock, each rank's waits at collectives on a track (protobuf when "
                    "OUT ends in .pftrace or .perfetto-trace, else Chrome JSON)"),
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
            "    gprof-train job rank*.json --perfetto job.pftrace --html job.html\n"

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
    paths.summaries = 1;
    if (rc == CLI_OK && n == 0)
        rc = cli_error("no trace given"), cli_hint("gprof-train job TRACE|SUMMARY|DIR...");
    else if (rc == CLI_OK &&
             ((out.perfetto && !strcmp(out.perfetto, "-")) || (out.html && !strcmp(out.html, "-"))))
        rc = cli_error("job writes its report to stdout: give --perfetto and --html a file");
    else if (rc == CLI_OK && (rc = trace_paths_expand(&paths, argv, n)) == CLI_OK)
        rc = run_job(&paths, &sets, fmt,
                     (per_op ? GP_JOB_PER_OP : 0) | (per_coll ? GP_JOB_PER_COLL : 0), name, jobs,
                     &out);
    trace_paths_release(&paths);
    return rc;
}
