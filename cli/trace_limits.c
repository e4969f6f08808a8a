/* trace_limits.c: the options every command reads traces with: the thread budget of -j (issue
 * 16 item 3) and the memory ceiling (issue 18 item 6): a
 * quarter of the machine's memory for the events by default (the analysis takes about as much
 * again, so a report peaks near half), --max-memory SIZE to change it, 0 for none. */
#include "cli.h"
#include "trace_jobs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gp_trace_opts opts; /* the CLI's own: one command, one ceiling, one thread budget */
static gp_analysis_opts aopts;
static pthread_once_t opts_once = PTHREAD_ONCE_INIT;

static size_t default_ceiling(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 4 : 0;
}

/* The test hooks the libraries no longer read (tests/analyze/split_same.sh drives the reader's
 * paths through the CLI): GP_TRACE_THREADS, GP_TRACE_SPLIT_MIN=0, GP_TRACE_NO_MMAP. */
static void test_hooks(void)
{
    const char *v = getenv("GP_TRACE_THREADS");
    if (v && *v)
        opts.threads = aopts.threads = atoi(v);
    v = getenv("GP_TRACE_SPLIT_MIN");
    if (v && *v && atol(v) == 0)
        opts.flags |= GP_TRACE_SPLIT_ANY;
    v = getenv("GP_TRACE_NO_MMAP");
    if (v && *v)
        opts.flags |= GP_TRACE_NO_MMAP;
}

/* By default a trace's events and names may take 64 times its size on disk, at least 256 MiB
 * (GP_TRACE_EXPANSION_FLOOR): the real traces take under 10 times (gzip included), a gzip bomb of
 * 14.6 MB took 9.9 GB and 163 s. --max-memory replaces both ceilings. */
#define DEFAULT_EXPANSION 64

static void init_opts(void)
{
    opts.max_memory = default_ceiling();
    opts.max_expansion = DEFAULT_EXPANSION;
    test_hooks();
}

/* Read by the job threads; written only by cli_set_max_memory and cli_share_threads, before
 * they start. */
const gp_trace_opts *cli_trace_opts(void)
{
    pthread_once(&opts_once, init_opts);
    return &opts;
}

const gp_analysis_opts *cli_analysis_opts(void)
{
    pthread_once(&opts_once, init_opts);
    return &aopts;
}

long cli_share_threads(long budget, size_t n_traces)
{
    pthread_once(&opts_once, init_opts);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long all = budget > 0 ? budget : cores > 0 ? cores : 1;
    long at_once = n_traces < (size_t)all ? (long)(n_traces ? n_traces : 1) : all;
    if (!getenv("GP_TRACE_THREADS") || !*getenv("GP_TRACE_THREADS"))
        opts.threads = aopts.threads = (int)(all / at_once > 0 ? all / at_once : 1);
    return at_once;
}

int cli_set_max_memory(const char *spec)
{
    if (!spec)
        return CLI_OK;
    char *end;
    double v = strtod(spec, &end);
    double unit = !strcmp(end, "") || !strcmp(end, "B")     ? 1
                  : !strcmp(end, "K") || !strcmp(end, "KB") ? 1024.0
                  : !strcmp(end, "M") || !strcmp(end, "MB") ? 1024.0 * 1024
                  : !strcmp(end, "G") || !strcmp(end, "GB") ? 1024.0 * 1024 * 1024
                                                            : -1;
    if (end == spec || unit < 0 || !(v >= 0) || v * unit > 1e18)
        return cli_error("invalid value '%s' for --max-memory (expected a size such as 512M or "
                         "8G, or 0 for no limit)",
                         spec);
    cli_trace_opts();
    opts.max_memory = (size_t)(v * unit);
    opts.max_expansion = 0;
    return CLI_OK;
}
