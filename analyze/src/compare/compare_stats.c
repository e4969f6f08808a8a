/* compare_stats.c: is a change of step time more than run-to-run variation? Runs are the unit:
 * a hierarchical bootstrap (runs resampled; a side's only run resampled by blocks of its steps)
 * measures what the data show; a prior for how much identical runs differ (--run-noise: what one
 * run against one run cannot tell apart) stands in for the runs the data do not have, and weighs
 * less as runs are added. See gp_change_test_runs in gp/compare.h. */
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOOTSTRAP_ROUNDS 2000
#define PRIOR_DF         4.0 /* the prior run-to-run spread counts as 4 degrees of freedom */
/* How much the time steps spend above the typical (median) step varies from run to run, as a
 * share of it: on a busy machine (others' processes taking the cores) that time is most of the
 * step and follows the other load, not the program. Measured with bench/bench_compare_aa.sh on
 * the 2-core VM under load averages of 8-17 (other builds and benchmarks): back-to-back runs of
 * the trainer spent 40-75% of their step time so, and the difference of their mean steps was a
 * median 0.41 times that share (19 pairs; about 0.2 in an earlier set): a spread of about 0.4
 * of the share per run. */
#define BUSY_RUN_SPREAD 0.4
#define ALPHA           0.05
#define PI              3.14159265358979323846

/* xorshift64*: a fixed seed, so the same runs always give the same interval. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* One run, ready to resample: prefix sums of its values and its block length. */
struct run_prep {
    double *prefix; /* n + 1 sums */
    size_t n, block;
    double mean;
    double busy; /* (mean - median) / mean: the share of the time above the typical step */
};

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double busy_share(const gp_run_values *v, double mean)
{
    double *s = malloc((v->n ? v->n : 1) * sizeof(*s));
    if (!s || v->n == 0 || mean <= 0) {
        free(s);
        return 0;
    }
    memcpy(s, v->v, v->n * sizeof(*s));
    qsort(s, v->n, sizeof(*s), cmp_double);
    double median = v->n % 2 ? s[v->n / 2] : (s[v->n / 2 - 1] + s[v->n / 2]) / 2;
    free(s);
    return median < mean ? (mean - median) / mean : 0;
}

static int prep_run(struct run_prep *r, const gp_run_values *v)
{
    r->n = v->n;
    r->prefix = malloc((v->n + 1) * sizeof(double));
    if (!r->prefix)
        return -1;
    r->prefix[0] = 0;
    for (size_t i = 0; i < v->n; i++)
        r->prefix[i + 1] = r->prefix[i] + v->v[i];
    r->mean = v->n ? r->prefix[v->n] / (double)v->n : 0;
    r->busy = busy_share(v, r->mean);
    /* blocks of about sqrt(n) consecutive steps keep bursts (a busy core, a slow phase) whole */
    r->block = (size_t)ceil(sqrt((double)v->n));
    r->block = r->block ? r->block : 1;
    return 0;
}

/* The mean of one moving-block resample of a run's values. */
static double resampled_run_mean(const struct run_prep *r, uint64_t *seed)
{
    size_t n = r->n, len = r->block, done = 0;
    double sum = 0;
    while (done < n) {
        size_t take = n - done < len ? n - done : len;
        size_t start = (size_t)(next_random(seed) % (n - len + 1));
        sum += r->prefix[start + take] - r->prefix[start];
        done += take;
    }
    return sum / (double)n;
}

struct side_prep {
    struct run_prep *runs;
    size_t k;
    double busy;    /* the runs' mean busy share */
    double grand;   /* the mean of the run means */
    double var_pct; /* the run means' variance, in (% of grand)^2; 0 with one run */
};

static int prep_side(struct side_prep *s, const gp_run_values *v, size_t k)
{
    s->k = k;
    s->runs = calloc(k ? k : 1, sizeof(*s->runs));
    if (!s->runs)
        return -1;
    double sum = 0, sq = 0;
    for (size_t i = 0; i < k; i++) {
        if (prep_run(&s->runs[i], &v[i]) != 0)
            return -1;
        sum += s->runs[i].mean;
        s->busy += s->runs[i].busy / (double)k;
    }
    s->grand = k ? sum / (double)k : 0;
    for (size_t i = 0; i < k; i++)
        sq += (s->runs[i].mean - s->grand) * (s->runs[i].mean - s->grand);
    s->var_pct = k > 1 && s->grand > 0 ? sq / (double)(k - 1) / (s->grand * s->grand) * 1e4 : 0;
    return 0;
}

