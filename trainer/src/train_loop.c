/* The training loop: one ProfilerStep per batch with the loader wait, H2D copy, forward,
 * backward and optimizer ranges inside it; evaluation on the test set after each epoch. */
#include "gp/prof.h"
#include "gp/trace_schema.h"
#include "train_int.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Counters are read back every step on the CPU (free) but only every STATS_EVERY steps on
 * CUDA, where reading is a host sync. */
#define STATS_EVERY 50

#ifdef GP_WITH_PROF
#    define STEP_BEGIN() gp_prof_step_begin()
#    define STEP_END()   gp_prof_step_end()
#else
#    define STEP_BEGIN() ((void)0)
#    define STEP_END()   ((void)0)
#endif

struct epoch_acc {
    double loss_sum, t0;
    long long correct, samples, steps, nb;
    long long seen0;     /* r->res->samples when the epoch began: samples fed since, per batch */
    long long pulled_at; /* e->steps when the counters were last read */
};

static gp_status pull_stats(struct train_run *r, struct epoch_acc *e, gp_error *err)
{
    struct step_stats s;
    GP_TRY(r->ops->read_stats(r->be, &s, err));
    e->loss_sum += s.loss_sum;
    e->correct += s.correct;
    e->samples += s.samples;
    r->last = s;
    e->pulled_at = e->steps;
    return GP_OK;
}

/* A progress report of `event` for the epoch so far. */
static void progress_init(gp_train_progress *p, gp_train_event event, const struct train_run *r,
                          const struct epoch_acc *e, int epoch)
{
    memset(p, 0, sizeof(*p));
    p->event = event;
    p->epoch = epoch + 1;
    p->epochs = r->cfg.epochs;
    p->step = e->steps;
    p->epoch_steps = e->nb;
    p->global_step = r->res->steps;
}

static void report_step(struct train_run *r, const struct epoch_acc *e, int epoch)
{
    if (!r->cfg.on_progress)
        return;
    gp_train_progress p;
    progress_init(&p, GP_TRAIN_EV_STEP, r, e, epoch);
    p.loss = e->samples ? e->loss_sum / (double)e->samples : NAN; /* none read back yet */
    p.elapsed_s = train_now() - e->t0;
    double done = (double)e->steps / (double)e->nb;
    long long seen = r->res->samples - e->seen0; /* a short last batch counts what it holds */
    p.samples_per_s = p.elapsed_s > 0 ? (double)seen / p.elapsed_s : 0;
    p.eta_s = done > 0 ? p.elapsed_s * (1.0 - done) / done : 0;
    r->cfg.on_progress(&p, r->cfg.progress_ud);
}

static gp_status optimizer_step(struct train_run *r, gp_error *err)
{
    GP_PROF_PUSH(GP_NAME_OPTIMIZER);
    gp_status rc = r->ops->step(r->be, err);
    GP_PROF_POP();
    r->micro = 0;
    r->res->steps++;
    return rc;
}

/* --cuda-graphs: forward, backward and (every `accumulate` batches) the optimizer as one
 * replay of the captured step; the batch's copy was made outside it. */
static gp_status graph_batch(struct train_run *r, struct batch *b, gp_error *err)
{
    int opt = r->micro + 1 == r->cfg.accumulate;
    GP_PROF_PUSH(GP_NAME_GRAPH_REPLAY);
    gp_status rc = r->ops->graph_step(r->be, opt, err);
    GP_PROF_POP();
    GP_TRY(rc);
    GP_TRY(r->ops->input_done(r->be, err));
    r->res->samples += b->n;
    r->micro = opt ? 0 : r->micro + 1;
    r->res->steps += opt;
    return GP_OK;
}

/* Forward, backward and (every `accumulate` batches) the optimizer, for one batch. */
static gp_status train_batch(struct train_run *r, struct batch *b, gp_error *err)
{
    if (r->use_cuda)
        GP_PROF_PUSH(GP_NAME_H2D);
    gp_status rc = r->ops->set_input(r->be, b, err);
    if (r->use_cuda)
        GP_PROF_POP();
    GP_TRY(rc);
    if (r->cfg.cuda_graphs)
        return graph_batch(r, b, err);
    GP_PROF_PUSH(GP_NAME_FORWARD);
    rc = r->ops->forward(r->be, 1, err);
    GP_PROF_POP();
    GP_TRY(rc);
    GP_PROF_PUSH(GP_NAME_BACKWARD);
    rc = r->ops->backward(r->be, err);
    GP_PROF_POP();
    GP_TRY(rc);
    GP_TRY(r->ops->input_done(r->be, err));
    r->res->samples += b->n;
    if (++r->micro == r->cfg.accumulate)
        return optimizer_step(r, err);
    return GP_OK;
}

