/* gprof-train export: write a trace for TensorBoard, Perfetto, or as a self-contained HTML report. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"

static const char *const usage[] = {
    "gprof-train export TRACE --tensorboard LOGDIR [--run NAME]",
    "gprof-train export TRACE --perfetto OUT.json[.gz]",
    "gprof-train export TRACE --html OUT.html",
    NULL,
};

int cmd_export(int argc, const char **argv)
{
    const char *tb = NULL, *run = NULL, *perfetto = NULL, *html = NULL;
    const struct opt opts[] = {
        OPT_GROUP("outputs (one or more):"),
        OPT_STR(0, "tensorboard", &tb, "LOGDIR", "a run directory for torch-tb-profiler"),
        OPT_STR(0, "run", &run, "NAME", "the run's name under LOGDIR (default: the trace's name)"),
        OPT_STR(0, "perfetto", &perfetto, "OUT", "Chrome JSON for ui.perfetto.dev, findings as a track"),
        OPT_STR(0, "html", &html, "OUT", "a self-contained HTML report with charts and findings"),
        OPT_END(),
    };
    const struct opt_help help = {
        "export", usage,
        "Write what viewers open, from a gprof-train or PyTorch profiler trace.",
        "examples:\n"
        "    gprof-train export trace.json.gz --tensorboard tb/ && tensorboard --logdir tb/\n"
        "    gprof-train export trace.json.gz --html report.html\n"};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    (void)tb, (void)run, (void)perfetto, (void)html;
    return cli_not_built("export", "the viewer export is not part of this build yet");
}
