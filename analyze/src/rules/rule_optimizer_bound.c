/* GT17 optimizer_bound: the optimizer takes a large share of the step. PyTorch records every
 * optimizer.step() and zero_grad() as "Optimizer.step#<Class>.step" / "Optimizer.zero_grad#..."
 * (our trainer: "Optimizer.step"); a step's share is the union of those ranges within it. The
 * metric is the median of the per-step shares: on real runs one multi-millisecond stall inside
 * one Optimizer.step made a sum over 2 steps say 65-87% where the optimizer took 4-34% (issue 24
 * §2), and with fewer than min_steps analysed steps the finding is info at most. Its cost is per
 * step, not per sample; a per-parameter loop (foreach=False) pays several small ops per parameter
 * tensor. The advice reads which implementation the trace shows (aten::_foreach_*, _fused_*).
 * No anchor has this rule (issue 17 §12): thresholds ours. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT, MIN_STEPS };
static const gp_rule_param params[] = {
        {"warn_pct", 30, "optimizer share of step time, median over steps (ours)"},
        {"crit_pct", 50, "share for crit (ours)"},
        {"min_steps", 5, "with fewer analysed steps, info at most (ours)"},
};
RULES_INFO(optimizer_bound, "GT17", "optimizer-bound step", 0,
           RULES_NEEDS_STEPS | RULES_READS_CPU | RULES_HOST_TIMED);

static const gp_evidence_col cols[] = {{"step", GP_UNIT_TEXT},
                                       {"step time", GP_UNIT_US},
                                       {"optimizer", GP_UNIT_US},
                                       {"share", GP_UNIT_PCT}};

/* Which update the trace shows inside the optimizer's ranges. */
enum impl { IMPL_PER_PARAM, IMPL_FOREACH, IMPL_FUSED };

struct opt {
    struct rules_ivs v; /* the optimizer's ranges, a disjoint union */
    char cls[64];       /* "Adam" of "Optimizer.step#Adam.step", or empty */
    enum impl impl;
    double med_share, lo_share, hi_share; /* per-step shares, percent */
    double med_idle_share;                /* median per-step share of its GPU-idle part */
    double med_fixed_share; /* ...of that plus the loop's own time outside recorded ranges
                               (the trainer's batch knob only) */
    int64_t med_ns;         /* median per-step optimizer time */
};

static int is_optimizer(const char *s)
{
    return strncmp(s, "Optimizer.step", 14) == 0 || strncmp(s, "Optimizer.zero_grad", 19) == 0;
}

/* The optimizer's ranges (any thread) as a disjoint union, and its class name. */
static gp_status optimizer_ivs(const struct rules_ctx *c, struct opt *x)
{
    for (size_t i = 0; i < c->n_ev; i++) {
        const gp_event *e = &c->ev[i];
        if (e->kind != GP_EV_USER_ANNOTATION || e->dur <= 0 || e->name == GP_STR_NONE)
            continue;
        const char *s = gp_trace_str(c->t, e->name);
        if (!is_optimizer(s))
            continue;
        const char *hash = strncmp(s, "Optimizer.step#", 15) == 0 ? s + 15 : NULL;
        if (hash && !x->cls[0])
            snprintf(x->cls, sizeof(x->cls), "%.*s", (int)strcspn(hash, "."), hash);
        GP_TRY(rules_ivs_push(&x->v, e->ts, e->ts + e->dur));
    }
    rules_ivs_merge(&x->v);
    return GP_OK;
}

/* torch.optim's multi-tensor kernels (aten::_foreach_add_, ...) or fused ones
 * (aten::_fused_adam_, ...) inside the optimizer's ranges. */
static enum impl optimizer_impl(const struct rules_ctx *c, const struct rules_ivs *v)
{
    enum impl impl = IMPL_PER_PARAM;
    for (size_t i = 0; i < c->n_ev && impl != IMPL_FUSED; i++) {
        const gp_event *e = &c->ev[i];
        if (e->kind != GP_EV_CPU_OP || e->name == GP_STR_NONE)
            continue;
        const char *s = gp_trace_str(c->t, e->name);
        enum impl k = strncmp(s, "aten::_fused_", 13) == 0     ? IMPL_FUSED
                      : strncmp(s, "aten::_foreach_", 15) == 0 ? IMPL_FOREACH
                                                               : IMPL_PER_PARAM;
        if (k > impl && rules_ivs_overlap(v, e->ts, e->ts + (e->dur > 0 ? e->dur : 1)) > 0)
            impl = k;
    }
    return impl;
}

