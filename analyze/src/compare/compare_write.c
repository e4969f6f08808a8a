/* compare_write.c: a comparison as text (sections: step time and verdict, breakdown, rows that
 * moved, peak memory, findings) or as one JSON document (gprof-train.compare/1). */
#include "gp/json_str.h"
#include "gp/text.h"
#include "compare/compare_int.h"
#include "rules/rules_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_WIDTH      52
#define MAX_LISTED_PATH 4

gp_status gp_compare_format_parse(const char *s, gp_compare_format *out, gp_error *err)
{
    if (s && (strcmp(s, "text") == 0 || strcmp(s, "json") == 0)) {
        *out = s[0] == 't' ? GP_COMPARE_TEXT : GP_COMPARE_JSON;
        return GP_OK;
    }
    return gp_error_set(err, GP_EINVAL, NULL, "unknown format '%s': use text or json", s ? s : "");
}

/* ---- what both formats list ---- */

static const char *row_status(const struct cmp_row *r)
{
    return r->calls[0] == 0 ? "new" : r->calls[1] == 0 ? "vanished" : "changed";
}

static double row_change(const struct cmp_row *r)
{
    return r->time_ns[1] - r->time_ns[0];
}

static int moved_order(const void *x, const void *y)
{
    const struct cmp_row *a = *(const struct cmp_row *const *)x;
    const struct cmp_row *b = *(const struct cmp_row *const *)y;
    double da = fabs(row_change(a)), db = fabs(row_change(b));
    if (da != db)
        return da < db ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* The `top` rows of one kind (device or not) that moved most; rows the same on both sides are
 * left out. @return the count, the rows in *out (caller frees), or 0 with *out NULL. */
static size_t moved_rows(const gp_compare *c, int is_device, size_t top,
                         const struct cmp_row ***out)
{
    const struct cmp_row **v = malloc((c->n_rows ? c->n_rows : 1) * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; v && i < c->n_rows; i++) {
        const struct cmp_row *r = &c->rows[i];
        if (r->is_device == is_device && (row_change(r) != 0 || r->calls[0] != r->calls[1]))
            v[n++] = r;
    }
    if (v)
        qsort(v, n, sizeof(*v), moved_order);
    *out = v;
    return n < top ? n : top;
}

/* The findings worth listing: fired (warn or above) on at least one side. One that fired on BASE
 * and does not apply to NEW (no metric: no GPU activity, no steps) is "not applicable", not
 * "resolved". */
static const char *finding_status(const struct cmp_finding *m)
{
    int base = m->sev[0] >= GP_SEV_WARN, now = m->sev[1] >= GP_SEV_WARN;
    if (base && !now && (!m->f[1] || isnan(m->f[1]->metric)))
        return "not applicable";
    return base && now ? "still" : base ? "resolved" : now ? "new" : NULL;
}

static double metric_of(const struct cmp_finding *m, int s)
{
    return m->f[s] ? m->f[s]->metric : NAN;
}

/* The side that names a finding's metric and unit: BASE's, unless the rule could not be
 * evaluated there (no metric: no GPU activity, no steps), so that neither depends on which run
 * is BASE. */
static const gp_finding *described(const struct cmp_finding *m)
{
    const gp_finding *b = m->f[0], *n = m->f[1];
    if (b && b->metric_name)
        return b;
    return n && n->metric_name ? n : b ? b : n;
}

static const char *metric_name(const gp_finding *f)
{
    return f->metric_name ? f->metric_name : "metric";
}

static int64_t predicted_gain(const struct cmp_finding *m)
{
    int measured = m->f[1] && !isnan(m->f[1]->metric);
    return measured && m->sev[0] >= GP_SEV_WARN ? m->f[0]->gain_step_ns : -1;
}

/* ---- the parts, for other writers ---- */

void gp_compare_side_get(const gp_compare *c, gp_compare_side side, gp_compare_side_info *out)
{
    const struct cmp_side *sd = &c->side[side];
    out->n_traces = sd->n;
    out->n_runs = sd->n_runs;
    out->n_steps = sd->n_steps;
    out->labels = (const char *const *)sd->labels;
    memcpy(out->bd_ns, sd->bd_mean, sizeof(out->bd_ns));
    out->peak_alloc = sd->peak_alloc;
}

size_t gp_compare_moved(const gp_compare *c, int device, gp_compare_row *out, size_t cap)
{
    const struct cmp_row **v = NULL;
    size_t n = moved_rows(c, device != 0, cap, &v);
    for (size_t i = 0; i < n; i++) {
        out[i] = (gp_compare_row){v[i]->name, row_status(v[i]), {0}, {0}};
        memcpy(out[i].calls, v[i]->calls, sizeof(out[i].calls));
        memcpy(out[i].time_ns, v[i]->time_ns, sizeof(out[i].time_ns));
    }
    free(v);
    return n;
}

size_t gp_compare_findings(const gp_compare *c, gp_compare_finding *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_findings && n < cap; i++) {
        const struct cmp_finding *m = &c->findings[i];
        const char *status = finding_status(m);
        if (!status)
            continue;
        const gp_finding *any = described(m);
        out[n++] = (gp_compare_finding){
                any->rule->id,    any->rule->title,       status,
                metric_name(any), {m->sev[0], m->sev[1]}, {metric_of(m, 0), metric_of(m, 1)},
                any->metric_unit, predicted_gain(m)};
    }
    return n;
}

