/* GT01 dataloader_starvation: the share of step time spent waiting for the next batch
 * (DataLoader category of the priority sweep). Anchors: tb_plugin R1 (5 %), XProf input-bound
 * 5/20 %, Composer (>= 1 ms). The knob: `--workers N` for our trainer, num_workers for PyTorch,
 * with N from the measured load and compute times. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT, MIN_WAIT_MS, MIN_WAIT_TRAINER_MS, HEADROOM, KEEPUP_SERIAL };
static const gp_rule_param params[] = {
        {"warn_pct", 5, "loader wait share of step time (tb_plugin R1, XProf moderate)"},
        {"crit_pct", 20, "loader wait share for crit (XProf highly input-bound)"},
        {"min_wait_ms", 1, "mean wait per step below this never fires (Composer)"},
        {"min_wait_trainer_ms", 0.05,
         "the same floor for our trainer, whose iterator costs nothing: a 0.5 ms wait in a 1.1 ms "
         "step is starvation, not Python overhead"},
        {"headroom", 1.25, "loader capacity asked for, relative to the compute time"},
        {"keepup_serial", 0.5,
         "share of a batch's load that stays on the training thread's core where a loader thread "
         "keeps up and a core is free, times the loader's idle share (ours: on a quiet 2-core VM, "
         "IDX --workers 0 to 1 gained 7.7% of a 15.4% wait)"},
};
RULES_INFO(dataloader_starvation, "GT01", "data-loader starvation", 0,
           RULES_READS_CPU | RULES_HOST_TIMED);

static const gp_evidence_col cols[] = {{"step", GP_UNIT_TEXT},
                                       {"step time", GP_UNIT_US},
                                       {"loader wait", GP_UNIT_US},
                                       {"wait share", GP_UNIT_PCT}};

struct key {
    int64_t wait, ts;
    size_t i;
};

static int cmp_key(const void *pa, const void *pb)
{
    const struct key *a = pa, *b = pb;
    if (a->wait != b->wait)
        return a->wait > b->wait ? -1 : 1;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

/* The loader waits of step `s` (its DataLoader events: the time the metric counted), or the
 * whole step where the trace has no such event inside it. */
static gp_status wait_ranges(const struct rules_ctx *c, const gp_step *s, const char *name,
                             struct rules_out *o)
{
    const char *label = rules_strf(o, "%s: loader wait", name);
    int n = 0;
    if (s->event != GP_NONE) {
        size_t n_tracks;
        const gp_track *tr = &gp_trace_tracks(c->t, &n_tracks)[c->ev[s->event].track];
        for (uint32_t i = s->event + 1;
             i < tr->first + tr->count && c->ev[i].ts < s->host_end && n < 4; i++)
            if (c->ev[i].flags & GP_EVF_DATALOADER) {
                GP_TRY(rules_range(o, c->ev[i].ts, c->ev[i].ts + c->ev[i].dur, label));
                n++;
            }
    }
    return n ? GP_OK : rules_range(o, s->ts, s->end, label);
}

static gp_status worst_steps(const struct rules_ctx *c, struct rules_out *o)
{
    struct key *k = malloc(c->n_steps * sizeof(*k));
    if (!k)
        return GP_ENOMEM;
    for (size_t i = 0; i < c->n_steps; i++)
        k[i] = (struct key){c->steps[i].bd[GP_BD_DATALOADER], c->steps[i].ts, i};
    qsort(k, c->n_steps, sizeof(*k), cmp_key);
    gp_status rc = GP_OK;
    for (size_t i = 0; i < c->n_steps && i < 5 && rc == GP_OK; i++) {
        const gp_step *s = &c->steps[k[i].i];
        int64_t len = s->end - s->ts, w = k[i].wait;
        const char *name = rules_ev_name(c, s->event);
        rc = rules_row(o, (gp_cell[]){{0, name},
                                      {(double)len / 1e3, NULL},
                                      {(double)w / 1e3, NULL},
                                      {len ? 100.0 * (double)w / (double)len : 0, NULL}});
        if (rc == GP_OK)
            rc = wait_ranges(c, s, name, o);
    }
    free(k);
    return rc;
}

