/* One mapped trace parsed on several threads: traceEvents is cut at candidate event boundaries
 * ("}, {" then a key), each later part is parsed into its own builder, and the parts are merged in
 * file order (strings re-interned in first-sight order, side records and tracks re-mapped), so
 * the result is the same trace a single thread builds. A boundary is trusted only when the part
 * before it stops exactly there; otherwise parsing goes on single-threaded from the last good one.
 * The caller parses the first cut; worker threads take the later parts in order, and so does the
 * caller when its cut is done. Parts shrink towards the end (each a share of what is left), so
 * the threads finish together however the cost per byte varies along the file or a CPU is slowed.
 * GP_TRACE_THREADS=N and GP_TRACE_SPLIT_MIN=BYTES override the defaults (used by the tests). */
#include "reader/trace_build.h"
#include "reader/trace_source.h"

#include "gp/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define SPLIT_MAX_PARTS   16
#define SPLIT_MAX_THREADS 8
#define SPLIT_MIN_BYTES   ((size_t)32 << 20) /* smaller files are not worth a thread */
#define SPLIT_SCAN        ((size_t)1 << 20)  /* how far to look for a boundary */

enum part_end { PART_FAIL = 0, PART_NEXT, PART_CLOSED };

typedef struct split_part {
    const trace_source *src;
    trace_builder b;
    const char *begin, *next; /* this part's first event; the next part's (or NULL) */
    const char *stop;         /* after the ']' closing traceEvents (PART_CLOSED) */
    const char *tail;         /* after the last event, before its ',' (PART_NEXT) */
    int end;                  /* enum part_end */
} split_part;

struct trace_split {
    int n;                  /* later parts (the caller parses the cut before them) */
    atomic_int next;        /* the next part to take */
    int n_threads, started; /* worker threads, and how many were started */
    pthread_t threads[SPLIT_MAX_THREADS];
    split_part parts[SPLIT_MAX_PARTS];
};

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* The first '{' in [from, from + SPLIT_SCAN) preceded by "}," and followed by a key. */
static const char *find_candidate(const char *from, const char *end)
{
    const char *lim = end - from > (ptrdiff_t)SPLIT_SCAN ? from + SPLIT_SCAN : end;
    for (const char *p = from; p < lim && (p = memchr(p, '}', (size_t)(lim - p))) != NULL; p++) {
        const char *q = skip_ws(p + 1, end);
        if (q >= end || *q != ',')
            continue;
        q = skip_ws(q + 1, end);
        if (q >= end || *q != '{')
            continue;
        const char *k = skip_ws(q + 1, end);
        if (k < end && *k == '"')
            return q;
    }
    return NULL;
}

/* Parse events from pt->begin until the next part's start or the end of traceEvents. */
static void part_run(split_part *pt)
{
    json_lex *l = &pt->b.lex;
    const char *dropped = pt->begin;
    l->p = pt->begin;
    for (;;) {
        int more, ch = 0;
        const char *start = l->p;
        if (trace_event_parse(&pt->b) != GP_OK)
            return;
        if ((size_t)(l->p - start) > pt->src->max_unit)
            return; /* too big: the sequential parse reports it where it is */
        const char *tail = l->p;
        if (json_lex_next(l, ']', "after an event", &more) != GP_OK)
            return;
        if (more && (ch = json_lex_ws(l)) == ']') {
            l->p++; /* trailing comma */
            more = 0;
        }
        if (!more) {
            pt->stop = l->p;
            pt->end = PART_CLOSED;
            return;
        }
        if (ch < 0)
            return;
        if (pt->next && l->p >= pt->next) {
            pt->tail = tail;
            pt->end = l->p == pt->next ? PART_NEXT : PART_FAIL;
            return;
        }
        dropped = trace_source_drop(pt->src, dropped, l->p);
    }
}

/* Take parts in order until none is left. */
static void take_parts(trace_split *sp)
{
    for (int k; (k = atomic_fetch_add(&sp->next, 1)) < sp->n;)
        part_run(&sp->parts[k]);
}

static void *worker(void *arg)
{
    take_parts(arg);
    return NULL;
}

/* The threads a read may use: gp_trace_opts.threads, else one per online CPU. */
static int threads_wanted(const trace_source *src)
{
    long n = src->threads > 0 ? src->threads : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > SPLIT_MAX_THREADS + 1 ? SPLIT_MAX_THREADS + 1 : (int)n;
}

