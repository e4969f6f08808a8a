/* gprof-train run (no "--"): train the bundled model under the profiler. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"

static const char *const usage[] = {
    "gprof-train run [options]",
    "gprof-train run [profiler options] -- CMD [ARGS...]",
    NULL,
};

int cmd_run_train(int argc, const char **argv)
{
    const char *model = "mlp", *optimizer = "adam", *device = "auto", *amp = "off";
    const char *workers = "0", *data = NULL, *out = "runs", *checkpoint = NULL, *resume = NULL;
    long epochs = 1, steps = 0, batch = 64, prefetch = 2, seed = 42, accumulate = 1;
    double lr = 1e-3;
    int pin = 0, nonblock = 0, cudnn_bench = 0, augment = 0, no_report = 0;
    const struct opt opts[] = {
        OPT_GROUP("model and training:"),
        OPT_STR('m', "model", &model, "NAME", "mlp (784-128-64-10, default) or cnn"),
        OPT_INT('e', "epochs", &epochs, "N", "epochs to train (default 1)", 1, 100000),
        OPT_INT(0, "steps", &steps, "N", "stop after N optimizer steps (default: all)", 0, 1L << 40),
        OPT_INT('b', "batch-size", &batch, "N", "samples per batch (default 64)", 1, 1 << 20),
        OPT_DOUBLE(0, "lr", &lr, "RATE", "learning rate (default 0.001)"),
        OPT_STR(0, "optimizer", &optimizer, "NAME", "adam (default) or sgd (momentum 0.9)"),
        OPT_INT(0, "accumulate", &accumulate, "N", "accumulate gradients over N batches", 1, 4096),
        OPT_INT(0, "seed", &seed, "N", "seed for initialisation and shuffling (default 42)", 0,
                2147483647),
        OPT_STR(0, "device", &device, "DEV", "auto (default: cuda if present), cuda or cpu"),
        OPT_STR(0, "amp", &amp, "MODE", "off (default), fp16 (with loss scaling) or bf16"),
        OPT_BOOL(0, "cudnn-benchmark", &cudnn_bench, "search conv algorithms once per shape"),
        OPT_GROUP("data loading (PyTorch DataLoader's knobs):"),
        OPT_STR(0, "data", &data, "DIR", "IDX folder or image folder (default: Fashion-MNIST)"),
        OPT_STR('w', "workers", &workers, "N", "loader threads; 0 = in the training thread (default),\n"
                "                              auto = physical cores"),
        OPT_INT(0, "prefetch", &prefetch, "K", "batches each worker loads ahead (default 2)", 1, 64),
        OPT_BOOL(0, "pin-memory", &pin, "load into pinned host memory"),
        OPT_BOOL(0, "non-blocking", &nonblock, "copy on a separate stream, overlapped with compute"),
        OPT_BOOL(0, "augment", &augment, "random crop (padding 2) and horizontal flip"),
        OPT_GROUP("output:"),
        OPT_STR('o', "out", &out, "DIR", "write runs/<model>-<date-time>/ under DIR (default runs)"),
        OPT_STR(0, "checkpoint", &checkpoint, "PATH", "save the weights to PATH at the end"),
        OPT_STR(0, "resume", &resume, "PATH", "start from weights saved with --checkpoint"),
        OPT_BOOL(0, "no-report", &no_report, "skip the report and diagnosis at the end"),
        OPT_END(),
    };
    const struct opt_help help = {
        "run", usage,
        "Train the bundled model on Fashion-MNIST under the profiler, then print the key-averages\n"
        "table and the diagnosis. The defaults are the naive baseline (no workers, pageable memory,\n"
        "blocking copies), so the first run shows a problem worth fixing.\n"
        "With -- CMD, run any program under the profiler instead (see below).",
        "examples:\n"
        "    gprof-train run\n"
        "    gprof-train run --model cnn --workers 4 --pin-memory --non-blocking --amp fp16\n"
        "    gprof-train run -- python3 train.py --epochs 1\n"};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (n > 0) {
        cli_error("unexpected argument '%s'", argv[0]);
        cli_hint("to profile a program, put it after '--': gprof-train run -- %s", argv[0]);
        return CLI_ERROR;
    }
    return cli_not_built("run", "the trainer is not part of this build yet");
}
