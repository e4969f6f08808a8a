/* analysis_steps.c: the ProfilerStep ranges, aligned to the device as tb_plugin does, and the
 * step-time statistics. */
#include "model/analysis_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model/sort_runs.h"

static int cmp_step(const void *pa, const void *pb)
{
    const gp_step *a = pa, *b = pb;
    return (a->host_ts > b->host_ts) - (a->host_ts < b->host_ts);
}

/* A step's run-queue time beyond what its host range leaves after its CPU time belongs to the
 * next step: libprof reads the scheduler just after a boundary's ticks, and a thread preempted
 * in that read (a preemptible kernel can do it before the figures are taken) has its wait
 * counted before the step whose wall time holds it (1 step of 200 on one core beside a busy
 * loop: 9.5 ms waited in a 4.6 ms step, the next one 9 ms longer than its CPU and wait). */
static void carry_waits(gp_step *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        int64_t surplus = s[i].cpu_ns + s[i].runq_ns - (s[i].host_end - s[i].host_ts);
        if (s[i].runq_ns < 0 || s[i + 1].runq_ns < 0 || surplus <= 0)
            continue;
        surplus = surplus < s[i].runq_ns ? surplus : s[i].runq_ns;
        s[i].runq_ns -= surplus;
        s[i + 1].runq_ns += surplus;
    }
}

#define OPT_STEP_PREFIX "Optimizer.step#"

static int is_opt_step(const gp_analysis *a, const gp_event *e)
{
    return e->kind == GP_EV_USER_ANNOTATION && e->ph == 'X' &&
           strncmp(gp_trace_str(a->t, e->name), OPT_STEP_PREFIX, sizeof(OPT_STEP_PREFIX) - 1) == 0;
}

/* The track that holds the optimizer's outermost step ranges, and the name of the last one:
 * GP_NONE where there are none, or where they lie on more than one track. */
static uint32_t opt_step_track(const gp_analysis *a, gp_str *name)
{
    size_t n_tracks;
    const gp_track *tr = gp_trace_tracks(a->t, &n_tracks);
    uint32_t found = GP_NONE;
    for (size_t k = 0; k < n_tracks; k++)
        for (uint32_t i = tr[k].first; i < tr[k].first + tr[k].count; i++) {
            if (!is_opt_step(a, &a->ev[i]))
                continue;
            if (found != GP_NONE && found != (uint32_t)k)
                return GP_NONE;
            found = (uint32_t)k;
            *name = a->ev[i].name;
        }
    return found;
}

/* No step markers, but PyTorch's optimizer marks each of its steps with a range named
 * "Optimizer.step#<class>.step": where it stepped twice or more, on one thread, an iteration
 * ends where each of its steps ends. The first step runs from the first operator, so it holds
 * whatever came before the loop, and is left out as warm-up like a marked first step (a
 * `with profile():` block around a program's start held 85-98% of one-time work on an H200,
 * 38% at 30 iterations of a launch-bound loop: the CUDA context, cuBLAS's and cuDNN's first
 * calls, the model's initialisation). Work after the last optimizer step belongs to no step.
 * Where one iteration steps several optimizers of one class, each of their steps ends a step; of
 * several classes, the last one's steps do. */
static gp_status infer_steps(gp_analysis *a, int64_t lo, int *one)
{
    gp_str name = GP_STR_NONE;
    uint32_t k = opt_step_track(a, &name);
    if (k == GP_NONE)
        return GP_OK;
    size_t n_tracks;
    const gp_track *tr = &gp_trace_tracks(a->t, &n_tracks)[k];
    int64_t start = lo, prev_end = INT64_MIN;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &a->ev[i];
        if (e->name != name || !is_opt_step(a, e) || e->ts < prev_end) /* nested: not its own */
            continue;
        gp_step *s = trace_vec_push(&a->steps);
        if (!s)
            return GP_ENOMEM;
        prev_end = e->ts + e->dur;
        *s = (gp_step){.num = (int64_t)a->steps.n,
                       .event = GP_NONE,
                       .inferred = GP_STEPS_FROM_OPTIMIZER,
                       .host_ts = start < e->ts ? start : e->ts,
                       .host_end = prev_end,
                       .cpu_ns = -1,
                       .runq_ns = -1};
        start = prev_end;
    }
    *one = a->steps.n == 1;
    if (a->steps.n < 2) /* one optimizer step: one iteration, as one synthetic step */
        a->steps.n = 0;
    return GP_OK;
}