/* ---- text ---- */

static void text_side(FILE *out, const gp_compare *c, int s)
{
    const struct cmp_side *sd = &c->side[s];
    fprintf(out, "%-4s  %zu run%s, %zu trace%s, %zu step%s analysed\n", s ? "NEW" : "BASE",
            sd->n_runs, sd->n_runs == 1 ? "" : "s", sd->n, sd->n == 1 ? "" : "s", sd->n_steps,
            sd->n_steps == 1 ? "" : "s");
    for (size_t i = 0; i < sd->n && i < MAX_LISTED_PATH; i++)
        fprintf(out, "      %s\n", sd->labels[i]);
    if (sd->n > MAX_LISTED_PATH)
        fprintf(out, "      ... and %zu more\n", sd->n - MAX_LISTED_PATH);
}

/* A signed duration: "+1.2 ms", "-30.0 us", "0 ns". */
static const char *fmt_delta(char *buf, size_t cap, double ns)
{
    int64_t v = llround(ns);
    buf[0] = v > 0 ? '+' : 0;
    buf[1] = 0;
    rules_fmt_ns(buf + (v > 0), cap - 1, v);
    return buf;
}

static void text_change(FILE *out, double base, double now)
{
    if (base > 0)
        fprintf(out, "  %+8.1f%%\n", (now - base) / base * 100.0);
    else
        fputs("         -\n", out);
}

/* A row of two durations and their change: in percent (`pct`), else as a duration. */
static void text_time_row(FILE *out, const char *name, double base, double now, int pct)
{
    char b[32], n[32], d[32];
    fprintf(out, "    %-16s %10s %10s", name, rules_fmt_ns(b, sizeof(b), llround(base)),
            rules_fmt_ns(n, sizeof(n), llround(now)));
    if (pct)
        text_change(out, base, now);
    else
        fprintf(out, " %10s\n", fmt_delta(d, sizeof(d), now - base));
}

#define SPREAD_NOTE_PCT 20.0 /* a spread of a run's steps worth saying */

/* What the runs can tell: with one run a side, the warning; else the detectable change;
 * and a word when the steps show a busy machine, whose runs may differ by more than the prior. */
static void text_detectable(FILE *out, const gp_compare_steps *r)
{
    if (r->verdict == GP_VERDICT_TOO_FEW)
        return;
    if (r->n_runs[0] == 1 && r->n_runs[1] == 1)
        fprintf(out,
                "one run per side: changes under %.1f%% can't be told from run-to-run "
                "variation (give several runs a side: BASE... --vs NEW...)\n",
                r->detectable_pct);
    else
        fprintf(out, "smallest change these runs can detect: %.1f%% (%zu vs %zu runs)\n",
                r->detectable_pct, r->n_runs[0], r->n_runs[1]);
    if (r->spread_pct >= SPREAD_NOTE_PCT)
        fprintf(out,
                "    a run's steps spread over %.0f%% (p25 to p75): a busy machine (other "
                "processes on the cores?); its runs may differ by more (--run-noise)\n",
                r->spread_pct);
}

