/* Writing findings: a text section per trace (fired findings with their fix, gain and evidence
 * table, then one line per rule that did not fire) or one JSON document whose schema,
 * "gprof-train.diagnose/1", is documented at gp_findings_write() in gp/rules.h. */
#include "gp/json_str.h"
#include "gp/text.h"
#include "rules/rules_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const unit_names[] = {"", "us", "%", "bytes", "count", "GB/s"};

const char *gp_unit_name(gp_unit u)
{
    return (unsigned)u < 6 ? unit_names[u] : "";
}

gp_status gp_findings_format_parse(const char *s, gp_findings_format *out, gp_error *err)
{
    if (strcmp(s, "text") == 0 || strcmp(s, "json") == 0) {
        *out = s[0] == 't' ? GP_FINDINGS_TEXT : GP_FINDINGS_JSON;
        return GP_OK;
    }
    return gp_error_set(err, GP_EINVAL, NULL, "unknown format '%s': use text or json", s);
}

/* ---- text ---- */

static const char *fmt_value(char *buf, size_t cap, double v, gp_unit u)
{
    if (isnan(v))
        return "n/a";
    switch (u) {
    case GP_UNIT_US:
        return rules_fmt_ns(buf, cap, (int64_t)llround(v * 1e3));
    case GP_UNIT_PCT:
        snprintf(buf, cap, "%.1f%%", v);
        break;
    case GP_UNIT_BYTES:
        return rules_fmt_bytes(buf, cap, v);
    case GP_UNIT_GBPS:
        snprintf(buf, cap, "%.2f GB/s", v);
        break;
    default:
        snprintf(buf, cap, v == floor(v) && fabs(v) < 1e15 ? "%.0f" : "%.2f", v);
    }
    return buf;
}

static const char *cell_text(char *buf, size_t cap, const gp_finding *f, size_t r, size_t c)
{
    const gp_cell *cell = &f->cells[r * f->n_cols + c];
    if (f->cols[c].unit == GP_UNIT_TEXT)
        return cell->text ? cell->text : "";
    return fmt_value(buf, cap, cell->num, f->cols[c].unit);
}

/* Widest a text column is padded to, and cut at (names in tables); the last column is never cut:
 * it holds the sentence that explains the row. */
#define MAX_TEXT_CELL 48

/* Text left-aligned, numbers right-aligned; the last column is not padded (no trailing blanks). */
static void write_cell(FILE *out, const char *s, int width, size_t c, size_t n, int text)
{
    if (c)
        fputs("  ", out);
    if (text && c + 1 == n)
        fputs(s, out);
    else
        fprintf(out, text ? "%-*.*s" : "%*.*s", width, MAX_TEXT_CELL, s);
}

/* A cell as the terminal shows it: control bytes of names from the trace escaped. */
static const char *cell_shown(char *clean, size_t cap, const gp_finding *f, size_t r, size_t c)
{
    char buf[64];
    gp_text_clean(clean, cap, cell_text(buf, sizeof(buf), f, r, c));
    return clean;
}

static void write_evidence(FILE *out, const gp_finding *f)
{
    int width[RULES_MAX_COLS];
    char buf[256];
    for (size_t c = 0; c < f->n_cols; c++) {
        width[c] = (int)strlen(f->cols[c].name);
        for (size_t r = 0; r < f->n_rows; r++) {
            int w = (int)strlen(cell_shown(buf, sizeof(buf), f, r, c));
            width[c] = w > width[c] ? (w > MAX_TEXT_CELL ? MAX_TEXT_CELL : w) : width[c];
        }
    }
    fputs("    ", out);
    for (size_t c = 0; c < f->n_cols; c++)
        write_cell(out, f->cols[c].name, width[c], c, f->n_cols, f->cols[c].unit == GP_UNIT_TEXT);
    fputc('\n', out);
    for (size_t r = 0; r < f->n_rows; r++) {
        fputs("    ", out);
        for (size_t c = 0; c < f->n_cols; c++)
            write_cell(out, cell_shown(buf, sizeof(buf), f, r, c), width[c], c, f->n_cols,
                       f->cols[c].unit == GP_UNIT_TEXT);
        fputc('\n', out);
    }
}

static double gain_share(const gp_finding *f, int64_t mean_step)
{
    return mean_step > 0 ? 100.0 * (double)f->gain_step_ns / (double)mean_step : 0.0;
}

/* Per step, and as a share of the (profiled) step: the share carries over to a run without
 * the profiler where it slows every part of the step alike. */