static void free_side(struct side_prep *s)
{
    for (size_t i = 0; s->runs && i < s->k; i++)
        free(s->runs[i].prefix);
    free(s->runs);
}

/* One resample of a side. Several runs: k runs drawn with replacement, each kept whole (its own
 * step noise is already in the spread of the run means: resampling its steps too would count it
 * twice), the spread around the grand mean widened by sqrt(k / (k - 1)), the bootstrap's
 * small-sample bias. One run: blocks of its steps drawn, the only variation it shows. */
static double resampled_side(const struct side_prep *s, uint64_t *seed)
{
    if (s->k == 1)
        return resampled_run_mean(&s->runs[0], seed);
    double sum = 0;
    for (size_t i = 0; i < s->k; i++)
        sum += s->runs[next_random(seed) % s->k].mean;
    double m = sum / (double)s->k;
    return s->grand + sqrt((double)s->k / (double)(s->k - 1)) * (m - s->grand);
}

/* The standard deviation of the change (%) over the bootstrap rounds, in % of BASE's observed
 * mean: divided by each round's resampled BASE mean instead, two runs of 0.19 and 0.41 s put
 * rounds at +490% and +170% against NEW's 1.1 s, and a 3.7x slowdown read as noise. */
static double bootstrap_se(const struct side_prep *b, const struct side_prep *n)
{
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    double sum = 0, sq = 0;
    for (int r = 0; r < BOOTSTRAP_ROUNDS; r++) {
        double mb = resampled_side(b, &seed), mn = resampled_side(n, &seed);
        double d = b->grand > 0 ? (mn - mb) / b->grand * 100.0 : 0.0;
        sum += d, sq += d * d;
    }
    double mean = sum / BOOTSTRAP_ROUNDS, var = sq / BOOTSTRAP_ROUNDS - mean * mean;
    return var > 0 ? sqrt(var) : 0;
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

double cmp_t_critical(double df)
{
    double lo = 0, hi = 1000;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        if (cmp_t_two_sided_p(mid, df) > ALPHA)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The prior run-to-run standard deviation of one run's mean (%): what makes `noise_pct` the
 * smallest change one run against one run can detect, and on a busy machine (`busy`: the share of
 * the step time above the median step) that share's own variation between runs. */
static double prior_sigma(double noise_pct, double busy)
{
    double quiet = noise_pct / (cmp_t_critical(PRIOR_DF) * sqrt(2.0));
    double load = BUSY_RUN_SPREAD * busy * 100.0;
    return sqrt(quiet * quiet + load * load);
}

static void test_prepared(const struct side_prep *b, const struct side_prep *n, double noise_pct,
                          gp_change_test *out)
{
    double data_df = (double)(b->k - 1) + (double)(n->k - 1);
    out->busy_pct = (b->busy * (double)b->k + n->busy * (double)n->k) / (double)(b->k + n->k) * 100;
    double sigma0 = prior_sigma(noise_pct, out->busy_pct / 100);
    double pooled = (PRIOR_DF * sigma0 * sigma0 + (double)(b->k - 1) * b->var_pct +
                     (double)(n->k - 1) * n->var_pct) /
                    (PRIOR_DF + data_df);
    double se_model = sqrt(pooled * (1.0 / (double)b->k + 1.0 / (double)n->k));
    double se_boot = bootstrap_se(b, n);
    double se = se_boot > se_model ? se_boot : se_model, df = PRIOR_DF + data_df;
    out->change_pct = b->grand > 0 ? (n->grand - b->grand) / b->grand * 100.0 : 0.0;
    out->detectable_pct = cmp_t_critical(df) * se;
    out->ci_lo_pct = out->change_pct - out->detectable_pct;
    out->ci_hi_pct = out->change_pct + out->detectable_pct;
    out->p_value = se > 0 ? cmp_t_two_sided_p(out->change_pct / se, df) : out->change_pct ? 0 : 1;
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
    *out = (gp_change_test){{nb, nn}, 0, NAN, NAN, NAN, NAN, 0, GP_VERDICT_TOO_FEW};
    if (!has_values(base, nb) || !has_values(now, nn))
        return;
    struct side_prep b = {0}, n = {0};
    if (prep_side(&b, base, nb) == 0 && prep_side(&n, now, nn) == 0)
        test_prepared(&b, &n, run_noise_pct, out);
    free_side(&b);
    free_side(&n);
}
