/* Building one finding: measurement and severity, the text fields (kept in the findings' arena),
 * evidence rows and time ranges; plus the human number formats shared by the rules. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rules_measure(struct rules_out *o, const char *name, gp_unit unit, double value,
                   const char *cmp, double warn, double crit)
{
    int below = cmp[0] == '<';
    o->f.metric_name = name;
    o->f.metric_unit = unit;
    o->f.metric = value;
    o->f.cmp = below ? "<" : ">=";
    o->f.threshold = o->f.warn_threshold = warn;
    if (isnan(value))
        return;
    if (below ? value < crit : value >= crit)
        rules_fire(o, GP_SEV_CRIT, crit);
    else if (below ? value < warn : value >= warn)
        rules_fire(o, GP_SEV_WARN, warn);
}

void rules_fire(struct rules_out *o, gp_severity sev, double threshold)
{
    o->f.severity = sev;
    o->f.threshold = threshold;
}

static const char *vstrf(struct rules_out *o, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int len = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (len < 0)
        return NULL;
    char *s = trace_arena_alloc(o->arena, (size_t)len + 1);
    if (s)
        vsnprintf(s, (size_t)len + 1, fmt, ap);
    return s;
}

const char *rules_strf(struct rules_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *s = vstrf(o, fmt, ap);
    va_end(ap);
    return s;
}

#define SET_TEXT(field)                                                                            \
    do {                                                                                           \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        (field) = vstrf(o, fmt, ap);                                                               \
        va_end(ap);                                                                                \
        return (field) ? GP_OK : GP_ENOMEM;                                                        \
    } while (0)

gp_status rules_summary(struct rules_out *o, const char *fmt, ...)
{
    SET_TEXT(o->f.summary);
}

gp_status rules_reco(struct rules_out *o, const char *fmt, ...)
{
    SET_TEXT(o->f.recommendation);
}

gp_status rules_knob(struct rules_out *o, const char *fmt, ...)
{
    SET_TEXT(o->f.knob);
}

gp_status rules_gain(struct rules_out *o, int64_t total_ns, int64_t per_step_ns, const char *fmt,
                     ...)
{
    o->f.gain_ns = total_ns;
    o->f.gain_step_ns = per_step_ns;
    SET_TEXT(o->f.gain_text);
}

void rules_cols(struct rules_out *o, size_t n, const gp_evidence_col *cols)
{
    GP_ASSERT(n <= RULES_MAX_COLS);
    memcpy(o->cols, cols, n * sizeof(*cols));
    o->f.n_cols = n;
}

gp_status rules_row(struct rules_out *o, const gp_cell *cells)
{
    size_t nc = o->f.n_cols;
    if (o->f.n_rows >= RULES_MAX_ROWS)
        return GP_OK;
    if (!o->cells) {
        o->cells = calloc(RULES_MAX_ROWS * RULES_MAX_COLS, sizeof(*o->cells));
        if (!o->cells)
            return GP_ENOMEM;
        o->f.cells = o->cells;
    }
    gp_cell *row = o->cells + o->f.n_rows * nc;
    for (size_t i = 0; i < nc; i++) {
        row[i].num = cells[i].num;
        row[i].text = NULL;
        if (o->cols[i].unit == GP_UNIT_TEXT) {
            row[i].text = rules_strf(o, "%s", cells[i].text ? cells[i].text : "");
            if (!row[i].text)
                return GP_ENOMEM;
        }
    }
    o->f.n_rows++;
    return GP_OK;
}

gp_status rules_range(struct rules_out *o, int64_t ts, int64_t end, const char *label)
{
    if (o->f.n_ranges >= RULES_MAX_ROWS)
        return GP_OK;
    if (!o->ranges) {
        o->ranges = calloc(RULES_MAX_ROWS, sizeof(*o->ranges));
        if (!o->ranges)
            return GP_ENOMEM;
        o->f.ranges = o->ranges;
    }
    const char *l = rules_strf(o, "%s", label ? label : "");
    if (!l)
        return GP_ENOMEM;
    o->ranges[o->f.n_ranges++] = (gp_time_range){ts, end, l};
    return GP_OK;
}

const char *rules_fmt_ns(char *buf, size_t cap, int64_t ns)
{
    double v = (double)ns, a = fabs(v);
    if (a >= 1e9)
        snprintf(buf, cap, "%.2f s", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, cap, "%.1f ms", v / 1e6);
    else if (a >= 1e3)
        snprintf(buf, cap, "%.1f us", v / 1e3);
    else
        snprintf(buf, cap, "%lld ns", (long long)ns);
    return buf;
}

const char *rules_fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (fabs(bytes) >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

/* Columns of the copy evidence tables; GT07 leaves out "GPU time". */
static const gp_evidence_col copy_cols[] = {{"copy", GP_UNIT_TEXT},
                                            {"API", GP_UNIT_TEXT},
                                            {"CPU op", GP_UNIT_TEXT},
                                            {"per step", GP_UNIT_COUNT},
                                            {"bytes per call", GP_UNIT_BYTES},
                                            {"GPU time", GP_UNIT_US},
                                            {"host blocked", GP_UNIT_US}};

gp_status rules_copy_evidence(const struct rules_ctx *c, struct rules_out *o, struct rules_agg *agg,
                              int gpu_time)
{
    gp_evidence_col cols[7];
    size_t nc = 0;
    for (size_t i = 0; i < 7; i++)
        if (gpu_time || i != 5)
            cols[nc++] = copy_cols[i];
    rules_agg_finish(agg);
    rules_cols(o, nc, cols);
    for (size_t i = 0; i < agg->n && i < 5; i++) {
        const struct rules_agg_row *r = &agg->rows[i];
        gp_cell row[7] = {{0, gp_trace_str(c->t, r->k[0])},
                          {0, gp_trace_str(c->t, r->k[1])},
                          {0, r->k[2] == GP_STR_NONE ? "-" : gp_trace_str(c->t, r->k[2])},
                          {rules_per_step(c, (double)r->count), NULL},
                          {(double)r->bytes / (double)r->count, NULL},
                          {(double)r->ns / 1e3, NULL},
                          {(double)r->ns2 / 1e3, NULL}};
        if (!gpu_time)
            row[5] = row[6];
        GP_TRY(rules_row(o, row));
    }
    return GP_OK;
}
