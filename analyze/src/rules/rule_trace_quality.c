/* GT00 trace_quality: is the analysis trustworthy? Too few steps, no ProfilerStep markers, GPU
 * activity with no launch correlation, an unfinished or truncated file, the profiler's warnings,
 * records it dropped, and from libprof's capture-health ledger GPU records with impossible times
 * and the profiler's own cost, and start-up work where no warm-up step was left out
 * (rules_startup.h). Info; warn when start-up is most of the analysed time (the other findings
 * that judge time are then info); crit when more than crit_dropped_pct of the CPU ranges or of
 * the GPU activity was dropped (anchors: Composer's >= 10 data points, XProf's "No step time
 * measured"; the 1% and the 50% are ours). */
#include "rules/rules_int.h"
#include "rules/rules_startup.h"

#include "gp/run_config.h"
#include "gp/trace_schema.h"

#include <math.h>
#include <string.h>

enum { MIN_STEPS, MAX_UNCORRELATED_PCT, CRIT_DROPPED_PCT, MAX_PROFILER_COST_PCT };
static const gp_rule_param params[] = {
        {"min_steps", 10, "fewer analysed steps than this is flagged (Composer: 10 data points)"},
        {"max_uncorrelated_pct", 5, "GPU activities without a launch call above this share"},
        {"crit_dropped_pct", 1,
         "crit when the profiler dropped more than this share of CPU or GPU "
         "records"},
        {"max_profiler_cost_pct", 5,
         "libprof's own cost in the program's threads (its capture-health ledger) above this "
         "share of the trace's span"},
};
RULES_INFO(trace_quality, "GT00", "trace quality", 0, 0);

static const gp_evidence_col cols[] = {{"problem", GP_UNIT_TEXT}, {"effect", GP_UNIT_TEXT}};

static gp_status problem(struct rules_out *o, int *n, const char *what, const char *effect)
{
    (*n)++;
    return rules_row(o, (gp_cell[]){{0, what}, {0, effect}});
}

/* Share of GPU activities that no runtime call launched (HTA drops those). */
static double uncorrelated_pct(const struct rules_ctx *c, uint64_t *n_gpu)
{
    size_t nd, nl;
    const gp_device_stats *d = gp_analysis_devices(c->a, &nd);
    gp_analysis_launches(c->a, &nl);
    *n_gpu = 0;
    for (size_t i = 0; i < nd; i++)
        *n_gpu += d[i].n_kernels + d[i].n_memcpy + d[i].n_memset;
    if (*n_gpu == 0)
        return 0.0;
    return nl >= *n_gpu ? 0.0 : 100.0 * (double)(*n_gpu - nl) / (double)*n_gpu;
}

/* Rows for the records the profiler dropped, by kind. @return the larger dropped share (%). */
static gp_status dropped(const struct rules_ctx *c, struct rules_out *o, int *n, double *worst)
{
    const gp_trace_quality *q = gp_trace_get_quality(c->t);
    double cpu = gp_trace_dropped_pct(q->dropped_cpu, q->n_cpu);
    double gpu = gp_trace_dropped_pct(q->dropped_gpu, q->n_gpu);
    *worst = cpu > gpu ? cpu : gpu;
    if (q->dropped_cpu)
        GP_TRY(problem(o, n,
                       rules_strf(o, "%llu CPU records dropped (%.1f%%)",
                                  (unsigned long long)q->dropped_cpu, cpu),
                       "CPU ranges are missing (the record buffers reached their limit): CPU "
                       "times and step metrics are low bounds"));
    if (q->dropped_gpu)
        GP_TRY(problem(o, n,
                       rules_strf(o, "%llu GPU records dropped (%.1f%%)",
                                  (unsigned long long)q->dropped_gpu, gpu),
                       "GPU activity is missing: device times and utilisation are low bounds"));
    if (q->dropped_other)
        GP_TRY(problem(o, n,
                       rules_strf(o, "%llu records dropped", (unsigned long long)q->dropped_other),
                       "events are missing: time-based metrics are low bounds"));
    return GP_OK;
}

