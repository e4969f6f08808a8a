/* The rules engine: the rule table (rules/rules_list.h, rules_anchors.md §8), parameter overrides
 * ("RULE.PARAM=VALUE"), rule selection, and gp_rules_run(), which runs each selected rule once
 * over the analysed trace and orders the findings, most costly first. */
#include "model/analysis_int.h"
#include "rules/rules_int.h"
#include "rules/rules_startup.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The catalogue, in id order (rules/rules_list.h). */
static const struct rules_def *const table[] = {
#define RULES_X(name) &rules_##name##_def,
#include "rules/rules_list.h"
#undef RULES_X
};
#define N_RULES    (sizeof(table) / sizeof(table[0]))
#define MAX_PARAMS 12

struct gp_rules {
    int selected[N_RULES];
    int any_selected;
    double p[N_RULES][MAX_PARAMS];
};

size_t gp_rules_count(void)
{
    return N_RULES;
}

const gp_rule_info *gp_rules_info(size_t i)
{
    return i < N_RULES ? table[i]->info : NULL;
}

gp_status gp_rules_new(gp_rules **out, gp_error *err)
{
    gp_rules *r = calloc(1, sizeof(*r));
    *out = r;
    GP_FAIL_IF(!r, GP_ENOMEM, err, "out of memory");
    for (size_t i = 0; i < N_RULES; i++) {
        const gp_rule_info *in = table[i]->info;
        GP_ASSERT(in->n_params <= MAX_PARAMS);
        for (size_t j = 0; j < in->n_params; j++)
            r->p[i][j] = in->params[j].value;
    }
    return GP_OK;
}

void gp_rules_free(gp_rules *r)
{
    free(r);
}

#define NO_RULE (-1L) /* find_rule: no rule has that id or name */

static long find_rule(const char *s, size_t len)
{
    for (size_t i = 0; i < N_RULES; i++) {
        const gp_rule_info *in = table[i]->info;
        if ((strlen(in->id) == len && strncasecmp(in->id, s, len) == 0) ||
            (strlen(in->name) == len && strncasecmp(in->name, s, len) == 0))
            return (long)i;
    }
    return NO_RULE;
}

gp_status gp_rules_select(gp_rules *r, const char *rule, gp_error *err)
{
    long i = find_rule(rule, strlen(rule));
    GP_FAIL_IF(i < 0, GP_EINVAL, err, "unknown rule '%s' (see --list-rules)", rule);
    r->selected[i] = 1;
    r->any_selected = 1;
    return GP_OK;
}

/* Parse a finite number into *out, which is left alone on failure. */
static gp_status parse_value(const char *s, double *out, gp_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    GP_FAIL_IF(end == s || *end || errno || !isfinite(v), GP_EINVAL, err,
               "bad value '%s': expected a number", s);
    *out = v;
    return GP_OK;
}

gp_status gp_rules_set(gp_rules *r, const char *assignment, gp_error *err)
{
    const char *dot = strchr(assignment, '.'), *eq = strchr(assignment, '=');
    GP_FAIL_IF(!dot || !eq || eq < dot, GP_EINVAL, err,
               "bad setting '%s': expected RULE.PARAM=VALUE, e.g. GT01.warn_pct=10", assignment);
    long i = find_rule(assignment, (size_t)(dot - assignment));
    GP_FAIL_IF(i < 0, GP_EINVAL, err, "unknown rule '%.*s' in '%s' (see --list-rules)",
               (int)(dot - assignment), assignment, assignment);
    const char *pname = dot + 1;
    size_t plen = (size_t)(eq - pname);
    const gp_rule_info *in = table[i]->info;
    for (size_t j = 0; j < in->n_params; j++) {
        if (strlen(in->params[j].name) == plen && strncasecmp(in->params[j].name, pname, plen) == 0)
            return parse_value(eq + 1, &r->p[i][j], err);
    }
    return gp_error_set(err, GP_EINVAL, NULL, "rule %s has no parameter '%.*s' (see --list-rules)",
                        in->id, (int)plen, pname);
}

double gp_rules_param(const gp_rules *r, size_t i, size_t j)
{
    return (i < N_RULES && j < table[i]->info->n_params) ? r->p[i][j] : NAN;
}

int gp_rules_selected(const gp_rules *r, size_t i)
{
    return i < N_RULES && (!r->any_selected || r->selected[i]);
}

/* ---- running ---- */

/* Why a rule cannot measure this trace, or NULL when it can. */
static const char *not_applicable(const struct rules_ctx *c, int needs)
{
    if ((needs & RULES_NEEDS_GPU) && !c->has_gpu)
        return "no GPU activity in the trace: not applicable";
    if ((needs & RULES_NEEDS_STEPS) && c->n_steps == 0)
        return "no steps to measure";
    return NULL;
}

