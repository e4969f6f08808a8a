/* gprof-train run (no "--"): train the bundled model under the profiler, show progress (a bar on
 * a terminal, plain lines otherwise), then print the report and diagnosis of the trace. */
#include "cli.h"
#include "cmds.h"
#include "gp/train.h"
#include "opt.h"
#include "run_analysis.h"
#include "run_child.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const usage[] = {
        "gprof-train run [options]",
        "gprof-train run [profiler options] -- CMD [ARGS...]",
        NULL,
};

struct progress {
    int tty;
    double last_draw; /* elapsed_s of the last redraw (tty) */
};

static void fmt_rate(char *buf, size_t cap, double r)
{
    if (r >= 1e3)
        snprintf(buf, cap, "%.1fk", r / 1e3);
    else
        snprintf(buf, cap, "%.0f", r);
}

/* A bar on a terminal (redrawn at most 10 times a second), else a line every 10% of an epoch. */
static void show_step(const gp_train_progress *p, struct progress *pr)
{
    char rate[32], loss[32];
    fmt_rate(rate, sizeof(rate), p->samples_per_s);
    /* on CUDA the loss is read back every 50 steps: before the first read there is none yet */
    if (isnan(p->loss))
        snprintf(loss, sizeof(loss), "-");
    else
        snprintf(loss, sizeof(loss), "%.4f", p->loss);
    if (pr->tty) {
        if (p->step != p->epoch_steps && p->elapsed_s - pr->last_draw < 0.1)
            return;
        pr->last_draw = p->elapsed_s;
        int width = 24, fill = (int)(width * p->step / (p->epoch_steps ? p->epoch_steps : 1));
        fprintf(stderr, "\r\033[Kepoch %d/%d [%.*s%*s] %lld/%lld loss %s %s samples/s ETA %.0fs",
                p->epoch, p->epochs, fill, "########################", width - fill, "", p->step,
                p->epoch_steps, loss, rate, p->eta_s);
        return;
    }
    long long every = p->epoch_steps >= 10 ? p->epoch_steps / 10 : 1;
    if (p->step % every && p->step != p->epoch_steps)
        return;
    fprintf(stderr, "epoch %d/%d step %lld/%lld loss %s %s samples/s\n", p->epoch, p->epochs,
            p->step, p->epoch_steps, loss, rate);
}

static void on_progress(const gp_train_progress *p, void *ud)
{
    struct progress *pr = ud;
    char rate[32];
    switch (p->event) {
    case GP_TRAIN_EV_START:
        fprintf(stderr, "training on %s, writing %s/\n", p->device_name, p->run_dir);
        break;
    case GP_TRAIN_EV_STEP:
        show_step(p, pr);
        break;
    case GP_TRAIN_EV_EPOCH:
        if (pr->tty)
            fputs("\r\033[K", stderr);
        fmt_rate(rate, sizeof(rate), p->samples_per_s);
        printf("epoch %d/%d: loss %.4f, train accuracy %.4f, test accuracy %.4f, %s samples/s, "
               "%.1f s\n",
               p->epoch, p->epochs, p->loss, p->train_accuracy, p->test_accuracy, rate,
               p->elapsed_s);
        fflush(stdout);
        break;
    }
}

/* --workers N | auto */
static int parse_workers(const char *s, int *out)
{
    if (strcmp(s, "auto") == 0) {
        *out = gp_train_physical_cores();
        return 0;
    }
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > 256)
        return cli_error("invalid value '%s' for --workers (expected 0..256 or auto)", s);
    *out = (int)v;
    return 0;
}

/* Last, where the user looks: a run whose loss became NaN or infinite stopped there. */
static int say_diverged(const gp_train_config *cfg, const gp_train_result *res)
{
    fflush(stdout);
    cli_error("training diverged: the loss was not finite after step %lld, so it stopped there%s",
              res->diverged_step, cfg->checkpoint ? " and the checkpoint was not saved" : "");
    cli_hint("lower --lr (now %g)", cfg->lr);
    return CLI_ERROR;
}