/* The optimizer's time in [ts, end) that would shorten the step if it went: on a GPU trace only
 * where the GPU is idle meanwhile (the rest overlaps GPU work). */
static int64_t idle_in(const struct rules_ctx *c, const struct rules_ivs *v, int64_t ts,
                       int64_t end)
{
    int64_t sum = 0;
    for (size_t i = 0; i < v->n && v->iv[i][0] < end; i++) {
        int64_t a = v->iv[i][0] > ts ? v->iv[i][0] : ts, b = v->iv[i][1] < end ? v->iv[i][1] : end;
        if (b > a)
            sum += (b - a) - (c->has_gpu ? rules_ivs_overlap(&c->busy, a, b) : 0);
    }
    return sum;
}

/* torch.optim's optimizers with a multi-tensor (foreach) implementation. */
static int has_foreach(const char *cls)
{
    static const char *const names[] = {"Adam",  "AdamW", "SGD",     "Adagrad", "Adamax",  "ASGD",
                                        "NAdam", "RAdam", "RMSprop", "Rprop",   "Adadelta"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(cls, names[i]) == 0)
            return 1;
    return 0;
}

/* The knob is the trainer's --batch-size (not a PyTorch optimizer's own implementation)? */
static int batch_knob(const struct rules_ctx *c, const char *cls)
{
    return !(cls[0] && !has_foreach(cls)) && c->cfg.rc.trainer &&
           rules_count(c->cfg.rc.batch_size) > 0;
}

/* The stepping thread's time in its step outside every range it recorded there (the training
 * loop's own bookkeeping: handing batches over, reading the loss back), on a GPU trace only where
 * the GPU is idle meanwhile. */
static int64_t loop_time_in(const struct rules_ctx *c, const gp_step *s)
{
    if (s->event == GP_NONE || s->host_end <= s->host_ts)
        return 0;
    /* a track's events are by start, then longest first: what the step holds comes after it */
    const gp_track *tr = &gp_trace_tracks(c->t, &(size_t){0})[c->ev[s->event].track];
    const gp_event *e = &c->ev[s->event] + 1, *end = c->ev + tr->first + tr->count;
    int64_t at = s->host_ts, sum = 0;
    for (; e < end && e->ts < s->host_end; e++) {
        int64_t b = e->ts + e->dur;
        if (e->dur <= 0 || b <= at || (e->flags & GP_EVF_STEP))
            continue;
        if (e->ts > at)
            sum += (e->ts - at) - (c->has_gpu ? rules_ivs_overlap(&c->busy, at, e->ts) : 0);
        at = b;
    }
    if (s->host_end > at)
        sum += (s->host_end - at) - (c->has_gpu ? rules_ivs_overlap(&c->busy, at, s->host_end) : 0);
    return sum;
}

/* Per-step shares and times, and their medians: a stall in one step decides nothing. The loop's
 * own time only where the knob is the trainer's batch (predict_gain's floor reads it). */
static gp_status per_step(struct rules_ctx *c, struct opt *x)
{
    size_t n = c->n_steps;
    int loop = batch_knob(c, x->cls);
    int64_t *v = malloc(4 * n * sizeof(*v));
    if (!v)
        return GP_ENOMEM;
    if (c->has_gpu && rules_ctx_intervals(c) != GP_OK)
        return free(v), GP_ENOMEM;
    int64_t *share = v, *ns = v + n, *idle = v + 2 * n, *fixed = v + 3 * n, lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) { /* shares in ppm */
        const gp_step *s = &c->steps[i];
        double len = s->end > s->ts ? (double)(s->end - s->ts) : 1;
        ns[i] = rules_ivs_overlap(&x->v, s->ts, s->end);
        idle[i] = (int64_t)(1e6 * (double)idle_in(c, &x->v, s->ts, s->end) / len);
        fixed[i] = loop ? idle[i] + (int64_t)(1e6 * (double)loop_time_in(c, s) / len) : 0;
        share[i] = (int64_t)(1e6 * (double)ns[i] / len);
        lo = share[i] < lo ? share[i] : lo, hi = share[i] > hi ? share[i] : hi;
    }
    x->med_share = (double)rules_median(share, n) / 1e4;
    x->lo_share = (double)lo / 1e4, x->hi_share = (double)hi / 1e4;
    x->med_ns = rules_median(ns, n), x->med_idle_share = (double)rules_median(idle, n) / 1e4;
    x->med_fixed_share = loop ? (double)rules_median(fixed, n) / 1e4 : x->med_idle_share;
    free(v);
    return GP_OK;
}

