/* GT14 step_outliers: steps longer than median + k * 1.4826 * MAD (a robust 3-sigma, floored at
 * a share of the median) whose excess time is a share of the run; evidence names the breakdown
 * category that grew most. Where the steps carry their thread's run-queue time (libprof's step
 * args), each step counts less its wait for a core: one slow only by waiting is a load on the
 * machine (GT19's), not an outlier of the program. Anchor: SageMaker StepOutlier (3 sigma); the
 * MAD form is ours. */
#include "rules/rules_int.h"
#include "rules/rules_first_calls.h"
#include "rules/rules_step_shape.h"

#include <string.h>

#include <stdlib.h>

enum { MAD_K, MIN_EXCESS_PCT, WARN_PCT, CRIT_PCT, MIN_STEPS };
static const gp_rule_param params[] = {
        {"mad_k", 3, "outlier above median + k * 1.4826 * MAD (SageMaker: 3 sigma)"},
        {"min_excess_pct", 50,
         "...and at least this much above the median (ours: 10% flagged the jitter of a loader "
         "thread sharing 2 cores; periodic stalls such as checkpoints or GC double a step)"},
        {"warn_pct", 5, "outliers' excess time, share of step time (ours)"},
        {"crit_pct", 20, "share for crit (ours)"},
        {"min_steps", 5, "fewer analysed steps: not applicable"},
};
/* phase 1: it reads GT01's finding (outliers that are loader waits are GT01's to fix) */
RULES_INFO(step_outliers, "GT14", "step-time outliers", 1,
           RULES_READS_CPU | RULES_HOST_TIMED | RULES_WAIT_INFLATED);

static const gp_evidence_col cols[] = {{"step", GP_UNIT_TEXT},
                                       {"duration", GP_UNIT_US},
                                       {"excess", GP_UNIT_US},
                                       {"x median", GP_UNIT_COUNT},
                                       {"grew most", GP_UNIT_TEXT}};

/* Medians of the step time (own: less its wait for a core) and of each breakdown category,
 * over analysed steps. */
static gp_status medians(const struct rules_ctx *c, int own, int64_t *med,
                         int64_t bd_med[GP_BD_COUNT])
{
    int64_t *v = malloc(c->n_steps * sizeof(*v));
    if (!v)
        return GP_ENOMEM;
    for (size_t i = 0; i < c->n_steps; i++)
        v[i] = rules_step_time(&c->steps[i], own);
    *med = rules_median(v, c->n_steps);
    for (int k = 0; k < GP_BD_COUNT; k++) {
        for (size_t i = 0; i < c->n_steps; i++)
            v[i] = c->steps[i].bd[k];
        bd_med[k] = rules_median(v, c->n_steps);
    }
    for (size_t i = 0; i < c->n_steps; i++) {
        int64_t d = rules_step_time(&c->steps[i], own) - *med;
        v[i] = d < 0 ? -d : d;
    }
    med[1] = rules_median(v, c->n_steps); /* MAD */
    free(v);
    return GP_OK;
}

/* The outlier threshold over step times whose median and MAD are med[0], med[1]. */
static double threshold(const double *p, const int64_t *med)
{
    double thr = (double)med[0] + p[MAD_K] * 1.4826 * (double)med[1];
    double floor = (double)med[0] * (1 + p[MIN_EXCESS_PCT] / 100);
    return thr < floor ? floor : thr;
}

static const char *grew_most(const gp_step *s, const int64_t bd_med[GP_BD_COUNT])
{
    int best = GP_BD_OTHER;
    for (int k = 0; k < GP_BD_COUNT; k++)
        if (s->bd[k] - bd_med[k] > s->bd[best] - bd_med[best])
            best = k;
    return gp_bd_cat_name((gp_bd_cat)best);
}

/* Did rule `id` (a phase-0 rule) fire, at warn or worse? */
static int rule_fired(const struct rules_ctx *c, const char *id)
{
    size_t n;
    const gp_finding *f = gp_findings_get(c->done, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].rule->id, id) == 0 && f[i].severity >= GP_SEV_WARN)
            return 1;
    return 0;
}

static int loader_starved(const struct rules_ctx *c)
{
    return rule_fired(c, "GT01");
}

/* Outliers whose excess is mostly loader wait while GT01 fires are an uneven loader, not a
 * periodic stall: said at info, pointing at GT01 (a PNG loader with one thread on 2 cores made
 * 70 of 299 steps 1.5x the median). */
