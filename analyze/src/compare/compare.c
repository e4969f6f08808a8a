/* compare.c: a trace summarised for a comparison, and the two sides merged: pooled steps, the
 * breakdown per step, key-averages rows per step matched by name, peak memory, findings by rule.
 */
#include "compare/compare_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- one trace ---- */

static gp_status keep_steps(gp_compare_part *p, const gp_analysis *a)
{
    size_t n = 0;
    const gp_step *st = gp_analysis_steps(a, &n);
    size_t warmup = (n >= 2 && !st[0].synthetic) ? 1 : 0; /* as the rules engine drops it */
    p->n_all_steps = n;
    p->n_steps = n - warmup;
    p->steps = malloc((p->n_steps ? p->n_steps : 1) * sizeof(int64_t));
    if (!p->steps)
        return GP_ENOMEM;
    for (size_t i = warmup; i < n; i++) {
        p->steps[i - warmup] = st[i].end - st[i].ts;
        for (int c = 0; c < GP_BD_COUNT; c++)
            p->bd_total[c] += st[i].bd[c];
    }
    return GP_OK;
}

static gp_status keep_rows(gp_compare_part *p, const gp_analysis *a, gp_error *err)
{
    gp_keyavg k;
    gp_status st = gp_keyavg_compute(a, GP_GROUP_NAME, GP_SORT_COUNT, &k, err);
    if (st != GP_OK)
        return st;
    p->rows = calloc(k.n_rows ? k.n_rows : 1, sizeof(*p->rows));
    int failed = !p->rows;
    for (size_t i = 0; !failed && i < k.n_rows; i++) {
        const gp_keyavg_row *r = &k.rows[i];
        if (!r->is_device && strcmp(r->name, "ProfilerStep*") == 0)
            continue; /* the step itself: its time is the step time above */
        if (r->is_device && r->is_annotation)
            continue; /* an annotation's GPU-side span: its kernels are rows already */
        struct cmp_row *o = &p->rows[p->n_rows];
        o->name = strdup(r->name);
        if (!o->name) {
            failed = 1;
            break;
        }
        o->is_device = r->is_device;
        o->calls[0] = (double)r->count;
        o->time_ns[0] = (double)(r->is_device ? r->self_device : r->self_cpu);
        p->n_rows++;
    }
    gp_keyavg_release(&k);
    return failed ? GP_ENOMEM : GP_OK;
}

static int64_t device_peak(const gp_analysis *a)
{
    size_t n = 0;
    const gp_mem_series *m = gp_analysis_memory(a, &n);
    int64_t peak = -1;
    for (size_t i = 0; i < n; i++)
        if (m[i].device_type == 1 && m[i].peak_allocated > peak)
            peak = m[i].peak_allocated;
    return peak;
}

gp_status gp_compare_part_new(const gp_analysis *a, const gp_rules *rules, gp_compare_part **out,
                              gp_error *err)
{
    gp_compare_part *p = calloc(1, sizeof(*p));
    *out = NULL;
    if (!p)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    gp_status st = keep_steps(p, a);
    if (st == GP_OK)
        st = keep_rows(p, a, err);
    if (st == GP_OK)
        st = gp_rules_run(rules, a, &p->findings, err);
    p->peak_alloc = device_peak(a);
    if (st != GP_OK) {
        gp_compare_part_free(p);
        return st == GP_ENOMEM ? gp_error_set(err, GP_ENOMEM, NULL, "out of memory") : st;
    }
    *out = p;
    return GP_OK;
}

void gp_compare_part_free(gp_compare_part *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_rows; i++)
        free(p->rows[i].name);
    free(p->rows);
    free(p->steps);
    gp_findings_free(p->findings);
    free(p);
}

/* ---- the comparison ---- */

gp_status gp_compare_new(gp_compare **out, gp_error *err)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    (*out)->run_noise_pct = GP_COMPARE_RUN_NOISE_PCT;
    return GP_OK;
}

void gp_compare_set_run_noise(gp_compare *c, double pct)
{
    c->run_noise_pct = pct;
}

void gp_compare_free(gp_compare *c)
{
    if (!c)
        return;
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < c->side[s].n; i++) {
            gp_compare_part_free(c->side[s].parts[i]);
            free(c->side[s].labels[i]);
        }
        for (size_t i = 0; i < c->side[s].n_rows; i++)
            free(c->side[s].rows[i].name);
        free(c->side[s].rows);
        free(c->side[s].worst);
        free(c->side[s].parts);
        free(c->side[s].labels);
        free(c->side[s].run_of);
        free(c->side[s].steps);
        free(c->side[s].run_start);
    }
    for (size_t i = 0; i < c->n_rows; i++)
        free(c->rows[i].name);
    free(c->rows);
    free(c->findings);
    free(c);
}