static void text_steps(FILE *out, const gp_compare *c)
{
    const gp_compare_steps *r = &c->res;
    fprintf(out, "\nstep time               BASE        NEW    change\n");
    text_time_row(out, "mean", (double)r->mean[0], (double)r->mean[1], 1);
    text_time_row(out, "p50", (double)r->p50[0], (double)r->p50[1], 1);
    text_time_row(out, "p95", (double)r->p95[0], (double)r->p95[1], 1);
    fprintf(out, "verdict: %s (mean %+.1f%%", gp_verdict_name(r->verdict), r->change_pct);
    if (r->verdict == GP_VERDICT_TOO_FEW)
        fprintf(out, "; a test needs 3 steps a side, %zu vs %zu", r->n_steps[0], r->n_steps[1]);
    else
        fprintf(out,
                "; typical step %+.1f%%, 95%% CI %+.1f%% .. %+.1f%%, p = %.2g; %zu vs %zu runs, "
                "%zu vs %zu steps",
                r->typical_change_pct, r->ci_lo_pct, r->ci_hi_pct, r->p_value, r->n_runs[0],
                r->n_runs[1], r->n_steps[0], r->n_steps[1]);
    fputs(")\n", out);
    text_detectable(out, r);
}

static void text_breakdown(FILE *out, const gp_compare *c)
{
    fprintf(out, "\nbreakdown per step      BASE        NEW    change\n");
    for (int k = 0; k < GP_BD_COUNT; k++) {
        double b = c->side[0].bd_mean[k], n = c->side[1].bd_mean[k];
        if (llround(b) != 0 || llround(n) != 0)
            text_time_row(out, gp_bd_cat_name((gp_bd_cat)k), b, n, 0);
    }
}

static void text_rows(FILE *out, const gp_compare *c, int is_device, size_t top)
{
    const struct cmp_row **v = NULL;
    size_t n = moved_rows(c, is_device, top, &v);
    fprintf(out, "\n%s that moved most, per step (%s)\n", is_device ? "kernels" : "ops",
            is_device ? "device time" : "self CPU");
    if (n == 0)
        fputs("    none: the same on both sides\n", out);
    else
        fprintf(out, "    %-*s %9s %9s %10s %10s %10s\n", NAME_WIDTH, "name", "calls BASE", "NEW",
                "time BASE", "NEW", "change");
    for (size_t i = 0; i < n; i++) {
        const struct cmp_row *r = v[i];
        char b[32], w[32], d[32], name[256];
        gp_text_clean(name, sizeof(name), r->name); /* no escape codes from the trace */
        int cut = (int)strlen(name) > NAME_WIDTH;
        fprintf(out, "    %-*.*s%s %9.2f %9.2f %10s %10s %10s", cut ? NAME_WIDTH - 3 : NAME_WIDTH,
                cut ? NAME_WIDTH - 3 : NAME_WIDTH, name, cut ? "..." : "", r->calls[0], r->calls[1],
                rules_fmt_ns(b, sizeof(b), llround(r->time_ns[0])),
                rules_fmt_ns(w, sizeof(w), llround(r->time_ns[1])),
                fmt_delta(d, sizeof(d), row_change(r)));
        fprintf(out, "%s%s\n", strcmp(row_status(r), "changed") ? "  " : "",
                strcmp(row_status(r), "changed") ? row_status(r) : "");
    }
    free(v);
}

const char *gp_compare_fmt_metric(char *buf, size_t cap, double v, gp_unit u)
{
    if (isnan(v))
        snprintf(buf, cap, "n/a");
    else if (u == GP_UNIT_US)
        rules_fmt_ns(buf, cap, llround(v * 1e3));
    else if (u == GP_UNIT_BYTES)
        rules_fmt_bytes(buf, cap, v);
    else
        snprintf(buf, cap, "%.1f%s", v, u == GP_UNIT_PCT ? "%" : "");
    return buf;
}

static void text_gain(FILE *out, const gp_compare *c, const struct cmp_finding *m)
{
    int64_t predicted = predicted_gain(m);
    char p[32], g[32];
    if (predicted < 0)
        return;
    fprintf(out, "                    predicted gain %s per step, measured %s\n",
            rules_fmt_ns(p, sizeof(p), predicted),
            rules_fmt_ns(g, sizeof(g), c->res.mean[0] - c->res.mean[1]));
}

