/* Times the two Perfetto exporters on one analysed trace: the Chrome JSON writer
 * (gp_export_perfetto) and the native protobuf writer (gp_export_perfetto_proto), each run
 * `runs` times alternately (median counts) on the same analysis and findings, so reading,
 * analysis and diagnosis are left out. Prints each one's median time, throughput and output
 * size, and their ratios. usage: bench_export TRACE OUT_DIR [RUNS] */
#include "gp/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef gp_status (*exporter)(const gp_analysis *, const gp_export_opts *, const char *,
                              gp_error *);

static int run_once(exporter fn, const gp_analysis *a, const gp_export_opts *o, const char *out,
                    double *secs)
{
    gp_error err;
    double t0 = now();
    gp_status rc = fn(a, o, out, &err);
    *secs = now() - t0;
    if (rc != GP_OK)
        fprintf(stderr, "bench_export: %s: %s\n", out, err.msg);
    return rc == GP_OK;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_export TRACE OUT_DIR [RUNS]\n");
        return 2;
    }
    int runs = argc > 3 ? atoi(argv[3]) : 5;
    runs = runs < 1 ? 1 : runs > 64 ? 64 : runs;
    gp_error err;
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    gp_findings *f = NULL;
    if (gp_trace_open(argv[1], NULL, &t, &err) != GP_OK || gp_analysis_run(t, NULL, &a, &err) ||
        gp_rules_run(NULL, a, &f, &err)) {
        fprintf(stderr, "bench_export: %s: %s\n", argv[1], err.msg);
        return 1;
    }
    char out[2][4096];
    snprintf(out[0], sizeof out[0], "%s/bench.json", argv[2]);
    snprintf(out[1], sizeof out[1], "%s/bench.pftrace", argv[2]);
    const exporter fns[2] = {gp_export_perfetto, gp_export_perfetto_proto};
    gp_export_opts o = {.findings = f};
    double secs[2][64];
    int ok = 1;
    for (int r = 0; r < runs && ok; r++)
        for (int k = 0; k < 2 && ok; k++)
            ok = run_once(fns[k], a, &o, out[k], &secs[k][r]);
    double med[2];
    long long size[2];
    for (int k = 0; ok && k < 2; k++) {
        qsort(secs[k], (size_t)runs, sizeof(double), cmp_double);
        med[k] = secs[k][runs / 2];
        size[k] = file_size(out[k]);
        printf("%-6s %8.3f s  %7.1f MB/s written  %10lld bytes\n", k ? "proto" : "json", med[k],
               (double)size[k] / 1048576.0 / med[k], size[k]);
    }
    if (ok)
        printf("proto/json: time %.2fx  size %.2fx (median of %d runs each)\n", med[1] / med[0],
               (double)size[1] / (double)size[0], runs);
    gp_findings_free(f);
    gp_analysis_free(a);
    gp_trace_free(t);
    return ok ? 0 : 1;
}