/* Wait for the next batch inside the loader range PyTorch's profiler would show. */
static gp_status next_batch(struct train_run *r, struct loader *l, struct batch **b, gp_error *err)
{
    gp_status rc;
    if (r->cfg.workers > 0) {
        GP_PROF_PUSH(GP_NAME_LOADER_NEXT_MP);
        rc = loader_next(l, b, err);
    } else {
        GP_PROF_PUSH(GP_NAME_LOADER_NEXT);
        rc = loader_next(l, b, err);
    }
    GP_PROF_POP();
    return rc;
}

/* Train until the epoch's last batch (or the step limit). *stop is set at the limit. */
static gp_status train_epoch(struct train_run *r, struct loader *l, int epoch, struct epoch_acc *e,
                             int *stop, gp_error *err)
{
    gp_status rc = GP_OK;
    while (rc == GP_OK && e->steps < e->nb) {
        double t0 = train_now();
        int64_t c0 = thread_cpu_ns();
        STEP_BEGIN();
        struct batch *b = NULL;
        rc = next_batch(r, l, &b, err);
        if (rc == GP_OK && b) {
            /* the epoch's last batch may hold fewer: GT14 tells its first-time work (cuBLAS
             * choosing kernels for the new shape) from a stall by it */
            GP_PROF_COUNTER(GP_NAME_BATCH_COUNTER, (double)b->n);
            rc = train_batch(r, b, err);
        }
        loader_release(l, b);
        STEP_END();
        r->cpu.step_cpu += thread_cpu_ns() - c0;
        r->cpu.step_wall += (int64_t)((train_now() - t0) * 1e9);
        if (rc != GP_OK || !b)
            break;
        e->steps++;
        if (!r->use_cuda || e->steps % STATS_EVERY == 0 || e->steps == e->nb)
            rc = pull_stats(r, e, err);
        r->train_seconds += train_now() - t0;
        report_step(r, e, epoch);
        if (!isfinite(e->loss_sum)) { /* diverged: every later step is NaN too */
            r->res->diverged_step = r->res->steps;
            *stop = 1;
            break;
        }
        if (r->cfg.max_steps && r->res->steps >= r->cfg.max_steps) {
            *stop = 1;
            break;
        }
    }
    if (rc == GP_OK && r->micro > 0) /* a partial accumulation ends with the epoch */
        rc = optimizer_step(r, err);
    if (rc == GP_OK && e->pulled_at != e->steps)
        rc = pull_stats(r, e, err);
    return rc;
}

/* Accuracy on the test set (in order, no augmentation), as a fraction. */
static gp_status evaluate(struct train_run *r, double *acc, gp_error *err)
{
    struct loader_config lc = {.ds = &r->test,
                               .batch = r->cfg.batch_size,
                               .workers = r->cfg.workers,
                               .prefetch = r->cfg.prefetch,
                               .seed = r->cfg.seed,
                               .epochs = 1,
                               .alloc = r->ops->host_alloc,
                               .free = r->ops->host_free,
                               .alloc_ud = r->be};
    struct loader *l = NULL;
    struct step_stats s;
    GP_PROF_PUSH("evaluate");
    gp_status rc = r->ops->read_stats(r->be, &s, err); /* start from zero */
    if (rc == GP_OK)
        rc = loader_open(&l, &lc, err);
    struct batch *b = NULL;
    while (rc == GP_OK && (rc = loader_next(l, &b, err)) == GP_OK && b) {
        rc = r->ops->set_input(r->be, b, err);
        if (rc == GP_OK)
            rc = r->ops->forward(r->be, 0, err);
        if (rc == GP_OK)
            rc = r->ops->input_done(r->be, err);
        loader_release(l, b);
    }
    loader_close(l);
    if (rc == GP_OK)
        rc = r->ops->read_stats(r->be, &s, err);
    GP_PROF_POP();
    *acc = s.samples ? (double)s.correct / (double)s.samples : 0.0;
    return rc;
}