/* Loader threads needed to produce a batch per `compute_ns`: each of `workers` threads now
 * takes `load_ns` per batch (with 0 workers the training thread loads, one batch per wait). */
static long workers_needed(double load_ns, double compute_ns, double headroom)
{
    double need = ceil(headroom * load_ns / (compute_ns > 1e3 ? compute_ns : 1e3));
    return need < 1 ? 1 : (long)need;
}

/* Does the trace name PyTorch's single-process iterator (num_workers=0)? */
static int single_process(const struct rules_ctx *c)
{
    return rules_loader_iter(c, "_SingleProcessDataLoaderIter");
}

/* The loader threads to ask for, and what they would do to the step. */
struct plan {
    long workers;      /* the knob's value */
    long need;         /* threads that would keep the step compute-bound */
    double load_ns;    /* one batch's load time on one loader thread */
    double compute_ns; /* the step without its wait */
    int capped;        /* the cores limited workers below need */
    double slow;       /* how much slower each thread runs with the workers asked for (>= 1) */
    double run_now;    /* the training thread's share of a core while it could run; 0 unknown */
    double run_after;  /* ...with the workers asked for */
    double step_ns;    /* the step now */
    double serial;     /* share of a batch's load still taken from the training thread's core */
    double others;     /* cores other processes kept busy; -1 unknown */
    double free_step;  /* the step with the workers asked for, each on a core of its own; 0 unknown
                        */
};

/* The step with p->workers loader threads: the slower of training and loading, each thread
 * delivering a batch per load_ns. Where the cores cap the threads, loading still sets the pace
 * and the gain is only part of the wait (a 2-core VM: 1.2 ms loads against 0.54 ms of training
 * gave one loader thread 32%, not the 69% "if the loader kept up"). */
static double step_after(const struct plan *p)
{
    double loading = p->workers > 0 ? p->load_ns / (double)p->workers : p->load_ns;
    double training = p->compute_ns + p->serial * p->load_ns;
    return (loading > training ? loading : training) * p->slow;
}

/* The trainer's CPU accounting on the CPU backend: the training thread's share of a core while
 * it could run (its CPU time over its steps' wall time less the waits it slept in), and from it
 * the share each thread gets with `w_new` loader threads. The others' runnable threads are
 * what makes the measured share fair (cores / (others + ours)); a thread that ran 90% of the
 * time and more met no lasting load (GT19 fires at 10%): the machine's background took 6% from
 * one quiet run, and counting it as a busy thread predicted 7% where --workers 1 gained 33%. Loader
 * threads need a free core to add to the step's pace: with both cores busy (two busy loops on 2
 * cores) a loader thread runs at half a core and so does the training thread, and the 38-42% "if
 * the loader kept up" became 9-18% measured. */
static void core_shares(const struct rules_ctx *c, long w_new, struct plan *pl)
{
    const struct rules_cfg *g = &c->cfg;
    pl->slow = 1;
    if (g->step_wall <= 0 || rules_count(g->rc.cpu_count) <= 0 || !g->rc.device ||
        strcmp(g->rc.device, "cpu") != 0)
        return; /* on a GPU the training thread waits for the device too */
    long w = rules_count(g->rc.workers),
         blas = rules_count(g->rc.blas_threads) > 1 ? rules_count(g->rc.blas_threads) - 1 : 0;
    double blocked =
            w > 0 && c->step_ns > 0
                    ? (double)g->step_wall * (double)c->bd[GP_BD_DATALOADER] / (double)c->step_ns
                    : 0;
    double runnable = (double)g->step_wall - blocked;
    if (g->train_runq >= 0) /* the scheduler's word: CPU time over CPU time plus run-queue time */
        runnable = (double)g->step_cpu +
                   (double)g->train_runq * (double)g->step_wall / (double)g->loop_wall;
    if (runnable <= 0)
        return;
    double cores = (double)rules_count(g->rc.cpu_count), n0 = (double)(1 + w + blas),
           n1 = (double)(1 + w_new + blas);
    pl->run_now = fmin(1.0, (double)g->step_cpu / runnable);
    double others = pl->run_now < 0.9 ? fmax(0, cores / pl->run_now - n0) : 0;
    pl->run_after = fmin(1.0, cores / (others + n1));
    pl->slow = pl->run_after < pl->run_now ? pl->run_now / pl->run_after : 1;
}

