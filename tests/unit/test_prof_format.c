/* libprof's hand-rolled number formatting (the writer's hot loop) against snprintf: every digit
 * count boundary, powers of ten around it, and a sweep of pseudo-random values. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gp_test.h"
#include "prof_int.h"

static int check_u64(uint64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof(want), "%" PRIu64, v);
    *prof_put_u64(got, v) = '\0';
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "prof_put_u64(%s) wrote '%s'\n", want, got);
        return 0;
    }
    return prof_u64_digits(v) == (int)strlen(want);
}

static int check_us(int64_t ns)
{
    char want[40], got[40];
    int64_t c = ns < 0 ? 0 : ns;
    snprintf(want, sizeof(want), "%" PRId64 ".%03d", c / 1000, (int)(c % 1000));
    *prof_put_us(got, ns) = '\0';
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "prof_put_us(%" PRId64 ") wrote '%s', want '%s'\n", ns, got, want);
        return 0;
    }
    return 1;
}

static void test_u64_boundaries(void)
{
    int ok = check_u64(0) && check_u64(UINT64_MAX) && check_u64(UINT64_MAX - 1);
    uint64_t p = 1;
    for (int i = 0; i < 20; i++, p *= 10)
        ok = ok && check_u64(p - 1) && check_u64(p) && check_u64(p + 1) && check_u64(p * 2 - 1);
    GP_CHECK(ok);
}

static void test_u64_sweep(void)
{
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    int ok = 1;
    for (int i = 0; i < 200000 && ok; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ok = check_u64(x) && check_u64(x >> (i % 64)) && check_us((int64_t)(x >> (1 + i % 63)));
    }
    GP_CHECK(ok);
}

static void test_us_edges(void)
{
    GP_CHECK(check_us(0) && check_us(1) && check_us(999) && check_us(1000) && check_us(1001));
    GP_CHECK(check_us(-5) && check_us(INT64_MIN) && check_us(INT64_MAX));
    GP_CHECK(check_us(123456789012345LL));
}

int main(void)
{
    GP_RUN(test_u64_boundaries);
    GP_RUN(test_u64_sweep);
    GP_RUN(test_us_edges);
    return gp_test_summary();
}
