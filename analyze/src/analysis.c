/* gp_analysis_run: links (correlation, External id, nesting), steps aligned to the device as
 * tb_plugin does, and tb_plugin's priority-sweep step-time breakdown; then the GPU timeline and
 * the lists (gpu_timeline.c, analysis_lists.c). Also the interval and id-map helpers, and
 * analysis_par2: independent passes (nesting + correlation map vs. steps + External id map,
 * halves of the link and step-alignment passes, breakdown vs. GPU timeline + lists) run on two
 * threads when there are two CPUs. */
#include "analysis_int.h"
#include "sort_runs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int analysis_threads(int budget)
{
    long n = budget > 0 ? budget : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 2 ? 2 : (int)n;
}

int analysis_threads_of(const gp_analysis *a)
{
    return a->threads;
}

typedef struct par_job {
    void (*fn)(void *);
    void *arg;
} par_job;

static void *par_entry(void *arg)
{
    par_job *j = arg;
    j->fn(j->arg);
    return NULL;
}

void analysis_par2(int threads, void (*fn0)(void *), void *arg0, void (*fn1)(void *), void *arg1)
{
    par_job j = {fn1, arg1};
    pthread_t th;
    if (threads < 2 || pthread_create(&th, NULL, par_entry, &j) != 0) {
        fn0(arg0);
        fn1(arg1);
        return;
    }
    fn0(arg0);
    pthread_join(th, NULL);
}

int id_map_init(id_map *m, size_t expected)
{
    size_t cap = 64;
    while (cap < expected * 2)
        cap *= 2;
    memset(m, 0, sizeof(*m));
    m->slots = malloc(cap * sizeof(*m->slots));
    m->mask = cap - 1;
    if (!m->slots)
        return -1;
    for (size_t i = 0; i < cap; i++)
        m->slots[i].val = GP_NONE;
    return 0;
}

/* Dense when 4 bytes per id of the range cost no more than the hash's ~24-48 per id. */
#define ID_DENSE_SLACK 4

int id_map_init_range(id_map *m, int64_t lo, int64_t hi, size_t count)
{
    if (count == 0 || hi < lo)
        return id_map_init(m, 16);
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* wraps to 0 for the full int64 range */
    if (span == 0 || span / ID_DENSE_SLACK > count + 4096 || span > SIZE_MAX / sizeof(uint32_t))
        return id_map_init(m, count);
    memset(m, 0, sizeof(*m));
    m->dense = malloc((size_t)span * sizeof(uint32_t));
    if (!m->dense)
        return -1;
    memset(m->dense, 0xFF, (size_t)span * sizeof(uint32_t)); /* GP_NONE */
    m->base = lo;
    m->span = span;
    return 0;
}

void id_map_release(id_map *m)
{
    free(m->slots);
    free(m->dense);
    memset(m, 0, sizeof(*m));
}

static size_t id_slot_of(const id_map *m, int64_t key)
{
    size_t i = (size_t)((const id_slot *)id_map_home(m, key) - m->slots);
    while (m->slots[i].val != GP_NONE && !id_slot_is(&m->slots[i], key))
        i = (i + 1) & m->mask;
    return i;
}

static int id_map_grow(id_map *m)
{
    id_map bigger;
    if (id_map_init(&bigger, (m->mask + 1)) != 0) {
        id_map_release(&bigger);
        return -1;
    }
    for (size_t i = 0; i <= m->mask; i++)
        if (m->slots[i].val != GP_NONE)
            id_map_put(&bigger, id_slot_key(&m->slots[i]), m->slots[i].val);
    id_map_release(m);
    *m = bigger;
    return 0;
}

int id_map_put(id_map *m, int64_t key, uint32_t val)
{
    if (m->dense) {
        uint64_t k = (uint64_t)key - (uint64_t)m->base;
        if (k >= m->span)
            return ANALYSIS_BROKEN;
        if (m->dense[k] == GP_NONE) {
            m->dense[k] = val;
            m->n++;
        }
        return 0;
    }
    if ((m->n + 1) * 2 > m->mask && id_map_grow(m) != 0)
        return ANALYSIS_NOMEM;
    id_slot *s = &m->slots[id_slot_of(m, key)];
    if (s->val == GP_NONE) {
        s->key_lo = (uint32_t)(uint64_t)key;
        s->key_hi = (uint32_t)((uint64_t)key >> 32);
        s->val = val;
        m->n++;
    }
    return 0;
}