/* @param mode RUN_REPORT_BRIEF, RUN_NO_REPORT or RUN_REPORT_VERBOSE (run_analysis.h). */
static int train_and_report(gp_train_config *cfg, int mode)
{
    struct progress pr = {isatty(2), -1.0};
    gp_train_result res;
    gp_error err;
    gp_error_clear(&err);
    cfg->on_progress = on_progress;
    cfg->progress_ud = &pr;
    gp_status rc = gp_train_run(cfg, &res, &err);
    if (rc != GP_OK) {
        if (pr.tty)
            fputs("\n", stderr);
        cli_error_from(&err, rc);
        if (rc == GP_EINVAL && strstr(err.msg, "--amp"))
            cli_hint("fp16 with loss scaling runs on the GPU; on the CPU use --amp bf16 or off");
        return CLI_ERROR;
    }
    printf("trained %lld steps in %.1f s (%.0f samples/s; %.1f s with setup and evaluation); "
           "test accuracy %.4f\n",
           res.steps, res.train_s, res.samples_per_s, res.wall_s, res.test_accuracy);
    printf("run: %s\n", res.run_dir);
    if (res.trace_path[0]) {
        if (mode == RUN_NO_REPORT)
            printf("trace: %s\n", res.trace_path);
        const char *paths[1] = {res.trace_path};
        struct run_trace_note note;
        run_print_analysis(paths, 1, mode, &note);
        run_print_notes(&note, 1); /* what the trace lost, where the user looks */
    }
    return res.diverged_step ? say_diverged(cfg, &res) : CLI_OK;
}

