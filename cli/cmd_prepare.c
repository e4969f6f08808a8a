/* gprof-train prepare: write the IDX dataset as an image folder of PNG files. */
#include "cli.h"
#include "cmds.h"
#include "gp/train.h"
#include "opt.h"

#include <stdio.h>
#include <string.h>

static const char *const usage[] = {
        "gprof-train prepare [--data DIR] --format png OUT",
        NULL,
};

int cmd_prepare(int argc, const char **argv)
{
    const char *data = NULL, *format = "png";
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR(0, "data", &data, "DIR",
                    "MNIST-format IDX folder (default: Fashion-MNIST from Debian)"),
            OPT_STR(0, "format", &format, "FMT", "png (the only format)"),
            OPT_END(),
    };
    const struct opt_help help = {
            "prepare", usage,
            "Write every sample as a PNG file under OUT/{train,test}/<label>/, the image-folder "
            "layout\n"
            "that 'gprof-train run --data OUT' trains from with per-sample decoding.",
            NULL, NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (n != 1) {
        cli_error("%s", n ? "too many arguments" : "missing the output folder");
        cli_hint("gprof-train prepare --format png OUT");
        return CLI_ERROR;
    }
    if (strcmp(format, "png") != 0)
        return cli_error("unknown format '%s' (expected png)", format);
    long long written = 0;
    gp_error err;
    gp_error_clear(&err);
    gp_status rc = gp_train_prepare_png(data, argv[0], &written, &err);
    if (rc != GP_OK)
        return cli_error_from(&err, rc);
    printf("wrote %lld PNG files under %s/{train,test}/<label>/\n", written, argv[0]);
    printf("train from them with: gprof-train run --data %s\n", argv[0]);
    return CLI_OK;
}
