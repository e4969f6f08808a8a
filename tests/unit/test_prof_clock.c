/* libprof's tick -> ns function: one continuous, non-decreasing function per session, whatever
 * order ticks are converted in and however measurements interleave with conversions (ranges are
 * drained on different writer passes), and it tracks REALTIME: exactly through the first two
 * measurements, and back within microseconds after a noisy start or a clock step. */
#include <stdlib.h>

#include "gp_test.h"
#include "prof_int.h"

#define N_CONV 200000

typedef struct conv {
    int64_t ticks, ns;
} conv;

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp_conv(const void *a, const void *b)
{
    const conv *x = a, *y = b;
    return x->ticks < y->ticks ? -1 : x->ticks > y->ticks;
}

/* A machine whose TSC runs at `ghz`, measured every `pass_ms` with `jitter_ns` of noise, and
 * whose REALTIME steps by `step_ns` halfway. Records are converted in batches after each
 * measurement, some made after it (up to a pass later), some long before (an epoch range's
 * start). Checks the function is fixed once used and non-decreasing, and that over the last
 * tenth |f(T) - REALTIME(T)| < max_err_ns. */
static void simulate(double ghz, int pass_ms, int64_t jitter_ns, int64_t step_ns,
                     int64_t max_err_ns)
{
    prof_state_session()->tsc = 1;
    prof_clock_reset();
    const int64_t t_start = 1000000000LL, ns_start = 1700000000000000000LL;
    static conv seen[N_CONV];
    int64_t pass_ticks = (int64_t)(pass_ms * 1e6 * ghz), worst = 0;
    int n_seen = 0, passes = N_CONV / 1000;
    for (int p = 0; p <= passes; p++) {
        int64_t T = t_start + p * pass_ticks;
        int64_t truth = ns_start + (int64_t)((T - t_start) / ghz) + (p > passes / 2 ? step_ns : 0);
        int64_t N = truth;
        if (jitter_ns)
            N += (int64_t)(next_rand() % (uint64_t)(2 * jitter_ns)) - jitter_ns;
        prof_clock_add(T, N);
        if (p == 0)
            continue;
        for (int i = 0; i < 1000 && n_seen < N_CONV; i++) {
            uint64_t r = next_rand();
            int64_t back = (int64_t)(r % (uint64_t)(2 * pass_ticks)); /* last two passes */
            if (r % 97 == 0)
                back = (int64_t)(r % (uint64_t)(T - t_start + 1)); /* an old range start */
            int64_t t = T + pass_ticks / 4 - back;
            seen[n_seen] = (conv){t, prof_ticks_to_ns(t)};
            n_seen++;
        }
        if (p > passes * 9 / 10) {
            int64_t err = prof_ticks_to_ns(T) - truth;
            err = err < 0 ? -err : err;
            worst = err > worst ? err : worst;
        }
    }
    /* The same tick converted again, after every later measurement, gives the same ns. */
    int changed = 0;
    for (int i = 0; i < n_seen; i++)
        changed += prof_ticks_to_ns(seen[i].ticks) != seen[i].ns;
    GP_CHECK(changed == 0);
    /* Non-decreasing over every conversion made, whatever pass made it. */
    qsort(seen, (size_t)n_seen, sizeof(*seen), cmp_conv);
    int backwards = 0;
    for (int i = 1; i < n_seen; i++)
        backwards += seen[i].ns < seen[i - 1].ns;
    GP_CHECK(backwards == 0);
    if (worst >= max_err_ns)
        GP_TEST_FAIL("%.1f GHz, passes %d ms, jitter %lld, step %lld: off by %lld ns", ghz, pass_ms,
                     (long long)jitter_ns, (long long)step_ns, (long long)worst);
}

static void test_exact_through_first_measurements(void)
{
    prof_state_session()->tsc = 1;
    prof_clock_reset();
    prof_clock_add(1000000, 5000000000LL);
    prof_clock_add(1000000 + 300000000, 5000000000LL + 100000000); /* 3 GHz, 100 ms */
    GP_CHECK(prof_ticks_to_ns(1000000) == 5000000000LL);
    GP_CHECK(prof_ticks_to_ns(1000000 + 150000000) == 5000000000LL + 50000000);
    int64_t end = prof_ticks_to_ns(1000000 + 300000000);
    GP_CHECK(end >= 5000000000LL + 100000000 - 1 && end <= 5000000000LL + 100000000);
}

