/* GT05 small_kernels: launch overhead dominates. Two signals: the share of kernels shorter than
 * their own launch call (HTA "short kernels") with many kernels per step, and kernel-wait idle
 * (back-to-back gaps under HTA's 30 us) as a share of step time. Anchors: HTA kernel launch
 * stats and idle breakdown; the count and share thresholds are ours. The gain: a step of
 * thousands of kernels shorter than their launch is as long as the launches, so fusing them
 * saves each launch's cost less the kernel's own time (the fused kernel still does the work),
 * or the kernel-wait idle where that is larger, and no more than the step's GPU idle time (the
 * step, fused, still holds all the GPU's work). The same host time leaves the GPU waiting for
 * the host: GT04's host-wait idle, not to be added to this gain. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdlib.h>

enum { SHORT_PCT, MIN_KERNELS_PER_STEP, WARN_KW_PCT, CRIT_KW_PCT };
static const gp_rule_param params[] = {
        {"short_pct", 50, "kernels shorter than their launch call, share (ours)"},
        {"min_kernels_per_step", 1000, "...with at least this many kernels per step (ours)"},
        {"warn_kw_pct", 5, "kernel-wait idle share of step time (HTA kernel wait, ours)"},
        {"crit_kw_pct", 20, "kernel-wait idle share for crit (ours)"},
};
RULES_INFO(small_kernels, "GT05", "small kernels", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_GPU);

static const gp_evidence_col cols[] = {{"kernel", GP_UNIT_TEXT},
                                       {"calls", GP_UNIT_COUNT},
                                       {"mean duration", GP_UNIT_US},
                                       {"total", GP_UNIT_US}};

static int cmp_count(const void *pa, const void *pb)
{
    const gp_kernel_stat *a = *(const gp_kernel_stat *const *)pa;
    const gp_kernel_stat *b = *(const gp_kernel_stat *const *)pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return a->name < b->name ? -1 : a->name > b->name;
}

/* The most frequent kernels (whole trace). */
static gp_status evidence(const struct rules_ctx *c, struct rules_out *o)
{
    size_t n;
    const gp_kernel_stat *ks = gp_analysis_kernel_stats(c->a, &n);
    const gp_kernel_stat **v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = &ks[i];
    qsort(v, n, sizeof(*v), cmp_count);
    rules_cols(o, 4, cols);
    gp_status rc = GP_OK;
    for (size_t i = 0; i < n && i < 5 && rc == GP_OK; i++)
        rc = rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, v[i]->name)},
                                      {(double)v[i]->count, NULL},
                                      {(double)v[i]->mean_ns / 1e3, NULL},
                                      {(double)v[i]->total_ns / 1e3, NULL}});
    free(v);
    return rc;
}

/* Is launch `l` of a kernel in an analysed step, and shorter than `cost` of launch time? */
static int short_in_step(const struct rules_ctx *c, const gp_launch *l, int64_t cost, int *in)
{
    const gp_event *r = &c->ev[l->runtime], *k = &c->ev[l->gpu];
    *in = k->kind == GP_EV_KERNEL && rules_step_at(c, r->ts) >= 0;
    return *in && k->dur < cost;
}

struct short_count {
    size_t n, n_short;
    int64_t excess;
};

/* The `m` activities of one launch call that launched several (a CUDA graph's nodes, adjacent
 * in the launch list): each kernel costs its share of the call. */
static void count_graph(const struct rules_ctx *c, const gp_launch *l, size_t m,
                        struct short_count *sc)
{
    int64_t share = c->ev[l[0].runtime].dur / (int64_t)m;
    for (size_t i = 0; i < m; i++) {
        int in;
        int is_short = short_in_step(c, &l[i], share, &in);
        sc->n += in;
        sc->n_short += is_short;
        sc->excess += is_short ? share - c->ev[l[i].gpu].dur : 0;
    }
}

/* Kernels launched inside analysed steps, how many ran shorter than their launch call, and the
 * host time those short ones cost beyond their own run time (what fusing them saves): within a
 * run of back-to-back short launches on one thread, from each call to the next (the dispatch
 * between them is part of the per-launch cost), else the call itself. A call that launched
 * several kernels (cudaGraphLaunch) costs each its share. */