static gp_status grow_side(struct cmp_side *s)
{
    size_t cap = s->cap ? 2 * s->cap : 4;
    gp_compare_part **parts = realloc(s->parts, cap * sizeof(*parts));
    if (parts)
        s->parts = parts;
    char **labels = parts ? realloc(s->labels, cap * sizeof(*labels)) : NULL;
    if (labels)
        s->labels = labels;
    size_t *run_of = labels ? realloc(s->run_of, cap * sizeof(*run_of)) : NULL;
    if (!run_of)
        return GP_ENOMEM;
    s->run_of = run_of, s->cap = cap;
    return GP_OK;
}

static int row_order(const void *x, const void *y)
{
    const struct cmp_row *a = x, *b = y;
    if (a->is_device != b->is_device)
        return a->is_device - b->is_device;
    return strcmp(a->name, b->name);
}

/* Merge the part's rows into the side's (both sorted), moving their names. @return GP_OK or
 * GP_ENOMEM. */
static gp_status fold_rows(struct cmp_side *s, gp_compare_part *p)
{
    qsort(p->rows, p->n_rows, sizeof(*p->rows), row_order);
    struct cmp_row *m = calloc(s->n_rows + p->n_rows + 1, sizeof(*m));
    if (!m)
        return GP_ENOMEM;
    size_t i = 0, j = 0, n = 0;
    while (i < s->n_rows || j < p->n_rows) {
        int o = i == s->n_rows ? 1 : j == p->n_rows ? -1 : row_order(&s->rows[i], &p->rows[j]);
        if (o <= 0)
            m[n] = s->rows[i++];
        if (o == 0) {
            m[n].calls[0] += p->rows[j].calls[0], m[n].time_ns[0] += p->rows[j].time_ns[0];
            free(p->rows[j++].name);
        } else if (o > 0) {
            m[n] = p->rows[j++];
        }
        n++;
    }
    free(s->rows);
    free(p->rows);
    s->rows = m, s->n_rows = n, p->rows = NULL, p->n_rows = 0;
    return GP_OK;
}

static void drop_findings_if_unused(gp_compare_part *p)
{
    if (p && p->findings_used == 0) {
        gp_findings_free(p->findings);
        p->findings = NULL;
    }
}

/* Keep the part's findings only where one is its side's worst of its rule so far (the first
 * part wins a tie); free the findings of a part that no longer holds any. @return GP_OK or
 * GP_ENOMEM. */
static gp_status fold_findings(struct cmp_side *s, gp_compare_part *p)
{
    size_t n_rules = gp_rules_count(), n = 0;
    if (!s->worst && !(s->worst = calloc(n_rules ? n_rules : 1, sizeof(*s->worst))))
        return GP_ENOMEM;
    const gp_finding *f = p->findings ? gp_findings_get(p->findings, &n) : NULL;
    for (size_t k = 0; k < n; k++)
        for (size_t r = 0; r < n_rules; r++) {
            gp_compare_part *w = s->worst[r];
            if (strcmp(f[k].rule->id, gp_rules_info(r)->id) != 0 ||
                (w && cmp_part_finding(w, r)->severity >= f[k].severity))
                continue;
            if (w && --w->findings_used == 0)
                drop_findings_if_unused(w);
            s->worst[r] = p, p->findings_used++;
        }
    drop_findings_if_unused(p);
    return GP_OK;
}

const gp_finding *cmp_part_finding(const gp_compare_part *p, size_t rule)
{
    size_t n = 0;
    const gp_finding *f = p && p->findings ? gp_findings_get(p->findings, &n) : NULL;
    for (size_t k = 0; k < n; k++)
        if (strcmp(f[k].rule->id, gp_rules_info(rule)->id) == 0)
            return &f[k];
    return NULL;
}

gp_status gp_compare_add_run(gp_compare *c, gp_compare_side side, size_t run, const char *label,
                             gp_compare_part *p, gp_error *err)
{
    struct cmp_side *s = &c->side[side == GP_CMP_NEW];
    char *copy = s->n < s->cap || grow_side(s) == 0 ? strdup(label) : NULL;
    if (!copy || fold_rows(s, p) != 0 || fold_findings(s, p) != 0) {
        free(copy);
        gp_compare_part_free(p);
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    }
    s->labels[s->n] = copy;
    s->run_of[s->n] = run;
    s->parts[s->n++] = p;
    return GP_OK;
}

