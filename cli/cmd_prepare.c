/* gprof-train prepare: write the IDX dataset as an image folder of PNG files. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"

static const char *const usage[] = {
    "gprof-train prepare [--data DIR] --format png OUT",
    NULL,
};

int cmd_prepare(int argc, const char **argv)
{
    const char *data = NULL, *format = "png";
    const struct opt opts[] = {
        OPT_GROUP("options:"),
        OPT_STR(0, "data", &data, "DIR", "MNIST-format IDX folder (default: Fashion-MNIST from Debian)"),
        OPT_STR(0, "format", &format, "FMT", "png (the only format)"),
        OPT_END(),
    };
    const struct opt_help help = {
        "prepare", usage,
        "Write every sample as a PNG file under OUT/{train,test}/<label>/, the image-folder layout\n"
        "that 'gprof-train run --data OUT' trains from with per-sample decoding.", NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    (void)data, (void)format;
    return cli_not_built("prepare", "the trainer is not part of this build yet");
}
