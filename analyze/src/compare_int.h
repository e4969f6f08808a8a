/* compare_int.h: private parts of gp_compare shared by the trace summary and the merge
 * (compare.c), the statistics (compare_stats.c) and the output (compare_write.c). */
#ifndef GP_ANALYZE_COMPARE_INT_H
#define GP_ANALYZE_COMPARE_INT_H

#include "gp/compare.h"

#include <stdint.h>

/* A key-averages row: totals in one part, per step on each side once merged. */
struct cmp_row {
    char *name;
    int is_device;
    double calls[2], time_ns[2]; /* time: self CPU for ops, device time for device rows */
};

struct gp_compare_part {
    int64_t *steps; /* analysed step durations, ns */
    size_t n_steps, n_all_steps;
    int64_t bd_total[GP_BD_COUNT]; /* breakdown summed over the analysed steps */
    struct cmp_row *rows;          /* key-averages totals in calls[0], time_ns[0] */
    size_t n_rows;
    int64_t peak_alloc; /* highest device allocated bytes; -1 without [memory] records */
    gp_findings *findings;
};

/* One rule on both sides: the worst severity over a side's traces, and that trace's metric. */
struct cmp_finding {
    const gp_finding *f[2]; /* NULL when the rule did not run on that side */
    gp_severity sev[2];
};

struct cmp_side {
    gp_compare_part **parts;
    char **labels;
    size_t n, cap;
    int64_t *steps; /* pooled */
    size_t n_steps, n_all_steps;
    double bd_mean[GP_BD_COUNT];
    int64_t peak_alloc;
};

struct gp_compare {
    struct cmp_side side[2];
    gp_compare_steps res;
    struct cmp_row *rows; /* merged, per step, sorted by name */
    size_t n_rows;
    struct cmp_finding *findings; /* in rule id order, every rule */
    size_t n_findings;
};

/* compare_stats.c. Two-sided p-value of the Mann-Whitney U test (normal approximation with the
 * tie correction and a continuity correction of 0.5); 1 when every value ties. */
double cmp_mann_whitney_p(const int64_t *a, size_t na, const int64_t *b, size_t nb);

/* 95% bootstrap interval of (mean(b) - mean(a)) / mean(a) * 100 from `rounds` resamples of both
 * sides, drawn with a fixed-seed generator (deterministic). */
void cmp_bootstrap_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, int rounds,
                      double *lo, double *hi);

/* Fill c->res from the pooled steps of both sides (sorts them). */
void cmp_step_verdict(gp_compare *c);

#endif
