/* `gprof-train report` output: the summary lines and PyTorch's key-averages table (the layout of
 * torch.autograd.profiler_util._build_table: 12-wide columns, 2-space gaps, names cut at 55,
 * "Self CPU time total" footers), plus CSV and JSON forms of the same rows. */
#include "gp/json_str.h"
#include "gp/text.h"
#include "gp/report.h"
#include "gp/run_config.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define COL_W        12
#define MAX_NAME_W   55
#define MAX_SHAPES_W 80

/* Microseconds as PyTorch's _format_time prints them (rounded to 3 decimals). */
static char *fmt_us(char *buf, size_t cap, double us)
{
    if (us >= 1e6)
        snprintf(buf, cap, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(buf, cap, "%.3fms", us / 1e3);
    else
        snprintf(buf, cap, "%.3fus", us);
    return buf;
}

char *gp_report_fmt_time(char *buf, size_t cap, int64_t ns)
{
    return fmt_us(buf, cap, (double)ns / 1000.0);
}

/* A time per call as PyTorch's "CPU time avg": the total divided in floating point, then rounded
 * (an integer division of the nanoseconds printed 18.737us where PyTorch prints 18.738us). */
static char *fmt_avg(char *buf, size_t cap, int64_t total_ns, uint64_t count)
{
    return fmt_us(buf, cap, (double)total_ns / 1000.0 / (double)(count ? count : 1));
}

static char *fmt_share(char *buf, size_t cap, int64_t part, int64_t total)
{
    if (total == 0)
        snprintf(buf, cap, "NaN");
    else
        snprintf(buf, cap, "%.2f%%", (double)part * 100.0 / (double)total);
    return buf;
}

gp_status gp_report_format_parse(const char *s, gp_report_format *out, gp_error *err)
{
    static const char *const names[] = {"table", "csv", "json", "ndjson"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (gp_report_format)i;
            return GP_OK;
        }
    return gp_error_set(err, GP_EINVAL, NULL, "unknown format '%s' (table, csv, json or ndjson)",
                        s);
}

gp_status gp_group_by_parse(const char *s, gp_group_by *out, gp_error *err)
{
    if (strcmp(s, "name") == 0 || strcmp(s, "name+shape") == 0) {
        *out = s[4] ? GP_GROUP_NAME_SHAPE : GP_GROUP_NAME;
        return GP_OK;
    }
    return gp_error_set(err, GP_EINVAL, NULL, "unknown grouping '%s' (name or name+shape)", s);
}

/* ---- summary ---- */

static void summary_steps(FILE *out, const gp_analysis *a)
{
    char t1[32], t2[32], t3[32];
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    const gp_step_stats *st = gp_analysis_step_stats(a);
    if (n == 0) {
        fprintf(out, "steps: none (no events)\n");
        return;
    }
    if (s[0].synthetic)
        fprintf(out, "steps: no ProfilerStep#N; one step spans the trace\n");
    else if (s[0].inferred == GP_STEPS_FROM_OPTIMIZER)
        fprintf(out, "steps: %zu (no ProfilerStep#N; each ends where an optimizer step ends)\n", n);
    else if (s[0].inferred == GP_STEPS_FROM_LAUNCHES)
        fprintf(out,
                "steps: %zu (no ProfilerStep#N; the host's launches repeat every %zu: one "
                "iteration each)\n",
                n, s[0].period);
    else
        fprintf(out, "steps: %zu (ProfilerStep#%" PRId64 "..#%" PRId64 ")\n", n, s[0].num,
                s[n - 1].num);
    fprintf(out, "step time: mean %s, p50 %s, p95 %s\n",
            gp_report_fmt_time(t1, sizeof(t1), st->mean),
            gp_report_fmt_time(t2, sizeof(t2), st->p50),
            gp_report_fmt_time(t3, sizeof(t3), st->p95));
    int64_t total = 0;
    for (int c = 0; c < GP_BD_COUNT; c++)
        total += st->bd_mean[c];
    fprintf(out, "step breakdown (mean per step):");
    for (int c = 0; c < GP_BD_COUNT; c++)
        fprintf(out, "%s %s %s (%s)", c ? "," : "", gp_bd_cat_name((gp_bd_cat)c),
                gp_report_fmt_time(t1, sizeof(t1), st->bd_mean[c]),
                fmt_share(t2, sizeof(t2), st->bd_mean[c], total));
    fputc('\n', out);
}

/* "idle 1.2ms: host wait 50.00%, kernel wait 10.00%, other 40.00%", or "idle 0.000us". */
static void idle_split(FILE *out, const int64_t *idle_ns, int64_t idle)
{
    char t[4][32];
    fprintf(out, "idle %s", gp_report_fmt_time(t[0], 32, idle));
    if (idle > 0)
        fprintf(out, ": host wait %s, kernel wait %s, other %s",
                fmt_share(t[1], 32, idle_ns[GP_IDLE_HOST_WAIT], idle),
                fmt_share(t[2], 32, idle_ns[GP_IDLE_KERNEL_WAIT], idle),
                fmt_share(t[3], 32, idle_ns[GP_IDLE_OTHER], idle));
}

/* Each stream of a device, HTA's per-stream idle split (gaps between its own activities). */
static void summary_streams(FILE *out, const gp_analysis *a, int device)
{
    char t[32];
    size_t n;
    const gp_stream_stats *s = gp_analysis_streams(a, &n);
    for (size_t i = 0; i < n; i++) {
        if (s[i].device != device)
            continue;
        int64_t idle = 0;
        for (int k = 0; k < GP_IDLE_COUNT; k++)
            idle += s[i].idle_ns[k];
        fprintf(out, "  stream %" PRId64 ": busy %s, ", s[i].stream,
                gp_report_fmt_time(t, sizeof(t), s[i].busy_ns));
        idle_split(out, s[i].idle_ns, idle);
        fputc('\n', out);
    }
}

static void summary_gpu(FILE *out, const gp_analysis *a)
{
    char t[6][32];
    size_t n;
    const gp_device_stats *d = gp_analysis_devices(a, &n);
    if (n == 0)
        fprintf(out, "GPU: no GPU activity in the trace\n");
    for (size_t i = 0; i < n; i++) {
        int64_t span = d[i].span_end - d[i].span_ts, idle = span - d[i].busy_ns;
        fprintf(out, "GPU %d: busy %s of %s span (kernels %s); ", d[i].device,
                fmt_share(t[0], 32, d[i].busy_ns, span), gp_report_fmt_time(t[1], 32, span),
                fmt_share(t[2], 32, d[i].kernel_busy_ns, span));
        idle_split(out, d[i].idle_ns, idle);
        fprintf(out, "\n  compute %s, communication %s, memory %s (HTA's temporal breakdown)\n",
                gp_report_fmt_time(t[3], 32, d[i].compute_ns),
                gp_report_fmt_time(t[4], 32, d[i].comm_ns),
                gp_report_fmt_time(t[5], 32, d[i].memory_ns));
        summary_streams(out, a, d[i].device);
    }
}

/* Peak memory per allocator series: the GPU's with its reserved bytes, then CPU (profile_memory
 * records the CPU allocator too) and any other device type. */
static void summary_memory(FILE *out, const gp_analysis *a)
{
    size_t n;
    const gp_mem_series *m = gp_analysis_memory(a, &n);
    for (size_t i = 0; i < n; i++) {
        double alloc = (double)m[i].peak_allocated / 1048576.0;
        if (m[i].device_type == 1)
            fprintf(out, "peak memory: GPU %d allocated %.1f MiB, reserved %.1f MiB\n",
                    m[i].device_id, alloc, (double)m[i].peak_reserved / 1048576.0);
        else if (m[i].device_type == 0)
            fprintf(out, "peak memory: CPU allocated %.1f MiB\n", alloc);
        else
            fprintf(out, "peak memory: device type %d:%d allocated %.1f MiB\n", m[i].device_type,
                    m[i].device_id, alloc);
    }
    if (n == 0)
        fprintf(out, "peak memory: no [memory] records (profile_memory off)\n");
}

/* The trainer's CPU backend: the elementwise passes a step that --fused saves, with the knobs
 * that change them (a trace without the count prints nothing). */
static void summary_passes(FILE *out, const gp_run_config *rc)
{
    if (!rc->elementwise_passes.known)
        return;
    fprintf(out,
            "elementwise passes: %" PRId64 " per optimizer step (fused %s, channels-last %s)\n",
            rc->elementwise_passes.v, rc->fused == GP_CFG_ON ? "on" : "off",
            rc->channels_last == GP_CFG_ON ? "on" : "off");
}

/* libprof's capture-health ledger, when the trace has one: what was recorded and lost, how far
 * the writer fell behind, what profiling cost. */
static void summary_health(FILE *out, const gp_analysis *a)
{
    gp_run_config rc;
    gp_run_config_read(gp_analysis_trace(a), &rc);
    summary_passes(out, &rc);
    const gp_capture_health *h = &rc.health;
    if (!h->known)
        return;
    char t[3][32];
    fprintf(out,
            "capture health: CPU %" PRId64 " ranges, %" PRId64 " marks, counters and start/end "
            "ranges, %" PRId64 " dropped; GPU %" PRId64 " records, %" PRId64 " dropped, %" PRId64
            " untimed, %" PRId64 " with impossible times; writer at most %s behind, %s CPU; "
            "profiler %s in the program's threads\n",
            h->cpu_ranges, h->cpu_marks + h->cpu_counters + h->cpu_async, h->cpu_dropped,
            h->gpu_records, h->gpu_dropped, h->gpu_no_timestamp,
            h->gpu_end_before_start + h->gpu_start_before_launch,
            gp_report_fmt_time(t[0], 32, h->writer_max_behind_ns),
            gp_report_fmt_time(t[1], 32, h->writer_cpu_ns),
            gp_report_fmt_time(t[2], 32, h->profiler_cost_ns));
}

gp_status gp_report_write_summary(FILE *out, const gp_analysis *a, gp_error *err)
{
    summary_steps(out, a);
    summary_gpu(out, a);
    summary_memory(out, a);
    summary_health(out, a);
    return ferror(out) ? gp_error_set(err, GP_EIO, NULL, "cannot write the report") : GP_OK;
}

/* ---- the table ---- */

typedef struct table_fmt {
    int name_w, shapes_w, has_dev, shapes, has_mem, has_dev_mem;
    int64_t cpu_total, dev_total;
    int flops_unit;     /* the FLOPs column's unit (0 FLOPs .. 5 PFLOPs), -1 for no column */
    double flops_scale; /* its cells are flops * flops_scale */
} table_fmt;

static const char *const flops_units[] = {"FLOPs",  "KFLOPs", "MFLOPs",
                                          "GFLOPs", "TFLOPs", "PFLOPs"};

/* PyTorch's FLOPs column: with with_flops, when some row has FLOPs, in the unit of the smallest
 * (auto_scale_flops: 1000s by floor(log10 / 3), at most PFLOPs) over every row, printed or not. */
static void flops_column(table_fmt *f, const gp_keyavg *k)
{
    uint64_t min = 0;
    f->flops_unit = -1;
    for (size_t i = 0; k->has_flops && i < k->n_rows; i++)
        if (k->rows[i].flops && (!min || k->rows[i].flops < min))
            min = k->rows[i].flops;
    if (!min)
        return;
    double lg = log10((double)min) / 3.0;
    lg = lg > 5.0 ? 5.0 : lg < 0.0 ? 0.0 : lg;
    f->flops_unit = (int)lg;
    f->flops_scale = pow(10.0, floor(lg) * -3.0);
}

/* Bytes as PyTorch's _format_memory prints them: "512 B", "1.50 KB", "-2.00 MB". */
static char *fmt_mem(char *buf, size_t cap, int64_t bytes)
{
    static const char *const units[] = {"GB", "MB", "KB"};
    int64_t mag = bytes < 0 ? -bytes : bytes;
    for (int u = 0; u < 3; u++) {
        double scale = (double)(1ll << (10 * (3 - u)));
        if ((double)mag >= scale) {
            snprintf(buf, cap, "%.2f %s", (double)bytes / scale, units[u]);
            return buf;
        }
    }
    snprintf(buf, cap, "%" PRId64 " B", bytes);
    return buf;
}

static void put_cell(FILE *out, const char *s, int w, int left)
{
    fprintf(out, left ? "%-*s  " : "%*s  ", w, s);
}

static void sep_line(FILE *out, const table_fmt *f, int ncols)
{
    char dashes[256];
    memset(dashes, '-', sizeof(dashes) - 1);
    dashes[sizeof(dashes) - 1] = 0;
    fprintf(out, "%.*s  ", f->name_w, dashes);
    for (int i = 0; i < ncols; i++)
        fprintf(out, "%.*s  ", COL_W, dashes);
    if (f->shapes)
        fprintf(out, "%.*s  ", f->shapes_w, dashes);
    if (f->flops_unit >= 0)
        fprintf(out, "%.*s  ", COL_W, dashes);
    fputc('\n', out);
}

/* `raw` as the table shows it: control bytes escaped (gp_text_clean), cut to max_w. */
static void cut(char *buf, size_t cap, const char *raw, int max_w)
{
    char s[512];
    gp_text_clean(s, sizeof(s), raw);
    if ((int)strlen(s) >= max_w - 3)
        snprintf(buf, cap, "%.*s...", max_w - 3, s);
    else
        snprintf(buf, cap, "%s", s);
}

static void table_row(FILE *out, const table_fmt *f, const gp_keyavg_row *r)
{
    char b[12][48], name[256], shapes[512];
    cut(name, sizeof(name), r->name, MAX_NAME_W);
    put_cell(out, name, f->name_w, 0);
    put_cell(out, fmt_share(b[0], 48, r->self_cpu, f->cpu_total), COL_W, 0);
    put_cell(out, gp_report_fmt_time(b[1], 48, r->self_cpu), COL_W, 0);
    put_cell(out, fmt_share(b[2], 48, r->cpu_total, f->cpu_total), COL_W, 0);
    put_cell(out, gp_report_fmt_time(b[3], 48, r->cpu_total), COL_W, 0);
    put_cell(out, fmt_avg(b[4], 48, r->cpu_total, r->count), COL_W, 0);
    if (f->has_dev) {
        put_cell(out, gp_report_fmt_time(b[5], 48, r->self_device), COL_W, 0);
        put_cell(out, fmt_share(b[6], 48, r->self_device, f->dev_total), COL_W, 0);
        put_cell(out, gp_report_fmt_time(b[7], 48, r->device_total), COL_W, 0);
        put_cell(out, fmt_avg(b[8], 48, r->device_total, r->count), COL_W, 0);
    }
    if (f->has_mem) {
        put_cell(out, fmt_mem(b[10], 48, r->cpu_mem), COL_W, 0);
        put_cell(out, fmt_mem(b[11], 48, r->self_cpu_mem), COL_W, 0);
    }
    if (f->has_dev_mem) {
        put_cell(out, fmt_mem(b[10], 48, r->device_mem), COL_W, 0);
        put_cell(out, fmt_mem(b[11], 48, r->self_device_mem), COL_W, 0);
    }
    snprintf(b[9], 48, "%" PRIu64, r->count);
    put_cell(out, b[9], COL_W, 0);
    if (f->shapes) {
        /* PyTorch: str(input_shapes)[:shapes_column_width], no "..." */
        gp_text_clean(shapes, sizeof(shapes), r->shape);
        if ((size_t)f->shapes_w < sizeof(shapes))
            shapes[f->shapes_w] = 0;
        put_cell(out, shapes, f->shapes_w, 0);
    }
    if (f->flops_unit >= 0) {
        if (r->flops)
            snprintf(b[9], 48, "%8.3f", (double)r->flops * f->flops_scale);
        put_cell(out, r->flops ? b[9] : "--", COL_W, 0);
    }
    fputc('\n', out);
}

static void table_header(FILE *out, const table_fmt *f, int ncols)
{
    static const char *const cols[] = {"Self CPU %",  "Self CPU",     "CPU total %",
                                       "CPU total",   "CPU time avg", "Self CUDA",
                                       "Self CUDA %", "CUDA total",   "CUDA time avg"};
    sep_line(out, f, ncols);
    put_cell(out, "Name", f->name_w, 0);
    static const char *const mem_cols[] = {"CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem"};
    for (int i = 0; i < (f->has_dev ? 9 : 5); i++)
        put_cell(out, cols[i], COL_W, 0);
    for (int i = 0; i < (f->has_mem ? 2 : 0) + (f->has_dev_mem ? 2 : 0); i++)
        put_cell(out, mem_cols[i], COL_W, 0);
    put_cell(out, "# of Calls", COL_W, 0);
    if (f->shapes)
        put_cell(out, "Input Shapes", f->shapes_w, 0);
    if (f->flops_unit >= 0) {
        char h[24];
        snprintf(h, sizeof(h), "Total %s", flops_units[f->flops_unit]);
        put_cell(out, h, COL_W, 0);
    }
    fputc('\n', out);
    sep_line(out, f, ncols);
}

static void write_table(FILE *out, const gp_keyavg *k, size_t nrows, int shapes)
{
    table_fmt f = {0,
                   0,
                   k->has_device,
                   shapes,
                   k->has_memory,
                   k->has_memory && k->has_device_memory,
                   k->self_cpu_total,
                   k->self_device_total,
                   -1,
                   0.0};
    for (size_t i = 0; i < k->n_rows; i++) { /* widths from every row, printed or not */
        int w = (int)strlen(k->rows[i].name) + 4, sw = (int)strlen(k->rows[i].shape) + 4;
        f.name_w = w > f.name_w ? w : f.name_w;
        f.shapes_w = sw > f.shapes_w ? sw : f.shapes_w;
    }
    f.name_w = f.name_w < 8 ? 8 : f.name_w > MAX_NAME_W ? MAX_NAME_W : f.name_w;
    f.shapes_w = f.shapes_w < 16 ? 16 : f.shapes_w > MAX_SHAPES_W ? MAX_SHAPES_W : f.shapes_w;
    flops_column(&f, k);
    int ncols = (f.has_dev ? 10 : 6) + 2 * f.has_mem + 2 * f.has_dev_mem;
    table_header(out, &f, ncols);
    for (size_t i = 0; i < nrows; i++)
        table_row(out, &f, &k->rows[i]);
    sep_line(out, &f, ncols);
    char t[32];
    fprintf(out, "Self CPU time total: %s\n", gp_report_fmt_time(t, sizeof(t), k->self_cpu_total));
    if (f.has_dev)
        fprintf(out, "Self CUDA time total: %s\n",
                gp_report_fmt_time(t, sizeof(t), k->self_device_total));
}

/* ---- CSV and JSON ---- */

static void csv_str(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fprintf(out, "%s", s);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void write_csv(FILE *out, const gp_keyavg *k, size_t nrows, int shapes)
{
    fprintf(out,
            "name,%sdevice,calls,self_cpu_us,cpu_total_us,cpu_avg_us,self_device_us,"
            "device_total_us,device_avg_us%s%s\n",
            shapes ? "input_shapes," : "",
            k->has_memory ? ",cpu_mem_bytes,self_cpu_mem_bytes,device_mem_bytes,"
                            "self_device_mem_bytes"
                          : "",
            k->has_flops ? ",flops" : "");
    for (size_t i = 0; i < nrows; i++) {
        const gp_keyavg_row *r = &k->rows[i];
        double c = r->count ? (double)r->count : 1.0;
        csv_str(out, r->name);
        fputc(',', out);
        if (shapes) {
            csv_str(out, r->shape);
            fputc(',', out);
        }
        /* device: 0 a host row, 1 GPU work, 2 an annotation's GPU-side copy (a CUDA run's) */
        fprintf(out, "%d,%" PRIu64 ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f",
                r->is_device ? 1 + r->is_annotation : 0, r->count, r->self_cpu / 1e3,
                r->cpu_total / 1e3, r->cpu_total / 1e3 / c, r->self_device / 1e3,
                r->device_total / 1e3, r->device_total / 1e3 / c);
        if (k->has_memory)
            fprintf(out, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64, r->cpu_mem,
                    r->self_cpu_mem, r->device_mem, r->self_device_mem);
        if (k->has_flops)
            fprintf(out, ",%" PRIu64, r->flops);
        fputc('\n', out);
    }
}

static void json_str(FILE *out, const char *s)
{
    gp_json_put_str(out, s);
}

static void json_streams(FILE *out, const gp_analysis *a, int device)
{
    size_t n, k = 0;
    const gp_stream_stats *s = gp_analysis_streams(a, &n);
    for (size_t i = 0; i < n; i++)
        if (s[i].device == device)
            fprintf(out,
                    "%s{\"stream\":%" PRId64 ",\"busy_us\":%.3f,\"idle_host_wait_us\":%.3f,"
                    "\"idle_kernel_wait_us\":%.3f,\"idle_other_us\":%.3f}",
                    k++ ? "," : "", s[i].stream, s[i].busy_ns / 1e3,
                    s[i].idle_ns[GP_IDLE_HOST_WAIT] / 1e3, s[i].idle_ns[GP_IDLE_KERNEL_WAIT] / 1e3,
                    s[i].idle_ns[GP_IDLE_OTHER] / 1e3);
}

static void json_summary(FILE *out, const gp_analysis *a)
{
    size_t n;
    const gp_step_stats *st = gp_analysis_step_stats(a);
    fprintf(out,
            "\"summary\":{\"steps\":%zu,\"step_us\":{\"mean\":%.3f,\"p50\":%.3f,\"p95\":%.3f},"
            "\"breakdown_us\":{",
            st->n, st->mean / 1e3, st->p50 / 1e3, st->p95 / 1e3);
    for (int c = 0; c < GP_BD_COUNT; c++) {
        fprintf(out, "%s", c ? "," : "");
        json_str(out, gp_bd_cat_name((gp_bd_cat)c));
        fprintf(out, ":%.3f", st->bd_mean[c] / 1e3);
    }
    fprintf(out, "},\"gpus\":[");
    const gp_device_stats *d = gp_analysis_devices(a, &n);
    for (size_t i = 0; i < n; i++) {
        fprintf(out,
                "%s{\"device\":%d,\"span_us\":%.3f,\"busy_us\":%.3f,\"kernel_busy_us\":%.3f,"
                "\"idle_host_wait_us\":%.3f,\"idle_kernel_wait_us\":%.3f,"
                "\"idle_other_us\":%.3f,\"compute_us\":%.3f,\"communication_us\":%.3f,"
                "\"memory_us\":%.3f,\"streams\":[",
                i ? "," : "", d[i].device, (d[i].span_end - d[i].span_ts) / 1e3, d[i].busy_ns / 1e3,
                d[i].kernel_busy_ns / 1e3, d[i].idle_ns[GP_IDLE_HOST_WAIT] / 1e3,
                d[i].idle_ns[GP_IDLE_KERNEL_WAIT] / 1e3, d[i].idle_ns[GP_IDLE_OTHER] / 1e3,
                d[i].compute_ns / 1e3, d[i].comm_ns / 1e3, d[i].memory_ns / 1e3);
        json_streams(out, a, d[i].device);
        fprintf(out, "]}");
    }
    fprintf(out, "],\"memory\":[");
    const gp_mem_series *m = gp_analysis_memory(a, &n);
    for (size_t i = 0; i < n; i++)
        fprintf(out,
                "%s{\"device_type\":%d,\"device_id\":%d,\"peak_allocated\":%" PRId64
                ",\"peak_reserved\":%" PRId64 "}",
                i ? "," : "", m[i].device_type, m[i].device_id, m[i].peak_allocated,
                m[i].peak_reserved);
    fprintf(out, "]}");
}

static void write_json(FILE *out, const gp_analysis *a, const gp_keyavg *k, size_t nrows,
                       const gp_report_opts *o)
{
    fprintf(out, "{\"trace\":");
    json_str(out, o->title ? o->title : "");
    fputc(',', out);
    json_summary(out, a);
    fprintf(out, ",\"self_cpu_time_total_us\":%.3f,\"self_cuda_time_total_us\":%.3f,\"rows\":[",
            k->self_cpu_total / 1e3, k->self_device_total / 1e3);
    for (size_t i = 0; i < nrows; i++) {
        const gp_keyavg_row *r = &k->rows[i];
        fprintf(out, "%s%s{\"name\":", i ? "," : "", o->format == GP_REPORT_JSON ? "\n" : "");
        json_str(out, r->name);
        if (o->group_by == GP_GROUP_NAME_SHAPE) {
            fprintf(out, ",\"input_shapes\":");
            json_str(out, r->shape);
        }
        fprintf(out,
                ",\"device\":%s,\"calls\":%" PRIu64 ",\"self_cpu_us\":%.3f,"
                "\"cpu_total_us\":%.3f,\"self_device_us\":%.3f,\"device_total_us\":%.3f",
                r->is_device ? "true" : "false", r->count, r->self_cpu / 1e3, r->cpu_total / 1e3,
                r->self_device / 1e3, r->device_total / 1e3);
        if (r->is_device && r->is_annotation) /* a CUDA run's annotation, its GPU-side copy */
            fputs(",\"gpu_annotation\":true", out);
        if (k->has_memory)
            fprintf(out,
                    ",\"cpu_mem_bytes\":%" PRId64 ",\"self_cpu_mem_bytes\":%" PRId64
                    ",\"device_mem_bytes\":%" PRId64 ",\"self_device_mem_bytes\":%" PRId64,
                    r->cpu_mem, r->self_cpu_mem, r->device_mem, r->self_device_mem);
        if (k->has_flops)
            fprintf(out, ",\"flops\":%" PRIu64, r->flops);
        fputc('}', out);
    }
    fprintf(out, "]}\n");
}

gp_status gp_report_write(FILE *out, const gp_analysis *a, const gp_report_opts *o, gp_error *err)
{
    gp_keyavg k;
    GP_TRY(gp_keyavg_compute(a, o->group_by, o->sort, &k, err));
    size_t nrows =
            o->row_limit > 0 && (size_t)o->row_limit < k.n_rows ? (size_t)o->row_limit : k.n_rows;
    int shapes = o->group_by == GP_GROUP_NAME_SHAPE;
    if (o->format == GP_REPORT_TABLE) {
        if (o->title) {
            fputs("== ", out);
            gp_fputs_clean(out, o->title);
            fputc('\n', out);
        }
        gp_report_write_summary(out, a, err);
        fputc('\n', out);
        write_table(out, &k, nrows, shapes);
    } else if (o->format == GP_REPORT_CSV) {
        write_csv(out, &k, nrows, shapes);
    } else {
        write_json(out, a, &k, nrows, o);
    }
    gp_keyavg_release(&k);
    return ferror(out) ? gp_error_set(err, GP_EIO, NULL, "cannot write the report") : GP_OK;
}
