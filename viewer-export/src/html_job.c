/* viewer-export/src/html_job.c: gp_export_job_html(): the Distributed view torch-tb-profiler had,
 * for a finished job (gp/job.h), in the report's style: the job's cards, GT16 with its evidence,
 * each rank's step breakdown and clock, who waited for whom (each pair of ranks: how often and
 * how long the first waited at a collective where the second arrived last), the collectives
 * that waited longest, and the command that puts the job on one Perfetto timeline. The numbers
 * are `job --format json`'s. */
#include "gp/export.h"
#include "gp/report.h"
#include "html_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_PAIRS 50
#define TOP_COLLS 20

static void cards(export_out *o, const gp_job *j)
{
    size_t n, nc;
    const gp_job_rank *r = gp_job_ranks(j, &n);
    gp_job_collectives(j, &nc);
    char v[64], t[32];
    snprintf(v, sizeof v, "%zu", n);
    html_card(o, v, "ranks");
    snprintf(v, sizeof v, "%zu", n ? r[0].n_steps : 0);
    html_card(o, v, "steps every rank has");
    html_card(o, gp_report_fmt_time(t, sizeof t, n ? r[0].step_mean : 0), "mean step (rank 0)");
    snprintf(v, sizeof v, "%zu", nc);
    html_card(o, v, "collectives matched");
    int64_t held = 0;
    int who = -1;
    for (size_t i = 0; i < n; i++)
        if (r[i].held > held)
            held = r[i].held, who = r[i].rank;
    snprintf(v, sizeof v, who >= 0 ? "rank %d" : "none", who);
    html_card(o, v, "the others wait most for");
}

static void gt16(export_out *o, const gp_job *j)
{
    size_t n = 0;
    const gp_findings *fs = gp_job_findings(j);
    const gp_finding *f = fs ? gp_findings_get(fs, &n) : NULL;
    export_out_puts(o, "<section><h2>Straggler (GT16)</h2>\n");
    for (size_t i = 0; i < n; i++) {
        const char *sev = gp_severity_name(f[i].severity);
        export_out_printf(o, "<div class=\"finding %s\"><p><span class=\"sev\">%s</span>", sev,
                          sev);
        export_out_html(o, f[i].summary);
        export_out_puts(o, "</p>\n");
        html_evidence_table(o, &f[i]);
        if (f[i].severity != GP_SEV_OK)
            export_out_puts(o, "<p class=\"ranges\">In the job's Perfetto timeline (<i>Timeline"
                               "</i> below): under each other rank, the track <i>collective "
                               "waits</i>, a slice <i>wait for rank N (OP)</i> at each "
                               "collective where rank N arrived last.</p>\n");
        html_recommendation(o, &f[i]);
        export_out_puts(o, "</div>\n");
    }
    export_out_puts(o, "</section>\n");
}

static void ranks_table(export_out *o, const gp_job *j)
{
    size_t n;
    const gp_job_rank *r = gp_job_ranks(j, &n);
    export_out_puts(o, "<section><h2>Ranks</h2>\n<p class=\"note\">Per step, over the steps "
                       "every rank has. <i>held</i>: how long the others waited for this rank "
                       "with nothing to compute; <i>waited</i>: how long it waited for the last "
                       "rank. Clock: the offset subtracted from its times to align it on the "
                       "collectives, and what is left of its uncertainty (the largest distance "
                       "of its collectives' ends from the others').</p>\n"
                       "<table class=\"sortable\"><tr><th>Rank</th><th>Step mean</th>"
                       "<th>Step p95</th><th>Compute</th><th>Comm</th><th>Exposed comm</th>"
                       "<th>GPU idle</th><th>DataLoader</th><th>Late at</th><th>Held</th>"
                       "<th>Waited</th><th>Clock offset</th><th>&plusmn;</th>"
                       "<th class=\"name\">Trace</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        export_out_printf(o, "<tr><td>%d</td>", r[i].rank);
        int64_t v[] = {r[i].step_mean,    r[i].step_p95, r[i].compute, r[i].comm,
                       r[i].exposed_comm, r[i].idle,     r[i].loader};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++)
            html_td_time(o, v[k]);
        export_out_printf(o, "<td>%llu</td>", (unsigned long long)r[i].n_last);
        html_td_time(o, r[i].held), html_td_time(o, r[i].waited);
        html_td_time(o, r[i].clock_offset), html_td_time(o, r[i].clock_spread);
        export_out_puts(o, "<td class=\"name\" title=\""); /* the file name; its path on hover */
        export_out_html(o, r[i].path);
        export_out_puts(o, "\">");
        export_out_html(o, html_base_name(r[i].path));
        export_out_puts(o, "</td></tr>\n");
    }
    export_out_puts(o, "</table></section>\n");
}

