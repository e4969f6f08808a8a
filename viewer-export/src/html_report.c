/* viewer-export/src/html_report.c: gp_export_html(): one self-contained HTML page (inline CSS and
 * SVG, html_sort.c's script alone, a Content-Security-Policy that forbids any fetch) with the run's
 * summary, the findings and their evidence, the three charts and the top-20 ops and kernels tables.
 */
#include "gp/export.h"
#include "gp/report.h"
#include "html_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOP_N     20
#define MAX_BANDS 400

static const char css[] =
        "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;"
        "color:#1d2330;background:#f5f6f8}\n"
        "main{max-width:1040px;margin:0 auto;padding:20px 24px 48px}\n"
        "h1{font-size:22px;margin:8px 0 2px}h2{font-size:17px;margin:28px 0 8px}\n"
        ".sub{color:#5b6372;margin:0 0 12px;word-break:break-all}\n"
        ".cards{display:flex;flex-wrap:wrap;gap:10px}.card{background:#fff;border:1px solid "
        "#dde1e7;border-radius:6px;padding:10px 14px;min-width:140px}\n"
        ".card b{display:block;font-size:20px}.card span{color:#5b6372;font-size:12px}\n"
        "section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px 16px;"
        "margin-top:12px}\n"
        "svg.chart{width:100%;height:auto;display:block}\n"
        ".grid{stroke:#e4e7ec;stroke-width:1}.axis{stroke:#8a93a3;stroke-width:1}\n"
        ".ylab{font-size:11px;fill:#5b6372;text-anchor:end}.xlab{font-size:11px;fill:#5b6372;"
        "text-anchor:middle}\n.unit{font-size:11px;fill:#5b6372}.xunit{font-size:11px;"
        "fill:#5b6372;text-anchor:end}.bandlab{font-size:10px;font-weight:600}\n"
        ".legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin-top:6px}\n"
        ".legend i{display:inline-block;width:10px;height:10px;margin-right:5px;"
        "border-radius:2px}\n"
        "table{border-collapse:collapse;width:100%;font-size:12.5px}th,td{padding:4px 8px;"
        "border-bottom:1px solid #eceef2;text-align:right;vertical-align:top}\n"
        "th{background:#f0f2f5;font-weight:600}td.name,th.name{text-align:left;"
        "word-break:break-all}\n"
        ".finding{border-left:4px solid #8a93a3;padding:6px 12px;margin:10px 0;"
        "background:#fafbfc}\n.finding.warn{border-color:#e08a00}.finding.crit{border-color:"
        "#c53a32}.finding.info{border-color:#3b75af}\n"
        ".sev{font-size:11px;font-weight:700;text-transform:uppercase;padding:1px 6px;"
        "border-radius:3px;background:#8a93a3;color:#fff;margin-right:6px}\n"
        "table.evidence{margin:6px 0;width:auto;min-width:50%}code{background:#eef0f3;padding:0 "
        "4px;"
        "border-radius:3px}.ranges{color:#5b6372;font-size:12.5px;margin:4px 0}\n"
        ".warn .sev{background:#e08a00}.crit .sev{background:#c53a32}.info .sev"
        "{background:#3b75af}\n.finding ul{margin:4px 0;padding-left:20px}.rec{margin:4px 0}\n"
        "details.kname summary{cursor:pointer}details.kname code{display:block;margin-top:4px;"
        "white-space:normal;font-size:11.5px}\n"
        "table.sortable th{cursor:pointer}th[data-sort=desc]::after{content:' \\25BE'}"
        "th[data-sort=asc]::after{content:' \\25B4'}\n"
        ".none{color:#5b6372;font-style:italic}.note{color:#5b6372;font-size:13px}footer{color:#"
        "8a93a3;font-size:12px;"
        "margin-top:24px}\n";

const char *html_base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p ? p : "";
}

