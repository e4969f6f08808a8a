/* What activation checkpointing would save, for GT10's advice. The activations a step keeps for
 * backward show in the device memory series as the rise of allocated bytes from the step's start
 * to its peak (each saved activation one allocation; gradients and temporaries allocated before
 * the peak count too); the median over the analysed steps. Checkpointing n such allocations in
 * segments of s = ceil(sqrt(n)) (torch.utils.checkpoint_sequential's trade) keeps each
 * segment's input and, while backward recomputes one segment, that segment's activations:
 * about (ceil(n/s) + s - 1) mean allocations instead of n. The bundled trainer states what its
 * --checkpoint-activations saves (checkpoint_saving_bytes, from its layers' sizes): that wins.
 * The time it costs is one more forward: the GPU time of the kernels launched before the
 * step's memory peak. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdlib.h>

struct ckpt_step {
    int64_t rise, peak_ts;
    size_t n_allocs;
};

/* The rise of allocated bytes in [ts, end): to the peak, and the allocations up to it. */
static struct ckpt_step rise_in(const gp_mem_series *s, int64_t ts, int64_t end)
{
    struct ckpt_step r = {0, 0, 0};
    if (s->n_points == 0)
        return r;
    int64_t base = rules_mem_at(s, ts)->allocated, peak = base;
    size_t n = 0, n_at_peak = 0;
    int64_t prev = base, peak_ts = ts;
    for (size_t i = (size_t)(rules_mem_at(s, ts) - s->points); i < s->n_points; i++) {
        const gp_mem_point *p = &s->points[i];
        if (p->ts >= end)
            break;
        if (p->ts < ts)
            continue;
        n += p->allocated > prev;
        if (p->allocated > peak)
            peak = p->allocated, n_at_peak = n, peak_ts = p->ts;
        prev = p->allocated;
    }
    r.rise = peak - base, r.n_allocs = n_at_peak, r.peak_ts = peak_ts;
    return r;
}

/* The analysed step whose host range holds `ts`, or -1. */
static long host_step_at(const struct rules_ctx *c, int64_t ts)
{
    size_t lo = 0, hi = c->n_steps;
    while (lo < hi) { /* first step starting after ts */
        size_t mid = lo + (hi - lo) / 2;
        if (c->steps[mid].host_ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ts < c->steps[lo - 1].host_end ? (long)lo - 1 : -1;
}

/* Per step, the GPU time of the kernels launched from its start to its memory peak (peak[i]),
 * into fwd[i]. */
static void kernels_before_peak(const struct rules_ctx *c, const int64_t *peak, int64_t *fwd)
{
    size_t nl;
    const gp_launch *l = gp_analysis_launches(c->a, &nl);
    for (size_t i = 0; i < nl; i++) {
        const gp_event *r = &c->ev[l[i].runtime], *k = &c->ev[l[i].gpu];
        long st = k->kind == GP_EV_KERNEL ? host_step_at(c, r->ts) : -1;
        if (st >= 0 && r->ts <= peak[st])
            fwd[st] += k->dur;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median_of(int64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_i64);
    return n ? v[n / 2] : 0;
}

gp_status rules_ckpt_estimate(const struct rules_ctx *c, const gp_mem_series *s,
                              struct rules_ckpt *out)
{
    size_t n = c->n_steps;
    *out = (struct rules_ckpt){0, 0, -1, 0, 0};
    if (n == 0)
        return GP_OK;
    int64_t *v = calloc(4 * n, sizeof(*v)), *peak = v + 3 * n;
    if (!v)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const gp_step *st = &c->steps[i];
        struct ckpt_step r = rise_in(s, st->host_ts, st->host_end);
        v[i] = r.rise;
        v[n + i] = (int64_t)r.n_allocs;
        peak[i] = r.rise > 0 ? r.peak_ts : INT64_MIN;
    }
    kernels_before_peak(c, peak, v + 2 * n);
    out->activations = median_of(v, n);
    out->n_allocs = (size_t)median_of(v + n, n);
    out->forward_ns = median_of(v + 2 * n, n);
    free(v);
    if (c->cfg.rc.checkpoint_saving_bytes.known) {
        out->saving = c->cfg.rc.checkpoint_saving_bytes.v;
        out->from_trainer = 1;
    } else if (out->n_allocs >= 2 && out->activations > 0) {
        size_t k = out->n_allocs, seg = (size_t)ceil(sqrt((double)k));
        double mean = (double)out->activations / (double)k;
        double kept = (double)((k + seg - 1) / seg + seg - 1) * mean;
        out->saving =
                kept < (double)out->activations ? (int64_t)((double)out->activations - kept) : 0;
    }
    return GP_OK;
}