/* The profiler's own warnings, an unfinished file, GPU activity that was not recorded. */
static gp_status capture(const struct rules_ctx *c, struct rules_out *o, int *n)
{
    const gp_trace_quality *q = gp_trace_get_quality(c->t);
    for (size_t i = 0; i < q->n_warnings; i++)
        if (!strstr(q->warnings[i], "record(s) dropped")) /* a row of dropped() already */
            GP_TRY(problem(o, n, "profiler warning", q->warnings[i]));
    if (q->incomplete)
        GP_TRY(problem(o, n, "the trace was not finished",
                       "the program ended early (killed or crashed): its last moments are "
                       "missing"));
    const char *g = c->cfg.rc.gpu_status;
    int cuda = c->cfg.rc.device && strcmp(c->cfg.rc.device, "cuda") == 0;
    /* "simulated": a simulated device's records (tests/simdev), as "recorded" */
    int got = g && (strncmp(g, "recorded", 8) == 0 || strncmp(g, "simulated", 9) == 0);
    if (g && cuda && !got)
        GP_TRY(problem(o, n, "GPU activity not recorded",
                       rules_strf(o, "%s: GPU rules cannot run", g)));
    else if (got && g[g[0] == 's' ? 9 : 8])
        GP_TRY(problem(o, n, "GPU activity recorded in part", g)); /* "recorded, except" */
    return GP_OK;
}

/* libprof's capture-health ledger: GPU records whose times cannot be, and a profiler that cost
 * the program a visible share of its time. */
static gp_status health(const struct rules_ctx *c, const double *p, struct rules_out *o, int *n)
{
    gp_run_config rc;
    gp_run_config_read(c->t, &rc);
    const gp_capture_health *h = &rc.health;
    if (!h->known)
        return GP_OK;
    int64_t bad = h->gpu_end_before_start + h->gpu_start_before_launch;
    if (bad)
        GP_TRY(problem(o, n,
                       rules_strf(o, "%lld GPU records with impossible times", (long long)bad),
                       rules_strf(o,
                                  "%lld end before they start, %lld start before their launch "
                                  "call: their durations and launch latencies are wrong",
                                  (long long)h->gpu_end_before_start,
                                  (long long)h->gpu_start_before_launch)));
    const gp_trace_info *in = gp_trace_get_info(c->t);
    int64_t span = in->ts_max - in->ts_min;
    double pct = span > 0 ? 100.0 * (double)h->profiler_cost_ns / (double)span : 0.0;
    if (pct > p[MAX_PROFILER_COST_PCT])
        GP_TRY(problem(o, n, rules_strf(o, "profiler cost %.1f%% of the span", pct),
                       "CPU times include the profiler's own (record_cost_ns a range, summed "
                       "over threads): record fewer, longer ranges"));
    return GP_OK;
}

/* Crit: what to do about the dropped records. */
static gp_status reco_dropped(const struct rules_ctx *c, struct rules_out *o)
{
    const gp_trace_quality *q = gp_trace_get_quality(c->t);
    double cpu = gp_trace_dropped_pct(q->dropped_cpu, q->n_cpu);
    double gpu = gp_trace_dropped_pct(q->dropped_gpu, q->n_gpu);
    GP_TRY(rules_summary(o,
                         "the profiler dropped %.1f%% of the %s records: the analysis misses "
                         "part of the run",
                         cpu > gpu ? cpu : gpu, cpu > gpu ? "CPU" : "GPU"));
    if (cpu > gpu)
        return rules_reco(o, "Raise the profiler's record memory limit: gprof-train run "
                             "--buffer-limit 2G (or GP_PROF_BUFFER_LIMIT=2G), or profile fewer "
                             "steps.");
    return rules_reco(o, "Profile fewer steps (a shorter window) so the GPU activity buffers keep "
                         "up with the program.");
}

/* No ProfilerStep#N markers: the whole trace is one step. */
static int unmarked(const struct rules_ctx *c)
{
    return c->n_all_steps == 1 && c->steps[0].synthetic;
}

