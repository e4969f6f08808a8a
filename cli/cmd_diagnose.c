/* gprof-train diagnose: run the rules engine over traces and print findings, costliest first.
 * Traces (files, or every *.json / *.json.gz in a directory) are read and diagnosed in parallel
 * threads; output order follows the arguments. Exit 1 when a finding reaches --fail-on. */
#include "cli.h"
#include "cmds.h"
#include "diagnose.h"
#include "opt.h"

#include "gp/rules.h"
#include "gp/trace_schema.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const usage[] = {
        "gprof-train diagnose [options] TRACE|DIR...",
        NULL,
};

/* ---- trace paths ---- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* pass 0: PyTorch's trace names (*.pt.trace.json[.gz]); pass 1: any *.json[.gz] */
static int is_trace_name(const char *s, int pass)
{
    if (pass == 0)
        return ends_with(s, GP_TRACE_SUFFIX) || ends_with(s, GP_TRACE_SUFFIX_GZ);
    return ends_with(s, ".json") || ends_with(s, ".json.gz");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push_path(struct diag_paths *p, char *s)
{
    if (!s)
        return -1;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        char **v = realloc(p->v, cap * sizeof(*v));
        if (!v) {
            free(s);
            return -1;
        }
        p->v = v, p->cap = cap;
    }
    p->v[p->n++] = s;
    return 0;
}

static int add_matching(struct diag_paths *p, const char *dir, int pass)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (!d)
        return cli_error("cannot open directory '%s'", dir);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !is_trace_name(e->d_name, pass))
            continue;
        size_t n = len + strlen(e->d_name) + 2;
        char *s = malloc(n);
        if (s)
            snprintf(s, n, "%.*s/%s", (int)len, dir, e->d_name);
        if (push_path(p, s) != 0)
            break;
    }
    closedir(d);
    return CLI_OK;
}

/* The trace files directly in `dir`, sorted by name: PyTorch-named ones (a run directory also
 * holds summary.json), else every *.json / *.json.gz. */
static int add_dir(struct diag_paths *p, const char *dir)
{
    size_t first = p->n;
    for (int pass = 0; pass < 2 && p->n == first; pass++)
        if (add_matching(p, dir, pass) != CLI_OK)
            return CLI_ERROR;
    qsort(p->v + first, p->n - first, sizeof(*p->v), cmp_str);
    if (p->n == first)
        return cli_error("no trace files (*.json, *.json.gz) in '%s'", dir);
    return CLI_OK;
}

int diag_paths_expand(struct diag_paths *p, const char *const *args, int n)
{
    struct stat st;
    for (int i = 0; i < n; i++) {
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (add_dir(p, args[i]) != CLI_OK)
                return CLI_ERROR;
        } else if (push_path(p, strdup(args[i])) != 0) {
            return cli_error("out of memory");
        }
    }
    return CLI_OK;
}

void diag_paths_release(struct diag_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

/* ---- diagnosing, one thread per trace at a time ---- */

struct job {
    const char *path;
    const gp_rules *rules;
    gp_findings *out;
    gp_status rc;
    gp_error err;
};

struct pool {
    struct job *jobs;
    size_t n, next;
    pthread_mutex_t lock;
};

static void diagnose_one(struct job *j)
{
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    gp_error_clear(&j->err);
    j->rc = gp_trace_open(j->path, NULL, &t, &j->err);
    if (j->rc == GP_OK)
        j->rc = gp_analysis_run(t, NULL, &a, &j->err);
    if (j->rc == GP_OK)
        j->rc = gp_rules_run(j->rules, a, &j->out, &j->err);
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            return NULL;
        diagnose_one(&p->jobs[i]);
    }
}

static void run_pool(struct pool *p, long jobs)
{
    pthread_t th[64];
    long n = jobs > 0 ? jobs : sysconf(_SC_NPROCESSORS_ONLN);
    n = n < 1 ? 1 : n > 64 ? 64 : n;
    if ((size_t)n > p->n)
        n = (long)p->n;
    pthread_mutex_init(&p->lock, NULL);
    long started = 0;
    for (long i = 1; i < n; i++)
        started += pthread_create(&th[started], NULL, worker, p) == 0;
    worker(p);
    for (long i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p->lock);
}

int diag_run(const struct diag_paths *paths, const gp_rules *rules, gp_findings_format format,
             gp_severity fail_on, long jobs, FILE *out)
{
    struct pool p = {.jobs = calloc(paths->n ? paths->n : 1, sizeof(struct job)), .n = paths->n};
    gp_findings **fs = calloc(paths->n ? paths->n : 1, sizeof(*fs));
    int rc = (!p.jobs || !fs) ? cli_error("out of memory") : CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < p.n; i++)
        p.jobs[i] = (struct job){.path = paths->v[i], .rules = rules};
    if (rc == CLI_OK)
        run_pool(&p, jobs);
    for (size_t i = 0; rc == CLI_OK && i < p.n; i++) {
        if (p.jobs[i].rc != GP_OK)
            rc = cli_error_from(&p.jobs[i].err, p.jobs[i].rc);
        fs[i] = p.jobs[i].out;
    }
    gp_error err;
    gp_status st =
            rc == CLI_OK ? gp_findings_write(out, (const gp_findings *const *)fs, p.n, format, &err)
                         : GP_OK;
    if (st != GP_OK)
        rc = cli_error_from(&err, st);
    for (size_t i = 0; rc == CLI_OK && fail_on != GP_SEV_OK && i < p.n; i++)
        if (gp_findings_max_severity(fs[i]) >= fail_on)
            rc = CLI_FINDINGS;
    for (size_t i = 0; p.jobs && i < p.n; i++)
        gp_findings_free(p.jobs[i].out);
    free(fs);
    free(p.jobs);
    return rc;
}

int diag_print_default(const char *const *paths, int n)
{
    struct diag_paths p = {0};
    gp_rules *r = NULL;
    gp_error err;
    int rc = gp_rules_new(&r, &err) == GP_OK ? diag_paths_expand(&p, paths, n) : CLI_ERROR;
    if (rc == CLI_OK)
        rc = diag_run(&p, r, GP_FINDINGS_TEXT, GP_SEV_OK, 0, stdout);
    diag_paths_release(&p);
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
    const char *format = "text", *fail_on = NULL;
    struct opt_list rules = {0}, sets = {0};
    int list = 0;
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
            OPT_INT('j', "jobs", &jobs, "N", "diagnose N traces at once (default: one per core)", 0,
                    1024),
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
            "    gprof-train diagnose trace.json --rule GT01 --set GT01.warn_pct=10\n"};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    gp_rules *r = NULL;
    gp_findings_format fmt;
    gp_severity sev;
    struct diag_paths paths = {0};
    int rc = parse_modes(format, fail_on, &fmt, &sev);
    if (rc == CLI_OK)
        rc = configure(&r, &rules, &sets);
    if (rc == CLI_OK && list)
        rc = list_rules(r);
    else if (rc == CLI_OK && n == 0)
        rc = cli_error("no trace given"), cli_hint("gprof-train diagnose TRACE|DIR...");
    else if (rc == CLI_OK && (rc = diag_paths_expand(&paths, argv, n)) == CLI_OK)
        rc = diag_run(&paths, r, fmt, sev, jobs, stdout);
    diag_paths_release(&paths);
    gp_rules_free(r);
    return rc;
}
