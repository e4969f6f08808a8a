/* gprof-train run [options] -- CMD ARGS...: run any program with libprof injected
 * (CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH point at lib/libgp_prof.so next to this
 * binary; GP_PROF_OUT tells every process where to write its trace), forward SIGINT/SIGTERM,
 * then print the analysis of each trace. The exit status is CMD's (128 + signal if killed). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "gp/trace_schema.h"
#include "opt.h"

#include "gp/fs.h"
#include "run_analysis.h"

#define MAX_TRACES 1024

static const char *const usage[] = {
        "gprof-train run [profiler options] -- CMD [ARGS...]",
        NULL,
};

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

/* <dir of this binary>/../lib/libgp_prof.so, absolute. */
static int find_library(char *out, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return cli_error("cannot locate the gprof-train binary: %s", strerror(errno));
    exe[n] = '\0';
    char lib[PATH_MAX + 32];
    snprintf(lib, sizeof(lib), "%s/../lib/libgp_prof.so", dirname(exe));
    if (!realpath(lib, out) || strlen(out) >= cap || access(out, R_OK) != 0) {
        cli_error("cannot find the profiler library '%s'", lib);
        cli_hint("build the gp_prof target; gprof-train looks for <bin>/../lib/libgp_prof.so");
        return CLI_ERROR;
    }
    return CLI_OK;
}

/* <out>/<cmd name>-<YYYYmmdd-HHMMSS>, created, absolute. */
static int make_run_dir(const char *out, const char *cmd, char *dir, size_t cap)
{
    char base[256], stamp[32], path[PATH_MAX];
    snprintf(base, sizeof(base), "%s", cmd);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    snprintf(path, sizeof(path), "%s/%s-%s", out, basename(base), stamp);
    gp_error err;
    gp_status rc = gp_mkdir_p(path, &err);
    if (rc != GP_OK)
        return cli_error_from(&err, rc);
    if (!realpath(path, dir) || strlen(dir) >= cap)
        return cli_error("cannot resolve '%s'", path);
    return CLI_OK;
}

/* fork + exec; an exec failure comes back through a close-on-exec pipe. */
static int spawn(const char **cmd, pid_t *pid)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return cli_error("cannot run '%s': %s", cmd[0], strerror(errno));
    *pid = fork();
    if (*pid < 0)
        return cli_error("cannot run '%s': %s", cmd[0], strerror(errno));
    if (*pid == 0) {
        close(fds[0]);
        execvp(cmd[0], (char *const *)cmd);
        int e = errno;
        if (write(fds[1], &e, sizeof(e)) < 0)
            _exit(127);
        _exit(127);
    }
    close(fds[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(fds[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    if (n == (ssize_t)sizeof(e)) {
        waitpid(*pid, NULL, 0);
        cli_error("cannot run '%s': %s", cmd[0], strerror(e));
        return 127;
    }
    return CLI_OK;
}

/* Wait for the child, forwarding SIGINT/SIGTERM. @return its status as a shell reports it. */
static int wait_child(pid_t pid)
{
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    child_pid = pid;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The traces CMD's processes wrote into `dir`, sorted. @return how many. */
static int collect_traces(const char *dir, char **paths, int cap)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < cap;) {
        if (!has_suffix(e->d_name, GP_TRACE_SUFFIX) && !has_suffix(e->d_name, GP_TRACE_SUFFIX_GZ))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if ((paths[n] = malloc(len)) != NULL)
            snprintf(paths[n++], len, "%s/%s", dir, e->d_name);
    }
    if (d)
        closedir(d);
    qsort(paths, (size_t)n, sizeof(*paths), cmp_str);
    return n;
}

static void set_env(const char *lib, const char *dir, int driver_api)
{
    setenv("CUDA_INJECTION64_PATH", lib, 1);
    setenv("NVTX_INJECTION64_PATH", lib, 1);
    setenv("GP_PROF_OUT", dir, 1);
    unsetenv("GP_PROF_NVTX_LINKED"); /* CMD is injected, not linked: its processes record */
    if (driver_api)
        setenv("GP_PROF_DRIVER", "1", 1);
}

static void report(const char *dir, char **paths, int n, int no_report)
{
    int gpu = access("/dev/nvidia0", F_OK) == 0;
    if (!gpu)
        cli_warn("no GPU activity could be recorded: no NVIDIA GPU on this machine (CPU and NVTX "
                 "ranges only)");
    if (n == 0) {
        cli_warn("no trace was written under '%s': the program made no NVTX or CUDA call", dir);
        return;
    }
    fprintf(stderr, "gprof-train: %d trace(s) under '%s'\n", n, dir);
    if (!no_report)
        run_print_analysis((const char *const *)paths, n);
}

void run_exec_options(struct run_exec_opts *v, struct opt *t)
{
    const struct opt opts[RUN_EXEC_N_OPTS] = {
            OPT_GROUP("profiler options (gprof-train run [profiler options] -- CMD [ARGS...]):"),
            OPT_STR('o', "out", &v->out, "DIR",
                    "write traces under DIR/<cmd>-<date-time>/ (default runs)"),
            OPT_BOOL(0, "no-report", &v->no_report, "skip the report and diagnosis at the end"),
            OPT_BOOL(0, "driver-api", &v->driver_api, "also record CUDA driver API calls"),
            OPT_END(),
    };
    memcpy(t, opts, sizeof(opts));
}

int cmd_run_exec(int argc, const char **argv)
{
    struct run_exec_opts v = {"runs", 0, 0};
    struct opt opts[RUN_EXEC_N_OPTS];
    run_exec_options(&v, opts);
    const struct opt_help help = {
            "run", usage,
            "Run CMD with libprof injected (CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH): CPU\n"
            "ranges from NVTX and, on a GPU, kernels, copies, syncs and memory. One trace per "
            "process.\n"
            "The exit status is CMD's.",
            NULL, NULL};
    int n = opt_parse(argc, argv, opts, &help, OPT_KEEP_DASHDASH);
    if (n < 0)
        return opt_exit_code(n);
    int dash = 0;
    while (dash < n && strcmp(argv[dash], "--") != 0)
        dash++;
    if (dash > 0)
        return cli_error("unexpected argument '%s' before '--'", argv[0]);
    if (dash + 1 >= n) {
        cli_error("no command to run after '--'");
        cli_hint("gprof-train run -- python3 train.py");
        return CLI_ERROR;
    }
    const char **cmd = calloc((size_t)(n - dash), sizeof(*cmd));
    if (!cmd)
        return cli_error("out of memory");
    for (int i = dash + 1; i < n; i++)
        cmd[i - dash - 1] = argv[i];
    char lib[PATH_MAX], dir[PATH_MAX];
    int rc = find_library(lib, sizeof(lib));
    if (rc == CLI_OK)
        rc = make_run_dir(v.out, cmd[0], dir, sizeof(dir));
    pid_t pid = 0;
    if (rc == CLI_OK) {
        set_env(lib, dir, v.driver_api);
        rc = spawn(cmd, &pid);
        if (rc != CLI_OK)
            rmdir(dir); /* nothing ran: leave no empty run folder */
    }
    if (rc == CLI_OK) {
        rc = wait_child(pid);
        char *paths[MAX_TRACES];
        int nt = collect_traces(dir, paths, MAX_TRACES);
        report(dir, paths, nt, v.no_report);
        for (int i = 0; i < nt; i++)
            free(paths[i]);
    }
    free(cmd);
    return rc;
}