/* Too few steps, or none marked. Sets *few when so. */
static gp_status steps(const struct rules_ctx *c, const double *p, struct rules_out *o, int *n,
                       int *few)
{
    *few = 1;
    if (unmarked(c))
        return problem(o, n, "no ProfilerStep#N markers", "the whole trace is one step");
    if (c->n_steps && c->steps[0].inferred) {
        const char *how =
                c->steps[0].inferred == GP_STEPS_FROM_OPTIMIZER
                        ? rules_strf(o, "steps end where the optimizer's %zu steps end",
                                     c->n_all_steps)
                        : rules_strf(o,
                                     "%zu steps, where the host's launches repeat (every %zu "
                                     "launches)",
                                     c->n_all_steps, c->steps[0].period);
        gp_status rc = problem(o, n, "no ProfilerStep#N markers",
                               rules_strf(o,
                                          "%s; the first, with all before it, is left out as "
                                          "warm-up",
                                          how));
        if (rc != GP_OK)
            return rc;
    }
    if ((double)c->n_steps < p[MIN_STEPS])
        return problem(
                o, n,
                rules_strf(o, "only %zu steps analysed (first dropped as warm-up)", c->n_steps),
                "step statistics and outliers are approximate");
    *few = 0;
    return GP_OK;
}

/* Start-up work in the analysed steps (rules_startup.h). @return its share (%). */
static gp_status startup(const struct rules_ctx *c, struct rules_out *o, int *n, double *pct)
{
    const struct rules_startup *s = &c->startup;
    *pct = rules_startup_pct(c);
    if (*pct < RULES_STARTUP_NOTE_PCT)
        return GP_OK;
    char a[32], b[32];
    return problem(o, n, rules_strf(o, "start-up work %.0f%% of the analysed time", *pct),
                   rules_strf(o,
                              "no warm-up step was left out, and first calls took far longer than "
                              "their later ones (%s: %s, later %s): one-time work (%slibrary "
                              "handles, lazy loading, algorithm searches); shares of time "
                              "include it",
                              gp_trace_str(c->t, s->name), rules_fmt_ns(a, sizeof(a), s->first),
                              rules_fmt_ns(b, sizeof(b), s->later),
                              c->has_gpu ? "the CUDA context, " : ""));
}

/* Info, for a program under libprof (not the trainer): how to record more steps. */
static gp_status reco_libprof(const struct rules_ctx *c, const double *p, struct rules_out *o)
{
    if (unmarked(c))
        return rules_reco(o,
                          "Mark each iteration as a step, so ProfilerStep#N ranges are "
                          "recorded: an NVTX range named ProfilerStep#N around it "
                          "(nvtxRangePushA, torch.cuda.nvtx.range), or gp_prof_step() where the "
                          "program links libprof. Profile at least %.0f steady-state steps; the "
                          "first recorded step is left out as warm-up.",
                          p[MIN_STEPS]);
    return rules_reco(o,
                      "Profile at least %.0f steady-state steps: a longer loop, or, where the "
                      "program links libprof, gp_prof_options.schedule with active=%.0f (the "
                      "first recorded step is left out as warm-up).",
                      p[MIN_STEPS], p[MIN_STEPS] + 1);
}

/* Info, where the steps were inferred and are enough: how to mark them. */
static gp_status reco_mark(const struct rules_ctx *c, struct rules_out *o)
{
    const char *how = c->steps[0].inferred == GP_STEPS_FROM_OPTIMIZER
                              ? "the optimizer's steps end"
                              : "the host's launches repeat";
    if (c->cfg.libprof)
        return rules_reco(o,
                          "Mark each iteration as a step: an NVTX range named ProfilerStep#N "
                          "around it (nvtxRangePushA, torch.cuda.nvtx.range), or gp_prof_step() "
                          "where the program links libprof. Here the steps were cut where %s, so "
                          "where each begins is inferred.",
                          how);
    return rules_reco(o,
                      "Call prof.step() at the end of every iteration, so ProfilerStep#N ranges "
                      "mark the steps. Here they were cut where %s, so where each begins is "
                      "inferred.",
                      how);
}

