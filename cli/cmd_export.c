/* gprof-train export: write a trace for TensorBoard, Perfetto, or as a self-contained HTML report.
 * Reads the trace, analyses it, runs the diagnosis (findings become Perfetto annotations and the
 * HTML report's findings section), then writes each requested output and prints its path. */
#include "cli.h"
#include "cmds.h"
#include "gp/export.h"
#include "opt.h"
#include "trace_jobs.h"

#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file an export is writing, removed by the handler of the stop signals (Ctrl-C,
 * kill, a closed terminal) before the process dies of the signal as it would have. */
static char temp_path[4200];
static volatile sig_atomic_t temp_live;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (sizeof stop_signals / sizeof *stop_signals)

static void note_temp(const char *path, void *ud)
{
    (void)ud;
    temp_live = 0;
    atomic_signal_fence(memory_order_seq_cst);
    if (!path)
        return;
    snprintf(temp_path, sizeof temp_path, "%s", path);
    atomic_signal_fence(memory_order_seq_cst);
    temp_live = 1;
}

static void remove_temp_and_die(int sig)
{
    if (temp_live)
        unlink(temp_path);
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns */
}

static void catch_stop_signals(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temp_and_die;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_STOP_SIGNALS; i++)
        sigaction(stop_signals[i], &sa, &old[i]);
}

static void restore_stop_signals(const struct sigaction *old)
{
    for (size_t i = 0; i < N_STOP_SIGNALS; i++)
        sigaction(stop_signals[i], &old[i], NULL);
}

static const char *const usage[] = {
        "gprof-train export TRACE --tensorboard LOGDIR [--run NAME]",
        "gprof-train export TRACE --perfetto OUT.json[.gz]|OUT.pftrace [--format json|proto]",
        "gprof-train export TRACE --html OUT.html",
        NULL,
};

struct export_args {
    const char *trace, *tb, *run, *perfetto, *html;
    int perfetto_proto; /* Perfetto's protobuf rather than JSON */
};

/* The default run name: the trace's file name without ".pt.trace.json[.gz]" or ".json[.gz]". */
static void default_run(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    snprintf(out, cap, "%s", b ? b + 1 : path);
    static const char *const suffixes[] = {".gz", ".json", ".trace", ".pt"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t n = strlen(out), m = strlen(suffixes[i]);
        if (n > m && strcmp(out + n - m, suffixes[i]) == 0)
            out[n - m] = 0;
    }
}

/* Name each output written; one written to stdout ("-") is the output itself. */
static void say_written(const char *what, const char *path)
{
    if (strcmp(path, "-") != 0)
        printf("%s: %s\n", what, path);
}

/* The options for one output: "-" is stdout, written in place and named so in errors. */
static gp_export_opts for_output(const gp_export_opts *eo, const char *path)
{
    gp_export_opts o = *eo;
    if (strcmp(path, "-") == 0)
        o.stream = stdout;
    return o;
}

static int write_outputs(const struct export_args *x, const gp_analysis *a,
                         const gp_export_opts *eo)
{
    gp_error err;
    gp_status rc;
    if (x->perfetto) {
        gp_export_opts po = for_output(eo, x->perfetto);
        rc = x->perfetto_proto ? gp_export_perfetto_proto(a, &po, x->perfetto, &err)
                               : gp_export_perfetto(a, &po, x->perfetto, &err);
        if (rc != GP_OK)
            return cli_error_from(&err, rc);
        say_written("perfetto", x->perfetto);
    }
    if (x->tb) {
        char run[256], path[4600];
        default_run(x->trace, run, sizeof run);
        rc = gp_export_tensorboard(a, eo, x->tb, x->run ? x->run : run, path, sizeof path, &err);
        if (rc != GP_OK)
            return cli_error_from(&err, rc);
        printf("tensorboard: %s\n", path);
    }
    if (x->html) {
        gp_export_opts ho = for_output(eo, x->html);
        if ((rc = gp_export_html(a, &ho, x->html, &err)) != GP_OK)
            return cli_error_from(&err, rc);
        say_written("html", x->html);
    }
    return CLI_OK;
}

/* Where `path` is or would be: its folder's real path and its name ("" when the folder is not
 * there). */
static void place_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    if (!realpath(dir, real))
        real[0] = 0;
    snprintf(buf, cap, "%s/%s", real, slash ? slash + 1 : path);
}

/* Whether a and b name one file: the same inode when both exist, else the same place. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea || eb)
        return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char pa[2 * PATH_MAX], pb[2 * PATH_MAX];
    place_of(a, pa, sizeof pa);
    place_of(b, pb, sizeof pb);
    return strcmp(pa, pb) == 0;
}

/* Refuse an output that would replace the trace or the other output. */
static int check_outputs(const struct export_args *x)
{
    const char *const out[] = {x->perfetto, x->html};
    const char *const opt[] = {"--perfetto", "--html"};
    for (int i = 0; i < 2; i++) {
        if (!out[i] || !strcmp(out[i], "-"))
            continue;
        if (same_file(out[i], x->trace))
            return cli_error("%s '%s' is the trace being read: it would be replaced", opt[i],
                             out[i]);
        if (i == 1 && out[0] && strcmp(out[0], "-") && same_file(out[0], out[1]))
            return cli_error("--perfetto and --html both name '%s': give each its own file",
                             out[1]);
    }
    return CLI_OK;
}