static gp_status part_init(split_part *pt, const trace_source *src, const char *end)
{
    gp_trace *t = trace_new_empty(src->path);
    if (!t)
        return GP_ENOMEM;
    if (trace_builder_init(&pt->b, t) != 0) {
        trace_builder_release(&pt->b);
        gp_trace_free(t);
        return GP_ENOMEM;
    }
    pt->src = src;
    pt->b.part = 1;
    pt->b.budget = src->budget;
    t->strings.budget = src->budget;
    pt->b.threads = src->threads;
    pt->b.lex.end = end;
    pt->b.lex.eof = 1;
    return GP_OK;
}

static void part_release(split_part *pt)
{
    gp_trace *t = pt->b.t;
    trace_builder_release(&pt->b);
    if (t)
        trace_intern_unbudget(&t->strings, 0); /* the whole trace interns them again */
    gp_trace_free(t);
}

/* Cut [start, end) for `want` threads: each cut takes 1/(2 * want) of what is left (the last
 * ones get small, for the balance), at least min_cut bytes, at most SPLIT_MAX_PARTS later parts. */
static void plan_parts(trace_split *sp, const trace_source *src, const char *start, const char *end,
                       int want)
{
    size_t min_cut = (size_t)(end - start) / (4 * SPLIT_MAX_PARTS);
    const char *prev = start;
    while (sp->n < SPLIT_MAX_PARTS) {
        size_t cut = (size_t)(end - prev) / (2 * (size_t)want);
        const char *c = find_candidate(prev + (cut > min_cut ? cut : min_cut + 1), end);
        if (!c || part_init(&sp->parts[sp->n], src, end) != 0)
            break;
        sp->parts[sp->n++].begin = prev = c;
        if ((size_t)(end - prev) < 2 * min_cut)
            break;
    }
    for (int k = 0; k < sp->n; k++)
        sp->parts[k].next = k + 1 < sp->n ? sp->parts[k + 1].begin : NULL;
}

trace_split *trace_split_start(const trace_source *src, const char *start, const char *end,
                               const char **split_at)
{
    *split_at = NULL;
    size_t len = (size_t)(end - start);
    int want = threads_wanted(src);
    if (!trace_source_whole(src) || want < 2 ||
        (len < SPLIT_MIN_BYTES && !(src->flags & GP_TRACE_SPLIT_ANY)))
        return NULL;
    trace_split *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    atomic_init(&sp->next, 0);
    plan_parts(sp, src, start, end, want);
    if (sp->n == 0) {
        free(sp);
        return NULL;
    }
    sp->n_threads = want - 1 < sp->n ? want - 1 : sp->n;
    while (sp->started < sp->n_threads &&
           pthread_create(&sp->threads[sp->started], NULL, worker, sp) == 0)
        sp->started++;
    *split_at = sp->parts[0].begin;
    return sp;
}

/* Stop handing out parts and wait for the workers. */
static void stop_workers(trace_split *sp)
{
    atomic_store(&sp->next, sp->n);
    for (int k = 0; k < sp->started; k++)
        pthread_join(sp->threads[k], NULL);
    sp->started = 0;
}

void trace_split_free(trace_split *sp)
{
    if (!sp)
        return;
    stop_workers(sp);
    for (int k = 0; k < sp->n; k++)
        part_release(&sp->parts[k]);
    free(sp);
}

/* Side records and interned strings of a part, as indices in the destination. */
typedef struct merge_map {
    gp_str *str;
    uint32_t *track;
    uint32_t *gpu; /* part's side record -> destination's */
    uint32_t mem_off, py_off;
} merge_map;

static gp_str map_str(const merge_map *m, gp_str s)
{
    return s == GP_STR_NONE ? GP_STR_NONE : m->str[s];
}

static gp_status merge_strings(trace_builder *d, const gp_trace *src, merge_map *m)
{
    const trace_intern *in = &src->strings;
    m->str = malloc((in->n ? in->n : 1) * sizeof(gp_str));
    if (!m->str)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < in->n; i++)
        if ((m->str[i] = trace_intern_str(&d->t->strings, in->strs[i], in->lens[i])) == GP_STR_NONE)
            return GP_ENOMEM;
    return GP_OK;
}

static uint32_t map_aux(const merge_map *m, const gp_event *e)
{
    switch (e->kind) {
    case GP_EV_KERNEL:
    case GP_EV_MEMCPY:
    case GP_EV_MEMSET:
    case GP_EV_SYNC:
        return m->gpu[e->aux];
    case GP_EV_MEMORY:
        return e->aux + m->mem_off;
    case GP_EV_PYTHON:
        return e->aux == GP_NONE ? GP_NONE : e->aux + m->py_off;
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION:
        return map_str(m, e->aux); /* the shape */
    default:
        return e->aux;
    }
}