static void text_findings(FILE *out, const gp_compare *c)
{
    fputs("\nfindings (warn or worse on either side)\n", out);
    size_t listed = 0;
    for (size_t i = 0; i < c->n_findings; i++) {
        const struct cmp_finding *m = &c->findings[i];
        const char *status = finding_status(m);
        if (!status)
            continue;
        const gp_finding *any = described(m);
        char b[32], n[32];
        fprintf(out, "    %-14s  %s %s: %s -> %s; %s %s -> %s\n", status, any->rule->id,
                any->rule->title, gp_severity_name(m->sev[0]), gp_severity_name(m->sev[1]),
                metric_name(any),
                gp_compare_fmt_metric(b, sizeof(b), metric_of(m, 0), any->metric_unit),
                gp_compare_fmt_metric(n, sizeof(n), metric_of(m, 1), any->metric_unit));
        text_gain(out, c, m);
        listed++;
    }
    if (listed == 0)
        fputs("    none fired on either side\n", out);
}

static void text_memory(FILE *out, const gp_compare *c)
{
    int64_t b = c->side[0].peak_alloc, n = c->side[1].peak_alloc;
    char bb[32], nb[32];
    fputs("\npeak device memory allocated: ", out);
    if (b < 0 && n < 0) {
        fputs("not recorded ([memory] events need profile_memory=True)\n", out);
        return;
    }
    fprintf(out, "%s -> %s", b < 0 ? "not recorded" : rules_fmt_bytes(bb, sizeof(bb), (double)b),
            n < 0 ? "not recorded" : rules_fmt_bytes(nb, sizeof(nb), (double)n));
    if (b > 0 && n >= 0)
        fprintf(out, " (%+.1f%%)", (double)(n - b) / (double)b * 100.0);
    fputc('\n', out);
}

static void write_text(FILE *out, const gp_compare *c, size_t top)
{
    text_side(out, c, 0);
    text_side(out, c, 1);
    text_steps(out, c);
    text_breakdown(out, c);
    text_rows(out, c, 0, top);
    text_rows(out, c, 1, top);
    text_memory(out, c);
    text_findings(out, c);
}

/* ---- JSON ---- */

static void put_string(FILE *out, const char *s)
{
    gp_json_put_str(out, s);
}

/* A number in us (from ns) or as is, 3 decimals at most, null when not finite. */
static void put_number(FILE *out, double v)
{
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    double r = round(v * 1000.0) / 1000.0;
    fprintf(out, "%.*f", r == floor(r) ? 0 : 3, r == 0 ? 0.0 : r);
}

static void put_pair(FILE *out, double b, double n)
{
    fputc('[', out);
    put_number(out, b);
    fputs(", ", out);
    put_number(out, n);
    fputc(']', out);
}

static void put_pair_us(FILE *out, const char *key, double b, double n)
{
    fprintf(out, "\"%s\": ", key);
    put_pair(out, b / 1e3, n / 1e3);
}

static void json_side(FILE *out, const gp_compare *c, int s)
{
    fprintf(out, "\"%s\": {\"traces\": [", s ? "new" : "base");
    for (size_t i = 0; i < c->side[s].n; i++) {
        fputs(i ? ", " : "", out);
        put_string(out, c->side[s].labels[i]);
    }
    fprintf(out, "], \"runs\": %zu, \"steps\": %zu}", c->side[s].n_runs, c->side[s].n_steps);
}

static void json_steps(FILE *out, const gp_compare *c)
{
    const gp_compare_steps *r = &c->res;
    fputs("\"step_time\": {", out);
    put_pair_us(out, "mean_us", (double)r->mean[0], (double)r->mean[1]);
    fputs(", ", out);
    put_pair_us(out, "p50_us", (double)r->p50[0], (double)r->p50[1]);
    fputs(", ", out);
    put_pair_us(out, "p95_us", (double)r->p95[0], (double)r->p95[1]);
    fputs(", \"change_pct\": ", out);
    put_number(out, r->change_pct);
    fputs(", \"typical_change_pct\": ", out);
    put_number(out, r->typical_change_pct);
    fputs(", \"ci95_pct\": ", out);
    if (isnan(r->ci_lo_pct))
        fputs("null", out);
    else
        put_pair(out, r->ci_lo_pct, r->ci_hi_pct);
    fputs(", \"detectable_pct\": ", out);
    put_number(out, r->detectable_pct);
    fputs(", \"spread_pct\": ", out);
    put_number(out, r->spread_pct);
    fputs(", \"run_noise_pct\": ", out);
    put_number(out, r->run_noise_pct);
    fputs(", \"p_value\": ", out);
    if (isnan(r->p_value))
        fputs("null", out);
    else
        fprintf(out, "%.3g", r->p_value);
    fprintf(out, ", \"verdict\": \"%s\"}", gp_verdict_name(r->verdict));
}