int cmd_run_train(int argc, const char **argv)
{
    const char *model = "mlp", *optimizer = "adam", *device = "auto", *amp = "off";
    const char *workers = "0", *data = NULL, *out = "runs", *checkpoint = NULL, *resume = NULL;
    const char *buffer_limit = NULL, *zero_grad = "zero";
    long epochs = 0, steps = 0, batch = 64, prefetch = 2, seed = 42, accumulate = 1;
    double lr = 1e-3;
    int pin = 0, drop_last = 0, nonblock = 0, cudnn_bench = 0, augment = 0, no_report = 0,
        no_profile = 0;
    int verbose = 0, ckpt_act = 0, fused = 0, channels_last = 0, cuda_graphs = 0;
    const struct opt opts[] = {
            OPT_GROUP("model and training:"),
            OPT_STR('m', "model", &model, "NAME", "mlp (784-128-64-10, default) or cnn"),
            OPT_INT('e', "epochs", &epochs, "N",
                    "epochs to train (default 1, or as many as --steps needs)", 1, 100000),
            OPT_INT(0, "steps", &steps, "N",
                    "train N optimizer steps, over as many epochs as they need; with --epochs, "
                    "stop at whichever comes first (default: all)",
                    0, 1L << 40),
            OPT_INT('b', "batch-size", &batch, "N", "samples per batch (default 64)", 1, 1 << 20),
            OPT_DOUBLE(0, "lr", &lr, "RATE", "learning rate (default 0.001)"),
            OPT_STR(0, "optimizer", &optimizer, "NAME", "adam (default) or sgd (momentum 0.9)"),
            OPT_INT(0, "accumulate", &accumulate, "N", "accumulate gradients over N batches", 1,
                    4096),
            OPT_INT(0, "seed", &seed, "N", "seed for initialisation and shuffling (default 42)", 0,
                    2147483647),
            OPT_STR(0, "device", &device, "DEV", "auto (default: cuda if present), cuda or cpu"),
            OPT_STR(0, "amp", &amp, "MODE",
                    "off (default), fp16 (with loss scaling; CUDA) or bf16"),
            OPT_BOOL(0, "cudnn-benchmark", &cudnn_bench, "search conv algorithms once per shape"),
            OPT_BOOL(0, "checkpoint-activations", &ckpt_act,
                     "keep only each block's input, recompute the rest in backward"),
            OPT_STR(0, "zero-grad", &zero_grad, "MODE",
                    "zero (default: clear the gradients after each step) or none (set to None: "
                    "backward writes them)"),
            OPT_BOOL(0, "fused", &fused,
                     "bias+ReLU in one pass after each linear GEMM, and the optimizer step "
                     "zeroes the gradients as it updates"),
            OPT_BOOL(0, "channels-last", &channels_last,
                     "the cnn's convolution activations in NHWC, as channels_last"),
            OPT_BOOL(0, "cuda-graphs", &cuda_graphs,
                     "capture the training step as a CUDA graph, replay it each step; batch "
                     "copies stay outside (CUDA)"),
            OPT_GROUP("data loading (PyTorch DataLoader's knobs):"),
            OPT_STR(0, "data", &data, "DIR", "IDX folder or image folder (default: Fashion-MNIST)"),
            OPT_STR('w', "workers", &workers, "N",
                    "loader threads; 0 = in the training thread (default), "
                    "auto = physical cores"),
            OPT_INT(0, "prefetch", &prefetch, "K", "batches each worker loads ahead (default 2)", 1,
                    64),
            OPT_BOOL(0, "drop-last", &drop_last,
                     "leave out each epoch's last batch where it holds fewer (drop_last=True)"),
            OPT_BOOL(0, "pin-memory", &pin, "load into pinned host memory"),
            OPT_BOOL(0, "non-blocking", &nonblock,
                     "copy on a separate stream, overlapped with compute"),
            OPT_BOOL(0, "augment", &augment, "random crop (padding 2) and horizontal flip"),
            OPT_GROUP("output:"),
            OPT_STR('o', "out", &out, "DIR",
                    "write runs/<model>-<date-time>/ under DIR (default runs)"),
            OPT_STR(0, "checkpoint", &checkpoint, "PATH", "save the weights to PATH at the end"),
            OPT_STR(0, "resume", &resume, "PATH", "start from weights saved with --checkpoint"),
            OPT_BOOL(0, "no-report", &no_report, "skip the report and diagnosis at the end"),
            OPT_BOOL(0, "verbose", &verbose,
                     "list each rule that did not fire with why (default: one line names them)"),
            OPT_BOOL(0, "no-profile", &no_profile,
                     "train without the profiler (no trace): timing runs, as sweep"),
            OPT_STR(0, "buffer-limit", &buffer_limit, "SIZE",
                    "memory the profiler may hold records in before it drops "
                    "them, e.g. 512M (default 1G or 1/8 of RAM)"),
            OPT_END(),
    };
    struct run_exec_opts exec_vals;
    struct opt exec_opts[RUN_EXEC_N_OPTS];
    run_exec_options(&exec_vals, exec_opts); /* listed in --help only; parsed by run_exec.c */
    const struct opt_help help = {
            "run", usage,
            "Train the bundled model on Fashion-MNIST under the profiler, then print the "
            "key-averages\n"
            "table and the diagnosis. The defaults are the naive baseline (no workers, pageable "
            "memory,\n"
            "blocking copies), so the first run shows a problem worth fixing.\n"
            "With -- CMD, run any program under the profiler instead (its options are listed\n"
            "below); the exit status is then CMD's.",
            "examples:\n"
            "    gprof-train run\n"
            "    gprof-train run --model cnn --workers 4 --pin-memory --non-blocking --amp fp16\n"
            "    gprof-train run -- python3 train.py --epochs 1\n",
            exec_opts};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (n > 0) {
        cli_error("unexpected argument '%s'", argv[0]);
        cli_hint("to profile a program, put it after '--': gprof-train run -- %s", argv[0]);
        return CLI_ERROR;
    }
    gp_train_config cfg;
    gp_train_config_init(&cfg);
    if (parse_workers(workers, &cfg.workers) != 0 || run_set_buffer_limit(buffer_limit) != CLI_OK)
        return CLI_ERROR;
    cfg.model = model, cfg.optimizer = optimizer, cfg.device = device, cfg.amp = amp;
    cfg.data_dir = data, cfg.out_dir = out, cfg.checkpoint = checkpoint, cfg.resume = resume;
    cfg.epochs = epochs ? (int)epochs : steps ? 0 : 1; /* 0: as many as the steps need */
    cfg.max_steps = steps, cfg.batch_size = (int)batch;
    cfg.lr = lr, cfg.accumulate = (int)accumulate, cfg.seed = (unsigned)seed;
    cfg.prefetch = (int)prefetch, cfg.drop_last = drop_last, cfg.pin_memory = pin,
    cfg.non_blocking = nonblock;
    cfg.cudnn_benchmark = cudnn_bench, cfg.augment = augment, cfg.profile = !no_profile;
    cfg.checkpoint_activations = ckpt_act, cfg.zero_grad = zero_grad;
    cfg.fused = fused, cfg.channels_last = channels_last, cfg.cuda_graphs = cuda_graphs;
    return train_and_report(&cfg, no_report ? RUN_NO_REPORT
                                  : verbose ? RUN_REPORT_VERBOSE
                                            : RUN_REPORT_BRIEF);
}
