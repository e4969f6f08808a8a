/* gprof-train report: for each trace (files, or every .json/.json.gz in a directory) a summary
 * and the key-averages table, as PyTorch's prof.key_averages().table(). Traces are read and
 * analysed in parallel threads; their sections are printed in argument order. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"

#include "gp/report.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const usage[] = {
        "gprof-train report [options] TRACE|DIR...",
        NULL,
};

struct report_job {
    char *path;
    char *out; /* the section, from open_memstream */
    size_t out_len;
    gp_status rc;
    gp_error err;
    char **warnings;
    size_t n_warnings;
};

struct report_pool {
    struct report_job *jobs;
    size_t n, next;
    const gp_report_opts *opts;
    pthread_mutex_t mu;
};

static void keep_warnings(struct report_job *j, const gp_trace *t)
{
    size_t n;
    const char *const *w = gp_trace_warnings(t, &n);
    j->warnings = calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; j->warnings && i < n; i++)
        j->warnings[j->n_warnings++] = strdup(w[i]);
}

static void run_job(struct report_job *j, const gp_report_opts *base)
{
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    FILE *mem = open_memstream(&j->out, &j->out_len);
    gp_report_opts o = *base;
    o.title = j->path;
    j->rc = mem ? gp_trace_open(j->path, NULL, &t, &j->err) : GP_ENOMEM;
    if (j->rc == GP_OK) {
        keep_warnings(j, t);
        j->rc = gp_analysis_run(t, NULL, &a, &j->err);
    }
    if (j->rc == GP_OK)
        j->rc = gp_report_write(mem, a, &o, &j->err);
    if (mem)
        fclose(mem);
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void *worker(void *arg)
{
    struct report_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n)
            return NULL;
        run_job(&p->jobs[i], p->opts);
    }
}

static int is_trace_name(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && !strcmp(name + n - 5, ".json")) ||
           (n > 8 && !strcmp(name + n - 8, ".json.gz"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(((const struct report_job *)a)->path, ((const struct report_job *)b)->path);
}

/* Add `arg` (a file, or the traces in a directory, sorted) to the job list. */
static int add_path(const char *arg, struct report_job **jobs, size_t *n)
{
    struct stat st;
    if (stat(arg, &st) != 0)
        return cli_error("cannot read '%s': no such file or directory", arg);
    size_t first = *n;
    DIR *d = S_ISDIR(st.st_mode) ? opendir(arg) : NULL;
    for (struct dirent *e = d ? readdir(d) : NULL; d && e; e = readdir(d)) {
        if (!is_trace_name(e->d_name))
            continue;
        *jobs = realloc(*jobs, (*n + 1) * sizeof(**jobs));
        memset(&(*jobs)[*n], 0, sizeof(**jobs));
        size_t len = strlen(arg) + strlen(e->d_name) + 2;
        (*jobs)[*n].path = malloc(len);
        snprintf((*jobs)[*n].path, len, "%s/%s", arg, e->d_name);
        (*n)++;
    }
    if (d) {
        closedir(d);
        qsort(*jobs + first, *n - first, sizeof(**jobs), cmp_str);
        return *n > first ? 0 : cli_error("no traces (*.json, *.json.gz) in '%s'", arg);
    }
    *jobs = realloc(*jobs, (*n + 1) * sizeof(**jobs));
    memset(&(*jobs)[*n], 0, sizeof(**jobs));
    (*jobs)[(*n)++].path = strdup(arg);
    return 0;
}

static int print_job(const struct report_job *j, int first)
{
    for (size_t i = 0; i < j->n_warnings; i++)
        cli_warn("'%s': %s", j->path, j->warnings[i]);
    if (j->rc != GP_OK) {
        const gp_error *e = &j->err;
        if (e->line > 0 && e->offset >= 0)
            return cli_error("cannot read '%s' at line %ld, column %ld (byte %lld): %s", j->path,
                             e->line, e->col, e->offset, e->msg);
        return cli_error_from(e, j->rc);
    }
    if (!first)
        fputc('\n', stdout);
    fwrite(j->out, 1, j->out_len, stdout);
    return CLI_OK;
}

static int run_all(struct report_job *jobs, size_t n, long n_threads, const gp_report_opts *o)
{
    struct report_pool pool = {jobs, n, 0, o, PTHREAD_MUTEX_INITIALIZER};
    if (n_threads <= 0)
        n_threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (n_threads > (long)n)
        n_threads = (long)n;
    pthread_t th[64];
    int started = 0;
    for (long i = 1; i < n_threads && started < 64; i++)
        if (pthread_create(&th[started], NULL, worker, &pool) == 0)
            started++;
    worker(&pool);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    int rc = CLI_OK;
    for (size_t i = 0; i < n; i++)
        if (print_job(&jobs[i], i == 0) != CLI_OK)
            rc = CLI_ERROR;
    return rc;
}

static void free_jobs(struct report_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < jobs[i].n_warnings; k++)
            free(jobs[i].warnings[k]);
        free(jobs[i].warnings);
        free(jobs[i].out);
        free(jobs[i].path);
    }
    free(jobs);
}

