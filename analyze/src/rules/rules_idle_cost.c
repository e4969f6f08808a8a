/* rules_idle_cost.c: what a stall costs the GPU, not the host. A blocking call (a synchronous
 * copy, a memset, a sync) holds the host while queued work drains; removing it saves only the
 * time the device's compute then sits idle because of it: from the call's start to the first
 * compute work (a kernel or memset) after it returns. Copies in that window count as idle unless
 * that work waits for them on its own stream: without the call the host runs ahead and a copy on
 * another stream (the next batch) overlaps the previous step's compute, while one on the
 * compute's stream stays in line (the simulated device, a 4-byte read each step: the compute
 * idled 90 us from the drain to the next kernel, the next batch's copy starting 24 us before
 * that kernel on its copy stream; counting that copy as busy priced the fix at 2.6% of the step
 * against 3.5% measured). A sync the GPU works through (another stream busy) costs the step
 * nothing. Without the call the host's next launch comes at most its duration earlier, so idle
 * past that is the host's own pace (GT04's); calls in a row, each made before the GPU resumed
 * after the previous (two memsets after a drain), form one stall whose idle is capped by their
 * summed duration. A copy delays compute only while compute work already launched waits behind
 * it: in a loop where the next kernel is launched after the copy ended, the GPU would have idled
 * anyway -- unless the copy's own call held the host (a synchronous or pageable copy): then the
 * launch waited for it. */
#include "rules/rules_int.h"

#include <stdlib.h>

static int is_compute(const gp_event *e)
{
    return e->kind == GP_EV_KERNEL || e->kind == GP_EV_MEMSET;
}

/* The GPU track of the first compute work starting at `ts` (the one rules_stall_add resumes
 * at), or NO_TRACK. Each track is sorted by start. */
#define NO_TRACK (-1L)
static long resume_track(const struct rules_ctx *c, int64_t ts)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    for (size_t t = 0; t < nt; t++) {
        if (!tr[t].is_gpu)
            continue;
        uint32_t lo = rules_track_first_at(c, &tr[t], ts);
        for (; lo < tr[t].first + tr[t].count && c->ev[lo].ts == ts; lo++)
            if (is_compute(&c->ev[lo]))
                return (long)t;
    }
    return NO_TRACK;
}

/* Copy time on `track` within [ts, end) outside compute: what the resuming work waited for in
 * line. */
static int64_t inline_copies(const struct rules_ctx *c, long track, int64_t ts, int64_t end)
{
    if (track == NO_TRACK)
        return 0;
    size_t nt;
    const gp_track *tr = &gp_trace_tracks(c->t, &nt)[track];
    int64_t sum = 0;
    /* a stream runs its work in order: only the record before the first one starting in the
     * window can reach into it, so the scan starts there, not at the track's first record */
    uint32_t from = rules_track_first_at(c, tr, ts);
    from -= from > tr->first;
    for (uint32_t i = from; i < tr->first + tr->count && c->ev[i].ts < end; i++) {
        const gp_event *e = &c->ev[i];
        int64_t a = e->ts > ts ? e->ts : ts, b = e->ts + e->dur < end ? e->ts + e->dur : end;
        if (e->kind == GP_EV_MEMCPY && b > a)
            sum += (b - a) - rules_ivs_overlap(&c->compute, a, b);
    }
    return sum;
}

gp_status rules_stall_add(struct rules_ctx *c, struct rules_stall *s, int64_t ts, int64_t end,
                          int64_t *idle)
{
    GP_TRY(rules_ctx_intervals(c));
    const struct rules_ivs *b = &c->compute;
    size_t i = rules_ivs_lower(b, end);
    int64_t resume = end;
    if (i < b->n && b->iv[i][0] > end)
        resume = b->iv[i][0]; /* compute idle when the call returned: until its next work */
    if (s->blocked > 0 && ts >= s->ts && ts < s->resume) { /* made before the GPU resumed */
        s->resume = resume > s->resume ? resume : s->resume;
        s->blocked += end - ts;
    } else {
        *s = (struct rules_stall){ts, resume, end - ts, 0};
    }
    int64_t total = (s->resume - s->ts) - rules_ivs_overlap(b, s->ts, s->resume) -
                    inline_copies(c, resume_track(c, s->resume), s->ts, s->resume);
    total = total < s->blocked ? total : s->blocked;
    *idle = total > s->idle ? total - s->idle : 0;
    s->idle = total > s->idle ? total : s->idle;
    return GP_OK;
}

static int cmp_launched(const void *pa, const void *pb)
{
    const struct rules_launched *a = pa, *b = pb;
    return (a->gpu_ts > b->gpu_ts) - (a->gpu_ts < b->gpu_ts);
}

void rules_kernel_queue_release(struct rules_kernel_queue *q)
{
    free(q->k);
    q->k = NULL;
    q->n = 0;
}

gp_status rules_kernel_queue_build(const struct rules_ctx *c, struct rules_kernel_queue *q)
{
    size_t nl;
    const gp_launch *l = gp_analysis_launches(c->a, &nl);
    q->n = 0;
    q->k = malloc((nl ? nl : 1) * sizeof(*q->k));
    if (!q->k)
        return GP_ENOMEM;
    for (size_t i = 0; i < nl; i++)
        if (c->ev[l[i].gpu].kind == GP_EV_KERNEL)
            q->k[q->n++] = (struct rules_launched){c->ev[l[i].gpu].ts, c->ev[l[i].runtime].ts};
    qsort(q->k, q->n, sizeof(*q->k), cmp_launched);
    return GP_OK;
}

int64_t rules_copy_delay(struct rules_ctx *c, const struct rules_kernel_queue *q, int64_t ts,
                         int64_t end, int holds_host)
{
    size_t lo = 0, hi = q->n;
    while (lo < hi) { /* the first kernel starting at or after the copy's start */
        size_t mid = lo + (hi - lo) / 2;
        if (q->k[mid].gpu_ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == q->n)
        return 0; /* no compute after it: nothing waits */
    int64_t from = q->k[lo].call_ts > ts && !holds_host ? q->k[lo].call_ts : ts;
    if (from >= end)
        return 0;
    int64_t hidden =
            rules_ivs_overlap(&c->kernels, from, end) + rules_ivs_overlap(&c->comm, from, end);
    return end - from > hidden ? end - from - hidden : 0;
}
