/* gprof-train sweep: run the bundled trainer, or any program from a -- CMD template, over a grid
 * of settings (issue 14 item 2). Each setting gets timed runs without the profiler (--repeat, in
 * alternating order) and one short profiled window whose diagnosis says what the baseline's
 * findings predicted; the table sets each prediction beside what the other settings measured. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"
#include "run_child.h"
#include "sweep_int.h"
#include "trace_jobs.h"

#include "gp/fs.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const usage[] = {
        "gprof-train sweep [options] --vary KEY=V1,V2... [--vary ...]",
        "gprof-train sweep [options] --vary KEY=V1,V2... -- CMD [ARGS with {KEY}...]",
        NULL,
};

/* ---- one setting's folder and runs ---- */

static void folder_name(char *buf, size_t cap, size_t i, const char *label)
{
    int n = snprintf(buf, cap, "%02zu-", i + 1);
    for (const char *p = label; *p && n + 1 < (int)cap && n < 64; p++)
        buf[n++] = (*p == ' ' || *p == '/' || *p == '\\' || (unsigned char)*p < 0x20) ? '_' : *p;
    buf[n] = 0;
}

/* The label shows the keys that vary (a key with one value is fixed, not worth a column). */
static void varying_label(const struct sweep_spec *s, const int *idx, char *buf, size_t cap)
{
    struct sweep_spec shown = {.n_keys = 0};
    int shown_idx[SWEEP_MAX_KEYS];
    for (int k = 0; k < s->n_keys; k++)
        if (s->keys[k].n_values > 1) {
            shown_idx[shown.n_keys] = idx[k];
            shown.keys[shown.n_keys++] = s->keys[k];
        }
    sweep_label(&shown, shown_idx, buf, cap);
}

static char **timed_argv(const struct sweep *s, const int *idx, const char *dir)
{
    if (s->tmpl)
        return sweep_substitute(&s->spec, idx, s->tmpl, s->n_tmpl);
    char steps[32];
    snprintf(steps, sizeof(steps), "%ld", s->steps);
    const char *pre[] = {s->self, "run", "--no-profile", "--no-report",
                         "-o",    dir,   "--steps",      steps};
    return sweep_trainer_argv(&s->spec, idx, pre, s->steps > 0 ? 8 : 6);
}

static char **profiled_argv(const struct sweep *s, const int *idx, const char *dir)
{
    const char *pre[] = {s->self, "run", "--no-report", "-o", dir, "--"};
    if (!s->tmpl) {
        char steps[32];
        snprintf(steps, sizeof(steps), "%ld", s->profile_steps);
        const char *tp[] = {s->self, "run", "--no-report", "-o", dir, "--steps", steps};
        return sweep_trainer_argv(&s->spec, idx, tp, 7);
    }
    char **cmd = sweep_substitute(&s->spec, idx, s->tmpl, s->n_tmpl);
    char **argv = cmd ? calloc((size_t)s->n_tmpl + 7, sizeof(char *)) : NULL;
    int ok = argv != NULL;
    for (int i = 0; ok && i < 6; i++)
        ok = (argv[i] = strdup(pre[i])) != NULL;
    for (int i = 0; ok && i < s->n_tmpl; i++)
        argv[6 + i] = cmd[i], cmd[i] = NULL;
    sweep_argv_free(cmd);
    if (!ok)
        sweep_argv_free(argv);
    return ok ? argv : NULL;
}

/* The time of a finished run: the trainer's training seconds (per epoch without --steps), else
 * the program's wall time. Also keeps the trainer's test accuracy. */
static double run_time(const struct sweep *s, struct sweep_result *r, const char *dir, double wall)
{
    char run[PATH_MAX], summary[PATH_MAX + 16];
    double train_s, epochs = 1, acc;
    if (s->tmpl || sweep_run_dir(dir, run, sizeof(run)) != CLI_OK)
        return wall;
    snprintf(summary, sizeof(summary), "%s/summary.json", run);
    if (!sweep_summary_number(summary, "train_seconds", &train_s))
        return wall;
    if (sweep_summary_number(summary, "test_accuracy", &acc))
        r->accuracy = acc;
    if (s->steps <= 0 && sweep_summary_number(summary, "epochs_done", &epochs) && epochs < 1)
        epochs = 1;
    return train_s / epochs;
}

