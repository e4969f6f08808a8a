/* tests/export/export_test_util.h: shared helpers of the gp_export unit tests: the sample trace's
 * path, opening + analysing + diagnosing a trace (file or JSON text), and reading a whole
 * (possibly gzip) output file back. */
#ifndef GP_TESTS_EXPORT_TEST_UTIL_H
#define GP_TESTS_EXPORT_TEST_UTIL_H

#include "gp/export.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define SAMPLE_TRACE GP_TEST_DATA_DIR "/../export/data/starved_worker.1700000000000.pt.trace.json"

typedef struct loaded {
    gp_trace *t;
    gp_analysis *a;
    gp_findings *f;
} loaded;

/* Open (`json` NULL: the file `path`; else the text `json`), analyse and diagnose. */
static inline gp_status load_trace(const char *path, const char *json, loaded *l)
{
    gp_error err;
    memset(l, 0, sizeof *l);
    gp_status rc = json ? gp_trace_open_mem(json, strlen(json), "mem.json", NULL, &l->t, &err)
                        : gp_trace_open(path, NULL, &l->t, &err);
    if (rc == GP_OK)
        rc = gp_analysis_run(l->t, NULL, &l->a, &err);
    if (rc == GP_OK)
        rc = gp_rules_run(NULL, l->a, &l->f, &err);
    if (rc != GP_OK)
        fprintf(stderr, "load_trace: %s: %s\n", err.path, err.msg);
    return rc;
}

static inline void unload(loaded *l)
{
    gp_findings_free(l->f);
    gp_analysis_free(l->a);
    gp_trace_free(l->t);
}

typedef gp_status (*export_fn)(const gp_analysis *, const gp_export_opts *, const char *,
                               gp_error *);

/* Export the sample trace with `fn` to `path`; `err` gets the details. */
static inline gp_status export_sample(export_fn fn, const char *path, gp_error *err)
{
    loaded l;
    gp_status rc = load_trace(SAMPLE_TRACE, NULL, &l);
    if (rc == GP_OK)
        rc = fn(l.a, NULL, path, err);
    unload(&l);
    return rc;
}

/* Read a whole file (gzip or plain, zlib tells) into a NUL-terminated malloc'd string. */
static inline char *slurp_file(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int n;
    while (buf && (n = gzread(gz, buf + len, (unsigned)(cap - len - 1))) > 0) {
        len += (size_t)n;
        if (cap - len < 2) {
            char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    gzclose(gz);
    if (buf)
        buf[len] = 0;
    return buf;
}

static inline int count_str(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

#endif
