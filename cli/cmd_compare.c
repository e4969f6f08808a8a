/* gprof-train compare BASE NEW | BASE... --vs NEW...: what changed between two sets of runs
 * (issues 14, 24): step time with a verdict that takes runs as the unit, the breakdown, the rows
 * that moved, peak memory and the findings resolved, new and still there. --fail-if-slower
 * makes it a CI gate. */
#include "cli.h"
#include "cmds.h"
#include "compare_runs.h"
#include "opt.h"

#include "gp/compare.h"
#include "gp/export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {
        "gprof-train compare [options] BASE NEW",
        "gprof-train compare [options] BASE... --vs NEW...",
        NULL,
};

struct side_job {
    const char *path;
    gp_compare_side side;
    size_t run;
    gp_compare_part *part;
    gp_status rc;
    gp_error err;
    struct trace_warnings warnings;
};

static gp_status summarise(const gp_analysis *a, void *ud, gp_error *err)
{
    return gp_compare_part_new(a, NULL, &((struct side_job *)ud)->part, err);
}

static void summarise_one(size_t i, void *ud)
{
    struct side_job *j = &((struct side_job *)ud)[i];
    j->rc = trace_analysed(j->path, &j->warnings, summarise, j, &j->err);
}

/* Hand batch js[0..n) to `c` in order (each part is folded in and mostly freed there).
 * @return CLI_OK or the first error (printed); later parts are freed. */
static int hand_over(gp_compare *c, struct side_job *js, size_t n, int rc)
{
    for (size_t i = 0; i < n; i++) {
        gp_error err;
        trace_warnings_print(&js[i].warnings, js[i].path);
        if (rc == CLI_OK && js[i].rc != GP_OK)
            rc = cli_error_from(&js[i].err, js[i].rc);
        else if (rc == CLI_OK && gp_compare_add_run(c, js[i].side, js[i].run, js[i].path,
                                                    js[i].part, &err) != GP_OK)
            rc = cli_error_from(&err, GP_ENOMEM);
        else if (rc != CLI_OK)
            gp_compare_part_free(js[i].part);
        trace_warnings_release(&js[i].warnings);
    }
    return rc;
}

/* Read the traces of both sides (BASE first) into `c`, a batch of a few per thread at a time, so
 * that a side of 10,000 traces holds a batch of full summaries, not all of them. */
static int gather(gp_compare *c, const struct compare_side *side, long threads)
{
    size_t n = side[0].paths.n + side[1].paths.n, batch = (size_t)(threads > 0 ? threads : 1) * 4;
    struct side_job *js = calloc(batch, sizeof(*js));
    if (!js)
        return cli_error("out of memory");
    int rc = CLI_OK;
    for (size_t first = 0; first < n && rc == CLI_OK; first += batch) {
        size_t m = n - first < batch ? n - first : batch;
        memset(js, 0, batch * sizeof(*js));
        for (size_t i = 0; i < m; i++) {
            size_t k = first + i;
            int s = k >= side[0].paths.n;
            k = s ? k - side[0].paths.n : k;
            js[i].path = side[s].paths.v[k];
            js[i].run = side[s].run[k];
            js[i].side = s ? GP_CMP_NEW : GP_CMP_BASE;
        }
        trace_jobs_run(m, threads, summarise_one, js);
        rc = hand_over(c, js, m, rc);
    }
    free(js);
    return rc;
}

/* The CI gate: a slowdown beyond `pct` that is more than run-to-run variation (the verdict's
 * test), or untested (too few steps). */
static int gate(const gp_compare_steps *r, double pct)
{
    if (isnan(pct) || r->change_pct <= pct ||
        (r->verdict != GP_VERDICT_SLOWER && r->verdict != GP_VERDICT_TOO_FEW))
        return CLI_OK;
    fprintf(stderr,
            "gprof-train: NEW is %.1f%% slower than BASE (mean step), over the %g%% "
            "allowed by --fail-if-slower\n",
            r->change_pct, pct);
    return CLI_FINDINGS;
}