/* The share of each batch's load that the loader threads would still take from the training
 * thread's core on the CPU backend. A loader thread that keeps up sleeps between batches and is
 * woken by the training thread taking one, next to it: on a quiet 2-core VM (other processes
 * 0.03 cores) IDX with --workers 1 had the training thread wait for a core 257 us a step, more
 * than the 139 us load it moved, and gained 7.7% where "if the loader kept up" said 15.4%.
 * What the other processes leave free of the cores takes the rest (the trace's other_cpu over
 * the loop); with none free it all stays (the same case at load 15, others 1.0 core: 2.8%
 * slower). A loader that cannot keep up never sleeps and holds a core of its own (PNG, quiet:
 * 28.4% predicted, 26.7% measured). */
static double serial_share(const struct rules_ctx *c, const double *p, const struct plan *pl,
                           double others)
{
    const struct rules_cfg *g = &c->cfg;
    double loading = pl->load_ns / (double)pl->workers;
    if (rules_count(g->rc.workers) >
        0) /* the loader threads' hand-off is in the measured step already */
        return 0;
    if (loading >= pl->compute_ns || rules_count(g->rc.cpu_count) <= 0 || !g->rc.device ||
        strcmp(g->rc.device, "cpu") != 0)
        return 0;
    long blas = rules_count(g->rc.blas_threads) > 1 ? rules_count(g->rc.blas_threads) - 1 : 0;
    double spare = (double)(rules_count(g->rc.cpu_count) - 1 - blas) - (others > 0 ? others : 0);
    double need = pl->load_ns / (pl->compute_ns > 1e3 ? pl->compute_ns : 1e3);
    double fits = spare <= 0 ? 0 : fmin(1.0, spare / need);
    /* the share is of a loader that sleeps between batches; one busy nearly all the step is
     * seldom woken beside the training thread, so it fades with the loader's idle share (a
     * PNG batch's 6.6 ms load against 6.7 ms of training read 25%, where loads just over the
     * training read 48-50% in four other runs; --workers 1 measured 41 +- 5% there) */
    double idle = 1 - loading / pl->compute_ns;
    return 1 - (1 - p[KEEPUP_SERIAL] * idle) * fits;
}

/* The step where nothing else holds the cores: the loader threads each on a free core; 0 where
 * the machine has too few cores for that. */
static double step_free(const struct rules_ctx *c, const double *p, const struct plan *pl)
{
    const struct rules_cfg *g = &c->cfg;
    long blas = rules_count(g->rc.blas_threads) > 1 ? rules_count(g->rc.blas_threads) - 1 : 0;
    if (1 + pl->workers + blas > rules_count(g->rc.cpu_count))
        return 0;
    struct plan f = *pl;
    f.slow = 1;
    f.serial = serial_share(c, p, pl, 0);
    return step_after(&f);
}

static struct plan plan_trainer(const struct rules_ctx *c, const double *p, double wait,
                                double step)
{
    const struct rules_cfg *g = &c->cfg;
    long w = rules_count(g->rc.workers);
    struct plan pl = {
            .load_ns = w ? (double)w * step : wait, .compute_ns = step - wait, .step_ns = step};
    long cap = rules_count(g->rc.cpu_count) > 1 ? rules_count(g->rc.cpu_count) - 1 : 0;
    pl.need = workers_needed(pl.load_ns, pl.compute_ns, p[HEADROOM]);
    pl.workers = cap && pl.need > cap ? cap : pl.need;
    if (pl.workers <= w)
        pl.workers = w + 1;
    pl.capped = pl.workers < pl.need;
    core_shares(c, pl.workers, &pl);
    pl.others = g->other_cpu >= 0 && g->loop_wall > 0 ? (double)g->other_cpu / (double)g->loop_wall
                                                      : -1;
    pl.serial = serial_share(c, p, &pl, pl.others);
    pl.free_step = step_free(c, p, &pl);
    return pl;
}