static gp_status loader_outliers(const struct rules_ctx *c, struct rules_out *o,
                                 int64_t loader_excess, int64_t excess, double share)
{
    if (o->f.severity < GP_SEV_WARN || 2 * loader_excess < excess || !loader_starved(c))
        return GP_OK;
    rules_fire(o, GP_SEV_INFO, o->f.threshold);
    return rules_reco(o,
                      "%.1f%% of the run is spent in steps well over the median, mostly waiting "
                      "for the next batch: a loader that cannot keep up delivers batches "
                      "unevenly. GT01 (data-loader starvation) reports the cause; fix it first.",
                      share);
}

/* The excess of the outliers among the first tenth of the analysed steps (none under 30 steps:
 * too few to tell): slow first steps are a warm-up (memory touched for the first time, caches,
 * the allocator), not a periodic stall (a 512-sample mlp: steps 2 to 9 of 99 at 1.5-2x the
 * median). */
static int64_t warmup_excess(const struct rules_ctx *c, int own, int64_t med, double thr)
{
    size_t head = c->n_steps >= 30 ? c->n_steps / 10 : 0;
    int64_t sum = 0;
    for (size_t i = 0; i < c->n_steps && i < head; i++) {
        int64_t d = rules_step_time(&c->steps[i], own);
        sum += (double)d > thr ? d - med : 0;
    }
    return sum;
}

static gp_status warmup_outliers(const struct rules_ctx *c, struct rules_out *o, int own,
                                 int64_t med, double thr, int64_t excess, double share)
{
    if (o->f.severity < GP_SEV_WARN || 2 * warmup_excess(c, own, med, thr) < excess)
        return GP_OK;
    rules_fire(o, GP_SEV_INFO, o->f.threshold);
    return rules_reco(o,
                      "%.1f%% of the run is spent in steps well over the median, most of it in "
                      "the first steps: a warm-up (memory touched for the first time, caches, "
                      "the allocator), not a periodic stall. Profile after it (a longer "
                      "schedule warm-up) to see the steady state.",
                      share);
}

/* Info, its knob GT19's: the outliers are the machine's load (the reason follows). */
static gp_status defer_to_gt19(struct rules_out *o)
{
    rules_fire(o, GP_SEV_INFO, o->f.threshold);
    return rules_knob(o, "free the cores first (GT19)");
}

/* Outliers whose excess the measured waits for a core can account for (the trainer's CPU
 * accounting: the training thread's run-queue time and its loader threads'), even under GT19's
 * threshold: one busy loop beside the trainer on 2 cores (GT19 quiet at 8.2%) left steps 1.5x the
 * median, a load on the machine rather than a periodic stall of the program. Info, saying so. */
static gp_status waited_outliers(const struct rules_ctx *c, struct rules_out *o, double share)
{
    struct rules_acct a = rules_read_acct(c);
    double lost = rules_wait_lost_pct(c, &a);
    if (o->f.severity < GP_SEV_WARN || lost <= 0 || lost < share)
        return GP_OK;
    GP_TRY(defer_to_gt19(o));
    return rules_reco(o,
                      "Explained by GT19's measure (CPU contention): %.1f%% of the run is spent "
                      "in steps well over the median, and the step's threads waited for a core "
                      "%.1f%% of step time (the scheduler's run-queue time): other load on the "
                      "machine can make these steps slow, not a periodic stall of the program. "
                      "Profile on a quiet machine to tell.",
                      share, lost);
}

/* Outliers at no period while GT19 (CPU contention) fires from timing alone (no CPU accounting
 * in the trace): a load on the machine preempts whatever runs, at random steps; a periodic stall
 * repeats every N steps. Timing cannot tell more (a stall that recurs irregularly reads the
 * same), so info, saying so and pointing at GT19 (two busy loops beside the trainer, its
 * accounting stripped: 65-118 of 299 steps 1.5-12x the median, spaced 1 to 12 steps apart). */
static gp_status contended_outliers(const struct rules_ctx *c, struct rules_out *o,
                                    const size_t *at, size_t n_out, double share)
{
    if (o->f.severity < GP_SEV_WARN || rules_read_acct(c).known || !rule_fired(c, "GT19") ||
        rules_periodic(at, n_out))
        return GP_OK;
    GP_TRY(defer_to_gt19(o));
    return rules_reco(o,
                      "Explained by GT19 (CPU contention), from timing alone: %.1f%% of the "
                      "run is spent in %zu steps well over the median that come at no period, "
                      "while operators stalled past their own fastest calls (GT19). A load on "
                      "the machine lands on random steps; a periodic stall (checkpoint, "
                      "evaluation, logging) repeats every N steps. The trace has no CPU "
                      "accounting, so it cannot rule out a stall that recurs irregularly "
                      "(Python's GC): profile on a quiet machine, or with the trainer's "
                      "accounting, to tell.",
                      share, n_out);
}

