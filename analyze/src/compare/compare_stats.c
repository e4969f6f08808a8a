/* compare_stats.c: is a change of step time more than run-to-run variation? Runs are the unit:
 * each run is one value, its typical step (log of its upper-quartile step), and the test is
 * Student's t on those values, the between-run variance estimated from the runs themselves
 * (k_base - 1 + k_new - 1 degrees of freedom) and pooled with a prior for how much identical
 * runs differ, worth PRIOR_DF runs: all there is with one run a side, a small part with five.
 * A side's centre is a Huber M-estimate of its runs' values, not their mean, so that one run far
 * from its siblings (a machine left free for a whole run) moves it by at most HUBER_C run
 * standard deviations. See gp_change_test_runs in gp/compare.h. */
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
/* A side's centre: the Huber M-estimate of its runs' typical steps, with the test's own run
 * standard deviation (prior and data pooled) as the scale. A run within HUBER_C of them from
 * the centre counts fully, one further out as if it lay HUBER_C away. On normal values that costs
 * 1% of the mean's efficiency (the standard error grows by the factor huber_var_factor, 1.010
 * at c = 2), but the recorded runs are not normal: on the VM 1 run in 8-10 found the other core
 * free and its typical step 12-26% off the rest (/work/aa pools: 4 of 30 in quiet1, 3 of 30 at
 * 300 steps), and one such run among five moved the mean by 3-5%, in A/A draws enough, with the
 * siblings' own few % of drift, for a false verdict (quiet1, bench_compare_aa.py --pool: 6 of
 * 100 draws at 5 vs 5). With one or two runs a side the estimate is their mean. */
#define HUBER_C        2.0
#define HUBER_MIN_RUNS 3
#define ALPHA          0.05
#define PI             3.14159265358979323846

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
    double *typicals;                /* each run's typical step (log), k of them */
    double typical;                  /* their mean */
    double ss;                       /* their sum of squared deviations */
    double spread, within_var, mean; /* means over the runs; mean: of the run means */
};

/* @return GP_OK; GP_ENOMEM, or a run without a typical step (s->typicals then freed). */
static gp_status side_stat(const gp_run_values *v, size_t k, struct side_stat *s)
{
    *s = (struct side_stat){.k = k, .typicals = malloc(k * sizeof(double))};
    if (!s->typicals)
        return GP_ENOMEM;
    for (size_t i = 0; i < k; i++) {
        struct run_stat r;
        gp_status rc = run_stat(&v[i], &r);
        if (rc != GP_OK) {
            free(s->typicals);
            s->typicals = NULL;
            return rc;
        }
        s->typicals[i] = r.typical;
        s->typical += r.typical / (double)k;
        s->spread += r.spread / (double)k;
        s->within_var += r.within_var / (double)k;
        s->mean += r.mean / (double)k;
    }
    for (size_t i = 0; i < k; i++)
        s->ss += (s->typicals[i] - s->typical) * (s->typicals[i] - s->typical);
    return GP_OK;
}

/* The Huber M-estimate of the side's centre at scale `sd` (iteratively reweighted from the
 * mean); the mean itself with fewer than HUBER_MIN_RUNS runs or no scale. */
static double huber_centre(const struct side_stat *s, double sd)
{
    double m = s->typical, lim = HUBER_C * sd;
    if (s->k < HUBER_MIN_RUNS || !(lim > 0))
        return m;
    for (int it = 0; it < 100; it++) {
        double sw = 0, swx = 0;
        for (size_t i = 0; i < s->k; i++) {
            double d = fabs(s->typicals[i] - m), w = d <= lim ? 1 : lim / d;
            sw += w, swx += w * s->typicals[i];
        }
        double next = swx / sw;
        if (fabs(next - m) <= 1e-12)
            return next;
        m = next;
    }
    return m;
}

/* The variance of the Huber estimate over the mean's, on normal values (its asymptotic
 * variance at HUBER_C): 1 for a side estimated by its mean. */
static double huber_var_factor(size_t k)
{
    if (k < HUBER_MIN_RUNS)
        return 1;
    const double c = HUBER_C, phi = exp(-c * c / 2) / sqrt(2 * PI);
    double inside = erf(c / sqrt(2.0)), tail = erfc(c / sqrt(2.0)) / 2;
    return (inside - 2 * c * phi + 2 * c * c * tail) / (inside * inside);
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
    double se = sqrt(
            var * (huber_var_factor(b->k) / (double)b->k + huber_var_factor(n->k) / (double)n->k));
    double diff = huber_centre(n, sqrt(var)) - huber_centre(b, sqrt(var));
    double half = cmp_t_critical(df) * se;
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
    struct side_stat b, n = {.typicals = NULL};
    if (side_stat(base, nb, &b) != GP_OK)
        return;
    if (side_stat(now, nn, &n) == GP_OK)
        test_sides(&b, &n, run_noise_pct, out);
    free(b.typicals);
    free(n.typicals);
}
