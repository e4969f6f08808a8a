/* viewer-export/src/svg_chart.c: inline SVG charts for the HTML report: stacked bars (the step
 * time breakdown) and line/area charts with highlighted x ranges (GPU utilisation, memory).
 * Fixed 960x260 viewBox scaled by CSS; every label goes through the HTML escaper. */
#include "export_int.h"

#include <math.h>
#include <stdio.h>

#define W       960.0
#define H       260.0
#define LEFT    64.0
#define RIGHT   16.0
#define TOP     24.0
#define BOTTOM  36.0
#define PLOT_W  (W - LEFT - RIGHT)
#define PLOT_H  (H - TOP - BOTTOM)
#define N_TICKS 5

double export_nice_step(double range, int n)
{
    if (!(range > 0) || !isfinite(range))
        return 1.0;
    double raw = range / (n > 0 ? n : 1);
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
}

/* A tick label without trailing zeros: 0, 0.5, 12, 2500. */
static void tick_label(char *buf, size_t cap, double v, double step)
{
    int decimals = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, cap, "%.*f", decimals > 6 ? 6 : decimals, fabs(v) < step * 1e-6 ? 0.0 : v);
}

static void open_svg(export_out *o, const char *title)
{
    export_out_printf(
            o, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", W, H);
    export_out_html(o, title);
    export_out_puts(o, "\" xmlns=\"http://www.w3.org/2000/svg\"><title>");
    export_out_html(o, title);
    export_out_puts(o, "</title>\n");
}

/* Horizontal grid lines and y labels from 0 (or y_min) to y_max; the y unit above the axis. */
static void y_axis(export_out *o, double y_min, double y_max, const char *unit)
{
    double step = export_nice_step(y_max - y_min, N_TICKS);
    char label[64];
    for (double v = ceil(y_min / step) * step; v <= y_max + step * 1e-9; v += step) {
        double y = TOP + PLOT_H - (v - y_min) / (y_max - y_min) * PLOT_H;
        tick_label(label, sizeof label, v, step);
        export_out_printf(o,
                          "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                          LEFT, y, W - RIGHT, y);
        export_out_printf(o, "<text class=\"ylab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", LEFT - 6,
                          y + 4, label);
    }
    export_out_printf(o, "<text class=\"unit\" x=\"%.1f\" y=\"%.1f\">", 4.0, 12.0);
    export_out_html(o, unit);
    export_out_puts(o, "</text>\n");
}

static double bar_total(const export_bar_chart *c, size_t b)
{
    double t = 0;
    for (size_t s = 0; s < c->n_series; s++)
        t += c->values[b * c->n_series + s];
    return t;
}

/* One bar: its parts bottom-up, each with a tooltip "<bar>: <series> 1.234 ms". */
static void one_bar(export_out *o, const export_bar_chart *c, size_t b, double x, double w,
                    double y_max)
{
    double y = TOP + PLOT_H;
    export_out_puts(o, "<g>");
    for (size_t s = 0; s < c->n_series; s++) {
        double v = c->values[b * c->n_series + s];
        double h = v / y_max * PLOT_H;
        if (!(h > 0))
            continue;
        y -= h;
        export_out_printf(o, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"",
                          x, y, w, h);
        export_out_html(o, c->colors[s]);
        export_out_puts(o, "\"><title>");
        export_out_html(o, c->bar_labels[b]);
        export_out_puts(o, ": ");
        export_out_html(o, c->series_names[s]);
        export_out_printf(o, " %.3f ", v);
        export_out_html(o, c->y_unit);
        export_out_puts(o, "</title></rect>");
    }
    export_out_puts(o, "</g>\n");
}

/* At most ~12 x labels: every k-th bar. */
static void bar_labels(export_out *o, const export_bar_chart *c, double slot)
{
    size_t every = c->n_bars / 12 + 1;
    for (size_t b = 0; b < c->n_bars; b += every) {
        export_out_printf(o, "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">", LEFT + slot * (b + 0.5),
                          TOP + PLOT_H + 16);
        export_out_html(o, c->bar_labels[b]);
        export_out_puts(o, "</text>");
    }
    export_out_puts(o, "\n");
}

void export_svg_stacked_bars(export_out *o, const export_bar_chart *c)
{
    double y_max = 0;
    for (size_t b = 0; b < c->n_bars; b++)
        y_max = fmax(y_max, bar_total(c, b));
    if (!(y_max > 0))
        y_max = 1;
    y_max = ceil(y_max / export_nice_step(y_max, N_TICKS)) * export_nice_step(y_max, N_TICKS);
    open_svg(o, c->title);
    y_axis(o, 0, y_max, c->y_unit);
    double slot = c->n_bars ? PLOT_W / (double)c->n_bars : PLOT_W;
    double w = slot > 3 ? slot * 0.8 : slot;
    for (size_t b = 0; b < c->n_bars; b++)
        one_bar(o, c, b, LEFT + slot * b + (slot - w) / 2, w, y_max);
    bar_labels(o, c, slot);
    export_out_printf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                      LEFT, TOP + PLOT_H, W - RIGHT, TOP + PLOT_H);
    export_out_puts(o, "</svg>\n");
}

static double px_x(const export_line_chart *c, double x)
{
    double r = c->x_max > c->x_min ? c->x_max - c->x_min : 1;
    return LEFT + (x - c->x_min) / r * PLOT_W;
}

static double px_y(double y, double y_min, double y_max)
{
    double v = (y - y_min) / (y_max - y_min);
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    return TOP + PLOT_H - v * PLOT_H;
}

static void one_band(export_out *o, const export_line_chart *c, const export_band *b)
{
    double x0 = px_x(c, b->x0), x1 = px_x(c, b->x1);
    if (x1 - x0 < 1.5) /* keep short gaps visible */
        x1 = x0 + 1.5;
    export_out_printf(o,
                      "<g class=\"band\"><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                      "height=\"%.1f\" fill=\"",
                      x0, TOP, x1 - x0, PLOT_H);
    export_out_html(o, b->color ? b->color : "#d62728");
    export_out_puts(o, "\" fill-opacity=\"0.13\"><title>");
    export_out_html(o, b->tooltip ? b->tooltip : b->label);
    export_out_puts(o, "</title></rect>");
    if (b->label && b->label[0]) {
        export_out_printf(o, "<text class=\"bandlab\" x=\"%.2f\" y=\"%.1f\" fill=\"", x0 + 2,
                          TOP + 10 + 11 * (b->row % 4));
        export_out_html(o, b->color ? b->color : "#d62728");
        export_out_puts(o, "\">");
        export_out_html(o, b->label);
        export_out_puts(o, "</text>");
    }
    export_out_puts(o, "</g>\n");
}

/* The series' path: "M x y L x y ...", as steps when asked, closed to the baseline for fills. */
static void series_path(export_out *o, const export_line_chart *c, const export_series *s,
                        double y_min, double y_max)
{
    double base = TOP + PLOT_H, prev_y = base;
    for (size_t i = 0; i < s->n; i++) {
        double x = px_x(c, s->x[i]), y = px_y(s->y[i], y_min, y_max);
        if (i == 0)
            export_out_printf(o, s->fill ? "M%.2f %.2fL%.2f %.2f" : "M%.2f %.2f", x,
                              s->fill ? base : y, x, y);
        else if (s->steps)
            export_out_printf(o, "L%.2f %.2fL%.2f %.2f", x, prev_y, x, y);
        else
            export_out_printf(o, "L%.2f %.2f", x, y);
        prev_y = y;
    }
    if (s->n && s->steps) /* hold the last value to the right edge */
        export_out_printf(o, "L%.2f %.2f", px_x(c, c->x_max), prev_y);
    if (s->n && s->fill)
        export_out_printf(o, "L%.2f %.2fZ", s->steps ? px_x(c, c->x_max) : px_x(c, s->x[s->n - 1]),
                          base);
}

static void one_series(export_out *o, const export_line_chart *c, const export_series *s,
                       double y_min, double y_max)
{
    if (s->n == 0)
        return;
    export_out_puts(o, "<path d=\"");
    series_path(o, c, s, y_min, y_max);
    export_out_puts(o, "\" stroke=\"");
    export_out_html(o, s->color);
    export_out_puts(o, "\" stroke-width=\"1.5\" fill=\"");
    export_out_html(o, s->fill ? s->color : "none");
    export_out_printf(o, "\" fill-opacity=\"%s\"><title>", s->fill ? "0.25" : "0");
    export_out_html(o, s->name);
    export_out_puts(o, "</title></path>\n");
}

static void data_y_range(const export_line_chart *c, double *y_min, double *y_max)
{
    *y_min = 0;
    *y_max = 0;
    for (size_t k = 0; k < c->n_series; k++)
        for (size_t i = 0; i < c->series[k].n; i++)
            *y_max = fmax(*y_max, c->series[k].y[i]);
    if (!(*y_max > 0))
        *y_max = 1;
    double step = export_nice_step(*y_max, N_TICKS);
    *y_max = ceil(*y_max / step) * step;
}

static void x_axis(export_out *o, const export_line_chart *c)
{
    double step = export_nice_step(c->x_max - c->x_min, 8);
    char label[64];
    for (double v = ceil(c->x_min / step) * step; v <= c->x_max + step * 1e-9; v += step) {
        tick_label(label, sizeof label, v, step);
        export_out_printf(o, "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">%s</text>", px_x(c, v),
                          TOP + PLOT_H + 16, label);
    }
    export_out_printf(o, "<text class=\"xunit\" x=\"%.1f\" y=\"%.1f\">", W - RIGHT, H - 4);
    export_out_html(o, c->x_unit);
    export_out_printf(o,
                      "</text><line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\"/>\n",
                      LEFT, TOP + PLOT_H, W - RIGHT, TOP + PLOT_H);
}

void export_svg_line_chart(export_out *o, const export_line_chart *c)
{
    double y_min = c->y_min, y_max = c->y_max;
    if (!(y_max > y_min))
        data_y_range(c, &y_min, &y_max);
    open_svg(o, c->title);
    y_axis(o, y_min, y_max, c->y_unit);
    for (size_t b = 0; b < c->n_bands; b++)
        one_band(o, c, &c->bands[b]);
    for (size_t k = 0; k < c->n_series; k++)
        one_series(o, c, &c->series[k], y_min, y_max);
    x_axis(o, c);
    export_out_puts(o, "</svg>\n");
}