static void report_epoch(struct train_run *r, int epoch, const struct epoch_acc *e,
                         const struct epoch_log *log)
{
    if (!r->cfg.on_progress)
        return;
    gp_train_progress p;
    progress_init(&p, GP_TRAIN_EV_EPOCH, r, e, epoch);
    p.loss = log->loss;
    p.train_accuracy = log->train_acc;
    p.test_accuracy = log->test_acc;
    p.samples_per_s = log->samples_per_s;
    p.elapsed_s = log->seconds;
    r->cfg.on_progress(&p, r->cfg.progress_ud);
}

/* Close an epoch: evaluate, log, report. */
static gp_status end_epoch(struct train_run *r, int epoch, const struct epoch_acc *e,
                           double train_s, gp_error *err)
{
    struct epoch_log log;
    memset(&log, 0, sizeof(log));
    log.loss = e->samples ? e->loss_sum / (double)e->samples : 0.0;
    log.train_acc = e->samples ? (double)e->correct / (double)e->samples : 0.0;
    log.samples_per_s = train_s > 0 ? (double)e->samples / train_s : 0.0;
    log.seconds = train_s;
    GP_TRY(evaluate(r, &log.test_acc, err));
    if (r->n_logged < TRAIN_MAX_EPOCH_LOG)
        r->epochs[r->n_logged++] = log;
    r->res->epochs_done = epoch + 1;
    r->res->final_loss = log.loss;
    r->res->test_accuracy = log.test_acc;
    train_log_scalars(r, epoch, &log);
    report_epoch(r, epoch, e, &log);
    return GP_OK;
}

static void report_start(struct train_run *r)
{
    if (!r->cfg.on_progress)
        return;
    gp_train_progress p;
    memset(&p, 0, sizeof(p));
    p.event = GP_TRAIN_EV_START;
    p.epochs = r->cfg.epochs;
    p.run_dir = r->res->run_dir;
    p.device_name = r->res->device_name;
    r->cfg.on_progress(&p, r->cfg.progress_ud);
}

/* Epochs that hold max_steps optimizer steps (an epoch's last, partial accumulation is a step). */
static int epochs_for_steps(const struct train_run *r)
{
    long long n = r->train.n, bs = r->cfg.batch_size;
    long long batches = r->cfg.drop_last && n >= bs ? n / bs : (n + bs - 1) / bs;
    long long per_epoch = (batches + r->cfg.accumulate - 1) / r->cfg.accumulate;
    long long epochs = (r->cfg.max_steps + per_epoch - 1) / per_epoch;
    return epochs > INT_MAX ? INT_MAX : (int)epochs;
}

gp_status train_loop(struct train_run *r, gp_error *err)
{
    if (r->cfg.epochs == 0)
        r->cfg.epochs = epochs_for_steps(r);
    struct loader_config lc = {.ds = &r->train,
                               .batch = r->cfg.batch_size,
                               .workers = r->cfg.workers,
                               .prefetch = r->cfg.prefetch,
                               .shuffle = 1,
                               .augment = r->cfg.augment,
                               .seed = r->cfg.seed,
                               .epochs = r->cfg.epochs,
                               .drop_last = r->cfg.drop_last,
                               .alloc = r->ops->host_alloc,
                               .free = r->ops->host_free,
                               .alloc_ud = r->be};
    struct loader *l = NULL;
    GP_TRY(loader_open(&l, &lc, err));
    report_start(r);
    train_cpu_begin(&r->cpu);
    gp_status rc = GP_OK;
    int stop = 0;
    for (int epoch = 0; rc == GP_OK && epoch < r->cfg.epochs && !stop; epoch++) {
        struct epoch_acc e;
        memset(&e, 0, sizeof(e));
        e.nb = loader_epoch_batches(l);
        e.t0 = train_now();
        e.seen0 = r->res->samples;
        double before = r->train_seconds;
        rc = train_epoch(r, l, epoch, &e, &stop, err);
        if (rc == GP_OK)
            rc = end_epoch(r, epoch, &e, r->train_seconds - before, err);
    }
    r->cpu.loader_cpu = loader_join(l, &r->cpu.loader_runq);
    loader_close(l);
    train_cpu_end(&r->cpu);
    if (r->ops->elementwise_passes) /* what --fused saves, per optimizer step */
        r->res->elementwise_passes = r->ops->elementwise_passes(r->be);
    r->res->samples_per_s = r->train_seconds > 0 ? (double)r->res->samples / r->train_seconds : 0.0;
    r->res->train_s = r->train_seconds;
    return rc;
}
