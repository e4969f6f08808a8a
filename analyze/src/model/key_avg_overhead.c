/* CUPTI's overhead events (Kineto's cat "overhead": "Command Buffer Full" when the launch queue
 * was full, "Activity Buffer Request", "Buffer Flush", ...) as PyTorch's key averages see them.
 * Kineto links them to no op and writes them on no thread, so PyTorch gives them the thread that
 * stops the profiler (collection.cpp setKinetoTID), where they are host ranges of its op tree:
 * rows of their own that take CPU time from the ops they sit in. Their correlation id is their
 * parent's in PyTorch's result tree (build_tree: the innermost open op, Python frame or unlinked
 * Kineto event of that thread at their start, whether or not it contains their end), and torch
 * 2.11's _parse_kineto_results gives them the GPU work linked to that id as device time, which
 * the ops above them then count again (torch 2.15 gives them none). */
#include "model/key_avg_int.h"

#include <stdlib.h>
#include <string.h>

/* Classes of PyTorch's results, in build_tree's order of equal starts. */
enum { RES_OP, RES_PYTHON, RES_KINETO, RES_NONE };

/* A result of the profiler's thread, for the replay of build_tree. */
typedef struct res {
    int64_t ts, end, id; /* id: its correlation id, resolved through its parent; 0 for none */
    uint32_t ev;
    uint8_t cls;
} res;

static int is_host_op(const gp_event *e)
{
    return !(e->flags & GP_EVF_GPU) &&
           (e->kind == GP_EV_CPU_OP || e->kind == GP_EV_USER_ANNOTATION);
}

/* The thread that stops the profiler: the training loop's, where ProfilerStep#N runs; without
 * steps, the thread of the first op. GP_NONE when there is no host op. */
static uint32_t profiler_track(const gp_analysis *a)
{
    uint32_t first = GP_NONE;
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        if (!is_host_op(e))
            continue;
        if (e->flags & GP_EVF_STEP)
            return e->track;
        if (first == GP_NONE || e->ts < a->ev[first].ts)
            first = i;
    }
    return first == GP_NONE ? GP_NONE : a->ev[first].track;
}

/* Event i's class as a result of the profiler's thread (on `track`), or RES_NONE. Kineto's
 * events that no op or launch links (overhead, unlinked runtime calls and GPU work) are roots
 * that PyTorch puts on that thread, whatever thread the trace shows. */
static int res_class(const gp_analysis *a, uint32_t i, uint32_t track)
{
    const gp_event *e = &a->ev[i];
    int gpu = (e->flags & GP_EVF_GPU) != 0;
    if (e->kind == GP_EV_OVERHEAD)
        return RES_KINETO;
    if (e->track == track && is_host_op(e))
        return RES_OP;
    if (!gpu && e->track == track && e->kind == GP_EV_PYTHON)
        return RES_PYTHON;
    if (e->ext_id != GP_ID_NONE)
        return RES_NONE;
    if (e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER ||
        (gpu && analysis_runtime(a, i) == GP_NONE))
        return RES_KINETO;
    return RES_NONE;
}