/* The outliers found: their indices among the analysed steps, count and excess over the median
 * step; with the steps' waits for a core (own), the steps as slow only by those waits. */
struct outliers {
    int own;
    int64_t med;
    double thr;
    size_t *at, n;
    int64_t excess, loader_excess;
    size_t n_waited;
    int64_t waited_excess;
    /* outliers whose excess is mostly first-time work (rules_first_calls.h), counted apart from
     * the others: their count and excess, and the one most of whose excess it is */
    size_t n_first;
    int64_t first_excess;
    struct first_step {
        size_t at;
        int64_t excess;
        struct rules_first_call fc, shaped;
        int64_t first_ns, batch, usual_batch;
    } first;
};

/* What the first-time outlier's costliest first call was, in words. */
static const char *first_call_text(const struct rules_ctx *c, struct rules_out *o,
                                   const struct first_step *f)
{
    const char *name = gp_trace_str(c->t, f->fc.name);
    const char *batch = f->batch > 0 && f->usual_batch > 0 && f->batch != f->usual_batch
                                ? rules_strf(o, "; its batch holds %lld samples, most hold %lld",
                                             (long long)f->batch, (long long)f->usual_batch)
                                : "";
    if (f->fc.kernel != GP_STR_NONE)
        return rules_strf(o, "the first launch of kernel %.100s (%s)%s",
                          gp_trace_str(c->t, f->fc.kernel), name, batch);
    if (f->fc.shape != GP_STR_NONE)
        return rules_strf(o, "the first call of %s for a new shape (Input Dims %s)%s", name,
                          gp_trace_str(c->t, f->fc.shape), batch);
    const char *shaped = f->shaped.name == GP_STR_NONE
                                 ? ""
                                 : rules_strf(o, "; its first new shape: %s, Input Dims %s",
                                              gp_trace_str(c->t, f->shaped.name),
                                              gp_trace_str(c->t, f->shaped.shape));
    if (f->fc.fresh)
        return rules_strf(o, "%s, run only in steps that make first calls%s%s", name, shaped,
                          batch);
    return rules_strf(o, "the first call of %s%s%s%s", name,
                      f->fc.batch > 0 ? " at this batch size" : "", shaped, batch);
}

/* "; 1 of them ... first-time work (...)": the outliers counted apart, for the summary. */
static const char *first_line(const struct rules_ctx *c, const struct outliers *u,
                              struct rules_out *o)
{
    if (!u->n_first)
        return "";
    const struct first_step *f = &u->first;
    return rules_strf(o,
                      "; %zu of them (%.1f%% of step time) slow once by first-time work, not a "
                      "recurring stall: %s spent %.1f ms of its %.1f ms excess in first calls, "
                      "most in %s",
                      u->n_first, rules_pct_of_steps(c, u->first_excess),
                      rules_ev_name(c, c->steps[f->at].event),
                      (double)(f->first_ns < f->excess ? f->first_ns : f->excess) / 1e6,
                      (double)f->excess / 1e6, first_call_text(c, o, f));
}

/* Outliers that are first-time work, the others under warn_pct: info, advice that fits
 * (the bundled trainer on an H200: the epoch's last, partial batch's step, cuBLAS's first call
 * for its shape, 1 step of 299: warn before, naming checkpoints and GC). */
static gp_status first_time_info(const struct rules_ctx *c, const double *p, struct rules_out *o,
                                 const struct outliers *u)
{
    rules_fire(o, GP_SEV_INFO, o->f.threshold);
    GP_TRY(rules_knob_for(c, o, "--drop-last",
                          "DataLoader(drop_last=True), or warm up each shape before profiling"));
    const char *rest = u->n ? rules_strf(o,
                                         " The other %zu outlier step%s cost %.1f%% of step "
                                         "time, under %.0f%%.",
                                         u->n, u->n == 1 ? "" : "s",
                                         rules_pct_of_steps(c, u->excess), p[WARN_PCT])
                            : "";
    return rules_reco(o,
                      "%.1f%% of the run is spent in %zu step%s slow once by first-time work: "
                      "work done on the first call of a new shape, operator or kernel (cuBLAS "
                      "or cuDNN choosing an algorithm, cudnn.benchmark's search, lazy loading "
                      "of a CUDA module, torch.compile recompiling for a new shape), which "
                      "comes back only with the next new shape. Not a periodic stall: warm up "
                      "every shape the run will see before timing it, pad or bucket variable "
                      "shapes into a few, and drop the epoch's last partial batch (%s).%s",
                      rules_pct_of_steps(c, u->first_excess), u->n_first,
                      u->n_first == 1 ? "" : "s",
                      c->cfg.rc.trainer ? "--drop-last" : "DataLoader(drop_last=True)", rest);
}