static void note_failure(struct sweep_result *r, int code, const char *log)
{
    if (r->exit_code == 0) {
        r->exit_code = code;
        snprintf(r->failed_log, sizeof(r->failed_log), "%s", log);
    }
    if (code >= 0)
        cli_warn("'%s' failed (exit %d): see %s", r->label, code, log);
}

/* One run without the profiler into r->dir/NAME (NAME.log): its time is recorded unless
 * `warmup` (a run that only warms the page cache and the CPU's clocks). */
static int timed_run(const struct sweep *s, struct sweep_result *r, const int *idx,
                     const char *name, int warmup)
{
    char dir[PATH_MAX + 192], log[PATH_MAX + 208];
    snprintf(dir, sizeof(dir), "%s/%s", r->dir, name);
    snprintf(log, sizeof(log), "%s/%s.log", r->dir, name);
    gp_error err;
    if (!s->tmpl && gp_mkdir_p(dir, &err) != GP_OK)
        return cli_error_from(&err, GP_EIO);
    char **argv = timed_argv(s, idx, dir);
    if (!argv)
        return cli_error("out of memory");
    double wall = 0;
    int code = sweep_spawn(argv, log, &wall);
    sweep_argv_free(argv);
    if (code == SWEEP_SPAWN_INTERRUPTED) {
        fputs(" interrupted\n", stderr);
        return CLI_ERROR;
    }
    if (code != 0) {
        fputs(" failed\n", stderr);
        note_failure(r, code, log); /* one that could not start: the others may */
        return CLI_OK;
    }
    double t = run_time(s, r, dir, wall);
    if (!warmup)
        r->times[r->n_times++] = t;
    fprintf(stderr, " %.2f s\n", t);
    return CLI_OK;
}

/* ---- the profiled window and its diagnosis ---- */

static gp_status diagnose_use(const gp_analysis *a, void *ud, gp_error *err)
{
    return gp_rules_run(NULL, a, (gp_findings **)ud, err);
}

/* The largest trace of a run folder: the training process's, not a helper's. */
static int largest_trace(const char *run, char *buf, size_t cap)
{
    struct trace_paths p = {0};
    const char *args[] = {run};
    int rc = trace_paths_expand(&p, args, 1);
    off_t best = -1;
    for (size_t i = 0; rc == CLI_OK && i < p.n; i++) {
        struct stat st;
        if (stat(p.v[i], &st) == 0 && st.st_size > best) {
            best = st.st_size;
            snprintf(buf, cap, "%s", p.v[i]);
        }
    }
    trace_paths_release(&p);
    return rc == CLI_OK && best < 0 ? cli_error("no trace in '%s'", run) : rc;
}

