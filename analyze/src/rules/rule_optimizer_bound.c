/* GT17 optimizer_bound: the optimizer takes a large share of the step. PyTorch records every
 * optimizer.step() and zero_grad() as "Optimizer.step#<Class>.step" / "Optimizer.zero_grad#..."
 * (our trainer: "Optimizer.step"); the share is the union of those ranges within the analysed
 * steps. Its cost is per step, not per sample, and a per-parameter loop (foreach=False) pays
 * several small ops per parameter tensor. No anchor has this rule (issue 17 §12): thresholds ours.
 */
#include "rules_int.h"

#include <stdlib.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 30, "optimizer share of step time (ours)"},
        {"crit_pct", 50, "share for crit (ours)"},
};
RULES_INFO(optimizer_bound, "GT17", "optimizer-bound step", 0, RULES_NEEDS_STEPS);

static const gp_evidence_col cols[] = {{"step", GP_UNIT_TEXT},
                                       {"step time", GP_UNIT_US},
                                       {"optimizer", GP_UNIT_US},
                                       {"share", GP_UNIT_PCT}};

static int is_optimizer(const char *s)
{
    return strncmp(s, "Optimizer.step", 14) == 0 || strncmp(s, "Optimizer.zero_grad", 19) == 0;
}

/* The optimizer's ranges (any thread) as a disjoint union; `cls` gets the class name PyTorch
 * appends ("Adam" of "Optimizer.step#Adam.step"), or stays empty. */
static gp_status optimizer_ivs(const struct rules_ctx *c, struct rules_ivs *v, char *cls,
                               size_t cap)
{
    for (size_t i = 0; i < c->n_ev; i++) {
        const gp_event *e = &c->ev[i];
        if (e->kind != GP_EV_USER_ANNOTATION || e->dur <= 0 || e->name == GP_STR_NONE)
            continue;
        const char *s = gp_trace_str(c->t, e->name);
        if (!is_optimizer(s))
            continue;
        const char *hash = strncmp(s, "Optimizer.step#", 15) == 0 ? s + 15 : NULL;
        if (hash && !cls[0])
            snprintf(cls, cap, "%.*s", (int)strcspn(hash, "."), hash);
        GP_TRY(rules_ivs_push(v, e->ts, e->ts + e->dur));
    }
    rules_ivs_merge(v);
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

/* The knob is the trainer's --batch-size (not a PyTorch optimizer's own implementation)? */
static int batch_knob(const struct rules_ctx *c, const char *cls)
{
    return !(cls[0] && !has_foreach(cls)) && c->cfg.trainer && c->cfg.batch_size > 0;
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double share,
                        const char *cls)
{
    if (cls[0] && !has_foreach(cls))
        return advise_other(o, share, cls);
    if (batch_knob(c, cls)) {
        GP_TRY(rules_knob(o, "--batch-size %ld", c->cfg.batch_size * 4));
        return rules_reco(o,
                          "The optimizer takes %.0f%% of each step, and its cost is per step, not "
                          "per sample: a larger batch (--batch-size %ld, you ran %ld) spreads it "
                          "over more samples.",
                          share, c->cfg.batch_size * 4, c->cfg.batch_size);
    }
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

/* The optimizer's time in steps that would shorten the step if it went: on a GPU trace only
 * where the GPU is idle meanwhile (the rest overlaps GPU work). */
static gp_status gpu_idle_during(struct rules_ctx *c, const struct rules_ivs *v, int64_t *out)
{
    if (c->has_gpu)
        GP_TRY(rules_ctx_intervals(c));
    int64_t sum = 0;
    for (size_t i = 0; i < v->n; i++) {
        int64_t in = rules_ivs_overlap(&c->step_ivs, v->iv[i][0], v->iv[i][1]);
        int64_t busy = c->has_gpu ? rules_ivs_overlap(&c->busy, v->iv[i][0], v->iv[i][1]) : 0;
        sum += in > busy ? in - busy : 0;
    }
    *out = sum;
    return GP_OK;
}

/* The trainer's knob is a 4x batch: the optimizer then runs once per 4x the samples, so at least
 * 3/4 of its time per sample goes (the share of the epoch; per step the step grows). Every other
 * per-step cost shrinks too and small GEMMs get faster: the measured gain is larger (a 16-sample
 * mlp: 49% predicted, 62-63% of the epoch measured), so this one is a floor. Otherwise the
 * optimizer's time where the GPU has nothing to do: a ceiling. */
static gp_status predict_gain(const struct rules_ctx *c, struct rules_out *o, int64_t idle,
                              const char *cls)
{
    if (batch_knob(c, cls)) {
        int64_t part = idle - idle / 4;
        return rules_gain(o, part, (int64_t)rules_per_step(c, (double)part),
                          "at least 3/4 of the optimizer's time, as a share of the epoch: with "
                          "4x the batch it runs once per 4x the samples (every other per-step "
                          "cost shrinks too)");
    }
    return rules_gain(o, idle, (int64_t)rules_per_step(c, (double)idle), "%s",
                      c->has_gpu ? "at most the optimizer's time while the GPU has nothing to "
                                   "do; the rest overlaps GPU work"
                                 : "at most the optimizer's whole time");
}

gp_status rules_optimizer_bound(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    struct rules_ivs v = {0};
    char cls[64] = "";
    gp_status rc = optimizer_ivs(c, &v, cls, sizeof(cls));
    int64_t opt = rc == GP_OK ? rules_ivs_in_steps(c, &v) : 0;
    double share = rules_pct_of_steps(c, opt);
    rules_measure(o, "optimizer_share", GP_UNIT_PCT, share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    char per[32];
    rules_fmt_ns(per, sizeof(per), (int64_t)rules_per_step(c, (double)opt));
    if (rc == GP_OK && v.n == 0)
        rc = rules_summary(o, "no optimizer ranges (Optimizer.step, Optimizer.zero_grad) in the "
                              "trace");
    else if (rc == GP_OK)
        rc = rules_summary(o, "the optimizer takes %.1f%% of step time (%s per step)", share, per);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = evidence(c, o, &v);
    int64_t idle = 0;
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = gpu_idle_during(c, &v, &idle);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = predict_gain(c, o, idle, cls);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = advise(c, o, share, cls);
    free(v.iv);
    return rc;
}