void html_page_head(export_out *o, const char *heading, const char *title)
{
    export_out_puts(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'; img-src data:; script-src 'sha256-");
    export_out_puts(o, html_sort_js_sha256);
    export_out_puts(o, "'\">\n<meta name=\"viewport\" content=\"width=device-width,"
                       "initial-scale=1\">\n<title>");
    export_out_html(o, heading);
    export_out_puts(o, ": ");
    export_out_html(o, title);
    export_out_printf(o, "</title>\n<style>\n%s</style></head>\n<body><main>\n<h1>", css);
    export_out_html(o, heading);
    export_out_puts(o, "</h1>\n<p class=\"sub\">");
    export_out_html(o, title);
    export_out_puts(o, "</p>\n");
}

void html_page_foot(export_out *o)
{
    export_out_puts(o, "<footer>Written by gprof-train " GP_VERSION ".</footer>\n</main><script>");
    export_out_puts(o, html_sort_js);
    export_out_puts(o, "</script></body>"
                       "</html>\n");
}

void html_card(export_out *o, const char *value, const char *label)
{
    export_out_puts(o, "<div class=\"card\"><b>");
    export_out_html(o, value);
    export_out_puts(o, "</b><span>");
    export_out_html(o, label);
    export_out_puts(o, "</span></div>\n");
}

static void fmt_bytes(char *buf, size_t cap, int64_t b)
{
    if (b >= (1LL << 30))
        snprintf(buf, cap, "%.2f GiB", (double)b / (double)(1LL << 30));
    else
        snprintf(buf, cap, "%.1f MiB", (double)b / (double)(1LL << 20));
}

/* GT02's measure, the GPU busy share of the analysed steps' time, or NAN without it. */
static double gt02_busy(const gp_export_opts *opts)
{
    size_t n = 0;
    const gp_finding *f = opts->findings ? gp_findings_get(opts->findings, &n) : NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].rule->id, "GT02") == 0)
            return f[i].metric;
    return NAN;
}

/* Two definitions of "busy", each named on its card: of the device's own span (first to last
 * GPU work, the summary's "GPU 0: busy ... of ... span") and, as GT02 measures it, of the
 * analysed steps' time. */
static void busy_cards(export_out *o, const gp_analysis *a, const gp_export_opts *opts)
{
    char v[64], t1[96];
    size_t nd;
    const gp_device_stats *d = gp_analysis_devices(a, &nd);
    for (size_t i = 0; i < nd && i < 4; i++) {
        int64_t span = d[i].span_end - d[i].span_ts;
        snprintf(v, sizeof v, "%.1f%%", span > 0 ? 100.0 * (double)d[i].busy_ns / (double)span : 0);
        snprintf(t1, sizeof t1, "GPU %d busy, of its span (first to last GPU work)", d[i].device);
        html_card(o, v, t1);
    }
    double g = gt02_busy(opts);
    if (nd && !isnan(g)) {
        snprintf(v, sizeof v, "%.1f%%", g);
        html_card(o, v, "GPU busy, of step time (GT02; steps after warm-up)");
    }
}

static void summary_cards(export_out *o, const gp_analysis *a, const gp_export_opts *opts)
{
    const gp_step_stats *ss = gp_analysis_step_stats(a);
    char v[64], t1[32], t2[32];
    snprintf(v, sizeof v, "%zu", ss->n);
    html_card(o, v, "steps");
    html_card(o, gp_report_fmt_time(t1, sizeof t1, ss->mean), "mean step time");
    snprintf(v, sizeof v, "%s / %s", gp_report_fmt_time(t1, sizeof t1, ss->p50),
             gp_report_fmt_time(t2, sizeof t2, ss->p95));
    html_card(o, v, "p50 / p95 step time");
    size_t nm;
    busy_cards(o, a, opts);
    const gp_mem_series *m = gp_analysis_memory(a, &nm);
    for (size_t i = 0; i < nm && i < 4; i++) {
        fmt_bytes(v, sizeof v, m[i].peak_allocated);
        if (m[i].device_id >= 0)
            snprintf(t1, sizeof t1, "peak %s %d allocated", m[i].device_type ? "GPU" : "CPU",
                     m[i].device_id);
        else /* PyTorch writes Device Id -1 for the CPU */
            snprintf(t1, sizeof t1, "peak %s allocated", m[i].device_type ? "GPU" : "CPU");
        html_card(o, v, t1);
    }
}