static void profiled_window(const struct sweep *s, struct sweep_result *r, const int *idx)
{
    char dir[PATH_MAX + 192], log[PATH_MAX + 208], run[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/profiled", r->dir);
    snprintf(log, sizeof(log), "%s/profiled.log", r->dir);
    char **argv = profiled_argv(s, idx, dir);
    double wall;
    int code = argv ? sweep_spawn(argv, log, &wall) : cli_error("out of memory");
    sweep_argv_free(argv);
    if (code == SWEEP_SPAWN_INTERRUPTED) {
        fputs(" interrupted\n", stderr);
        return;
    }
    if (code != 0) {
        fputs(" failed\n", stderr);
        note_failure(r, code, log);
        return;
    }
    if (sweep_run_dir(dir, run, sizeof(run)) != CLI_OK ||
        largest_trace(run, r->profiled, sizeof(r->profiled)) != CLI_OK) {
        fputs(" no trace\n", stderr);
        r->profiled[0] = 0;
        snprintf(r->no_trace_log, sizeof(r->no_trace_log), "%s", log);
        return;
    }
    struct trace_warnings w = {0};
    gp_error err;
    gp_status st = trace_analysed(r->profiled, &w, diagnose_use, &r->findings, &err);
    trace_warnings_release(&w);
    if (st != GP_OK)
        cli_error_from(&err, st);
    fprintf(stderr, " %s\n", st == GP_OK ? "diagnosed" : "not diagnosed");
}

/* ---- the sweep ---- */

static int prepare(struct sweep *s)
{
    s->n = sweep_n_settings(&s->spec);
    s->res = calloc(s->n, sizeof(*s->res));
    if (!s->res)
        return cli_error("out of memory");
    gp_error err;
    for (size_t i = 0; i < s->n; i++) {
        int idx[SWEEP_MAX_KEYS];
        char name[128];
        struct sweep_result *r = &s->res[i];
        sweep_setting(&s->spec, i, idx);
        varying_label(&s->spec, idx, r->label, sizeof(r->label));
        folder_name(name, sizeof(name), i, r->label);
        snprintf(r->dir, sizeof(r->dir), "%s/%s", s->out, name);
        r->accuracy = NAN;
        if (gp_mkdir_p(r->dir, &err) != GP_OK)
            return cli_error_from(&err, GP_EIO);
    }
    return CLI_OK;
}

/* Untimed runs of the first setting: the first run after a while reads its data from disk and
 * meets idle CPU clocks, which made the baseline of a PNG sweep 4x slower than its repeats. */
static int warm_up(struct sweep *s)
{
    int idx[SWEEP_MAX_KEYS];
    char name[32];
    sweep_setting(&s->spec, 0, idx);
    for (long w = 0; w < s->warmup; w++) {
        fprintf(stderr, "[warm-up] %s: untimed run %ld/%ld...", s->res[0].label, w + 1, s->warmup);
        snprintf(name, sizeof(name), "warmup-%ld", w + 1);
        if (timed_run(s, &s->res[0], idx, name, 1) != CLI_OK || sweep_interrupted())
            return CLI_ERROR;
    }
    return CLI_OK;
}

static int run_all(struct sweep *s)
{
    size_t total = s->n * (size_t)s->repeat, done = 0;
    if (warm_up(s) != CLI_OK)
        return CLI_ERROR;
    for (long rep = 0; rep < s->repeat; rep++)
        for (size_t j = 0; j < s->n; j++) {
            size_t i = rep % 2 ? s->n - 1 - j : j; /* alternate: drift hits every setting */
            int idx[SWEEP_MAX_KEYS];
            sweep_setting(&s->spec, i, idx);
            fprintf(stderr, "[%zu/%zu] %s: timed run %ld/%ld...", ++done, total, s->res[i].label,
                    rep + 1, s->repeat);
            char name[32];
            snprintf(name, sizeof(name), "timed-%ld", rep + 1);
            if (timed_run(s, &s->res[i], idx, name, 0) != CLI_OK || sweep_interrupted())
                return CLI_ERROR;
        }
    for (size_t i = 0; !s->no_profile && i < s->n && !sweep_interrupted(); i++) {
        int idx[SWEEP_MAX_KEYS];
        sweep_setting(&s->spec, i, idx);
        fprintf(stderr, "[%zu/%zu] %s: profiled window...", i + 1, s->n, s->res[i].label);
        profiled_window(s, &s->res[i], idx);
    }
    return CLI_OK;
}

/* Stopped by a signal: which, and what the table and sweep.json will hold. */
static void say_interrupted(const struct sweep *s)
{
    size_t ran = 0;
    for (size_t i = 0; s->res && i < s->n; i++)
        ran += sweep_ran(&s->res[i]);
    const char *name = run_signal_name(s->interrupted);
    fprintf(stderr, "gprof-train: interrupted by %s: %zu of %zu settings finished%s%s\n",
            name ? name : "a signal", ran, s->n, s->res ? "; their results are in " : "",
            s->res ? s->out : "");
}

static void release(struct sweep *s)
{
    for (size_t i = 0; s->res && i < s->n; i++)
        gp_findings_free(s->res[i].findings);
    free(s->res);
    sweep_spec_release(&s->spec);
}

/* ---- options ---- */

static int split_template(struct sweep *s, int n, const char **argv)
{
    int dash = 0;
    while (dash < n && strcmp(argv[dash], "--") != 0)
        dash++;
    if (dash > 0) {
        cli_error("unexpected argument '%s'", argv[0]);
        cli_hint("put the program after '--': gprof-train sweep --vary k=a,b -- CMD ... {k}");
        return CLI_ERROR;
    }
    if (dash < n && dash + 1 >= n)
        return cli_error("no command after '--'");
    s->tmpl = dash < n ? argv + dash + 1 : NULL;
    s->n_tmpl = dash < n ? n - dash - 1 : 0;
    s->spec.trainer = s->tmpl == NULL;
    return CLI_OK;
}

static int add_varies(struct sweep *s, const struct opt_list *vary)
{
    if (vary->n == 0) {
        cli_error("nothing to sweep: give at least one --vary KEY=V1,V2");
        cli_hint("gprof-train sweep --vary workers=0,2,4 --steps 300");
        return CLI_ERROR;
    }
    for (int i = 0; i < vary->n; i++)
        if (sweep_spec_add(&s->spec, vary->items[i]) != CLI_OK)
            return CLI_ERROR;
    if (s->tmpl && sweep_template_check(&s->spec, s->tmpl, s->n_tmpl) != CLI_OK)
        return CLI_ERROR;
    return s->tmpl ? sweep_program_check(s->tmpl[0]) : CLI_OK;
}

static int is_empty_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            break;
    int empty = d && e == NULL;
    if (d)
        closedir(d);
    return empty;
}