static void count_short(const struct rules_ctx *c, size_t *n, size_t *n_short, int64_t *excess)
{
    size_t nl;
    const gp_launch *l = gp_analysis_launches(c->a, &nl);
    struct short_count sc = {0, 0, 0};
    for (size_t i = 0, m; i < nl; i += m) {
        for (m = 1; i + m < nl && l[i + m].runtime == l[i].runtime;)
            m++;
        const gp_event *r = &c->ev[l[i].runtime];
        int in, next_in;
        if (m > 1) {
            count_graph(c, &l[i], m, &sc);
            continue;
        }
        if (!short_in_step(c, &l[i], r->dur, &in)) {
            sc.n += in;
            continue;
        }
        int64_t cost = r->dur;
        const gp_event *next = i + 1 < nl ? &c->ev[l[i + 1].runtime] : NULL;
        if (next && short_in_step(c, &l[i + 1], next->dur, &next_in) && next->track == r->track)
            cost = next->ts - r->ts;
        sc.n++;
        sc.n_short++;
        sc.excess += cost > c->ev[l[i].gpu].dur ? cost - c->ev[l[i].gpu].dur : 0;
    }
    *n = sc.n, *n_short = sc.n_short, *excess = sc.excess;
}

static int64_t kernel_wait(const struct rules_ctx *c)
{
    size_t ng;
    int64_t kw = 0;
    const gp_idle_gap *g = gp_analysis_device_gaps(c->a, &ng);
    for (size_t i = 0; i < ng; i++)
        if (g[i].kind == GP_IDLE_KERNEL_WAIT)
            kw += rules_ivs_overlap(&c->step_ivs, g[i].ts, g[i].end);
    return kw;
}

/* Fused ops and CUDA graphs, with the launch time they save; no graphs where the step makes
 * host syncs (a graph cannot capture them). */
static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double s, double kps,
                        int64_t gain_step)
{
    char a[32];
    int synced = rules_host_syncs_per_step(c) >= 1;
    GP_TRY(rules_knob_for(c, o, synced ? "--fused" : "--cuda-graphs; --fused",
                          synced ? "torch.compile(model); optimizer(fused=True)"
                                 : "torch.compile(model, mode=\"reduce-overhead\") / "
                                   "torch.cuda.graphs; optimizer(fused=True)"));
    return rules_reco(o,
                      "%.0f%% of kernels run shorter than it takes to launch them (%.0f "
                      "kernels per step): their launches cost about %s a step beyond their "
                      "work. Fuse them (torch.compile, fused optimizers; the bundled trainer's "
                      "--fused)%s%s.",
                      s, kps, rules_fmt_ns(a, sizeof(a), gain_step),
                      synced ? "; the step waits for the device, so remove its syncs before "
                               "capturing it in a CUDA graph"
                             : " or replay the step as one CUDA graph (torch.cuda.graphs, "
                               "torch.compile(mode=\"reduce-overhead\"); --cuda-graphs)",
                      c->cfg.rc.trainer && rules_count(c->cfg.rc.batch_size) > 0
                              ? "; a larger --batch-size "
                                "makes each kernel longer"
                              : "");
}

gp_status rules_small_kernels(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    size_t n, n_short;
    int64_t excess;
    count_short(c, &n, &n_short, &excess);
    int64_t kw = kernel_wait(c);
    double s = n ? 100.0 * (double)n_short / (double)n : 0, kps = rules_per_step(c, (double)n);
    double kwp = rules_pct_of_steps(c, kw);
    rules_measure(o, "kernel_wait_share", GP_UNIT_PCT, kwp, ">=", p[WARN_KW_PCT], p[CRIT_KW_PCT]);
    if (o->f.severity == GP_SEV_OK && s >= p[SHORT_PCT] && kps >= p[MIN_KERNELS_PER_STEP]) {
        rules_measure(o, "short_kernel_share", GP_UNIT_PCT, s, ">=", p[SHORT_PCT], INFINITY);
    }
    GP_TRY(rules_summary(o,
                         "%.0f kernels per step, %.1f%% shorter than their launch call; "
                         "kernel-wait idle %.1f%% of step time",
                         kps, s, kwp));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    GP_TRY(evidence(c, o));
    /* fused, the step still holds all the GPU's work: it gets no shorter than that */
    GP_TRY(rules_ctx_intervals(c));
    int64_t gain = excess > kw ? excess : kw, floor = c->step_ns - rules_ivs_in_steps(c, &c->busy);
    gain = gain < floor ? gain : floor > 0 ? floor : 0;
    GP_TRY(rules_gain(o, gain, (int64_t)rules_per_step(c, (double)gain),
                      "fusing the short kernels saves their launches less their own run time "
                      "(the same host time as GT04's host-wait idle, if that fires: do not "
                      "add them)"));
    return advise(c, o, s, kps, (int64_t)rules_per_step(c, (double)gain));
}
