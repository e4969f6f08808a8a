/* Finishing a read: tracks ordered by (pid, tid), events scattered into one array track by track
 * (on two threads, freeing the reader's chunks as they go, so peak memory stays near one copy),
 * each track sorted by (ts, longer first) unless already in order, and GPU tracks given their
 * device and stream; tracks are independent, so they are sorted on two threads too. */
#include "reader/trace_build.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A track's sort key: numeric ids before string ids. */
typedef struct track_key {
    int64_t pid, tid;
    const char *pid_s, *tid_s; /* NULL for numeric ids */
    build_track *bt;
} track_key;

static int cmp_id(int64_t a, const char *as, int64_t b, const char *bs)
{
    if (!as != !bs)
        return !as ? -1 : 1;
    if (as)
        return strcmp(as, bs);
    return (a > b) - (a < b);
}

static int cmp_track(const void *pa, const void *pb)
{
    const track_key *a = pa, *b = pb;
    int c = cmp_id(a->pid, a->pid_s, b->pid, b->pid_s);
    return c ? c : cmp_id(a->tid, a->tid_s, b->tid, b->tid_s);
}

static int cmp_event(const void *pa, const void *pb)
{
    const gp_event *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->dur < b->dur) - (a->dur > b->dur);
}

/* Sort the n - kept events set aside in `side` and merge them into the in-order ev[0..kept),
 * from the end. An event equal to a kept one goes after it, as in a stable sort: a kept event
 * ties only with set-aside events that came after it in the file. */
static void merge_back(gp_event *ev, size_t kept, size_t n, gp_event *side)
{
    size_t a = kept, b = n - kept, w = n;
    qsort(side, b, sizeof(*side), cmp_event);
    while (b > 0) {
        if (a > 0 && cmp_event(&ev[a - 1], &side[b - 1]) > 0)
            ev[--w] = ev[--a];
        else
            ev[--w] = side[--b];
    }
}

/* Sort a track by (ts, longer first). Tracks are usually in order, or nearly: Kineto writes
 * some instant events (such as [memory]) after the ops around them. So the events that are not
 * after the last in-order one are set aside, sorted and merged back: O(n) plus a sort of the
 * few, where qsort of a million-event track was a tenth of the whole read. Many out of place:
 * qsort. */
static void sort_track(gp_event *ev, size_t n)
{
    size_t i = 1;
    while (i < n && cmp_event(&ev[i - 1], &ev[i]) <= 0)
        i++;
    if (i >= n)
        return;
    size_t cap = n / 8 + 16, kept = i, out = 0;
    gp_event *side = malloc(cap * sizeof(*side));
    for (; side && i < n && out < cap; i++) {
        if (cmp_event(&ev[kept - 1], &ev[i]) <= 0)
            ev[kept++] = ev[i];
        else
            side[out++] = ev[i];
    }
    if (side && i == n) {
        merge_back(ev, kept, n, side);
    } else {
        if (side) /* ev[kept..kept+out) is free: put the set-aside events back, then sort all */
            memcpy(&ev[kept], side, out * sizeof(*side));
        qsort(ev, n, sizeof(*ev), cmp_event);
    }
    free(side);
}

/* Device and stream of a GPU track, from its first GPU event's side record. */
static void track_gpu(gp_trace *t, gp_track *tr)
{
    tr->device = -1;
    tr->stream = -1;
    for (uint32_t i = 0; i < tr->count; i++) {
        const gp_event *e = &t->events[tr->first + i];
        if (!(e->flags & GP_EVF_GPU))
            continue;
        tr->is_gpu = 1;
        const gp_gpu_info *g = gp_trace_gpu_info(t, e);
        tr->device = g ? g->device : (int)tr->pid;
        tr->stream = g ? g->stream : tr->tid;
        return;
    }
}

/* One thread's share of the track sorting: tracks taken one at a time from a shared counter;
 * each writes only its own track's events and gp_track, and its own time range. */
typedef struct sort_job {
    gp_trace *t;
    atomic_size_t *next;
    int64_t ts_min, ts_max;
} sort_job;

