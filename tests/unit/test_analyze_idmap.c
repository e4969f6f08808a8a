/* id_map, the id -> event index map behind the correlation and External id links: its dense
 * layout (ids packed in a range) and its hash layout answer every lookup alike, the first
 * event with an id wins in both, ids outside a dense range are absent; and y_nested analysed
 * with its ids spread over int64 (hash layout) gives the key averages it gives with small ids. */
#include "model/analysis_int.h"
#include "gp_test.h"

#include <stdlib.h>
#include <string.h>

/* Fill a range-sized map and a plain hash with the same (key, value) pairs, then compare every
 * lookup in [lo - 3, hi + 3] and a few far away. */
static void check_same(const int64_t *keys, size_t n, int expect_dense)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        lo = keys[i] < lo ? keys[i] : lo;
        hi = keys[i] > hi ? keys[i] : hi;
    }
    id_map r, h;
    GP_ASSERT_OK(id_map_init_range(&r, lo, hi, n));
    GP_ASSERT_OK(id_map_init(&h, 4));
    GP_ASSERT_EQ_INT(r.dense != NULL, expect_dense);
    for (size_t i = 0; i < n; i++) {
        GP_ASSERT_OK(id_map_put(&r, keys[i], (uint32_t)i));
        GP_ASSERT_OK(id_map_put(&h, keys[i], (uint32_t)i));
    }
    GP_ASSERT_EQ_INT(r.n, h.n);
    for (size_t i = 0; i < n; i++) /* the first index of each key */
        GP_CHECK(id_map_get(&r, keys[i]) <= i && keys[id_map_get(&r, keys[i])] == keys[i]);
    if ((uint64_t)hi - (uint64_t)lo < 100000) /* no overflow on the extremes */
        for (int64_t k = lo - 3; k <= hi + 3; k++)
            GP_ASSERT_EQ_INT(id_map_get(&r, k), id_map_get(&h, k));
    const int64_t far[] = {INT64_MIN,
                           -1,
                           0,
                           INT64_MAX,
                           (int64_t)((uint64_t)lo - 1000000u),
                           (int64_t)((uint64_t)hi + 1000000u)}; /* wrapping, not overflowing */
    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++)
        GP_ASSERT_EQ_INT(id_map_get(&r, far[i]), id_map_get(&h, far[i]));
    id_map_release(&r);
    id_map_release(&h);
}

static void test_dense_ids(void)
{
    int64_t keys[5000];
    for (size_t i = 0; i < 5000; i++) /* correlation-like: increasing, gaps, repeats */
        keys[i] = 1000 + (int64_t)(i * 3 / 2) - (i % 7 == 0 ? 1 : 0);
    check_same(keys, 5000, 1);
}

static void test_sparse_ids(void)
{
    int64_t keys[3000];
    srand(7);
    for (size_t i = 0; i < 3000; i++)
        keys[i] = (int64_t)rand() * 1000003 - (i % 2 ? (int64_t)1 << 40 : 0);
    keys[17] = keys[3];
    check_same(keys, 3000, 0);
    const int64_t extremes[] = {INT64_MIN, INT64_MAX, 0, -5, INT64_MIN + 1};
    check_same(extremes, 5, 0);
}

static void test_dense_bounds(void)
{
    id_map m;
    GP_ASSERT_OK(id_map_init_range(&m, -10, 10, 21));
    GP_CHECK(m.dense != NULL);
    GP_ASSERT_OK(id_map_put(&m, -10, 4));
    GP_ASSERT_OK(id_map_put(&m, 10, 5));
    GP_ASSERT_OK(id_map_put(&m, 10, 6)); /* kept: the first wins */
    /* outside the range it was sized for: a broken invariant, never "out of memory" */
    GP_ASSERT_EQ_INT(id_map_put(&m, 11, 7), GP_EINVAL);
    GP_ASSERT_EQ_INT(id_map_get(&m, -10), 4);
    GP_ASSERT_EQ_INT(id_map_get(&m, 10), 5);
    GP_ASSERT_EQ_INT(id_map_get(&m, 0), GP_NONE);
    GP_ASSERT_EQ_INT(id_map_get(&m, 11), GP_NONE);
    GP_ASSERT_EQ_INT(id_map_get(&m, -11), GP_NONE);
    id_map_release(&m);
    GP_ASSERT_OK(id_map_init_range(&m, 0, -1, 0)); /* no ids at all */
    GP_ASSERT_EQ_INT(id_map_get(&m, 0), GP_NONE);
    id_map_release(&m);
}

