/* The profiled program as `gprof-train run` sees it: started with fork/exec, waited for with the
 * terminal's stop signals forwarded (so closing the terminal or Ctrl-\ never orphans it), dying
 * with it (PR_SET_PDEATHSIG: a SIGKILLed or OOM-killed run leaves no orphan), and
 * described when it ends. Also the --buffer-limit option, passed on as GP_PROF_BUFFER_LIMIT. */
#include "run_child.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_FORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))
_Static_assert(N_FORWARDED == RUN_CHILD_N_SIGNALS, "struct run_child keeps one action a signal");

static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* Forward the stop signals to the child from now on; they stay blocked until the child's pid is
 * known (run_child_start), so one that arrives during the fork is forwarded, not lost. */
static void forward_on(struct run_child *c)
{
    struct sigaction sa;
    sigset_t block;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&block);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &c->old_mask);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded[i], &sa, &c->old[i]);
}

static void forward_off(struct run_child *c)
{
    child_pid = 0;
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded[i], &c->old[i], NULL);
    sigprocmask(SIG_SETMASK, &c->old_mask, NULL);
}

/* In the child: die with `gprof-train run` (SIGKILLed, or by the OOM killer), not orphaned to
 * init. SIGTERM, so libprof in the child finishes its trace on the way out. The parent may be gone
 * already (before prctl took effect): then getppid() is no longer the pid it had. */
static void die_with_parent(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        _exit(127);
}

/* In the child: the parent's dispositions and mask back, then exec; errno goes up the pipe. */
static void exec_child(struct run_child *c, const char **cmd, int fd, pid_t parent)
{
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded[i], &c->old[i], NULL);
    sigprocmask(SIG_SETMASK, &c->old_mask, NULL);
    die_with_parent(parent);
    execvp(cmd[0], (char *const *)cmd);
    int e = errno;
    if (write(fd, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

int run_child_start(struct run_child *c, const char **cmd)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return cli_error("cannot run '%s': %s", cmd[0], strerror(errno));
    forward_on(c);
    pid_t parent = getpid();
    c->pid = fork();
    if (c->pid == 0)
        exec_child(c, cmd, fds[1], parent);
    close(fds[1]);
    if (c->pid < 0) {
        close(fds[0]);
        forward_off(c);
        return cli_error("cannot run '%s': %s", cmd[0], strerror(errno));
    }
    child_pid = c->pid;
    sigprocmask(SIG_SETMASK, &c->old_mask, NULL); /* a signal held during the fork goes now */
    int e = 0;
    ssize_t n;
    while ((n = read(fds[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    if (n == (ssize_t)sizeof(e)) {
        while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        forward_off(c);
        cli_error("cannot run '%s': %s", cmd[0], strerror(e));
        return 127;
    }
    return CLI_OK;
}

int run_child_wait(struct run_child *c, int *status)
{
    *status = 0;
    while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
        ;
    forward_off(c);
    if (WIFSIGNALED(*status))
        return 128 + WTERMSIG(*status);
    return WIFEXITED(*status) ? WEXITSTATUS(*status) : 1;
}

const char *run_signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
            {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
            {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
            {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
            {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
            {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].sig == sig)
            return names[i].name;
    return NULL;
}

void run_child_describe(const char *name, int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *sn = run_signal_name(sig);
        fprintf(stderr, "gprof-train: '%s' was killed by signal %d (%s)%s\n", name, sig,
                sn ? sn : strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
    } else if (WIFEXITED(status)) {
        fprintf(stderr, "gprof-train: '%s' exited with code %d\n", name, WEXITSTATUS(status));
    }
}

/* "512M" -> bytes, the syntax libprof reads from GP_PROF_BUFFER_LIMIT. @return -1 if not a
 * size. */
static long long parse_size(const char *s)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    static const char units[] = "KkMmGg";
    const char *u = *end ? memchr(units, *end, sizeof(units) - 1) : NULL;
    int shift = u ? 10 * (int)((u - units) / 2 + 1) : 0;
    if (u)
        end++;
    if (shift && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (errno || *end || v > (1ULL << 50) >> shift)
        return -1;
    return (long long)(v << shift);
}

int run_set_buffer_limit(const char *size)
{
    if (!size)
        return CLI_OK;
    long long v = parse_size(size);
    if (v < 0) {
        cli_error("invalid value '%s' for --buffer-limit: not a size", size);
        cli_hint("give bytes with an optional K, M or G suffix, e.g. --buffer-limit 512M");
        return CLI_ERROR;
    }
    if (v < 64 << 10)
        return cli_error("invalid value '%s' for --buffer-limit: the profiler needs at least 64K",
                         size);
    setenv("GP_PROF_BUFFER_LIMIT", size, 1);
    return CLI_OK;
}