uint32_t id_map_get(const id_map *m, int64_t key)
{
    if (m->dense) {
        uint64_t k = (uint64_t)key - (uint64_t)m->base;
        return k < m->span ? m->dense[k] : GP_NONE;
    }
    return m->slots[id_slot_of(m, key)].val;
}

static int cmp_ival(const void *pa, const void *pb)
{
    const ival *a = pa, *b = pb;
    return (a->a > b->a) - (a->a < b->a);
}

size_t ival_merge(ival *v, size_t n)
{
    if (n == 0)
        return 0;
    /* collected from tracks sorted by start: a run per track (per stream for kernels) */
    sort_runs(v, n, sizeof(*v), cmp_ival);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].a <= v[k].b) {
            if (v[i].b > v[k].b)
                v[k].b = v[i].b;
        } else {
            v[++k] = v[i];
        }
    }
    return k + 1;
}

int64_t ival_total(const ival *v, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i].b - v[i].a;
    return s;
}

size_t ival_subtract(const ival *a, size_t na, const ival *b, size_t nb, ival *out)
{
    size_t k = 0, j = 0;
    for (size_t i = 0; i < na; i++) {
        int64_t lo = a[i].a, hi = a[i].b;
        while (j < nb && b[j].b <= lo)
            j++;
        for (size_t q = j; q < nb && b[q].a < hi; q++) {
            if (b[q].a > lo)
                out[k++] = (ival){lo, b[q].a};
            if (b[q].b > lo)
                lo = b[q].b;
        }
        if (lo < hi)
            out[k++] = (ival){lo, hi};
    }
    return k;
}

int64_t ival_clip_total(const ival *v, size_t n, int64_t lo, int64_t hi)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = v[i].a > lo ? v[i].a : lo, y = v[i].b < hi ? v[i].b : hi;
        if (y > x)
            s += y - x;
    }
    return s;
}

/* link_of of CPU ranges (parent_of): the innermost enclosing CPU range on the track. */
static void link_nesting(gp_analysis *a)
{
    size_t nt;
    const gp_track *tracks = gp_trace_tracks(a->t, &nt);
    uint32_t *stack = malloc(sizeof(uint32_t) * 1024);
    for (size_t k = 0; k < nt && stack; k++) {
        size_t depth = 0;
        for (uint32_t i = tracks[k].first; i < tracks[k].first + tracks[k].count; i++) {
            const gp_event *e = &a->ev[i];
            if (!analysis_is_cpu_range(e->kind))
                continue;
            while (depth &&
                   (a->ev[stack[depth - 1]].ts + a->ev[stack[depth - 1]].dur <= e->ts ||
                    a->ev[stack[depth - 1]].ts + a->ev[stack[depth - 1]].dur < e->ts + e->dur))
                depth--;
            a->link_of[i] = depth ? stack[depth - 1] : GP_NONE;
            if (depth < 1024)
                stack[depth++] = i;
        }
    }
    free(stack);
}

static int is_op(int kind)
{
    return kind == GP_EV_CPU_OP || kind == GP_EV_USER_ANNOTATION;
}

#define LINK_AHEAD 16

static void link_prefetch(const id_map *corr, const id_map *ext, const gp_event *e)
{
#if defined(__GNUC__)
    if (corr && e->corr != GP_ID_NONE)
        __builtin_prefetch(id_map_home(corr, e->corr));
    if (ext && e->ext_id != GP_ID_NONE)
        __builtin_prefetch(id_map_home(ext, e->ext_id));
#else
    (void)corr, (void)ext, (void)e;
#endif
}

/* The map of one kind of id (correlation of runtime calls, or External id of CPU ops) over all
 * events; the two are built on two threads when there are two CPUs. */
