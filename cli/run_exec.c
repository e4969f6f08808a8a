/* gprof-train run [options] -- CMD ARGS...: run any program with libprof injected. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"

static const char *const usage[] = {
    "gprof-train run [profiler options] -- CMD [ARGS...]",
    NULL,
};

int cmd_run_exec(int argc, const char **argv)
{
    const char *out = "runs";
    int no_report = 0;
    const struct opt opts[] = {
        OPT_GROUP("profiler options:"),
        OPT_STR('o', "out", &out, "DIR", "write traces under DIR/<cmd>-<date-time>/ (default runs)"),
        OPT_BOOL(0, "no-report", &no_report, "skip the report and diagnosis at the end"),
        OPT_END(),
    };
    const struct opt_help help = {
        "run", usage,
        "Run CMD with libprof injected (CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH): CPU\n"
        "ranges from NVTX and, on a GPU, kernels, copies, syncs and memory. One trace per process.\n"
        "The exit status is CMD's.", NULL};
    int n = opt_parse(argc, argv, opts, &help, OPT_KEEP_DASHDASH);
    if (n < 0)
        return opt_exit_code(n);
    return cli_not_built("run -- CMD", "program injection is not part of this build yet");
}
