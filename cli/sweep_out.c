/* What a sweep prints: the table of settings, each baseline finding's predicted gain beside the
 * measured one, and the same in OUT/sweep.json (schema gprof-train.sweep/1). */
#include "gp/json_str.h"
#include "cli.h"
#include "run_child.h"
#include "sweep_int.h"

#include "gp/compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int sweep_ran(const struct sweep_result *r)
{
    return r->n_times > 0 || r->exit_code != 0 || r->profiled[0];
}

double sweep_time(const struct sweep_result *r)
{
    double v[SWEEP_MAX_REPEAT];
    if (r->n_times == 0)
        return NAN;
    memcpy(v, r->times, (size_t)r->n_times * sizeof(double));
    qsort(v, (size_t)r->n_times, sizeof(double), cmp_double);
    int n = r->n_times;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whether r's timed runs differ from the first setting's by less than the runs can tell apart:
 * compare's test with runs as the unit (gp_change_test_runs, each timed run one value), so
 * "within noise" here and "no clear change" there are one statistic. With one run a side, a
 * change under GP_COMPARE_RUN_NOISE_PCT is noise. */
static int within_noise(const struct sweep *s, const struct sweep_result *r)
{
    const struct sweep_result *b = &s->res[0];
    gp_run_values bv[SWEEP_MAX_REPEAT], rv[SWEEP_MAX_REPEAT];
    if (r == b || r->n_times == 0 || b->n_times == 0)
        return 0;
    for (int i = 0; i < b->n_times; i++)
        bv[i] = (gp_run_values){&b->times[i], 1};
    for (int i = 0; i < r->n_times; i++)
        rv[i] = (gp_run_values){&r->times[i], 1};
    gp_change_test t;
    gp_change_test_runs(bv, (size_t)b->n_times, rv, (size_t)r->n_times, GP_COMPARE_RUN_NOISE_PCT,
                        &t);
    return t.verdict == GP_VERDICT_SAME;
}

static double spread(const struct sweep_result *r)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < r->n_times; i++)
        lo = fmin(lo, r->times[i]), hi = fmax(hi, r->times[i]);
    return r->n_times > 1 ? (hi - lo) / 2 : NAN;
}

const char *sweep_unit(const struct sweep *s, char *buf, size_t cap)
{
    if (s->tmpl)
        snprintf(buf, cap, "per run");
    else if (s->steps > 0)
        snprintf(buf, cap, "per %ld steps", s->steps);
    else
        snprintf(buf, cap, "per epoch");
    return buf;
}

/* ---- predictions ---- */

struct prediction {
    const gp_finding *f;
    double predicted_pct;            /* the step time the fix would save, % (NAN: unknown) */
    double measured_pct;             /* the time `with` saved, % (NAN) */
    const struct sweep_result *with; /* the knob's setting, else the best resolving one, or NULL */
    int resolved;                    /* the finding no longer fires in `with` */
};

static const gp_finding *same_rule(const gp_findings *fs, const gp_finding *f)
{
    size_t n = 0;
    const gp_finding *all = fs ? gp_findings_get(fs, &n) : NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].rule->id, f->rule->id) == 0)
            return &all[i];
    return NULL;
}

/* Does setting i apply the trainer knob "--KEY VALUE" ("--KEY": a switch on) to the baseline:
 * KEY takes VALUE and every other key keeps the baseline's value? */
static int applies_knob(const struct sweep *s, size_t i, const char *knob)
{
    if (!s->spec.trainer || !knob || strncmp(knob, "--", 2) != 0)
        return 0;
    const char *key = knob + 2, *val = key + strcspn(key, " ");
    size_t key_len = (size_t)(val - key), val_len = 2;
    if (*val == ' ')
        val_len = strcspn(++val, " ");
    else
        val = "on";
    int base[SWEEP_MAX_KEYS], idx[SWEEP_MAX_KEYS], hit = 0;
    sweep_setting(&s->spec, 0, base);
    sweep_setting(&s->spec, i, idx);
    for (int k = 0; k < s->spec.n_keys; k++) {
        const struct sweep_key *sk = &s->spec.keys[k];
        if (strlen(sk->name) == key_len && strncmp(sk->name, key, key_len) == 0) {
            const char *v = sk->values[idx[k]];
            if (strlen(v) != val_len || strncmp(v, val, val_len) != 0)
                return 0;
            hit = 1;
        } else if (idx[k] != base[k]) {
            return 0;
        }
    }
    return hit;
}

/* The measured side: the setting that turns the finding's knob, whether or not the finding still
 * fires there (a knob the cores cap removes part of the wait); else the fastest setting where it
 * no longer fires. */