/* Info, and where GT19 fires (*gt19 set) its knob first: the machine's outliers are its. */
static gp_status info_or_gt19(const struct rules_ctx *c, struct rules_out *o, int *gt19)
{
    *gt19 = rule_fired(c, "GT19");
    if (*gt19)
        return defer_to_gt19(o);
    rules_fire(o, GP_SEV_INFO, o->f.threshold);
    return GP_OK;
}

/* What the outlier steps slowed all over are: another process taking the core where GT19
 * fires, else a slower machine. */
static gp_status slowed_reco(const struct rules_ctx *c, struct rules_out *o,
                             const struct outliers *u, const struct rules_slowed *w, double share,
                             double rest)
{
    int gt19;
    GP_TRY(info_or_gt19(c, o, &gt19));
    const char *what = gt19 ? "Explained by GT19 (CPU contention): threads waited for a core, "
                              "and these steps ran slower all over, as another process taking "
                              "the core in many short slices leaves them"
                            : "The machine ran slower in those steps (another process taking "
                              "the core in many short slices, a slower or shared core)";
    return rules_reco(o,
                      "%s, not the program. %.1f%% of the run is spent in %zu steps well over "
                      "the median; %zu of them ran the same %u ranges as a median step with "
                      "every part slower: in none did one stretch without an operator starting "
                      "or ending take the excess alone, as a stall's does (the most one stretch "
                      "grew: %.2f ms, of a step %.2f ms over the median). "
                      "A stall (checkpoint, evaluation, logging, GC) puts nearly all of a "
                      "step's excess in one long operator or gap, or adds work. The rest is "
                      "%.1f%% of step time. "
                      "Profile on a quiet machine to tell.",
                      what, share, u->n, w->n, w->ranges, (double)w->grew / 1e6,
                      (double)w->grew_excess / 1e6, rest);
}

/* Outliers whose stall-shaped part (all but the steps slowed all over: rules_slowed_steps) is
 * under warn_pct: the machine's, said at info (torch.profiler runs of small CPU loops at load
 * 9-13, even as SCHED_FIFO with no wait for a core: 1 step of 7 or 11 at 1.6-1.7x the median,
 * its longest stretch 0.06-0.18 ms longer, 5.2-7.9% of step time: warn before); GT19's where it
 * fires (the LSTM loop beside two busy loops: 2 of 7 steps 2.1x the median, each a few 4 ms
 * preemptions, GT19 warn from 6 stalled calls that cover too little of them for its own
 * explanation: crit before). */
static gp_status slowed_outliers(const struct rules_ctx *c, const double *p, struct rules_out *o,
                                 const struct outliers *u, double share)
{
    struct rules_slowed w = {0};
    if (o->f.severity < GP_SEV_WARN)
        return GP_OK;
    GP_TRY(rules_slowed_steps(c, u->at, u->n, u->own, u->med, &w));
    double rest = rules_pct_of_steps(c, u->excess - w.excess);
    if (!w.n || rest >= p[WARN_PCT])
        return GP_OK;
    return slowed_reco(c, o, u, &w, share, rest);
}

/* One outlier step (stall-shaped: not slowed all over) in a trace with no CPU accounting and no
 * per-step waits: once in the window, it shows no period, and timing alone cannot tell a
 * one-off (the thread preempted for a few scheduler slices, a GC pause) from a stall that
 * recurs every more steps than the window holds. Info, saying so (torch.profiler's opt_high
 * beside a busy loop at load 7-15: 1 step of 11 at 1.6x the median, one 4 ms stretch between
 * two operators, which /proc/thread-self/schedstat showed the thread spent waiting for a core:
 * warn before); where GT19 fires from timing alone, its knob first. */