static void kv_value(export_out *o, const gp_kv *kv)
{
    switch (kv->type) {
    case GP_KV_BOOL:
        export_out_puts(o, kv->i ? "true" : "false");
        break;
    case GP_KV_INT:
        export_out_printf(o, "%lld", (long long)kv->i);
        break;
    case GP_KV_DOUBLE:
        export_out_printf(o, "%g", kv->d);
        break;
    case GP_KV_STRING:
    case GP_KV_JSON:
        export_out_html(o, kv->str);
        break;
    default:
        export_out_puts(o, "null");
    }
}

/* The device(s) and the "gprof" run configuration, when the trace has them. */
static void run_config(export_out *o, const gp_analysis *a)
{
    const gp_trace *t = gp_analysis_trace(a);
    size_t nd, nc;
    const gp_device_props *dp = gp_trace_devices(t, &nd);
    const gp_kv *cfg = gp_trace_config(t, &nc);
    if (nd == 0 && nc == 0)
        return;
    export_out_puts(o, "<section><h2>Run</h2><table>\n");
    for (size_t i = 0; i < nd; i++) {
        char mem[32];
        fmt_bytes(mem, sizeof mem, dp[i].total_global_mem);
        export_out_printf(o, "<tr><td class=\"name\">device %d</td><td class=\"name\">", dp[i].id);
        export_out_html(o, gp_trace_str(t, dp[i].name));
        export_out_printf(o, " (%s, compute %d.%d, %d SMs)</td></tr>\n", mem, dp[i].compute_major,
                          dp[i].compute_minor, dp[i].num_sms);
    }
    for (size_t i = 0; i < nc; i++) {
        export_out_puts(o, "<tr><td class=\"name\">");
        export_out_html(o, cfg[i].key);
        export_out_puts(o, "</td><td class=\"name\">");
        kv_value(o, &cfg[i]);
        export_out_puts(o, "</td></tr>\n");
    }
    export_out_puts(o, "</table></section>\n");
}

/* One evidence cell in its column's unit. */
static void cell(export_out *o, const gp_evidence_col *col, const gp_cell *c)
{
    char buf[64];
    switch (col->unit) {
    case GP_UNIT_TEXT:
        export_out_html(o, c->text);
        return;
    case GP_UNIT_US:
        export_out_puts(o, gp_report_fmt_time(buf, sizeof buf, (int64_t)(c->num * 1000.0)));
        return;
    case GP_UNIT_PCT:
        export_out_printf(o, "%.1f%%", c->num);
        return;
    case GP_UNIT_BYTES:
        fmt_bytes(buf, sizeof buf, (int64_t)c->num);
        export_out_puts(o, buf);
        return;
    case GP_UNIT_GBPS:
        export_out_printf(o, "%.2f GB/s", c->num);
        return;
    default:
        /* as the text findings print it: integers plain, other numbers with 2 decimals */
        export_out_printf(o, c->num == floor(c->num) && fabs(c->num) < 1e15 ? "%.0f" : "%.2f",
                          c->num);
    }
}

void html_evidence_table(export_out *o, const gp_finding *f)
{
    if (f->n_cols == 0 || f->n_rows == 0)
        return;
    export_out_puts(o, "<table class=\"evidence\"><tr>");
    for (size_t c = 0; c < f->n_cols; c++) {
        export_out_puts(o, c ? "<th>" : "<th class=\"name\">");
        export_out_html(o, f->cols[c].name);
        export_out_puts(o, "</th>");
    }
    export_out_puts(o, "</tr>\n");
    for (size_t r = 0; r < f->n_rows; r++) {
        export_out_puts(o, "<tr>");
        for (size_t c = 0; c < f->n_cols; c++) {
            export_out_puts(o, c ? "<td>" : "<td class=\"name\">");
            cell(o, &f->cols[c], &f->cells[r * f->n_cols + c]);
            export_out_puts(o, "</td>");
        }
        export_out_puts(o, "</tr>\n");
    }
    export_out_puts(o, "</table>\n");
}