gp_status gp_compare_add(gp_compare *c, gp_compare_side side, const char *label, gp_compare_part *p,
                         gp_error *err)
{
    const struct cmp_side *s = &c->side[side == GP_CMP_NEW];
    size_t run = 0; /* a number no part of the side has yet */
    for (size_t i = 0; i < s->n; i++)
        run = s->run_of[i] >= run ? s->run_of[i] + 1 : run;
    return gp_compare_add_run(c, side, run, label, p, err);
}

const gp_compare_steps *gp_compare_step_result(const gp_compare *c)
{
    return &c->res;
}

const char *gp_verdict_name(gp_verdict v)
{
    static const char *const names[] = {"no clear change", "faster", "slower", "too few steps"};
    return (unsigned)v < 4 ? names[v] : "?";
}

/* ---- merging ---- */

static gp_status pool_side(struct cmp_side *s)
{
    if (cmp_pool_runs(s) != GP_OK)
        return GP_ENOMEM;
    size_t n = s->n_steps;
    double bd[GP_BD_COUNT] = {0};
    s->peak_alloc = -1;
    for (size_t i = 0; i < s->n; i++) {
        const gp_compare_part *p = s->parts[i];
        s->n_all_steps += p->n_all_steps;
        for (int c = 0; c < GP_BD_COUNT; c++)
            bd[c] += (double)p->bd_total[c];
        s->peak_alloc = p->peak_alloc > s->peak_alloc ? p->peak_alloc : s->peak_alloc;
    }
    for (int c = 0; c < GP_BD_COUNT; c++)
        s->bd_mean[c] = n ? bd[c] / (double)n : 0;
    return GP_OK;
}

/* Both sides' rows, moved into c->rows per step with their side, then sorted and folded by name. */
static gp_status merge_rows(gp_compare *c)
{
    size_t n = c->side[0].n_rows + c->side[1].n_rows;
    c->rows = calloc(n ? n : 1, sizeof(*c->rows));
    if (!c->rows)
        return GP_ENOMEM;
    for (int s = 0; s < 2; s++) {
        struct cmp_side *sd = &c->side[s];
        double steps = sd->n_all_steps ? (double)sd->n_all_steps : 1.0;
        for (size_t r = 0; r < sd->n_rows; r++) {
            struct cmp_row *o = &c->rows[c->n_rows++];
            *o = (struct cmp_row){.name = sd->rows[r].name, .is_device = sd->rows[r].is_device};
            o->calls[s] = sd->rows[r].calls[0] / steps;
            o->time_ns[s] = sd->rows[r].time_ns[0] / steps;
            sd->rows[r].name = NULL; /* moved */
        }
    }
    qsort(c->rows, c->n_rows, sizeof(*c->rows), row_order);
    size_t w = 0;
    for (size_t r = 0; r < c->n_rows; r++) {
        if (w > 0 && row_order(&c->rows[w - 1], &c->rows[r]) == 0) {
            for (int s = 0; s < 2; s++) {
                c->rows[w - 1].calls[s] += c->rows[r].calls[s];
                c->rows[w - 1].time_ns[s] += c->rows[r].time_ns[s];
            }
            free(c->rows[r].name);
        } else {
            c->rows[w++] = c->rows[r];
        }
    }
    c->n_rows = w;
    return GP_OK;
}

static gp_status merge_findings(gp_compare *c)
{
    c->n_findings = gp_rules_count();
    c->findings = calloc(c->n_findings ? c->n_findings : 1, sizeof(*c->findings));
    if (!c->findings)
        return GP_ENOMEM;
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; c->side[s].worst && r < c->n_findings; r++) {
            const gp_finding *f = cmp_part_finding(c->side[s].worst[r], r);
            c->findings[r].f[s] = f;
            c->findings[r].sev[s] = f ? f->severity : 0;
        }
    return GP_OK;
}

gp_status gp_compare_finish(gp_compare *c, gp_error *err)
{
    static const char *const names[] = {"BASE", "NEW"};
    for (int s = 0; s < 2; s++) {
        if (c->side[s].n == 0)
            return gp_error_set(err, GP_EINVAL, NULL, "%s has no trace", names[s]);
        if (pool_side(&c->side[s]) != GP_OK)
            return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
        if (c->side[s].n_steps == 0)
            return gp_error_set(err, GP_EINVAL, c->side[s].labels[0],
                                "%s has no step to compare (a trace without events?)", names[s]);
    }
    if (cmp_step_verdict(c) != GP_OK || merge_rows(c) != GP_OK || merge_findings(c) != GP_OK)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    return GP_OK;
}