struct export_use {
    const struct export_args *x;
    struct trace_warnings w;
    int code; /* write_outputs' */
};

/* The trace's warnings come first, as soon as it is read. */
static void export_opened(const gp_trace *t, void *ud)
{
    struct export_use *u = ud;
    (void)t;
    trace_warnings_print(&u->w, u->x->trace);
    trace_warnings_release(&u->w);
}

/* Diagnose the analysis (for the outputs that show findings), then write the outputs. */
static gp_status export_use(const gp_analysis *a, void *ud, gp_error *err)
{
    struct export_use *u = ud;
    gp_findings *f = NULL;
    gp_status rc = u->x->perfetto || u->x->html ? gp_rules_run(NULL, a, &f, err) : GP_OK;
    if (rc == GP_OK) {
        gp_export_opts eo = {.findings = f, .temp_file = note_temp};
        struct sigaction old[N_STOP_SIGNALS];
        catch_stop_signals(old);
        u->code = write_outputs(u->x, a, &eo);
        restore_stop_signals(old);
    }
    gp_findings_free(f);
    return rc;
}

/* Read, analyse and diagnose the trace, then write the outputs. */
static int run_export(const struct export_args *x)
{
    gp_error err;
    struct export_use u = {.x = x};
    const struct trace_steps steps = {export_opened, export_use};
    gp_status rc = trace_pipeline(x->trace, &u.w, &steps, &u, &err);
    return rc == GP_OK ? u.code : cli_error_from(&err, rc);
}

/* --perfetto's format: --format when given, else from OUT's name. */
static int perfetto_format(struct export_args *x, const char *format)
{
    if (format && !x->perfetto)
        cli_warn("--format is used only with --perfetto");
    if (format && strcmp(format, "json") != 0 && strcmp(format, "proto") != 0) {
        cli_error("--format must be json or proto, not '%s'", format);
        return CLI_ERROR;
    }
    x->perfetto_proto = format ? strcmp(format, "proto") == 0
                               : x->perfetto && gp_export_perfetto_is_proto_name(x->perfetto);
    return CLI_OK;
}

int cmd_export(int argc, const char **argv)
{
    const char *max_memory = NULL, *format = NULL;
    struct export_args x = {0};
    const struct opt opts[] = {
            OPT_GROUP("outputs (one or more):"),
            OPT_STR(0, "tensorboard", &x.tb, "LOGDIR", "a run directory for torch-tb-profiler"),
            OPT_STR(0, "run", &x.run, "NAME",
                    "the run's name under LOGDIR (default: the trace's name)"),
            OPT_STR(0, "perfetto", &x.perfetto, "OUT",
                    "a trace for ui.perfetto.dev, findings as a track ('-': stdout): Perfetto's "
                    "protobuf when OUT ends in .pftrace or .perfetto-trace, else Chrome JSON"),
            OPT_STR(0, "format", &format, "json|proto",
                    "the --perfetto format, whatever OUT's name"),
            OPT_STR(0, "html", &x.html, "OUT",
                    "a self-contained HTML report with charts and findings ('-': stdout)"),
            OPT_MAX_MEMORY(&max_memory),
            OPT_END(),
    };
    const struct opt_help help = {
            "export", usage,
            "Write what viewers open, from a gprof-train or PyTorch profiler trace (a file, or a "
            "run\n"
            "folder that holds one trace, or a folder of run folders: its newest run).",
            "examples:\n"
            "    gprof-train export trace.json.gz --tensorboard tb/ && tensorboard --logdir tb/\n"
            "    gprof-train export trace.json.gz --html report.html\n",
            NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (cli_set_max_memory(max_memory) != CLI_OK)
        return CLI_ERROR;
    if (n != 1) {
        if (n == 0)
            cli_error("no trace given");
        else
            cli_error("export takes one trace, got %d", n);
        if (n > 1) /* the ranks of a job */
            cli_hint("several ranks of one job on one timeline or page: gprof-train job "
                     "TRACE... --perfetto OUT.pftrace --html OUT.html");
        else
            cli_hint("usage: %s", usage[0]);
        return CLI_ERROR;
    }
    if (!x.tb && !x.perfetto && !x.html) {
        cli_error("nothing to write");
        cli_hint("give --tensorboard LOGDIR, --perfetto OUT or --html OUT");
        return CLI_ERROR;
    }
    if (x.perfetto && x.html && !strcmp(x.perfetto, "-") && !strcmp(x.html, "-")) {
        cli_error("--perfetto and --html cannot both go to stdout ('-')");
        return CLI_ERROR;
    }
    if (perfetto_format(&x, format) != CLI_OK)
        return CLI_ERROR;
    if (x.run && !x.tb)
        cli_warn("--run is used only with --tensorboard");
    struct trace_paths paths = {.runs = TRACE_RUNS_NEWEST};
    int rc = trace_paths_expand(&paths, argv, 1);
    if (rc == CLI_OK && paths.n != 1) {
        rc = cli_error("'%s' holds %zu traces; export takes one", argv[0], paths.n);
        cli_hint("name one of them, e.g. '%s'; the ranks of one job: gprof-train job '%s' "
                 "--perfetto OUT.pftrace --html OUT.html",
                 paths.v[0], argv[0]);
    }
    if (rc == CLI_OK) {
        x.trace = paths.v[0];
        rc = check_outputs(&x);
    }
    if (rc == CLI_OK)
        rc = run_export(&x);
    trace_paths_release(&paths);
    return rc;
}
