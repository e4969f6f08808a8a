/* viewer-export/src/html_charts.c: the three charts of the HTML report, computed from the
 * analysis: the step-time breakdown per step (consecutive steps averaged past MAX_BARS), GPU busy
 * fraction per time bin from the device idle gaps, and allocated/reserved memory (max per bin).
 * Findings' time ranges are drawn as labelled bands on the time charts. */
#include "html_int.h"
#include "gp/trace_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BARS    300
#define UTIL_BINS   240
#define MEM_BINS    800
#define MAX_DEVICES 8

static const char *const bd_colors[GP_BD_COUNT] = {"#3b75af", "#ef8636", "#e3c440", "#9467bd",
                                                   "#519e3e", "#c53a32", "#6fb7b0", "#aaaaaa"};

const char *html_bd_color(gp_bd_cat c)
{
    return bd_colors[c];
}

/* Bars: one per step, or per group of `k` consecutive steps (mean) when there are many. */
static void step_bars(export_out *o, const gp_step *st, size_t n)
{
    size_t k = (n + MAX_BARS - 1) / MAX_BARS, nb = (n + k - 1) / k;
    double *vals = calloc(nb * GP_BD_COUNT, sizeof *vals);
    char **labels = calloc(nb, sizeof *labels);
    const char *names[GP_BD_COUNT];
    for (int c = 0; c < GP_BD_COUNT; c++)
        names[c] = gp_bd_cat_name((gp_bd_cat)c);
    for (size_t b = 0; vals && labels && b < nb; b++) {
        size_t lo = b * k, hi = lo + k < n ? lo + k : n;
        for (size_t i = lo; i < hi; i++)
            for (int c = 0; c < GP_BD_COUNT; c++)
                vals[b * GP_BD_COUNT + c] += (double)st[i].bd[c] / 1e6 / (double)(hi - lo);
        labels[b] = malloc(64);
        if (labels[b] && hi - lo > 1)
            snprintf(labels[b], 64, "steps %lld-%lld", (long long)st[lo].num,
                     (long long)st[hi - 1].num);
        else if (labels[b])
            snprintf(labels[b], 64, "step %lld", (long long)st[lo].num);
    }
    int ok = vals && labels;
    for (size_t b = 0; ok && b < nb; b++)
        ok = labels[b] != NULL;
    export_bar_chart c = {
            "step time breakdown per step", "ms", nb, GP_BD_COUNT, names, bd_colors, vals,
            (const char *const *)labels};
    if (ok)
        export_svg_stacked_bars(o, &c);
    else
        o->err_no = ENOMEM;
    for (size_t b = 0; labels && b < nb; b++)
        free(labels[b]);
    free(labels);
    free(vals);
}

void html_chart_steps(export_out *o, const gp_analysis *a)
{
    size_t n;
    const gp_step *st = gp_analysis_steps(a, &n);
    if (n == 0) {
        export_out_puts(o, "<p class=\"none\">No steps in this trace.</p>\n");
        return;
    }
    step_bars(o, st, n);
    export_out_puts(o, "<div class=\"legend\">");
    for (int c = 0; c < GP_BD_COUNT; c++) {
        export_out_printf(o, "<span><i style=\"background:%s\"></i>", bd_colors[c]);
        export_out_html(o, gp_bd_cat_name((gp_bd_cat)c));
        export_out_puts(o, "</span>");
    }
    export_out_puts(o, "</div>\n");
}

/* The time axis of the trace: seconds past 10 s of trace, else milliseconds. */
void html_time_axis(const gp_analysis *a, html_time *tx)
{
    const gp_trace_info *info = gp_trace_get_info(gp_analysis_trace(a));
    tx->t0 = info->ts_min;
    tx->span = info->ts_max > info->ts_min ? info->ts_max - info->ts_min : 1;
    tx->scale = tx->span > 10 * 1000000000LL ? 1e9 : 1e6;
    tx->unit = tx->scale == 1e9 ? "s" : "ms";
}

static double tx_x(const html_time *tx, int64_t ns)
{
    return (double)(ns - tx->t0) / tx->scale;
}

