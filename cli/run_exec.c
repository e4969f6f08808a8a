/* gprof-train run [options] -- CMD ARGS...: run any program with libprof injected
 * (CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH point at lib/libgp_prof.so next to this
 * binary; GP_PROF_OUT tells every process where to write its trace, in a folder of its own),
 * forward SIGINT/SIGTERM/SIGHUP/SIGQUIT, then print the analysis of each trace and, last, how
 * CMD ended and what each trace holds (a .tmp left by a process that died counts; a trace lost
 * to an I/O error is said). The exit status is CMD's (128 + signal if killed). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "gp/trace_schema.h"
#include "opt.h"

#include "gp/fs.h"
#include "run_analysis.h"
#include "run_child.h"
#include "run_torch.h"
#include "trace_jobs.h"

#define MAX_TRACES 1024

static const char *const usage[] = {
        "gprof-train run [profiler options] -- CMD [ARGS...]",
        NULL,
};

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

/* <out>/<cmd name>-<YYYYmmdd-HHMMSS>[-N], created (a new folder: two runs started in the same
 * second get -2, -3, ... as the trainer's runs do), absolute. */
static int make_run_dir(const char *out, const char *cmd, char *dir, size_t cap)
{
    char base[256], stamp[32], path[PATH_MAX];
    snprintf(base, sizeof(base), "%s", cmd);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    gp_error err;
    gp_status rc = gp_mkdir_p(out, &err);
    if (rc != GP_OK)
        return cli_error_from(&err, rc);
    int made = -1;
    for (int k = 1; made != 0 && k < 1000; k++) {
        int n = k == 1 ? snprintf(path, sizeof(path), "%s/%s-%s", out, basename(base), stamp)
                       : snprintf(path, sizeof(path), "%s/%s-%s-%d", out, basename(base), stamp, k);
        if (n >= (int)sizeof(path))
            return cli_error("output path too long under '%s'", out);
        if ((made = mkdir(path, 0777)) != 0 && errno != EEXIST)
            return cli_error("cannot create '%s': %s", path, strerror(errno));
    }
    if (made != 0)
        return cli_error("cannot create a run folder under '%s': 999 exist for this second", out);
    if (!realpath(path, dir) || strlen(dir) >= cap)
        return cli_error("cannot resolve '%s'", path);
    return CLI_OK;
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
        if (!trace_name_wanted(dirfd(d), e->d_name, 0))
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

/* Watch `dir` for the .tmp files the profiler creates, so that a trace it started and then
 * removed (libprof deletes its .tmp when a write fails: a full disk) can be told from no trace
 * at all. @return an inotify descriptor, or -1 (then nothing is told apart). */
static int watch_dir(const char *dir)
{
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd >= 0 && inotify_add_watch(fd, dir, IN_CREATE) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The first trace the profiler started in `dir` that is gone now, neither finished nor left as
 * a .tmp (copied to `lost`). @return 1 if there is one. */
static int lost_trace(int fd, const char *dir, char *lost, size_t cap)
{
    _Alignas(struct inotify_event) char buf[16384];
    ssize_t n;
    while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
            p += sizeof(*ev) + ev->len;
            char tmp[PATH_MAX], done[PATH_MAX];
            if (!ev->len || !has_suffix(ev->name, ".tmp"))
                continue;
            snprintf(tmp, sizeof(tmp), "%s/%s", dir, ev->name);
            snprintf(done, sizeof(done), "%.*s", (int)strlen(tmp) - 4, tmp);
            if (access(tmp, F_OK) != 0 && access(done, F_OK) != 0) {
                snprintf(lost, cap, "%s", done);
                return 1;
            }
        }
    }
    return 0;
}

static void set_env(const char *lib, const char *dir, int driver_api)
{
    if (!lib)
        return; /* torch.profiler: Kineto owns CUPTI, libprof stays out */
    setenv("CUDA_INJECTION64_PATH", lib, 1);
    setenv("NVTX_INJECTION64_PATH", lib, 1);
    setenv("GP_PROF_OUT", dir, 1);
    unsetenv("GP_PROF_NVTX_LINKED"); /* CMD is injected, not linked: its processes record */
    if (driver_api)
        setenv("GP_PROF_DRIVER", "1", 1);
}

/* No trace in `dir`: say why, and never "no call" when the profiler did start one. */
static void no_trace(const char *dir, int watch, int torch)
{
    char lost[PATH_MAX];
    if (torch) {
        cli_warn("torch.profiler wrote no trace under '%s' (see the program's messages above)",
                 dir);
        cli_hint("a script that runs few steps: --schedule wait=0,warmup=0,active=1");
        return;
    }
    if (!lost_trace(watch, dir, lost, sizeof(lost))) {
        cli_warn("no trace was written under '%s': the program made no NVTX or CUDA call", dir);
        return;
    }
    struct statvfs vfs;
    int full = statvfs(dir, &vfs) == 0 && (unsigned long long)vfs.f_bavail * vfs.f_frsize < 1 << 20;
    cli_warn("the profiler started the trace '%s' but could not write it, and removed it: %s", lost,
             full ? "the disk is full"
                  : "an I/O error (a full disk or a file size limit: see the program's "
                    "'cannot write trace' message above)");
    cli_hint("free some space under '%s' (or use -o DIR elsewhere) and run again", dir);
}

/* Under torchrun: the job view of the rank traces in `dir`. */
static void job_view(const char *dir)
{
    const char *argv[] = {"job", dir, NULL};
    fputc('\n', stdout);
    fflush(stdout);
    cmd_job(2, argv);
    fflush(stdout);
}

