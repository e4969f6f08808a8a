/* cli/run_analysis.h: what `gprof-train run` prints after the profiled work ends: for each trace,
 * the summary and key-averages table (report) and the diagnosis (diagnose). */
#ifndef GP_CLI_RUN_ANALYSIS_H
#define GP_CLI_RUN_ANALYSIS_H

#include "trace_jobs.h"

#include <stdint.h>

/* What the end of a run says about one trace: where it is, what it holds, what it lost. */
struct run_trace_note {
    const char *path;
    int read;        /* the trace could be read */
    int incomplete;  /* a .tmp, or "complete": false */
    uint64_t events; /* events read */
    struct trace_warnings warnings;
};

/* What run_print_analysis prints: nothing, or the reports and the diagnosis with the rules that
 * did not fire on one line (brief) or each on its own (--verbose). */
enum { RUN_REPORT_BRIEF = 0, RUN_NO_REPORT = 1, RUN_REPORT_VERBOSE = 2 };

/* Unless RUN_NO_REPORT, analyse and print each of `paths` (n traces) to stdout, then the
 * diagnosis; in any case fill notes[0..n) (the caller prints them with run_print_notes, last).
 * Problems are reported as warnings: the run itself already succeeded.
 * @return the number of traces that could not be analysed. */
int run_print_analysis(const char *const *paths, int n, int mode, struct run_trace_note *notes);

/* Print and release notes[0..n) to stderr: "trace 'P': N events" or "incomplete trace 'P': ...",
 * then what each trace lost (dropped records, the profiler's warnings). */
void run_print_notes(struct run_trace_note *notes, int n);

#endif
