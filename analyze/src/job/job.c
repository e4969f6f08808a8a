/* The cross-rank view of a job: ranks ordered and checked, steps aligned by number, clocks aligned
 * on collectives (each collective ends at the same instant on every rank) where wall clocks
 * disagree, and for each collective the rank that arrived last and how long the others waited. */
#include "job/job_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

gp_status gp_job_new(gp_job **out, gp_error *err)
{
    gp_job *j = calloc(1, sizeof(*j));
    *out = j;
    if (!j)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < JOB_N_PARAMS; i++)
        j->p[i] = job_straggler_info.params[i].value;
    return GP_OK;
}

void gp_job_free(gp_job *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++)
        gp_job_part_free(j->parts[i]);
    free(j->parts), free(j->ranks), free(j->colls), free(j->common_steps);
    gp_findings_free(j->findings);
    free(j);
}

gp_status gp_job_add(gp_job *j, gp_job_part *p, gp_error *err)
{
    if (j->n == j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 16;
        void *q = realloc(j->parts, cap * sizeof(*j->parts));
        if (!q) {
            gp_job_part_free(p);
            return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
        }
        j->parts = q, j->cap = cap;
    }
    j->parts[j->n++] = p;
    return GP_OK;
}

const gp_rule_info *gp_job_rule_info(void)
{
    return &job_straggler_info;
}

gp_status gp_job_set(gp_job *j, const char *assignment, gp_error *err)
{
    const gp_rule_info *in = &job_straggler_info;
    const char *dot = strchr(assignment, '.'), *eq = strchr(assignment, '=');
    size_t rl = dot ? (size_t)(dot - assignment) : 0;
    int rule_ok = dot && eq && eq > dot &&
                  ((rl == strlen(in->id) && !strncasecmp(assignment, in->id, rl)) ||
                   (rl == strlen(in->name) && !strncasecmp(assignment, in->name, rl)));
    GP_FAIL_IF(!rule_ok, GP_EINVAL, err,
               "bad setting '%s': expected GT16.PARAM=VALUE, e.g. GT16.warn_pct=10", assignment);
    for (size_t i = 0; i < in->n_params; i++) {
        const char *name = in->params[i].name;
        if (strlen(name) != (size_t)(eq - dot - 1) || strncmp(dot + 1, name, strlen(name)))
            continue;
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        GP_FAIL_IF(end == eq + 1 || *end || errno || !isfinite(v), GP_EINVAL, err,
                   "bad value in '%s': expected a number", assignment);
        j->p[i] = v;
        return GP_OK;
    }
    return gp_error_set(err, GP_EINVAL, NULL, "unknown parameter in '%s'", assignment);
}

/* ---- ranks ---- */

static int cmp_part(const void *pa, const void *pb)
{
    const gp_job_part *a = *(gp_job_part *const *)pa, *b = *(gp_job_part *const *)pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Ranks not in distributedInfo or the file name: the smallest free numbers, in argument order. */
static gp_status order_ranks(gp_job *j, gp_error *err)
{
    int next = 0;
    for (size_t i = 0; i < j->n; i++) {
        if (j->parts[i]->rank >= 0)
            continue;
        for (int used = 1; used;) {
            used = 0;
            for (size_t k = 0; k < j->n && !used; k++)
                used = j->parts[k]->rank == next;
            next += used;
        }
        j->parts[i]->rank = next++;
    }
    qsort(j->parts, j->n, sizeof(*j->parts), cmp_part);
    for (size_t i = 1; i < j->n; i++)
        GP_FAIL_IF(j->parts[i]->rank == j->parts[i - 1]->rank, GP_EINVAL, err,
                   "two traces of rank %d: '%s' and '%s'", j->parts[i]->rank, j->parts[i - 1]->path,
                   j->parts[i]->path);
    return GP_OK;
}

/* Does part `p` have step `num`? Ranks mostly list the same steps: look at index `at` first. */
static int has_step(const gp_job_part *p, int64_t num, size_t at)
{
    if (at < p->n_steps && p->steps[at].num == num)
        return 1;
    for (size_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].num == num)
            return 1;
    return 0;
}