/* An existing -o path: an empty folder (or a link to one, or a mount point) is used as it is,
 * its mode kept; anything else is refused, saying what it is. */
static int check_existing_out(const char *out, const struct stat *lst)
{
    struct stat st;
    if (stat(out, &st) != 0)
        return cli_error("'%s' is a symbolic link to nothing (%s)", out, strerror(errno));
    const char *link = S_ISLNK(lst->st_mode) ? " (a symbolic link)" : "";
    if (!S_ISDIR(st.st_mode))
        return cli_error("'%s'%s is %s, not a folder: sweep writes its runs into a new or empty "
                         "folder",
                         out, link, S_ISREG(st.st_mode) ? "a file" : "a device or special file");
    if (!is_empty_dir(out))
        return cli_error("'%s'%s is not empty: sweep writes into a new or empty folder", out, link);
    return access(out, W_OK) == 0 ? CLI_OK
                                  : cli_error("cannot write into '%s': %s", out, strerror(errno));
}

/* The output folder: the one given (absent, or an empty folder), else runs/sweep-<date-time>. */
static int make_out(struct sweep *s, const char *out)
{
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
    /* room for NN-<label>/timed-R/<run>/... under it */
    if (out && strlen(out) + 512 >= sizeof(s->out))
        return cli_error("-o '%.40s...' is too long: %zu bytes, at most %zu", out, strlen(out),
                         sizeof(s->out) - 513);
    if (out)
        snprintf(s->out, sizeof(s->out), "%s", out);
    else
        snprintf(s->out, sizeof(s->out), "runs/sweep-%s", stamp);
    struct stat lst;
    gp_error err;
    if (lstat(s->out, &lst) == 0) {
        if (check_existing_out(s->out, &lst) != CLI_OK)
            return CLI_ERROR;
    } else if (errno != ENOENT) {
        return cli_error("cannot use '%s': %s", s->out, strerror(errno));
    } else if (gp_mkdir_p(s->out, &err) != GP_OK) {
        return cli_error_from(&err, GP_EIO);
    }
    ssize_t len = readlink("/proc/self/exe", s->self, sizeof(s->self) - 1);
    if (len <= 0)
        return cli_error("cannot find the gprof-train binary (/proc/self/exe)");
    s->self[len] = 0;
    return CLI_OK;
}

