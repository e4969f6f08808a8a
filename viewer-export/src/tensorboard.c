/* viewer-export/src/tensorboard.c: gp_export_tensorboard(): a run directory that
 * torch-tb-profiler 0.4.3 loads (ref/trace_formats.md §3):
 * LOGDIR/RUN/<worker>.<ms>.pt.trace.json.gz with schemaVersion, deviceProperties, distributedInfo
 * and traceEvents LAST; runtime calls as cat "Runtime" (0.4.3 ignores cuda_runtime), ProfilerStep#N
 * on the CPU thread only. */
#include "export_int.h"
#include "gp/export.h"
#include "gp/trace_schema.h"

#include "gp/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The worker name: the trace's file name without ".<digits>.pt.trace.json[.gz]" (or ".json",
 * ".gz"), restricted to [A-Za-z0-9_-]; "worker0" if nothing is left. */
static void worker_name(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path ? path : "", '/');
    b = b ? b + 1 : path ? path : "";
    size_t n = strlen(b);
    static const char *const suffixes[] = {".gz", ".json", ".trace", ".pt"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t m = strlen(suffixes[i]);
        if (n > m && strncmp(b + n - m, suffixes[i], m) == 0)
            n -= m;
    }
    size_t d = n;
    while (d > 0 && b[d - 1] >= '0' && b[d - 1] <= '9')
        d--;
    if (d > 0 && d < n && b[d - 1] == '.') /* the ".<span>" tensorboard_trace_handler adds */
        n = d - 1;
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        char c = b[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-';
        out[k++] = ok ? c : '_';
    }
    out[k] = 0;
    if (k == 0)
        snprintf(out, cap, "worker0");
}

static void device_props(export_out *o, const gp_trace *t)
{
    size_t n;
    const gp_device_props *d = gp_trace_devices(t, &n);
    export_out_puts(o, "\"" GP_KEY_DEVICE_PROPERTIES "\":[");
    for (size_t i = 0; i < n; i++) {
        export_out_printf(o, "%s{\"id\":%d,\"name\":", i ? "," : "", d[i].id);
        export_out_json_str(o, gp_trace_str(t, d[i].name));
        export_out_printf(o,
                          ",\"totalGlobalMem\":%lld,\"computeMajor\":%d,\"computeMinor\":%d,"
                          "\"maxThreadsPerBlock\":%d,\"maxThreadsPerMultiprocessor\":%d,"
                          "\"regsPerBlock\":%d,\"warpSize\":%d,\"sharedMemPerBlock\":%lld,"
                          "\"numSms\":%d}",
                          (long long)d[i].total_global_mem, d[i].compute_major, d[i].compute_minor,
                          d[i].max_threads_per_block, d[i].max_threads_per_sm, d[i].regs_per_block,
                          d[i].warp_size, (long long)d[i].shared_mem_per_block, d[i].num_sms);
    }
    export_out_puts(o, "],\n");
}

static gp_status write_run_file(const gp_analysis *a, const gp_export_opts *opts, const char *path,
                                gp_error *err)
{
    const gp_trace *t = gp_analysis_trace(a);
    const gp_trace_info *info = gp_trace_get_info(t);
    export_ev_opts eo = {
            .mode = EXPORT_EV_TB, .old_runtime_cat = 1, .t0 = info->n_events ? info->ts_min : 0};
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    export_out_puts(&o, "{\"" GP_KEY_SCHEMA_VERSION "\":1,\n");
    device_props(&o, t);
    export_out_printf(&o, "\"" GP_KEY_DISTRIBUTED_INFO "\":{\"rank\": %d,\"world_size\": %d},\n",
                      info->rank >= 0 ? info->rank : 0,
                      info->world_size > 0 ? info->world_size : 1);
    export_out_printf(&o,
                      "\"" GP_KEY_DISPLAY_TIME_UNIT "\":\"ms\",\"" GP_KEY_BASE_TIME_NS
                      "\":%lld,\n\"" GP_KEY_TRACE_EVENTS "\":[",
                      (long long)(info->base_time_ns + eo.t0));
    int first = 1;
    gp_status rc = export_write_events(&o, a, &eo, &first, err);
    if (rc != GP_OK) {
        export_out_abort(&o);
        return rc;
    }
    export_out_puts(&o,
                    "\n]}\n"); /* traceEvents last: 0.4.3 splices counters before the last ']' */
    return export_out_close(&o, err);
}

gp_status gp_export_tensorboard(const gp_analysis *a, const gp_export_opts *opts,
                                const char *logdir, const char *run, char *out_path, size_t out_cap,
                                gp_error *err)
{
    static const gp_export_opts none = {0};
    opts = opts ? opts : &none;
    run = run ? run : "gprof";
    GP_FAIL_IF(!*run || strchr(run, '/') || !strcmp(run, ".") || !strcmp(run, ".."), GP_EINVAL, err,
               "invalid run name '%s': one directory name expected", run);
    const gp_trace_info *info = gp_trace_get_info(gp_analysis_trace(a));
    char dir[4096], worker[128], path[4400];
    int n = snprintf(dir, sizeof dir, "%s/%s", logdir, run);
    GP_FAIL_IF(n < 0 || (size_t)n >= sizeof dir, GP_EINVAL, err, "log directory path too long");
    GP_TRY(gp_mkdir_p(dir, err));
    worker_name(info->path, worker, sizeof worker);
    /* the span part of the name: the trace's start in unix ms, so re-exports replace the file */
    long long start;
    GP_FAIL_IF(__builtin_add_overflow(info->base_time_ns, info->ts_min, &start), GP_EPARSE, err,
               "'%s': baseTimeNanoseconds %lld plus the first event's time (%lld ns) is beyond "
               "64 bits",
               info->path, (long long)info->base_time_ns, (long long)info->ts_min);
    long long ms = start / 1000000;
    snprintf(path, sizeof path, "%s/%s.%lld" GP_TRACE_SUFFIX_GZ, dir, worker, ms < 0 ? 0 : ms);
    GP_TRY(write_run_file(a, opts, path, err));
    if (out_path && out_cap)
        snprintf(out_path, out_cap, "%s", path);
    return GP_OK;
}