/* ---- Who waited for whom ---- */

typedef struct pair {
    int waiter, late;
    uint64_t n;
    int64_t total;
} pair;

static int cmp_pair(const void *pa, const void *pb)
{
    const pair *a = pa, *b = pb;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    if (a->waiter != b->waiter)
        return a->waiter < b->waiter ? -1 : 1;
    return a->late < b->late ? -1 : a->late > b->late;
}

/* Rank i's waits summed per rank waited for, appended to `p` (`*np` of them so far). */
static void rank_pairs(const gp_job *j, size_t i, int waiter, pair *p, size_t *np, size_t base)
{
    size_t nw = gp_job_rank_n_waits(j, i);
    for (size_t k = 0; k < nw; k++) {
        gp_job_wait w = gp_job_rank_wait(j, i, k);
        if (w.until <= w.ts)
            continue;
        size_t at = base;
        while (at < *np && p[at].late != w.last_rank)
            at++;
        if (at == *np)
            p[(*np)++] = (pair){waiter, w.last_rank, 0, 0};
        p[at].n++;
        p[at].total += w.until - w.ts;
    }
}

static void pairs_table(export_out *o, const gp_job *j, pair *p, size_t np)
{
    size_t n;
    const gp_job_rank *r = gp_job_ranks(j, &n);
    size_t steps = n && r[0].n_steps ? r[0].n_steps : 1;
    qsort(p, np, sizeof *p, cmp_pair);
    export_out_puts(o, "<table class=\"sortable\"><tr><th>Rank</th><th>waited for rank</th>"
                       "<th>at collectives</th><th>in all</th><th>per step</th>"
                       "<th>mean wait</th></tr>\n");
    for (size_t i = 0; i < np && i < TOP_PAIRS; i++) {
        export_out_printf(o, "<tr><td>%d</td><td>%d</td><td>%llu</td>", p[i].waiter, p[i].late,
                          (unsigned long long)p[i].n);
        html_td_time(o, p[i].total);
        html_td_time(o, p[i].total / (int64_t)steps);
        html_td_time(o, p[i].total / (int64_t)p[i].n);
        export_out_puts(o, "</tr>\n");
    }
    export_out_puts(o, "</table>\n");
}

static int who_waited(export_out *o, const gp_job *j)
{
    size_t n, total = 0, np = 0;
    const gp_job_rank *r = gp_job_ranks(j, &n);
    for (size_t i = 0; i < n; i++)
        total += gp_job_rank_n_waits(j, i);
    pair *p = malloc((total + 1) * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = 0; i < n; i++)
        rank_pairs(j, i, r[i].rank, p, &np, np);
    export_out_puts(o, "<section><h2>Who waited for whom</h2>\n<p class=\"note\">At each "
                       "collective where one rank arrived last (by GT16.min_lag_us or more over "
                       "the others' median), each other rank waited from its own arrival to "
                       "that rank's; summed per pair of ranks, longest first.</p>\n");
    if (np == 0)
        export_out_puts(o, "<p class=\"none\">No rank waited for another.</p>\n");
    else
        pairs_table(o, j, p, np);
    export_out_puts(o, "</section>\n");
    free(p);
    return 0;
}