void html_recommendation(export_out *o, const gp_finding *f)
{
    if (!f->recommendation)
        return;
    export_out_puts(o, "<p class=\"rec\"><b>Fix:</b> ");
    export_out_html(o, f->recommendation);
    if (f->knob) {
        export_out_puts(o, " <code>");
        export_out_html(o, f->knob);
        export_out_puts(o, "</code>");
    }
    if (f->gain_text) {
        export_out_puts(o, " <i>(");
        export_out_html(o, f->gain_text);
        export_out_puts(o, ")</i>");
    }
    export_out_puts(o, "</p>\n");
}

/* The gain as a share of the step without the profiler's own cost, and how sure it is. */
static void unprofiled(export_out *o, const gp_findings *fs, const gp_finding *f)
{
    char t[32];
    gp_unprofiled_gain g;
    if (!gp_finding_unprofiled_gain(fs, f, &g) || g.step_ns <= 0)
        return;
    export_out_printf(o,
                      "<p class=\"sure\">Without the profiler: %.0f-%.0f%% of a %s step; how "
                      "sure: %s (",
                      g.low_pct, g.high_pct, gp_report_fmt_time(t, sizeof t, g.step_ns),
                      gp_sureness_name(g.sure));
    export_out_html(o, g.why);
    export_out_puts(o, ")</p>\n");
}

/* Where the finding's ranges are: on the charts, and in the Perfetto file (both exports count
 * time from the trace's first event, as the charts do). */
static void ranges_pointer(export_out *o, const gp_finding *f, double first, const char *unit)
{
    export_out_printf(o,
                      "<p class=\"ranges\">%zu time range%s, the first at %.3f %s (shaded on "
                      "the charts). In the Perfetto file (<i>Timeline</i> below): track "
                      "<i>gprof-train findings &rsaquo; ",
                      f->n_ranges, f->n_ranges == 1 ? "" : "s", first, unit);
    export_out_html(o, f->rule->id);
    export_out_puts(o, " ");
    export_out_html(o, f->rule->title);
    export_out_printf(o, "</i>, its first slice at %.3f %s.</p>\n", first, unit);
}

static void one_finding(export_out *o, const gp_findings *fs, const gp_finding *f,
                        const html_time *tx)
{
    const char *sev = gp_severity_name(f->severity);
    export_out_printf(o, "<div class=\"finding %s\"><p><span class=\"sev\">%s</span><b>", sev, sev);
    export_out_html(o, f->rule->id);
    export_out_puts(o, " ");
    export_out_html(o, f->rule->title);
    export_out_puts(o, "</b></p>\n<p>");
    export_out_html(o, f->summary);
    export_out_puts(o, "</p>\n");
    html_evidence_table(o, f);
    int64_t first = f->n_ranges ? f->ranges[0].ts : 0; /* ranges come costliest first */
    for (size_t i = 1; i < f->n_ranges; i++)
        first = f->ranges[i].ts < first ? f->ranges[i].ts : first;
    if (f->n_ranges)
        ranges_pointer(o, f, (double)(first - tx->t0) / tx->scale, tx->unit);
    html_recommendation(o, f);
    unprofiled(o, fs, f);
    export_out_puts(o, "</div>\n");
}

static const gp_finding *fired(const gp_export_opts *opts, size_t *n)
{
    size_t all = 0, k = 0;
    const gp_finding *f = opts->findings ? gp_findings_get(opts->findings, &all) : NULL;
    while (k < all && f[k].severity != GP_SEV_OK) /* fired ones come first */
        k++;
    *n = k;
    return f;
}

/* The cards count every step; the rules leave the first out as warm-up: say so, with their
 * mean, so two different mean step times on one page are explained. */