/* Add the overlap of [a, b) with each bin to acc[] (bins of width w from t0). */
static void spread(double *acc, int nbins, int64_t t0, double w, int64_t a, int64_t b)
{
    if (b <= a)
        return;
    int i0 = (int)((double)(a - t0) / w), i1 = (int)((double)(b - t0) / w);
    for (int i = i0 < 0 ? 0 : i0; i <= i1 && i < nbins; i++) {
        double lo = (double)t0 + w * i, hi = lo + w;
        double s = (double)a > lo ? (double)a : lo, e = (double)b < hi ? (double)b : hi;
        if (e > s)
            acc[i] += e - s;
    }
}

/* Busy % per bin of one device: its span minus its idle gaps. */
static void util_series(const gp_analysis *a, const gp_device_stats *d, const html_time *tx,
                        double *x, double *y)
{
    double busy[UTIL_BINS] = {0}, w = (double)tx->span / UTIL_BINS;
    size_t ng;
    const gp_idle_gap *gaps = gp_analysis_device_gaps(a, &ng);
    spread(busy, UTIL_BINS, tx->t0, w, d->span_ts, d->span_end);
    double idle[UTIL_BINS] = {0};
    for (uint32_t g = d->first_gap; g < d->first_gap + d->n_gaps && g < ng; g++)
        spread(idle, UTIL_BINS, tx->t0, w, gaps[g].ts, gaps[g].end);
    for (int i = 0; i < UTIL_BINS; i++) {
        x[i] = (w * i) / tx->scale;
        double v = (busy[i] - idle[i]) / w * 100.0;
        y[i] = v < 0 ? 0 : v > 100 ? 100 : v;
    }
}

static const char *const dev_colors[MAX_DEVICES] = {"#3b75af", "#ef8636", "#519e3e", "#9467bd",
                                                    "#c53a32", "#6fb7b0", "#8c564b", "#e377c2"};

void html_chart_util(export_out *o, const gp_analysis *a, const export_band *bands, size_t n_bands)
{
    size_t nd;
    const gp_device_stats *dev = gp_analysis_devices(a, &nd);
    if (nd == 0) {
        export_out_puts(o, "<p class=\"none\">No GPU activity in this trace.</p>\n");
        return;
    }
    nd = nd > MAX_DEVICES ? MAX_DEVICES : nd;
    html_time tx;
    html_time_axis(a, &tx);
    static const int nb = UTIL_BINS;
    double(*xy)[2][UTIL_BINS] = malloc(nd * sizeof *xy);
    export_series ser[MAX_DEVICES];
    char names[MAX_DEVICES][32];
    for (size_t i = 0; xy && i < nd; i++) {
        util_series(a, &dev[i], &tx, xy[i][0], xy[i][1]);
        snprintf(names[i], sizeof names[i], "GPU %d busy %%", dev[i].device);
        ser[i] = (export_series){names[i], dev_colors[i], xy[i][0], xy[i][1], (size_t)nb, 1, 1};
    }
    export_line_chart c = {"GPU utilisation over time",
                           tx.unit,
                           "busy %",
                           0,
                           (double)tx.span / tx.scale,
                           0,
                           100,
                           ser,
                           nd,
                           bands,
                           n_bands};
    if (xy)
        export_svg_line_chart(o, &c);
    else
        o->err_no = ENOMEM;
    free(xy);
}

/* Downsample one memory series to at most MEM_BINS points, the max of each bin. */
static size_t mem_points(const gp_mem_series *m, const html_time *tx, int reserved, double div,
                         double *x, double *y)
{
    size_t n = 0;
    double w = (double)tx->span / MEM_BINS;
    int last_bin = -1;
    for (size_t i = 0; i < m->n_points; i++) {
        const gp_mem_point *p = &m->points[i];
        double v = (double)(reserved ? p->reserved : p->allocated) / div;
        int bin = (int)((double)(p->ts - tx->t0) / w);
        bin = bin < 0 ? 0 : bin >= MEM_BINS ? MEM_BINS - 1 : bin;
        if (bin == last_bin && n > 0) {
            y[n - 1] = v > y[n - 1] ? v : y[n - 1];
            continue;
        }
        last_bin = bin;
        x[n] = tx_x(tx, p->ts);
        y[n++] = v;
    }
    return n;
}

