/* analysis_period.c: steps where nothing marks them and no optimizer range ends them (a program
 * under an injected libprof, an inference loop, a `with profile():` block without markers), from
 * the host's launches. A loop's iterations launch the same sequence of kernels, copies and
 * memsets: the process that launches most is read as one sequence of what each launch call
 * launched, in time order over its threads (PyTorch launches the backward pass from another
 * thread). Where its tail repeats with a period of P launches, one launch each period starts an
 * iteration: of the names launched once in the last period, the one with the most host time
 * outside CUDA calls before it (where the loop fetches its next batch, or waits in a sync at the
 * end of the previous one), or the batch's copy to the device where it has half that or more. The
 * iterations start there from the first one that lasts about P launches: what came before (the CUDA
 * context, the model's initialisation) and the first iteration are the first step, left out as
 * warm-up like a marked first step. Work after the last full iteration belongs to no step.
 * Repetitions inside one operator, annotation or module call are one call's layers, not iterations:
 * no steps are cut. */
#include "model/launch_seq.h"

#include <stdlib.h>
#include <string.h>

/* The period search: at most PERIOD_WORK comparisons per launch (a wrong period fails within a
 * few of its own periods, a right one is checked over the last half of the launches, and over
 * PERIOD_WINDOW periods at least), PERIOD_MIN_REP repetitions at least, candidates from the last
 * PERIOD_REFS launches of the last name. */
#define PERIOD_WORK    64
#define PERIOD_WINDOW  8
#define PERIOD_MIN_REP 3
#define PERIOD_REFS    4

/* Past a launch or two that one side has and the other lacks: how far to move i (+) or j (-),
 * or 0 where neither realigns them. */
static int realign(const gp_str *s, size_t e, size_t i, size_t j)
{
    for (int d = 1; d <= 2; d++) {
        if (i + d + 1 < e && s[i + d] == s[j] && s[i + d + 1] == s[j + 1])
            return d;
        if (j + d + 1 < i && i + 1 < e && s[j + d] == s[i] && s[j + d + 1] == s[i + 1])
            return -d;
    }
    return 0;
}

/* Whether s repeats with period P over the launches before e (the last half of them, at least
 * PERIOD_WINDOW periods): each launch is compared with the one P before, realigned past a launch
 * or two that one of them lacks, each mismatch or launch the later period has or lacks one edit
 * (its realignment when the earlier side passes the same spot is free). It repeats with edits in
 * under 0.5% of the launches compared plus one every four periods (up to 8: a loop that logs
 * every fourth iteration adds a copy), and the two sides in step (no net shift) for over half of
 * them: a period one off realigns once and stays shifted, and a model's identical layers leave
 * the work between their runs of repetitions (the loss, the optimizer, an LM head) to edit, about
 * a layer's worth of launches each time (1% of a 100-layer model's). One forward pass of
 * identical layers and nothing else cannot be told from a loop: within_one_call. */
static int repeats(const gp_str *s, size_t e, size_t P, size_t *work)
{
    size_t w = PERIOD_WINDOW * P > e / 2 ? PERIOD_WINDOW * P : e / 2;
    w = w < e - P ? w : e - P;
    size_t per_4 = w / (4 * P) < 8 ? w / (4 * P) : 8;
    size_t i = e - w, j = i - P, edits = 0, shifted = 0, max_edits = w / 200 + per_4 + 1;
    while (i < e && j < i && edits <= max_edits && shifted <= w / 2) {
        (*work)++;
        int d = s[i] == s[j] ? 0 : realign(s, e, i, j);
        edits += s[i] != s[j] && d >= 0;
        i += d > 0 ? (size_t)d : d == 0;
        j += d < 0 ? (size_t)-d : d == 0;
        shifted += i - j != P;
    }
    return edits <= max_edits && shifted <= w / 2;
}

static int cmp_size(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return (a > b) - (a < b);
}

/* Candidate periods: the distances back from each of the last PERIOD_REFS launches of the last
 * launch's name to its earlier launches, up to e / PERIOD_MIN_REP (from the last alone, a copy
 * logged in the last iteration would hide the period), sorted, each once. @return their count,
 * or SIZE_MAX for no memory. */