static void warmup_note(export_out *o, const gp_export_opts *opts)
{
    size_t analysed;
    int64_t mean;
    size_t steps = opts->findings ? gp_findings_steps(opts->findings, &analysed, &mean) : 0;
    char t[32];
    if (analysed < steps)
        export_out_printf(o,
                          "<p class=\"note\">The findings read the %zu steps after the first "
                          "(warm-up): mean step %s. The summary above covers all %zu steps.</p>\n",
                          analysed, gp_report_fmt_time(t, sizeof t, mean), steps);
}

static void findings(export_out *o, const gp_analysis *a, const gp_export_opts *opts)
{
    html_time tx;
    html_time_axis(a, &tx);
    size_t n;
    const gp_finding *f = fired(opts, &n);
    export_out_puts(o, "<section><h2>Findings</h2>\n");
    warmup_note(o, opts);
    if (n == 0)
        export_out_printf(o, "<p class=\"none\">%s</p>\n",
                          opts->findings ? "No findings: nothing in this trace crossed a rule's "
                                           "threshold."
                                         : "The diagnosis was not run.");
    for (size_t i = 0; i < n; i++)
        one_finding(o, opts->findings, &f[i], &tx);
    export_out_puts(o, "</section>\n");
}

static const char *const band_colors[] = {"#c53a32", "#e08a00", "#9467bd",
                                          "#3b75af", "#8c564b", "#2ca02c"};
#define N_BAND_COLORS (sizeof band_colors / sizeof *band_colors)

/* Bands for the time charts: every cited range in its finding's colour, labelled once. */
static export_band *finding_bands(const gp_analysis *a, const gp_export_opts *opts, size_t *nb)
{
    html_time tx;
    html_time_axis(a, &tx);
    size_t n;
    const gp_finding *f = fired(opts, &n);
    export_band *b = calloc(MAX_BANDS, sizeof *b);
    *nb = 0;
    for (size_t i = 0, k = 0; b && i < n; i++) {
        if (f[i].n_ranges == 0)
            continue;
        for (size_t r = 0; r < f[i].n_ranges && *nb < MAX_BANDS; r++)
            b[(*nb)++] = (export_band){(double)(f[i].ranges[r].ts - tx.t0) / tx.scale,
                                       (double)(f[i].ranges[r].end - tx.t0) / tx.scale,
                                       r ? NULL : f[i].rule->id,
                                       f[i].rule->title,
                                       band_colors[k % N_BAND_COLORS],
                                       (int)k};
        k++;
    }
    return b;
}

/* Which shading belongs to which finding, under a time chart. */
static void band_legend(export_out *o, const gp_analysis *a, const gp_export_opts *opts)
{
    size_t n;
    const gp_finding *f = fired(opts, &n);
    (void)a;
    int any = 0;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (f[i].n_ranges == 0)
            continue;
        export_out_puts(o, any ? "" : "<div class=\"legend\">shaded: ");
        export_out_printf(o, "<span><i style=\"background:%s;opacity:.45\"></i>",
                          band_colors[k++ % N_BAND_COLORS]);
        export_out_html(o, f[i].rule->id);
        export_out_puts(o, " ");
        export_out_html(o, f[i].rule->title);
        export_out_puts(o, "</span>");
        any = 1;
    }
    if (any)
        export_out_puts(o, "</div>\n");
}

