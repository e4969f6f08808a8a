/* cli/run_child.h: what `gprof-train run` does around the program it profiles: start it, wait
 * for it while forwarding the signals that stop a terminal job, say how it ended, and pass the
 * profiler's --buffer-limit on through the environment. */
#ifndef GP_CLI_RUN_CHILD_H
#define GP_CLI_RUN_CHILD_H

#include <signal.h>
#include <sys/types.h>

#define RUN_CHILD_N_SIGNALS 4 /* SIGINT, SIGTERM, SIGHUP, SIGQUIT */

/* A started program, and what to restore when it has ended. */
struct run_child {
    pid_t pid;
    struct sigaction old[RUN_CHILD_N_SIGNALS];
    sigset_t old_mask;
};

/* fork + execvp(cmd), forwarding SIGINT, SIGTERM, SIGHUP and SIGQUIT to it from before the fork
 * until run_child_wait returns; an exec failure comes back through a close-on-exec pipe.
 * @return CLI_OK, 127 when cmd cannot run (message printed), or CLI_ERROR. */
int run_child_start(struct run_child *c, const char **cmd);

/* Wait for the child, then stop forwarding. @param status receives the raw wait status.
 * @return the status as a shell reports it (the exit code, or 128 + the killing signal). */
int run_child_wait(struct run_child *c, int *status);

/* Print how `name` ended to stderr: "was killed by signal 9 (SIGKILL)", "exited with code 3". */
void run_child_describe(const char *name, int status);

/* @return "SIGKILL" and so on for the usual signals, else NULL. */
const char *run_signal_name(int sig);

/* Validate SIZE ("512M", "2G", "65536": bytes with an optional K/M/G suffix, at least 64K) and
 * export it as GP_PROF_BUFFER_LIMIT for the profiler. NULL does nothing.
 * @return CLI_OK, or CLI_ERROR with the message printed. */
int run_set_buffer_limit(const char *size);

#endif