/* Text and JSON come from analyze, the HTML page from viewer-export; all go to stdout. */
static gp_status write_out(const gp_compare *c, int html, gp_compare_format fmt, size_t top,
                           gp_error *err)
{
    if (!html)
        return gp_compare_write(stdout, c, fmt, top, err);
    gp_export_opts eo = {.stream = stdout};
    return gp_export_compare_html(c, top, &eo, "stdout", err);
}

struct compare_opts {
    int html;
    gp_compare_format fmt;
    size_t top;
    double fail_pct, run_noise;
    long threads;
};

static int run_compare(const struct compare_side *side, const struct compare_opts *o)
{
    gp_compare *c = NULL;
    gp_error err;
    gp_status st = gp_compare_new(&c, &err);
    if (st == GP_OK)
        gp_compare_set_run_noise(c, o->run_noise);
    int rc = st == GP_OK ? gather(c, side, o->threads) : cli_error_from(&err, st);
    if (rc == CLI_OK && (st = gp_compare_finish(c, &err)) == GP_OK)
        st = write_out(c, o->html, o->fmt, o->top, &err);
    if (rc == CLI_OK && st != GP_OK)
        rc = cli_error_from(&err, st);
    if (rc == CLI_OK)
        rc = gate(gp_compare_step_result(c), o->fail_pct);
    gp_compare_free(c);
    return rc;
}

/* `html` is viewer-export's page, the other formats analyze's (gp_compare_format_parse). */
static int check_args(const char *format, struct compare_opts *o)
{
    gp_error err;
    gp_status st = o->html ? GP_OK : gp_compare_format_parse(format, &o->fmt, &err);
    if (st == GP_EINVAL)
        return cli_error("unknown format '%s': use text, json or html", format);
    if (st != GP_OK)
        return cli_error_from(&err, st);
    if (!isnan(o->fail_pct) && !(o->fail_pct >= 0 && isfinite(o->fail_pct)))
        return cli_error("--fail-if-slower takes a percentage of 0 or more, not %g", o->fail_pct);
    if (!(o->run_noise >= 0 && isfinite(o->run_noise)))
        return cli_error("--run-noise takes a percentage of 0 or more, not %g", o->run_noise);
    return CLI_OK;
}

/* "--vs" can sit among the options: it is swapped for this marker, which opt_parse keeps in place
 * among the positional arguments (it does not start with '-'). */
static const char vs_marker[] = "\001--vs";

static int mark_vs(int argc, const char **argv)
{
    int marks = 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--vs") == 0)
            argv[i] = vs_marker, marks++;
    return marks;
}

/* Split the n positional arguments into BASE's and NEW's. */
static int split_sides(const char **argv, int n, int marks, int *n_base)
{
    int at = -1;
    for (int i = 0; i < n; i++)
        at = argv[i] == vs_marker ? i : at;
    if (marks > 1)
        return cli_error("--vs given %d times: BASE... --vs NEW... takes it once", marks);
    *n_base = at >= 0 ? at : 1;
    if (at < 0 && n == 2)
        return CLI_OK;
    if (at > 0 && at < n - 1)
        return CLI_OK;
    if (at >= 0)
        cli_error("--vs needs runs on both sides: BASE... --vs NEW...");
    else
        cli_error(n < 2 ? "compare needs two traces or run folders, BASE and NEW"
                        : "compare takes two arguments, BASE and NEW; got %d (several runs a "
                          "side: BASE... --vs NEW...)",
                  n);
    cli_hint("gprof-train compare BASE NEW (each a trace file, a run folder or a folder of run "
             "folders), or BASE... --vs NEW...");
    return CLI_ERROR;
}

