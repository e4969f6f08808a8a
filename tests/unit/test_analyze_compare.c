/* compare's statistics with runs as the unit (issue 24 §3): Student's t against reference
 * values, the verdict of one run against one run (a drift under --run-noise is no change, a
 * change well beyond it is), several runs a side (run-level drift is not a change; a shift is),
 * sweep's single-value runs, too few values. Then a trace pair with a known difference through
 * gp_compare end to end. */
#include "compare/compare_int.h"
#include "gp_test.h"

#include <math.h>
#include <stdlib.h>

static void test_student_t_reference(void)
{
    GP_ASSERT_NEAR(cmp_t_critical(4), 2.776445, 1e-4);
    GP_ASSERT_NEAR(cmp_t_critical(12), 2.178813, 1e-4);
    GP_ASSERT_NEAR(cmp_t_critical(1e6), 1.959964, 1e-4);
    GP_ASSERT_NEAR(cmp_t_two_sided_p(2.0, 10), 0.073388, 1e-5);
    GP_ASSERT_NEAR(cmp_t_two_sided_p(0, 10), 1.0, 1e-9);
}

/* `n` values of `mean` with +-`jitter_pct` uniform noise from a fixed-seed generator. */
static double *noisy_steps(size_t n, double mean, double jitter_pct, unsigned seed)
{
    double *v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        double u = (double)((seed >> 8) & 0xffff) / 65535.0 * 2 - 1;
        v[i] = mean * (1 + u * jitter_pct / 100);
    }
    return v;
}

/* `k` runs of `n` steps around `mean`, run r offset by offsets_pct[r]. */
static void make_runs(gp_run_values *runs, size_t k, size_t n, double mean,
                      const double *offsets_pct, unsigned seed)
{
    for (size_t r = 0; r < k; r++)
        runs[r] =
                (gp_run_values){noisy_steps(n, mean * (1 + offsets_pct[r] / 100), 2, seed + r), n};
}

static void free_runs(gp_run_values *runs, size_t k)
{
    for (size_t r = 0; r < k; r++)
        free((void *)runs[r].v);
}

/* --run-noise of a quiet machine, whose back-to-back runs differ by up to ~4% */
#define QUIET_RUN_NOISE_PCT 5.0

static gp_verdict one_vs_one(double change_pct, double jitter_pct, size_t n, gp_change_test *t)
{
    double *a = noisy_steps(n, 10e6, jitter_pct, 1);
    double *b = noisy_steps(n, 10e6 * (1 + change_pct / 100), jitter_pct, 2);
    gp_run_values ra = {a, n}, rb = {b, n};
    gp_change_test_runs(&ra, 1, &rb, 1, QUIET_RUN_NOISE_PCT, t);
    free(a), free(b);
    return t->verdict;
}

static void test_one_run_a_side(void)
{
    gp_change_test t, again;
    /* steps within a run spread 2%: a 3% drift is far outside that, yet within run noise */
    GP_ASSERT_EQ_INT(one_vs_one(3, 2, 200, &t), GP_VERDICT_SAME);
    /* --run-noise and the quartile's sampling error (2% over 200 steps: ~0.2%), no more: the
     * spread of steps within a run says nothing of how runs differ */
    GP_CHECK(t.detectable_pct >= QUIET_RUN_NOISE_PCT && t.detectable_pct < 5.3);
    one_vs_one(3, 2, 200, &again);
    GP_CHECK(t.ci_lo_pct == again.ci_lo_pct && t.p_value == again.p_value); /* fixed seed */
    GP_ASSERT_EQ_INT(one_vs_one(15, 2, 200, &t), GP_VERDICT_SLOWER);
    GP_ASSERT_EQ_INT(one_vs_one(-15, 2, 200, &t), GP_VERDICT_FASTER);
    GP_CHECK(t.ci_hi_pct < 0 && t.p_value < 0.05);
    /* 20 steps spread +-60% in each run cannot show 15% either */
    GP_ASSERT_EQ_INT(one_vs_one(15, 60, 20, &t), GP_VERDICT_SAME);
    GP_CHECK(t.detectable_pct > 15);
}

