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
    int64_t peak_alloc;    /* highest device allocated bytes; -1 without [memory] records */
    gp_findings *findings; /* freed once no side's worst finding of a rule is in it */
    size_t findings_used;  /* how many rules' worst finding on its side is one of these */
};

/* One rule on both sides: the worst severity over a side's traces, and that trace's metric. */
struct cmp_finding {
    const gp_finding *f[2]; /* NULL when the rule did not run on that side */
    gp_severity sev[2];
};

struct cmp_side {
    /* Each part is folded in as it is added, so that a side of many traces keeps their steps and
     * little else: its key-averages rows summed here (sorted by device flag and name, totals in
     * calls[0], time_ns[0]), and per rule the part holding the side's worst finding. */
    struct cmp_row *rows;
    size_t n_rows;
    gp_compare_part **worst; /* gp_rules_count() entries, NULL where no part has the rule */
    gp_compare_part **parts;
    char **labels;
    size_t *run_of; /* the caller's run number of each part */
    size_t n, cap;
    int64_t *steps;    /* pooled, run by run, each run's steps in its parts' order */
    size_t *run_start; /* n_runs + 1 offsets into steps */
    size_t n_runs, n_steps, n_all_steps;
    double bd_mean[GP_BD_COUNT];
    int64_t peak_alloc;
};

struct gp_compare {
    struct cmp_side side[2];
    gp_compare_steps res;
    double run_noise_pct;
    struct cmp_row *rows; /* merged, per step, sorted by name */
    size_t n_rows;
    struct cmp_finding *findings; /* in rule id order, every rule */
    size_t n_findings;
};

/* compare.c. The finding of rule number `rule` in part `p`'s findings, or NULL. */
const gp_finding *cmp_part_finding(const gp_compare_part *p, size_t rule);

/* compare_stats.c. Student's t: the two-sided tail probability of |t| and the 97.5% quantile. */
double cmp_t_two_sided_p(double t, double df);
double cmp_t_critical(double df);

/* compare_steps.c. Group a side's parts into runs and pool each run's steps (steps, run_start,
 * n_runs). @return GP_OK or GP_ENOMEM. */
gp_status cmp_pool_runs(struct cmp_side *s);

/* Fill c->res from the runs of both sides (after cmp_pool_runs). @return GP_OK or GP_ENOMEM. */
gp_status cmp_step_verdict(gp_compare *c);

#endif