static void write_gain(FILE *out, const gp_finding *f, int64_t mean_step)
{
    char a[32], b[32];
    if (f->gain_ns < 0 && !f->gain_text)
        return;
    fputs("    gain: ", out);
    gp_fputs_clean(out, f->gain_text);
    if (f->gain_ns >= 0)
        fprintf(out, "%s(%s per step = %.0f%% of the step, %s in all)", f->gain_text ? " " : "",
                rules_fmt_ns(a, sizeof(a), f->gain_step_ns), gain_share(f, mean_step),
                rules_fmt_ns(b, sizeof(b), f->gain_ns));
    fputc('\n', out);
}

/* The share without the profiler's own time, and how sure it is (gp_finding_unprofiled_gain). */
static void write_unprofiled(FILE *out, const gp_findings *fs, const gp_finding *f)
{
    char s[32];
    gp_unprofiled_gain g;
    if (!gp_finding_unprofiled_gain(fs, f, &g))
        return;
    fputs("    without the profiler: ", out);
    if (g.step_ns <= 0)
        fputs("unknown (its own cost holds the whole step)", out);
    else if (lround(g.low_pct) == lround(g.high_pct))
        fprintf(out, "%.0f%% of a %s step", g.high_pct, rules_fmt_ns(s, sizeof(s), g.step_ns));
    else
        fprintf(out, "%.0f-%.0f%% of a %s step", g.low_pct, g.high_pct,
                rules_fmt_ns(s, sizeof(s), g.step_ns));
    fprintf(out, "; how sure: %s (%s)\n", gp_sureness_name(g.sure), g.why);
}

static void write_text_finding(FILE *out, const gp_findings *fs, const gp_finding *f,
                               int64_t mean_step)
{
    char v[32], t[32];
    const gp_rule_info *r = f->rule;
    if (f->severity == GP_SEV_OK) {
        fprintf(out, "[ok]   %s %s: ", r->id, r->title);
        gp_fputs_clean(out, f->summary);
        fputc('\n', out);
        return;
    }
    fprintf(out, "[%s] %s %s: ", gp_severity_name(f->severity), r->id, r->title);
    gp_fputs_clean(out, f->summary);
    if (f->metric_name && !isnan(f->metric) && f->severity >= GP_SEV_WARN)
        fprintf(out, " (%s %s %s %s)", f->metric_name,
                fmt_value(v, sizeof(v), f->metric, f->metric_unit), f->cmp,
                fmt_value(t, sizeof(t), f->threshold, f->metric_unit));
    fputc('\n', out);
    if (f->recommendation) {
        fputs("    fix:  ", out);
        gp_fputs_clean(out, f->recommendation);
        fputc('\n', out);
    }
    if (f->knob) {
        fputs("    knob: ", out);
        gp_fputs_clean(out, f->knob);
        fputc('\n', out);
    }
    write_gain(out, f, mean_step);
    write_unprofiled(out, fs, f);
    if (f->n_rows)
        write_evidence(out, f);
}

static const char *const cost_sources[] = {"none", "measured", "gaps", "torch"};

/* "profiler's own cost: 0.4 ms a step (120 records x 3.1 us, estimated from the gaps ...)" */
static void write_cost(FILE *out, const gp_profiler_cost *k)
{
    char a[32], b[32], o[32];
    if (k->per_step_ns <= 0 && k->source == GP_COST_NONE)
        return;
    fprintf(out, "   the profiler's own cost: %s a step (%.0f records x %s, %s",
            rules_fmt_ns(a, sizeof(a), k->per_step_ns), k->records_per_step,
            rules_fmt_ns(b, sizeof(b), k->record_cost_ns),
            k->source == GP_COST_MEASURED ? "measured by the profiler"
            : k->source == GP_COST_GAPS   ? "estimated from the gaps between records"
            : k->source == GP_COST_TORCH  ? "2.5x the gaps between records: torch.profiler's "
                                            "cost as measured"
                                          : "a record's cost not known");
    if (k->overhead_ns > 0)
        fprintf(out, "; %s of CUPTI overhead", rules_fmt_ns(o, sizeof(o), k->overhead_ns));
    if (k->step_reads_ns > 0)
        fprintf(out, "; %s reading the scheduler's figures at the step boundary",
                rules_fmt_ns(o, sizeof(o), k->step_reads_ns));
    if (k->cupti_api_ns > 0)
        fprintf(out, "; %s that CUPTI adds to the CUDA calls it traces, as measured on an H200",
                rules_fmt_ns(o, sizeof(o), k->cupti_api_ns));
    fputs(")\n", out);
}

/* "[ok]   15 rules did not fire: GT02, GT03, ... (gprof-train diagnose says why for each)" */
static void write_quiet_rules(FILE *out, const gp_finding *f, size_t n)
{
    size_t quiet = 0;
    for (size_t i = 0; i < n; i++)
        quiet += f[i].severity == GP_SEV_OK;
    if (quiet == 0)
        return;
    fprintf(out, "[ok]   %zu rule%s did not fire:", quiet, quiet == 1 ? "" : "s");
    for (size_t i = 0, k = 0; i < n; i++)
        if (f[i].severity == GP_SEV_OK)
            fprintf(out, "%s %s", k++ ? "," : "", f[i].rule->id);
    fputs(" (diagnose says why for each)\n", out);
}

