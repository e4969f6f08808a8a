/* rules_first_calls.c: first-time work in each step (rules_first_calls.h). A call is keyed by
 * its name, its input shape (PyTorch's Input Dims), the kernel it launched (a launch call) and
 * its step's batch size (the trainer's batch_size counter). A step that makes the first call of
 * a name in a new form is novel; its first-time work is what its first calls, and the calls run
 * only in novel steps, take beyond the same work in the ordinary steps. */
#include "rules/rules_first_calls.h"
#include "gp/trace_schema.h"

#include <stdlib.h>
#include <string.h>

struct call {
    gp_str name, shape, kernel;
    uint32_t track, ev;
    int64_t batch, ts, dur;
    long step; /* analysed step index, or -1 */
};

/* A call of a novel step that took longer than the same work in the ordinary steps (fc.excess:
 * by how much; fc.fresh: its name runs only in novel steps). */
struct cand {
    struct rules_first_call fc;
    uint32_t track, ev;
    int64_t ts, end;
    long step;
};

int rules_first_keyed(const gp_event *e)
{
    int kind = e->kind == GP_EV_CPU_OP || e->kind == GP_EV_USER_ANNOTATION ||
               e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER;
    return kind && e->dur > 0 && e->name != GP_STR_NONE &&
           !(e->flags & (GP_EVF_STEP | GP_EVF_DATALOADER));
}

/* The step (of all steps, warm-up included) whose host range holds ts, or -1. */
static long any_step_at(const gp_step *s, size_t n, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].host_end <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && s[lo].host_ts <= ts ? (long)lo : -1;
}

/* Each step's batch size from the trainer's batch_size counter (-1 where none). */
static gp_status step_batches(const struct rules_ctx *c, int64_t **out, size_t *n_all)
{
    const gp_step *s = gp_analysis_steps(c->a, n_all);
    int64_t *b = malloc((*n_all ? *n_all : 1) * sizeof(*b));
    if (!b)
        return GP_ENOMEM;
    for (size_t i = 0; i < *n_all; i++)
        b[i] = -1;
    size_t n;
    const gp_counter *k = gp_trace_counters(c->t, &n);
    for (size_t i = 0; i < n; i++) {
        long at = strcmp(gp_trace_str(c->t, k[i].name), GP_NAME_BATCH_COUNTER) == 0
                          ? any_step_at(s, *n_all, k[i].ts)
                          : -1;
        if (at >= 0)
            b[at] = (int64_t)k[i].value;
    }
    *out = b;
    return GP_OK;
}

/* The kernel each launch call launched, by event index (GP_STR_NONE: none); NULL without GPU
 * activity. */
static gp_status launched_kernels(const struct rules_ctx *c, gp_str **out)
{
    *out = NULL;
    size_t n;
    const gp_launch *l = gp_analysis_launches(c->a, &n);
    if (!c->has_gpu || !n)
        return GP_OK;
    gp_str *k = malloc(c->n_ev * sizeof(*k));
    if (!k)
        return GP_ENOMEM;
    for (size_t i = 0; i < c->n_ev; i++)
        k[i] = GP_STR_NONE;
    for (size_t i = 0; i < n; i++)
        if (c->ev[l[i].gpu].kind == GP_EV_KERNEL)
            k[l[i].runtime] = c->ev[l[i].gpu].name;
    *out = k;
    return GP_OK;
}