static gp_status evidence(const struct rules_ctx *c, struct rules_out *o, const struct rules_ivs *v)
{
    rules_cols(o, 4, cols);
    for (size_t i = 0; i < c->n_steps && i < 5; i++) {
        const gp_step *s = &c->steps[i];
        int64_t len = s->end - s->ts, opt = rules_ivs_overlap(v, s->ts, s->end);
        GP_TRY(rules_row(o, (gp_cell[]){{0, rules_ev_name(c, s->event)},
                                        {(double)len / 1e3, NULL},
                                        {(double)opt / 1e3, NULL},
                                        {len ? 100.0 * (double)opt / (double)len : 0, NULL}}));
    }
    /* the time ranges the share counted, for the HTML and Perfetto views */
    for (size_t i = 0; i < v->n && o->f.n_ranges < 40; i++)
        if (rules_step_at(c, v->iv[i][0]) >= 0)
            GP_TRY(rules_range(o, v->iv[i][0], v->iv[i][1], "optimizer"));
    return GP_OK;
}

/* torch.optim's optimizers with a fused implementation (CUDA; the CPU from PyTorch 2.4). */
static int has_fused(const char *cls)
{
    return strcmp(cls, "Adam") == 0 || strcmp(cls, "AdamW") == 0 || strcmp(cls, "SGD") == 0 ||
           strcmp(cls, "Adagrad") == 0;
}

static gp_status advise_other(struct rules_out *o, double share, const char *cls)
{
    GP_TRY(rules_knob(o, "a larger batch; run the optimizer's expensive part less often"));
    return rules_reco(o,
                      "The optimizer (%s) takes %.0f%% of each step. It is not one of "
                      "torch.optim's multi-tensor optimizers, so its time is its own algorithm's: "
                      "its cost is per step, so a larger batch spreads it over more samples; "
                      "second-order methods (Shampoo, K-FAC) can update their preconditioners "
                      "less often.",
                      cls, share);
}

/* The trace already shows the multi-tensor or the fused update: no foreach=True. */
static gp_status advise_multi_tensor(struct rules_out *o, double share, const struct opt *x)
{
    const char *shown = x->impl == IMPL_FUSED ? "fused (aten::_fused_* ops in the trace)"
                                              : "multi-tensor (aten::_foreach_* ops in the trace)";
    if (x->impl == IMPL_FOREACH && has_fused(x->cls)) {
        GP_TRY(rules_knob(o, "torch.optim.%s(..., fused=True); a larger batch", x->cls));
        return rules_reco(o,
                          "The optimizer takes %.0f%% of each step and already runs its %s "
                          "update. The fused implementation (%s(..., fused=True); on the CPU "
                          "from PyTorch 2.4) does each parameter's whole update in one pass; its "
                          "cost is per step, so a larger batch (with the learning rate scaled) "
                          "also spreads it over more samples.",
                          share, shown, x->cls);
    }
    GP_TRY(rules_knob(o, "a larger batch (with the learning rate scaled)"));
    return rules_reco(o,
                      "The optimizer takes %.0f%% of each step and already runs its %s update: "
                      "its cost is per step, so a larger batch (with the learning rate scaled) "
                      "spreads it over more samples.",
                      share, shown);
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double share,
                        const struct opt *x)
{
    const char *cls = x->cls;
    if (cls[0] && !has_foreach(cls))
        return advise_other(o, share, cls);
    if (batch_knob(c, cls)) {
        GP_TRY(rules_knob(o, "--batch-size %ld", rules_count(c->cfg.rc.batch_size) * 4));
        return rules_reco(o,
                          "The optimizer takes %.0f%% of each step, and its cost is per step, not "
                          "per sample: a larger batch (--batch-size %ld, you ran %ld) spreads it "
                          "over more samples.",
                          share, rules_count(c->cfg.rc.batch_size) * 4,
                          rules_count(c->cfg.rc.batch_size));
    }
    if (x->impl != IMPL_PER_PARAM)
        return advise_multi_tensor(o, share, x);
    GP_TRY(rules_knob(o, "torch.optim.%s(..., foreach=True) or fused=True; a larger batch",
                      cls[0] ? cls : "<Optimizer>"));
    return rules_reco(o,
                      "The optimizer takes %.0f%% of each step. Use the multi-tensor or fused "
                      "implementation (%s(..., foreach=True), or fused=True where supported), "
                      "which updates all parameters in a few large ops instead of several small "
                      "ops per parameter; its cost is per step, so a larger batch (with the "
                      "learning rate scaled) also spreads it over more samples.",
                      share, cls[0] ? cls : "the optimizer");
}