/* After CMD ended: the analysis, then how CMD ended and what each trace holds. */
static void report(const char *dir, const char *cmd, int status, int watch,
                   const struct run_exec_opts *v, int torch)
{
    char *paths[MAX_TRACES];
    int n = collect_traces(dir, paths, MAX_TRACES);
    struct run_trace_note *notes = calloc(n ? (size_t)n : 1, sizeof(*notes));
    if (access("/dev/nvidia0", F_OK) != 0)
        cli_warn(torch ? "no NVIDIA GPU on this machine: torch.profiler recorded CPU activity only"
                       : "no GPU activity could be recorded: no NVIDIA GPU on this machine (CPU "
                         "and NVTX ranges only)");
    if (notes)
        run_print_analysis((const char *const *)paths, n,
                           v->no_report ? RUN_NO_REPORT : RUN_REPORT_BRIEF, notes);
    if (torch && n > 1 && !v->no_report && run_torch_has_ranks(dir))
        job_view(dir);
    run_child_describe(cmd, status);
    if (n == 0)
        no_trace(dir, watch, torch);
    const char *name = strrchr(cmd, '/') ? strrchr(cmd, '/') + 1 : cmd;
    if (n == 0 && !torch && strncmp(name, "python", 6) == 0)
        cli_hint("a PyTorch script whose modules import torch, not the script itself: "
                 "gprof-train run --torch -- %s ...",
                 cmd);
    else
        fprintf(stderr, "gprof-train: %d trace(s) under '%s'\n", n, dir);
    if (notes)
        run_print_notes(notes, n);
    free(notes);
    for (int i = 0; i < n; i++)
        free(paths[i]);
}

void run_exec_options(struct run_exec_opts *v, struct opt *t)
{
    const struct opt opts[RUN_EXEC_N_OPTS] = {
            OPT_GROUP("profiler options (gprof-train run [profiler options] -- CMD [ARGS...]):"),
            OPT_STR('o', "out", &v->out, "DIR",
                    "write traces under DIR/<cmd>-<date-time>/ (default runs)"),
            OPT_BOOL(0, "no-report", &v->no_report, "skip the report and diagnosis at the end"),
            OPT_BOOL(0, "driver-api", &v->driver_api, "also record CUDA driver API calls"),
            OPT_STR(0, "buffer-limit", &v->buffer_limit, "SIZE",
                    "memory the profiler may hold records in before it drops "
                    "them: bytes, or with K, M, G (e.g. 512M; "
                    "default 1G "
                    "or 1/8 of RAM if less; sets "
                    "GP_PROF_BUFFER_LIMIT)"),
            OPT_BOOL(0, "torch", &v->torch,
                     "(negatable) profile CMD with torch.profiler, not libprof (default when CMD "
                     "is python* running a script that imports torch, or torchrun)"),
            OPT_STR(0, "schedule", &v->schedule, "SPEC",
                    "torch.profiler steps: wait=W,warmup=U,active=A,repeat=R (default "
                    "wait=2,warmup=1,active=20,repeat=1; a step per optimizer step)"),
            OPT_BOOL(0, "record-shapes", &v->record_shapes, "torch: record input shapes"),
            OPT_BOOL(0, "profile-memory", &v->profile_memory, "torch: record tensor memory"),
            OPT_BOOL(0, "with-stack", &v->with_stack, "torch: record Python stacks"),
            OPT_END(),
    };
    memcpy(t, opts, sizeof(opts));
}

/* CMD = argv after "--". @return CLI_OK, or an exit code with the message printed. */
static int split_cmd(int n, const char **argv, const char ***cmd)
{
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
    if (!(*cmd = calloc((size_t)(n - dash), sizeof(**cmd))))
        return cli_error("out of memory");
    for (int i = dash + 1; i < n; i++)
        (*cmd)[i - dash - 1] = argv[i];
    return CLI_OK;
}

/* Make the run folder, start CMD with the profiler injected, wait, report. */
static int run_cmd(const struct run_exec_opts *v, const char **cmd)
{
    char lib[PATH_MAX], dir[PATH_MAX];
    int torch = run_torch_wanted(v, cmd);
    int rc = torch ? CLI_OK : find_library(lib, sizeof(lib));
    if (rc == CLI_OK)
        rc = make_run_dir(v->out, cmd[0], dir, sizeof(dir));
    if (rc == CLI_OK && torch && (rc = run_torch_set_env(v, dir)) != CLI_OK)
        rmdir(dir);
    if (rc != CLI_OK)
        return rc;
    set_env(torch ? NULL : lib, dir, v->driver_api);
    int watch = watch_dir(dir);
    struct run_child child;
    if ((rc = run_child_start(&child, cmd)) != CLI_OK) {
        rmdir(dir); /* nothing ran: leave no empty run folder */
    } else {
        int status;
        rc = run_child_wait(&child, &status);
        report(dir, cmd[0], status, watch, v, torch);
    }
    if (watch >= 0)
        close(watch);
    return rc;
}

int cmd_run_exec(int argc, const char **argv)
{
    struct run_exec_opts v = {.out = "runs", .torch = -1};
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
    const char **cmd = NULL;
    int rc = split_cmd(n, argv, &cmd);
    if (rc == CLI_OK)
        rc = run_set_buffer_limit(v.buffer_limit);
    if (rc == CLI_OK)
        rc = run_torch_check_schedule(v.schedule);
    if (rc == CLI_OK)
        rc = run_cmd(&v, cmd);
    free(cmd);
    return rc;
}
