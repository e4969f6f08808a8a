/* compare_steps.c: a side's traces grouped into runs, and the step-time result of both sides:
 * the mean of the run means, percentiles over the pooled steps, and the verdict with runs as
 * the unit (gp_change_test_runs). */
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_STEPS_TESTED 3

/* The index of the first part with the same run number as part i. */
static size_t first_of_run(const struct cmp_side *s, size_t i)
{
    size_t j = 0;
    while (s->run_of[j] != s->run_of[i])
        j++;
    return j;
}

gp_status cmp_pool_runs(struct cmp_side *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->parts[i]->n_steps;
    s->steps = malloc((n ? n : 1) * sizeof(int64_t));
    s->run_start = malloc((s->n + 1) * sizeof(size_t));
    if (!s->steps || !s->run_start)
        return GP_ENOMEM;
    for (size_t i = 0; i < s->n; i++) {
        if (first_of_run(s, i) != i)
            continue; /* a later part of a run already pooled */
        s->run_start[s->n_runs++] = s->n_steps;
        for (size_t j = i; j < s->n; j++) {
            const gp_compare_part *p = s->parts[j];
            if (s->run_of[j] != s->run_of[i])
                continue;
            memcpy(s->steps + s->n_steps, p->steps, p->n_steps * sizeof(int64_t));
            s->n_steps += p->n_steps;
        }
    }
    s->run_start[s->n_runs] = s->n_steps;
    return GP_OK;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int64_t nearest_rank(const int64_t *sorted, size_t n, int pct)
{
    return sorted[(n * (size_t)pct + 99) / 100 - 1];
}

/* p50 and p95 over the pooled steps (a sorted copy: the runs keep their order). */
static gp_status percentiles(const struct cmp_side *sd, int64_t *p50, int64_t *p95)
{
    int64_t *v = malloc((sd->n_steps ? sd->n_steps : 1) * sizeof(*v));
    if (!v)
        return GP_ENOMEM;
    memcpy(v, sd->steps, sd->n_steps * sizeof(*v));
    qsort(v, sd->n_steps, sizeof(*v), cmp_i64);
    *p50 = nearest_rank(v, sd->n_steps, 50);
    *p95 = nearest_rank(v, sd->n_steps, 95);
    free(v);
    return GP_OK;
}

/* A side's runs that have steps, as gp_run_values over `buf` (the steps as doubles), in *k.
 * @return the mean of their means. */
static double side_runs(const struct cmp_side *sd, double *buf, gp_run_values *runs, size_t *k)
{
    double sum = 0;
    for (size_t i = 0; i < sd->n_steps; i++)
        buf[i] = (double)sd->steps[i];
    *k = 0;
    for (size_t r = 0; r < sd->n_runs; r++) {
        gp_run_values v = {buf + sd->run_start[r], sd->run_start[r + 1] - sd->run_start[r]};
        double run_sum = 0;
        for (size_t i = 0; i < v.n; i++)
            run_sum += v.v[i];
        if (v.n > 0)
            runs[(*k)++] = v, sum += run_sum / (double)v.n;
    }
    return *k ? sum / (double)*k : 0;
}

static void test_runs(gp_compare *c, gp_run_values *const runs[2])
{
    gp_compare_steps *r = &c->res;
    gp_change_test t;
    gp_change_test_runs(runs[0], r->n_runs[0], runs[1], r->n_runs[1], c->run_noise_pct, &t);
    r->typical_change_pct = t.typical_change_pct;
    r->ci_lo_pct = t.ci_lo_pct, r->ci_hi_pct = t.ci_hi_pct;
    r->detectable_pct = t.detectable_pct, r->p_value = t.p_value, r->spread_pct = t.spread_pct;
    r->verdict = t.verdict;
}

gp_status cmp_step_verdict(gp_compare *c)
{
    gp_compare_steps *r = &c->res;
    double *buf[2] = {NULL, NULL}, grand[2] = {0, 0};
    gp_run_values *runs[2] = {NULL, NULL};
    gp_status st = GP_OK;
    for (int s = 0; s < 2 && st == GP_OK; s++) {
        const struct cmp_side *sd = &c->side[s];
        r->n_traces[s] = sd->n, r->n_steps[s] = sd->n_steps;
        buf[s] = malloc((sd->n_steps ? sd->n_steps : 1) * sizeof(double));
        runs[s] = malloc((sd->n_runs ? sd->n_runs : 1) * sizeof(gp_run_values));
        st = buf[s] && runs[s] ? percentiles(sd, &r->p50[s], &r->p95[s]) : GP_ENOMEM;
        if (st == GP_OK)
            grand[s] = side_runs(sd, buf[s], runs[s], &r->n_runs[s]);
        r->mean[s] = llround(grand[s]);
    }
    r->change_pct = grand[0] > 0 ? (grand[1] - grand[0]) / grand[0] * 100 : 0.0;
    r->run_noise_pct = c->run_noise_pct;
    r->typical_change_pct = r->ci_lo_pct = r->ci_hi_pct = r->detectable_pct = r->p_value = NAN;
    r->verdict = GP_VERDICT_TOO_FEW;
    if (st == GP_OK && r->n_steps[0] >= MIN_STEPS_TESTED && r->n_steps[1] >= MIN_STEPS_TESTED)
        test_runs(c, runs);
    for (int s = 0; s < 2; s++)
        free(buf[s]), free(runs[s]);
    return st;
}