static gp_status one_off_outlier(const struct rules_ctx *c, struct rules_out *o,
                                 const struct outliers *u, double share)
{
    if (o->f.severity < GP_SEV_WARN || u->n != 1 || u->own || rules_read_acct(c).known)
        return GP_OK;
    int gt19;
    GP_TRY(info_or_gt19(c, o, &gt19));
    return rules_reco(o,
                      "%s%.1f%% of the run is spent in one step of %zu well over the median: "
                      "seen once, it shows no period. From timing alone (the trace has no CPU "
                      "accounting) a one-off, such as the thread waiting a few scheduler slices "
                      "for a core or a GC pause, reads the same as a stall that recurs every "
                      "%zu steps or more (checkpoint, evaluation, logging). Profile more steps "
                      "to see whether it recurs.",
                      gt19 ? "Explained by GT19 (CPU contention), from timing alone, where "
                             "operators stalled past their own fastest calls: "
                           : "",
                      share, c->n_steps, c->n_steps);
}

/* "; less each step's wait for a core ...": what the per-step waits changed, for the summary. */
static const char *waits_line(const struct rules_ctx *c, const struct outliers *u,
                              struct rules_out *o)
{
    if (!u->own)
        return "";
    int stolen = rules_steps_stolen(c);
    const char *more =
            u->n_waited ? rules_strf(o,
                                     "; %zu more step%s as slow only by waiting for a core%s "
                                     "(%.1f%% of step time: GT19's)",
                                     u->n_waited, u->n_waited == 1 ? " was" : "s were",
                                     stolen ? " or the host" : "",
                                     rules_pct_of_steps(c, u->waited_excess))
                        : "";
    return rules_strf(o,
                      " (each step less its thread's wait for a core: the scheduler's "
                      "run-queue time%s)%s",
                      stolen ? "; and the time the host took from the virtual machine's CPUs "
                               "then (steal)"
                             : "",
                      more);
}

/* The measure, and what the outliers are most likely: an uneven loader, a warm-up, a load on
 * the machine, or else a periodic stall of the program. */