static size_t candidates(const gp_str *s, size_t e, size_t **out)
{
    size_t refs[PERIOD_REFS], nr = 0, n = 0, cap = 64, max_p = e / PERIOD_MIN_REP;
    size_t *v = malloc(cap * sizeof(*v));
    for (size_t k = e; k-- > 0 && nr < PERIOD_REFS && e - k <= max_p;)
        if (s[k] == s[e - 1])
            refs[nr++] = k;
    for (size_t r = 0; v && r < nr; r++)
        for (size_t k = refs[r]; k-- > 0 && refs[r] - k <= max_p;) {
            if (s[k] != s[e - 1])
                continue;
            if (n == cap) {
                size_t *w = realloc(v, 2 * cap * sizeof(*v));
                if (!w) {
                    free(v);
                    return SIZE_MAX;
                }
                v = w, cap *= 2;
            }
            v[n++] = refs[r] - k;
        }
    if (!v)
        return SIZE_MAX;
    qsort(v, n, sizeof(*v), cmp_size);
    size_t u = 0;
    for (size_t k = 0; k < n; k++)
        if (u == 0 || v[k] != v[u - 1])
            v[u++] = v[k];
    *out = v;
    return u;
}

/* The smallest period (in launches) with which s repeats before e, at least PERIOD_MIN_REP
 * times: *P, 0 where none does within the work budget. @return GP_OK or GP_ENOMEM. */
static gp_status find_period(const gp_str *s, size_t e, size_t *work, size_t *P)
{
    size_t *v = NULL, n = candidates(s, e, &v);
    *P = 0;
    if (n == SIZE_MAX)
        return GP_ENOMEM;
    for (size_t k = 0; k < n && !*P && *work <= PERIOD_WORK * e; k++)
        if (repeats(s, e, v[k], work))
            *P = v[k];
    free(v);
    return GP_OK;
}

typedef struct name_at {
    gp_str name;
    int64_t idle;
    size_t pos;
} name_at;

