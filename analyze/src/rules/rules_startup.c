/* rules_startup.c: start-up work in a trace without a warm-up step to leave out
 * (rules_startup.h). Calls are grouped by name alone: a one-iteration trace runs each input
 * shape once, so the first conv2d is set against the later conv2d calls of every shape. */
#include "rules/rules_startup.h"
#include "rules/rules_first_calls.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A first call is start-up where it took FIRST_RATIO times its name's median later call and
 * FIRST_MIN_NS more: first-time work is orders over the call's own (HTA's AlexNet: aten::to
 * 29.9 s against 49 us, its first conv2d 10.8 s against 1.4 ms; PyTorch's first aten::mean on
 * the CPU 3.7 ms against 7 us). Of the 870 stored traces (ours, PyTorch's, the accuracy runs'),
 * these two are the only ones whose verdicts it moved. */
#define FIRST_RATIO  10
#define FIRST_MIN_NS 1000000
/* later calls a name needs for its median */
#define MIN_LATER 2

struct call {
    gp_str name;
    int64_t ts, dur;
};

static int cmp_call(const void *pa, const void *pb)
{
    const struct call *a = pa, *b = pb;
    RULES_CMP(a->name, b->name);
    RULES_CMP(a->ts, b->ts);
    return 0;
}

/* The keyed calls (rules_first_keyed) of the CPU tracks that start in the analysed window. */
static gp_status collect(const struct rules_ctx *c, struct call **out, size_t *n_out)
{
    size_t n_tracks, n = 0, cap = 0;
    const gp_track *tr = gp_trace_tracks(c->t, &n_tracks);
    struct call *v = NULL;
    for (size_t t = 0; t < n_tracks; t++)
        for (uint32_t i = tr[t].first; !tr[t].is_gpu && i < tr[t].first + tr[t].count; i++) {
            const gp_event *e = &c->ev[i];
            if (!rules_first_keyed(e) || e->ts < c->win_ts || e->ts >= c->win_end)
                continue;
            if (rules_reserve((void **)&v, &cap, n, sizeof(*v), 1024) != GP_OK)
                return free(v), GP_ENOMEM;
            v[n++] = (struct call){e->name, e->ts, e->dur};
        }
    *out = v, *n_out = n;
    return GP_OK;
}

/* The median duration of v[a, b) (tmp: room for b - a). */
static int64_t median_of(const struct call *v, size_t a, size_t b, int64_t *tmp)
{
    for (size_t i = a; i < b; i++)
        tmp[i - a] = v[i].dur;
    return rules_median(tmp, b - a);
}

/* Each name's first call that is start-up into `ivs`, the costliest into c->startup. */
static gp_status first_calls(struct rules_ctx *c, const struct call *v, size_t n, int64_t *tmp,
                             struct rules_ivs *ivs)
{
    int64_t top = 0;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && v[b].name == v[a].name;)
            b++;
        if (b - a < 1 + MIN_LATER)
            continue;
        int64_t later = median_of(v, a + 1, b, tmp), excess = v[a].dur - later;
        if (v[a].dur < FIRST_RATIO * later || excess < FIRST_MIN_NS)
            continue;
        GP_TRY(rules_ivs_push(ivs, v[a].ts, v[a].ts + v[a].dur));
        if (excess > top) {
            top = excess;
            c->startup.name = v[a].name;
            c->startup.first = v[a].dur, c->startup.later = later;
        }
    }
    return GP_OK;
}

gp_status rules_startup_scan(struct rules_ctx *c)
{
    c->startup = (struct rules_startup){0, GP_STR_NONE, 0, 0};
    if (c->n_warmup > 0 || c->n_steps == 0 || c->step_ns <= 0)
        return GP_OK; /* the warm-up step held the start-up */
    struct call *v;
    size_t n;
    GP_TRY(collect(c, &v, &n));
    if (n) /* v is NULL without calls */
        qsort(v, n, sizeof(*v), cmp_call);
    int64_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    struct rules_ivs ivs = {0};
    gp_status rc = tmp ? first_calls(c, v, n, tmp, &ivs) : GP_ENOMEM;
    if (rc == GP_OK) {
        rules_ivs_merge(&ivs);
        c->startup.ns = rules_ivs_in_steps(c, &ivs);
    }
    free(ivs.iv);
    free(tmp);
    free(v);
    return rc;
}

/* Does a finding of a rule with these flags judge time? The memory rules judge a peak or a
 * growth, which start-up work does not inflate. */
static int judges_time(unsigned needs)
{
    return (needs & (RULES_READS_CPU | RULES_READS_GPU | RULES_NEEDS_STEPS)) != 0;
}

/* Measures that are shares of the analysed time, which start-up work of share s moves by at most
 * this much: a share of work that start-up can hold falls to (m - s) / (100 - s) at the least
 * without it; the GPU's busy share rises to m / (1 - s) at the most. (The loader's wait is not:
 * no first call holds it.) */
static const char *const step_shares[] = {
        "alloc_call_share",     "blocked_share",   "cpu_wait_share",    "exposed_comm_share",
        "exposed_copy_share",   "host_wait_share", "kernel_wait_share", "optimizer_share",
        "outlier_excess_share", "sync_share",      "tiny_op_share",     "gpu_busy_share",
};