const char *html_mem_device(const gp_mem_series *m, char *buf, size_t cap)
{
    const char *dev = m->device_type == GP_MEM_DEVICE_TYPE_CUDA ? "GPU" : "CPU";
    if (m->device_id >= 0)
        snprintf(buf, cap, "%s %d", dev, m->device_id);
    else /* PyTorch writes Device Id -1 for the CPU */
        snprintf(buf, cap, "%s", dev);
    return buf;
}

/* The series to chart: CUDA devices if any were sampled, else the host. */
static size_t pick_memory(const gp_mem_series *ms, size_t n, const gp_mem_series **pick, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++)
        if (ms[i].device_type == GP_MEM_DEVICE_TYPE_CUDA)
            pick[k++] = &ms[i];
    for (size_t i = 0; k == 0 && i < n && k < cap; i++)
        pick[k++] = &ms[i];
    return k;
}

/* The allocated (filled) and reserved (line) series of one memory series, in `b` (4 bins). */
static void mem_pair(const gp_mem_series *m, size_t i, const html_time *tx, double div, double *b,
                     char (*names)[48], export_series *ser)
{
    char dev[32];
    html_mem_device(m, dev, sizeof dev);
    snprintf(names[2 * i], 48, "%s allocated", dev);
    snprintf(names[2 * i + 1], 48, "%s reserved", dev);
    size_t n1 = mem_points(m, tx, 0, div, b, b + MEM_BINS);
    size_t n2 = mem_points(m, tx, 1, div, b + 2 * MEM_BINS, b + 3 * MEM_BINS);
    ser[2 * i] = (export_series){names[2 * i], dev_colors[i], b, b + MEM_BINS, n1, 1, 1};
    ser[2 * i + 1] = (export_series){
            names[2 * i + 1], "#4a5263", b + 2 * MEM_BINS, b + 3 * MEM_BINS, n2, 1, 0};
}

void html_chart_memory(export_out *o, const gp_analysis *a, const export_band *bands,
                       size_t n_bands)
{
    size_t nm;
    const gp_mem_series *ms = gp_analysis_memory(a, &nm), *pick[MAX_DEVICES / 2];
    size_t np = pick_memory(ms, nm, pick, MAX_DEVICES / 2);
    if (np == 0) {
        export_out_puts(o, "<p class=\"none\">No memory records in this trace (record with "
                           "profile_memory=True).</p>\n");
        return;
    }
    int64_t peak = 0;
    for (size_t i = 0; i < np; i++)
        peak = pick[i]->peak_reserved > peak ? pick[i]->peak_reserved : peak;
    double div = peak >= (1LL << 30) ? (double)(1LL << 30) : (double)(1LL << 20);
    html_time tx;
    html_time_axis(a, &tx);
    double *buf = malloc(np * 4 * MEM_BINS * sizeof *buf);
    if (!buf) {
        o->err_no = ENOMEM;
        return;
    }
    export_series ser[MAX_DEVICES];
    char names[MAX_DEVICES][48];
    for (size_t i = 0; i < np; i++)
        mem_pair(pick[i], i, &tx, div, buf + i * 4 * MEM_BINS, names, ser);
    export_line_chart c = {"memory over time",
                           tx.unit,
                           div > (1 << 20) ? "GiB" : "MiB",
                           0,
                           (double)tx.span / tx.scale,
                           0,
                           0,
                           ser,
                           2 * np,
                           bands,
                           n_bands};
    export_svg_line_chart(o, &c);
    free(buf);
    html_series_legend(o, ser, 2 * np);
}

void html_series_legend(export_out *o, const export_series *s, size_t n)
{
    export_out_puts(o, "<div class=\"legend\">");
    for (size_t i = 0; i < n; i++) {
        export_out_printf(o, "<span><i style=\"background:%s\"></i>", s[i].color);
        export_out_html(o, s[i].name);
        export_out_puts(o, "</span>");
    }
    export_out_puts(o, "</div>\n");
}