static int parse_report_opts(const char *sort, const char *group_by, const char *format,
                             long row_limit, gp_report_opts *o)
{
    gp_error err;
    memset(o, 0, sizeof(*o));
    o->row_limit = row_limit;
    if (gp_sort_key_parse(sort, &o->sort, &err) != GP_OK ||
        gp_group_by_parse(group_by, &o->group_by, &err) != GP_OK ||
        gp_report_format_parse(format, &o->format, &err) != GP_OK) {
        cli_error("%s", err.msg);
        cli_hint("see 'gprof-train report --help'");
        return CLI_ERROR;
    }
    return CLI_OK;
}

int cmd_report(int argc, const char **argv)
{
    const char *sort = "cuda_time_total", *group_by = "name", *format = "table";
    long row_limit = 20, jobs_n = 0;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('s', "sort", &sort, "KEY",
                    "sort rows by KEY: cpu_time, cuda_time, cpu_time_total, cuda_time_total,\n"
                    "                              self_cpu_time_total, self_cuda_time_total, "
                    "count\n"
                    "                              (device_* spellings too; default "
                    "cuda_time_total)"),
            OPT_INT('n', "row-limit", &row_limit, "N", "print at most N rows (default 20, 0 = all)",
                    0, 1000000000),
            OPT_STR(0, "group-by", &group_by, "KEY", "name (default) or name+shape"),
            OPT_STR('f', "format", &format, "FMT", "table (default), csv or json"),
            OPT_INT('j', "jobs", &jobs_n, "N", "analyse N traces at once (default: one per core)",
                    0, 1024),
            OPT_END(),
    };
    const struct opt_help help = {
            "report", usage,
            "Read traces written by gprof-train or by PyTorch's profiler (.json or .json.gz) and "
            "print\n"
            "a summary (steps, step-time breakdown, GPU busy, memory) and the key-averages table "
            "with\n"
            "PyTorch's columns and semantics. A directory means every trace in it, one section "
            "each.",
            "examples:\n"
            "    gprof-train report runs/mlp-20261121-120000/\n"
            "    gprof-train report trace.pt.trace.json.gz --sort self_cpu_time_total -n 10\n"
            "    gprof-train report trace.json --format csv > ops.csv\n"};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (n == 0) {
        cli_error("no trace given");
        cli_hint("usage: %s", usage[0]);
        return CLI_ERROR;
    }
    gp_report_opts o;
    if (parse_report_opts(sort, group_by, format, row_limit, &o) != CLI_OK)
        return CLI_ERROR;
    struct report_job *jobs = NULL;
    size_t n_jobs = 0;
    int rc = CLI_OK;
    for (int i = 0; i < n && rc == CLI_OK; i++)
        rc = add_path(argv[i], &jobs, &n_jobs);
    if (rc == CLI_OK)
        rc = run_all(jobs, n_jobs, jobs_n, &o);
    free_jobs(jobs, n_jobs);
    return rc;
}
