/* gprof-train report: for each trace (files, or every .json/.json.gz in a directory) a summary
 * and the key-averages table, as PyTorch's prof.key_averages().table(). Traces are read and
 * analysed in parallel threads; their sections are printed in argument order. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"
#include "trace_jobs.h"

#include "gp/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {
        "gprof-train report [options] TRACE|DIR...",
        NULL,
};

struct report_job {
    const char *path;
    char *out; /* the section, from open_memstream */
    size_t out_len;
    gp_status rc;
    gp_error err;
    struct trace_warnings warnings;
};

struct report_run {
    struct report_job *jobs;
    const gp_report_opts *opts;
    int auto_sort; /* no --sort: gp_sort_key_default, device time or else CPU time */
};

/* One trace's report into its memory stream. */
struct report_use {
    const struct report_run *r;
    const char *path;
    FILE *mem;
};

static gp_status report_use(const gp_analysis *a, void *ud, gp_error *err)
{
    const struct report_use *u = ud;
    gp_report_opts o = *u->r->opts;
    o.title = u->path;
    if (u->r->auto_sort)
        o.sort = gp_sort_key_default(a);
    return gp_report_write(u->mem, a, &o, err);
}

static void run_job(size_t i, void *ud)
{
    struct report_run *r = ud;
    struct report_job *j = &r->jobs[i];
    struct report_use u = {r, j->path, open_memstream(&j->out, &j->out_len)};
    j->rc = u.mem ? trace_analysed(j->path, &j->warnings, report_use, &u, &j->err) : GP_ENOMEM;
    if (u.mem)
        fclose(u.mem);
}

/* Print one trace's section: text and CSV sections a blank line apart, JSON objects as the
 * items of the "traces" array, NDJSON objects a line each. */
static int print_job(const struct report_job *j, gp_report_format fmt, int *first)
{
    trace_warnings_print(&j->warnings, j->path);
    if (j->rc != GP_OK)
        return cli_error_from(&j->err, j->rc);
    size_t len = j->out_len;
    if (fmt == GP_REPORT_JSON) {
        while (len && j->out[len - 1] == '\n')
            len--;
        fputs(*first ? "\n" : ",\n", stdout);
    } else if (!*first && fmt != GP_REPORT_NDJSON) {
        fputc('\n', stdout);
    }
    fwrite(j->out, 1, len, stdout);
    *first = 0;
    return CLI_OK;
}

static int run_all(const struct trace_paths *paths, long n_threads, const gp_report_opts *o,
                   int auto_sort)
{
    struct report_run r = {calloc(paths->n ? paths->n : 1, sizeof(struct report_job)), o,
                           auto_sort};
    if (!r.jobs)
        return cli_error("out of memory");
    for (size_t i = 0; i < paths->n; i++)
        r.jobs[i].path = paths->v[i];
    trace_jobs_run(paths->n, n_threads, run_job, &r);
    int rc = CLI_OK, first = 1;
    if (o->format == GP_REPORT_JSON)
        fputs("{\"schema\":\"gprof-train.report/1\",\"traces\":[", stdout);
    for (size_t i = 0; i < paths->n; i++) {
        if (print_job(&r.jobs[i], o->format, &first) != CLI_OK)
            rc = CLI_ERROR;
        trace_warnings_release(&r.jobs[i].warnings);
        free(r.jobs[i].out);
    }
    if (o->format == GP_REPORT_JSON)
        fputs("]}\n", stdout);
    free(r.jobs);
    return rc;
}

/* What report's flags say, as given (NULL sort: each trace's default). */
struct report_flags {
    const char *sort, *group_by, *format;
    long row_limit;
};

static int parse_report_opts(const struct report_flags *f, gp_report_opts *o)
{
    gp_error err;
    memset(o, 0, sizeof(*o));
    o->row_limit = f->row_limit;
    /* no --sort: each trace's gp_sort_key_default (report_use) */
    if ((f->sort && gp_sort_key_parse(f->sort, &o->sort, &err) != GP_OK) ||
        gp_group_by_parse(f->group_by, &o->group_by, &err) != GP_OK ||
        gp_report_format_parse(f->format, &o->format, &err) != GP_OK) {
        cli_error("%s", err.msg);
        cli_hint("see 'gprof-train report --help'");
        return CLI_ERROR;
    }
    return CLI_OK;
}

int cmd_report(int argc, const char **argv)
{
    const char *max_memory = NULL;
    struct report_flags f = {.sort = NULL, .group_by = "name", .format = "table", .row_limit = 20};
    long jobs_n = 0;
    int all_runs = 0;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('s', "sort", &f.sort, "KEY",
                    "sort rows by KEY: cpu_time, cuda_time, cpu_time_total, cuda_time_total, "
                    "self_cpu_time_total, self_cuda_time_total, "
                    "count "
                    "(device_* spellings too; default "
                    "cuda_time_total, "
                    "or cpu_time_total for a trace without GPU "
                    "activity)"),
            OPT_INT('n', "row-limit", &f.row_limit, "N",
                    "print at most N rows (default 20, 0 = all)", 0, 1000000000),
            OPT_STR(0, "group-by", &f.group_by, "KEY", "name (default) or name+shape"),
            OPT_STR('f', "format", &f.format, "FMT",
                    "table (default), csv, json or ndjson: "
                    "json is one document, {\"schema\": "
                    "\"gprof-train.report/1\", "
                    "\"traces\": [{\"trace\", \"summary\", "
                    "\"rows\": [...]}, ...]}, "
                    "the traces in argument order; ndjson is one "
                    "such "
                    "trace object a line"),
            OPT_JOBS(&jobs_n),
            OPT_MAX_MEMORY(&max_memory),
            OPT_ALL_RUNS(&all_runs),
            OPT_END(),
    };
    const struct opt_help help = {
            "report", usage,
            "Read traces written by gprof-train or by PyTorch's profiler (.json or .json.gz) and "
            "print\n"
            "a summary (steps, step-time breakdown, GPU busy, memory) and the key-averages table "
            "with\n"
            "PyTorch's columns and semantics. A directory means every trace in it, one section "
            "each;\n"
            "a folder of run folders (runs/) its newest run (--all: every run).",
            "examples:\n"
            "    gprof-train report runs/mlp-20261121-120000/\n"
            "    gprof-train report trace.pt.trace.json.gz --sort self_cpu_time_total -n 10\n"
            "    gprof-train report trace.json --format csv > ops.csv\n",
            NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (cli_set_max_memory(max_memory) != CLI_OK)
        return CLI_ERROR;
    if (n == 0) {
        cli_error("no trace given");
        cli_hint("usage: %s", usage[0]);
        return CLI_ERROR;
    }
    gp_report_opts o;
    if (parse_report_opts(&f, &o) != CLI_OK)
        return CLI_ERROR;
    struct trace_paths paths = {.runs = all_runs ? TRACE_RUNS_ALL : TRACE_RUNS_NEWEST};
    int rc = trace_paths_expand(&paths, argv, n);
    if (rc == CLI_OK)
        rc = run_all(&paths, jobs_n, &o, f.sort == NULL);
    trace_paths_release(&paths);
    return rc;
}
