/* viewer-export/src/html_compare.c: gp_export_compare_html(): a comparison (gp/compare.h) as one
 * self-contained page in the report's style: the verdict and step times, both sides' step-time
 * breakdown as two stacked bars on one scale, the ops and kernels that moved most, peak memory,
 * and the findings resolved, new and still there with the predicted gain beside the measured. */
#include "gp/compare.h"
#include "gp/export.h"
#include "gp/report.h"
#include "html_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FINDINGS 64
#define BAR_X        56  /* where the bars start, after the side's label */
#define BAR_W        700 /* the longer side's bar */

static const char *const side_names[2] = {"BASE", "NEW"};

/* "+1.234ms", "-812.000us", "0.000us". */
static const char *fmt_delta(char *buf, size_t cap, double ns)
{
    int64_t v = llround(ns);
    buf[0] = v > 0 ? '+' : v < 0 ? '-' : 0;
    buf[1] = 0;
    gp_report_fmt_time(buf + (v != 0), cap - 1, v < 0 ? -v : v);
    return buf;
}

static const char *fmt_pct_change(char *buf, size_t cap, double base, double now)
{
    if (base > 0)
        snprintf(buf, cap, "%+.1f%%", (now - base) / base * 100.0);
    else
        snprintf(buf, cap, "-");
    return buf;
}

