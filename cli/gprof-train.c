/* gprof-train: one binary, a table of subcommands (git's git.c model). Results go to stdout,
 * everything else to stderr; a failed write to stdout is an error (exit 2). */
#include "cli.h"
#include "cmds.h"

#include <stdio.h>
#include <string.h>

struct gp_cmd {
    const char *name;
    int (*fn)(int argc, const char **argv);
    const char *summary;
};

static const struct gp_cmd commands[] = {
        {"run", cmd_run, "train the bundled model, or run any program, under the profiler"},
        {"report", cmd_report, "print key-averages tables (PyTorch's) for one or more traces"},
        {"diagnose", cmd_diagnose,
         "find why training is slow: evidence, the knob to turn, the gain"},
        {"export", cmd_export, "write a trace for TensorBoard, Perfetto or as an HTML report"},
        {"prepare", cmd_prepare,
         "write Fashion-MNIST as a PNG image folder for the decoding loader"},
        {"doctor", cmd_doctor, "check the driver, GPUs, CUPTI and libraries GPU profiling needs"},
        {"job", cmd_job, "compare the ranks of a distributed job: stragglers, collective waits"},
        {"summarize", cmd_summarize, "write a rank's summary for 'job' where its trace is"},
        {"compare", cmd_compare,
         "what changed between two runs, and whether it is more than noise"},
        {"sweep", cmd_sweep, "time settings of the trainer or any program, and check the advice"},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_main_help(FILE *out)
{
    fputs("usage: gprof-train [--version] [--help] <command> [<args>]\n\n"
          "Profile GPU training loops and explain why they are slow.\n\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "    %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\nexamples:\n"
          "    gprof-train run                           train the bundled MLP under the profiler\n"
          "    gprof-train run --workers 4 --pin-memory  the same, with the loader fixes\n"
          "    gprof-train run -- python3 train.py       profile any CUDA program, no code change\n"
          "    gprof-train report TRACE --sort cuda_time_total\n"
          "    gprof-train diagnose TRACE --fail-on warn\n"
          "    gprof-train export TRACE --html report.html\n\n"
          "'gprof-train <command> --help' describes a command.\n",
          out);
}

/* "hint: the commands are run, report, ... and sweep; see 'gprof-train --help'", from the
 * table, so that a new command is never left out. */
static void print_command_hint(void)
{
    char list[512];
    size_t n = 0;
    for (size_t i = 0; i < N_COMMANDS && n < sizeof(list); i++) {
        const char *sep = i == 0 ? "" : i + 1 < N_COMMANDS ? ", " : " and ";
        n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", sep, commands[i].name);
    }
    cli_hint("the commands are %s; see 'gprof-train --help'", list);
}

static const struct gp_cmd *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int print_version(void)
{
    printf("gprof-train %s (cuda %s, cupti %s)\n", GP_VERSION,
#ifdef GP_HAVE_CUDA
           "yes",
#else
           "no",
#endif
#ifdef GP_HAVE_CUPTI
           "yes"
#else
           "no"
#endif
    );
    return CLI_OK;
}

static int finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("gprof-train: error: could not write to standard output\n", stderr);
        return CLI_ERROR;
    }
    return rc;
}

int main(int argc, const char **argv)
{
    if (argc < 2) {
        print_main_help(stderr);
        return CLI_ERROR;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (argc > 2 && strcmp(name, "help") == 0 && find_command(argv[2])) {
            const char *args[] = {argv[2], "--help", NULL};
            return finish(find_command(argv[2])->fn(2, args));
        }
        print_main_help(stdout);
        return finish(CLI_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0)
        return finish(print_version());
    const struct gp_cmd *cmd = find_command(name);
    if (!cmd) {
        cli_error("'%s' is not a gprof-train command", name);
        print_command_hint();
        return CLI_ERROR;
    }
    return finish(cmd->fn(argc - 1, argv + 1));
}
