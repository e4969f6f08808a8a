/* A folder of run folders (`runs/`, where `gprof-train run` writes by default) given to report,
 * diagnose or export: its newest run is read, and said so; --all reads every run. */
#include "cli.h"
#include "run_folders.h"
#include "trace_jobs.h"

#include <stdio.h>

int trace_runs_add(struct trace_paths *p, const char *dir, int all, int *found)
{
    struct run_folder *runs;
    long n = run_folders_list(dir, 1, 1, &runs);
    int rc = CLI_OK, mode = p->runs;
    *found = n > 0;
    if (n < 0)
        return cli_error("out of memory listing the run folders in '%s'", dir);
    if (n == 0) {
        run_folders_free(runs, n);
        return CLI_OK;
    }
    long newest = run_folders_newest(runs, n);
    if (!all && n > 1)
        fprintf(stderr,
                "gprof-train: '%s' holds %ld runs: reading the newest, '%s' (--all reads them "
                "all)\n",
                dir, n, runs[newest].path);
    p->runs = 0;
    for (long i = 0; i < n && rc == CLI_OK; i++)
        if (all || i == newest)
            rc = trace_paths_expand(p, (const char *const *)&runs[i].path, 1);
    p->runs = mode;
    run_folders_free(runs, n);
    return rc;
}