static int cmp_start(const void *pa, const void *pb)
{
    const res *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

/* build_tree's stack of open results on one thread: positions into the results, and the
 * smallest end at or below each level. */
typedef struct res_stack {
    uint32_t *at;
    int64_t *min_end;
    size_t depth;
} res_stack;

/* Close what build_tree closes before a result starting at ts: every open result that ended
 * before ts, and all above it (their end events then find them closed). */
static void close_before(res_stack *s, int64_t ts)
{
    size_t lo = 0, hi = s->depth; /* min_end is non-increasing: find its first level < ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->min_end[mid] < ts)
            hi = mid;
        else
            lo = mid + 1;
    }
    s->depth = lo;
}

/* Replay build_tree over the results r[0..n) (sorted by start): each one's parent is the open
 * result on top; an op's id is its own (its External id), a Python frame has none, and a Kineto
 * event without one of its own takes its parent's. */
static void replay(res *r, size_t n, res_stack *s)
{
    s->depth = 0;
    for (size_t k = 0; k < n; k++) {
        close_before(s, r[k].ts);
        if (r[k].cls == RES_KINETO && r[k].id == 0 && s->depth)
            r[k].id = r[s->at[s->depth - 1]].id;
        if (r[k].end <= r[k].ts)
            continue; /* no duration: closed at once */
        int64_t below = s->depth ? s->min_end[s->depth - 1] : INT64_MAX;
        s->at[s->depth] = (uint32_t)k;
        s->min_end[s->depth++] = r[k].end < below ? r[k].end : below;
    }
}

/* Event i's own correlation id as PyTorch reads it (0: none). */
static int64_t own_id(const gp_event *e, int cls)
{
    int64_t id = cls == RES_OP ? e->ext_id : cls == RES_KINETO ? e->corr : 0;
    return id == GP_ID_NONE ? 0 : id;
}

/* The results of the profiler's thread, sorted by start. NULL when out of memory. */
static res *collect(const gp_analysis *a, uint32_t track, size_t *n)
{
    *n = 0;
    for (uint32_t i = 0; i < a->n; i++)
        *n += res_class(a, i, track) != RES_NONE;
    res *r = malloc((*n ? *n : 1) * sizeof(*r));
    *n = 0;
    for (uint32_t i = 0; r && i < a->n; i++) {
        int cls = res_class(a, i, track);
        if (cls != RES_NONE)
            r[(*n)++] = (res){a->ev[i].ts, a->ev[i].ts + a->ev[i].dur, own_id(&a->ev[i], cls), i,
                              (uint8_t)cls};
    }
    if (r)
        qsort(r, *n, sizeof(*r), cmp_start);
    return r;
}

/* Each overhead event's device time: the GPU work linked (direct) to the op whose External id
 * is its correlation id. */
static gp_status overhead_device_time(const gp_analysis *a, const res *r, size_t n, int64_t *direct)
{
    id_map ops;
    GP_TRY(id_map_init(&ops, 1024));
    gp_status rc = GP_OK;
    for (uint32_t i = 0; i < a->n && rc == GP_OK; i++)
        if (is_host_op(&a->ev[i]) && a->ev[i].ext_id != GP_ID_NONE)
            rc = id_map_put(&ops, a->ev[i].ext_id, i);
    for (size_t k = 0; k < n && rc == GP_OK; k++)
        if (a->ev[r[k].ev].kind == GP_EV_OVERHEAD) {
            uint32_t op = r[k].id ? id_map_get(&ops, r[k].id) : GP_NONE;
            direct[r[k].ev] = op != GP_NONE ? direct[op] : 0;
        }
    id_map_release(&ops);
    return rc;
}

static int cmp_span(const void *pa, const void *pb)
{
    const ka_overhead_ev *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->dur < b->dur) - (a->dur > b->dur);
}

/* The overhead events in the sweep's order (start, longer first). NULL when out of memory. */
static ka_overhead_ev *overhead_events(const gp_analysis *a, size_t *n)
{
    *n = 0;
    for (uint32_t i = 0; i < a->n; i++)
        *n += a->ev[i].kind == GP_EV_OVERHEAD;
    ka_overhead_ev *v = malloc((*n ? *n : 1) * sizeof(*v));
    size_t k = 0;
    for (uint32_t i = 0; v && i < a->n; i++)
        if (a->ev[i].kind == GP_EV_OVERHEAD)
            v[k++] = (ka_overhead_ev){a->ev[i].ts, a->ev[i].dur, i};
    if (v)
        qsort(v, *n, sizeof(*v), cmp_span);
    return v;
}

gp_status ka_overhead_init(ka_overhead *o, const gp_analysis *a, int64_t *direct)
{
    memset(o, 0, sizeof(*o));
    o->track = GP_NONE;
    o->ev = overhead_events(a, &o->n);
    if (!o->ev)
        return GP_ENOMEM;
    if (o->n == 0)
        return GP_OK;
    uint32_t track = profiler_track(a);
    o->track = track != GP_NONE ? track : a->ev[o->ev[0].ev].track;
    size_t n;
    res *r = collect(a, track, &n);
    res_stack s = {malloc((n + 1) * sizeof(*s.at)), malloc((n + 1) * sizeof(*s.min_end)), 0};
    gp_status rc = r && s.at && s.min_end ? GP_OK : GP_ENOMEM;
    if (rc == GP_OK) {
        replay(r, n, &s);
        rc = overhead_device_time(a, r, n, direct);
    }
    free(s.at);
    free(s.min_end);
    free(r);
    if (rc != GP_OK)
        ka_overhead_release(o);
    return rc;
}

void ka_overhead_release(ka_overhead *o)
{
    free(o->ev);
    memset(o, 0, sizeof(*o));
    o->track = GP_NONE;
}
