/* Unit tests for gp_export_perfetto(): the output re-read with our own trace reader keeps every
 * slice, nests them per track (the sample's overlapping kernel lands on an "(overlap 1)"
 * thread), carries the findings process with its GT01 thread, remaps ids Perfetto would merge
 * (pid -1, tid 0), writes gzip by suffix, and leaves no file behind on failure. */
#include "export_test_util.h"
#include "gp_test.h"

#include <stdio.h>
#include <unistd.h>

static char out_path[512];

/* Export `json` (NULL: the sample) to `path` and re-read it. */
static gp_trace *round_trip(const char *json, const char *path, size_t *n_in_x)
{
    loaded l;
    gp_error err;
    if (load_trace(SAMPLE_TRACE, json, &l) != GP_OK)
        return NULL;
    size_t ne;
    const gp_event *ev = gp_trace_events(l.t, &ne);
    *n_in_x = 0;
    for (size_t i = 0; i < ne; i++)
        *n_in_x += ev[i].ph == 'X';
    gp_export_opts eo = {.findings = l.f};
    gp_status rc = gp_export_perfetto(l.a, &eo, path, &err);
    unload(&l);
    gp_trace *t = NULL;
    if (rc != GP_OK || gp_trace_open(path, NULL, &t, &err) != GP_OK)
        return NULL;
    return t;
}

/* 1 if no two slices of one track partially overlap. */
static int nested(const gp_trace *t)
{
    size_t nt, ne;
    const gp_track *tr = gp_trace_tracks(t, &nt);
    const gp_event *ev = gp_trace_events(t, &ne);
    int64_t stack[512];
    for (size_t k = 0; k < nt; k++) {
        size_t depth = 0;
        for (uint32_t i = tr[k].first; i < tr[k].first + tr[k].count; i++) {
            if (ev[i].ph != 'X')
                continue;
            while (depth && stack[depth - 1] <= ev[i].ts)
                depth--;
            if ((depth && ev[i].ts + ev[i].dur > stack[depth - 1]) || depth == 512)
                return 0;
            stack[depth++] = ev[i].ts + ev[i].dur;
        }
    }
    return 1;
}

static const gp_track *track_named(const gp_trace *t, const char *prefix, int proc)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(t, &nt);
    for (size_t k = 0; k < nt; k++)
        if (!strncmp(gp_trace_str(t, proc ? tr[k].proc_name : tr[k].name), prefix, strlen(prefix)))
            return &tr[k];
    return NULL;
}

static void test_sample_round_trip(void)
{
    size_t n_in = 0, ne;
    gp_trace *t = round_trip(NULL, out_path, &n_in);
    GP_CHECK(t != NULL);
    const gp_event *ev = gp_trace_events(t, &ne);
    const gp_track *gt01 = track_named(t, "GT01 data-loader starvation", 0);
    GP_CHECK(gt01 != NULL);
    GP_CHECK(gt01->count >= 1);
    GP_ASSERT_STR_EQ(gp_trace_str(t, gt01->proc_name), "gprof-train findings");
    size_t n_out = 0, n_findings = 0, nt;
    const gp_track *tr = gp_trace_tracks(t, &nt);
    for (size_t i = 0; i < ne; i++) {
        n_out += ev[i].ph == 'X';
        n_findings += ev[i].ph == 'X' && tr[ev[i].track].proc_name == gt01->proc_name;
    }
    GP_ASSERT_EQ_INT(n_out - n_findings, n_in);
    GP_CHECK(nested(t));
    GP_CHECK(track_named(t, "stream 7  (overlap 1)", 0) != NULL);
    GP_CHECK(gp_trace_get_info(t)->n_flows > 0);
    GP_CHECK(gp_trace_get_info(t)->n_counters > 0); /* [memory] became counters */
    gp_trace_free(t);
    unlink(out_path);
}

static void test_ids_perfetto_would_merge(void)
{
    static const char json[] = "{\"traceEvents\":["
                               "{\"ph\":\"X\",\"cat\":\"overhead\",\"name\":\"a\",\"pid\":-1,"
                               "\"tid\":0,\"ts\":0,\"dur\":5},"
                               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":"
                               "7,\"ts\":0,\"dur\":5,"
                               "\"args\":{\"device\":0,\"stream\":7}},"
                               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":9,\"tid\":"
                               "0,\"ts\":1,\"dur\":2}]}";
    size_t n_in = 0, nt;
    gp_trace *t = round_trip(json, out_path, &n_in);
    GP_CHECK(t != NULL);
    const gp_track *tr = gp_trace_tracks(t, &nt);
    for (size_t k = 0; k < nt; k++) {
        GP_CHECK(tr[k].pid >= 0);
        GP_CHECK(!(tr[k].tid == 0 && tr[k].pid != 0));
    }
    GP_ASSERT_EQ_INT(gp_trace_get_info(t)->n_events, 3);
    gp_trace_free(t);
    unlink(out_path);
}

/* Crafted numbers stay defined (UBSan, issue 18 item 7): a GPU on device 2147483647 exports (its
 * sort index is computed in 64 bits), and a baseTimeNanoseconds whose sum with the first event's
 * time passes 64 bits is an error naming the trace, with nothing written. */
static void test_huge_numbers(void)
{
    static const char gpu[] = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
                              "\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":5,"
                              "\"args\":{\"device\":2147483647,\"stream\":7}}]}";
    size_t n_in = 0;
    gp_trace *t = round_trip(gpu, out_path, &n_in);
    GP_CHECK(t != NULL);
    gp_trace_free(t);
    unlink(out_path);
    static const char base[] = "{\"baseTimeNanoseconds\":9223372036854775807,\"traceEvents\":["
                               "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,"
                               "\"tid\":1,\"ts\":10,\"dur\":5}]}";
    loaded l;
    gp_error err;
    GP_ASSERT_OK(load_trace(SAMPLE_TRACE, base, &l));
    GP_ASSERT_EQ_INT(gp_export_perfetto(l.a, NULL, out_path, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "beyond 64 bits");
    GP_CHECK(access(out_path, F_OK) != 0);
    unload(&l);
}

static void test_gzip_and_failure(void)
{
    char gz[600];
    snprintf(gz, sizeof gz, "%s.gz", out_path);
    size_t n_in = 0;
    gp_trace *t = round_trip(NULL, gz, &n_in);
    GP_CHECK(t != NULL);
    GP_CHECK(gp_trace_get_info(t)->gzip);
    gp_trace_free(t);
    unlink(gz);
    gp_error err;
    GP_ASSERT_EQ_INT(export_sample(gp_export_perfetto, "/nonexistent-gp-dir/p.json", &err), GP_EIO);
    GP_CHECK(access("/nonexistent-gp-dir", F_OK) != 0);
}

int main(void)
{
    snprintf(out_path, sizeof out_path, "%s/test_export_perfetto_%d.json", GP_BUILD_DIR,
             (int)getpid());
    GP_RUN(test_sample_round_trip);
    GP_RUN(test_ids_perfetto_would_merge);
    GP_RUN(test_gzip_and_failure);
    GP_RUN(test_huge_numbers);
    return gp_test_summary();
}