static void test_several_runs(void)
{
    static const double base_off[] = {-2, 1, 0, -1, 2}, drift_off[] = {-0.5, 2.5, 1, 0, 3};
    static const double new_off[] = {11, 8, 10.5, 12, 8.5}; /* +10% */
    gp_run_values b[5], d[5], n[5];
    make_runs(b, 5, 50, 10e6, base_off, 10);
    make_runs(d, 5, 50, 10e6, drift_off, 20);
    make_runs(n, 5, 50, 10e6, new_off, 30);
    gp_change_test t;
    gp_change_test_runs(b, 5, d, 5, GP_COMPARE_RUN_NOISE_PCT, &t);
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_SAME); /* the sides differ 1.2%, runs 1.6% */
    GP_CHECK(t.change_pct > 1 && t.detectable_pct < GP_COMPARE_RUN_NOISE_PCT);
    gp_change_test_runs(b, 5, n, 5, GP_COMPARE_RUN_NOISE_PCT, &t);
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_SLOWER);
    GP_CHECK(t.n_runs[0] == 5 && t.n_runs[1] == 5 && t.ci_lo_pct > 5);
    free_runs(b, 5), free_runs(d, 5), free_runs(n, 5);
}

/* Steps of a run on a busy machine: 1 ms, and every third step 6 ms (a core taken away), so its
 * steps spread 6x from p25 to p75; such runs differ by far more than quiet ones. */
static double *busy_steps(size_t n, double scale)
{
    double *v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = scale * (i % 3 == 2 ? 6e6 : 1e6) * (1 + (double)(i % 7) / 100);
    return v;
}

static void test_busy_machine(void)
{
    double *a = busy_steps(300, 1.0), *b = busy_steps(300, 1.15);
    gp_run_values ra = {a, 300}, rb = {b, 300};
    gp_change_test t;
    gp_change_test_runs(&ra, 1, &rb, 1, GP_COMPARE_RUN_NOISE_PCT, &t);
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_SAME); /* +15%, one run a side, busy */
    GP_CHECK(t.spread_pct > 50 && t.detectable_pct >= GP_COMPARE_RUN_NOISE_PCT - 0.01);
    free(a), free(b);
}

/* sweep: each timed run is one value */
static void test_single_value_runs(void)
{
    double base[] = {1.00, 1.02, 0.99}, near[] = {1.01, 1.03, 1.00}, far[] = {1.30, 1.28, 1.31};
    gp_run_values b[3], n[3], f[3];
    for (int i = 0; i < 3; i++)
        b[i] = (gp_run_values){&base[i], 1}, n[i] = (gp_run_values){&near[i], 1},
        f[i] = (gp_run_values){&far[i], 1};
    gp_change_test t;
    gp_change_test_runs(b, 3, n, 3, GP_COMPARE_RUN_NOISE_PCT, &t);
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_SAME);
    gp_change_test_runs(b, 3, f, 3, GP_COMPARE_RUN_NOISE_PCT, &t);
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_SLOWER);
    gp_change_test_runs(b, 1, f, 1, GP_COMPARE_RUN_NOISE_PCT, &t); /* one each: 30% */
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_SLOWER);
    gp_change_test_runs(b, 1, n, 1, GP_COMPARE_RUN_NOISE_PCT, &t); /* one each: 1% */
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_SAME);
    gp_change_test_runs(b, 0, n, 1, GP_COMPARE_RUN_NOISE_PCT, &t);
    GP_ASSERT_EQ_INT(t.verdict, GP_VERDICT_TOO_FEW);
    GP_CHECK(isnan(t.ci_lo_pct));
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
    GP_ASSERT_EQ_INT(r->verdict, GP_VERDICT_FASTER); /* -55%: far beyond run noise */
    GP_ASSERT_EQ_INT(r->n_steps[0], 11);             /* 12 steps, the warm-up one left out */
    GP_ASSERT_EQ_INT(r->n_runs[0], 1);
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
    GP_RUN(test_student_t_reference);
    GP_RUN(test_one_run_a_side);
    GP_RUN(test_several_runs);
    GP_RUN(test_busy_machine);
    GP_RUN(test_single_value_runs);
    GP_RUN(test_known_difference);
    return gp_test_summary();
}
