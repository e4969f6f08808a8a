/* cli/sweep_int.h: one sweep's state, shared by cmd_sweep.c (running) and sweep_out.c (the table
 * and sweep.json). */
#ifndef GP_CLI_SWEEP_INT_H
#define GP_CLI_SWEEP_INT_H

#include "sweep.h"

#include "gp/rules.h"

#include <limits.h>
#include <stdio.h>

#define SWEEP_MAX_REPEAT 32

/* One setting: its timed runs and its profiled window. */
struct sweep_result {
    char label[512];
    char dir[PATH_MAX + 160];       /* OUT/NN-label */
    double times[SWEEP_MAX_REPEAT]; /* seconds per unit, one per repeat that finished */
    int n_times;
    int exit_code; /* the first non-zero exit of its runs, else 0 */
    char failed_log[PATH_MAX + 256];
    double accuracy;                   /* test accuracy (trainer), NAN when unknown */
    char profiled[PATH_MAX];           /* the profiled trace, or "" */
    char no_trace_log[PATH_MAX + 208]; /* the log of a profiled window that wrote no trace */
    gp_findings *findings;             /* its diagnosis, or NULL */
};

struct sweep {
    struct sweep_spec spec;
    const char *const *tmpl; /* -- CMD ..., or NULL for the trainer */
    int n_tmpl;
    long steps, profile_steps, repeat, warmup;
    int no_profile;
    char out[PATH_MAX];
    char self[PATH_MAX];
    struct sweep_result *res;
    size_t n;
    int interrupted; /* the signal that stopped the sweep, or 0 */
};

/* Whether a setting ran at all (a timed run finished or failed, or its profiled window ran):
 * an interrupted sweep leaves the others out of the table and sweep.json. */
int sweep_ran(const struct sweep_result *r);

/* The median of a setting's times (NAN when none finished). */
double sweep_time(const struct sweep_result *r);

/* "per 300 steps", "per epoch" or "per run". */
const char *sweep_unit(const struct sweep *s, char *buf, size_t cap);

/* Print the table and the predicted-against-measured gains to `out`. */
void sweep_print(FILE *out, const struct sweep *s);

/* Write OUT/sweep.json. @return CLI_OK or CLI_ERROR (message printed). */
int sweep_write_json(const struct sweep *s);

#endif