static gp_status merge_track(trace_builder *d, const build_track *bt, const merge_map *m,
                             uint32_t *out)
{
    raw_ev key;
    memset(&key, 0, sizeof(key));
    key.pid = bt->pid;
    key.tid = bt->tid;
    key.pid_str = map_str(m, bt->pid_str);
    key.tid_str = map_str(m, bt->tid_str);
    uint32_t k = trace_builder_track(d, &key);
    if (k == GP_NONE)
        return GP_ENOMEM;
    build_track *dt = TRACE_VEC_AT(&d->tracks, build_track, k);
    dt->count += bt->count;
    if (bt->name != GP_STR_NONE)
        dt->name = map_str(m, bt->name); /* a later thread_name wins, as when read in order */
    for (size_t i = 0; i < bt->open_b.n; i++) {
        gp_event *e = trace_vec_push(&dt->open_b); /* an E after the split may still close it */
        if (!e)
            return GP_ENOMEM;
        *e = *TRACE_VEC_AT(&bt->open_b, gp_event, i);
        e->name = map_str(m, e->name);
        e->track = k;
        e->aux = map_aux(m, e);
    }
    *out = k;
    return GP_OK;
}

static gp_status merge_tracks(trace_builder *d, const trace_builder *s, merge_map *m)
{
    m->track = malloc((s->tracks.n ? s->tracks.n : 1) * sizeof(uint32_t));
    if (!m->track)
        return GP_ENOMEM;
    for (size_t k = 0; k < s->tracks.n; k++)
        if (merge_track(d, TRACE_VEC_AT(&s->tracks, build_track, k), m, &m->track[k]) != 0)
            return GP_ENOMEM;
    for (size_t p = 0; p < s->procs.n; p++) {
        const build_proc *sp = TRACE_VEC_AT(&s->procs, build_proc, p);
        build_proc *dp = trace_vec_push(&d->procs);
        if (!dp)
            return GP_ENOMEM;
        *dp = (build_proc){sp->pid, map_str(m, sp->pid_str), map_str(m, sp->name)};
    }
    return GP_OK;
}

static gp_status merge_side(trace_builder *d, const gp_trace *s, merge_map *m)
{
    m->mem_off = (uint32_t)d->t->mem.n;
    m->py_off = (uint32_t)d->t->py.n;
    for (size_t i = 0; i < s->fwdbwd.n; i++) {
        gp_flow *f = trace_vec_push(&d->t->fwdbwd);
        if (!f)
            return GP_ENOMEM;
        *f = *TRACE_VEC_AT(&s->fwdbwd, gp_flow, i);
    }
    for (size_t i = 0; i < s->comm.n; i++) {
        gp_comm_info *c = trace_vec_push(&d->t->comm);
        if (!c)
            return GP_ENOMEM;
        *c = *TRACE_VEC_AT(&s->comm, gp_comm_info, i);
        c->coll = map_str(m, c->coll), c->pg = map_str(m, c->pg), c->dtype = map_str(m, c->dtype);
    }
    for (size_t i = 0; i < s->op_args.n; i++) {
        trace_op_args *o = trace_vec_push(&d->t->op_args);
        if (!o)
            return GP_ENOMEM;
        *o = *TRACE_VEC_AT(&s->op_args, trace_op_args, i);
        o->concrete = map_str(m, o->concrete);
        o->dims = map_str(m, o->dims);
    }
    for (size_t i = 0; i < s->step_sched.n; i++) {
        gp_step_sched *k = trace_vec_push(&d->t->step_sched);
        if (!k)
            return GP_ENOMEM;
        *k = *TRACE_VEC_AT(&s->step_sched, gp_step_sched, i);
    }
    for (size_t i = 0; i < s->counters.n; i++) {
        gp_counter *c = trace_vec_push(&d->t->counters);
        if (!c)
            return GP_ENOMEM;
        *c = *TRACE_VEC_AT(&s->counters, gp_counter, i);
        c->name = map_str(m, c->name);
    }
    for (size_t i = 0; i < s->py.n; i++) {
        gp_py_info *p = trace_vec_push(&d->t->py);
        if (!p)
            return GP_ENOMEM;
        *p = *TRACE_VEC_AT(&s->py, gp_py_info, i);
    }
    m->gpu = malloc((s->gpu.n ? s->gpu.n : 1) * sizeof(uint32_t));
    if (!m->gpu)
        return GP_ENOMEM;
    for (size_t i = 0; i < s->gpu.n; i++) {
        gp_gpu_info g;
        memcpy(&g, TRACE_VEC_AT(&s->gpu, gp_gpu_info, i), sizeof(g));
        g.sync_kind = map_str(m, g.sync_kind);
        if (trace_builder_gpu(d, &g, &m->gpu[i]) != GP_OK)
            return GP_ENOMEM;
    }
    for (size_t i = 0; i < s->mem.n; i++) {
        gp_mem_sample *ms = trace_vec_push(&d->t->mem);
        if (!ms)
            return GP_ENOMEM;
        *ms = *TRACE_VEC_AT(&s->mem, gp_mem_sample, i);
    }
    return GP_OK;
}