typedef struct id_job {
    gp_analysis *a;
    id_map *map;
    int ext; /* 0: correlation ids, 1: External ids */
    int rc;
} id_job;

/* The id event e defines for the job's kind, or GP_ID_NONE. */
static int64_t id_defined(const id_job *j, const gp_event *e)
{
    if (!j->ext)
        return e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER ? e->corr : GP_ID_NONE;
    return is_op(e->kind) && !(e->flags & GP_EVF_GPU) ? e->ext_id : GP_ID_NONE;
}

/* Size the map from the ids' range and count (one sequential pass), then fill it. */
static void build_id_map(void *arg)
{
    id_job *j = arg;
    const gp_analysis *a = j->a;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t count = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        int64_t id = id_defined(j, &a->ev[i]);
        if (id == GP_ID_NONE)
            continue;
        lo = id < lo ? id : lo;
        hi = id > hi ? id : hi;
        count++;
    }
    if ((j->rc = id_map_init_range(j->map, lo, hi, count)) != 0)
        return;
    for (uint32_t i = 0; i < a->n && j->rc == 0; i++) {
        if (!j->map->dense && i + LINK_AHEAD < a->n)
            link_prefetch(j->ext ? NULL : j->map, j->ext ? j->map : NULL, &a->ev[i + LINK_AHEAD]);
        int64_t id = id_defined(j, &a->ev[i]);
        if (id != GP_ID_NONE)
            j->rc = id_map_put(j->map, id, i);
    }
}

/* One half of a link pass over events [lo, hi): each writes only its own events' links. */
typedef struct link_half {
    gp_analysis *a;
    const id_map *corr, *ext;
    uint32_t lo, hi;
} link_half;

/* op_of of runtime calls: by External id, else the innermost enclosing op. */
static void link_runtime(void *arg)
{
    link_half *h = arg;
    gp_analysis *a = h->a;
    for (uint32_t i = h->lo; i < h->hi; i++) {
        const gp_event *e = &a->ev[i];
        if (i + LINK_AHEAD < h->hi)
            link_prefetch(NULL, h->ext, &a->ev[i + LINK_AHEAD]);
        if (e->kind != GP_EV_RUNTIME && e->kind != GP_EV_DRIVER)
            continue;
        uint32_t op = e->ext_id != GP_ID_NONE ? id_map_get(h->ext, e->ext_id) : GP_NONE;
        for (uint32_t p = a->link_of[i]; op == GP_NONE && p != GP_NONE; p = a->link_of[p])
            if (is_op(a->ev[p].kind))
                op = p;
        a->op_of[i] = op;
    }
}

/* link_of (runtime call, by correlation) and op_of of GPU activities: reads runtime op_of. */
static void link_gpu(void *arg)
{
    link_half *h = arg;
    gp_analysis *a = h->a;
    for (uint32_t i = h->lo; i < h->hi; i++) {
        const gp_event *e = &a->ev[i];
        if (i + LINK_AHEAD < h->hi)
            link_prefetch(h->corr, h->ext, &a->ev[i + LINK_AHEAD]);
        if (!(e->flags & GP_EVF_GPU) || e->kind == GP_EV_GPU_USER_ANNOTATION)
            continue;
        uint32_t r = e->corr != GP_ID_NONE ? id_map_get(h->corr, e->corr) : GP_NONE;
        a->link_of[i] = r;
        uint32_t op = e->ext_id != GP_ID_NONE ? id_map_get(h->ext, e->ext_id) : GP_NONE;
        a->op_of[i] = op != GP_NONE ? op : r != GP_NONE ? a->op_of[r] : GP_NONE;
    }
}

static int find_steps(gp_analysis *a);

/* The two threads of the first pass: nesting and the correlation map on one, the steps and the
 * External id map on the other (each reads only the events and writes its own outputs). */
static void nest_then_corr(void *arg)
{
    id_job *j = arg;
    link_nesting(j->a);
    build_id_map(j);
}

