/* Running one command of a sweep: spawned in its own process group with its output in a log file,
 * timed, and waited for while SIGINT, SIGTERM and SIGHUP are forwarded to it. A forwarded signal
 * also stops the sweep once the command has ended, so that the settings that finished still get
 * their table and sweep.json (a scheduler's SIGTERM, a closed ssh session, Ctrl-C). */
#include "cli.h"
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP (sizeof(stop_signals) / sizeof(stop_signals[0]))

static volatile sig_atomic_t child_group; /* the running command's process group, or 0 */
static volatile sig_atomic_t stop_signal; /* the first signal received, or 0 */
static struct sigaction saved[N_STOP];
static int caught[N_STOP];

static void on_stop_signal(int sig)
{
    if (!stop_signal)
        stop_signal = sig;
    if (child_group > 0)
        kill(-(pid_t)child_group, sig);
}

static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < N_STOP; i++)
        sigaddset(set, stop_signals[i]);
}

void sweep_signals_on(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    stop_set(&sa.sa_mask);
    for (size_t i = 0; i < N_STOP; i++) {
        struct sigaction old;
        sigaction(stop_signals[i], NULL, &old);
        /* nohup's SIGHUP stays ignored; SIGINT is caught even where a script's '&' ignored it */
        caught[i] = stop_signals[i] != SIGHUP || old.sa_handler != SIG_IGN;
        if (caught[i])
            sigaction(stop_signals[i], &sa, &saved[i]);
    }
}

void sweep_signals_off(void)
{
    for (size_t i = 0; i < N_STOP; i++)
        if (caught[i])
            sigaction(stop_signals[i], &saved[i], NULL), caught[i] = 0;
}

int sweep_interrupted(void)
{
    return stop_signal;
}

static int executable(const char *path)
{
    struct stat st;
    return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int in_path(const char *prog)
{
    const char *p = getenv("PATH");
    char buf[PATH_MAX];
    for (p = p ? p : "/usr/bin:/bin";; p++) {
        size_t n = strcspn(p, ":"); /* an empty entry is the current folder */
        int w = snprintf(buf, sizeof(buf), "%.*s/%s", n ? (int)n : 1, n ? p : ".", prog);
        if (w > 0 && (size_t)w < sizeof(buf) && executable(buf))
            return 1;
        p += n;
        if (!*p)
            return 0;
    }
}

int sweep_program_check(const char *prog)
{
    if (strchr(prog, '{'))
        return CLI_OK;
    if (strchr(prog, '/') ? executable(prog) : in_path(prog))
        return CLI_OK;
    if (strchr(prog, '/'))
        return cli_error("cannot run '%s': %s", prog,
                         access(prog, F_OK) ? strerror(errno) : "not an executable file");
    cli_error("cannot run '%s': no such program in PATH", prog);
    cli_hint("give its path, e.g. -- ./%s ...", prog);
    return CLI_ERROR;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The child: its own process group (a terminal's Ctrl-C reaches it once, through us), the
 * signal mask from before the stop signals were blocked, stdin from /dev/null, output to log. */
static int spawn_with_log(pid_t *pid, char *const *argv, const char *log, const sigset_t *mask)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return ENOMEM;
    if (posix_spawnattr_init(&at) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return ENOMEM;
    }
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (rc == 0)
        rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(&at, 0);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&at, mask);
    if (rc == 0)
        rc = posix_spawnp(pid, argv[0], &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* Wait until pid has ended, leaving it a zombie (WNOWAIT): its pid, and so its group's, cannot
 * be reused while a signal handler may still send to it. */
static void wait_ended(pid_t pid)
{
    siginfo_t info;
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
}

int sweep_spawn(char *const *argv, const char *log, double *wall_s)
{
    sigset_t block, old;
    stop_set(&block);
    sigprocmask(SIG_BLOCK, &block, &old); /* a signal now waits until child_group is set */
    if (stop_signal) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return SWEEP_SPAWN_INTERRUPTED;
    }
    pid_t pid;
    double t0 = now_s();
    int rc = spawn_with_log(&pid, argv, log, &old);
    if (rc == 0)
        child_group = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        cli_error("cannot run '%s': %s", argv[0], strerror(rc));
        return -1;
    }
    int status = 0;
    wait_ended(pid);
    sigprocmask(SIG_BLOCK, &block, NULL);
    child_group = 0;
    int cut_short = stop_signal != 0; /* signalled before it ended, whatever its exit status */
    sigprocmask(SIG_SETMASK, &old, NULL);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            cli_error("cannot wait for '%s': %s", argv[0], strerror(errno));
            return -1;
        }
    *wall_s = now_s() - t0;
    if (cut_short)
        return SWEEP_SPAWN_INTERRUPTED;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
