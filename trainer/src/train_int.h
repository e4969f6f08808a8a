/* trainer/src/train_int.h: the state of one training run shared by train.c (setup and
 * teardown), train_loop.c (epochs, steps, evaluation) and train_output.c (run folder, summary). */
#ifndef GP_TRAINER_TRAIN_INT_H
#define GP_TRAINER_TRAIN_INT_H

#include "backend.h"
#include "dataset.h"
#include "gp/train.h"
#include "model.h"
#include "thread_stat.h"

#define TRAIN_MAX_EPOCH_LOG 64 /* epochs listed one by one in summary.json */

struct epoch_log {
    double loss, train_acc, test_acc, samples_per_s, seconds;
};

/* The training loop's CPU accounting (train_cpu.c), all ns. */
struct train_cpu {
    int64_t wall0, busy0, self0; /* at the loop's start: monotonic, machine busy, this process */
    int64_t runq0;               /* ...and the training thread's run-queue wait (-1 unknown) */
    int64_t step_wall, step_cpu; /* summed over steps: wall time, training thread's CPU time */
    int64_t loader_cpu;          /* the loader threads' CPU time */
    int64_t loader_runq;         /* ...and their run-queue wait (-1 unknown) */
};

struct train_run {
    gp_train_config cfg;
    gp_train_result *res;
    enum model_kind model;
    enum optim_kind optim;
    enum amp_mode amp;
    int zero_grad_none; /* --zero-grad none */
    int use_cuda;
    struct dataset train, test;
    struct model_spec spec;
    const struct backend_ops *ops;
    struct backend *be;
    struct tfevents_writer *tb;
    long long micro;      /* micro-batches since the last optimizer step */
    double train_seconds; /* time in training steps (evaluation excluded) */
    double t_start;
    struct train_cpu cpu;
    struct step_stats last; /* latest counters read back */
    int n_logged;
    struct epoch_log epochs[TRAIN_MAX_EPOCH_LOG];
};

/* Monotonic seconds. */
double train_now(void);

/* Start the loop's CPU accounting; at its end, write it to the trace's run configuration
 * (GP_CFG_STEP_WALL ... GP_CFG_LOOP_WALL). */
void train_cpu_begin(struct train_cpu *c);
void train_cpu_end(const struct train_cpu *c);

/* Train cfg.epochs epochs (or until cfg.max_steps), evaluating after each. */
gp_status train_loop(struct train_run *r, gp_error *err);

/* Create <out_dir>/<model>-<date-time>[-N]/ into r->res->run_dir. */
gp_status train_make_run_dir(struct train_run *r, gp_error *err);
/* Remove the run folder and its trace after a failure before training began. */
void train_discard_run_dir(struct train_run *r);

/* Write <run_dir>/summary.json. */
gp_status train_write_summary(const struct train_run *r, gp_error *err);

/* Start libprof on <run_dir>/<host>_<pid>.<ms>.pt.trace.json.gz with the run's configuration
 * in "gprof"; a profiler that cannot start is logged, not fatal. */
void train_prof_start(struct train_run *r);
/* Add the device the backend opened to the trace's run configuration. */
void train_prof_device(struct train_run *r);

/* Stop libprof and record the trace path in the result. */
void train_prof_stop(struct train_run *r);

/* Flush and close the TensorBoard event file, if one was opened. */
void train_close_scalars(struct train_run *r);

/* Scalars for TensorBoard (loss, accuracy, samples/s), once per epoch. */
void train_log_scalars(struct train_run *r, int epoch, const struct epoch_log *e);

#endif