static void steps_then_ext(void *arg)
{
    id_job *j = arg;
    j->rc = find_steps(j->a);
    if (j->rc == 0)
        build_id_map(j);
}

/* Nesting and steps, then link_of of GPU activities (runtime_of) by correlation and op_of by
 * External id or by nesting; each link pass split in two halves of the events (runtime calls
 * before GPU activities). */
static int link_all(gp_analysis *a)
{
    id_map corr = {0}, ext = {0};
    id_job jc = {a, &corr, 0, 0}, je = {a, &ext, 1, 0};
    analysis_par2(a->threads, nest_then_corr, &jc, steps_then_ext, &je);
    uint32_t mid = (uint32_t)(a->n / 2);
    link_half h0 = {a, &corr, &ext, 0, mid}, h1 = {a, &corr, &ext, mid, (uint32_t)a->n};
    if (jc.rc == 0 && je.rc == 0) {
        analysis_par2(a->threads, link_runtime, &h0, link_runtime, &h1);
        analysis_par2(a->threads, link_gpu, &h0, link_gpu, &h1);
    }
    id_map_release(&corr);
    id_map_release(&ext);
    return jc.rc != ANALYSIS_OK ? jc.rc : je.rc;
}

static int cmp_step(const void *pa, const void *pb)
{
    const gp_step *a = pa, *b = pb;
    return (a->host_ts > b->host_ts) - (a->host_ts < b->host_ts);
}

static int find_steps(gp_analysis *a)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        if (e->kind == GP_EV_CPU_OP) { /* tb: operators, not annotations or Python frames */
            lo = e->ts < lo ? e->ts : lo;
            hi = e->ts + e->dur > hi ? e->ts + e->dur : hi;
        }
        if (!(e->flags & GP_EVF_STEP))
            continue;
        gp_step *s = trace_vec_push(&a->steps);
        if (!s)
            return -1;
        s->num = strtoll(gp_trace_str(a->t, e->name) + 13, NULL, 10);
        s->event = i;
        s->host_ts = e->ts;
        s->host_end = e->ts + e->dur;
    }
    if (a->steps.n == 0 && a->n > 0) {
        gp_step *s = trace_vec_push(&a->steps);
        if (!s)
            return -1;
        const gp_trace_info *in = gp_trace_get_info(a->t);
        s->num = -1;
        s->event = GP_NONE;
        s->synthetic = 1;
        s->host_ts = lo <= hi ? lo : in->ts_min;
        s->host_end = lo <= hi ? hi : in->ts_max;
    }
    if (a->steps.n)
        qsort(a->steps.data, a->steps.n, sizeof(gp_step), cmp_step);
    return 0;
}

static int32_t step_at(const gp_analysis *a, int64_t ts)
{
    const gp_step *s = (const gp_step *)a->steps.data;
    size_t lo = 0, hi = a->steps.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].host_ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && ts < s[lo - 1].host_end ? (int32_t)(lo - 1) : -1;
}

int32_t analysis_step_of(const gp_analysis *a, uint32_t i)
{
    const gp_event *e = &a->ev[i];
    if (!(e->flags & GP_EVF_GPU))
        return step_at(a, e->ts);
    uint32_t r = analysis_runtime(a, i);
    if (!analysis_is_gpu_work(e->kind) || r == GP_NONE)
        return -1;
    /* tb_plugin: GPU work belongs to the step whose host span holds its whole launch call. */
    int32_t k = step_at(a, a->ev[r].ts);
    const gp_step *s = (const gp_step *)a->steps.data;
    return k >= 0 && a->ev[r].ts + a->ev[r].dur <= s[k].host_end ? k : -1;
}

/* One half of the events' GPU work, by step: how many activities, where the first starts and
 * the last ends, and how many belong to no step. */
typedef struct align_half {
    const gp_analysis *a;
    uint32_t lo, hi;
    int64_t *gpu_ts, *gpu_end; /* per step */
    uint32_t *n_gpu;           /* per step */
    uint32_t n_unmatched;
} align_half;

