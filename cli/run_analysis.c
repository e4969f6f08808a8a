/* The report and diagnosis printed at the end of `gprof-train run`: for each trace, the summary
 * and the top of the key-averages table (device time when the trace has any, else CPU time),
 * then the findings of every rule. */
#include "run_analysis.h"
#include "cli.h"
#include "diagnose.h"

#include "gp/report.h"

#include <stdio.h>

#define RUN_REPORT_ROWS 15

static int report_one(const char *path)
{
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    gp_error err;
    gp_status rc = gp_trace_open(path, NULL, &t, &err);
    if (rc == GP_OK)
        rc = gp_analysis_run(t, NULL, &a, &err);
    if (rc == GP_OK) {
        size_t n_dev = 0;
        gp_analysis_devices(a, &n_dev);
        gp_report_opts o = {GP_REPORT_TABLE,
                            n_dev ? GP_SORT_CUDA_TIME_TOTAL : GP_SORT_CPU_TIME_TOTAL, GP_GROUP_NAME,
                            RUN_REPORT_ROWS, path};
        rc = gp_report_write(stdout, a, &o, &err);
    }
    if (rc != GP_OK)
        cli_warn("cannot report on '%s': %s", path, err.msg[0] ? err.msg : gp_strerror(rc));
    gp_analysis_free(a);
    gp_trace_free(t);
    return rc == GP_OK ? 0 : 1;
}

int run_print_analysis(const char *const *paths, int n)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        fputc('\n', stdout);
        failed += report_one(paths[i]);
    }
    if (n > 0) {
        fputc('\n', stdout);
        failed += diag_print_default(paths, n) ? 1 : 0;
    }
    return failed;
}
