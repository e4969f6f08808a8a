/* compare_stats.c: is a change of step time more than noise? A rank test (Mann-Whitney U) on
 * the per-step times and a bootstrap interval of the change of the mean; both must agree. */
#include "compare_int.h"

#include <math.h>
#include <stdlib.h>

#define MIN_STEPS_TESTED 3
#define BOOTSTRAP_ROUNDS 2000
#define ALPHA            0.05

struct ranked {
    int64_t v;
    int side;
};

static int cmp_ranked(const void *x, const void *y)
{
    const struct ranked *a = x, *b = y;
    return (a->v > b->v) - (a->v < b->v);
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double cmp_mann_whitney_p(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    size_t n = na + nb;
    struct ranked *v = malloc((n ? n : 1) * sizeof(*v));
    if (!v || na == 0 || nb == 0) {
        free(v);
        return 1.0;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = i < na ? (struct ranked){a[i], 0} : (struct ranked){b[i - na], 1};
    qsort(v, n, sizeof(*v), cmp_ranked);
    double rank_sum_a = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j].v == v[i].v)
            j++;
        double mid_rank = (double)(i + 1 + j) / 2.0, t = (double)(j - i);
        ties += t * t * t - t;
        for (size_t k = i; k < j; k++)
            rank_sum_a += v[k].side == 0 ? mid_rank : 0;
        i = j;
    }
    free(v);
    double dna = (double)na, dnb = (double)nb, dn = (double)n;
    double u = rank_sum_a - dna * (dna + 1) / 2, mu = dna * dnb / 2;
    double var = dna * dnb / 12.0 * ((dn + 1) - ties / (dn * (dn - 1)));
    if (var <= 0)
        return 1.0;
    double z = (fabs(u - mu) - 0.5) / sqrt(var);
    return z <= 0 ? 1.0 : erfc(z / sqrt(2.0));
}

/* xorshift64*: a fixed seed, so the same traces always give the same interval. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static double resampled_mean(const int64_t *v, size_t n, uint64_t *seed)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)v[next_random(seed) % n];
    return sum / (double)n;
}

void cmp_bootstrap_ci(const int64_t *a, size_t na, const int64_t *b, size_t nb, int rounds,
                      double *lo, double *hi)
{
    double *d = malloc((size_t)rounds * sizeof(*d));
    *lo = *hi = NAN;
    if (!d || na == 0 || nb == 0) {
        free(d);
        return;
    }
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int r = 0; r < rounds; r++) {
        double ma = resampled_mean(a, na, &seed), mb = resampled_mean(b, nb, &seed);
        d[r] = ma > 0 ? (mb - ma) / ma * 100.0 : 0.0;
    }
    qsort(d, (size_t)rounds, sizeof(*d), cmp_double);
    *lo = d[(size_t)(rounds * 0.025)];
    *hi = d[(size_t)ceil(rounds * 0.975) - 1];
    free(d);
}

static int64_t nearest_rank(const int64_t *sorted, size_t n, int pct)
{
    return sorted[(n * (size_t)pct + 99) / 100 - 1];
}

static int64_t mean_of(const int64_t *v, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)v[i];
    return (int64_t)llround(sum / (double)n);
}

void cmp_step_verdict(gp_compare *c)
{
    gp_compare_steps *r = &c->res;
    for (int s = 0; s < 2; s++) {
        struct cmp_side *sd = &c->side[s];
        qsort(sd->steps, sd->n_steps, sizeof(int64_t), cmp_i64);
        r->n_traces[s] = sd->n;
        r->n_steps[s] = sd->n_steps;
        r->mean[s] = mean_of(sd->steps, sd->n_steps);
        r->p50[s] = nearest_rank(sd->steps, sd->n_steps, 50);
        r->p95[s] = nearest_rank(sd->steps, sd->n_steps, 95);
    }
    r->change_pct =
            r->mean[0] > 0 ? (double)(r->mean[1] - r->mean[0]) / (double)r->mean[0] * 100 : 0.0;
    r->ci_lo_pct = r->ci_hi_pct = r->p_value = NAN;
    if (r->n_steps[0] < MIN_STEPS_TESTED || r->n_steps[1] < MIN_STEPS_TESTED) {
        r->verdict = GP_VERDICT_TOO_FEW;
        return;
    }
    const struct cmp_side *b = &c->side[0], *n = &c->side[1];
    r->p_value = cmp_mann_whitney_p(b->steps, b->n_steps, n->steps, n->n_steps);
    cmp_bootstrap_ci(b->steps, b->n_steps, n->steps, n->n_steps, BOOTSTRAP_ROUNDS, &r->ci_lo_pct,
                     &r->ci_hi_pct);
    int excludes_zero = r->ci_lo_pct > 0 || r->ci_hi_pct < 0;
    if (r->p_value < ALPHA && excludes_zero)
        r->verdict = r->ci_hi_pct < 0 ? GP_VERDICT_FASTER : GP_VERDICT_SLOWER;
    else
        r->verdict = GP_VERDICT_SAME;
}