static int cmp_name_at(const void *pa, const void *pb)
{
    const name_at *a = pa, *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    if (a->idle != b->idle)
        return a->idle < b->idle ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* A batch's copy to the device (launch k): where a loop's iterations begin, when it copies its
 * batches. */
static int is_h2d(const gp_analysis *a, const launch_seq *q, size_t k)
{
    const gp_event *e = &a->ev[q->act[k]];
    const gp_gpu_info *g = gp_trace_gpu_info(a->t, e);
    return e->kind == GP_EV_MEMCPY && g && g->copy_kind == GP_COPY_HTOD;
}

/* Of the names launched once in the last period (v: one entry each, at its launch there), the
 * iteration's start: the earliest host-to-device copy whose host idle before it is half the most
 * of any or more (the batch; its idle is the loader's), else the one with the most idle, the
 * earliest on a tie. */
static gp_str choose_anchor(const gp_analysis *a, const launch_seq *q, const name_at *v, size_t n)
{
    size_t best = 0, copy = SIZE_MAX;
    for (size_t k = 1; k < n; k++)
        if (v[k].idle > v[best].idle || (v[k].idle == v[best].idle && v[k].pos < v[best].pos))
            best = k;
    for (size_t k = 0; k < n; k++)
        if (is_h2d(a, q, v[k].pos) && 2 * v[k].idle >= v[best].idle &&
            (copy == SIZE_MAX || v[k].pos < v[copy].pos))
            copy = k;
    return n == 0 ? GP_STR_NONE : v[copy != SIZE_MAX ? copy : best].name;
}

/* The launch that starts an iteration (choose_anchor), from the names launched once in the last
 * period before e, each with its median idle host time before it over the window and its
 * position in that period. @return GP_OK with *anchor (GP_STR_NONE where no name is launched
 * once). */
static gp_status pick_anchor(const gp_analysis *a, const launch_seq *q, size_t e, size_t P,
                             gp_str *anchor)
{
    size_t lo = e > (PERIOD_WINDOW + 1) * P ? e - (PERIOD_WINDOW + 1) * P : 0, n = e - lo, nc = 0;
    name_at *v = malloc(n * sizeof(*v)), *once = malloc(n * sizeof(*once));
    if (!v || !once) {
        free(v);
        free(once);
        return GP_ENOMEM;
    }
    for (size_t k = 0; k < n; k++)
        v[k] = (name_at){q->name[lo + k], q->idle[lo + k], lo + k};
    qsort(v, n, sizeof(*v), cmp_name_at);
    for (size_t r = 0; r < n;) {
        size_t end = r, in_last = 0, pos = 0;
        for (; end < n && v[end].name == v[r].name; end++)
            if (v[end].pos >= e - P) {
                in_last++;
                pos = v[end].pos;
            }
        if (in_last == 1)
            once[nc++] = (name_at){v[r].name, v[r + (end - r) / 2].idle, pos};
        r = end;
    }
    *anchor = choose_anchor(a, q, once, nc);
    free(v);
    free(once);
    return GP_OK;
}

static int about_period(size_t gap, size_t P)
{
    size_t tol = P / 10 > 2 ? P / 10 : 2;
    return gap + tol >= P && gap <= P + tol;
}

/* The launches that start iterations, into b (room for q->n): the anchor's launches from the
 * first that starts an iteration of about P launches, to the window's end e, and past it while
 * they keep that length. @return their count. */
static size_t iteration_starts(const launch_seq *q, gp_str anchor, size_t e, size_t P, size_t *b)
{
    size_t n = 0, prev = SIZE_MAX;
    for (size_t k = 0; k < q->n; k++) {
        if (q->name[k] != anchor)
            continue;
        if (n == 1 && !about_period(k - b[0], P)) /* the first was not an iteration's start */
            n = 0;
        if (k >= e && prev != SIZE_MAX && !about_period(k - prev, P))
            break;
        b[n++] = k;
        prev = k;
    }
    return n;
}

#define MODULE_FRAME "nn.Module: "

/* The outermost operator, annotation or module call (with_stack's "nn.Module: Model_0" frame)
 * around event i, or GP_NONE. Other Python frames are not: a script's own holds its whole loop. */
static uint32_t outer_range(const gp_analysis *a, uint32_t i)
{
    uint32_t out = GP_NONE;
    for (uint32_t p = analysis_parent(a, i); p != GP_NONE; p = analysis_parent(a, p)) {
        const gp_event *e = &a->ev[p];
        if (e->kind == GP_EV_CPU_OP || e->kind == GP_EV_USER_ANNOTATION ||
            (e->kind == GP_EV_PYTHON &&
             strncmp(gp_trace_str(a->t, e->name), MODULE_FRAME, sizeof(MODULE_FRAME) - 1) == 0))
            out = p;
    }
    return out;
}

/* Whether the repetitions lie inside one call: where, for half the starts or more, the outermost
 * range around a start's launch also holds the next start, they are a model's identical layers in
 * one forward pass (an inference request under one annotation, a compiled graph, a module's
 * call), not iterations. */
static int within_one_call(const gp_analysis *a, const launch_seq *q, const size_t *b, size_t n)
{
    size_t inside = 0;
    for (size_t x = 0; x + 1 < n; x++) {
        uint32_t r = outer_range(a, q->rt[b[x]]);
        inside += r != GP_NONE && a->ev[r].ts + a->ev[r].dur >= q->ts[b[x + 1]];
    }
    return 2 * inside >= n - 1;
}

static gp_status push_step(gp_analysis *a, int64_t ts, int64_t end, size_t P)
{
    gp_step *s = trace_vec_push(&a->steps);
    if (!s)
        return GP_ENOMEM;
    *s = (gp_step){.num = (int64_t)a->steps.n,
                   .event = GP_NONE,
                   .inferred = GP_STEPS_FROM_LAUNCHES,
                   .period = P,
                   .host_ts = ts,
                   .host_end = end > ts ? end : ts,
                   .cpu_ns = -1,
                   .runq_ns = -1};
    return GP_OK;
}

/* The starts of the batch fetches (DataLoader ranges), sorted; NULL with *n = 0 where there are
 * none. */
static int64_t *fetch_starts(const gp_analysis *a, size_t *n, gp_status *rc)
{
    int64_t *v = NULL;
    *n = 0;
    *rc = GP_OK;
    for (uint32_t i = 0; i < a->n; i++) {
        if (!(a->ev[i].flags & GP_EVF_DATALOADER) || !analysis_is_cpu_range(a->ev[i].kind))
            continue;
        if (!v && !(v = malloc((a->n - i) * sizeof(*v)))) {
            *rc = GP_ENOMEM;
            return NULL;
        }
        v[(*n)++] = a->ev[i].ts;
    }
    if (*n)
        qsort(v, *n, sizeof(*v), analysis_cmp_i64);
    return v;
}

/* Where the iteration whose first launch is k > 0 starts: at that launch, or where a batch fetch
 * that began after the previous launch began. The host's time between two iterations is theirs
 * to share and nothing marks how: the previous one's last work (what follows a sync, which would
 * overlap the GPU without it) is kept in it, as a ProfilerStep at the loop's end would, and the
 * fetch of the next batch goes to the next, as a ProfilerStep's start holds it. */
static int64_t iteration_start(const launch_seq *q, size_t k, const int64_t *fetch, size_t nf)
{
    size_t lo = 0, hi = nf;
    while (lo < hi) { /* the first fetch after the previous launch */
        size_t mid = lo + (hi - lo) / 2;
        if (fetch[mid] <= q->end[k - 1])
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nf && fetch[lo] < q->ts[k] ? fetch[lo] : q->ts[k];
}

/* The steps from n iteration starts b: the first from lo to the second's start (all before the
 * loop with it), each next to the one after, the last to its last launch; a last iteration with
 * under about P launches is left out. */
static gp_status cut_steps(gp_analysis *a, const launch_seq *q, const size_t *b, size_t n, size_t P,
                           int64_t lo)
{
    size_t last = b[n - 1] + P <= q->n ? b[n - 1] + P - 1 : q->n - 1, nf;
    if (!about_period(last + 1 - b[n - 1], P)) {
        n--;
        last = b[n] - 1;
    }
    if (n < 2)
        return GP_OK;
    gp_status rc;
    int64_t *fetch = fetch_starts(a, &nf, &rc);
    if (rc != GP_OK)
        return rc;
    a->steps.n = 0;
    int64_t start = lo;
    for (size_t x = 0; x < n && rc == GP_OK; x++) {
        int64_t end = x + 1 < n ? iteration_start(q, b[x + 1], fetch, nf) : q->end[last];
        rc = push_step(a, start, end, P);
        start = end;
    }
    free(fetch);
    return rc;
}

/* Windows tried, in eighths of the launches: the whole trace, then without a tail that does not
 * repeat (work after the loop: a checkpoint's copies, an evaluation). */
static const int window_eighths[] = {8, 7, 6, 4};

gp_status analysis_steps_from_launches(gp_analysis *a)
{
    gp_step *s0 = a->steps.n == 1 ? TRACE_VEC_AT(&a->steps, gp_step, 0) : NULL;
    if (!s0 || !s0->synthetic || s0->one_iteration)
        return GP_OK;
    int64_t lo = s0->host_ts;
    launch_seq q;
    gp_status rc = launch_seq_build(a, &q);
    if (rc != GP_OK || q.n < 2 * PERIOD_MIN_REP) {
        launch_seq_free(&q);
        return rc;
    }
    size_t work = 0, P = 0, e = q.n;
    for (size_t w = 0; rc == GP_OK && !P && w < sizeof(window_eighths) / sizeof(*window_eighths);
         w++) {
        e = q.n * (size_t)window_eighths[w] / 8;
        rc = find_period(q.name, e, &work, &P);
    }
    gp_str anchor = GP_STR_NONE;
    if (rc == GP_OK && P)
        rc = pick_anchor(a, &q, e, P, &anchor);
    size_t *b = anchor != GP_STR_NONE ? malloc(q.n * sizeof(*b)) : NULL;
    if (anchor != GP_STR_NONE && !b)
        rc = GP_ENOMEM;
    size_t nb = b ? iteration_starts(&q, anchor, e, P, b) : 0;
    if (rc == GP_OK && nb >= 2 && !within_one_call(a, &q, b, nb))
        rc = cut_steps(a, &q, b, nb, P, lo < q.ts[0] ? lo : q.ts[0]);
    free(b);
    launch_seq_free(&q);
    return rc;
}
