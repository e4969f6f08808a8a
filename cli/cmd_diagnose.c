/* gprof-train diagnose: run the rules engine over traces and print findings, costliest first.
 * Traces (files, or every *.json / *.json.gz in a directory) are read and diagnosed in parallel
 * threads; output order follows the arguments. Exit 1 when a finding reaches --fail-on. */
#include "trace_jobs.h"
#include "cli.h"
#include "cmds.h"
#include "diagnose.h"
#include "opt.h"

#include "gp/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const usage[] = {
        "gprof-train diagnose [options] TRACE|DIR...",
        NULL,
};

/* ---- diagnosing, one thread per trace at a time ---- */

struct job {
    const char *path;
    const gp_rules *rules;
    gp_findings *out;
    gp_status rc;
    gp_error err;
    struct trace_warnings warnings;
};

static gp_status diagnose_use(const gp_analysis *a, void *ud, gp_error *err)
{
    struct job *j = ud;
    return gp_rules_run(j->rules, a, &j->out, err);
}

static void diagnose_one(size_t i, void *ud)
{
    struct job *j = &((struct job *)ud)[i];
    j->rc = trace_analysed(j->path, &j->warnings, diagnose_use, j, &j->err);
}

int diag_run(const struct trace_paths *paths, const gp_rules *rules, gp_findings_format format,
             gp_severity fail_on, long jobs, int warn, FILE *out)
{
    size_t n = paths->n;
    struct job *js = calloc(n ? n : 1, sizeof(struct job));
    gp_findings **fs = calloc(n ? n : 1, sizeof(*fs));
    int rc = (!js || !fs) ? cli_error("out of memory") : CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < n; i++)
        js[i] = (struct job){.path = paths->v[i], .rules = rules};
    if (rc == CLI_OK)
        trace_jobs_run(n, jobs, diagnose_one, js);
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        if (warn)
            trace_warnings_print(&js[i].warnings, js[i].path);
        if (js[i].rc != GP_OK)
            rc = cli_error_from(&js[i].err, js[i].rc);
        fs[i] = js[i].out;
    }
    gp_error err;
    gp_status st = rc == CLI_OK
                           ? gp_findings_write(out, (const gp_findings *const *)fs, n, format, &err)
                           : GP_OK;
    if (st != GP_OK)
        rc = cli_error_from(&err, st);
    for (size_t i = 0; rc == CLI_OK && fail_on != GP_SEV_OK && i < n; i++)
        if (gp_findings_max_severity(fs[i]) >= fail_on)
            rc = CLI_FINDINGS;
    for (size_t i = 0; js && i < n; i++) {
        gp_findings_free(js[i].out);
        trace_warnings_release(&js[i].warnings);
    }
    free(fs);
    free(js);
    return rc;
}

int diag_print_default(const char *const *paths, int n, int verbose)
{
    struct trace_paths p = {0};
    gp_rules *r = NULL;
    gp_error err;
    int rc = gp_rules_new(&r, &err) == GP_OK ? trace_paths_expand(&p, paths, n) : CLI_ERROR;
    if (rc == CLI_OK)
        rc = diag_run(&p, r, verbose ? GP_FINDINGS_TEXT : GP_FINDINGS_TEXT_BRIEF, GP_SEV_OK, 0, 0,
                      stdout);
    trace_paths_release(&p);
    gp_rules_free(r);
    return rc == CLI_OK ? 0 : n;
}

/* ---- options ---- */

static int list_rules(const gp_rules *r)
{
    for (size_t i = 0; i < gp_rules_count(); i++) {
        const gp_rule_info *in = gp_rules_info(i);
        printf("%s  %-22s %s\n", in->id, in->name, in->title);
        for (size_t j = 0; j < in->n_params; j++) {
            char set[64];
            snprintf(set, sizeof(set), "%s=%g", in->params[j].name, gp_rules_param(r, i, j));
            printf("      %-26s %s\n", set, in->params[j].help);
        }
    }
    return CLI_OK;
}

static int configure(gp_rules **r, const struct opt_list *rules, const struct opt_list *sets)
{
    gp_error err;
    gp_status st = gp_rules_new(r, &err);
    for (int i = 0; st == GP_OK && i < rules->n; i++)
        st = gp_rules_select(*r, rules->items[i], &err);
    for (int i = 0; st == GP_OK && i < sets->n; i++)
        st = gp_rules_set(*r, sets->items[i], &err);
    return st == GP_OK ? CLI_OK : cli_error_from(&err, st);
}

static int parse_modes(const char *format, const char *fail_on, gp_findings_format *fmt,
                       gp_severity *sev)
{
    gp_error err;
    gp_status st = gp_findings_format_parse(format, fmt, &err);
    *sev = GP_SEV_OK;
    if (st == GP_OK && fail_on)
        st = gp_severity_parse(fail_on, sev, &err);
    return st == GP_OK ? CLI_OK : cli_error_from(&err, st);
}

int cmd_diagnose(int argc, const char **argv)
{
    const char *max_memory = NULL;
    const char *format = "text", *fail_on = NULL;
    struct opt_list rules = {0}, sets = {0};
    int list = 0, all_runs = 0;
    long jobs = 0;
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('f', "format", &format, "FMT", "text (default) or json"),
            OPT_STR(0, "fail-on", &fail_on, "SEV",
                    "exit 1 when a finding is at least SEV: warn or crit"),
            OPT_LIST('r', "rule", &rules, "ID", "run only this rule (repeatable), e.g. GT01"),
            OPT_LIST(0, "set", &sets, "RULE.PARAM=VALUE",
                     "override a threshold, e.g. GT01.warn_pct=10"),
            OPT_BOOL(0, "list-rules", &list, "list the rules with their thresholds and exit"),
            OPT_JOBS(&jobs),
            OPT_MAX_MEMORY(&max_memory),
            OPT_ALL_RUNS(&all_runs),
            OPT_END(),
    };
    const struct opt_help help = {
            "diagnose", usage,
            "Diagnose data-loader starvation, low GPU utilisation, launch-bound steps, pageable "
            "and\n"
            "blocking copies, excessive synchronisation, memory pressure and more. Each finding "
            "shows\n"
            "the measured metric against its threshold, evidence, the exact knob to turn and the "
            "time\n"
            "a fix would save. Exit status: 0, or 1 when a finding reaches --fail-on, 2 on error.",
            "examples:\n"
            "    gprof-train diagnose runs/mlp-20261121-120000/\n"
            "    gprof-train diagnose trace.json.gz --format json --fail-on crit\n"
            "    gprof-train diagnose trace.json --rule GT01 --set GT01.warn_pct=10\n",
            NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (cli_set_max_memory(max_memory) != CLI_OK)
        return CLI_ERROR;
    gp_rules *r = NULL;
    gp_findings_format fmt;
    gp_severity sev;
    struct trace_paths paths = {.runs = all_runs ? TRACE_RUNS_ALL : TRACE_RUNS_NEWEST};
    int rc = parse_modes(format, fail_on, &fmt, &sev);
    if (rc == CLI_OK)
        rc = configure(&r, &rules, &sets);
    if (rc == CLI_OK && list)
        rc = list_rules(r);
    else if (rc == CLI_OK && n == 0)
        rc = cli_error("no trace given"), cli_hint("gprof-train diagnose TRACE|DIR...");
    else if (rc == CLI_OK && (rc = trace_paths_expand(&paths, argv, n)) == CLI_OK)
        rc = diag_run(&paths, r, fmt, sev, jobs, 1, stdout);
    trace_paths_release(&paths);
    gp_rules_free(r);
    return rc;
}
