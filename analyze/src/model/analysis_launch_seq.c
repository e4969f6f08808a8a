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
    free(q->act);
}

static int64_t pid_of(const gp_analysis *a, uint32_t i)
{
    size_t n_tracks;
    return gp_trace_tracks(a->t, &n_tracks)[a->ev[i].track].pid;
}

/* The pid whose threads make most of the launch calls (of the first 16 pids seen). */
static int64_t busiest_pid(const gp_analysis *a, const gp_launch *l, size_t n)
{
    int64_t pid[16];
    size_t count[16], np = 0, best = 0;
    for (size_t j = 0; j < n; j++) {
        int64_t p = pid_of(a, l[j].runtime);
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

/* The CUDA calls of `pid` that launched nothing (launched: one byte an event, set for the launch
 * calls) and wait for nothing, merged: the host's time in the API. A sync's wait is the host's
 * idle time: one ends an iteration more often than not (`.item()` on the loss, a logged metric),
 * so the launch after it starts the next. */
static ival *api_time(const gp_analysis *a, int64_t pid, const uint8_t *launched, size_t *n)
{
    ival *out = malloc((a->n + 1) * sizeof(*out));
    size_t k = 0;
    if (!out)
        return NULL;
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        if ((e->kind != GP_EV_RUNTIME && e->kind != GP_EV_DRIVER) || (e->flags & GP_EVF_SYNC_API) ||
            launched[i] || pid_of(a, i) != pid)
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

static gp_status seq_alloc(launch_seq *q, size_t n)
{
    q->name = malloc(n * sizeof(*q->name));
    q->ts = malloc(n * sizeof(int64_t));
    q->end = malloc(n * sizeof(int64_t));
    q->idle = malloc(n * sizeof(int64_t));
    q->rt = malloc(n * sizeof(uint32_t));
    q->act = malloc(n * sizeof(uint32_t));
    return q->name && q->ts && q->end && q->idle && q->rt && q->act ? GP_OK : GP_ENOMEM;
}

/* The busiest process's launches in time order (the analysis' launch list, one entry per launch
 * call: a graph's launch lists each of its kernels, the first stands for it), with the host's idle
 * time before each. */
gp_status launch_seq_build(const gp_analysis *a, launch_seq *q)
{
    size_t nl, na = 0;
    const gp_launch *l = gp_analysis_launches(a, &nl);
    memset(q, 0, sizeof(*q));
    if (nl == 0)
        return GP_OK;
    int64_t pid = busiest_pid(a, l, nl);
    uint8_t *launched = calloc(a->n, 1);
    for (size_t j = 0; launched && j < nl; j++)
        launched[l[j].runtime] = 1;
    ival *api = launched ? api_time(a, pid, launched, &na) : NULL;
    free(launched);
    if (!api || seq_alloc(q, nl) != GP_OK) {
        free(api);
        launch_seq_free(q);
        return GP_ENOMEM;
    }
    size_t p = 0, m = 0;
    for (size_t j = 0; j < nl; j++) {
        const gp_event *r = &a->ev[l[j].runtime];
        if (pid_of(a, l[j].runtime) != pid || (m && q->rt[m - 1] == l[j].runtime))
            continue;
        q->name[m] = a->ev[l[j].gpu].name;
        q->rt[m] = l[j].runtime;
        q->act[m] = l[j].gpu;
        q->ts[m] = r->ts;
        q->end[m] = r->ts + r->dur;
        q->idle[m] = idle_before(api, na, &p, m ? q->end[m - 1] : r->ts, r->ts);
        m++;
    }
    q->n = m;
    free(api);
    return GP_OK;
}