static gp_status collect(const struct rules_ctx *c, const int64_t *batch, const gp_str *kern,
                         struct call **out, size_t *n_out)
{
    size_t n_tracks, n_all, n = 0, cap = 0;
    const gp_track *tr = gp_trace_tracks(c->t, &n_tracks);
    const gp_step *all = gp_analysis_steps(c->a, &n_all);
    struct call *v = NULL;
    for (size_t t = 0; t < n_tracks; t++) {
        for (uint32_t i = tr[t].first; !tr[t].is_gpu && i < tr[t].first + tr[t].count; i++) {
            const gp_event *e = &c->ev[i];
            if (!rules_first_keyed(e))
                continue;
            if (rules_reserve((void **)&v, &cap, n, sizeof(*v), 1024) != GP_OK)
                return free(v), GP_ENOMEM;
            long s = any_step_at(all, n_all, e->ts);
            v[n++] = (struct call){e->name,
                                   gp_trace_event_shape(c->t, e),
                                   kern ? kern[i] : GP_STR_NONE,
                                   (uint32_t)t,
                                   i,
                                   s >= 0 ? batch[s] : -1,
                                   e->ts,
                                   e->dur,
                                   rules_step_at(c, e->ts)};
        }
    }
    *out = v, *n_out = n;
    return GP_OK;
}

static int cmp_key(const void *pa, const void *pb)
{
    const struct call *a = pa, *b = pb;
    RULES_CMP(a->name, b->name);
    RULES_CMP(a->shape, b->shape);
    RULES_CMP(a->kernel, b->kernel);
    RULES_CMP(a->batch, b->batch);
    RULES_CMP(a->ts, b->ts);
    return 0;
}

static int cmp_nest(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    RULES_CMP(a->track, b->track);
    RULES_CMP(a->ts, b->ts);
    RULES_CMP(b->end, a->end);
    return 0;
}

static int same_key(const struct call *a, const struct call *b)
{
    return a->name == b->name && a->shape == b->shape && a->kernel == b->kernel &&
           a->batch == b->batch;
}

static int same_name(const struct call *a, const struct call *b)
{
    return a->name == b->name;
}

/* The end of the group that starts at v[a] (calls of one name, or of one key). */
static size_t group_end(const struct call *v, size_t n, size_t a,
                        int (*same)(const struct call *, const struct call *))
{
    size_t b = a + 1;
    while (b < n && same(&v[a], &v[b]))
        b++;
    return b;
}

/* Median duration of v[a, b)'s calls in the ordinary steps (analysed, not novel); -1: none. */
static int64_t ordinary_median(const struct call *v, size_t a, size_t b, const uint8_t *novel,
                               int64_t *tmp)
{
    size_t k = 0;
    for (size_t i = a; i < b; i++)
        if (v[i].step >= 0 && !novel[v[i].step])
            tmp[k++] = v[i].dur;
    return k ? rules_median(tmp, k) : -1;
}

static gp_status push_cand(struct cand **v, size_t *n, size_t *cap, const struct call *f, int64_t x,
                           int fresh)
{
    if (x <= 0)
        return GP_OK;
    GP_TRY(rules_reserve((void **)v, cap, *n, sizeof(**v), 64));
    struct rules_first_call fc = {f->name, f->shape, f->kernel, f->batch, x, fresh};
    (*v)[(*n)++] = (struct cand){fc, f->track, f->ev, f->ts, f->ts + f->dur, f->step};
    return GP_OK;
}

static void clear_shaped(struct rules_first_calls *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        f->shaped[i] = (struct rules_first_call){GP_STR_NONE, GP_STR_NONE, GP_STR_NONE, -1, 0, 0};
}

/* The first calls of the two keys of name group v[a, b) that ran first (INT64_MAX: none): the
 * earliest call of another key than v[g]'s is first[0] unless v[g] is it. Each key's calls are
 * in time order, so its first call starts its group. */
static void first_two(const struct call *v, size_t a, size_t b, int64_t first[2], size_t *at)
{
    first[0] = first[1] = INT64_MAX;
    *at = a;
    for (size_t k = a; k < b; k = group_end(v, b, k, same_key)) {
        if (v[k].ts < first[0])
            first[1] = first[0], first[0] = v[k].ts, *at = k;
        else if (v[k].ts < first[1])
            first[1] = v[k].ts;
    }
}

static void note_shaped(const struct call *f, int64_t *shaped_ts, struct rules_first_calls *out)
{
    long s = f->step;
    if (f->shape == GP_STR_NONE || (shaped_ts[s] && f->ts >= shaped_ts[s]))
        return;
    shaped_ts[s] = f->ts;
    out->shaped[s] = (struct rules_first_call){f->name, f->shape, f->kernel, f->batch, 0, 0};
}