/* The median of the analysed steps' times, or 0 with none (or no memory). */
static int64_t median_step(const struct rules_ctx *c)
{
    int64_t *v = c->n_steps ? malloc(c->n_steps * sizeof(*v)) : NULL;
    if (!v)
        return 0;
    for (size_t i = 0; i < c->n_steps; i++)
        v[i] = c->steps[i].end - c->steps[i].ts;
    int64_t m = rules_median(v, c->n_steps);
    free(v);
    return m;
}

/* Run rule i into *f, its texts in `arena`, what its cause took into *cause. */
static gp_status run_one(struct rules_ctx *c, const gp_rules *r, size_t i, gp_finding *f,
                         struct rules_cause *cause, trace_arena *arena)
{
    struct rules_out o;
    memset(&o, 0, sizeof(o));
    o.arena = arena;
    o.f.rule = table[i]->info;
    o.f.metric = o.f.warn_threshold = NAN;
    o.f.cmp = ">=";
    o.f.gain_ns = o.f.gain_step_ns = o.f.gain_prof_step_ns = -1;
    o.f.cols = o.cols;
    const char *why = not_applicable(c, table[i]->needs);
    gp_status rc = why ? rules_summary(&o, "%s", why) : table[i]->fn(c, r->p[i], &o);
    if (rc == GP_OK && !o.f.summary)
        rc = rules_summary(&o, "%s: nothing measured", table[i]->info->title);
    *f = o.f;
    *cause = o.cause;
    cause->needs |= table[i]->needs; /* and what the rule found of this trace */
    /* the columns live in `o`; copy them where the finding can keep them */
    gp_evidence_col *cols = trace_arena_alloc(arena, sizeof(o.cols));
    if (!cols) {
        free(o.cells), free(o.ranges);
        f->cells = NULL, f->ranges = NULL;
        return GP_ENOMEM;
    }
    memcpy(cols, o.cols, sizeof(o.cols));
    f->cols = cols;
    return rc;
}

static double gain_key(const gp_finding *f)
{
    return f->gain_ns > 0 ? (double)f->gain_ns : 0.0;
}

/* Fired first; then larger gain, higher severity, lower id. */
static int cmp_findings(const void *pa, const void *pb)
{
    const gp_finding *a = pa, *b = pb;
    int fa = a->severity > GP_SEV_OK, fb = b->severity > GP_SEV_OK;
    if (fa != fb)
        return fb - fa;
    if (fa && gain_key(a) != gain_key(b))
        return gain_key(a) < gain_key(b) ? 1 : -1;
    if (fa && a->severity != b->severity)
        return (int)b->severity - (int)a->severity;
    return strcmp(a->rule->id, b->rule->id);
}

/* The selected rules of one phase, taken in table order by two threads (each with its own
 * context and arena); each finding goes to its rule's slot, so the result is the same as one
 * thread's. Rules are independent: the analysis' lazy lists are built under its lock. */
typedef struct phase_run {
    const gp_rules *r;
    gp_finding *slots;
    struct rules_cause *causes;
    size_t rule[N_RULES], n;
    atomic_size_t next;
} phase_run;

typedef struct phase_thread {
    phase_run *run;
    struct rules_ctx *c;
    trace_arena *arena;
    gp_status rc;
} phase_thread;

static void take_rules(void *arg)
{
    phase_thread *t = arg;
    phase_run *pr = t->run;
    for (size_t k; (k = atomic_fetch_add(&pr->next, 1)) < pr->n;) {
        gp_status rc = run_one(t->c, pr->r, pr->rule[k], &pr->slots[k], &pr->causes[k], t->arena);
        if (rc != GP_OK && t->rc == GP_OK)
            t->rc = rc;
    }
}

static gp_status run_phase(struct rules_ctx *c, const gp_rules *r, int phase, gp_findings *fs,
                           struct rules_cause *causes)
{
    phase_run pr = {.r = r, .slots = fs->items + fs->n, .causes = causes + fs->n};
    for (size_t i = 0; i < N_RULES; i++)
        if (table[i]->phase == phase && gp_rules_selected(r, i))
            pr.rule[pr.n++] = i;
    atomic_init(&pr.next, 0);
    c->done = fs;
    struct rules_ctx c2;
    rules_ctx_fork(&c2, c);
    trace_arena arena2 = {0};
    phase_thread t0 = {&pr, c, &fs->arena, GP_OK}, t1 = {&pr, &c2, &arena2, GP_OK};
    trace_par2(analysis_threads_of(c->a), take_rules, &t0, take_rules, &t1);
    trace_arena_adopt(&fs->arena, &arena2);
    rules_ctx_release_fork(&c2);
    fs->n += pr.n;
    return t0.rc != GP_OK ? t0.rc : t1.rc;
}

/* The flags of a finding's rule. */
static unsigned rule_needs(const gp_finding *f)
{
    for (size_t i = 0; i < N_RULES; i++)
        if (table[i]->info == f->rule)
            return table[i]->needs;
    return 0;
}

/* Both phases, then one verdict across rules (rules_explain.c, rules_worth.c, start-up:
 * rules_startup.c), then the order. */
