/* cli/cmds.h: the subcommands of gprof-train. Each cmd_<name> lives in cli/cmd_<name>.c, takes
 * argv with argv[0] = the subcommand name, and returns the process exit code (0, 1 or 2).
 * Adding a subcommand: write cmd_<name>.c, declare it here, add it to commands[] in gprof-train.c.
 */
#ifndef GP_CLI_CMDS_H
#define GP_CLI_CMDS_H

int cmd_run(int argc, const char **argv);
int cmd_report(int argc, const char **argv);
int cmd_diagnose(int argc, const char **argv);
int cmd_export(int argc, const char **argv);
int cmd_prepare(int argc, const char **argv);
int cmd_doctor(int argc, const char **argv);
int cmd_job(int argc, const char **argv);
int cmd_summarize(int argc, const char **argv);
int cmd_compare(int argc, const char **argv);
int cmd_sweep(int argc, const char **argv);

/* The two halves of `run`: train the bundled model, or run `-- CMD ARGS...` under the profiler. */
int cmd_run_train(int argc, const char **argv);
int cmd_run_exec(int argc, const char **argv);

/* The options of `run [options] -- CMD`, filled into `t` (RUN_EXEC_N_OPTS entries, pointing at
 * `v`), so that `run --help` lists the same table that cmd_run_exec parses. */
struct opt;
struct run_exec_opts {
    const char *out, *buffer_limit, *schedule;
    int no_report, driver_api;
    int torch; /* -1: if CMD uses torch (run_torch.c), 0: --no-torch, 1: --torch */
    int record_shapes, profile_memory, with_stack;
};
#define RUN_EXEC_N_OPTS 11
void run_exec_options(struct run_exec_opts *v, struct opt *t);

#endif
