/* cli/compare_runs.h: compare's arguments turned into runs. A trace file is a run; a folder
 * holding traces is one run (its traces pooled: the ranks or processes of one run); a folder
 * holding run folders, as `run -o DIR` and `sweep` leave them, is one run per folder under it
 * (down to 3 levels) that holds *.pt.trace.json[.gz] files. */
#ifndef GP_CLI_COMPARE_RUNS_H
#define GP_CLI_COMPARE_RUNS_H

#include "trace_jobs.h"

/* One side of a comparison: its trace paths and the run each belongs to. */
struct compare_side {
    struct trace_paths paths;
    size_t *run; /* run number of paths.v[i] */
    size_t n_runs;
};

/* Append args[0..n) to the side as runs. @return CLI_OK or CLI_ERROR (message printed). */
int compare_side_expand(struct compare_side *s, const char *const *args, int n);
void compare_side_release(struct compare_side *s);

#endif
