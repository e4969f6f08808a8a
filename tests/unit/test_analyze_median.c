/* rules_median (quickselect) against the median of a fully sorted copy, on random arrays with
 * many duplicates, sorted and reversed input, and the small sizes where the halves differ. */
#include "rules/rules_int.h"
#include "gp_test.h"

#include <stdlib.h>

static int cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

static int64_t sorted_median(const int64_t *v, size_t n)
{
    int64_t *c = malloc(n * sizeof(*c));
    memcpy(c, v, n * sizeof(*c));
    qsort(c, n, sizeof(*c), cmp);
    int64_t m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return m;
}

static void check(int64_t *v, size_t n)
{
    int64_t want = sorted_median(v, n);
    GP_ASSERT_EQ_INT(rules_median(v, n), want);
}

static void test_random_arrays(void)
{
    int64_t v[257];
    srand(7);
    for (int round = 0; round < 2000; round++) {
        size_t n = 1 + (size_t)(rand() % 257);
        int range = round % 3 == 0 ? 4 : 1000000; /* few distinct values, or many */
        for (size_t i = 0; i < n; i++)
            v[i] = (int64_t)(rand() % range) - range / 3;
        check(v, n);
        if (gp_test_failed_now)
            return;
    }
}

static void test_ordered_and_edge_inputs(void)
{
    int64_t v[100];
    for (size_t n = 1; n <= 100; n++) {
        for (size_t i = 0; i < n; i++)
            v[i] = (int64_t)i;
        check(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (int64_t)(n - i);
        check(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = 5;
        check(v, n);
        if (gp_test_failed_now)
            return;
    }
    GP_ASSERT_EQ_INT(rules_median(v, 0), 0);
}

int main(void)
{
    GP_RUN(test_random_arrays);
    GP_RUN(test_ordered_and_edge_inputs);
    return gp_test_summary();
}