static void align_count(void *arg)
{
    align_half *h = arg;
    const gp_analysis *a = h->a;
    for (uint32_t i = h->lo; i < h->hi; i++) {
        const gp_event *e = &a->ev[i];
        if (!analysis_is_gpu_work(e->kind))
            continue;
        int32_t k = analysis_step_of(a, i);
        if (k < 0) {
            h->n_unmatched++;
            continue;
        }
        h->n_gpu[k]++;
        h->gpu_ts[k] = e->ts < h->gpu_ts[k] ? e->ts : h->gpu_ts[k];
        h->gpu_end[k] = e->ts + e->dur > h->gpu_end[k] ? e->ts + e->dur : h->gpu_end[k];
    }
}

/* tb_plugin's start of the first step: after GPU work that no step launched and that ended
 * before the first step's own GPU work began (work queued before the profiled window). */
static int64_t first_step_start(const gp_analysis *a, int64_t first_gpu_ts)
{
    const gp_step *s = (const gp_step *)a->steps.data;
    int64_t start = s[0].host_ts;
    size_t n_tracks;
    const gp_track *tr = gp_trace_tracks(a->t, &n_tracks);
    for (size_t k = 0; k < n_tracks; k++) {
        if (tr[k].count == 0 || !(a->ev[tr[k].first].flags & GP_EVF_GPU))
            continue;
        for (uint32_t i = tr[k].first; i < tr[k].first + tr[k].count; i++) {
            const gp_event *e = &a->ev[i];
            int64_t end = e->ts + e->dur;
            if (analysis_is_gpu_work(e->kind) && end < first_gpu_ts && end > start &&
                analysis_step_of(a, i) < 0)
                start = end;
        }
    }
    return start;
}

/* tb_plugin drops trailing steps that launched no GPU work (the profiler may have missed their
 * kernels), and the last one that did if it launched under 80% of its predecessor's. */
static size_t steps_kept(const gp_step *s, size_t n)
{
    size_t last = n;
    while (last > 0 && s[last - 1].n_gpu_ops == 0)
        last--;
    if (last == 0)
        return n;
    if (last > 1 && (double)s[last - 2].n_gpu_ops * 0.8 > (double)s[last - 1].n_gpu_ops)
        last--;
    return last;
}

/* tb_plugin's device alignment of the steps: where any step launched GPU work, a step starts
 * where the previous one ended (the first after earlier queued work) and ends after the GPU work
 * it launched; trailing steps without GPU work are dropped. The events are counted in two halves
 * (on two threads), then combined per step. */
static void align_steps(gp_analysis *a)
{
    gp_step *s = (gp_step *)a->steps.data;
    size_t ns = a->steps.n + 1;
    int64_t *ts = malloc(2 * ns * sizeof(int64_t)), *end = calloc(2 * ns, sizeof(int64_t));
    uint32_t *cnt = calloc(2 * ns, sizeof(uint32_t));
    int ok = ts && end && cnt;
    align_half h[2] = {{a, 0, (uint32_t)(a->n / 2), ts, end, cnt, 0},
                       {a, (uint32_t)(a->n / 2), (uint32_t)a->n, ts + ns, end + ns, cnt + ns, 0}};
    for (size_t k = 0; ok && k < 2 * ns; k++)
        ts[k] = INT64_MAX;
    if (ok)
        analysis_par2(a->threads, align_count, &h[0], align_count, &h[1]);
    int use_gpu = 0;
    for (size_t k = 0; k < a->steps.n; k++) {
        s[k].ts = s[k].host_ts;
        s[k].end = s[k].host_end;
        s[k].n_gpu_ops += ok ? cnt[k] + cnt[ns + k] : 0;
        use_gpu |= s[k].n_gpu_ops > 0;
    }
    if (use_gpu) {
        int64_t first_gpu = ts[0] < ts[ns] ? ts[0] : ts[ns];
        int64_t prev_end = s[0].n_gpu_ops && h[0].n_unmatched + h[1].n_unmatched
                                   ? first_step_start(a, first_gpu)
                                   : s[0].host_ts;
        for (size_t k = 0; k < a->steps.n; k++) {
            int64_t gpu_end = end[k] > end[ns + k] ? end[k] : end[ns + k];
            s[k].ts = s[k].host_ts > prev_end ? s[k].host_ts : prev_end;
            if (s[k].n_gpu_ops && gpu_end > s[k].end)
                s[k].end = gpu_end;
            if (s[k].end < s[k].ts)
                s[k].end = s[k].ts;
            prev_end = s[k].end;
        }
        if (a->steps.n > 1)
            a->steps.n = steps_kept(s, a->steps.n);
    }
    free(ts);
    free(end);
    free(cnt);
}