/* Mark the novel steps: those making the first call of a name run before in another form (a
 * new input shape, a kernel not launched before, a new batch size), with an earlier step before
 * them (in a trace's first step everything is first). A name never run before does not make a
 * step novel: a checkpoint or an evaluation seen once reads the same. Each novel step's earliest
 * first call of a new shape goes to f->shaped (shaped_ts: its start, 0 none). @return how many. */
static size_t mark_novel(const struct rules_ctx *c, const struct call *v, size_t n, uint8_t *novel,
                         int64_t *shaped_ts, struct rules_first_calls *f)
{
    size_t k = 0;
    for (size_t a = 0, b; a < n; a = b) {
        b = group_end(v, n, a, same_name);
        int64_t first[2];
        size_t at;
        first_two(v, a, b, first, &at);
        for (size_t g = a; g < b; g = group_end(v, b, g, same_key)) {
            long s = v[g].step;
            if (s < 0 || (s == 0 && c->n_warmup == 0) || first[g == at] >= v[g].ts)
                continue;
            k += !novel[s], novel[s] = 1;
            note_shaped(&v[g], shaped_ts, f);
        }
    }
    return k;
}

/* The first-time work of key v[g, e) of name group v[a, b): where the key also runs in ordinary
 * steps, its first call's time beyond its ordinary calls' (the same work's cost); where it runs
 * in novel steps only (a new shape, torch.compile's compile ranges), each call's time beyond its
 * name's ordinary calls (in other shapes), all of it for a name run only there. */
static gp_status key_firsts(const struct call *v, size_t a, size_t b, size_t g, size_t e,
                            const uint8_t *novel, int64_t *tmp, struct cand **out, size_t *n,
                            size_t *cap)
{
    int64_t ref = ordinary_median(v, g, e, novel, tmp);
    if (ref >= 0)
        return v[g].step >= 0 && novel[v[g].step] ? push_cand(out, n, cap, &v[g], v[g].dur - ref, 0)
                                                  : GP_OK;
    int64_t name_ref = ordinary_median(v, a, b, novel, tmp);
    for (size_t i = g; i < e; i++)
        if (v[i].step >= 0 && novel[v[i].step])
            GP_TRY(push_cand(out, n, cap, &v[i], v[i].dur - (name_ref < 0 ? 0 : name_ref),
                             name_ref < 0));
    return GP_OK;
}

/* The first-time work of the novel steps, none where they are many (more than a quarter of the
 * steps: an annotation numbered by step, shapes that change every step): first calls are then
 * the loop's ordinary work. */
static gp_status find_firsts(const struct rules_ctx *c, struct call *v, size_t n, uint8_t *novel,
                             struct rules_first_calls *f, struct cand **out, size_t *n_out)
{
    size_t cap = 0;
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_key);
    int64_t *tmp = calloc(n > c->n_steps ? n : c->n_steps + 1, sizeof(*tmp));
    if (!tmp)
        return GP_ENOMEM;
    size_t k = mark_novel(c, v, n, novel, tmp, f);
    if (!k || (c->n_steps >= 4 && 4 * k > c->n_steps)) {
        clear_shaped(f, c->n_steps);
        return free(tmp), GP_OK;
    }
    gp_status rc = GP_OK;
    for (size_t a = 0, b; a < n && rc == GP_OK; a = b) {
        b = group_end(v, n, a, same_name);
        for (size_t g = a, e; g < b && rc == GP_OK; g = e) {
            e = group_end(v, b, g, same_key);
            rc = key_firsts(v, a, b, g, e, novel, tmp, out, n_out, &cap);
        }
    }
    free(tmp);
    return rc;
}

/* The stretch just before call `ev` in which its thread runs no range, within step `s`, where
 * that thread is the step's own: untraced work leading into it (torch.compile's guard checks
 * and Python before its "dynamo" range: 234 ms of a 484 ms recompile on this VM), counted with
 * it. On another thread (autograd's) the step's start says nothing of what it waited for. */
