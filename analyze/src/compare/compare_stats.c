/* compare_stats.c: is a change of step time more than run-to-run variation? Runs are the unit:
 * each run is one value, its typical step (log of its upper-quartile step), and the test is
 * Student's t on those values, the between-run variance estimated from the runs themselves
 * (k_base - 1 + k_new - 1 degrees of freedom) and pooled with a prior for how much identical
 * runs differ, worth PRIOR_DF runs: all there is with one run a side, a small part with five.
 * See gp_change_test_runs in gp/compare.h. */
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The prior run-to-run spread counts as 4 degrees of freedom: with one run a side (no data df)
 * t(4) makes --run-noise the detectable change; with 5 runs a side it is a third of the 12.
 * The prior is how much identical runs differ, measured (--run-noise, GP_COMPARE_RUN_NOISE_PCT),
 * nothing else: not the spread of a run's steps. That spread once widened it (0.4 x log(p75/p25)
 * as a standard deviation) and on a quiet machine, whose steps are two modes (~0.9 and ~1.25 ms)
 * and spread ~20%, made the 1-vs-1 figure 33% where back-to-back runs differed by at most 18%;
 * 5 vs 5 then found a 10% change in 74 of 100 draws instead of 92 (/work/aa/quiet1). */
#define PRIOR_DF 4.0
/* A run's typical step is its upper quartile, not its mean or median. On a shared machine a
 * run's steps are a mixture of stretches at different speeds (the 2-core VM: ~0.9 ms when the
 * other core is quiet, ~1.2 ms when it is busy, for the trainer's MLP at batch 64), whose shares
 * follow the other load and change from run to run; the mean also carries the slowest steps
 * (pauses, preemption: up to 5x). Over the recorded pools (30 + 40 identical runs, 300 and 2000
 * steps, loads 2-3; bench_compare_aa.py --pool), the run-to-run spread of the upper quartile
 * was below the median's and half the mean's, and 5 vs 5 runs detected a 7-10% change 2-3x as
 * often as with the run means, at the same false-verdict rate. Any quantile scales with the
 * program's cost, so on a quiet machine (one mode) it measures the same change as the mean.
 * Not so a change confined to the slowest quarter of steps (a periodic pause made longer): the
 * mean shows it, the typical step does not; the verdict line gives both changes. */
#define TYPICAL_QUANTILE 0.75
#define ALPHA            0.05
#define PI               3.14159265358979323846

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The value at quantile q of sorted s[n], interpolated between ranks. */
static double quantile(const double *s, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    return i + 1 < n ? s[i] + (pos - (double)i) * (s[i + 1] - s[i]) : s[n - 1];
}

/* One run: log of its typical step, log(p75 / p25) of its steps (printed, not tested), the
 * variance of the typical step's estimate from the run's own steps (about spread^2 / n: the
 * quartile of n values; ~0.4% as a standard deviation for 2000 steps, far more for 20 steps
 * spread +-60%), and its mean step. */
struct run_stat {
    double typical, spread, within_var, mean;
};

/* @return GP_OK, GP_ENOMEM, or GP_DECLINED when the run's typical step is not > 0 (no log of it).
 */
static gp_status run_stat(const gp_run_values *v, struct run_stat *r)
{
    double *s = malloc(v->n * sizeof(*s)), sum = 0;
    if (!s)
        return GP_ENOMEM;
    memcpy(s, v->v, v->n * sizeof(*s));
    for (size_t i = 0; i < v->n; i++)
        sum += s[i];
    qsort(s, v->n, sizeof(*s), cmp_double);
    double lo = quantile(s, v->n, 0.25), hi = quantile(s, v->n, TYPICAL_QUANTILE);
    free(s);
    if (!(hi > 0))
        return GP_DECLINED;
    lo = lo > 0 ? lo : hi; /* zero-length steps: no spread to measure */
    r->mean = sum / (double)v->n;
    r->typical = log(hi);
    r->spread = log(hi / lo);
    r->within_var = r->spread * r->spread / (double)v->n;
    return GP_OK;
}

struct side_stat {
    size_t k;
    double typical;                  /* mean of the runs' typical steps (log) */
    double ss;                       /* their sum of squared deviations */
    double spread, within_var, mean; /* means over the runs; mean: of the run means */
};

