/* trace_limits.c: the memory ceiling every command reads traces under (issue 18 item 6): a
 * quarter of the machine's memory for the events by default (the analysis takes about as much
 * again, so a report peaks near half), --max-memory SIZE to change it, 0 for none. */
#include "cli.h"
#include "trace_jobs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gp_trace_opts opts; /* the CLI's own: one command, one ceiling */
static pthread_once_t opts_once = PTHREAD_ONCE_INIT;

static size_t default_ceiling(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 4 : 0;
}

static void init_opts(void)
{
    opts.max_memory = default_ceiling();
}

/* Read by the job threads; written only by cli_set_max_memory, before they start. */
const gp_trace_opts *cli_trace_opts(void)
{
    pthread_once(&opts_once, init_opts);
    return &opts;
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
    return CLI_OK;
}