/* The breakdown role of an event, or -1 (steps themselves, instants, ...). */
static int role_of(const gp_analysis *a, uint32_t i)
{
    const gp_event *e = &a->ev[i];
    uint32_t op = a->op_of[i];
    switch (e->kind) {
    case GP_EV_KERNEL:
        return (e->flags & GP_EVF_COMM) || (op != GP_NONE && (a->ev[op].flags & GP_EVF_COMM))
                       ? GP_BD_COMMUNICATION
                       : GP_BD_KERNEL;
    case GP_EV_MEMCPY:
        return GP_BD_MEMCPY;
    case GP_EV_MEMSET:
        return GP_BD_MEMSET;
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
        return GP_BD_RUNTIME;
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION: /* Python frames (python_function) have no role: Other, as tb */
        if (e->flags & GP_EVF_STEP)
            return -1;
        if (e->flags & GP_EVF_DATALOADER)
            return GP_BD_DATALOADER;
        return (e->flags & GP_EVF_COMM) ? GP_BD_COMMUNICATION : GP_BD_CPU_EXEC;
    default:
        return -1;
    }
}

/* Intervals of role r overlapping [lo, hi): a sub-array of the merged list. */
static const ival *role_window(const ival *v, size_t n, int64_t lo, int64_t hi, size_t *out_n)
{
    size_t b = 0, e = n;
    while (b < e) {
        size_t m = (b + e) / 2;
        if (v[m].b <= lo)
            b = m + 1;
        else
            e = m;
    }
    size_t k = b;
    while (k < n && v[k].a < hi)
        k++;
    *out_n = k - b;
    return v + b;
}

static void sweep_step(gp_step *s, ival *const role[], const size_t nrole[], ival *buf[2])
{
    size_t ns = 1;
    buf[0][0] = (ival){s->ts, s->end};
    int cur = 0;
    for (int r = 0; r < GP_BD_OTHER; r++) {
        size_t nw;
        const ival *w = role_window(role[r], nrole[r], s->ts, s->end, &nw);
        size_t nn = ival_subtract(buf[cur], ns, w, nw, buf[!cur]);
        s->bd[r] = ival_total(buf[cur], ns) - ival_total(buf[!cur], nn);
        cur = !cur;
        ns = nn;
    }
    s->bd[GP_BD_OTHER] = ival_total(buf[cur], ns);
}

/* Room the sweep of one step needs: the step plus every role interval it can cut. */
static size_t sweep_room(const gp_step *s, ival *const role[], const size_t nrole[])
{
    size_t need = 2;
    for (int r = 0; r < GP_BD_OTHER; r++) {
        size_t nw;
        role_window(role[r], nrole[r], s->ts, s->end, &nw);
        need += nw;
    }
    return need;
}

/* The merged intervals of role r, shrunk to fit; built one role at a time so that only one
 * unmerged list (not one per event of every role) is alive at once. */
static ival *role_intervals(const gp_analysis *a, const int8_t *roles, int r, size_t count,
                            size_t *n)
{
    ival *v = malloc((count + 1) * sizeof(ival));
    if (!v)
        return NULL;
    size_t k = 0;
    for (uint32_t i = 0; i < a->n && k < count; i++)
        if (roles[i] == r)
            v[k++] = (ival){a->ev[i].ts, a->ev[i].ts + a->ev[i].dur};
    *n = ival_merge(v, k);
    ival *fit = realloc(v, (*n + 1) * sizeof(ival));
    return fit ? fit : v;
}