static void json_breakdown(FILE *out, const gp_compare *c)
{
    fputs("\"breakdown\": [", out);
    for (int k = 0; k < GP_BD_COUNT; k++) {
        double b = c->side[0].bd_mean[k], n = c->side[1].bd_mean[k];
        fprintf(out, "%s{\"category\": \"%s\", \"base_us\": ", k ? ", " : "",
                gp_bd_cat_name((gp_bd_cat)k));
        put_number(out, b / 1e3);
        fputs(", \"new_us\": ", out);
        put_number(out, n / 1e3);
        fputs(", \"change_us\": ", out);
        put_number(out, (n - b) / 1e3);
        fputc('}', out);
    }
    fputc(']', out);
}

static void json_rows(FILE *out, const gp_compare *c, int is_device, size_t top)
{
    const struct cmp_row **v = NULL;
    size_t n = moved_rows(c, is_device, top, &v);
    fprintf(out, "\"%s\": [", is_device ? "kernels" : "ops");
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", out);
        put_string(out, v[i]->name);
        fprintf(out, ", \"status\": \"%s\", \"calls\": ", row_status(v[i]));
        put_pair(out, v[i]->calls[0], v[i]->calls[1]);
        fputs(", ", out);
        put_pair_us(out, "time_us", v[i]->time_ns[0], v[i]->time_ns[1]);
        fputs(", \"change_us\": ", out);
        put_number(out, row_change(v[i]) / 1e3);
        fputc('}', out);
    }
    fputc(']', out);
    free(v);
}

static void json_memory(FILE *out, const gp_compare *c)
{
    fputs("\"peak_memory_bytes\": [", out);
    for (int s = 0; s < 2; s++) {
        fputs(s ? ", " : "", out);
        if (c->side[s].peak_alloc < 0)
            fputs("null", out);
        else
            fprintf(out, "%lld", (long long)c->side[s].peak_alloc);
    }
    fputc(']', out);
}

static void json_finding(FILE *out, const gp_compare *c, const struct cmp_finding *m)
{
    const gp_finding *any = described(m);
    fprintf(out, "{\"id\": \"%s\", \"title\": ", any->rule->id);
    put_string(out, any->rule->title);
    fprintf(out,
            ", \"status\": \"%s\", \"severity\": [\"%s\", \"%s\"], \"metric\": ", finding_status(m),
            gp_severity_name(m->sev[0]), gp_severity_name(m->sev[1]));
    put_pair(out, metric_of(m, 0), metric_of(m, 1));
    fprintf(out, ", \"unit\": \"%s\", \"predicted_gain_us\": ", gp_unit_name(any->metric_unit));
    int64_t predicted = predicted_gain(m);
    put_number(out, predicted < 0 ? NAN : (double)predicted / 1e3);
    fputs(", \"measured_gain_us\": ", out);
    put_number(out, predicted < 0 ? NAN : (double)(c->res.mean[0] - c->res.mean[1]) / 1e3);
    fputc('}', out);
}

static void json_findings(FILE *out, const gp_compare *c)
{
    fputs("\"findings\": [", out);
    int first = 1;
    for (size_t i = 0; i < c->n_findings; i++) {
        if (!finding_status(&c->findings[i]))
            continue;
        fputs(first ? "\n    " : ",\n    ", out);
        json_finding(out, c, &c->findings[i]);
        first = 0;
    }
    fputc(']', out);
}

static void write_json(FILE *out, const gp_compare *c, size_t top)
{
    fputs("{\"schema\": \"gprof-train.compare/1\",\n  ", out);
    json_side(out, c, 0);
    fputs(",\n  ", out);
    json_side(out, c, 1);
    fputs(",\n  ", out);
    json_steps(out, c);
    fputs(",\n  ", out);
    json_breakdown(out, c);
    fputs(",\n  ", out);
    json_rows(out, c, 0, top);
    fputs(",\n  ", out);
    json_rows(out, c, 1, top);
    fputs(",\n  ", out);
    json_memory(out, c);
    fputs(",\n  ", out);
    json_findings(out, c);
    fputs("}\n", out);
}

gp_status gp_compare_write(FILE *out, const gp_compare *c, gp_compare_format format, size_t top,
                           gp_error *err)
{
    if (format == GP_COMPARE_JSON)
        write_json(out, c, top);
    else
        write_text(out, c, top);
    if (fflush(out) != 0 || ferror(out))
        return gp_error_set(err, GP_EIO, NULL, "cannot write the comparison");
    return GP_OK;
}
