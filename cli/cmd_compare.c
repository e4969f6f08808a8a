/* gprof-train compare BASE NEW: what changed between two traces or run folders (issue 14): step
 * time with a verdict that tells a change from noise, the breakdown, the rows that moved, peak
 * memory and the findings resolved, new and still there. --fail-if-slower makes it a CI gate. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"
#include "trace_jobs.h"

#include "gp/compare.h"
#include "gp/export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {
        "gprof-train compare [options] BASE NEW",
        NULL,
};

struct side_job {
    const char *path;
    gp_compare_side side;
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

/* Read the traces of both sides (BASE first) into `c`. */
static int gather(gp_compare *c, const struct trace_paths *side, long threads)
{
    size_t n = side[0].n + side[1].n;
    struct side_job *js = calloc(n ? n : 1, sizeof(*js));
    if (!js)
        return cli_error("out of memory");
    for (size_t i = 0; i < n; i++) {
        int s = i >= side[0].n;
        js[i].path = side[s].v[s ? i - side[0].n : i];
        js[i].side = s ? GP_CMP_NEW : GP_CMP_BASE;
    }
    trace_jobs_run(n, threads, summarise_one, js);
    int rc = CLI_OK;
    for (size_t i = 0; i < n; i++) {
        gp_error err;
        trace_warnings_print(&js[i].warnings, js[i].path);
        if (rc == CLI_OK && js[i].rc != GP_OK)
            rc = cli_error_from(&js[i].err, js[i].rc);
        else if (rc == CLI_OK &&
                 gp_compare_add(c, js[i].side, js[i].path, js[i].part, &err) != GP_OK)
            rc = cli_error_from(&err, GP_ENOMEM);
        else if (rc != CLI_OK)
            gp_compare_part_free(js[i].part);
        trace_warnings_release(&js[i].warnings);
    }
    free(js);
    return rc;
}

/* The CI gate: a slowdown beyond `pct` that is more than noise (or untested: too few steps). */
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

static int run_compare(const struct trace_paths *side, int html, gp_compare_format fmt, size_t top,
                       double fail_pct, long threads)
{
    gp_compare *c = NULL;
    gp_error err;
    gp_status st = gp_compare_new(&c, &err);
    int rc = st == GP_OK ? gather(c, side, threads) : cli_error_from(&err, st);
    if (rc == CLI_OK && (st = gp_compare_finish(c, &err)) == GP_OK)
        st = write_out(c, html, fmt, top, &err);
    if (rc == CLI_OK && st != GP_OK)
        rc = cli_error_from(&err, st);
    if (rc == CLI_OK)
        rc = gate(gp_compare_step_result(c), fail_pct);
    gp_compare_free(c);
    return rc;
}

/* `html` is viewer-export's page, the other formats analyze's (gp_compare_format_parse). */
static int check_args(int n, double fail_pct, const char *format, int html, gp_compare_format *fmt)
{
    gp_error err;
    gp_status st = html ? GP_OK : gp_compare_format_parse(format, fmt, &err);
    if (st == GP_EINVAL)
        return cli_error("unknown format '%s': use text, json or html", format);
    if (st != GP_OK)
        return cli_error_from(&err, st);
    if (!isnan(fail_pct) && !(fail_pct >= 0 && isfinite(fail_pct)))
        return cli_error("--fail-if-slower takes a percentage of 0 or more, not %g", fail_pct);
    if (n != 2) {
        cli_error(n < 2 ? "compare needs two traces or run folders, BASE and NEW"
                        : "compare takes two arguments, BASE and NEW; got %d",
                  n);
        cli_hint("gprof-train compare BASE NEW (each a trace file or a folder of traces)");
        return CLI_ERROR;
    }
    return CLI_OK;
}

int cmd_compare(int argc, const char **argv)
{
    const char *max_memory = NULL;
    const char *format = "text";
    double fail_pct = NAN;
    long top = 10, jobs = 0;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('f', "format", &format, "FMT",
                    "text (default), json, or html (one self-contained page, as export --html)"),
            OPT_INT(0, "top", &top, "N", "list the N ops and N kernels that moved most (10)", 1,
                    100000),
            OPT_DOUBLE(0, "fail-if-slower", &fail_pct, "PCT",
                       "exit 1 when NEW's mean step is over PCT% slower, and not by noise"),
            OPT_INT('j', "jobs", &jobs, "N",
                    "use N threads in all (default: one per core): traces read at once, and the "
                    "threads each is read and analysed with",
                    0, 1024),
            OPT_MAX_MEMORY(&max_memory),
            OPT_END(),
    };
    const struct opt_help help = {
            "compare", usage,
            "Compare two traces or run folders (a folder's traces are pooled: ranks, repeats):\n"
            "step time (mean, p50, p95), the step-time breakdown, the key-averages ops and the\n"
            "kernels that moved most per step (new and vanished ones too), peak device memory, "
            "and\n"
            "the findings resolved, new and still there, with each resolved finding's predicted\n"
            "gain beside the measured one. Works on PyTorch traces as on ours.\n\n"
            "The verdict is 'faster' or 'slower' only when a two-sided Mann-Whitney U test on the\n"
            "per-step times gives p < 0.05 and the 95% bootstrap interval of the change of the\n"
            "mean (2000 resamples, fixed seed) excludes zero; else 'no clear change'. Each "
            "trace's\n"
            "first step (warm-up) is left out, as diagnose does; with fewer than 3 steps a side\n"
            "nothing is tested. Exit status: 0; 1 when --fail-if-slower trips; 2 on error.",
            "examples:\n"
            "    gprof-train compare runs/mlp-baseline/ runs/mlp-workers4/\n"
            "    gprof-train compare before.pt.trace.json after.pt.trace.json --format json\n"
            "    gprof-train compare main.json.gz pr.json.gz --fail-if-slower 5\n",
            NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (cli_set_max_memory(max_memory) != CLI_OK)
        return CLI_ERROR;
    gp_compare_format fmt = GP_COMPARE_TEXT; /* set by check_args unless html */
    int html = strcmp(format, "html") == 0;
    struct trace_paths side[2] = {{0}, {0}};
    int rc = check_args(n, fail_pct, format, html, &fmt);
    if (rc == CLI_OK)
        rc = trace_paths_expand(&side[0], argv, 1);
    if (rc == CLI_OK)
        rc = trace_paths_expand(&side[1], argv + 1, 1);
    if (rc == CLI_OK)
        rc = run_compare(side, html, fmt, (size_t)top, fail_pct, jobs);
    trace_paths_release(&side[0]);
    trace_paths_release(&side[1]);
    return rc;
}