static gp_status judge(const struct rules_ctx *c, const double *p, struct rules_out *o,
                       const struct outliers *u)
{
    /* the measure leaves out the outliers slow once by first-time work */
    double share = rules_pct_of_steps(c, u->excess);
    int64_t all = u->excess + u->first_excess;
    rules_measure(o, "outlier_excess_share", GP_UNIT_PCT, share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    GP_TRY(rules_summary(o,
                         "%zu of %zu steps above %.2fx the median step; their excess is %.1f%% "
                         "of step time%s%s",
                         u->n + u->n_first, c->n_steps, u->med ? u->thr / (double)u->med : 0,
                         rules_pct_of_steps(c, all), waits_line(c, u, o), first_line(c, u, o)));
    int first_only =
            o->f.severity == GP_SEV_OK && u->n_first && rules_pct_of_steps(c, all) >= p[WARN_PCT];
    if (o->f.severity == GP_SEV_OK && !first_only) {
        o->f.n_rows = o->f.n_ranges = 0;
        return GP_OK;
    }
    GP_TRY(rules_gain(o, all, all / (int64_t)c->n_steps,
                      "if the outlier steps took the median time"));
    if (first_only)
        return first_time_info(c, p, o, u);
    GP_TRY(loader_outliers(c, o, u->loader_excess, u->excess, share));
    GP_TRY(warmup_outliers(c, o, u->own, u->med, u->thr, u->excess, share));
    if (!u->own) { /* the waits are inferred over the run, not measured per step */
        GP_TRY(waited_outliers(c, o, share));
        GP_TRY(contended_outliers(c, o, u->at, u->n, share));
    }
    GP_TRY(slowed_outliers(c, p, o, u, share));
    GP_TRY(one_off_outlier(c, o, u, share));
    if (o->f.severity == GP_SEV_INFO)
        return GP_OK;
    const char *first = u->n_first ? rules_strf(o,
                                                " %zu more step%s slow once by first-time work "
                                                "(the summary's) %s left out: warm up each "
                                                "shape before timing and, for an epoch's "
                                                "partial last batch, drop it (%s).",
                                                u->n_first, u->n_first == 1 ? "" : "s",
                                                u->n_first == 1 ? "is" : "are",
                                                c->cfg.rc.trainer ? "--drop-last"
                                                                  : "DataLoader(drop_last=True)")
                                   : "";
    return rules_reco(o,
                      "%zu steps take well over the median step and cost %.1f%% of the run. "
                      "Their extra time is mostly in the category shown; look for periodic "
                      "checkpointing, evaluation or logging, Python GC, or recompilation.%s",
                      u->n, share, first);
}

/* With per-step waits: the steps whose time is an outlier only with their wait for a core in
 * it (over the threshold of the whole times), counted apart. */
static gp_status waited_only(const struct rules_ctx *c, const double *p, struct outliers *u)
{
    int64_t med[2], bd_med[GP_BD_COUNT];
    GP_TRY(medians(c, 0, med, bd_med));
    double thr = threshold(p, med);
    for (size_t i = 0; i < c->n_steps; i++) {
        int64_t d = rules_step_time(&c->steps[i], 0);
        if ((double)d > thr && (double)rules_step_time(&c->steps[i], 1) <= u->thr) {
            u->n_waited++;
            u->waited_excess += d - med[0];
        }
    }
    return GP_OK;
}

static gp_status outlier_row(const struct rules_ctx *c, struct rules_out *o, const gp_step *s,
                             int64_t own, int64_t med, const char *grew)
{
    GP_TRY(rules_row(o, (gp_cell[]){{0, rules_ev_name(c, s->event)},
                                    {(double)(s->end - s->ts) / 1e3, NULL},
                                    {(double)(own - med) / 1e3, NULL},
                                    {med ? (double)own / (double)med : 0, NULL},
                                    {0, grew}}));
    return rules_range(o, s->ts, s->end, rules_ev_name(c, s->event));
}

/* Is outlier step i, `x` over the median, first-time work: half its excess or more in first
 * calls? Counted apart in u if so. */
static int first_time(const struct rules_first_calls *f, struct outliers *u, size_t i, int64_t x)
{
    if (!f->excess || 2 * f->excess[i] < x)
        return 0;
    u->n_first++;
    u->first_excess += x;
    if (f->excess[i] > u->first.first_ns)
        u->first = (struct first_step){
                i, x, f->top[i], f->shaped[i], f->excess[i], f->batch[i], f->usual_batch};
    return 1;
}

/* Any step over the threshold? (then the first calls are worth scanning) */
static int any_outlier(const struct rules_ctx *c, const struct outliers *u)
{
    for (size_t i = 0; i < c->n_steps; i++)
        if ((double)rules_step_time(&c->steps[i], u->own) > u->thr)
            return 1;
    return 0;
}

static gp_status find_outliers(const struct rules_ctx *c, struct rules_out *o, struct outliers *u,
                               const int64_t bd_med[GP_BD_COUNT], const struct rules_first_calls *f)
{
    for (size_t i = 0; i < c->n_steps; i++) {
        const gp_step *s = &c->steps[i];
        int64_t d = rules_step_time(s, u->own);
        if ((double)d <= u->thr)
            continue;
        if (first_time(f, u, i, d - u->med)) {
            GP_TRY(outlier_row(c, o, s, d, u->med, "first calls"));
            continue;
        }
        u->at[u->n++] = i;
        u->excess += d - u->med;
        int64_t lw = s->bd[GP_BD_DATALOADER] - bd_med[GP_BD_DATALOADER];
        u->loader_excess += lw > 0 ? lw : 0;
        GP_TRY(outlier_row(c, o, s, d, u->med, grew_most(s, bd_med)));
    }
    return GP_OK;
}

gp_status rules_step_outliers(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int64_t med[2], bd_med[GP_BD_COUNT];
    struct outliers u = {.own = rules_step_waits_known(c)};
    if ((double)c->n_steps < p[MIN_STEPS])
        return rules_summary(o, "%zu analysed steps, fewer than %.0f: not applicable", c->n_steps,
                             p[MIN_STEPS]);
    GP_TRY(medians(c, u.own, med, bd_med));
    u.med = med[0];
    u.thr = threshold(p, med);
    u.at = malloc(c->n_steps * sizeof(*u.at));
    if (!u.at)
        return GP_ENOMEM;
    rules_cols(o, 5, cols);
    struct rules_first_calls f = {0};
    gp_status rc = u.own ? waited_only(c, p, &u) : GP_OK;
    if (rc == GP_OK && any_outlier(c, &u))
        rc = rules_first_calls_scan(c, &f);
    if (rc == GP_OK)
        rc = find_outliers(c, o, &u, bd_med, &f);
    if (rc == GP_OK)
        rc = judge(c, p, o, &u);
    rules_first_calls_release(&f);
    free(u.at);
    return rc;
}