static gp_status side_stat(const gp_run_values *v, size_t k, struct side_stat *s)
{
    struct run_stat *r = malloc(k * sizeof(*r));
    if (!r)
        return GP_ENOMEM;
    *s = (struct side_stat){.k = k};
    for (size_t i = 0; i < k; i++) {
        gp_status rc = run_stat(&v[i], &r[i]);
        if (rc != GP_OK) {
            free(r);
            return rc;
        }
        s->typical += r[i].typical / (double)k;
        s->spread += r[i].spread / (double)k;
        s->within_var += r[i].within_var / (double)k;
        s->mean += r[i].mean / (double)k;
    }
    for (size_t i = 0; i < k; i++)
        s->ss += (r[i].typical - s->typical) * (r[i].typical - s->typical);
    free(r);
    return GP_OK;
}

/* Student's t: density, two-sided tail by Simpson's rule, and the quantile by bisection. */
static double t_density(double x, double df)
{
    double c = lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * PI);
    return exp(c - (df + 1) / 2 * log1p(x * x / df));
}

double cmp_t_two_sided_p(double t, double df)
{
    t = fabs(t);
    if (df > 1000)
        return erfc(t / sqrt(2.0));
    if (t > 1e3)
        return 0;
    enum { STEPS = 800 };
    double h = t / STEPS, area = t_density(0, df) + t_density(t, df);
    for (int i = 1; i < STEPS; i++)
        area += (i % 2 ? 4 : 2) * t_density(i * h, df);
    double p = 1 - 2 * area * h / 3;
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

/* Newton's method on the tail from the normal quantile with its first two corrections for
 * Student's t (Cornish-Fisher): 2-5 iterations where bisection took 60 tail integrals. */
double cmp_t_critical(double df)
{
    const double z = 1.959963984540054; /* the normal's 0.975 quantile */
    double t = z + (z * z * z + z) / (4 * df) +
               (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * df * df);
    for (int i = 0; i < 50; i++) {
        double step = (cmp_t_two_sided_p(t, df) - ALPHA) / (2 * t_density(t, df));
        t += step;
        if (fabs(step) < 1e-9 * t)
            break;
    }
    return t;
}

/* The prior variance of one run's typical step (log units): the part that makes `noise_pct`
 * the detectable change of one run against one run, plus the quartile's own sampling error. */
static double prior_var(double noise_pct, const struct side_stat *b, const struct side_stat *n)
{
    double sd = log1p(noise_pct / 100) / (cmp_t_critical(PRIOR_DF) * sqrt(2.0));
    return sd * sd + (b->within_var + n->within_var) / 2;
}

static double pct_of_log(double x)
{
    return expm1(x) * 100.0;
}

static void test_sides(const struct side_stat *b, const struct side_stat *n, double noise_pct,
                       gp_change_test *out)
{
    double df = PRIOR_DF + (double)(b->k - 1) + (double)(n->k - 1);
    double var = (PRIOR_DF * prior_var(noise_pct, b, n) + b->ss + n->ss) / df;
    double se = sqrt(var * (1.0 / (double)b->k + 1.0 / (double)n->k));
    double diff = n->typical - b->typical, half = cmp_t_critical(df) * se;
    out->change_pct = b->mean > 0 ? (n->mean - b->mean) / b->mean * 100.0 : 0.0;
    out->typical_change_pct = pct_of_log(diff);
    out->detectable_pct = pct_of_log(half);
    out->ci_lo_pct = pct_of_log(diff - half);
    out->ci_hi_pct = pct_of_log(diff + half);
    out->p_value = se > 0 ? cmp_t_two_sided_p(diff / se, df) : diff != 0 ? 0 : 1;
    out->spread_pct = pct_of_log((b->spread * (double)b->k + n->spread * (double)n->k) /
                                 (double)(b->k + n->k));
    if (out->ci_lo_pct > 0)
        out->verdict = GP_VERDICT_SLOWER;
    else if (out->ci_hi_pct < 0)
        out->verdict = GP_VERDICT_FASTER;
    else
        out->verdict = GP_VERDICT_SAME;
}

static int has_values(const gp_run_values *v, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (v[i].n == 0)
            return 0;
    return k > 0;
}

void gp_change_test_runs(const gp_run_values *base, size_t nb, const gp_run_values *now, size_t nn,
                         double run_noise_pct, gp_change_test *out)
{
    *out = (gp_change_test){.n_runs = {nb, nn},
                            .typical_change_pct = NAN,
                            .ci_lo_pct = NAN,
                            .ci_hi_pct = NAN,
                            .detectable_pct = NAN,
                            .p_value = NAN,
                            .verdict = GP_VERDICT_TOO_FEW};
    if (!has_values(base, nb) || !has_values(now, nn))
        return;
    struct side_stat b, n;
    if (side_stat(base, nb, &b) == GP_OK && side_stat(now, nn, &n) == GP_OK)
        test_sides(&b, &n, run_noise_pct, out);
}
