/* gprof-train summarize: the map step of `job` (issue 29). Each rank's trace becomes a small
 * summary, <trace name less .json[.gz]>.gprof-summary.json in OUTDIR, holding what `job` needs
 * of it, so traces can be summarised where they are (a Dask worker, a Slurm array task) and
 * `job` reduces the summaries: the same result as on the traces. */
#include "cli.h"
#include "cmds.h"
#include "job_parts.h"
#include "opt.h"
#include "trace_jobs.h"

#include "gp/fs.h"
#include "gp/job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {
        "gprof-train summarize [options] -o OUTDIR TRACE|DIR...",
        NULL,
};

/* OUTDIR/<name of `path` less .json[.gz]>.gprof-summary.json (malloc'd). */
static char *summary_path(const char *outdir, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n > 3 && !strcmp(b + n - 3, ".gz"))
        n -= 3;
    if (n > 5 && !strncmp(b + n - 5, ".json", 5))
        n -= 5;
    size_t len = strlen(outdir) + n + strlen(TRACE_SUMMARY_SUFFIX) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s/%.*s%s", outdir, (int)n, b, TRACE_SUMMARY_SUFFIX);
    return s;
}

/* Write part `p` to `out` through a temporary file, so a reader never sees half of it. */
static int write_summary(const char *out, const gp_job_part *p)
{
    size_t n = strlen(out) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return cli_error("out of memory");
    snprintf(tmp, n, "%s.%ld.part", out, (long)getpid());
    FILE *f = fopen(tmp, "w");
    gp_error err;
    int rc = f ? CLI_OK : cli_error("cannot write '%s': %s", tmp, strerror(errno));
    gp_status st = f ? gp_job_summary_write(f, p, &err) : GP_OK;
    if (f && fclose(f) != 0 && st == GP_OK)
        st = gp_error_set(&err, GP_EIO, tmp, "cannot write: %s", strerror(errno));
    if (rc == CLI_OK && st != GP_OK)
        rc = cli_error_from(&err, st);
    if (rc == CLI_OK && rename(tmp, out) != 0)
        rc = cli_error("cannot rename '%s' to '%s': %s", tmp, out, strerror(errno));
    if (rc != CLI_OK && f)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* Two traces of one name in different folders would write one summary. */
static int check_names(char **outs, size_t n, const struct trace_paths *paths)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < i; k++)
            if (!strcmp(outs[i], outs[k]))
                return cli_error("'%s' and '%s' would both write '%s': summarize them into "
                                 "different folders",
                                 paths->v[k], paths->v[i], outs[i]);
    return CLI_OK;
}

/* Write each part's summary, in argument order; print its path. */
static int write_all(struct rank_part *rs, char **outs, size_t n)
{
    int rc = CLI_OK;
    for (size_t i = 0; i < n; i++) {
        if (!rs[i].summary)
            trace_warnings_print(&rs[i].warnings, rs[i].path);
        if (rc == CLI_OK && rs[i].summary)
            cli_warn("'%s' is a summary already: left as it is", rs[i].path);
        else if (rc == CLI_OK && rs[i].rc != GP_OK)
            rc = cli_error_from(&rs[i].err, rs[i].rc);
        else if (rc == CLI_OK && (rc = write_summary(outs[i], rs[i].part)) == CLI_OK)
            printf("%s\n", outs[i]);
        gp_job_part_free(rs[i].part);
        trace_warnings_release(&rs[i].warnings);
    }
    return rc;
}

static int summarize(const struct trace_paths *paths, const char *outdir, long threads)
{
    struct rank_part *rs = calloc(paths->n ? paths->n : 1, sizeof(*rs));
    char **outs = calloc(paths->n ? paths->n : 1, sizeof(*outs));
    int rc = rs && outs ? CLI_OK : cli_error("out of memory");
    for (size_t i = 0; rc == CLI_OK && i < paths->n; i++) {
        rs[i].path = paths->v[i];
        if (!(outs[i] = summary_path(outdir, paths->v[i])))
            rc = cli_error("out of memory");
    }
    gp_error err;
    gp_status st = rc == CLI_OK ? gp_mkdir_p(outdir, &err) : GP_OK;
    if (rc == CLI_OK && st != GP_OK)
        rc = cli_error_from(&err, st);
    if (rc == CLI_OK)
        rc = check_names(outs, paths->n, paths);
    if (rc == CLI_OK) {
        trace_jobs_run(paths->n, threads, rank_part_load, rs);
        rc = write_all(rs, outs, paths->n);
    }
    for (size_t i = 0; outs && i < paths->n; i++)
        free(outs[i]);
    free(outs), free(rs);
    return rc;
}

int cmd_summarize(int argc, const char **argv)
{
    const char *max_memory = NULL, *outdir = NULL;
    long jobs = 0;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('o', "output", &outdir, "OUTDIR", "the folder to write the summaries in"),
            OPT_JOBS(&jobs),
            OPT_MAX_MEMORY(&max_memory),
            OPT_END(),
    };
    const struct opt_help help = {
            "summarize", usage,
            "Write what 'gprof-train job' needs of each rank's trace, a summary of a few KB to\n"
            "a few hundred KB (schema gprof-train.summary/1): its rank, host, steps and their\n"
            "breakdown, collectives, clock anchors and what the trace lost. Run it where the\n"
            "traces are (one task per rank: a Slurm array, a Dask cluster), then 'job' on the\n"
            "summaries gives what 'job' on the traces gives. Prints each summary's path.",
            "examples:\n"
            "    gprof-train summarize runs/ddp-job/ -o summaries/\n"
            "    gprof-train summarize rank$SLURM_ARRAY_TASK_ID.pt.trace.json.gz -o /shared/s/\n"
            "    gprof-train job /shared/s/\n",
            NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (cli_set_max_memory(max_memory) != CLI_OK)
        return CLI_ERROR;
    if (!outdir || !*outdir || n == 0) {
        cli_error(n == 0 ? "no trace given" : "no output folder given");
        cli_hint("gprof-train summarize -o OUTDIR TRACE|DIR...");
        return CLI_ERROR;
    }
    struct trace_paths paths = {0};
    int rc = trace_paths_expand(&paths, argv, n);
    if (rc == CLI_OK)
        rc = summarize(&paths, outdir, jobs);
    trace_paths_release(&paths);
    return rc;
}