static void measure(const struct sweep *s, const gp_finding *f, struct prediction *p)
{
    double base = sweep_time(&s->res[0]), best = INFINITY;
    for (size_t i = 1; i < s->n && !p->with; i++)
        if (applies_knob(s, i, f->knob) && isfinite(sweep_time(&s->res[i])))
            p->with = &s->res[i], best = sweep_time(&s->res[i]);
    int applied = p->with != NULL;
    for (size_t i = 1; i < s->n && !applied; i++) {
        const gp_finding *g = same_rule(s->res[i].findings, f);
        double t = sweep_time(&s->res[i]);
        if (g && g->severity < GP_SEV_WARN && isfinite(t) && t < best)
            best = t, p->with = &s->res[i];
    }
    if (p->with) {
        const gp_finding *g = same_rule(p->with->findings, f);
        p->resolved = g && g->severity < GP_SEV_WARN;
    }
    if (p->with && base > 0)
        p->measured_pct = (base - best) / base * 100.0;
}

static void predict(const struct sweep *s, const gp_finding *f, struct prediction *p)
{
    gp_unprofiled_gain g;
    *p = (struct prediction){f, NAN, NAN, NULL, 0};
    /* the timed runs have no profiler: predict the share of the step without its own cost */
    if (gp_finding_unprofiled_gain(s->res[0].findings, f, &g) && g.step_ns > 0)
        p->predicted_pct = (g.low_pct + g.high_pct) / 2;
    measure(s, f, p);
}

/* The baseline's findings that fired (warn or worse), in diagnose's order. */
static size_t baseline_findings(const struct sweep *s, const gp_finding **out)
{
    size_t n = 0, k = 0;
    const gp_finding *all = s->res[0].findings ? gp_findings_get(s->res[0].findings, &n) : NULL;
    for (size_t i = 0; i < n; i++)
        if (all[i].severity >= GP_SEV_WARN)
            out[k++] = &all[i];
    return k;
}

/* ---- text ---- */

static void print_row(FILE *out, const struct sweep *s, const struct sweep_result *r, int width)
{
    double t = sweep_time(r), base = sweep_time(&s->res[0]), sp = spread(r);
    fprintf(out, "%-*s ", width, r->label);
    if (isnan(t) && r->exit_code < 0) {
        fputs("failed: the program could not start (see the error above)\n", out);
        return;
    }
    if (isnan(t)) {
        fprintf(out, "failed (exit %d): %s\n", r->exit_code, r->failed_log);
        return;
    }
    fprintf(out, "%9.2f s", t);
    if (isnan(sp))
        fprintf(out, " %9s", "-");
    else
        fprintf(out, " %7.2f s", sp);
    if (base > 0 && isfinite(base))
        fprintf(out, " %8.2fx", base / t);
    else
        fprintf(out, " %9s", "-");
    if (isnan(r->accuracy))
        fprintf(out, " %14s", "-");
    else
        fprintf(out, " %14.4f", r->accuracy);
    fputs(within_noise(s, r) ? "  within noise" : "", out);
    if (r->no_trace_log[0])
        fprintf(out, "  no trace from its profiled window: see %s", r->no_trace_log);
    fputc('\n', out);
}

static void print_predictions(FILE *out, const struct sweep *s)
{
    const gp_finding *fs[64];
    size_t n = baseline_findings(s, fs);
    if (!s->res[0].findings)
        return;
    fprintf(out, "\nfindings of %s: predicted gain, measured gain\n", s->res[0].label);
    if (n == 0)
        fputs("    none fired (warn or worse)\n", out);
    for (size_t i = 0; i < n; i++) {
        struct prediction p;
        predict(s, fs[i], &p);
        fprintf(out, "    %s %s (%s): ", fs[i]->rule->id, fs[i]->rule->title,
                fs[i]->knob ? fs[i]->knob : "no knob");
        if (isnan(p.predicted_pct))
            fputs("predicted -", out);
        else
            fprintf(out, "predicted %.1f%% faster", p.predicted_pct);
        if (p.with)
            fprintf(out, "; measured %.1f%% %s with %s%s\n", fabs(p.measured_pct),
                    p.measured_pct < 0 ? "slower" : "faster", p.with->label,
                    p.resolved ? "" : " (still fires there)");
        else
            fputs("; no setting turned its knob or resolved it\n", out);
    }
}

void sweep_print(FILE *out, const struct sweep *s)
{
    char unit[64];
    int width = 13;
    for (size_t i = 0; i < s->n; i++)
        width = (int)strlen(s->res[i].label) > width ? (int)strlen(s->res[i].label) : width;
    fprintf(out,
            "sweep: %zu setting%s x %ld repeat%s, time %s without the profiler; runs in %s\n\n",
            s->n, s->n == 1 ? "" : "s", s->repeat, s->repeat == 1 ? "" : "s",
            sweep_unit(s, unit, sizeof(unit)), s->out);
    fprintf(out, "%-*s %11s %9s %9s %14s\n", width, "configuration", "time", "spread", "speedup",
            "test accuracy");
    size_t not_run = 0;
    for (size_t i = 0; i < s->n; i++)
        if (sweep_ran(&s->res[i]))
            print_row(out, s, &s->res[i], width);
        else
            not_run++;
    if (not_run)
        fprintf(out, "(%zu setting%s not run%s)\n", not_run, not_run == 1 ? "" : "s",
                s->interrupted ? ": the sweep was interrupted" : "");
    print_predictions(out, s);
}

