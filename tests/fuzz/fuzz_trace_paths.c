/* libFuzzer target for every way a trace is read and everything that reads it (issue 18 items 8
 * and 10). The first byte picks the path, the rest is the trace:
 *   0  in memory, then analysis, the rules and the three exporters (to /dev/null and a folder);
 *   1  a plain file, mapped;  2  the same file streamed (flag GP_TRACE_NO_MMAP);
 *   3  gzip-compressed, as a file (streamed through zlib) and in memory (inflated whole);
 *   4  one input, one answer: the in-memory, mapped, streamed and split (in memory, parts on
 *      three threads) readers must agree on the status, the message and the number of events,
 *      else abort() (a finding for the fuzzer).
 * Files go to a private temporary folder, removed at exit. */
#include "gp/export.h"
#include "gp/report.h"
#include "gp/rules.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], plain[96], gz[96], tb[96];

static void cleanup(void)
{
    unlink(plain);
    unlink(gz);
    if (dir[0] && fork() == 0) /* the TensorBoard folder's files: no recursive remove in libc */
        execlp("rm", "rm", "-rf", dir, (char *)NULL), _exit(127);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "/tmp/gp_fuzz_paths.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(plain, sizeof plain, "%s/t.json", dir);
    snprintf(gz, sizeof gz, "%s/t.json.gz", dir);
    snprintf(tb, sizeof tb, "%s/tb", dir);
    atexit(cleanup);
    return 0;
}

static const gp_trace_opts opts = {.max_value_bytes = 1u << 20};

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(p, 1, n, f);
    fclose(f);
}

/* The body gzip-compressed (malloc'ed, *out_n bytes), or NULL. */
static uint8_t *gzip_of(const uint8_t *p, size_t n, size_t *out_n)
{
    z_stream z = {0};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)n) + 32;
    uint8_t *out = malloc(cap);
    z.next_in = (uint8_t *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int ok = out && deflate(&z, Z_FINISH) == Z_STREAM_END;
    *out_n = cap - z.avail_out;
    deflateEnd(&z);
    if (!ok)
        free(out), out = NULL;
    return out;
}

/* Analyse, diagnose, report and export a loaded trace: nothing may crash. */
static void use(gp_trace *t)
{
    gp_analysis *a = NULL;
    gp_findings *fs = NULL;
    gp_error err;
    if (gp_analysis_run(t, NULL, &a, &err) == GP_OK) {
        FILE *null = fopen("/dev/null", "w");
        gp_report_opts ro = {.format = GP_REPORT_TABLE,
                             .sort = GP_SORT_CUDA_TIME_TOTAL,
                             .group_by = GP_GROUP_NAME_SHAPE,
                             .title = "f"};
        if (null)
            gp_report_write(null, a, &ro, &err);
        gp_rules_run(NULL, a, &fs, &err);
        const gp_findings *const all[1] = {fs};
        if (fs && null) {
            gp_findings_write(null, all, 1, GP_FINDINGS_TEXT, &err);
            gp_findings_write(null, all, 1, GP_FINDINGS_JSON, &err);
        }
        gp_export_opts eo = {.findings = fs, .stream = null};
        gp_export_perfetto(a, &eo, "fuzz.json", &err);
        gp_export_html(a, &eo, "fuzz.html", &err);
        gp_export_opts to_dir = {.findings = fs};
        gp_export_tensorboard(a, &to_dir, tb, "run", NULL, 0, &err);
        if (null)
            fclose(null);
    }
    gp_findings_free(fs);
    gp_analysis_free(a);
}

struct outcome {
    gp_status rc;
    char msg[256];
    size_t events;
};

static void open_path(struct outcome *o, int how, const uint8_t *p, size_t n)
{
    gp_trace *t = NULL;
    gp_error err;
    gp_trace_opts o2 = opts;
    if (how == 2)
        o2.flags |= GP_TRACE_NO_MMAP;
    if (how == 3) { /* in memory, cut into parts parsed on three threads, as big files are */
        o2.flags |= GP_TRACE_SPLIT_ANY;
        o2.threads = 3;
    }
    o->rc = how == 0 || how == 3 ? gp_trace_open_mem(p, n, plain, &o2, &t, &err)
                                 : gp_trace_open(plain, &o2, &t, &err);
    snprintf(o->msg, sizeof o->msg, "%s", o->rc == GP_OK ? "" : err.msg);
    o->events = t ? gp_trace_get_info(t)->n_events : 0;
    gp_trace_free(t);
}

static void agree(const uint8_t *p, size_t n)
{
    struct outcome o[4];
    write_file(plain, p, n);
    for (int how = 0; how < 4; how++)
        open_path(&o[how], how, p, n);
    for (int i = 1; i < 4; i++)
        if (o[i].rc != o[0].rc || strcmp(o[i].msg, o[0].msg) || o[i].events != o[0].events) {
            fprintf(stderr, "path %d: %d '%s' %zu events; in memory: %d '%s' %zu events\n", i,
                    o[i].rc, o[i].msg, o[i].events, o[0].rc, o[0].msg, o[0].events);
            abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] % 5;
    const uint8_t *p = data + 1;
    size_t n = size - 1, zn = 0;
    gp_trace *t = NULL;
    gp_error err;
    if (mode == 4) {
        agree(p, n);
        return 0;
    }
    if (mode == 0 && gp_trace_open_mem(p, n, "fuzz.json", &opts, &t, &err) == GP_OK)
        use(t);
    if (mode == 1 || mode == 2) {
        write_file(plain, p, n);
        gp_trace_opts o2 = opts;
        if (mode == 2)
            o2.flags |= GP_TRACE_NO_MMAP;
        if (gp_trace_open(plain, &o2, &t, &err) == GP_OK)
            use(t);
    }
    uint8_t *z = mode == 3 ? gzip_of(p, n, &zn) : NULL;
    if (z) {
        write_file(gz, z, zn);
        if (gp_trace_open(gz, &opts, &t, &err) == GP_OK)
            gp_trace_free(t), t = NULL;
        if (gp_trace_open_mem(z, zn, "fuzz.json.gz", &opts, &t, &err) == GP_OK)
            use(t);
        free(z);
    }
    gp_trace_free(t);
    return 0;
}
