/* Trace reader and analysis on hand-written traces with known answers: every y_ fixture loads,
 * every n_ fixture fails with GP_EPARSE and a position; y_nested's links, steps, breakdown, GPU
 * idle split, memory and key averages equal the values worked out by hand. */
#include "gp/analysis.h"
#include "gp_test.h"

#include <stdio.h>

#include <stdint.h>

#include <unistd.h>

#include <zlib.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static gp_trace *open_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/traces/%s", GP_TEST_DATA_DIR, name);
    gp_trace *t = NULL;
    gp_error err;
    if (gp_trace_open(path, NULL, &t, &err) != GP_OK)
        fprintf(stderr, "%s: %s\n", path, err.msg);
    return t;
}

static void test_fixtures(void)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/traces", GP_TEST_DATA_DIR);
    DIR *d = opendir(dir);
    GP_CHECK(d != NULL);
    int n_y = 0, n_n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        gp_trace *t = NULL;
        gp_error err;
        gp_status rc = gp_trace_open(path, NULL, &t, &err);
        if (e->d_name[0] == 'y') {
            n_y++;
            GP_ASSERT_OK(rc);
        } else if (e->d_name[0] == 'n') {
            n_n++;
            GP_ASSERT_EQ_INT(rc, GP_EPARSE);
            GP_CHECK(err.offset >= 0 && err.line >= 1);
            GP_ASSERT_STR_EQ(err.path, path);
        }
        gp_trace_free(t);
    }
    closedir(d);
    GP_CHECK(n_y >= 3 && n_n >= 10);
}

static void test_reader_fields(void)
{
    gp_trace *t = open_fixture("y_nested.json");
    GP_CHECK(t != NULL);
    const gp_trace_info *in = gp_trace_get_info(t);
    GP_ASSERT_EQ_INT(in->n_events, 15);
    GP_ASSERT_EQ_INT(in->n_flows, 2);
    GP_ASSERT_EQ_INT(in->n_unknown_cat, 1);
    GP_ASSERT_EQ_INT(in->rank, 0);
    size_t n;
    const gp_kv *cfg = gp_trace_config(t, &n);
    GP_ASSERT_EQ_INT(gp_kv_find(cfg, n, "batch_size")->i, 64);
    GP_ASSERT_STR_EQ(gp_kv_find(cfg, n, "amp")->str, "off");
    const gp_device_props *dev = gp_trace_devices(t, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_ASSERT_EQ_INT(dev[0].num_sms, 4);
    const gp_event *ev = gp_trace_events(t, &n);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind == GP_EV_MEMCPY) {
            const gp_gpu_info *g = gp_trace_gpu_info(t, &ev[i]);
            GP_ASSERT_EQ_INT(g->bytes, 4096);
            GP_ASSERT_EQ_INT(g->copy_kind, GP_COPY_HTOD);
            GP_ASSERT_EQ_INT(g->src_mem, GP_MEM_PAGEABLE);
            GP_ASSERT_EQ_INT(ev[i].ts, 131000);
            found = 1;
        } else if (ev[i].kind == GP_EV_OTHER) {
            GP_ASSERT_EQ_INT(ev[i].ts, 1500); /* fractional us -> exact ns */
            GP_ASSERT_EQ_INT(ev[i].dur, 250);
        }
    GP_CHECK(found);
    gp_trace_free(t);
}