/* The finding's measure with the start-up time (pct of the analysed time) left out, at the end of
 * its range nearest to not firing; NAN where the measure is not a share of the analysed time. */
static double without_startup(const gp_finding *f, double pct)
{
    for (size_t i = 0;
         f->metric_name && !isnan(f->metric) && i < sizeof(step_shares) / sizeof(step_shares[0]);
         i++)
        if (strcmp(f->metric_name, step_shares[i]) == 0)
            return f->cmp[0] == '<' ? 100.0 * f->metric / (100.0 - pct)
                                    : 100.0 * (f->metric - pct) / (100.0 - pct);
    return NAN;
}

/* Does `x` reach the tier at `tier` of finding f's measure? */
static int reaches(const gp_finding *f, double x, double tier)
{
    return f->cmp[0] == '<' ? x < tier : x >= tier;
}

/* Why the finding may be start-up's, or NULL where it holds without it; *sev: the severity it
 * holds at without the start-up time (crit that could fall under its tier but not under warn's
 * is warn), else info. */
static const char *why_startup(const struct rules_ctx *c, const gp_finding *f, double pct,
                               struct rules_out *o, gp_severity *sev)
{
    *sev = GP_SEV_INFO;
    if (rules_startup_first_iteration(c))
        return rules_strf(o,
                          "Start-up, not training: the trace holds one iteration (%s), its "
                          "first: every call in it ran for the first time, and %.0f%% of it is "
                          "first calls found far slower than their later ones (GT00).",
                          rules_startup_iteration(c), pct);
    if (pct >= RULES_STARTUP_PCT)
        return rules_strf(o,
                          "Start-up, not training: %.0f%% of the analysed time is first calls "
                          "far slower than their later ones (GT00), and this measure includes "
                          "them.",
                          pct);
    double x = without_startup(f, pct);
    if (isnan(x) || reaches(f, x, f->threshold))
        return NULL;
    int below = f->cmp[0] == '<', held = f->severity == GP_SEV_CRIT && !isnan(f->warn_threshold) &&
                                         f->warn_threshold != f->threshold &&
                                         reaches(f, x, f->warn_threshold);
    if (held)
        *sev = GP_SEV_WARN;
    return rules_strf(o,
                      "Perhaps start-up: first calls far slower than their later ones took "
                      "%.0f%% of the analysed time (GT00); without them this share could be as "
                      "%s as %.1f%%, %s the %g%% it fired at%s.",
                      pct, below ? "high" : "low", x < 0 ? 0.0 : x, below ? "over" : "under",
                      f->threshold,
                      held ? rules_strf(o, " (it holds warn's %g%%)", f->warn_threshold) : "");
}

double rules_startup_pct(const struct rules_ctx *c)
{
    return c->step_ns > 0 ? 100.0 * (double)c->startup.ns / (double)c->step_ns : 0;
}

/* The only step is the bundled trainer's first (ProfilerStep#0: it marks every batch from its
 * first, so nothing ran before it), found as start-up or not: cuDNN's algorithm heuristics run on
 * the host outside any recorded call, and its cnn's `--steps 1` on an H200 had under 10% of its
 * 51 ms step found as first calls (GT04 crit and GT02 crit on it, where the next steps are
 * well under a millisecond). */
static int trainer_first_step(const struct rules_ctx *c)
{
    return c->cfg.rc.trainer && c->n_steps == 1 && c->n_warmup == 0 && !c->steps[0].synthetic &&
           c->steps[0].num == 0;
}

int rules_startup_first_iteration(const struct rules_ctx *c)
{
    return (c->n_steps == 1 && c->n_warmup == 0 &&
            (c->steps[0].one_iteration || !c->steps[0].synthetic) &&
            rules_startup_pct(c) >= RULES_STARTUP_NOTE_PCT) ||
           trainer_first_step(c);
}

const char *rules_startup_iteration(const struct rules_ctx *c)
{
    if (trainer_first_step(c))
        return "the trainer's first step";
    return c->steps[0].synthetic ? "the optimizer stepped once" : "one step";
}

int rules_startup_dominates(const struct rules_ctx *c)
{
    return rules_startup_pct(c) >= RULES_STARTUP_PCT || rules_startup_first_iteration(c);
}

gp_status rules_startup_demote(gp_findings *fs, const struct rules_ctx *c,
                               unsigned (*needs)(const gp_finding *f))
{
    double pct = rules_startup_pct(c);
    if (pct <= 0)
        return GP_OK;
    struct rules_out o = {.arena = &fs->arena};
    for (size_t i = 0; i < fs->n; i++) {
        gp_finding *f = &fs->items[i];
        if (f->severity < GP_SEV_WARN || !judges_time(needs(f)))
            continue;
        gp_severity sev;
        const char *why = why_startup(c, f, pct, &o, &sev);
        if (!why)
            continue;
        const char *reco = rules_strf(&o,
                                      "%s Profile steady-state steps before acting on it. Its "
                                      "own advice: %s",
                                      why, f->recommendation ? f->recommendation : "none");
        if (!reco)
            return GP_ENOMEM;
        f->recommendation = reco;
        f->severity = sev;
    }
    return GP_OK;
}
