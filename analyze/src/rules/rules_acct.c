/* What the CPU accounting (the trainer's "gprof" header: its threads' CPU and run-queue times
 * over the loop; libprof's step args: the stepping thread's, per step) says about the cores: read
 * by GT19 (its measure) and by the rules whose measure a wait for a core inflates (GT14, and
 * rules_explain.c through GT19's cause). */
#include "rules/rules_int.h"

#include <string.h>

int rules_step_waits_known(const struct rules_ctx *c)
{
    for (size_t i = 0; i < c->n_steps; i++)
        if (c->steps[i].runq_ns < 0)
            return 0;
    return c->n_steps > 0;
}

int rules_steps_stolen(const struct rules_ctx *c)
{
    for (size_t i = 0; i < c->n_steps; i++)
        if (c->steps[i].steal_ns > 0)
            return 1;
    return 0;
}

/* The stepping thread's run-queue time over the analysed steps' host time (libprof's step
 * args), %. */
static double step_wait_share(const struct rules_ctx *c)
{
    int64_t runq = 0, wall = 0;
    for (size_t i = 0; i < c->n_steps; i++) {
        runq += c->steps[i].runq_ns;
        wall += c->steps[i].host_end - c->steps[i].host_ts;
    }
    return wall > 0 ? 100.0 * (double)runq / (double)wall : 0;
}

/* The training thread's wait for a core: from the scheduler (schedstat's run-queue time: over
 * the trainer's loop where it says, which counts the waits between the steps' ranges too, on
 * this VM's kernel most of them: a thread is taken off its core at its system calls, and the
 * trainer's are at the step boundaries (three busy loops: 53% over the loop, 25% inside the
 * steps); else in each analysed step, where libprof's step args have it), else on the CPU backend
 * its steps' wall time less its CPU time and less the batch waits it slept in (a thread blocked in
 * I/O counts as waiting there: the trainer's traces since schedstat have the first). */
struct rules_acct rules_read_acct(const struct rules_ctx *c)
{
    const struct rules_cfg *g = &c->cfg;
    struct rules_acct a = {.loader_run = -1, .other_cores = -1};
    long w = rules_count(g->rc.workers);
    a.threads =
            1 + w + (rules_count(g->rc.blas_threads) > 1 ? rules_count(g->rc.blas_threads) - 1 : 0);
    if (g->other_cpu >= 0)
        a.other_cores = (double)g->other_cpu / (double)g->loop_wall;
    if (g->train_runq >= 0 && w > 0 && g->loader_cpu > 0)
        a.loader_run = (double)g->loader_cpu / (double)(g->loader_cpu + g->loader_runq);
    a.per_step = rules_step_waits_known(c);
    if (g->train_runq >= 0) { /* the loop's: waits between the steps' ranges count too */
        a.known = 1;
        a.wait_share = 100.0 * (double)g->train_runq / (double)g->loop_wall;
        return a;
    }
    if (a.per_step) {
        a.known = 1;
        a.wait_share = step_wait_share(c);
        return a;
    }
    if (g->step_wall <= 0 || !g->rc.device || strcmp(g->rc.device, "cpu") != 0)
        return a; /* on a GPU the training thread also blocks in syncs */
    double blocked =
            w > 0 && c->step_ns > 0
                    ? (double)g->step_wall * (double)c->bd[GP_BD_DATALOADER] / (double)c->step_ns
                    : 0;
    double wait = (double)(g->step_wall - g->step_cpu) - blocked;
    a.known = 1;
    a.wait_share = wait > 0 ? 100.0 * wait / (double)g->step_wall : 0;
    return a;
}

/* The share of step time the wait for a core can account for, as rules_explain.c reads it: the
 * training thread's own wait, plus the steps' waits for a batch in the share the loader threads
 * spent runnable without a core (two busy loops beside 2 loader threads: the training thread
 * waited 38%, the loader threads 59% of their time and the steps 21% for a batch, 50% in all;
 * the step outliers were 46% of step time, most of them loader waits). 0 where unmeasured. */
double rules_wait_lost_pct(const struct rules_ctx *c, const struct rules_acct *a)
{
    if (!a->known)
        return 0;
    double loader = a->loader_run >= 0 && c->step_ns > 0
                            ? 100.0 * (double)c->bd[GP_BD_DATALOADER] / (double)c->step_ns *
                                      (1 - a->loader_run)
                            : 0;
    return a->wait_share + loader;
}
