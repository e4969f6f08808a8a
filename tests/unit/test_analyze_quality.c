/* What a trace says about itself (gp_trace_get_quality): dropped CPU and GPU records, the
 * profiler's warnings, "complete": false; and the reader on what a killed program leaves: a
 * plain file cut mid-event, and a gzip stream of sync-flushed members with no trailer, cut
 * mid-event, read from a file (streamed) and from memory. */
#include "gp/trace.h"
#include "gp_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define HEADER(complete)                                                                           \
    "{\"schemaVersion\":1,\"deviceProperties\":[],\"gprof\":{\"producer\":\"inject\","             \
    "\"dropped_records\":7,\"dropped_cpu_records\":5,\"dropped_gpu_records\":1,"                   \
    "\"complete\":" complete ",\"warnings\":[\"2 unbalanced pop(s) (pop with no open range) on "   \
    "thread 7\",\"a \\\"quoted\\\" one\"]},\"baseTimeNanoseconds\":1700000000000000000,\n"         \
    "\"traceEvents\":[\n"

#define EVENTS                                                                                     \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"       \
    "\"dur\":5},\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,"   \
    "\"dur\":1},\n{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":3,"   \
    "\"dur\":1,\"args\":{\"stream\":7}},\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c\","        \
    "\"pid\":1,\"tid\":1,\"ts\":2000000,\"dur\":1"

static gp_trace *open_mem(const void *s, size_t n)
{
    gp_trace *t = NULL;
    gp_error err;
    if (gp_trace_open_mem(s, n, "mem", NULL, &t, &err) != GP_OK)
        fprintf(stderr, "open: %s\n", err.msg);
    return t;
}

static void test_header_counts(void)
{
    const char *s = HEADER("true") EVENTS "}\n]}\n";
    gp_trace *t = open_mem(s, strlen(s));
    GP_CHECK(t != NULL);
    const gp_trace_quality *q = gp_trace_get_quality(t);
    GP_ASSERT_EQ_INT(q->incomplete, 0);
    GP_ASSERT_EQ_INT(q->dropped_cpu, 5);
    GP_ASSERT_EQ_INT(q->dropped_gpu, 1);
    GP_ASSERT_EQ_INT(q->dropped_other, 1);
    GP_ASSERT_EQ_INT(q->n_cpu, 3);
    GP_ASSERT_EQ_INT(q->n_gpu, 1);
    GP_ASSERT_EQ_INT(q->n_warnings, 2);
    GP_ASSERT_CONTAINS(q->warnings[0], "2 unbalanced pop(s)");
    GP_ASSERT_STR_EQ(q->warnings[1], "a \"quoted\" one");
    GP_ASSERT_NEAR(gp_trace_dropped_pct(q->dropped_cpu, q->n_cpu), 62.5, 1e-9);
    GP_ASSERT_NEAR(gp_trace_dropped_pct(0, 0), 0.0, 0);
    gp_trace_free(t);
}

static void test_not_ours(void)
{
    const char *s = "{\"traceEvents\":[" EVENTS "}]}";
    gp_trace *t = open_mem(s, strlen(s));
    GP_CHECK(t != NULL);
    const gp_trace_quality *q = gp_trace_get_quality(t);
    GP_CHECK(!q->incomplete && !q->dropped_cpu && !q->dropped_gpu && !q->n_warnings);
    GP_ASSERT_EQ_INT(q->n_cpu, 3);
    gp_trace_free(t);
}

/* A plain .tmp: header with "complete":false, events, the last one cut. */
static void test_plain_cut(void)
{
    const char *s = HEADER("false") EVENTS;
    gp_trace *t = open_mem(s, strlen(s) - 3);
    GP_CHECK(t != NULL);
    GP_CHECK(gp_trace_get_quality(t)->incomplete);
    GP_ASSERT_EQ_INT(gp_trace_get_info(t)->n_events, 3);
    gp_trace_free(t);
    /* "complete": false alone (the header not yet rewritten) is incomplete too */
    const char *whole = HEADER("false") EVENTS "}\n]}\n";
    t = open_mem(whole, strlen(whole));
    GP_CHECK(t != NULL && gp_trace_get_quality(t)->incomplete);
    GP_ASSERT_EQ_INT(gp_trace_get_info(t)->n_events, 4);
    gp_trace_free(t);
}

/* Deflate `s` as a gzip member; `finish` writes the trailer, else a sync flush ends it. */
static size_t gzip_member(const char *s, size_t n, int finish, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    z.next_in = (unsigned char *)(uintptr_t)s;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, finish ? Z_FINISH : Z_SYNC_FLUSH);
    size_t got = cap - z.avail_out;
    deflateEnd(&z);
    return got;
}

/* What libprof leaves when killed with gzip on: the header as a finished member, then the
 * events' member sync-flushed up to a point inside an event, and no trailer. */
static size_t killed_gzip(unsigned char *buf, size_t cap)
{
    const char *h = HEADER("false"), *ev = EVENTS;
    size_t n = gzip_member(h, strlen(h), 1, buf, cap);
    return n + gzip_member(ev, strlen(ev) - 3, 0, buf + n, cap - n);
}

static void test_gzip_no_trailer(void)
{
    unsigned char buf[8192];
    size_t n = killed_gzip(buf, sizeof(buf));
    GP_CHECK(n > 20);
    gp_trace *t = open_mem(buf, n);
    GP_CHECK(t != NULL);
    GP_CHECK(gp_trace_get_quality(t)->incomplete && gp_trace_get_info(t)->gzip);
    GP_ASSERT_EQ_INT(gp_trace_get_info(t)->n_events, 3);
    gp_trace_free(t);
    char path[] = "/tmp/gp_quality_XXXXXX";
    int fd = mkstemp(path);
    GP_CHECK(fd >= 0);
    int ok = write(fd, buf, n) == (ssize_t)n;
    close(fd);
    gp_error err;
    t = NULL;
    gp_status rc = ok ? gp_trace_open(path, NULL, &t, &err) : GP_EIO;
    unlink(path);
    GP_ASSERT_OK(rc);
    GP_CHECK(gp_trace_get_quality(t)->incomplete);
    GP_ASSERT_EQ_INT(gp_trace_get_info(t)->n_events, 3);
    GP_ASSERT_EQ_INT(gp_trace_get_quality(t)->dropped_cpu, 5);
    gp_trace_free(t);
}

int main(void)
{
    GP_RUN(test_header_counts);
    GP_RUN(test_not_ours);
    GP_RUN(test_plain_cut);
    GP_RUN(test_gzip_no_trailer);
    return gp_test_summary();
}