/* Too few steps to judge: one stall inside one Optimizer.step can decide the share. */
static gp_status advise_more_steps(const struct rules_ctx *c, struct rules_out *o, const double *p,
                                   const struct opt *x)
{
    size_t more = (size_t)ceil(p[MIN_STEPS]) - c->n_steps; /* n < min_steps */
    rules_fire(o, GP_SEV_INFO, p[WARN_PCT]);
    return rules_reco(o,
                      "Only %zu step%s analysed: profile %zu more steps before acting on this. "
                      "Over so few steps one stall inside Optimizer.step can decide the share "
                      "(here %.1f-%.1f%% by step).",
                      c->n_steps, c->n_steps == 1 ? "" : "s", more, x->lo_share, x->hi_share);
}

/* The trainer's knob is a 4x batch: the optimizer then runs once per 4x the samples, so at least
 * 3/4 of its time per sample goes (the share of the epoch; per step the step grows), and 3/4 of
 * the loop's own time outside the step's ranges, which is per step too (a 2-core VM, the mlp
 * with one loader thread: 35, 42 and 93 us a step at batches of 16, 64 and 256, against 303,
 * 1105 and 4255 us of forward and backward). The forward's and backward's own per-call costs
 * shrink too (36 us a step there: 12% of them at batch 16), which a trace of one batch size
 * cannot tell from per-sample work: the measured gain is larger (44 +- 2% of the epoch against
 * 38% predicted, 33% from the optimizer alone), so this one is a floor. Otherwise the
 * optimizer's time where the GPU has nothing to do: a ceiling. Both are the median step's share
 * of that time applied to the mean step, so one stall moves neither. */
static gp_status predict_gain(const struct rules_ctx *c, struct rules_out *o, const struct opt *x)
{
    int64_t n = (int64_t)c->n_steps;
    int64_t idle = (int64_t)(x->med_idle_share / 100 * rules_per_step(c, (double)c->step_ns));
    if (batch_knob(c, x->cls)) {
        int64_t fixed = (int64_t)(x->med_fixed_share / 100 * rules_per_step(c, (double)c->step_ns));
        int64_t part = fixed - fixed / 4;
        return rules_gain(o, part * n, part,
                          "at least 3/4 of the optimizer's time and of the loop's own time "
                          "outside the step's recorded ranges (%.0f%% of the step), as a share "
                          "of the epoch: with 4x the batch they run once per 4x the samples (the "
                          "forward's and backward's per-call costs shrink too)",
                          x->med_fixed_share - x->med_idle_share);
    }
    return rules_gain(o, idle * n, idle, "%s",
                      c->has_gpu ? "at most the optimizer's time while the GPU has nothing to "
                                   "do (median step's share); the rest overlaps GPU work"
                                 : "at most the optimizer's whole time (median step's share)");
}

static gp_status judge(struct rules_ctx *c, const double *p, struct rules_out *o, struct opt *x)
{
    GP_TRY(per_step(c, x));
    rules_measure(o, "optimizer_share", GP_UNIT_PCT, x->med_share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    char per[32];
    rules_fmt_ns(per, sizeof(per), x->med_ns);
    GP_TRY(rules_summary(o,
                         "the optimizer takes %.1f%% of a step (median of %zu step%s, %s; "
                         "%.1f-%.1f%% by step)",
                         x->med_share, c->n_steps, c->n_steps == 1 ? "" : "s", per, x->lo_share,
                         x->hi_share));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    GP_TRY(evidence(c, o, &x->v));
    if ((double)c->n_steps < p[MIN_STEPS])
        return advise_more_steps(c, o, p, x);
    x->impl = optimizer_impl(c, &x->v);
    GP_TRY(predict_gain(c, o, x));
    return advise(c, o, x->med_share, x);
}

gp_status rules_optimizer_bound(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    struct opt x = {0};
    gp_status rc = optimizer_ivs(c, &x);
    if (rc == GP_OK && x.v.n == 0) {
        rules_measure(o, "optimizer_share", GP_UNIT_PCT, 0, ">=", p[WARN_PCT], p[CRIT_PCT]);
        rc = rules_summary(o, "no optimizer ranges (Optimizer.step, Optimizer.zero_grad) in the "
                              "trace");
    } else if (rc == GP_OK) {
        rc = judge(c, p, o, &x);
    }
    free(x.v.iv);
    return rc;
}