static void cell(export_out *o, const char *cls, const char *text)
{
    export_out_printf(o, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    export_out_html(o, text);
    export_out_puts(o, "</td>");
}

static void head_row(export_out *o, const char *const *names, size_t n)
{
    export_out_puts(o, "<tr>");
    for (size_t i = 0; i < n; i++)
        export_out_printf(o, "<th%s>%s</th>", i == 0 ? " class=\"name\"" : "", names[i]);
    export_out_puts(o, "</tr>\n");
}

static void cards(export_out *o, const gp_compare_steps *r)
{
    char v[64], t[32];
    export_out_puts(o, "<div class=\"cards\">\n");
    for (int s = 0; s < 2; s++) {
        snprintf(v, sizeof v, "mean step, %s (%zu steps)", side_names[s], r->n_steps[s]);
        html_card(o, gp_report_fmt_time(t, sizeof t, r->mean[s]), v);
    }
    snprintf(v, sizeof v, "%+.1f%%", r->change_pct);
    html_card(o, v, "change of the mean step");
    html_card(o, gp_verdict_name(r->verdict), "verdict");
    export_out_puts(o, "</div>\n");
}

static void step_row(export_out *o, const char *name, int64_t base, int64_t now)
{
    char b[32], n[32], d[32];
    export_out_puts(o, "<tr>");
    cell(o, "name", name);
    cell(o, NULL, gp_report_fmt_time(b, sizeof b, base));
    cell(o, NULL, gp_report_fmt_time(n, sizeof n, now));
    cell(o, NULL, fmt_pct_change(d, sizeof d, (double)base, (double)now));
    export_out_puts(o, "</tr>\n");
}

static void step_section(export_out *o, const gp_compare_steps *r)
{
    static const char *const cols[] = {"step time", "BASE", "NEW", "change"};
    export_out_puts(o, "<h2>Step time</h2>\n<section><table>\n");
    head_row(o, cols, 4);
    step_row(o, "mean", r->mean[0], r->mean[1]);
    step_row(o, "p50", r->p50[0], r->p50[1]);
    step_row(o, "p95", r->p95[0], r->p95[1]);
    export_out_printf(o, "</table>\n<p class=\"note\">Verdict: <b>%s</b> (mean %+.1f%%",
                      gp_verdict_name(r->verdict), r->change_pct);
    if (r->verdict == GP_VERDICT_TOO_FEW)
        export_out_printf(o, "; a test needs 3 steps a side, %zu vs %zu", r->n_steps[0],
                          r->n_steps[1]);
    else
        export_out_printf(o,
                          "; typical step %+.1f%%, 95%% CI %+.1f%% .. %+.1f%%, p = %.2g; %zu vs "
                          "%zu runs, %zu vs %zu steps",
                          r->typical_change_pct, r->ci_lo_pct, r->ci_hi_pct, r->p_value,
                          r->n_runs[0], r->n_runs[1], r->n_steps[0], r->n_steps[1]);
    export_out_puts(o, "). Runs are the unit: faster or slower only when the change exceeds what "
                       "runs of one setting differ by");
    if (r->verdict != GP_VERDICT_TOO_FEW)
        export_out_printf(o, " (here %.1f%%%s)", r->detectable_pct,
                          r->n_runs[0] == 1 && r->n_runs[1] == 1 ? ", one run per side" : "");
    export_out_puts(o, "; each trace's first (warm-up) step is left out.</p></section>\n");
}

/* One side's stacked bar: a rect per category, scaled so the longer side spans BAR_W. */
static void bd_bar(export_out *o, const gp_compare_side_info *sd, int s, double scale)
{
    double x = BAR_X;
    int y = 8 + s * 34;
    char t[32];
    export_out_printf(o, "<text class=\"ylab\" x=\"%d\" y=\"%d\">%s</text>\n", BAR_X - 8, y + 17,
                      side_names[s]);
    for (int k = 0; k < GP_BD_COUNT; k++) {
        double w = sd->bd_ns[k] * scale;
        if (w <= 0)
            continue;
        export_out_printf(o,
                          "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"24\" fill=\"%s\">"
                          "<title>%s %s: ",
                          x, y, w, html_bd_color((gp_bd_cat)k), side_names[s],
                          gp_bd_cat_name((gp_bd_cat)k));
        export_out_printf(o, "%s</title></rect>\n",
                          gp_report_fmt_time(t, sizeof t, llround(sd->bd_ns[k])));
        x += w;
    }
}

static double bd_total(const gp_compare_side_info *sd)
{
    double t = 0;
    for (int k = 0; k < GP_BD_COUNT; k++)
        t += sd->bd_ns[k];
    return t;
}

static void bd_table(export_out *o, const gp_compare_side_info sd[2])
{
    static const char *const cols[] = {"per step", "BASE", "NEW", "change"};
    char b[32], n[32], d[32];
    export_out_puts(o, "<table>\n");
    head_row(o, cols, 4);
    for (int k = 0; k < GP_BD_COUNT; k++) {
        double base = sd[0].bd_ns[k], now = sd[1].bd_ns[k];
        if (llround(base) == 0 && llround(now) == 0)
            continue;
        export_out_printf(o,
                          "<tr><td class=\"name\"><i style=\"display:inline-block;width:10px;"
                          "height:10px;margin-right:6px;border-radius:2px;background:%s\"></i>",
                          html_bd_color((gp_bd_cat)k));
        export_out_html(o, gp_bd_cat_name((gp_bd_cat)k));
        export_out_puts(o, "</td>");
        cell(o, NULL, gp_report_fmt_time(b, sizeof b, llround(base)));
        cell(o, NULL, gp_report_fmt_time(n, sizeof n, llround(now)));
        cell(o, NULL, fmt_delta(d, sizeof d, now - base));
        export_out_puts(o, "</tr>\n");
    }
    export_out_puts(o, "</table>\n");
}

static void breakdown_section(export_out *o, const gp_compare *c)
{
    gp_compare_side_info sd[2];
    gp_compare_side_get(c, GP_CMP_BASE, &sd[0]);
    gp_compare_side_get(c, GP_CMP_NEW, &sd[1]);
    double longest = fmax(bd_total(&sd[0]), bd_total(&sd[1]));
    export_out_puts(o, "<h2>Step-time breakdown, mean per step</h2>\n<section>\n");
    export_out_printf(o,
                      "<svg class=\"chart\" viewBox=\"0 0 %d 76\" role=\"img\" aria-label=\""
                      "step-time breakdown of both sides\">\n",
                      BAR_X + BAR_W + 8);
    for (int s = 0; s < 2; s++)
        bd_bar(o, &sd[s], s, longest > 0 ? BAR_W / longest : 0);
    export_out_puts(o, "</svg>\n");
    bd_table(o, sd);
    export_out_puts(o, "</section>\n");
}

static void moved_row(export_out *o, const gp_compare_row *r)
{
    char b[32], n[32], d[32], calls[2][32];
    export_out_puts(o, "<tr>");
    cell(o, "name", r->name);
    for (int s = 0; s < 2; s++) {
        snprintf(calls[s], sizeof calls[s], "%.2f", r->calls[s]);
        cell(o, NULL, calls[s]);
    }
    cell(o, NULL, gp_report_fmt_time(b, sizeof b, llround(r->time_ns[0])));
    cell(o, NULL, gp_report_fmt_time(n, sizeof n, llround(r->time_ns[1])));
    cell(o, NULL, fmt_delta(d, sizeof d, r->time_ns[1] - r->time_ns[0]));
    cell(o, NULL, strcmp(r->status, "changed") ? r->status : "");
    export_out_puts(o, "</tr>\n");
}

static void moved_section(export_out *o, const gp_compare *c, int device, size_t top)
{
    static const char *const cols[] = {"name",     "calls BASE", "calls NEW", "time BASE",
                                       "time NEW", "change",     ""};
    gp_compare_row *rows = calloc(top ? top : 1, sizeof(*rows));
    if (!rows) {
        o->err_no = ENOMEM;
        return;
    }
    size_t n = gp_compare_moved(c, device, rows, top);
    export_out_printf(o, "<h2>%s that moved most, per step (%s)</h2>\n<section>",
                      device ? "Kernels" : "Ops", device ? "device time" : "self CPU");
    if (n == 0)
        export_out_puts(o, "<p class=\"none\">None: the same on both sides.</p>");
    else {
        export_out_puts(o, "<table>\n");
        head_row(o, cols, 7);
        for (size_t i = 0; i < n; i++)
            moved_row(o, &rows[i]);
        export_out_puts(o, "</table>");
    }
    export_out_puts(o, "</section>\n");
    free(rows);
}

static void memory_line(export_out *o, const gp_compare *c)
{
    gp_compare_side_info sd[2];
    char v[2][32];
    gp_compare_side_get(c, GP_CMP_BASE, &sd[0]);
    gp_compare_side_get(c, GP_CMP_NEW, &sd[1]);
    for (int s = 0; s < 2; s++) {
        if (sd[s].peak_alloc < 0)
            snprintf(v[s], sizeof v[s], "not recorded");
        else /* as the text and the findings write bytes */
            gp_compare_fmt_metric(v[s], sizeof v[s], (double)sd[s].peak_alloc, GP_UNIT_BYTES);
    }
    if (sd[0].peak_alloc < 0 && sd[1].peak_alloc < 0)
        export_out_puts(o, "<p class=\"note\">Peak device memory: not recorded on either side "
                           "([memory] events need profile_memory=True).</p>\n");
    else
        export_out_printf(o, "<p class=\"note\">Peak device memory allocated: %s &rarr; %s.</p>\n",
                          v[0], v[1]);
}

/* A finding's border: resolved blue, new red, still there amber. */
static const char *status_class(const char *status)
{
    return !strcmp(status, "resolved") ? "info"
           : !strcmp(status, "new")    ? "crit"
           : !strcmp(status, "still")  ? "warn"
                                       : "";
}

static void finding_block(export_out *o, const gp_compare *c, const gp_compare_finding *f)
{
    char b[32], n[32], p[32], m[32];
    export_out_printf(o, "<div class=\"finding %s\"><span class=\"sev\">", status_class(f->status));
    export_out_html(o, f->status);
    export_out_printf(o, "</span><b>%s</b> ", f->id);
    export_out_html(o, f->title);
    export_out_printf(o, "<div class=\"rec\">%s &rarr; %s; ", gp_severity_name(f->sev[0]),
                      gp_severity_name(f->sev[1]));
    export_out_html(o, f->metric_name);
    export_out_printf(o, " %s &rarr; %s</div>",
                      gp_compare_fmt_metric(b, sizeof b, f->metric[0], f->unit),
                      gp_compare_fmt_metric(n, sizeof n, f->metric[1], f->unit));
    if (f->predicted_gain_ns >= 0) {
        const gp_compare_steps *r = gp_compare_step_result(c);
        int64_t saved = r->mean[0] - r->mean[1];
        export_out_printf(o, "<div class=\"rec\">Predicted gain %s per step; measured %s%s.</div>",
                          gp_report_fmt_time(p, sizeof p, f->predicted_gain_ns),
                          saved >= 0 ? "" : "none: the step grew by ",
                          gp_report_fmt_time(m, sizeof m, saved >= 0 ? saved : -saved));
    }
    export_out_puts(o, "</div>\n");
}

static void findings_section(export_out *o, const gp_compare *c)
{
    gp_compare_finding f[MAX_FINDINGS];
    size_t n = gp_compare_findings(c, f, MAX_FINDINGS);
    export_out_puts(o, "<h2>Findings (warn or worse on either side)</h2>\n<section>\n");
    if (n == 0)
        export_out_puts(o, "<p class=\"none\">None fired on either side.</p>\n");
    for (size_t i = 0; i < n; i++)
        finding_block(o, c, &f[i]);
    export_out_puts(o, "</section>\n");
}

static void traces_line(export_out *o, const gp_compare *c)
{
    export_out_puts(o, "<p class=\"note\">");
    for (int s = 0; s < 2; s++) {
        gp_compare_side_info sd;
        gp_compare_side_get(c, (gp_compare_side)s, &sd);
        export_out_printf(o, "%s%s: %zu trace%s (", s ? "<br>" : "", side_names[s], sd.n_traces,
                          sd.n_traces == 1 ? "" : "s");
        for (size_t i = 0; i < sd.n_traces; i++) {
            export_out_puts(o, i ? ", " : "");
            export_out_html(o, sd.labels[i]);
        }
        export_out_printf(o, "), %zu steps analysed", sd.n_steps);
    }
    export_out_puts(o, "</p>\n");
}

static void compare_page(export_out *o, const gp_compare *c, size_t top, const char *title)
{
    const gp_compare_steps *r = gp_compare_step_result(c);
    html_page_head(o, "gprof-train compare", title);
    traces_line(o, c);
    cards(o, r);
    step_section(o, r);
    breakdown_section(o, c);
    moved_section(o, c, 0, top);
    moved_section(o, c, 1, top);
    memory_line(o, c);
    findings_section(o, c);
    html_page_foot(o);
}

gp_status gp_export_compare_html(const gp_compare *c, size_t top, const gp_export_opts *opts,
                                 const char *path, gp_error *err)
{
    char title[512];
    gp_compare_side_info sd[2];
    gp_compare_side_get(c, GP_CMP_BASE, &sd[0]);
    gp_compare_side_get(c, GP_CMP_NEW, &sd[1]);
    if (opts && opts->title)
        snprintf(title, sizeof title, "%s", opts->title);
    else
        snprintf(title, sizeof title, "%s%s vs %s%s",
                 sd[0].n_traces ? html_base_name(sd[0].labels[0]) : "",
                 sd[0].n_traces > 1 ? ", ..." : "",
                 sd[1].n_traces ? html_base_name(sd[1].labels[0]) : "",
                 sd[1].n_traces > 1 ? ", ..." : "");
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    compare_page(&o, c, top, title);
    return export_out_close(&o, err);
}