static void test_clean_clock(void)
{
    simulate(3.0, 100, 0, 0, 50);
}

static void test_noisy_measurements(void)
{
    simulate(2.5, 100, 2000, 0, 3000); /* a VM's +-2 us: the function does not jitter */
}

static void test_realtime_steps(void)
{
    simulate(3.0, 100, 0, 3000000, 1000); /* slewed out, never a jump back */
    simulate(3.0, 100, 0, -3000000, 1000);
}

static void test_fast_and_slow_writer(void)
{
    simulate(1.0, 1, 100, 0, 1000);
    simulate(3.7, 1000, 100, 0, 1000);
}

static void test_real_clock_nests(void)
{
    /* The real tick source: ranges made between writer measurements nest after conversion. */
    prof_clock_init();
    prof_clock_reset();
    prof_clock_sample();
    int64_t outer0 = prof_ticks(), inner0 = prof_ticks();
    int64_t o0 = prof_ticks_to_ns(outer0); /* converted before the next measurement */
    prof_clock_sample();
    int64_t inner1 = prof_ticks(), outer1 = prof_ticks();
    prof_clock_sample();
    int64_t i0 = prof_ticks_to_ns(inner0), i1 = prof_ticks_to_ns(inner1);
    int64_t o1 = prof_ticks_to_ns(outer1);
    GP_CHECK(o0 <= i0 && i0 <= i1 && i1 <= o1);
    int64_t now = prof_now();
    GP_CHECK(o1 <= now + 1000000 && o0 >= now - 1000000000LL);
}

/* Scripted readings (ticks before, clock, ticks after) at 1 tick per ns, for read_hook. */
static const int64_t (*script)[3];
static int script_at;

static void scripted_read(int64_t *a, int64_t *ns, int64_t *b)
{
    *a = script[script_at][0], *ns = script[script_at][1], *b = script[script_at][2];
    script_at++;
}

/* A reading preempted between its tick and clock reads (a loaded machine) puts its midpoint
 * 2.5 ms off; a measurement keeps the narrowest of its readings, so the first rate stays exact
 * (with the preempted one it was 1.93x, and ranges converted after it ran ahead of REALTIME). */
static void test_preempted_reading_not_used(void)
{
    static const int64_t readings[][3] = {
            {1000, 1005, 1010}, /* the first measurement: narrow */
            {1000, 1005, 1010},          {1000, 1005, 1010},         {1000, 1005, 1010},
            {1000, 1005, 1010},          {1000, 1005, 1010},         {1000, 1005, 1010},
            {1000, 1005, 1010},          {201000, 5201000, 5201010}, /* preempted for 5 ms after its
                                                                        first tick read */
            {5201100, 5201105, 5201110},
    };
    prof_state_session()->tsc = 1;
    prof_clock_reset();
    script = readings, script_at = 0;
    prof_state_clock()->read_hook = scripted_read;
    prof_clock_sample();
    int first = script_at; /* no narrowest yet: every try */
    prof_clock_sample();
    prof_state_clock()->read_hook = NULL; /* before any check can return */
    GP_ASSERT_EQ_INT(first, 8);
    GP_ASSERT_EQ_INT(script_at, 10); /* the second try is as narrow as the first measurement */
    GP_ASSERT_EQ_INT(prof_ticks_to_ns(5201105), 5201105);
    GP_ASSERT_EQ_INT(prof_ticks_to_ns(10001005), 10001005);
}

int main(void)
{
    GP_RUN(test_exact_through_first_measurements);
    GP_RUN(test_clean_clock);
    GP_RUN(test_noisy_measurements);
    GP_RUN(test_realtime_steps);
    GP_RUN(test_fast_and_slow_writer);
    GP_RUN(test_preempted_reading_not_used);
    GP_RUN(test_real_clock_nests);
    return gp_test_summary();
}