static gp_status run_all(struct rules_ctx *c, const gp_rules *r, gp_findings *fs, gp_error *err)
{
    struct rules_cause *causes = calloc(N_RULES, sizeof(*causes));
    gp_status rc = causes ? run_phase(c, r, 0, fs, causes) : GP_ENOMEM;
    if (rc == GP_OK)
        rc = run_phase(c, r, 1, fs, causes);
    if (causes) /* frees the causes' intervals, also after a failure */
        rc = rules_explain(fs, causes, rc);
    free(causes);
    if (rc == GP_OK)
        rc = rules_small_gains(fs);
    if (rc == GP_OK)
        rc = rules_startup_demote(fs, c, rule_needs);
    if (rc != GP_OK)
        return gp_error_set(err, rc, fs->trace, "rules: %s", gp_strerror(rc));
    qsort(fs->items, fs->n, sizeof(*fs->items), cmp_findings);
    return GP_OK;
}

/* Python frames (with_stack=True) in the analysed steps: the profiler records each call, which
 * slows Python-heavy parts of the step more than the rest. */
static size_t python_frames(const struct rules_ctx *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_ev; i++)
        n += c->ev[i].kind == GP_EV_PYTHON && rules_step_at(c, c->ev[i].ts) >= 0;
    return n;
}

gp_status gp_rules_run(const gp_rules *r, const gp_analysis *a, gp_findings **out, gp_error *err)
{
    gp_rules *defaults = NULL;
    *out = NULL;
    if (!r) {
        GP_TRY(gp_rules_new(&defaults, err));
        r = defaults;
    }
    gp_findings *fs = calloc(1, sizeof(*fs));
    struct rules_ctx c;
    gp_status rc = fs ? rules_ctx_init(&c, a, err) : GP_ENOMEM;
    if (rc == GP_OK) {
        /* findings outlive the trace: keep their own copy of its path */
        const char *path = gp_trace_get_info(c.t)->path;
        fs->items = calloc(N_RULES, sizeof(*fs->items));
        fs->trace = trace_arena_strdup(&fs->arena, path ? path : "", path ? strlen(path) : 0);
        fs->n_steps = c.n_all_steps;
        fs->n_analysed = c.n_steps;
        fs->mean_step_ns = c.n_steps ? c.step_ns / (int64_t)c.n_steps : 0;
        fs->median_step_ns = median_step(&c);
        fs->python_frames_per_step = rules_per_step(&c, (double)python_frames(&c));
        rc = fs->items && fs->trace ? rules_profiler_cost(&c, &c.cost) : GP_ENOMEM;
        fs->cost = c.cost; /* the rules read it from their context: computed once */
        if (rc == GP_OK && c.n_steps && (rc = rules_ctx_intervals(&c)) == GP_OK)
            fs->gpu_busy_step_ns = rules_ivs_in_steps(&c, &c.busy) / (int64_t)c.n_steps;
        if (rc == GP_OK)
            rc = rules_startup_scan(&c);
        rules_ledger_read(&c, &fs->ledger);
        if (rc == GP_OK)
            rc = run_all(&c, r, fs, err);
        rules_ctx_release(&c);
    }
    gp_rules_free(defaults);
    if (rc != GP_OK) {
        if (rc == GP_ENOMEM && err && err->code == GP_OK)
            gp_error_set(err, rc, NULL, "out of memory");
        gp_findings_free(fs);
        return rc;
    }
    *out = fs;
    return GP_OK;
}

const gp_finding *gp_findings_get(const gp_findings *f, size_t *n)
{
    *n = f->n;
    return f->items;
}

const char *gp_findings_trace(const gp_findings *f)
{
    return f->trace;
}

double gp_findings_python_frames(const gp_findings *f)
{
    return f->python_frames_per_step;
}

size_t gp_findings_steps(const gp_findings *f, size_t *analysed, int64_t *mean_step_ns)
{
    if (analysed)
        *analysed = f->n_analysed;
    if (mean_step_ns)
        *mean_step_ns = f->mean_step_ns;
    return f->n_steps;
}

gp_severity gp_findings_max_severity(const gp_findings *f)
{
    gp_severity s = GP_SEV_OK;
    for (size_t i = 0; i < f->n; i++)
        if (f->items[i].severity > s)
            s = f->items[i].severity;
    return s;
}

void gp_findings_free(gp_findings *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free((void *)f->items[i].cells);
        free((void *)f->items[i].ranges);
    }
    free(f->items);
    trace_arena_release(&f->arena);
    free(f);
}

static const char *const sev_names[] = {"ok", "info", "warn", "crit"};

const char *gp_severity_name(gp_severity s)
{
    return (unsigned)s < 4 ? sev_names[s] : "?";
}

gp_status gp_severity_parse(const char *s, gp_severity *out, gp_error *err)
{
    for (int i = GP_SEV_INFO; i <= GP_SEV_CRIT; i++) {
        if (strcmp(s, sev_names[i]) == 0) {
            *out = (gp_severity)i;
            return GP_OK;
        }
    }
    return gp_error_set(err, GP_EINVAL, NULL, "unknown severity '%s': use info, warn or crit", s);
}
