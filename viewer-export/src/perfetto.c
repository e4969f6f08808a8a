/* viewer-export/src/perfetto.c: gp_export_perfetto(): Chrome JSON for ui.perfetto.dev. The
 * trace's events (export_events.c) plus a "gprof-train findings" process sorted first, one
 * thread per finding whose slices cover the time ranges it cites, so "GT01 data-loader
 * starvation" sits above the idle gaps it explains. Timestamps are relative to the trace start. */
#include "export_int.h"
#include "gp/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINDINGS_PID (EXPORT_SYNTH_ID_BASE + 1)

static int cmp_range(const void *pa, const void *pb)
{
    const gp_time_range *a = pa, *b = pb;
    return a->ts < b->ts ? -1 : a->ts > b->ts ? 1 : 0;
}

/* Sort and merge overlapping ranges so a finding's slices never overlap. @return count. */
static size_t merge_ranges(gp_time_range *r, size_t n)
{
    qsort(r, n, sizeof *r, cmp_range);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].end < r[i].ts)
            continue;
        if (k && r[i].ts < r[k - 1].end) {
            if (r[i].end > r[k - 1].end)
                r[k - 1].end = r[i].end;
            r[k - 1].label = NULL; /* several ranges now: no single label applies */
            continue;
        }
        r[k++] = r[i];
    }
    return k;
}

gp_time_range *export_finding_ranges(const gp_finding *f, size_t *n)
{
    gp_time_range *r = malloc((f->n_ranges + 1) * sizeof *r);
    if (!r)
        return NULL;
    if (f->n_ranges)
        memcpy(r, f->ranges, f->n_ranges * sizeof *r);
    *n = merge_ranges(r, f->n_ranges);
    return r;
}

static void meta(export_out *o, const char *what, long long tid, const char *name, long long sort)
{
    export_out_printf(o,
                      ",\n{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%lld,\"tid\":%lld,"
                      "\"args\":{",
                      what, (long long)FINDINGS_PID, tid);
    if (name) {
        export_out_puts(o, "\"name\":");
        export_out_json_str(o, name);
    } else {
        export_out_printf(o, "\"sort_index\":%lld", sort);
    }
    export_out_puts(o, "}}");
}

static void str_arg(export_out *o, const char *key, const char *v)
{
    if (!v)
        return;
    export_out_printf(o, ",\"%s\":", key);
    export_out_json_str(o, v);
}

static void finding_slice(export_out *o, const gp_finding *f, const char *label, long long tid,
                          const gp_time_range *r, int64_t t0)
{
    export_out_puts(o, ",\n{\"ph\":\"X\",\"cat\":\"gprof_finding\",\"name\":");
    export_out_json_str(o, label);
    export_out_printf(o, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", (long long)FINDINGS_PID, tid);
    export_out_us(o, r->ts - t0);
    export_out_puts(o, ",\"dur\":");
    export_out_us(o, r->end - r->ts);
    export_out_printf(o, ",\"args\":{\"severity\":\"%s\"", gp_severity_name(f->severity));
    str_arg(o, "range", r->label);
    str_arg(o, "summary", f->summary);
    str_arg(o, "recommendation", f->recommendation);
    str_arg(o, "knob", f->knob);
    str_arg(o, "estimated gain", f->gain_text);
    export_out_puts(o, "}}");
}

static gp_status one_finding_thread(export_out *o, const gp_finding *f, long long tid, int64_t t0)
{
    char label[256];
    snprintf(label, sizeof label, "%s %s", f->rule->id, f->rule->title);
    meta(o, "thread_name", tid, label, 0);
    meta(o, "thread_sort_index", tid, NULL, tid);
    size_t n;
    gp_time_range *r = export_finding_ranges(f, &n);
    if (!r)
        return GP_ENOMEM;
    for (size_t k = 0; k < n; k++)
        finding_slice(o, f, label, tid, &r[k], t0);
    free(r);
    return GP_OK;
}

/* The findings process: sorted above every other, one thread per fired finding. */
static gp_status findings_track(export_out *o, const gp_findings *fs, int64_t t0)
{
    size_t n = 0;
    const gp_finding *f = fs ? gp_findings_get(fs, &n) : NULL;
    long long tid = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i].severity == GP_SEV_OK)
            continue;
        if (tid == 0) {
            meta(o, "process_name", 0, "gprof-train findings", 0);
            meta(o, "process_sort_index", 0, NULL, -1);
        }
        GP_TRY(one_finding_thread(o, &f[i], ++tid, t0));
    }
    return GP_OK;
}

gp_status gp_export_perfetto(const gp_analysis *a, const gp_export_opts *opts, const char *path,
                             gp_error *err)
{
    static const gp_export_opts none = {0};
    opts = opts ? opts : &none;
    const gp_trace_info *info = gp_trace_get_info(gp_analysis_trace(a));
    export_ev_opts eo = {.mode = EXPORT_EV_PERFETTO, .t0 = info->n_events ? info->ts_min : 0};
    long long base;
    if (__builtin_add_overflow(info->base_time_ns, eo.t0, &base))
        return gp_error_set(err, GP_EPARSE, info->path,
                            "baseTimeNanoseconds %lld plus the first event's time (%lld ns) is "
                            "beyond 64 bits",
                            (long long)info->base_time_ns, (long long)eo.t0);
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    export_out_printf(&o,
                      "{\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":%lld,"
                      "\"traceEvents\":[",
                      base);
    int first = 1;
    gp_status rc = export_write_events(&o, a, &eo, &first, err);
    if (rc == GP_OK && first) /* findings_track writes ",\n{...}" */
        export_out_puts(&o,
                        "\n{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,"
                        "\"args\":{\"name\":\"(empty trace)\"}}");
    if (rc == GP_OK && (rc = findings_track(&o, opts->findings, eo.t0)) != GP_OK)
        gp_error_set(err, rc, path, "out of memory");
    if (rc != GP_OK) {
        export_out_abort(&o);
        return rc;
    }
    export_out_puts(&o, "\n]}\n");
    return export_out_close(&o, err);
}