/* More loader threads would not shorten the step: the cores are busy (GT19 says with what). The
 * finding is then info: its fix gains nothing while the load stands (IDX with one loader thread
 * at load 14-23, nothing wrong on a quiet host: warn for a gain of 0% where GT19, 9.4%, stayed
 * just under its threshold). */
static gp_status knob_busy_cores(const struct rules_ctx *c, const struct plan *pl,
                                 struct rules_out *o)
{
    rules_fire(o, GP_SEV_INFO, o->f.threshold);
    GP_TRY(rules_knob(o, "free the cores first (GT19), then --workers %ld", pl->workers));
    return rules_reco(
            o,
            "More loader threads would not help now: the training thread ran %.0f%% "
            "of the time it could, and with --workers %ld each thread would get "
            "about %.0f%% of a core. Free the cores (GT19 names what took them), then "
            "--workers %ld%s.",
            100 * pl->run_now, pl->workers, 100 * pl->run_after, pl->workers,
            rules_count(c->cfg.rc.cpu_count) > 0
                    ? rules_strf(o, " on this %ld-core machine", rules_count(c->cfg.rc.cpu_count))
                    : "");
}

static gp_status knob_trainer(const struct rules_ctx *c, const struct plan *pl, struct rules_out *o)
{
    if (pl->slow > 1.01 && step_after(pl) >= pl->step_ns)
        return knob_busy_cores(c, pl, o);
    char a[32], b[32];
    const struct rules_cfg *g = &c->cfg;
    const char *pin =
            g->rc.device && strcmp(g->rc.device, "cuda") == 0 && g->rc.pin_memory == GP_CFG_OFF
                    ? " Add --pin-memory so batches are copied from pinned buffers."
                    : "";
    const char *what = g->rc.device && strcmp(g->rc.device, "cpu") == 0 ? "model" : "GPU";
    const char *outcome =
            pl->capped ? rules_strf(o,
                                    "--workers %ld would keep the %s fed, but that is more than "
                                    "all but one core: --workers %ld shortens the wait without "
                                    "ending it; decode less per sample (the IDX dataset instead "
                                    "of PNG files) to go further.",
                                    pl->need, what, pl->workers)
                       : rules_strf(o, "--workers %ld keeps the %s fed.", pl->workers, what);
    GP_TRY(rules_knob(o, "--workers %ld", pl->workers));
    return rules_reco(o,
                      "--workers %ld: you ran --workers %ld%s; a batch takes %s to load per "
                      "loader thread and %s to train on, so %s%s",
                      pl->workers, rules_count(g->rc.workers),
                      rules_count(g->rc.cpu_count) > 0 ? rules_strf(o, " on a %ld-core machine",
                                                                    rules_count(g->rc.cpu_count))
                                                       : "",
                      rules_fmt_ns(a, sizeof(a), (int64_t)pl->load_ns),
                      rules_fmt_ns(b, sizeof(b), (int64_t)pl->compute_ns), outcome, pin);
}

/* num_workers to ask for: what the load and compute times need, at most all but one of the
 * cores the trace reports. @return it; *capped set when the cores limited it. */
static long pytorch_workers(const struct rules_ctx *c, double need, int *capped)
{
    long cores = rules_count(c->cfg.rc.cpu_count), cap = cores > 2 ? cores - 1 : 1;
    *capped = cores > 0 && need > cap;
    return *capped ? cap : (long)need;
}

/* PyTorch's single-process iterator: the wait is one batch's load in the training process. */
static struct plan plan_pytorch(const struct rules_ctx *c, const double *p, double wait,
                                double step)
{
    struct plan pl = {.load_ns = wait, .compute_ns = step - wait, .slow = 1, .others = -1};
    pl.need = workers_needed(wait, step - wait, p[HEADROOM]);
    pl.workers = pytorch_workers(c, pl.need < 2 ? 2 : pl.need, &pl.capped);
    return pl;
}