int cmd_sweep(int argc, const char **argv)
{
    struct opt_list vary = {0};
    const char *out = NULL;
    struct sweep s = {.steps = 0, .profile_steps = 50, .repeat = 1, .warmup = 1};
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_LIST(0, "vary", &vary, "KEY=V1,V2",
                     "a trainer flag (or a {KEY} of CMD) and its values; repeat: "
                     "the grid is every combination"),
            OPT_INT(0, "steps", &s.steps, "N", "trainer: time N steps a run (default: an epoch)", 0,
                    1L << 40),
            OPT_INT(0, "profile-steps", &s.profile_steps, "N",
                    "trainer: steps in the profiled window (default 50)", 2, 1L << 40),
            OPT_INT(0, "repeat", &s.repeat, "N",
                    "timed runs per setting, in alternating order (default 1)", 1,
                    SWEEP_MAX_REPEAT),
            OPT_INT(0, "warmup", &s.warmup, "N",
                    "untimed runs of the first setting before the timed ones (default 1)", 0,
                    SWEEP_MAX_REPEAT),
            OPT_BOOL(0, "no-profile", &s.no_profile, "timed runs only: no profiled window"),
            OPT_STR('o', "out", &out, "DIR",
                    "write the runs here (default runs/sweep-<date-time>)"),
            OPT_END(),
    };
    const struct opt_help help = {
            "sweep", usage,
            "Run the bundled trainer, or any program, over a grid of settings. Each setting gets\n"
            "timed runs without the profiler (its cost never counts; the trainer's training time,\n"
            "else the program's wall time), then one short profiled window that diagnose reads.\n"
            "Prints one table (configuration, time, spread over --repeat, speedup against the\n"
            "first setting, test accuracy where known; 'within noise' when its runs differ\n"
            "from the first setting's by less than they can tell apart: compare's test, runs as\n"
            "the unit, under 5% with one run a side) and, for each finding of the first\n"
            "setting, the gain it predicted beside the gain measured: at the setting that turns\n"
            "the finding's knob (whether or not it still fires there), else the fastest setting\n"
            "where it no longer fires. A key given one value is fixed (--vary device=cpu). The\n"
            "first setting is run once untimed first (--warmup): a first run reads its data\n"
            "from disk.\n"
            "With -- CMD, each {KEY} in an argument is replaced by the setting's value, argument\n"
            "by argument (no shell: spaces and quotes stay; {{KEY}} is a literal {KEY}); its\n"
            "profiled window is one whole run under 'gprof-train run -- CMD'.\n"
            "Every run and sweep.json go to the output folder. Exit status: 0, or 2 on a bad\n"
            "option, when a run fails or a profiled window writes no trace (the table still\n"
            "lists the others), 128 + the signal when interrupted.",
            "examples:\n"
            "    gprof-train sweep --vary workers=0,1,2 --vary pin-memory=off,on --steps 300\n"
            "    gprof-train sweep --vary workers=0,2,4 --vary data=fmnist-png --repeat 3\n"
            "    gprof-train sweep --vary workers=0,2,4 -- python3 train.py --num-workers "
            "{workers}\n",
            NULL};
    int n = opt_parse(argc, argv, opts, &help, OPT_KEEP_DASHDASH);
    if (n < 0)
        return opt_exit_code(n);
    int rc = split_template(&s, n, argv);
    if (rc == CLI_OK)
        rc = add_varies(&s, &vary);
    sweep_signals_on();
    if (rc == CLI_OK && (rc = make_out(&s, out)) == CLI_OK && (rc = prepare(&s)) == CLI_OK)
        rc = run_all(&s);
    s.interrupted = sweep_interrupted();
    if (s.interrupted)
        say_interrupted(&s);
    if (s.res) {
        sweep_print(stdout, &s);
        if (sweep_write_json(&s) != CLI_OK)
            rc = CLI_ERROR;
        for (size_t i = 0; i < s.n; i++)
            rc = s.res[i].exit_code || s.res[i].no_trace_log[0] ? CLI_ERROR : rc;
    }
    sweep_signals_off();
    release(&s);
    return s.interrupted ? 128 + s.interrupted : rc;
}