static void kernels_table(export_out *o, const gp_analysis *a)
{
    size_t n;
    const gp_kernel_stat *ks = gp_analysis_kernel_stats(a, &n);
    const gp_trace *t = gp_analysis_trace(a);
    int64_t all = 0;
    for (size_t i = 0; i < n; i++)
        all += ks[i].total_ns;
    export_out_puts(o, "<section><h2>Top kernels</h2>\n");
    if (n == 0) {
        export_out_puts(o, "<p class=\"none\">No GPU kernels in this trace.</p></section>\n");
        return;
    }
    int64_t tc = 0;
    for (size_t i = 0; i < n; i++)
        tc += gp_kernel_uses_tensor_cores(gp_trace_str(t, ks[i].name)) ? ks[i].total_ns : 0;
    export_out_printf(o,
                      "<p class=\"note\">%.1f%% of kernel time in kernels that use tensor cores "
                      "(judged by their names, as torch-tb-profiler's Kernel view).</p>\n",
                      all ? 100.0 * (double)tc / (double)all : 0);
    export_out_puts(o, "<table class=\"sortable\"><tr><th "
                       "class=\"name\">Kernel</th><th>Calls</th><th>Total</th>"
                       "<th>Mean</th><th>Min</th><th>Max</th><th>% of kernel time</th>"
                       "<th>Occupancy %</th><th>Tensor cores</th></tr>\n");
    for (size_t i = 0; i < n && i < TOP_N; i++) {
        export_out_puts(o, "<tr><td class=\"name\">");
        html_kernel_name(o, gp_trace_str(t, ks[i].name));
        export_out_printf(o, "</td><td>%llu</td>", (unsigned long long)ks[i].count);
        html_td_time(o, ks[i].total_ns), html_td_time(o, ks[i].mean_ns);
        html_td_time(o, ks[i].min_ns), html_td_time(o, ks[i].max_ns);
        export_out_printf(o, "<td>%.1f</td>",
                          all ? 100.0 * (double)ks[i].total_ns / (double)all : 0);
        if (ks[i].occupancy >= 0)
            export_out_printf(o, "<td>%.1f</td>", ks[i].occupancy);
        else
            export_out_puts(o, "<td>-</td>");
        export_out_printf(o, "<td>%s</td></tr>\n",
                          gp_kernel_uses_tensor_cores(gp_trace_str(t, ks[i].name)) ? "yes" : "no");
    }
    export_out_puts(o, "</table></section>\n");
}

static void charts(export_out *o, const gp_analysis *a, const gp_export_opts *opts,
                   const export_band *bands, size_t n_bands)
{
    export_out_puts(o, "<section><h2>Step time breakdown</h2>\n");
    html_chart_steps(o, a);
    html_steps_table(o, a);
    export_out_puts(o, "</section>\n<section><h2>GPU utilisation</h2>\n");
    size_t n_dev;
    gp_analysis_devices(a, &n_dev);
    if (n_dev == 0) { /* a CPU-only trace: no empty chart, no legend of GPU categories */
        export_out_puts(o, "<p class=\"none\">No GPU activity in this trace.</p>\n");
    } else {
        html_chart_util(o, a, bands, n_bands);
        band_legend(o, a, opts);
    }
    export_out_puts(o, "</section>\n<section><h2>Memory</h2>\n");
    html_chart_memory(o, a, bands, n_bands);
    band_legend(o, a, opts);
    html_time tx;
    html_time_axis(a, &tx);
    html_memory_peaks(o, a, &tx);
    export_out_puts(o, "</section>\n");
}

/* The whole page into `o`. */
static void html_page(export_out *o, const gp_analysis *a, const gp_export_opts *opts)
{
    const char *title = opts->title ? opts->title
                                    : html_base_name(gp_trace_get_info(gp_analysis_trace(a))->path);
    size_t n_bands = 0;
    export_band *bands = finding_bands(a, opts, &n_bands);
    if (!bands) {
        o->err_no = ENOMEM;
        return;
    }
    html_page_head(o, "gprof-train report", title);
    export_out_puts(o, "<div class=\"cards\">\n");
    summary_cards(o, a, opts);
    export_out_puts(o, "</div>\n");
    findings(o, a, opts);
    charts(o, a, opts, bands, n_bands);
    html_operators(o, a);
    html_modules(o, a);
    kernels_table(o, a);
    html_timeline_howto(o, gp_trace_get_info(gp_analysis_trace(a))->path);
    run_config(o, a);
    html_page_foot(o);
    free(bands);
}

gp_status gp_export_html(const gp_analysis *a, const gp_export_opts *opts, const char *path,
                         gp_error *err)
{
    static const gp_export_opts none = {0};
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    html_page(&o, a, opts ? opts : &none);
    return export_out_close(&o, err);
}