static void test_analysis(void)
{
    gp_trace *t = open_fixture("y_nested.json");
    gp_analysis *a = NULL;
    GP_ASSERT_OK(gp_analysis_run(t, NULL, &a, NULL));
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    /* The last step launched 1 GPU activity after the first's 2 (< 80%): tb_plugin's Overview
     * drops it as possibly cut off, and so do we (test_analyze_tbsteps has tb's own cases). */
    GP_ASSERT_EQ_INT(n, 1);
    GP_ASSERT_EQ_INT(s[0].bd[GP_BD_KERNEL], 50000);
    GP_ASSERT_EQ_INT(s[0].bd[GP_BD_RUNTIME], 10000);
    GP_ASSERT_EQ_INT(s[0].bd[GP_BD_CPU_EXEC], 25000);
    GP_ASSERT_EQ_INT(s[0].bd[GP_BD_OTHER], 15000);
    const gp_device_stats *d = gp_analysis_devices(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_ASSERT_EQ_INT(d[0].busy_ns, 59000);
    GP_ASSERT_EQ_INT(d[0].idle_ns[GP_IDLE_HOST_WAIT], 51000);
    const gp_memcpy *m = gp_analysis_memcpys(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_CHECK(m[0].runtime != GP_NONE && m[0].op != GP_NONE);
    const gp_mem_series *ms = gp_analysis_memory(a, &n);
    GP_ASSERT_EQ_INT(ms[0].peak_allocated, 1536);
    gp_keyavg k;
    GP_ASSERT_OK(gp_keyavg_compute(a, GP_GROUP_NAME, GP_SORT_CUDA_TIME_TOTAL, &k, NULL));
    GP_ASSERT_STR_EQ(k.rows[0].name, "ProfilerStep*");
    GP_ASSERT_EQ_INT(k.rows[0].self_cpu, 55000);
    GP_ASSERT_EQ_INT(k.rows[0].device_total, 59000);
    GP_ASSERT_EQ_INT(k.self_cpu_total, 150000);
    GP_ASSERT_EQ_INT(k.self_device_total, 59000);
    gp_keyavg_release(&k);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* MTIA's dma* kernels are memory in HTA's temporal breakdown (kernel type MEMORY: ^dma), not
 * compute; an ordinary kernel stays compute. */
static void test_dma_kernels_are_memory(void)
{
#define KERNEL(name, ts, dur)                                                                      \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts       \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7}}"
    static const char doc[] = "{\"traceEvents\":[" KERNEL("dma_copy_in", 100, 10) "," KERNEL(
            "gemm_kernel", 120, 20) "," KERNEL("dma_copy_out", 150, 5) "]}";
#undef KERNEL
    gp_trace *t = NULL;
    GP_ASSERT_OK(gp_trace_open_mem(doc, sizeof(doc) - 1, "dma", NULL, &t, NULL));
    gp_analysis *a = NULL;
    GP_ASSERT_OK(gp_analysis_run(t, NULL, &a, NULL));
    size_t n;
    const gp_device_stats *d = gp_analysis_devices(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_ASSERT_EQ_INT(d[0].compute_ns, 20000);
    GP_ASSERT_EQ_INT(d[0].memory_ns, 15000);
    GP_ASSERT_EQ_INT(d[0].comm_ns, 0);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* libprof's step args (gprof_thread_cpu_ns, gprof_runq_ns) reach the steps: step 0's wait
 * beyond its range (CPU 6 + wait 8 us in a 10 us step) moves to step 1, whose range holds it
 * (a thread preempted in the boundary's read before the figures); step 2 has none (-1), and a
 * range that is no step carries nothing. */
static void test_step_sched_args(void)
{
    static const char doc[] =
            "{\"traceEvents\":["
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":1,"
            "\"tid\":1,\"ts\":100,\"dur\":10,"
            "\"args\":{\"gprof_thread_cpu_ns\":6000,\"gprof_runq_ns\":8000}},"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,"
            "\"tid\":1,\"ts\":110,\"dur\":20,"
            "\"args\":{\"gprof_thread_cpu_ns\":5000,\"gprof_runq_ns\":1000}},"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,"
            "\"tid\":1,\"ts\":130,\"dur\":10},"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"work\",\"pid\":1,\"tid\":1,"
            "\"ts\":101,\"dur\":5,\"args\":{\"gprof_runq_ns\":7}}]}";
    gp_trace *t = NULL;
    GP_ASSERT_OK(gp_trace_open_mem(doc, sizeof(doc) - 1, "steps", NULL, &t, NULL));
    size_t n;
    const gp_event *ev = gp_trace_events(t, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(gp_trace_str(t, ev[i].name), "work") == 0)
            GP_CHECK(gp_trace_step_sched(t, &ev[i]) == NULL);
    gp_analysis *a = NULL;
    GP_ASSERT_OK(gp_analysis_run(t, NULL, &a, NULL));
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 3);
    GP_ASSERT_EQ_INT(s[0].cpu_ns, 6000);
    GP_ASSERT_EQ_INT(s[0].runq_ns, 4000);
    GP_ASSERT_EQ_INT(s[1].cpu_ns, 5000);
    GP_ASSERT_EQ_INT(s[1].runq_ns, 5000);
    GP_ASSERT_EQ_INT(s[2].cpu_ns, -1);
    GP_ASSERT_EQ_INT(s[2].runq_ns, -1);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* `text` gzipped into `path`, cut to `keep` bytes (0: whole) or with its CRC flipped (keep < 0).
 * @return the bytes written, in `buf` (cap 4096). */
static size_t write_gz(const char *path, const char *text, long keep, unsigned char *buf)
{
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = buf;
    z.avail_out = 4096;
    int done = deflate(&z, Z_FINISH) == Z_STREAM_END;
    size_t n = done ? 4096 - z.avail_out : 0;
    deflateEnd(&z);
    if (keep < 0 && n >= 8)
        buf[n - 8] ^= 0xff; /* the CRC-32 of the trailer */
    else if (keep > 0)
        n = (size_t)keep;
    FILE *f = fopen(path, "wb");
    fwrite(buf, 1, n, f);
    fclose(f);
    return n;
}

/* gzip failures say what happened, with the file and no zlib "<fd:3>" (issue 18 item 9): a file
 * cut in its first bytes is not "empty", and a bad CRC names the byte, by the streamed and the
 * in-memory readers alike. */
static void test_gzip_messages(void)
{
    static const char text[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,"
                               "\"tid\":1,\"ts\":1,\"dur\":2}]}";
    char path[512];
    unsigned char buf[4096];
    snprintf(path, sizeof path, "%s/test_analyze_trace_%d.json.gz", GP_BUILD_DIR, (int)getpid());
    gp_trace *t = NULL;
    gp_error err;
    write_gz(path, text, 10, buf); /* the gzip header alone */
    GP_ASSERT_EQ_INT(gp_trace_open(path, NULL, &t, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "nothing decompresses from this gzip file");
    size_t n = write_gz(path, text, -1, buf);
    gp_status streamed = gp_trace_open(path, NULL, &t, &err);
    GP_CHECK(streamed != GP_OK);
    GP_ASSERT_CONTAINS(err.msg, "cannot decompress: incorrect data check (at byte");
    GP_CHECK(strstr(err.msg, "<fd:") == NULL);
    GP_ASSERT_STR_EQ(err.path, path);
    GP_ASSERT_EQ_INT(gp_trace_open_mem(buf, n, path, NULL, &t, &err), streamed);
    GP_ASSERT_CONTAINS(err.msg, "cannot decompress: incorrect data check (at byte");
    GP_ASSERT_EQ_INT(gp_trace_open(path, NULL, &t, NULL), streamed); /* no err: the same status */
    GP_CHECK(t == NULL);
    unlink(path);
}

/* A value larger than max_value_bytes in a streamed (gzip) file, read with no gp_error: the same
 * status as with one, and no crash (the reader read the message from the missing error). */
static void test_no_error_struct(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/test_analyze_trace_big_%d.json.gz", GP_BUILD_DIR,
             (int)getpid());
    gzFile gz = gzopen(path, "wb1");
    GP_CHECK(gz != NULL);
    gzputs(gz,
           "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2,\"name\":\"");
    static char chunk[1 << 16];
    memset(chunk, 'a', sizeof chunk);
    for (int i = 0; i < 160; i++) /* 10 MiB: more than two of the reader's blocks */
        gzwrite(gz, chunk, sizeof chunk);
    gzputs(gz, "\"}]}");
    gzclose(gz);
    gp_trace_opts o = {.max_value_bytes = 1 << 20};
    gp_trace *t = NULL;
    gp_error err;
    gp_status with = gp_trace_open(path, &o, &t, &err);
    GP_ASSERT_EQ_INT(with, GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "larger than");
    GP_ASSERT_EQ_INT(gp_trace_open(path, &o, &t, NULL), with);
    GP_CHECK(t == NULL);
    unlink(path);
}

/* n events named `name_len` bytes each, distinct; caller frees. NULL: out of memory. */
static char *names_doc(size_t n, int name_len, size_t *len)
{
    size_t cap = n * ((size_t)name_len + 80) + 64;
    char *doc = malloc(cap);
    if (!doc)
        return NULL;
    *len = (size_t)snprintf(doc, cap, "{\"traceEvents\":[");
    for (size_t i = 0; i < n; i++)
        *len += (size_t)snprintf(doc + *len, cap - *len,
                                 "%s{\"ph\":\"X\",\"name\":\"%06zu%0*d\",\"pid\":1,\"tid\":1,"
                                 "\"ts\":%zu,\"dur\":1}",
                                 i ? "," : "", i, name_len - 6, 0, i);
    *len += (size_t)snprintf(doc + *len, cap - *len, "]}");
    return doc;
}

/* doc (n events) fails under a ceiling of `tight` MiB with the limit named and loads under
 * `roomy` MiB (0: none); on one thread and split across three. */
static void check_ceiling(const char *doc, size_t len, size_t n, unsigned tight, unsigned roomy)
{
    gp_trace *t = NULL;
    gp_error err;
    char want[80];
    snprintf(want, sizeof(want), "more memory than the limit of %u MiB (--max-memory)", tight);
    for (int split = 0; split < 2; split++) {
        unsigned flags = split ? GP_TRACE_SPLIT_ANY : 0;
        int threads = split ? 3 : 1;
        gp_trace_opts lo = {.flags = flags, .max_memory = (size_t)tight << 20, .threads = threads};
        gp_trace_opts hi = {.flags = flags, .max_memory = (size_t)roomy << 20, .threads = threads};
        GP_ASSERT_EQ_INT(gp_trace_open_mem(doc, len, "doc", &lo, &t, &err), GP_EPARSE);
        GP_ASSERT_CONTAINS(err.msg, want);
        GP_ASSERT_STR_EQ(err.path, "doc");
        GP_ASSERT_OK(gp_trace_open_mem(doc, len, "doc", &hi, &t, &err));
        GP_ASSERT_EQ_INT((long)gp_trace_get_info(t)->n_events, (long)n);
        gp_trace_free(t);
    }
}

/* The memory ceiling (gp_trace_opts.max_memory, issue 18 item 6): 100,000 small events of a
 * repetitive document (what a gzip bomb inflates to) fail past 1 MiB with the limit named, and
 * load without it. */
static void test_memory_ceiling(void)
{
    size_t n = 100000, len;
    char *doc = names_doc(n, 8, &len);
    GP_CHECK(doc != NULL);
    check_ceiling(doc, len, n, 1, 0);
    free(doc);
}

/* The names count against the ceiling too (issue 26): 30,000 events with distinct 2 KB names
 * (60 MB of names) fail under a ceiling that the same events with 8-byte names fit in (the
 * event chunks, one a part), and load under a larger one. */
static void test_memory_ceiling_names(void)
{
    size_t n = 30000, short_len, long_len;
    char *short_doc = names_doc(n, 8, &short_len), *long_doc = names_doc(n, 2048, &long_len);
    GP_CHECK(short_doc && long_doc);
    for (int split = 0; split < 2; split++) {
        gp_trace *t = NULL;
        gp_error err;
        gp_trace_opts o = {.flags = split ? GP_TRACE_SPLIT_ANY : 0,
                           .max_memory = 56u << 20,
                           .threads = split ? 3 : 1};
        GP_ASSERT_OK(gp_trace_open_mem(short_doc, short_len, "short", &o, &t, &err));
        gp_trace_free(t);
    }
    check_ceiling(long_doc, long_len, n, 56, 256);
    free(short_doc);
    free(long_doc);
}

static gp_status open_doc(const char *doc, gp_trace **t, gp_error *err)
{
    return gp_trace_open_mem(doc, strlen(doc), "doc", NULL, t, err);
}

/* A JSON file that is not a trace is an error; events dropped for a missing "ts" or "ph" are
 * counted in a warning, and an error when nothing was kept (issue 17 item 5: both read as an
 * empty trace, exit 0). */
static void test_not_a_trace(void)
{
    gp_trace *t = NULL;
    gp_error err;
    GP_ASSERT_EQ_INT(open_doc("{\"train_seconds\": 2.5}", &t, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "not a trace: the object has no \"traceEvents\" array");
    GP_ASSERT_EQ_INT(open_doc("{}", &t, &err), GP_EPARSE);
    GP_ASSERT_EQ_INT(open_doc("[{\"ph\": \"X\", \"dur\": 1}]", &t, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "no event can be used: 1 event has no \"ts\"");
    GP_CHECK(err.offset > 0);
    const char *mixed = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 2}, "
                        "{\"ph\": \"X\", \"dur\": 2}, {\"ph\": \"i\"}, {\"ts\": 3}, "
                        "{\"ph\": \"C\"}]}";
    GP_ASSERT_OK(open_doc(mixed, &t, &err));
    size_t n;
    const char *const *w = gp_trace_warnings(t, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_ASSERT_STR_EQ(w[0], "2 events have no \"ts\", 1 event has no \"ph\": dropped (kept 1)");
    gp_trace_free(t);
    GP_ASSERT_OK(open_doc("{\"traceEvents\": []}", &t, &err)); /* empty, but a trace */
    gp_trace_warnings(t, &n);
    GP_ASSERT_EQ_INT(n, 0);
    gp_trace_free(t);
}

/* A debug build's error trail starts where the lexer found a parse error (json_lex_error's call in
 * trace_event.c), not where the reader turned it into a gp_error, then notes the forwards. */
static void test_parse_error_trail(void)
{
#ifndef NDEBUG /* a release build (NDEBUG) keeps no trail: nothing to check */
    static const char doc[] = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": true}]}";
    gp_trace *t = NULL;
    gp_error err;
    char trail[256];
    gp_error_trail(trail, sizeof trail); /* forget an earlier test's */
    GP_ASSERT_EQ_INT(gp_trace_open_mem(doc, sizeof(doc) - 1, "doc", NULL, &t, &err), GP_EPARSE);
    GP_ASSERT_STR_EQ(err.msg, "'ts' must be a number");
    gp_error_trail(trail, sizeof trail);
    GP_CHECK(strncmp(trail, "trace_event.c:", 14) == 0);
    GP_CHECK(strstr(trail, " < trace_read.c:") != NULL);
    if (strncmp(trail, "trace_event.c:", 14) != 0)
        fprintf(stderr, "trail: %s\n", trail);
#endif
}

int main(void)
{
    GP_RUN(test_parse_error_trail);
    GP_RUN(test_fixtures);
    GP_RUN(test_reader_fields);
    GP_RUN(test_analysis);
    GP_RUN(test_dma_kernels_are_memory);
    GP_RUN(test_step_sched_args);
    GP_RUN(test_gzip_messages);
    GP_RUN(test_no_error_struct);
    GP_RUN(test_memory_ceiling);
    GP_RUN(test_memory_ceiling_names);
    GP_RUN(test_not_a_trace);
    return gp_test_summary();
}