static void sort_some(void *arg)
{
    sort_job *j = arg;
    gp_trace *t = j->t;
    for (size_t k; (k = atomic_fetch_add(j->next, 1)) < t->n_tracks;) {
        gp_track *tr = &t->tracks[k];
        sort_track(&t->events[tr->first], tr->count);
        track_gpu(t, tr);
        if (tr->count && t->events[tr->first].ts < j->ts_min)
            j->ts_min = t->events[tr->first].ts;
        for (uint32_t i = 0; i < tr->count; i++) {
            const gp_event *e = &t->events[tr->first + i];
            if (e->ts + e->dur > j->ts_max)
                j->ts_max = e->ts + e->dur;
        }
    }
}

static void sort_tracks(gp_trace *t, int threads)
{
    atomic_size_t next = 0;
    sort_job j[2] = {{t, &next, INT64_MAX, INT64_MIN}, {t, &next, INT64_MAX, INT64_MIN}};
    trace_par2(threads, sort_some, &j[0], sort_some, &j[1]);
    t->info.ts_min = j[0].ts_min < j[1].ts_min ? j[0].ts_min : j[1].ts_min;
    t->info.ts_max = j[0].ts_max > j[1].ts_max ? j[0].ts_max : j[1].ts_max;
}

static void apply_procs(trace_builder *b)
{
    gp_trace *t = b->t;
    for (size_t p = 0; p < b->procs.n; p++) {
        const build_proc *pr = TRACE_VEC_AT(&b->procs, build_proc, p);
        for (size_t k = 0; k < t->n_tracks; k++)
            if (t->tracks[k].pid == pr->pid && t->tracks[k].pid_str == pr->pid_str)
                t->tracks[k].proc_name = pr->name;
    }
}

/* One thread's half of the scatter of chunks [c0, c1) into t->events, tracks renumbered by
 * `remap`: the first half fills each track forward from its start, the second backward from
 * its end, so neither needs to know how many events of a track the other holds. Each chunk is
 * freed once copied. */
typedef struct scatter_job {
    trace_builder *b;
    const uint32_t *remap;
    uint32_t *pos; /* per track: the next slot (forward) or one past it (backward) */
    size_t c0, c1;
    int backward;
} scatter_job;

static void scatter_half(void *arg)
{
    scatter_job *j = arg;
    gp_event *out = j->b->t->events;
    for (size_t k = 0; k < j->c1 - j->c0; k++) {
        build_chunk *c = &j->b->chunks[j->backward ? j->c1 - 1 - k : j->c0 + k];
        for (size_t i = 0; i < c->n; i++) {
            gp_event e = c->ev[j->backward ? c->n - 1 - i : i];
            e.track = j->remap[e.track];
            if (j->backward)
                out[--j->pos[e.track]] = e;
            else
                out[j->pos[e.track]++] = e;
        }
        free(c->ev);
        c->ev = NULL;
    }
}

/* Scatter the chunks into t->events by track, on two threads (halves by event count). */
static gp_status scatter(trace_builder *b, const uint32_t *remap)
{
    gp_trace *t = b->t;
    size_t nt = t->n_tracks ? t->n_tracks : 1, mid = 0;
    uint32_t *start = malloc(nt * sizeof(uint32_t)), *end = malloc(nt * sizeof(uint32_t));
    if (!start || !end) {
        free(start);
        free(end);
        return GP_ENOMEM;
    }
    for (size_t k = 0; k < t->n_tracks; k++) {
        start[k] = t->tracks[k].first;
        end[k] = t->tracks[k].first + t->tracks[k].count;
    }
    for (uint64_t seen = 0; mid < b->n_chunks && seen < b->n_events / 2; mid++)
        seen += b->chunks[mid].n;
    scatter_job fwd = {b, remap, start, 0, mid, 0}, bwd = {b, remap, end, mid, b->n_chunks, 1};
    trace_par2(trace_threads(b->threads), scatter_half, &fwd, scatter_half, &bwd);
    b->n_chunks = 0;
    free(start);
    free(end);
    return GP_OK;
}