/* Step numbers every rank has, in the first rank's order. */
static gp_status common_steps(gp_job *j)
{
    const gp_job_part *p0 = j->parts[0];
    j->common_steps = calloc(p0->n_steps + 1, sizeof(int64_t));
    if (!j->common_steps)
        return GP_ENOMEM;
    for (size_t s = 0; s < p0->n_steps; s++) {
        int all = p0->steps[s].num >= 0;
        for (size_t r = 1; r < j->n && all; r++)
            all = has_step(j->parts[r], p0->steps[s].num, s);
        if (all)
            j->common_steps[j->n_common++] = p0->steps[s].num;
    }
    return GP_OK;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

static void swap_i64(int64_t *a, int64_t *b)
{
    int64_t t = *a;
    *a = *b, *b = t;
}

/* The k-th smallest of v[0..n), v reordered: quickselect with a three-way partition (a job's
 * ends are often all equal), median-of-three pivots. O(n) where a sort was O(n log n): the
 * medians over 16,384 ranks at every collective. */
static int64_t select_kth(int64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        int64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
        int64_t p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (v[i] < p)
                swap_i64(&v[lt++], &v[i++]);
            else if (v[i] > p)
                swap_i64(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return p;
    }
    return v[lo];
}

int64_t job_median(int64_t *v, size_t n)
{
    return n ? select_kth(v, n, (n - 1) / 2) : 0;
}

/* The rank's step statistics over the common steps (all of its steps when none is common). */
static gp_status rank_steps(const gp_job *j, const gp_job_part *p, gp_job_rank *r)
{
    int64_t *d = calloc(p->n_steps + 1, sizeof(int64_t)), sum[6] = {0};
    if (!d)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t s = 0; s < p->n_steps; s++) {
        const struct job_step *st = &p->steps[s];
        int use = j->n_common == 0;
        for (size_t c = 0; c < j->n_common && !use; c++)
            use = j->common_steps[c] == st->num;
        if (!use)
            continue;
        d[n++] = st->dur;
        int64_t v[6] = {st->dur, st->compute, st->comm, st->exposed, st->idle, st->loader};
        for (int k = 0; k < 6; k++)
            sum[k] += v[k];
    }
    int64_t div = n ? (int64_t)n : 1;
    r->n_steps = n;
    r->step_mean = sum[0] / div, r->compute = sum[1] / div, r->comm = sum[2] / div;
    r->exposed_comm = sum[3] / div, r->idle = sum[4] / div, r->loader = sum[5] / div;
    qsort(d, n, sizeof(*d), cmp_i64);
    r->step_p95 = n ? d[(size_t)ceil(0.95 * (double)n) - 1] : 0;
    free(d);
    return GP_OK;
}

static gp_status fill_ranks(gp_job *j)
{
    j->ranks = calloc(j->n, sizeof(*j->ranks));
    if (!j->ranks)
        return GP_ENOMEM;
    for (size_t i = 0; i < j->n; i++) {
        const gp_job_part *p = j->parts[i];
        gp_job_rank *r = &j->ranks[i];
        r->rank = p->rank, r->rank_from = p->rank_from, r->path = p->path, r->host = p->host;
        GP_TRY(rank_steps(j, p, r));
    }
    return GP_OK;
}

/* ---- collectives ---- */

/* The part's first call under key `k`, or NULL; `*cur` walks its calls (sorted by key) as the
 * keys asked for rise, so a pass over every key costs one pass over its calls. */
static const struct job_call *next_call(const gp_job_part *p, size_t *cur, const struct job_key *k)
{
    int c = -1;
    while (*cur < p->n_calls && (c = job_key_cmp(&p->calls[*cur].key, k)) < 0)
        ++*cur;
    return *cur < p->n_calls && c == 0 ? &p->calls[*cur] : NULL;
}

static int cmp_jkey(const void *a, const void *b)
{
    return job_key_cmp(a, b);
}

/* Sort k[0..n) and drop repeats. @return the count left. */
static size_t sort_unique(struct job_key *k, size_t n)
{
    qsort(k, n, sizeof(*k), cmp_jkey);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || job_key_cmp(&k[u - 1], &k[i]) != 0)
            k[u++] = k[i];
    return u;
}