gp_status analysis_find_steps(gp_analysis *a)
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
            return GP_ENOMEM;
        s->num = strtoll(gp_trace_str(a->t, e->name) + 13, NULL, 10);
        s->event = i;
        s->host_ts = e->ts;
        s->host_end = e->ts + e->dur;
        const gp_step_sched *k = gp_trace_step_sched(a->t, e);
        s->cpu_ns = k ? k->cpu_ns : -1;
        s->runq_ns = k ? k->runq_ns : -1;
    }
    int one_iteration = 0;
    if (a->steps.n == 0 && a->n > 0) {
        gp_status rc =
                infer_steps(a, lo <= hi ? lo : gp_trace_get_info(a->t)->ts_min, &one_iteration);
        if (rc != GP_OK)
            return rc;
    }
    if (a->steps.n == 0 && a->n > 0) {
        gp_step *s = trace_vec_push(&a->steps);
        if (!s)
            return GP_ENOMEM;
        const gp_trace_info *in = gp_trace_get_info(a->t);
        s->num = -1;
        s->event = GP_NONE;
        s->synthetic = 1;
        s->one_iteration = one_iteration;
        s->host_ts = lo <= hi ? lo : in->ts_min;
        s->host_end = lo <= hi ? hi : in->ts_max;
        s->cpu_ns = s->runq_ns = -1;
    }
    if (a->steps.n)
        qsort(a->steps.data, a->steps.n, sizeof(gp_step), cmp_step);
    carry_waits((gp_step *)a->steps.data, a->steps.n);
    return GP_OK;
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
    return lo && ts < s[lo - 1].host_end ? (int32_t)(lo - 1) : ANALYSIS_NO_STEP;
}

int32_t analysis_step_of(const gp_analysis *a, uint32_t i)
{
    const gp_event *e = &a->ev[i];
    if (!(e->flags & GP_EVF_GPU))
        return step_at(a, e->ts);
    uint32_t r = analysis_runtime(a, i);
    if (!analysis_is_gpu_work(e->kind) || r == GP_NONE)
        return ANALYSIS_NO_STEP;
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
void analysis_align_steps(gp_analysis *a)
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
        trace_par2(a->threads, align_count, &h[0], align_count, &h[1]);
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

int analysis_cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

gp_status analysis_step_stats(gp_analysis *a)
{
    gp_step_stats *st = &a->stats;
    size_t n = st->n = a->steps.n;
    if (!n)
        return GP_OK;
    int64_t *d = malloc(n * sizeof(int64_t)), sum = 0;
    if (!d)
        return GP_ENOMEM;
    for (size_t k = 0; k < n; k++) {
        const gp_step *s = TRACE_VEC_AT(&a->steps, gp_step, k);
        d[k] = s->end - s->ts;
        sum += d[k];
        for (int c = 0; c < GP_BD_COUNT; c++)
            st->bd_total[c] += s->bd[c];
    }
    qsort(d, n, sizeof(*d), analysis_cmp_i64);
    st->mean = sum / (int64_t)n;
    st->min = d[0];
    st->max = d[n - 1];
    st->p50 = d[(n * 50 + 99) / 100 - 1];
    st->p95 = d[(n * 95 + 99) / 100 - 1];
    for (int c = 0; c < GP_BD_COUNT; c++)
        st->bd_mean[c] = st->bd_total[c] / (int64_t)n;
    free(d);
    return GP_OK;
}
