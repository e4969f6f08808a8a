/* analysis_steal.c: each step's time lost to the host (gp_step.steal_ns), from libprof's host
 * steal counter (GP_NAME_HOST_STEAL: from each sample to the next, the most any one CPU of the
 * machine lost to the hypervisor, % of that span). While the host runs something else on the
 * stepping thread's virtual CPU, the thread is neither on a core nor in the run queue: the time
 * shows only as a step's wall time beyond its CPU and run-queue time, as a stall would. A step's
 * steal is what the samples allow in it, up to that unexplained time: per span, its steal, at
 * most the span's overlap with the step, and what earlier steps in the span took from it left
 * out. An upper bound, since the thread's CPU may have lost less than the one that lost most. */
#include "model/analysis_int.h"

#include <stdlib.h>
#include <string.h>

#include "gp/trace_schema.h"

static int cmp_sample(const void *pa, const void *pb)
{
    const gp_counter *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

/* The steal counter's samples, sorted by (pid, ts); NULL with *n = 0 when there are none. */
static gp_counter *steal_samples(const gp_trace *t, size_t *n, gp_status *rc)
{
    size_t nc, k = 0;
    const gp_counter *c = gp_trace_counters(t, &nc);
    gp_counter *v = NULL;
    *rc = GP_OK;
    for (size_t i = 0; i < nc; i++) {
        if (c[i].pid < 0 || strcmp(gp_trace_str(t, c[i].name), GP_NAME_HOST_STEAL) != 0)
            continue;
        if (!v && !(v = malloc((nc - i) * sizeof(*v)))) {
            *rc = GP_ENOMEM;
            break;
        }
        v[k++] = c[i];
    }
    if (k)
        qsort(v, k, sizeof(*v), cmp_sample);
    *n = k;
    return v;
}

/* Where `pid`'s spans that can reach ts begin: its last sample at or before ts, else its first
 * (n or another pid's where it has none). */
static size_t first_span(const gp_counter *v, size_t n, int64_t pid, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first sample past (pid, ts) */
        size_t mid = (lo + hi) / 2;
        if (v[mid].pid < pid || (v[mid].pid == pid && v[mid].ts <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && v[lo - 1].pid == pid ? lo - 1 : lo;
}

/* Each span's steal (ns): from sample i to the next of its pid, the most one CPU lost; 0 for a
 * pid's last sample. */
static int64_t *span_steal(const gp_counter *v, size_t n)
{
    int64_t *left = malloc((n ? n : 1) * sizeof(*left));
    for (size_t i = 0; left && i < n; i++) {
        int last = i + 1 == n || v[i + 1].pid != v[i].pid;
        double span = last ? 0 : (double)(v[i + 1].ts - v[i].ts);
        double pct = v[i].value < 100 ? v[i].value : 100; /* a share: more is not the host's */
        left[i] = pct > 0 ? (int64_t)(pct / 100.0 * span) : 0;
    }
    return left;
}

/* The steal the spans still hold that can lie in [ts, end) on `pid`'s machine, up to `most`;
 * what it takes leaves the spans (the steps of one thread do not overlap: a span's steal is
 * shared among them, in time order). */
static int64_t take_steal(const gp_counter *v, int64_t *left, size_t n, int64_t pid, int64_t ts,
                          int64_t end, int64_t most)
{
    int64_t sum = 0;
    for (size_t i = first_span(v, n, pid, ts);
         i + 1 < n && v[i].pid == pid && sum < most && v[i + 1].pid == pid && v[i].ts < end; i++) {
        int64_t a = v[i].ts > ts ? v[i].ts : ts, b = v[i + 1].ts < end ? v[i + 1].ts : end;
        int64_t take = b - a < left[i] ? b - a : left[i];
        take = take < most - sum ? take : most - sum;
        if (take > 0) {
            sum += take;
            left[i] -= take;
        }
    }
    return sum;
}

gp_status analysis_steps_steal(gp_analysis *a)
{
    size_t n, nt;
    gp_status rc;
    gp_counter *v = steal_samples(a->t, &n, &rc);
    int64_t *left = n ? span_steal(v, n) : NULL;
    const gp_track *tracks = gp_trace_tracks(a->t, &nt);
    gp_step *s = (gp_step *)a->steps.data;
    if (n && !left)
        rc = GP_ENOMEM;
    for (size_t i = 0; i < a->steps.n; i++) {
        s[i].steal_ns = 0;
        if (!left || s[i].event == GP_NONE || s[i].cpu_ns < 0 || s[i].runq_ns < 0)
            continue;
        int64_t rest = s[i].host_end - s[i].host_ts - s[i].cpu_ns - s[i].runq_ns;
        int64_t pid = tracks[a->ev[s[i].event].track].pid;
        if (rest > 0)
            s[i].steal_ns = take_steal(v, left, n, pid, s[i].host_ts, s[i].host_end, rest);
    }
    free(left);
    free(v);
    return rc;
}