static int breakdown(gp_analysis *a)
{
    ival *role[GP_BD_OTHER] = {0};
    size_t nrole[GP_BD_OTHER] = {0}, room = 2;
    int8_t *roles = malloc(a->n + 1); /* 1 byte per event, -1 = no role */
    int rc = -1;
    if (!roles)
        return -1;
    for (uint32_t i = 0; i < a->n; i++) {
        int r = a->ev[i].dur > 0 ? role_of(a, i) : -1;
        roles[i] = (int8_t)r;
        if (r >= 0)
            nrole[r]++;
    }
    for (int r = 0; r < GP_BD_OTHER; r++)
        if (!(role[r] = role_intervals(a, roles, r, nrole[r], &nrole[r])))
            goto out;
    free(roles);
    roles = NULL;
    for (size_t k = 0; k < a->steps.n; k++) {
        size_t need = sweep_room(TRACE_VEC_AT(&a->steps, gp_step, k), role, nrole);
        room = need > room ? need : room;
    }
    ival *buf[2] = {malloc(room * sizeof(ival)), malloc(room * sizeof(ival))};
    for (size_t k = 0; k < a->steps.n && buf[0] && buf[1]; k++)
        sweep_step(TRACE_VEC_AT(&a->steps, gp_step, k), role, nrole, buf);
    rc = buf[0] && buf[1] ? 0 : -1;
    free(buf[0]);
    free(buf[1]);
out:
    free(roles);
    for (int r = 0; r < GP_BD_OTHER; r++)
        free(role[r]);
    return rc;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

static int step_stats(gp_analysis *a)
{
    gp_step_stats *st = &a->stats;
    size_t n = st->n = a->steps.n;
    if (!n)
        return 0;
    int64_t *d = malloc(n * sizeof(int64_t)), sum = 0;
    if (!d)
        return -1;
    for (size_t k = 0; k < n; k++) {
        const gp_step *s = TRACE_VEC_AT(&a->steps, gp_step, k);
        d[k] = s->end - s->ts;
        sum += d[k];
        for (int c = 0; c < GP_BD_COUNT; c++)
            st->bd_total[c] += s->bd[c];
    }
    qsort(d, n, sizeof(*d), cmp_i64);
    st->mean = sum / (int64_t)n;
    st->min = d[0];
    st->max = d[n - 1];
    st->p50 = d[(n * 50 + 99) / 100 - 1];
    st->p95 = d[(n * 95 + 99) / 100 - 1];
    for (int c = 0; c < GP_BD_COUNT; c++)
        st->bd_mean[c] = st->bd_total[c] / (int64_t)n;
    free(d);
    return 0;
}

/* After the steps: the breakdown (writes the steps' bd) on one thread, the GPU timeline and the
 * lists (write their own vectors and the steps' memory totals) on the other. */
typedef struct pass_job {
    gp_analysis *a;
    int rc;
} pass_job;

static void pass_breakdown(void *arg)
{
    pass_job *j = arg;
    j->rc = breakdown(j->a);
    if (j->rc == 0)
        j->rc = step_stats(j->a);
}

static void pass_gpu_lists(void *arg)
{
    pass_job *j = arg;
    j->rc = analysis_gpu(j->a);
    if (j->rc == 0)
        j->rc = analysis_lists(j->a);
}

static int finish_passes(gp_analysis *a)
{
    pass_job bd = {a, 0}, gpu = {a, 0};
    analysis_par2(a->threads, pass_breakdown, &bd, pass_gpu_lists, &gpu);
    return bd.rc == 0 && gpu.rc == 0 ? 0 : -1;
}

static void init_vecs(gp_analysis *a)
{
    trace_vec_init(&a->steps, sizeof(gp_step));
    trace_vec_init(&a->devices, sizeof(gp_device_stats));
    trace_vec_init(&a->dev_gaps, sizeof(gp_idle_gap));
    trace_vec_init(&a->streams, sizeof(gp_stream_stats));
    trace_vec_init(&a->stream_gaps, sizeof(gp_idle_gap));
    trace_vec_init(&a->mem_series, sizeof(gp_mem_series));
    trace_vec_init(&a->mem_points, sizeof(gp_mem_point));
    trace_vec_init(&a->kernels, sizeof(gp_kernel_stat));
    trace_vec_init(&a->memcpys, sizeof(gp_memcpy));
    trace_vec_init(&a->syncs, sizeof(gp_sync));
    trace_vec_init(&a->launches, sizeof(gp_launch));
}

static int alloc_links(gp_analysis *a)
{
    size_t n = a->n ? a->n : 1;
    a->link_of = malloc(n * sizeof(uint32_t));
    a->op_of = malloc(n * sizeof(uint32_t));
    if (!a->link_of || !a->op_of)
        return -1;
    memset(a->link_of, 0xff, n * sizeof(uint32_t));
    memset(a->op_of, 0xff, n * sizeof(uint32_t));
    return 0;
}

gp_status gp_analysis_run(const gp_trace *t, const gp_analysis_opts *opts, gp_analysis **out,
                          gp_error *err)
{
    *out = NULL;
    gp_analysis *a = calloc(1, sizeof(*a));
    if (!a)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    init_vecs(a);
    pthread_mutex_init(&a->gaps_mu, NULL);
    pthread_mutex_init(&a->launches_mu, NULL);
    a->t = t;
    a->ev = gp_trace_events(t, &a->n);
    a->kernel_wait_ns = opts && opts->kernel_wait_ns > 0 ? opts->kernel_wait_ns : 30000;
    a->threads = analysis_threads(opts ? opts->threads : 0);
    int rc = alloc_links(a);
    if (rc == 0)
        rc = link_all(a);
    if (rc == 0) {
        align_steps(a);
        rc = finish_passes(a);
    }
    if (rc != ANALYSIS_OK) {
        gp_analysis_free(a);
        return rc == ANALYSIS_BROKEN
                       ? gp_error_set(err, GP_EINVAL, gp_trace_get_info(t)->path,
                                      "internal error: an id outside the range its map was sized "
                                      "for (please report it, with the trace)")
                       : gp_error_set(err, GP_ENOMEM, gp_trace_get_info(t)->path, "out of memory");
    }
    *out = a;
    return GP_OK;
}

void gp_analysis_free(gp_analysis *a)
{
    if (!a)
        return;
    free(a->link_of);
    free(a->op_of);
    pthread_mutex_destroy(&a->gaps_mu);
    pthread_mutex_destroy(&a->launches_mu);
    trace_vec *vecs[] = {&a->steps,       &a->devices,    &a->dev_gaps,   &a->streams,
                         &a->stream_gaps, &a->mem_series, &a->mem_points, &a->kernels,
                         &a->memcpys,     &a->syncs,      &a->launches};
    for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
        trace_vec_release(vecs[i]);
    free(a);
}

const gp_trace *gp_analysis_trace(const gp_analysis *a)
{
    return a->t;
}

uint32_t gp_analysis_runtime_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? analysis_runtime(a, ev) : GP_NONE;
}

uint32_t gp_analysis_op_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? a->op_of[ev] : GP_NONE;
}

uint32_t gp_analysis_parent_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? analysis_parent(a, ev) : GP_NONE;
}

int gp_analysis_step_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? analysis_step_of(a, ev) : -1;
}

const gp_step *gp_analysis_steps(const gp_analysis *a, size_t *n)
{
    *n = a->steps.n;
    return (const gp_step *)a->steps.data;
}

const gp_step_stats *gp_analysis_step_stats(const gp_analysis *a)
{
    return &a->stats;
}

const char *gp_bd_cat_name(gp_bd_cat c)
{
    static const char *const names[GP_BD_COUNT] = {"Kernel",        "Memcpy",  "Memset",
                                                   "Communication", "Runtime", "DataLoader",
                                                   "CPU Exec",      "Other"};
    return (unsigned)c < GP_BD_COUNT ? names[c] : "Other";
}
