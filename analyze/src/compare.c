/* compare.c: a trace summarised for a comparison, and the two sides merged: pooled steps, the
 * breakdown per step, key-averages rows per step matched by name, peak memory, findings by rule.
 */
#include "compare_int.h"

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

static int grow_side(struct cmp_side *s)
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
        return -1;
    s->run_of = run_of, s->cap = cap;
    return 0;
}

gp_status gp_compare_add_run(gp_compare *c, gp_compare_side side, size_t run, const char *label,
                             gp_compare_part *p, gp_error *err)
{
    struct cmp_side *s = &c->side[side == GP_CMP_NEW];
    char *copy = s->n < s->cap || grow_side(s) == 0 ? strdup(label) : NULL;
    if (!copy) {
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

static int row_order(const void *x, const void *y)
{
    const struct cmp_row *a = x, *b = y;
    if (a->is_device != b->is_device)
        return a->is_device - b->is_device;
    return strcmp(a->name, b->name);
}

/* Every row of every part, moved into c->rows with its side, then sorted and folded by name. */
static gp_status merge_rows(gp_compare *c)
{
    size_t n = 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < c->side[s].n; i++)
            n += c->side[s].parts[i]->n_rows;
    c->rows = calloc(n ? n : 1, sizeof(*c->rows));
    if (!c->rows)
        return GP_ENOMEM;
    for (int s = 0; s < 2; s++) {
        double steps = c->side[s].n_all_steps ? (double)c->side[s].n_all_steps : 1.0;
        for (size_t i = 0; i < c->side[s].n; i++) {
            gp_compare_part *p = c->side[s].parts[i];
            for (size_t r = 0; r < p->n_rows; r++) {
                struct cmp_row *o = &c->rows[c->n_rows++];
                *o = (struct cmp_row){.name = p->rows[r].name, .is_device = p->rows[r].is_device};
                o->calls[s] = p->rows[r].calls[0] / steps;
                o->time_ns[s] = p->rows[r].time_ns[0] / steps;
                p->rows[r].name = NULL; /* moved */
            }
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
        for (size_t i = 0; i < c->side[s].n; i++) {
            size_t n = 0;
            const gp_finding *f = gp_findings_get(c->side[s].parts[i]->findings, &n);
            for (size_t k = 0; k < n; k++)
                for (size_t r = 0; r < c->n_findings; r++) {
                    struct cmp_finding *m = &c->findings[r];
                    if (strcmp(f[k].rule->id, gp_rules_info(r)->id) != 0 ||
                        (m->f[s] && m->sev[s] >= f[k].severity))
                        continue;
                    m->f[s] = &f[k];
                    m->sev[s] = f[k].severity;
                }
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
