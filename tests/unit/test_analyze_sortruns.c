/* sort_runs against qsort: arrays made of 1 to 100 ascending runs (across the 64-run limit
 * where it falls back to qsort), with many equal keys, come out sorted with the same multiset;
 * up to 64 runs, equal keys keep their input order (stable). */
#include "model/sort_runs.h"
#include "gp_test.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct item {
    int64_t key;
    uint32_t pos; /* input position, for stability */
    uint32_t pad;
} item;

static int cmp_item(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    return (a->key > b->key) - (a->key < b->key);
}

static int cmp_full(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    int c = cmp_item(a, b);
    return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* n items in `runs` ascending runs of random lengths; keys drawn from a small range. */
static void fill(item *v, size_t n, size_t runs, unsigned seed)
{
    srand(seed);
    size_t per = n / runs + 1;
    int64_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % per == 0)
            k = rand() % 50;
        k += rand() % 3; /* 0: an equal key, to test stability */
        v[i] = (item){k, (uint32_t)i, 0};
    }
}

static void check(size_t n, size_t runs, unsigned seed)
{
    item *v = malloc((n + 1) * sizeof(*v)), *want = malloc((n + 1) * sizeof(*v));
    fill(v, n, runs, seed);
    for (size_t i = 0; i < n; i++)
        want[i] = v[i];
    qsort(want, n, sizeof(*want), cmp_full); /* the stable order */
    sort_runs(v, n, sizeof(*v), cmp_item);
    for (size_t i = 0; i < n; i++) {
        GP_ASSERT_EQ_INT(v[i].key, want[i].key);
        if (runs <= 64)
            GP_ASSERT_EQ_INT(v[i].pos, want[i].pos);
        if (i > 0)
            GP_CHECK(v[i - 1].key <= v[i].key);
    }
    free(v);
    free(want);
}

static void test_runs(void)
{
    const size_t runs[] = {1, 2, 3, 7, 8, 63, 64, 65, 100};
    for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
        for (unsigned seed = 1; seed <= 3; seed++) {
            check(10000, runs[r], seed);
            if (gp_test_failed_now)
                return;
        }
}

static void test_small(void)
{
    for (size_t n = 0; n < 40; n++)
        for (size_t runs = 1; runs <= n + 1 && runs < 8; runs++) {
            check(n, runs, (unsigned)(n * 10 + runs));
            if (gp_test_failed_now)
                return;
        }
}

int main(void)
{
    GP_RUN(test_runs);
    GP_RUN(test_small);
    return gp_test_summary();
}
