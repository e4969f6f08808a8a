/* libprof's host steal sampler (steal.c) on /proc/stat texts: per pass, the most steal one CPU
 * gained since its last reading; CPUs that appear late start from their first reading; a line
 * cut off by the read's end and the lines past the CPU lines are not read; a text without a
 * steal column gives no reading. On this machine's own /proc/stat, a pass gives a sample only
 * once some steal was seen. */
#include <string.h>

#include "gp_test.h"
#include "prof_int.h"

#define STAT(c0, c1)                                                                               \
    "cpu  10 0 10 100 0 0 0 " #c0 " 0 0\n"                                                         \
    "cpu0 5 0 5 50 0 0 0 " #c0 " 0 0\n"                                                            \
    "cpu1 5 0 5 50 0 0 0 " #c1 " 0 0\n"                                                            \
    "intr 99 0 0 7\n"                                                                              \
    "ctxt 123\n"

static int64_t parse(prof_steal *s, const char *text, int *rc)
{
    int64_t ticks = -1;
    *rc = prof_steal_parse(s, text, strlen(text), &ticks);
    return ticks;
}

static void test_most_one_cpu_gained(void)
{
    prof_steal s = {.fd = -1};
    int rc;
    GP_ASSERT_EQ_INT(parse(&s, STAT(100, 40), &rc), 0); /* first reading: nothing to compare */
    GP_ASSERT_EQ_INT(rc, 0);
    GP_ASSERT_EQ_INT(parse(&s, STAT(103, 49), &rc), 9); /* cpu1 gained 9, cpu0 3 */
    GP_ASSERT_EQ_INT(parse(&s, STAT(110, 49), &rc), 7);
    GP_ASSERT_EQ_INT(parse(&s, STAT(110, 49), &rc), 0);
    GP_ASSERT_EQ_INT(rc, 0);
    GP_ASSERT_EQ_INT(s.n_cpus >= 2, 1);
    GP_ASSERT_EQ_INT(s.last[1], 49);
    prof_steal_stop(&s);
}

static void test_late_cpu_and_cut_line(void)
{
    prof_steal s = {.fd = -1};
    int rc;
    parse(&s, "cpu0 1 0 1 1 0 0 0 5 0 0\n", &rc);
    /* cpu7 comes online with 500 ticks already stolen: not a gain */
    GP_ASSERT_EQ_INT(parse(&s, "cpu0 1 0 1 1 0 0 0 6 0 0\ncpu7 1 0 1 1 0 0 0 500 0 0\n", &rc), 1);
    GP_ASSERT_EQ_INT(s.last[7], 500);
    /* the read ended inside cpu7's line: only cpu0 read */
    GP_ASSERT_EQ_INT(parse(&s, "cpu0 1 0 1 1 0 0 0 8 0 0\ncpu7 1 0 1 1 0 0 0 9", &rc), 2);
    GP_ASSERT_EQ_INT(s.last[7], 500);
    /* a counter that went back (a CPU replaced) is no gain */
    GP_ASSERT_EQ_INT(parse(&s, "cpu0 1 0 1 1 0 0 0 3 0 0\n", &rc), 0);
    prof_steal_stop(&s);
}

static void test_no_steal_column(void)
{
    prof_steal s = {.fd = -1};
    int rc;
    parse(&s, "cpu  1 2 3 4\ncpu0 1 2 3 4\nintr 5\n", &rc); /* before Linux 2.6.11 */
    GP_ASSERT_EQ_INT(rc, -1);
    parse(&s, "intr 5\ncpu0 1 0 1 1 0 0 0 5 0 0\n", &rc); /* CPU lines need not come first */
    GP_ASSERT_EQ_INT(rc, 0);
    parse(&s, "", &rc);
    GP_ASSERT_EQ_INT(rc, -1);
    prof_steal_stop(&s);
}

/* This machine's /proc/stat: passes closer than min_span give nothing; a pass's sample covers
 * the time since the last one, with a share in 0..100; none before steal was seen. */
static void test_live_passes(void)
{
    prof_steal s;
    prof_steal_start(&s, 1000);
    if (s.fd < 0) {
        printf("  (no /proc/stat with a steal column: live passes not checked)\n");
        return;
    }
    prof_steal_sample k;
    GP_ASSERT_EQ_INT(prof_steal_pass(&s, 1500, 1000, &k), 0); /* too soon */
    int got = prof_steal_pass(&s, 1000 + 50000000, 1000, &k);
    GP_ASSERT_EQ_INT(got, s.seen);
    if (got) {
        GP_ASSERT_EQ_INT(k.t0, 1000);
        GP_ASSERT_EQ_INT(k.t1, 1000 + 50000000);
        GP_CHECK(k.pct >= 0 && k.pct <= 100);
    }
    s.seen = 1; /* as after a first steal: every pass is a sample */
    GP_ASSERT_EQ_INT(prof_steal_pass(&s, 1000 + 90000000, 1000, &k), 1);
    GP_ASSERT_EQ_INT(k.t0, 1000 + 50000000);
    GP_CHECK(k.pct >= 0 && k.pct <= 100);
    prof_steal_stop(&s);
    GP_ASSERT_EQ_INT(prof_steal_pass(&s, 1000 + 190000000, 0, &k), 0); /* stopped */
}

int main(void)
{
    GP_RUN(test_most_one_cpu_gained);
    GP_RUN(test_late_cpu_and_cut_line);
    GP_RUN(test_no_steal_column);
    GP_RUN(test_live_passes);
    return gp_test_summary();
}