/* Append the part's events in order: its chunks are renumbered in place and taken over. */
static gp_status merge_events(trace_builder *d, trace_builder *s, const merge_map *m)
{
    for (size_t c = 0; c < s->n_chunks; c++) {
        gp_event *ev = s->chunks[c].ev;
        for (size_t i = 0; i < s->chunks[c].n; i++) {
            ev[i].name = map_str(m, ev[i].name);
            ev[i].track = m->track[ev[i].track];
            ev[i].aux = map_aux(m, &ev[i]);
        }
        if (trace_builder_adopt(d, ev, s->chunks[c].n) != 0)
            return GP_ENOMEM;
        s->chunks[c].ev = NULL;
    }
    s->n_chunks = 0;
    return GP_OK;
}

static gp_status merge_counts(trace_builder *d, const trace_builder *s, const merge_map *m)
{
    const gp_trace_info *si = &s->t->info;
    gp_trace_info *di = &d->t->info;
    di->n_flows += si->n_flows;
    di->n_counters += si->n_counters;
    di->n_metadata += si->n_metadata;
    di->n_skipped += si->n_skipped;
    di->n_no_ts += si->n_no_ts;
    di->n_neg_dur += si->n_neg_dur;
    di->n_no_ph += si->n_no_ph;
    di->old_schema |= si->old_schema;
    d->lex.lenient_escapes += s->lex.lenient_escapes;
    d->lex.control_chars += s->lex.control_chars;
    for (gp_str id = 0; id < s->str_info.n; id++) {
        const trace_str_info *x = TRACE_VEC_AT(&s->str_info, trace_str_info, id);
        if (x->cat_kind != TRACE_CAT_UNKNOWN)
            continue;
        uint64_t n = TRACE_VEC_AT(&s->t->unknown_cats, gp_cat_count, x->unknown_idx - 1)->count;
        if (trace_builder_count_cat(d, m->str[id], n) != 0)
            return GP_ENOMEM;
    }
    return GP_OK;
}

static gp_status merge_part(trace_builder *d, split_part *pt)
{
    merge_map m = {NULL, NULL, NULL, 0, 0};
    /* side records before tracks: a track's open B events map their side record too */
    int ok = merge_strings(d, pt->b.t, &m) == 0 && merge_side(d, pt->b.t, &m) == 0;
    ok = ok && merge_tracks(d, &pt->b, &m) == 0 && merge_events(d, &pt->b, &m) == 0;
    ok = ok && merge_counts(d, &pt->b, &m) == 0;
    free(m.str);
    free(m.track);
    free(m.gpu);
    return ok ? GP_OK : GP_ENOMEM;
}

gp_status trace_split_join(trace_split *sp, trace_builder *b, const char **resume, int *closed)
{
    gp_status rc = GP_OK;
    *closed = 0;
    take_parts(sp); /* help with what no worker has taken yet */
    stop_workers(sp);
    for (int k = 0; k < sp->n; k++) {
        split_part *pt = &sp->parts[k];
        if (pt->end == PART_FAIL || pt->b.orphan_e)
            break; /* parse on from here in order */
        if ((rc = merge_part(b, pt)) != 0)
            break;
        trace_intern_unbudget(&pt->b.t->strings, 0); /* the whole trace holds them now */
        *resume = pt->end == PART_CLOSED ? pt->stop : pt->tail;
        if (pt->end == PART_CLOSED) {
            *closed = 1;
            break;
        }
    }
    GP_LOG(GP_LOG_DEBUG, "%s: traceEvents read in %d parts on %d threads, %s", b->t->info.path,
           sp->n + 1, sp->n_threads + 1,
           *closed ? "all merged" : "going on single-threaded from a part that was not usable");
    trace_split_free(sp);
    return rc;
}