static void write_text(FILE *out, const gp_findings *fs, int brief)
{
    char m[32];
    size_t n, analysed;
    int64_t mean;
    size_t steps = gp_findings_steps(fs, &analysed, &mean);
    fputs("== ", out);
    gp_fputs_clean(out, fs->trace);
    fprintf(out, ": %zu steps (%zu analysed), mean step %s\n", steps, analysed,
            rules_fmt_ns(m, sizeof(m), mean));
    double py = gp_findings_python_frames(fs);
    if (py >= 1)
        fprintf(out,
                "   note: %.0f Python frames per step were recorded (with_stack=True); the "
                "profiler "
                "slows Python-heavy parts (a DataLoader, a Python loss) more than the rest, so "
                "gains there may be high: confirm without with_stack\n",
                py);
    write_cost(out, gp_findings_profiler_cost(fs));
    const gp_finding *f = gp_findings_get(fs, &n);
    for (size_t i = 0; i < n; i++)
        if (!brief || f[i].severity != GP_SEV_OK)
            write_text_finding(out, fs, &f[i], mean);
    if (brief)
        write_quiet_rules(out, f, n);
}

/* ---- JSON ---- */

static void json_str(FILE *out, const char *s)
{
    gp_json_put_str(out, s); /* NULL: null */
}

static void json_num(FILE *out, double v)
{
    char buf[64];
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    snprintf(buf, sizeof(buf), "%.3f", v);
    char *end = buf + strlen(buf) - 1;
    while (*end == '0')
        *end-- = 0;
    if (*end == '.')
        *end = 0;
    fputs(strcmp(buf, "-0") == 0 ? "0" : buf, out);
}

static void json_evidence(FILE *out, const gp_finding *f)
{
    fputs("\"evidence\":{\"columns\":[", out);
    for (size_t c = 0; c < f->n_cols; c++) {
        fputs(c ? ",{\"name\":" : "{\"name\":", out);
        json_str(out, f->cols[c].name);
        fputs(",\"unit\":", out);
        json_str(out, gp_unit_name(f->cols[c].unit));
        fputc('}', out);
    }
    fputs("],\"rows\":[", out);
    for (size_t r = 0; r < f->n_rows; r++) {
        fputs(r ? ",[" : "[", out);
        for (size_t c = 0; c < f->n_cols; c++) {
            const gp_cell *cell = &f->cells[r * f->n_cols + c];
            if (c)
                fputc(',', out);
            if (f->cols[c].unit == GP_UNIT_TEXT)
                json_str(out, cell->text);
            else
                json_num(out, cell->num);
        }
        fputc(']', out);
    }
    fputs("]}", out);
}

static void json_ranges(FILE *out, const gp_finding *f)
{
    fputs("\"ranges\":[", out);
    for (size_t i = 0; i < f->n_ranges; i++) {
        const gp_time_range *r = &f->ranges[i];
        fputs(i ? ",{\"start_us\":" : "{\"start_us\":", out);
        json_num(out, (double)r->ts / 1e3);
        fputs(",\"dur_us\":", out);
        json_num(out, (double)(r->end - r->ts) / 1e3);
        fputs(",\"label\":", out);
        json_str(out, r->label);
        fputc('}', out);
    }
    fputc(']', out);
}

static void json_head(FILE *out, const gp_finding *f)
{
    fputs("{\"id\":", out);
    json_str(out, f->rule->id);
    fputs(",\"name\":", out);
    json_str(out, f->rule->name);
    fputs(",\"title\":", out);
    json_str(out, f->rule->title);
    fputs(",\"severity\":", out);
    json_str(out, gp_severity_name(f->severity));
    fprintf(out, ",\"fired\":%s,\"metric\":{\"name\":", f->severity ? "true" : "false");
    json_str(out, f->metric_name ? f->metric_name : "");
    fputs(",\"value\":", out);
    json_num(out, f->metric);
    fputs(",\"unit\":", out);
    json_str(out, gp_unit_name(f->metric_unit));
    fputs(",\"threshold\":", out);
    json_num(out, f->threshold);
    fputs(",\"cmp\":", out);
    json_str(out, f->cmp);
    fputs("},\"summary\":", out);
    json_str(out, f->summary);
}