static int cmp_coll_wait(const void *pa, const void *pb)
{
    const gp_job_collective *a = *(const gp_job_collective *const *)pa,
                            *b = *(const gp_job_collective *const *)pb;
    if (a->waited != b->waited)
        return a->waited > b->waited ? -1 : 1;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int collectives(export_out *o, const gp_job *j)
{
    size_t n;
    const gp_job_collective *c = gp_job_collectives(j, &n);
    const gp_job_collective **v = malloc((n + 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = &c[i];
    qsort(v, n, sizeof *v, cmp_coll_wait);
    export_out_printf(o,
                      "<section><h2>Collectives that waited longest</h2>\n<p class=\"note\">"
                      "%zu of %zu.</p>\n<table class=\"sortable\"><tr><th>Step</th><th>#</th>"
                      "<th class=\"name\">Op</th><th>Ranks</th><th>Last rank</th><th>Lag</th>"
                      "<th>Waited</th></tr>\n",
                      n < TOP_COLLS ? n : TOP_COLLS, n);
    for (size_t i = 0; i < n && i < TOP_COLLS; i++) {
        export_out_printf(o,
                          "<tr><td>%lld</td><td>%u</td><td class=\"name\">%s</td><td>%u</td>"
                          "<td>%d</td>",
                          (long long)v[i]->step, v[i]->index, v[i]->op, v[i]->n_ranks,
                          v[i]->last_rank);
        html_td_time(o, v[i]->lag), html_td_time(o, v[i]->waited);
        export_out_puts(o, "</tr>\n");
    }
    export_out_puts(o, "</table></section>\n");
    free(v);
    return 0;
}

/* The folder of every rank's trace, when they share one ("" for none), else NULL. */
static const char *common_dir(const gp_job *j, char *buf, size_t cap)
{
    size_t n;
    const gp_job_rank *r = gp_job_ranks(j, &n);
    size_t len = n ? (size_t)(html_base_name(r[0].path) - r[0].path) : 0;
    for (size_t i = 1; i < n; i++)
        if ((size_t)(html_base_name(r[i].path) - r[i].path) != len ||
            strncmp(r[i].path, r[0].path, len) != 0)
            return NULL;
    snprintf(buf, cap, "%.*s", (int)(len ? len - 1 : 0), n ? r[0].path : "");
    return buf;
}

static void timeline(export_out *o, const gp_job *j)
{
    char dir[4096];
    const char *d = common_dir(j, dir, sizeof dir);
    export_out_puts(o, "<section><h2>Timeline</h2>\n<p>The ranks on one aligned timeline, a "
                       "process per rank with its waits at collectives on a track of their "
                       "own:</p>\n<p><code>gprof-train job ");
    export_out_html(o, d && *d ? d : "TRACES...");
    export_out_puts(o, " --perfetto job.pftrace</code></p>\n<p>then open "
                       "<code>ui.perfetto.dev</code> and drop "
                       "<code>job.pftrace</code> on it (<i>Open trace file</i>): the file stays "
                       "on this machine.</p></section>\n");
}

gp_status gp_export_job_html(const gp_job *j, const gp_export_opts *opts, const char *path,
                             gp_error *err)
{
    size_t n;
    gp_job_ranks(j, &n);
    char title[64];
    snprintf(title, sizeof title, "a job of %zu rank%s", n, n == 1 ? "" : "s");
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    html_page_head(&o, "gprof-train job", opts && opts->title ? opts->title : title);
    export_out_puts(&o, "<div class=\"cards\">\n");
    cards(&o, j);
    export_out_puts(&o, "</div>\n");
    gt16(&o, j);
    ranks_table(&o, j);
    if (who_waited(&o, j) != 0 || collectives(&o, j) != 0) {
        export_out_abort(&o);
        return gp_error_set(err, GP_ENOMEM, path, "out of memory");
    }
    timeline(&o, j);
    html_page_foot(&o);
    return export_out_close(&o, err);
}