static gp_status knob_pytorch(const struct rules_ctx *c, const struct plan *pl, struct rules_out *o)
{
    const char *gpu_pin = c->has_gpu ? ", pin_memory=True" : "";
    const char *gpu_move = c->has_gpu ? " to the GPU or" : "";
    if (!pl) {
        GP_TRY(rules_knob(o, "DataLoader(num_workers=..., prefetch_factor=...)"));
        return rules_reco(o,
                          "Increase DataLoader num_workers and prefetch_factor%s, set "
                          "persistent_workers=True; move decoding/augmentation%s offline.",
                          c->has_gpu ? ", set pin_memory=True" : "", gpu_move);
    }
    long cores = rules_count(c->cfg.rc.cpu_count);
    const char *why = pl->capped
                              ? rules_strf(o,
                                           " (%ld would keep up, but this machine has %ld cores: "
                                           "leave one to the training loop)",
                                           pl->need, cores)
                      : cores > 0 ? rules_strf(o, " (this machine has %ld cores)", cores)
                                  : " (the trace does not say how many cores the machine has: keep "
                                    "num_workers below that)";
    GP_TRY(rules_knob(o, "DataLoader(num_workers=%ld%s, persistent_workers=True)", pl->workers,
                      gpu_pin));
    return rules_reco(o,
                      "The batches are loaded in the training process "
                      "(_SingleProcessDataLoaderIter: num_workers=0). Set num_workers=%ld on the "
                      "DataLoader%s, with persistent_workers=True%s; move decoding/augmentation"
                      "%s offline if the workers cannot keep up.",
                      pl->workers, why, c->has_gpu ? " and pin_memory=True" : "", gpu_move);
}

/* The gain of the knob: the whole wait where the threads asked for keep up (or where the trace
 * cannot say how many would: PyTorch's worker processes), else the part they remove. */
/* The gain where the loader threads each find a free core, for a prediction that the busy cores
 * hold down; "" where that is no more. */
static const char *free_core_gain(const struct plan *pl, const char *lead, struct rules_out *o)
{
    double gain = pl->step_ns - pl->free_step;
    if (pl->free_step <= 0 || gain <= 0.005 * pl->step_ns || pl->free_step >= step_after(pl))
        return "";
    return rules_strf(o, "%s about %.0f%% of the step", lead, 100 * gain / pl->step_ns);
}

/* What the trace says of the free core a loader thread that keeps up needs. */
static const char *serial_note(const struct rules_ctx *c, const struct plan *pl,
                               struct rules_out *o)
{
    char busy[64] = "";
    if (pl->others >= 0)
        snprintf(busy, sizeof(busy), " (other processes kept %.1f of %ld cores busy)", pl->others,
                 rules_count(c->cfg.rc.cpu_count));
    double share = 100 * pl->serial;
    if (pl->serial > 0.9)
        return rules_strf(o,
                          "; no free core%s: a loader thread would run beside the training "
                          "thread and take about %.0f%% of each batch's load from its core, so "
                          "the gain needs a free core%s",
                          busy, share, free_core_gain(pl, ": with one,", o));
    return rules_strf(o,
                      "; needs a free core for the loader thread%s, and even then a loader "
                      "thread woken for each batch takes about %.0f%% of its load from the "
                      "training thread's core; with no core free it gains nothing",
                      busy, share);
}