/* ---- sweep.json ---- */

static void jstring(FILE *f, const char *s)
{
    gp_json_put_str(f, s);
}

static void jnumber(FILE *f, double v, int decimals)
{
    if (isfinite(v))
        fprintf(f, "%.*f", decimals, v);
    else
        fputs("null", f);
}

static void json_setting(FILE *f, const struct sweep *s, size_t i)
{
    const struct sweep_result *r = &s->res[i];
    int idx[SWEEP_MAX_KEYS];
    sweep_setting(&s->spec, i, idx);
    fputs("    {\"label\": ", f);
    jstring(f, r->label);
    fputs(", \"values\": {", f);
    for (int k = 0; k < s->spec.n_keys; k++) {
        fputs(k ? ", " : "", f);
        jstring(f, s->spec.keys[k].name);
        fputs(": ", f);
        jstring(f, s->spec.keys[k].values[idx[k]]);
    }
    fputs("}, \"dir\": ", f);
    jstring(f, r->dir);
    fputs(", \"times_s\": [", f);
    for (int t = 0; t < r->n_times; t++) {
        fputs(t ? ", " : "", f);
        jnumber(f, r->times[t], 4);
    }
    double base = sweep_time(&s->res[0]), t = sweep_time(r);
    fputs("], \"time_s\": ", f);
    jnumber(f, t, 4);
    fputs(", \"speedup\": ", f);
    jnumber(f, base / t, 3);
    fputs(", \"test_accuracy\": ", f);
    jnumber(f, r->accuracy, 4);
    fprintf(f, ", \"within_noise\": %s, \"exit\": %d, \"profiled_trace\": ",
            within_noise(s, r) ? "true" : "false", r->exit_code);
    if (r->profiled[0])
        jstring(f, r->profiled);
    else
        fputs("null", f);
    fputs(", \"fired\": [", f);
    size_t n = 0;
    const gp_finding *all = r->findings ? gp_findings_get(r->findings, &n) : NULL;
    for (size_t k = 0, first = 1; k < n; k++)
        if (all[k].severity >= GP_SEV_WARN) {
            fprintf(f, "%s\"%s\"", first ? "" : ", ", all[k].rule->id);
            first = 0;
        }
    fputs("]}", f);
}

static void json_predictions(FILE *f, const struct sweep *s)
{
    const gp_finding *fs[64];
    size_t n = baseline_findings(s, fs);
    fputs("  \"predictions\": [", f);
    for (size_t i = 0; i < n; i++) {
        struct prediction p;
        predict(s, fs[i], &p);
        fprintf(f, "%s\n    {\"id\": \"%s\", \"title\": ", i ? "," : "", fs[i]->rule->id);
        jstring(f, fs[i]->rule->title);
        fputs(", \"knob\": ", f);
        if (fs[i]->knob)
            jstring(f, fs[i]->knob);
        else
            fputs("null", f);
        fputs(", \"predicted_gain_pct\": ", f);
        jnumber(f, p.predicted_pct, 2);
        fputs(", \"measured_gain_pct\": ", f);
        jnumber(f, p.measured_pct, 2);
        fputs(", \"measured_with\": ", f);
        if (p.with)
            jstring(f, p.with->label);
        else
            fputs("null", f);
        fprintf(f, ", \"resolved\": %s}", p.resolved ? "true" : "false");
    }
    fputs("]\n", f);
}

static void json_head(FILE *f, const struct sweep *s)
{
    char unit[64];
    fputs("{\"schema\": \"gprof-train.sweep/1\",\n  \"command\": ", f);
    if (s->tmpl) {
        fputc('[', f);
        for (int i = 0; i < s->n_tmpl; i++) {
            fputs(i ? ", " : "", f);
            jstring(f, s->tmpl[i]);
        }
        fputc(']', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ",\n  \"unit\": \"%s\", \"repeat\": %ld, \"n_settings\": %zu, \"interrupted\": ",
            sweep_unit(s, unit, sizeof(unit)), s->repeat, s->n);
    if (s->interrupted)
        jstring(f, run_signal_name(s->interrupted) ? run_signal_name(s->interrupted) : "signal");
    else
        fputs("null", f);
    fputs(", \"out\": ", f);
    jstring(f, s->out);
    fputs(",\n", f);
}

int sweep_write_json(const struct sweep *s)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/sweep.json", s->out);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return cli_error("cannot write '%s': %s", tmp, strerror(errno));
    errno = 0;
    json_head(f, s);
    fputs("  \"settings\": [", f);
    for (size_t i = 0, first = 1; i < s->n; i++)
        if (sweep_ran(&s->res[i])) {
            fputs(first ? "\n" : ",\n", f);
            json_setting(f, s, i);
            first = 0;
        }
    fputs("\n  ],\n", f);
    json_predictions(f, s);
    fputs("}\n", f);
    int bad = ferror(f) | (fclose(f) != 0);
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return cli_error("cannot write '%s': %s", path, e ? strerror(e) : "write error");
    }
    return CLI_OK;
}
