/* Track order after a read: events sorted by (ts, longer first) whatever order the file has them
 * in: in order, nearly in order (instants written after the ops around them, the common case the
 * reader merges), reversed, one early outlier, and ties, which keep their file order when the
 * track is nearly in order. Every event is there exactly once. */
#include "gp/trace.h"
#include "gp_test.h"

#include <stdlib.h>
#include <string.h>

typedef struct spec {
    long ts, dur;
    int tid; /* 0: tid 1 */
} spec;

/* A trace holding events e0..e(n-1) with the given times and tids, in that file order. */
static gp_trace *open_specs(const spec *s, size_t n)
{
    size_t cap = 128 + n * 128, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(buf + len, cap - len, "{\"traceEvents\": [");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(
                buf + len, cap - len,
                "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"e%zu\", \"pid\": "
                "1, \"tid\": %d, \"ts\": %ld, \"dur\": %ld}",
                i ? ", " : "", i, s[i].tid ? s[i].tid : 1, s[i].ts, s[i].dur);
    len += (size_t)snprintf(buf + len, cap - len, "]}");
    gp_trace *t = NULL;
    gp_error err;
    if (gp_trace_open_mem(buf, len, "mem", NULL, &t, &err) != GP_OK)
        fprintf(stderr, "open: %s\n", err.msg);
    free(buf);
    return t;
}

/* Sorted, each event once; when `stable`, equal (ts, dur) keep their file order. */
static void check_order(const spec *s, size_t n, int stable)
{
    gp_trace *t = open_specs(s, n);
    GP_CHECK(t);
    size_t m;
    const gp_event *ev = gp_trace_events(t, &m);
    GP_ASSERT_EQ_INT(m, n);
    char *seen = calloc(n, 1);
    long prev_idx = -1;
    for (size_t i = 0; i < m; i++) {
        size_t idx = (size_t)strtoul(gp_trace_str(t, ev[i].name) + 1, NULL, 10);
        GP_CHECK(idx < n && !seen[idx]);
        seen[idx] = 1;
        GP_ASSERT_EQ_INT(ev[i].ts, s[idx].ts * 1000);
        GP_ASSERT_EQ_INT(ev[i].dur, s[idx].dur * 1000);
        if (i > 0) {
            GP_CHECK(ev[i - 1].ts <= ev[i].ts);
            if (ev[i - 1].ts == ev[i].ts)
                GP_CHECK(ev[i - 1].dur >= ev[i].dur);
            if (stable && ev[i - 1].ts == ev[i].ts && ev[i - 1].dur == ev[i].dur)
                GP_CHECK(prev_idx < (long)idx);
        }
        prev_idx = (long)idx;
    }
    free(seen);
    gp_trace_free(t);
}

enum { N = 4000 };

static void test_in_order_and_nearly(void)
{
    static spec s[N];
    for (size_t i = 0; i < N; i++)
        s[i] = (spec){(long)i * 10, 5, 0};
    check_order(s, N, 1);
    for (size_t i = 0; i < N; i++) /* every 40th an instant from two events back */
        s[i] = i % 40 == 39 ? (spec){(long)(i - 2) * 10 + 1, 0, 0} : (spec){(long)i * 10, 5, 0};
    check_order(s, N, 1);
    for (size_t i = 0; i < N; i++) /* ties: pairs with equal times, some displaced */
        s[i] = (spec){(long)(i / 2) * 10 - (i % 50 == 49 ? 30 : 0), 5, 0};
    check_order(s, N, 1);
    for (size_t i = 0; i < N; i++) /* a parent written after its children */
        s[i] = i % 4 == 3 ? (spec){(long)(i - 3) * 10, 40, 0} : (spec){(long)i * 10, 5, 0};
    check_order(s, N, 1);
}

static void test_out_of_order(void)
{
    static spec s[N];
    for (size_t i = 0; i < N; i++)
        s[i] = (spec){(long)(N - i) * 10, (long)(i % 3), 0};
    check_order(s, N, 0);
    s[0] = (spec){1000000, 1, 0}; /* one outlier first: everything after it is out of place */
    for (size_t i = 1; i < N; i++)
        s[i] = (spec){(long)i * 10, 5, 0};
    check_order(s, N, 0);
    for (size_t i = 0; i < N; i++)
        s[i] = (spec){(long)((i * 7919) % N) * 10, (long)(i % 5), 0};
    check_order(s, N, 0);
}

/* More events than one reader chunk (65536), on interleaved tracks: the scatter into tracks
 * runs in two halves (one filling tracks forward, one backward). Each track must hold exactly
 * its own events, in time order, and equal times in file order. */
static void test_many_tracks(void)
{
    enum { M = 200000 };
    spec *s = malloc(M * sizeof(*s));
    for (size_t i = 0; i < M; i++) /* tids 1..5 in a pattern; runs of 10 with equal times */
        s[i] = (spec){(long)(i / 10) * 3, 2, (int)(1 + (i * 7 + i / 3) % 5)};
    gp_trace *t = open_specs(s, M);
    GP_CHECK(t);
    size_t n, nt;
    const gp_event *ev = gp_trace_events(t, &n);
    const gp_track *tracks = gp_trace_tracks(t, &nt);
    GP_ASSERT_EQ_INT(n, M);
    GP_ASSERT_EQ_INT(nt, 5);
    char *seen = calloc(M, 1);
    for (size_t k = 0; k < nt; k++)
        for (uint32_t i = tracks[k].first; i < tracks[k].first + tracks[k].count; i++) {
            size_t idx = (size_t)strtoul(gp_trace_str(t, ev[i].name) + 1, NULL, 10);
            GP_CHECK(idx < M && !seen[idx]);
            seen[idx] = 1;
            GP_ASSERT_EQ_INT(s[idx].tid, tracks[k].tid);
            GP_ASSERT_EQ_INT(ev[i].ts, s[idx].ts * 1000);
            GP_ASSERT_EQ_INT(ev[i].track, k);
            if (i > tracks[k].first) { /* in time order, ties in file order */
                size_t prev = (size_t)strtoul(gp_trace_str(t, ev[i - 1].name) + 1, NULL, 10);
                GP_CHECK(ev[i - 1].ts < ev[i].ts || (ev[i - 1].ts == ev[i].ts && prev < idx));
            }
        }
    free(seen);
    free(s);
    gp_trace_free(t);
}

int main(void)
{
    GP_RUN(test_in_order_and_nearly);
    GP_RUN(test_out_of_order);
    GP_RUN(test_many_tracks);
    return gp_test_summary();
}