static int has_key(const struct job_key *k, size_t n, const struct job_key *want)
{
    return bsearch(want, k, n, sizeof(*k), cmp_jkey) != NULL;
}

/* Every key some rank has, sorted and unique: the first rank's, then those it lacks (ranks
 * mostly share their keys, so this sorts a few, not every rank's). */
static struct job_key *all_keys(gp_job *j, size_t *nk)
{
    size_t n = 0;
    for (size_t r = 0; r < j->n; r++)
        n += j->parts[r]->n_calls;
    j->n_calls = n;
    struct job_key *k = calloc(n + 1, sizeof(*k));
    if (!k)
        return NULL;
    const gp_job_part *p0 = j->parts[0];
    for (size_t i = 0; i < p0->n_calls; i++)
        k[i] = p0->calls[i].key;
    size_t u = sort_unique(k, p0->n_calls), m = u;
    for (size_t r = 1; r < j->n; r++)
        for (size_t i = 0; i < j->parts[r]->n_calls; i++)
            if (!has_key(k, u, &j->parts[r]->calls[i].key))
                k[m++] = j->parts[r]->calls[i].key;
    *nk = m > u ? sort_unique(k, m) : u;
    return k;
}

/* Each rank's clock offset from the first rank's: the median difference of the ends of the
 * collectives both have (every rank leaves a collective at the same instant). Applied only
 * where some rank is off by more than the tolerance (clock_us). */
static gp_status align_clocks(gp_job *j, const struct job_key *k, size_t nk)
{
    int64_t *d = calloc(nk + 1, sizeof(int64_t)), worst = 0;
    if (!d)
        return GP_ENOMEM;
    const gp_job_part *ref = j->parts[0];
    for (size_t r = 1; r < j->n; r++) {
        size_t n = 0, ca = 0, cb = 0;
        for (size_t i = 0; i < nk; i++) {
            const struct job_call *a = next_call(ref, &ca, &k[i]);
            const struct job_call *b = next_call(j->parts[r], &cb, &k[i]);
            if (a && b)
                d[n++] = b->end - a->end;
        }
        j->parts[r]->n_clock_refs = n;
        j->parts[r]->clock_offset = job_median(d, n);
        int64_t m = llabs(j->parts[r]->clock_offset);
        worst = m > worst ? m : worst;
    }
    free(d);
    j->clocks_aligned = (double)worst > j->p[JOB_CLOCK_US] * 1e3;
    for (size_t r = 0; r < j->n && !j->clocks_aligned; r++)
        j->parts[r]->clock_offset = 0;
    return GP_OK;
}

/* How far apart the ends of one collective may be on two ranks once clocks are aligned: eight
 * times the median distance of the calls under one key from the first rank's (the ends' own
 * jitter: a call missing on one rank pairs the ones after it with other collectives, far
 * apart, but few), at least clock_us, at most match_us. */
static gp_status match_tolerance(gp_job *j, const struct job_key *k, size_t nk)
{
    int64_t *d = calloc(nk * (j->n ? j->n : 1) + 1, sizeof(int64_t));
    if (!d)
        return GP_ENOMEM;
    size_t n = 0;
    const gp_job_part *ref = j->parts[0];
    for (size_t r = 1; r < j->n; r++)
        for (size_t i = 0, ca = 0, cb = 0; i < nk; i++) {
            const struct job_call *a = next_call(ref, &ca, &k[i]);
            const struct job_call *b = next_call(j->parts[r], &cb, &k[i]);
            if (a && b)
                d[n++] = llabs(b->end - j->parts[r]->clock_offset - a->end);
        }
    double tol = 8.0 * (double)job_median(d, n), lo = j->p[JOB_CLOCK_US] * 1e3,
           hi = j->p[JOB_MATCH_US] * 1e3;
    j->match_tol = (int64_t)(tol < lo ? lo : tol > hi ? hi : tol);
    free(d);
    return GP_OK;
}

static int op_known(uint16_t op)
{
    return strcmp(job_ops[op], "Generic") != 0 && strcmp(job_ops[op], "other") != 0;
}