/* What the prediction assumes of the cores, from what the trace says of them. */
static const char *cores_note(const struct rules_ctx *c, const struct plan *pl, struct rules_out *o)
{
    const struct rules_cfg *g = &c->cfg;
    if (pl && pl->slow > 1.01)
        return rules_strf(o,
                          "; the cores are busy: the training thread ran %.0f%% of the time it "
                          "could, and with %ld loader thread%s each thread would get about "
                          "%.0f%% of a core%s",
                          100 * pl->run_now, pl->workers, pl->workers == 1 ? "" : "s",
                          100 * pl->run_after, free_core_gain(pl, "; with the cores free,", o));
    if (pl && pl->serial > 0)
        return serial_note(c, pl, o);
    if (pl && pl->run_now > 0 && g->other_cpu >= 0 &&
        (double)g->other_cpu / (double)g->loop_wall > 0.5)
        return rules_strf(o,
                          "; assumes the loader threads find a free core (other processes kept "
                          "%.1f of %ld cores busy, without slowing the training thread)",
                          (double)g->other_cpu / (double)g->loop_wall,
                          rules_count(g->rc.cpu_count));
    if (pl && pl->run_now > 0)
        return "";
    return "; assumes a free core for each loader thread (the trace does not say how busy the "
           "cores were)";
}

/* Why the step would not drop by the whole wait. */
static const char *gain_reason(const struct plan *pl)
{
    if (pl->serial > 0 && pl->load_ns / (double)pl->workers < pl->compute_ns)
        return "part of each batch's load would still take the training thread's core";
    return pl->slow > 1.01 && step_after(pl) / pl->slow <= pl->compute_ns
                   ? "its threads would share the busy cores"
                   : "loading, not training, would still set its pace";
}

static gp_status predict_gain(const struct rules_ctx *c, const struct plan *pl, double wait,
                              double step, struct rules_out *o)
{
    char a[32], b[32];
    double after = pl ? step_after(pl) : step - wait;
    rules_fmt_ns(a, sizeof(a), (int64_t)step);
    rules_fmt_ns(b, sizeof(b), (int64_t)after);
    const char *note = cores_note(c, pl, o);
    if (after <= step - wait)
        return rules_gain(o, c->bd[GP_BD_DATALOADER], (int64_t)wait,
                          "if the loader kept up, the step would drop from %s to %s%s", a, b, note);
    double gain = after < step ? step - after : 0;
    if (gain == 0)
        return rules_gain(o, 0, 0,
                          "with %ld loader thread%s the step would not get shorter (%s now, about "
                          "%s)%s",
                          pl->workers, pl->workers == 1 ? "" : "s", a, b, note);
    return rules_gain(o, (int64_t)((double)c->bd[GP_BD_DATALOADER] * gain / wait), (int64_t)gain,
                      "with %ld loader thread%s the step would drop from %s to %s: %s%s",
                      pl->workers, pl->workers == 1 ? "" : "s", a, b, gain_reason(pl), note);
}

gp_status rules_dataloader_starvation(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32];
    if (c->n_steps == 0)
        return rules_summary(o, "no steps to measure");
    double wait = rules_per_step(c, (double)c->bd[GP_BD_DATALOADER]);
    double step = rules_per_step(c, (double)c->step_ns);
    double r = rules_pct_of_steps(c, c->bd[GP_BD_DATALOADER]);
    rules_measure(o, "loader_wait_share", GP_UNIT_PCT, r, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (wait < (c->cfg.rc.trainer ? p[MIN_WAIT_TRAINER_MS] : p[MIN_WAIT_MS]) * 1e6)
        rules_fire(o, GP_SEV_OK, p[WARN_PCT]);
    GP_TRY(rules_summary(o, "%.1f%% of step time waits for the next batch (%s per step)", r,
                         rules_fmt_ns(a, sizeof(a), (int64_t)wait)));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    rules_cols(o, 4, cols);
    GP_TRY(worst_steps(c, o));
    if (rules_count(c->cfg.rc.workers) >
        0) /* loader threads waiting for a core make the steps wait longer */
        o->cause.needs = RULES_WAIT_INFLATED;
    struct plan pl;
    const struct plan *planned = NULL;
    if (c->cfg.rc.trainer)
        pl = plan_trainer(c, p, wait, step), planned = &pl;
    else if (single_process(c))
        pl = plan_pytorch(c, p, wait, step), planned = &pl;
    GP_TRY(predict_gain(c, planned, wait, step, o));
    return c->cfg.rc.trainer ? knob_trainer(c, planned, o) : knob_pytorch(c, planned, o);
}