static char *read_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/traces/%s", GP_TEST_DATA_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    return buf;
}

/* Every "correlation": N and "External id": N becomes N * 2^40 + 12345: the same links, over a
 * range far too wide for the dense layout. */
static char *spread_ids(const char *src, size_t len, size_t *out_len)
{
    char *out = malloc(len * 2 + 1024), *o = out;
    const char *p = src, *end = src + len;
    while (out && p < end) {
        const char *c = strstr(p, "\"correlation\": "), *x = strstr(p, "\"External id\": ");
        const char *hit = !c ? x : !x ? c : c < x ? c : x;
        if (!hit || hit >= end) {
            memcpy(o, p, (size_t)(end - p));
            o += end - p;
            break;
        }
        const char *num = hit + 15;
        memcpy(o, p, (size_t)(num - p));
        o += num - p;
        char *after;
        long long v = strtoll(num, &after, 10);
        o += sprintf(o, "%lld", v * (1LL << 40) + 12345);
        p = after;
    }
    *out_len = out ? (size_t)(o - out) : 0;
    return out;
}

static void keyavg_of(const char *data, size_t len, gp_keyavg *k)
{
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    memset(k, 0, sizeof(*k));
    if (gp_trace_open_mem(data, len, "mem", NULL, &t, NULL) == GP_OK &&
        gp_analysis_run(t, NULL, &a, NULL) == GP_OK)
        gp_keyavg_compute(a, GP_GROUP_NAME, GP_SORT_CUDA_TIME_TOTAL, k, NULL);
    /* rows point into the trace's strings: keep names by value */
    for (size_t i = 0; i < k->n_rows; i++)
        k->rows[i].name = strdup(k->rows[i].name);
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void test_sparse_ids_same_report(void)
{
    size_t len = 0, len2 = 0;
    char *src = read_fixture("y_nested.json", &len);
    GP_CHECK(src && len > 0);
    char *wide = spread_ids(src, len, &len2);
    GP_CHECK(wide && len2 > len);
    gp_keyavg k1, k2;
    keyavg_of(src, len, &k1);
    keyavg_of(wide, len2, &k2);
    GP_CHECK(k1.n_rows > 3);
    GP_ASSERT_EQ_INT(k1.n_rows, k2.n_rows);
    GP_ASSERT_EQ_INT(k1.self_device_total, k2.self_device_total);
    for (size_t i = 0; i < k1.n_rows && i < k2.n_rows; i++) {
        GP_ASSERT_STR_EQ(k1.rows[i].name, k2.rows[i].name);
        GP_ASSERT_EQ_INT(k1.rows[i].device_total, k2.rows[i].device_total);
        GP_ASSERT_EQ_INT(k1.rows[i].self_device, k2.rows[i].self_device);
        GP_ASSERT_EQ_INT(k1.rows[i].cpu_total, k2.rows[i].cpu_total);
    }
    GP_CHECK(k1.rows[0].device_total > 0);
    for (size_t i = 0; i < k1.n_rows; i++)
        free((char *)k1.rows[i].name);
    for (size_t i = 0; i < k2.n_rows; i++)
        free((char *)k2.rows[i].name);
    gp_keyavg_release(&k1);
    gp_keyavg_release(&k2);
    free(src);
    free(wide);
}

int main(void)
{
    GP_RUN(test_dense_ids);
    GP_RUN(test_sparse_ids);
    GP_RUN(test_dense_bounds);
    GP_RUN(test_sparse_ids_same_report);
    return gp_test_summary();
}