/* The ranks' calls of key `k`, NULL where a rank has none, where its kernel names another
 * operation than the first rank's that names one, or where its end (aligned) is more than
 * the tolerance from the median end of the others: the same key on another collective (a call
 * missing on one rank shifts the count of the ones after it), not the same collective. */
static void gather_calls(gp_job *j, const struct job_key *k, const struct job_call **x,
                         int64_t *scratch, size_t *cur)
{
    size_t n = 0;
    int op = -1;
    for (size_t r = 0; r < j->n; r++) {
        x[r] = next_call(j->parts[r], &cur[r], k);
        if (x[r] && op < 0 && op_known(x[r]->op))
            op = x[r]->op;
        if (x[r] && op >= 0 && op_known(x[r]->op) && x[r]->op != op)
            x[r] = NULL, j->n_disagree++;
        if (x[r])
            scratch[n++] = x[r]->end - j->parts[r]->clock_offset;
    }
    if (n < 2) {
        j->n_alone += n;
        for (size_t r = 0; r < j->n; r++)
            x[r] = NULL;
        return;
    }
    int64_t mid = job_median(scratch, n), tol = j->match_tol, spread = 0;
    size_t kept = 0;
    for (size_t r = 0; r < j->n; r++) {
        int64_t off = x[r] ? llabs(x[r]->end - j->parts[r]->clock_offset - mid) : 0;
        if (x[r] && off > tol)
            x[r] = NULL, j->n_disagree++;
        else if (x[r])
            kept++, spread = off > spread ? off : spread;
    }
    for (size_t r = 0; r < j->n && kept > 1; r++) {
        int64_t off = x[r] ? llabs(x[r]->end - j->parts[r]->clock_offset - mid) : 0;
        gp_job_part *p = j->parts[r];
        p->clock_spread = off > p->clock_spread ? off : p->clock_spread;
    }
    if (kept == 1) { /* its counterparts disagree: alone after all */
        for (size_t r = 0; r < j->n; r++)
            x[r] = NULL;
        j->n_disagree++;
        return;
    }
    j->end_spread = spread > j->end_spread ? spread : j->end_spread;
}

/* One collective across the ranks: who arrived last, the lag, the waits. `arr` is scratch. */
static gp_status match_one(gp_job *j, const struct job_call **x, int64_t *arr, gp_job_collective *c)
{
    size_t n = 0, last = 0;
    int64_t t_last = INT64_MIN;
    const struct job_call *first = NULL;
    for (size_t r = 0; r < j->n; r++) {
        arr[r] = INT64_MIN;
        if (!x[r])
            continue;
        first = first ? first : x[r];
        arr[r] = x[r]->ts - j->parts[r]->clock_offset;
        if (arr[r] > t_last)
            t_last = arr[r], last = r;
        n++;
    }
    *c = (gp_job_collective){.step = first->step,
                             .index = first->index,
                             .op = job_ops[first->op],
                             .n_ranks = (uint32_t)n,
                             .last_rank = j->parts[last]->rank,
                             .ts = t_last,
                             .transfer = x[last]->end - x[last]->ts};
    for (size_t r = 0; r < j->n; r++) {
        if (!x[r])
            continue;
        int64_t w = t_last - arr[r];
        c->waited += w;
        j->ranks[r].n_collectives++;
        j->ranks[r].waited += w;
        j->parts[r]->op_calls[x[r]->op]++;
        j->parts[r]->op_time[x[r]->op] += x[r]->end - x[r]->ts;
        j->parts[r]->op_waited[x[r]->op] += w;
    }
    /* the median arrival of the others */
    size_t m = 0;
    for (size_t r = 0; r < j->n; r++)
        if (arr[r] != INT64_MIN && r != last)
            arr[m++] = arr[r];
    c->lag = m ? t_last - job_median(arr, m) : 0;
    if (!m || (double)c->lag < j->p[JOB_MIN_LAG_US] * 1e3)
        return GP_OK;
    j->ranks[last].n_last++;
    for (size_t r = 0; r < j->n; r++) { /* every rank's call there, for `held` (job_held.c) */
        struct job_wait w = {x[r] ? x[r]->ts : 0, x[r] ? x[r]->end : 0, t_last, last,
                             x[r] ? x[r]->op : 0};
        if (x[r])
            GP_TRY(job_wait_add(j->parts[r], &w));
    }
    return GP_OK;
}