static gp_status make_tracks(trace_builder *b, uint32_t **remap_out)
{
    gp_trace *t = b->t;
    size_t nt = b->tracks.n;
    track_key *order = malloc((nt ? nt : 1) * sizeof(*order));
    uint32_t *remap = malloc((nt ? nt : 1) * sizeof(*remap));
    t->tracks = calloc(nt ? nt : 1, sizeof(gp_track));
    if (!order || !remap || !t->tracks) {
        free(order);
        free(remap);
        return GP_ENOMEM;
    }
    for (size_t k = 0; k < nt; k++) {
        build_track *bt = TRACE_VEC_AT(&b->tracks, build_track, k);
        order[k] = (track_key){
                bt->pid, bt->tid, bt->pid_str == GP_STR_NONE ? NULL : gp_trace_str(t, bt->pid_str),
                bt->tid_str == GP_STR_NONE ? NULL : gp_trace_str(t, bt->tid_str), bt};
    }
    qsort(order, nt, sizeof(*order), cmp_track);
    uint32_t first = 0;
    for (size_t k = 0; k < nt; k++) {
        const build_track *bt = order[k].bt;
        gp_track *tr = &t->tracks[k];
        tr->pid = bt->pid_str == GP_STR_NONE ? bt->pid : -1;
        tr->tid = bt->tid_str == GP_STR_NONE ? bt->tid : -1;
        tr->pid_str = bt->pid_str;
        tr->tid_str = bt->tid_str;
        tr->name = bt->name;
        tr->proc_name = GP_STR_NONE;
        tr->first = first;
        tr->count = (uint32_t)bt->count;
        first += tr->count;
        remap[bt - TRACE_VEC_AT(&b->tracks, build_track, 0)] = (uint32_t)k;
    }
    free(order);
    t->n_tracks = nt;
    *remap_out = remap;
    return GP_OK;
}

static int cmp_comm(const void *pa, const void *pb)
{
    const gp_comm_info *a = pa, *b = pb;
    return a->ext_id < b->ext_id ? -1 : a->ext_id > b->ext_id;
}

/* Sort the collectives' args by External id; records of one id (record_param_comms and its
 * kernels) become one, each field from whichever has it. */
static void comm_finish(trace_vec *v)
{
    gp_comm_info *c = (gp_comm_info *)v->data;
    size_t k = 0;
    if (v->n)
        qsort(c, v->n, sizeof(*c), cmp_comm);
    for (size_t i = 0; i < v->n; i++) {
        if (!k || c[k - 1].ext_id != c[i].ext_id) {
            c[k++] = c[i];
            continue;
        }
        gp_comm_info *d = &c[k - 1];
        gp_str *ds[] = {&d->coll, &d->pg, &d->dtype}, cs[] = {c[i].coll, c[i].pg, c[i].dtype};
        int64_t *dn[] = {&d->seq, &d->in_nelems, &d->out_nelems, &d->group_size};
        int64_t cn[] = {c[i].seq, c[i].in_nelems, c[i].out_nelems, c[i].group_size};
        for (int f = 0; f < 3; f++)
            *ds[f] = *ds[f] == GP_STR_NONE ? cs[f] : *ds[f];
        for (int f = 0; f < 4; f++)
            *dn[f] = *dn[f] < 0 ? cn[f] : *dn[f];
    }
    v->n = k;
}

static int cmp_step_sched(const void *pa, const void *pb)
{
    const gp_step_sched *a = pa, *b = pb;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_op_args(const void *pa, const void *pb)
{
    const trace_op_args *a = pa, *b = pb;
    return a->ext_id < b->ext_id ? -1 : a->ext_id > b->ext_id;
}

gp_status trace_builder_finish(trace_builder *b)
{
    gp_trace *t = b->t;
    uint64_t dropped = 0;
    for (size_t k = 0; k < b->tracks.n; k++)
        dropped += TRACE_VEC_AT(&b->tracks, build_track, k)->open_b.n;
    if (dropped) {
        t->info.n_skipped += dropped;
        trace_warn(t, "%llu B events have no matching E; dropped", (unsigned long long)dropped);
    }
    uint32_t *remap;
    if (make_tracks(b, &remap) != 0)
        return GP_ENOMEM;
    t->events = malloc((b->n_events ? b->n_events : 1) * sizeof(gp_event));
    if (!t->events || scatter(b, remap) != 0) {
        free(remap);
        return GP_ENOMEM;
    }
    free(remap);
    t->n_events = b->n_events;
    t->info.n_events = b->n_events;
    sort_tracks(t, trace_threads(b->threads));
    if (!t->n_events)
        t->info.ts_min = t->info.ts_max = 0;
    apply_procs(b);
    comm_finish(&t->comm);
    if (t->op_args.n)
        qsort(t->op_args.data, t->op_args.n, sizeof(trace_op_args), cmp_op_args);
    if (t->step_sched.n)
        qsort(t->step_sched.data, t->step_sched.n, sizeof(gp_step_sched), cmp_step_sched);
    return GP_OK;
}