static int64_t gap_before(const struct rules_ctx *c, uint32_t ev, const gp_step *s)
{
    if (s->event == GP_NONE || c->ev[s->event].track != c->ev[ev].track)
        return 0;
    size_t n_tracks;
    const gp_track *tr = &gp_trace_tracks(c->t, &n_tracks)[c->ev[ev].track];
    int64_t ts = c->ev[ev].ts, step_ts = s->host_ts, from = step_ts;
    for (uint32_t i = ev; i-- > tr->first && c->ev[i].ts >= step_ts;) {
        int64_t end = c->ev[i].ts + c->ev[i].dur, at = end <= ts ? end : c->ev[i].ts;
        from = at > from ? at : from;
    }
    return ts > from ? ts - from : 0;
}

/* Sum each step's outermost first-time calls (one inside another counts in it), each with the
 * untraced stretch that leads into it. */
static void sum_outermost(const struct rules_ctx *c, struct cand *v, size_t n,
                          struct rules_first_calls *f)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_nest);
    int64_t outer_end = INT64_MIN;
    uint32_t track = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        if (v[i].track != track)
            track = v[i].track, outer_end = INT64_MIN;
        if (v[i].ts < outer_end)
            continue;
        outer_end = v[i].end;
        int64_t x = v[i].fc.excess + gap_before(c, v[i].ev, &c->steps[v[i].step]);
        f->excess[v[i].step] += x;
        if (x > f->top[v[i].step].excess)
            f->top[v[i].step] = v[i].fc, f->top[v[i].step].excess = x;
    }
}

static void usual_batch(const struct rules_ctx *c, const int64_t *all_batch,
                        struct rules_first_calls *f)
{
    size_t k = 0;
    int64_t *tmp = f->excess; /* zero before the sums, long enough */
    for (size_t i = 0; i < c->n_steps; i++) {
        f->batch[i] = all_batch[i + c->n_warmup];
        if (f->batch[i] > 0)
            tmp[k++] = f->batch[i];
    }
    f->usual_batch = k ? rules_median(tmp, k) : -1;
    memset(tmp, 0, c->n_steps * sizeof(*tmp));
}

gp_status rules_first_calls_scan(const struct rules_ctx *c, struct rules_first_calls *out)
{
    memset(out, 0, sizeof(*out));
    size_t n_steps = c->n_steps ? c->n_steps : 1, n_all, n = 0, n_cand = 0;
    out->excess = calloc(n_steps, sizeof(*out->excess));
    out->top = calloc(n_steps, sizeof(*out->top));
    out->batch = calloc(n_steps, sizeof(*out->batch));
    out->shaped = calloc(n_steps, sizeof(*out->shaped));
    int64_t *all_batch = NULL;
    gp_str *kern = NULL;
    struct call *v = NULL;
    struct cand *cand = NULL;
    uint8_t *novel = calloc(n_steps, 1);
    gp_status rc =
            out->excess && out->top && out->batch && out->shaped && novel ? GP_OK : GP_ENOMEM;
    if (rc == GP_OK)
        clear_shaped(out, c->n_steps), rc = step_batches(c, &all_batch, &n_all);
    if (rc == GP_OK)
        rc = launched_kernels(c, &kern);
    if (rc == GP_OK)
        rc = collect(c, all_batch, kern, &v, &n);
    if (rc == GP_OK)
        rc = find_firsts(c, v, n, novel, out, &cand, &n_cand);
    if (rc == GP_OK) {
        usual_batch(c, all_batch, out);
        sum_outermost(c, cand, n_cand, out);
    }
    free(cand), free(v), free(kern), free(all_batch), free(novel);
    if (rc != GP_OK)
        rules_first_calls_release(out);
    return rc;
}

void rules_first_calls_release(struct rules_first_calls *f)
{
    free(f->excess);
    free(f->top);
    free(f->batch);
    free(f->shaped);
    memset(f, 0, sizeof(*f));
}
