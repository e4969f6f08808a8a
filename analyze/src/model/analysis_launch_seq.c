/* analysis_launch_seq.c: the launch calls that launched GPU work, of the process that makes most
 * of them, in time order over its threads, each with what it launched and the host's idle time
 * before it (launch_seq.h). */
#include "model/launch_seq.h"

#include <stdlib.h>
#include <string.h>

void launch_seq_free(launch_seq *q)
{
    free(q->name);
    free(q->ts);
    free(q->end);
    free(q->idle);
    free(q->rt);
}

typedef struct launch_call {
    int64_t ts;   /* the call's start */
    uint32_t rt;  /* the runtime or driver call */
    uint32_t act; /* the first GPU activity it launched */
} launch_call;

static int64_t pid_of(const gp_analysis *a, uint32_t i)
{
    size_t n_tracks;
    return gp_trace_tracks(a->t, &n_tracks)[a->ev[i].track].pid;
}

static int cmp_by_call(const void *pa, const void *pb)
{
    const launch_call *a = pa, *b = pb;
    if (a->rt != b->rt)
        return a->rt < b->rt ? -1 : 1;
    return (a->act > b->act) - (a->act < b->act);
}

static int cmp_by_time(const void *pa, const void *pb)
{
    const launch_call *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->rt > b->rt) - (a->rt < b->rt);
}

/* The calls that launched GPU work, one per call, sorted by call; NULL with *n = 0 where there
 * are none. */
static launch_call *launch_calls(const gp_analysis *a, size_t *n, gp_status *rc)
{
    size_t k = 0;
    launch_call *v = NULL;
    *rc = GP_OK;
    *n = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        uint32_t r = analysis_runtime(a, i);
        if (r == GP_NONE || !analysis_is_gpu_work(a->ev[i].kind))
            continue;
        if (!v && !(v = malloc((a->n - i) * sizeof(*v)))) {
            *rc = GP_ENOMEM;
            return NULL;
        }
        v[k++] = (launch_call){a->ev[r].ts, r, i};
    }
    if (k)
        qsort(v, k, sizeof(*v), cmp_by_call);
    for (size_t j = 0; j < k; j++)
        if (*n == 0 || v[j].rt != v[*n - 1].rt)
            v[(*n)++] = v[j];
    return v;
}

/* The pid whose threads make most of the launch calls (of the first 16 pids seen). */
static int64_t busiest_pid(const gp_analysis *a, const launch_call *v, size_t n)
{
    int64_t pid[16];
    size_t count[16], np = 0, best = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t p = pid_of(a, v[j].rt);
        size_t k = 0;
        while (k < np && pid[k] != p)
            k++;
        if (k == np && np < 16) {
            pid[np] = p;
            count[np++] = 0;
        }
        if (k < np && ++count[k] > count[best])
            best = k;
    }
    return np ? pid[best] : 0;
}

/* The CUDA calls of `pid` that launched nothing and wait for nothing, merged: the host's time
 * in the API. A sync's wait is the host's idle time: one ends an iteration more often than not
 * (`.item()` on the loss, a logged metric), so the launch after it starts the next. v is sorted by
 * call. */
static ival *api_time(const gp_analysis *a, int64_t pid, const launch_call *v, size_t nv, size_t *n)
{
    ival *out = malloc((a->n + 1) * sizeof(*out));
    size_t k = 0, j = 0;
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        while (j < nv && v[j].rt < i)
            j++;
        if ((e->kind != GP_EV_RUNTIME && e->kind != GP_EV_DRIVER) || (e->flags & GP_EVF_SYNC_API) ||
            (j < nv && v[j].rt == i) || pid_of(a, i) != pid)
            continue;
        out[k++] = (ival){e->ts, e->ts + e->dur};
    }
    *n = ival_merge(out, k);
    return out;
}

/* The host's time before launch k since the previous launch ended, outside the API. */
static int64_t idle_before(const ival *api, size_t na, size_t *p, int64_t from, int64_t ts)
{
    int64_t in_api = 0;
    if (from >= ts)
        return 0;
    while (*p < na && api[*p].b <= from)
        (*p)++;
    for (size_t x = *p; x < na && api[x].a < ts; x++)
        in_api += (api[x].b < ts ? api[x].b : ts) - (api[x].a > from ? api[x].a : from);
    return ts - from - in_api > 0 ? ts - from - in_api : 0;
}

/* The busiest process's launches in time order, with the host's idle time before each. */
gp_status launch_seq_build(const gp_analysis *a, launch_seq *q)
{
    gp_status rc;
    size_t nv, na = 0, m = 0;
    memset(q, 0, sizeof(*q));
    launch_call *v = launch_calls(a, &nv, &rc);
    if (!v)
        return rc;
    int64_t pid = busiest_pid(a, v, nv);
    ival *api = api_time(a, pid, v, nv, &na);
    for (size_t j = 0; j < nv; j++)
        if (pid_of(a, v[j].rt) == pid)
            v[m++] = v[j];
    q->name = malloc(m * sizeof(*q->name));
    q->ts = malloc(m * sizeof(int64_t));
    q->end = malloc(m * sizeof(int64_t));
    q->idle = malloc(m * sizeof(int64_t));
    q->rt = malloc(m * sizeof(uint32_t));
    if (!api || !q->name || !q->ts || !q->end || !q->idle || !q->rt) {
        free(v);
        free(api);
        launch_seq_free(q);
        return GP_ENOMEM;
    }
    qsort(v, m, sizeof(*v), cmp_by_time);
    size_t p = 0;
    for (size_t k = 0; k < m; k++) {
        const gp_event *r = &a->ev[v[k].rt];
        q->name[k] = a->ev[v[k].act].name;
        q->rt[k] = v[k].rt;
        q->ts[k] = r->ts;
        q->end[k] = r->ts + r->dur;
        q->idle[k] = idle_before(api, na, &p, k ? q->end[k - 1] : r->ts, r->ts);
    }
    q->n = m;
    free(v);
    free(api);
    return GP_OK;
}