static void json_unprofiled(FILE *out, const gp_findings *fs, const gp_finding *f)
{
    gp_unprofiled_gain g;
    fputs(",\"without_profiler\":", out);
    if (!gp_finding_unprofiled_gain(fs, f, &g)) {
        fputs("null", out);
        return;
    }
    fputs("{\"step_us\":", out);
    json_num(out, g.step_ns > 0 ? (double)g.step_ns / 1e3 : NAN);
    fputs(",\"low_pct\":", out);
    json_num(out, g.low_pct);
    fputs(",\"high_pct\":", out);
    json_num(out, g.high_pct);
    fputs(",\"sure\":", out);
    json_str(out, gp_sureness_name(g.sure));
    fputs(",\"why\":", out);
    json_str(out, g.why);
    if (g.capture_known) { /* libprof's capture-health ledger on this finding */
        fputs(",\"capture\":{\"sure\":", out);
        json_str(out, gp_sureness_name(g.capture_sure));
        fputs(",\"why\":", out);
        json_str(out, g.capture_why);
        fputc('}', out);
    }
    fputc('}', out);
}

static void json_cost(FILE *out, const gp_profiler_cost *k)
{
    fputs(",\"profiler_cost\":{\"per_step_us\":", out);
    json_num(out, (double)k->per_step_ns / 1e3);
    fputs(",\"overhead_per_step_us\":", out);
    json_num(out, (double)k->overhead_ns / 1e3);
    fputs(",\"step_reads_per_step_us\":", out);
    json_num(out, (double)k->step_reads_ns / 1e3);
    fputs(",\"cupti_api_per_step_us\":", out);
    json_num(out, (double)k->cupti_api_ns / 1e3);
    fputs(",\"records_per_step\":", out);
    json_num(out, k->records_per_step);
    fputs(",\"record_cost_ns\":", out);
    json_num(out, (double)k->record_cost_ns);
    fputs(",\"source\":", out);
    json_str(out, cost_sources[k->source]);
    fputs(",\"step_cv\":", out);
    json_num(out, k->step_cv);
    fputc('}', out);
}

static void json_finding(FILE *out, const gp_findings *fs, const gp_finding *f, int64_t mean_step)
{
    json_head(out, f);
    fputs(",\"recommendation\":", out);
    json_str(out, f->recommendation);
    fputs(",\"knob\":", out);
    json_str(out, f->knob);
    fputs(",\"estimated_gain\":", out);
    if (f->gain_ns >= 0) {
        fputs("{\"total_us\":", out);
        json_num(out, (double)f->gain_ns / 1e3);
        fputs(",\"per_step_us\":", out);
        json_num(out, (double)f->gain_step_ns / 1e3);
        fputs(",\"share_of_step_pct\":", out);
        json_num(out, gain_share(f, mean_step));
        fputs(",\"text\":", out);
        json_str(out, f->gain_text);
        json_unprofiled(out, fs, f);
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputc(',', out);
    json_evidence(out, f);
    fputc(',', out);
    json_ranges(out, f);
    fputc('}', out);
}

static void json_trace(FILE *out, const gp_findings *fs)
{
    size_t n, analysed;
    int64_t mean;
    size_t steps = gp_findings_steps(fs, &analysed, &mean);
    fputs("{\"trace\":", out);
    json_str(out, fs->trace);
    fprintf(out, ",\"steps\":%zu,\"steps_analysed\":%zu,\"mean_step_us\":", steps, analysed);
    json_num(out, (double)mean / 1e3);
    fputs(",\"python_frames_per_step\":", out);
    json_num(out, gp_findings_python_frames(fs));
    json_cost(out, gp_findings_profiler_cost(fs));
    fputs(",\"unprofiled_step_us\":", out);
    json_num(out, (double)gp_findings_unprofiled_step_ns(fs) / 1e3);
    fputs(",\"max_severity\":", out);
    json_str(out, gp_severity_name(gp_findings_max_severity(fs)));
    fputs(",\"findings\":[", out);
    const gp_finding *f = gp_findings_get(fs, &n);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_finding(out, fs, &f[i], mean);
    }
    fputs("]}", out);
}

static void write_json(FILE *out, const gp_findings *const *fs, size_t n)
{
    gp_severity max = GP_SEV_OK;
    for (size_t i = 0; i < n; i++)
        if (gp_findings_max_severity(fs[i]) > max)
            max = gp_findings_max_severity(fs[i]);
    fputs("{\"schema\":\"gprof-train.diagnose/1\",\"max_severity\":", out);
    json_str(out, gp_severity_name(max));
    fputs(",\"traces\":[", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n" : "\n", out);
        json_trace(out, fs[i]);
    }
    fputs("]}\n", out);
}

gp_status gp_findings_write(FILE *out, const gp_findings *const *f, size_t n,
                            gp_findings_format format, gp_error *err)
{
    if (format == GP_FINDINGS_JSON) {
        write_json(out, f, n);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (i)
                fputc('\n', out);
            write_text(out, f[i], format == GP_FINDINGS_TEXT_BRIEF);
        }
    }
    GP_FAIL_IF(ferror(out), GP_EIO, err, "cannot write the findings");
    return GP_OK;
}