/* Info: the fix for the first problem the user can act on. */
static gp_status reco_info(const struct rules_ctx *c, const double *p, struct rules_out *o, int few)
{
    if (!few && gp_trace_get_quality(c->t)->incomplete)
        return rules_reco(o, "Let the program finish, or stop it with Ctrl-C or SIGTERM (which "
                             "finish the trace); a killed program keeps all but its last moments.");
    if (!few && c->n_steps && c->steps[0].inferred)
        return reco_mark(c, o);
    if (c->cfg.rc.trainer)
        return rules_reco(o,
                          "Profile at least %.0f steady-state steps: gprof-train run --steps "
                          "%.0f or more.",
                          p[MIN_STEPS], p[MIN_STEPS] + 2);
    if (c->cfg.libprof) /* `run -- CMD` or a program linking libprof: its own step marks */
        return reco_libprof(c, p, o);
    /* the first recorded step is dropped as warm-up: one more active step than analysed */
    return rules_reco(o,
                      "Profile at least %.0f steady-state steps with "
                      "torch.profiler.schedule(wait=1, warmup=1, active=%.0f) (the first "
                      "recorded step is left out as warm-up) and call prof.step() every "
                      "iteration, so ProfilerStep#N ranges are recorded.",
                      p[MIN_STEPS], p[MIN_STEPS] + 1);
}

/* Warn: the trace is mostly start-up. */
static gp_status warn_startup(const struct rules_ctx *c, const double *p, struct rules_out *o,
                              double pct)
{
    if (rules_startup_first_iteration(c)) { /* one iteration, its first: start-up throughout */
        if (pct >= RULES_STARTUP_NOTE_PCT)
            rules_measure(o, "startup_share", GP_UNIT_PCT, pct, ">=", RULES_STARTUP_NOTE_PCT,
                          INFINITY);
        else /* the trainer's first step alone: start-up, however little of it was found */
            rules_measure(o, "first_steps_analysed", GP_UNIT_COUNT, 1, ">=", 1, INFINITY);
        GP_TRY(rules_summary(o,
                             "the trace is start-up: one iteration (%s), its first, %.0f%% "
                             "of it first calls found far slower than their later ones; the "
                             "findings that judge time are info",
                             rules_startup_iteration(c), pct));
        return reco_info(c, p, o, 1);
    }
    rules_measure(o, "startup_share", GP_UNIT_PCT, pct, ">=", RULES_STARTUP_PCT, INFINITY);
    GP_TRY(rules_summary(o,
                         "the trace is mostly start-up: %.0f%% of the analysed time is first "
                         "calls far slower than their later ones, not training steps; the "
                         "findings that judge time are info",
                         pct));
    return reco_info(c, p, o, 1);
}

gp_status rules_trace_quality(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int n = 0, few;
    uint64_t n_gpu;
    double unc = uncorrelated_pct(c, &n_gpu), worst, start;
    rules_cols(o, 2, cols);
    rules_measure(o, "steps_analysed", GP_UNIT_COUNT, (double)c->n_steps, "<", 0, 0);
    o->f.threshold = p[MIN_STEPS];
    GP_TRY(steps(c, p, o, &n, &few));
    GP_TRY(startup(c, o, &n, &start));
    if (unc > p[MAX_UNCORRELATED_PCT])
        GP_TRY(problem(o, &n, rules_strf(o, "%.1f%% of GPU activities have no launch call", unc),
                       "launch, copy and sync rules miss them"));
    GP_TRY(dropped(c, o, &n, &worst));
    GP_TRY(capture(c, o, &n));
    GP_TRY(health(c, p, o, &n));
    if (n == 0)
        return rules_summary(o,
                             "%zu steps analysed of %zu, %llu GPU activities, %.1f%% without "
                             "a launch call",
                             c->n_steps, c->n_all_steps, (unsigned long long)n_gpu, unc);
    if (worst > p[CRIT_DROPPED_PCT]) {
        rules_measure(o, "dropped_records", GP_UNIT_PCT, worst, ">=", p[CRIT_DROPPED_PCT],
                      p[CRIT_DROPPED_PCT]);
        rules_fire(o, GP_SEV_CRIT, p[CRIT_DROPPED_PCT]);
        return reco_dropped(c, o);
    }
    if (rules_startup_dominates(c))
        return warn_startup(c, p, o, start);
    rules_fire(o, GP_SEV_INFO, p[MIN_STEPS]);
    GP_TRY(rules_summary(o, "the analysis is limited by %d problem%s with this trace", n,
                         n > 1 ? "s" : ""));
    return reco_info(c, p, o, few);
}
