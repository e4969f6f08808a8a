/* compare's statistics: the Mann-Whitney p-value against the textbook normal approximation
 * (values computed independently), the bootstrap interval, and the verdict rule: a real shift is
 * called, noise and a single outlier step are not, too few steps are not tested. Then a trace
 * pair with a known difference through gp_compare end to end. */
#include "compare_int.h"
#include "gp_test.h"

#include <math.h>
#include <stdlib.h>

static void test_mann_whitney_reference(void)
{
    int64_t a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10};
    GP_ASSERT_NEAR(cmp_mann_whitney_p(a, 5, b, 5), 0.0121857804, 1e-9);
    GP_ASSERT_NEAR(cmp_mann_whitney_p(b, 5, a, 5), 0.0121857804, 1e-9);
    int64_t c[] = {1, 2, 2, 3, 3, 3, 4}, d[] = {2, 3, 4, 4, 5, 5, 6, 7}; /* ties */
    GP_ASSERT_NEAR(cmp_mann_whitney_p(c, 7, d, 8), 0.0252797369, 1e-9);
    int64_t same[] = {4, 4, 4};
    GP_ASSERT_NEAR(cmp_mann_whitney_p(same, 3, same, 3), 1.0, 0);
}

static void test_bootstrap_interval(void)
{
    int64_t a[40], b[40];
    for (int i = 0; i < 40; i++) {
        a[i] = 1000 + (i % 5) * 10;
        b[i] = 1200 + (i % 5) * 10;
    }
    double lo, hi, lo2, hi2;
    cmp_bootstrap_ci(a, 40, b, 40, 2000, &lo, &hi);
    cmp_bootstrap_ci(a, 40, b, 40, 2000, &lo2, &hi2);
    GP_CHECK(lo <= 19.6 && hi >= 19.6 && hi - lo < 3); /* true change: 200 / 1020 */
    GP_CHECK(lo == lo2 && hi == hi2);                  /* fixed seed */
}

/* `n` steps of `mean` ns with +-`jitter_pct` uniform noise from a fixed-seed generator. */
static int64_t *noisy_steps(size_t n, double mean, double jitter_pct, unsigned seed)
{
    int64_t *v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        double u = (double)((seed >> 8) & 0xffff) / 65535.0 * 2 - 1;
        v[i] = (int64_t)(mean * (1 + u * jitter_pct / 100));
    }
    return v;
}

static int verdict_of(int64_t *base, size_t nb, int64_t *now, size_t nn)
{
    gp_compare *c = NULL;
    if (gp_compare_new(&c, NULL) != GP_OK)
        return -1;
    c->side[0].steps = base, c->side[0].n_steps = nb, c->side[0].n = 1;
    c->side[1].steps = now, c->side[1].n_steps = nn, c->side[1].n = 1;
    cmp_step_verdict(c);
    int v = (int)c->res.verdict;
    free(c); /* the steps are the caller's */
    return v;
}

static void test_verdicts(void)
{
    size_t n = 40;
    int64_t *base = noisy_steps(n, 10e6, 10, 1), *same = noisy_steps(n, 10.05e6, 10, 2);
    int64_t *faster = noisy_steps(n, 8e6, 10, 3), *slower = noisy_steps(n, 12e6, 10, 4);
    GP_ASSERT_EQ_INT(verdict_of(base, n, same, n), GP_VERDICT_SAME);
    GP_ASSERT_EQ_INT(verdict_of(base, n, faster, n), GP_VERDICT_FASTER);
    GP_ASSERT_EQ_INT(verdict_of(base, n, slower, n), GP_VERDICT_SLOWER);
    /* one stalled step raises NEW's mean by 22% but moves no other step: not a regression */
    int64_t *outlier = noisy_steps(n, 10e6, 10, 5);
    outlier[7] = 100e6;
    GP_ASSERT_EQ_INT(verdict_of(base, n, outlier, n), GP_VERDICT_SAME);
    GP_ASSERT_EQ_INT(verdict_of(base, 2, slower, n), GP_VERDICT_TOO_FEW);
    free(base), free(same), free(faster), free(slower), free(outlier);
}

static void part_of(const char *name, gp_compare_part **p)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/rules/%s", GP_TEST_DATA_DIR, name);
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    GP_ASSERT_OK(gp_trace_open(path, NULL, &t, NULL));
    GP_ASSERT_OK(gp_analysis_run(t, NULL, &a, NULL));
    GP_ASSERT_OK(gp_compare_part_new(a, NULL, p, NULL));
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void test_known_difference(void)
{
    gp_compare *c = NULL;
    gp_compare_part *base = NULL, *now = NULL;
    part_of("starved_pytorch.json.gz", &base);
    part_of("healthy_pytorch.json.gz", &now);
    GP_ASSERT_OK(gp_compare_new(&c, NULL));
    GP_ASSERT_OK(gp_compare_add(c, GP_CMP_BASE, "starved", base, NULL));
    GP_ASSERT_OK(gp_compare_add(c, GP_CMP_NEW, "healthy", now, NULL));
    GP_ASSERT_OK(gp_compare_finish(c, NULL));
    const gp_compare_steps *r = gp_compare_step_result(c);
    GP_ASSERT_EQ_INT(r->verdict, GP_VERDICT_FASTER);
    GP_ASSERT_EQ_INT(r->n_steps[0], 11); /* 12 steps, the warm-up one left out */
    GP_CHECK(r->mean[0] > 2 * r->mean[1]);
    /* GT01 fired on BASE only: resolved */
    GP_CHECK(c->findings[1].sev[0] == GP_SEV_CRIT && c->findings[1].sev[1] == GP_SEV_OK);
    gp_compare_free(c);

    gp_error err;
    GP_ASSERT_OK(gp_compare_new(&c, NULL));
    GP_ASSERT_EQ_INT(gp_compare_finish(c, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "BASE has no trace");
    gp_compare_free(c);
}

int main(void)
{
    GP_RUN(test_mann_whitney_reference);
    GP_RUN(test_bootstrap_interval);
    GP_RUN(test_verdicts);
    GP_RUN(test_known_difference);
    return gp_test_summary();
}