static int cmp_coll(const void *pa, const void *pb)
{
    const gp_job_collective *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static gp_status match_collectives(gp_job *j)
{
    size_t nk = 0;
    struct job_key *k = all_keys(j, &nk);
    int64_t *arr = calloc(j->n, sizeof(int64_t));
    const struct job_call **x = calloc(j->n, sizeof(*x));
    size_t *cur = calloc(j->n, sizeof(size_t));
    j->colls = calloc(nk + 1, sizeof(*j->colls));
    gp_status rc = k && arr && x && cur && j->colls ? align_clocks(j, k, nk) : GP_ENOMEM;
    if (rc == GP_OK)
        rc = match_tolerance(j, k, nk);
    for (size_t i = 0; rc == GP_OK && i < nk; i++) {
        gather_calls(j, &k[i], x, arr, cur);
        size_t n = 0;
        for (size_t r = 0; r < j->n; r++)
            n += x[r] != NULL;
        if (n >= 2)
            rc = match_one(j, x, arr, &j->colls[j->n_colls++]);
    }
    if (rc == GP_OK)
        rc = job_held(j);
    if (rc == GP_OK && j->n_colls)
        qsort(j->colls, j->n_colls, sizeof(*j->colls), cmp_coll);
    for (size_t r = 0; rc == GP_OK && r < j->n; r++) {
        int64_t div = j->ranks[r].n_steps ? (int64_t)j->ranks[r].n_steps : 1;
        j->ranks[r].held /= div;
        j->ranks[r].waited /= div;
        j->ranks[r].clock_offset = j->parts[r]->clock_offset;
        j->ranks[r].start = j->parts[r]->t_first;
        j->ranks[r].n_clock_refs = r ? j->parts[r]->n_clock_refs : j->ranks[r].n_collectives;
        j->ranks[r].clock_spread = j->parts[r]->clock_spread;
        j->world_size =
                j->parts[r]->world_size > j->world_size ? j->parts[r]->world_size : j->world_size;
    }
    free(k), free(arr), free(x), free(cur);
    return rc;
}

gp_status gp_job_finish(gp_job *j, gp_error *err)
{
    GP_FAIL_IF(j->n == 0, GP_EINVAL, err, "no trace to compare");
    GP_FAIL_IF(j->ranks != NULL, GP_EINVAL, err, "the job is already finished");
    GP_TRY(order_ranks(j, err));
    gp_status rc = common_steps(j);
    if (rc == GP_OK)
        rc = fill_ranks(j);
    if (rc == GP_OK)
        rc = match_collectives(j);
    if (rc == GP_OK)
        rc = job_straggler(j, &j->findings);
    if (rc != GP_OK)
        return gp_error_set(err, rc, NULL, "job: %s", gp_strerror(rc));
    return GP_OK;
}

const gp_job_rank *gp_job_ranks(const gp_job *j, size_t *n)
{
    *n = j->ranks ? j->n : 0;
    return j->ranks;
}

const gp_job_collective *gp_job_collectives(const gp_job *j, size_t *n)
{
    *n = j->n_colls;
    return j->colls;
}

const gp_findings *gp_job_findings(const gp_job *j)
{
    return j->findings;
}

size_t gp_job_rank_n_waits(const gp_job *j, size_t i)
{
    return j->ranks && i < j->n ? j->parts[i]->n_waits : 0;
}

gp_job_wait gp_job_rank_wait(const gp_job *j, size_t i, size_t k)
{
    const gp_job_part *p = j->parts[i];
    const struct job_wait *w = &p->waits[k];
    return (gp_job_wait){.ts = w->ts - p->clock_offset,
                         .until = w->until,
                         .end = w->end - p->clock_offset,
                         .last_rank = j->parts[w->last]->rank,
                         .op = job_ops[w->op]};
}

int gp_job_world_size(const gp_job *j)
{
    return j->world_size;
}
