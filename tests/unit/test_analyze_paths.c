/* One input, one answer: the mapped reader (plain file), the streamed reader (the same file with
 * GP_TRACE_NO_MMAP, and gzip) and the in-memory reader accept the same traces and give the same
 * errors. A value over the size limit is refused by every path with the same message (the gzip
 * path once said only "parse error"), and whitespace between events never counts as a value. */
#include "gp/trace.h"
#include "gp_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define LIMIT (1u << 20)
#define EVENT                                                                                      \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":%d,"        \
    "\"dur\":5}"

struct outcome {
    gp_status rc;
    char msg[256];
    size_t events;
};

/* `rc` and `t` come from separate statements: as arguments of one call, `t` could be read
 * before the open that sets it (the order is unspecified), leaking the trace. */
static void record(struct outcome *o, gp_status rc, gp_trace *t, const gp_error *err)
{
    o->rc = rc;
    snprintf(o->msg, sizeof o->msg, "%s", rc == GP_OK ? "" : err->msg);
    o->events = t ? gp_trace_get_info(t)->n_events : 0;
    gp_trace_free(t);
}

static void write_file(const char *path, const char *s, size_t n, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb1");
        gzwrite(f, s, (unsigned)n);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(s, 1, n, f);
        fclose(f);
    }
}

/* Read `s` by every path; all must agree with the first. */
static void all_paths_agree(const char *s, size_t n, gp_status want)
{
    gp_trace_opts opts = {.max_value_bytes = LIMIT};
    char plain[512], gz[520];
    snprintf(plain, sizeof plain, "%s/test_analyze_paths_%d.json", GP_BUILD_DIR, (int)getpid());
    snprintf(gz, sizeof gz, "%s.gz", plain);
    write_file(plain, s, n, 0);
    write_file(gz, s, n, 1);
    struct outcome o[4];
    gp_trace *t = NULL;
    gp_error err;
    gp_status rc = gp_trace_open(plain, &opts, &t, &err);
    record(&o[0], rc, t, &err);
    gp_trace_opts streamed = opts;
    streamed.flags |= GP_TRACE_NO_MMAP;
    rc = gp_trace_open(plain, &streamed, &t, &err);
    record(&o[1], rc, t, &err);
    rc = gp_trace_open(gz, &opts, &t, &err);
    record(&o[2], rc, t, &err);
    rc = gp_trace_open_mem(s, n, "mem", &opts, &t, &err);
    record(&o[3], rc, t, &err);
    if (o[0].rc != want)
        fprintf(stderr, "mapped: %s\n", o[0].msg);
    GP_ASSERT_EQ_INT(o[0].rc, want);
    for (int i = 1; i < 4; i++) {
        GP_ASSERT_EQ_INT(o[i].rc, o[0].rc);
        GP_ASSERT_STR_EQ(o[i].msg, o[0].msg);
        GP_ASSERT_EQ_INT((long)o[i].events, (long)o[0].events);
    }
    unlink(plain);
    unlink(gz);
}

static char *trace_with_gap(size_t gap, size_t name_len, size_t *n)
{
    char *s = malloc(gap + name_len + 4096);
    size_t k = (size_t)sprintf(s, "{\"traceEvents\":[" EVENT ",", 1);
    memset(s + k, ' ', gap);
    k += gap;
    k += (size_t)sprintf(s + k,
                         "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":9,\"dur\":1,"
                         "\"name\":\"");
    memset(s + k, 'a', name_len);
    k += name_len;
    k += (size_t)sprintf(s + k, "\"}," EVENT "]}\n", 20);
    *n = k;
    return s;
}

static void test_whitespace_is_not_a_value(void)
{
    size_t n;
    char *s = trace_with_gap(3 * LIMIT + (5u << 20), 10, &n); /* > a 4 MB block and the limit */
    all_paths_agree(s, n, GP_OK);
    free(s);
}

static void test_value_over_the_limit(void)
{
    size_t n;
    char *s = trace_with_gap(10, LIMIT + 100, &n);
    all_paths_agree(s, n, GP_EPARSE);
    free(s);
    gp_trace *t = NULL;
    gp_error err;
    gp_trace_opts opts = {.max_value_bytes = LIMIT};
    s = trace_with_gap(10, LIMIT + 100, &n);
    GP_ASSERT_EQ_INT(gp_trace_open_mem(s, n, "mem", &opts, &t, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "larger than 1048576 bytes");
    free(s);
}

int main(void)
{
    GP_RUN(test_whitespace_is_not_a_value);
    GP_RUN(test_value_over_the_limit);
    return gp_test_summary();
}
