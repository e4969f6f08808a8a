/* analysis_link.c: links: parent_of by nesting, runtime_of by correlation, op_of by External id
 * or nesting; the correlation and External id maps are built on two threads with the steps. */
#include "model/analysis_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    gp_status rc;
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
    if ((j->rc = id_map_init_range(j->map, lo, hi, count)) != GP_OK)
        return;
    for (uint32_t i = 0; i < a->n && j->rc == GP_OK; i++) {
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
    j->rc = analysis_find_steps(j->a);
    if (j->rc == GP_OK)
        build_id_map(j);
}

/* Nesting and steps, then link_of of GPU activities (runtime_of) by correlation and op_of by
 * External id or by nesting; each link pass split in two halves of the events (runtime calls
 * before GPU activities). */
gp_status analysis_link_all(gp_analysis *a)
{
    id_map corr = {0}, ext = {0};
    id_job jc = {a, &corr, 0, GP_OK}, je = {a, &ext, 1, GP_OK};
    trace_par2(a->threads, nest_then_corr, &jc, steps_then_ext, &je);
    uint32_t mid = (uint32_t)(a->n / 2);
    link_half h0 = {a, &corr, &ext, 0, mid}, h1 = {a, &corr, &ext, mid, (uint32_t)a->n};
    if (jc.rc == GP_OK && je.rc == GP_OK) {
        trace_par2(a->threads, link_runtime, &h0, link_runtime, &h1);
        trace_par2(a->threads, link_gpu, &h0, link_gpu, &h1);
    }
    id_map_release(&corr);
    id_map_release(&ext);
    return jc.rc != GP_OK ? jc.rc : je.rc;
}
