/* What `gprof-train run` prints after the profiled work ends: for each trace, the summary and
 * the top of the key-averages table (device time when the trace has any, else CPU time), then
 * the findings of every rule; last, on stderr, where each trace is, how many events it holds
 * and what it lost (an incomplete trace, dropped records, the profiler's warnings). */
#include "trace_jobs.h"
#include "run_analysis.h"
#include "cli.h"
#include "diagnose.h"

#include "gp/report.h"

#include <stdio.h>
#include <string.h>

#define RUN_REPORT_ROWS 15

static void keep_note(const gp_trace *t, void *ud)
{
    struct run_trace_note *note = ud;
    note->read = 1;
    note->events = gp_trace_get_info(t)->n_events;
    note->incomplete = gp_trace_get_quality(t)->incomplete;
}

static gp_status report_use(const gp_analysis *a, void *ud, gp_error *err)
{
    const struct run_trace_note *note = ud;
    gp_report_opts o = {.format = GP_REPORT_TABLE,
                        .sort = gp_sort_key_default(a),
                        .group_by = GP_GROUP_NAME,
                        .row_limit = RUN_REPORT_ROWS,
                        .title = note->path};
    fputc('\n', stdout);
    return gp_report_write(stdout, a, &o, err);
}

static int report_one(const char *path, int no_report, struct run_trace_note *note)
{
    gp_error err;
    memset(note, 0, sizeof(*note));
    note->path = path;
    const struct trace_steps steps = {keep_note, no_report ? NULL : report_use};
    gp_status rc = trace_pipeline(path, &note->warnings, &steps, note, &err);
    if (rc != GP_OK)
        cli_warn("cannot report on '%s': %s", path, err.msg[0] ? err.msg : gp_strerror(rc));
    return rc == GP_OK ? 0 : 1;
}

int run_print_analysis(const char *const *paths, int n, int mode, struct run_trace_note *notes)
{
    int failed = 0, no_report = mode == RUN_NO_REPORT;
    for (int i = 0; i < n; i++)
        failed += report_one(paths[i], no_report, &notes[i]);
    if (n > 0 && !no_report) {
        fputc('\n', stdout);
        failed += diag_print_default(paths, n, mode == RUN_REPORT_VERBOSE) ? 1 : 0;
    }
    fflush(stdout);
    return failed;
}

void run_print_notes(struct run_trace_note *notes, int n)
{
    for (int i = 0; i < n; i++) {
        struct run_trace_note *t = &notes[i];
        if (t->read)
            fprintf(stderr, "gprof-train: %s '%s': %llu events\n",
                    t->incomplete ? "incomplete trace" : "trace", t->path,
                    (unsigned long long)t->events);
        for (size_t k = 0; k < t->warnings.n; k++)
            cli_warn("%s", t->warnings.v[k]);
        trace_warnings_release(&t->warnings);
    }
}