static const char compare_summary[] =
        "Compare two sets of runs: step time (mean, p50, p95), the step-time breakdown, the\n"
        "key-averages ops and the kernels that moved most per step (new and vanished ones too),\n"
        "peak device memory, and the findings resolved, new and still there, with each resolved\n"
        "finding's predicted gain beside the measured one. Works on PyTorch traces as on ours.\n"
        "BASE and NEW are each a trace file (one run), a run folder (one run: its traces are the\n"
        "ranks or processes of one run, pooled) or a folder of run folders (as run -o DIR and\n"
        "sweep leave them: one run per folder); BASE... --vs NEW... gives several a side.\n\n"
        "Runs are the unit: identical runs differ by more than the steps within one run\n"
        "suggest, so each run counts as one value, its typical step (upper quartile: spikes\n"
        "and a busy machine's quiet moments move it least), and the verdict is 'faster' or\n"
        "'slower' only when the change of the typical step exceeds the smallest change the\n"
        "runs can detect (printed): Student's t on the runs (a run far from the others of its\n"
        "side weighs less: Huber's estimate), their spread pooled with a prior worth 4 runs\n"
        "for how much identical runs differ (--run-noise, measured here);\n"
        "else 'no clear change'. With one run a side, changes under that figure can't be told\n"
        "from run-to-run variation. Each trace's first step (warm-up) is left out, as diagnose\n"
        "does; with fewer than 3 steps a side nothing is tested. Exit status: 0; 1 when\n"
        "--fail-if-slower trips; 2 on error.";

int cmd_compare(int argc, const char **argv)
{
    const char *max_memory = NULL;
    const char *format = "text";
    struct compare_opts o = {.fail_pct = NAN, .run_noise = GP_COMPARE_RUN_NOISE_PCT};
    long top = 10;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('f', "format", &format, "FMT",
                    "text (default), json, or html (one self-contained page, as export --html)"),
            OPT_INT(0, "top", &top, "N", "list the N ops and N kernels that moved most (10)", 1,
                    100000),
            OPT_DOUBLE(0, "fail-if-slower", &o.fail_pct, "PCT",
                       "exit 1 when NEW's mean step is over PCT% slower and the verdict is "
                       "'slower'"),
            OPT_DOUBLE(0, "run-noise", &o.run_noise, "PCT",
                       "the change one run against one run cannot tell from run-to-run "
                       "variation (default 18: back-to-back identical runs of the bundled "
                       "trainer on the shared 2-core VM differed by up to ~18%; measure yours)"),
            OPT_JOBS(&o.threads),
            OPT_MAX_MEMORY(&max_memory),
            OPT_END(),
    };
    const struct opt_help help = {
            "compare", usage, compare_summary,
            "examples:\n"
            "    gprof-train compare runs/mlp-baseline/ runs/mlp-workers4/\n"
            "    gprof-train compare runs-base/ runs-new/          # folders of run folders\n"
            "    gprof-train compare a1.json.gz a2.json.gz a3.json.gz --vs b1.json.gz b2.json.gz\n"
            "    gprof-train compare before.pt.trace.json after.pt.trace.json --format json\n"
            "    gprof-train compare main.json.gz pr.json.gz --fail-if-slower 5\n",
            NULL};
    int marks = mark_vs(argc, argv), n_base = 1;
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (cli_set_max_memory(max_memory) != CLI_OK)
        return CLI_ERROR;
    o.html = strcmp(format, "html") == 0;
    o.top = (size_t)top;
    struct compare_side side[2];
    memset(side, 0, sizeof(side));
    int rc = check_args(format, &o);
    if (rc == CLI_OK)
        rc = split_sides(argv, n, marks, &n_base);
    int skip = n_base < n && argv[n_base] == vs_marker; /* the marker between the sides */
    if (rc == CLI_OK)
        rc = compare_side_expand(&side[0], argv, n_base);
    if (rc == CLI_OK)
        rc = compare_side_expand(&side[1], argv + n_base + skip, n - n_base - skip);
    if (rc == CLI_OK)
        rc = run_compare(side, &o);
    compare_side_release(&side[0]);
    compare_side_release(&side[1]);
    return rc;
}
