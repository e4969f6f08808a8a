/* viewer-export/src/html_views.c: the report page's tables in the places of torch-tb-profiler's
 * panes (issue 27 §3): Overview's steps (the breakdown of each step), Operators (key averages by
 * name, and by name + input shape when the trace has shapes, with PyTorch's FLOPs when it was
 * recorded with with_flops: the same rows and numbers as `report --format json`), Modules (the
 * nn.Module tree of with_stack traces, with calls and host time), and how to open
 * the trace's timeline in Perfetto, where the findings are a track of their own. */
#include "gp/report.h"
#include "gp/trace_schema.h"
#include "html_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP_OPS   20
#define MAX_STEPS 60

void html_steps_table(export_out *o, const gp_analysis *a)
{
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    if (n == 0)
        return;
    export_out_puts(
            o, "<details><summary>Each step, in a table</summary><table class=\"sortable\"><tr>"
               "<th class=\"name\">step</th><th>duration</th>");
    for (int c = 0; c < GP_BD_COUNT; c++)
        export_out_printf(o, "<th>%s</th>", gp_bd_cat_name((gp_bd_cat)c));
    export_out_puts(o, "</tr>\n");
    for (size_t i = 0; i < n && i < MAX_STEPS; i++) {
        if (s[i].synthetic)
            export_out_puts(o, "<tr><td class=\"name\">the whole trace</td>");
        else
            export_out_printf(o, "<tr><td class=\"name\">%lld</td>", (long long)s[i].num);
        html_td_time(o, s[i].end - s[i].ts);
        for (int c = 0; c < GP_BD_COUNT; c++)
            html_td_time(o, s[i].bd[c]);
        export_out_puts(o, "</tr>\n");
    }
    export_out_puts(o, "</table>");
    if (n > MAX_STEPS)
        export_out_printf(o, "<p class=\"note\">The first %d of %zu steps.</p>", MAX_STEPS, n);
    export_out_puts(o, "</details>\n");
}

static int any_flops(const gp_keyavg *k)
{
    for (size_t i = 0; k->has_flops && i < k->n_rows; i++)
        if (k->rows[i].flops)
            return 1;
    return 0;
}

static void ops_rows(export_out *o, const gp_keyavg *k, int shapes, int flops)
{
    size_t shown = 0;
    for (size_t i = 0; i < k->n_rows && shown < TOP_OPS; i++) {
        const gp_keyavg_row *r = &k->rows[i];
        if (r->is_device)
            continue;
        export_out_puts(o, "<tr><td class=\"name\">");
        export_out_html(o, r->name);
        if (shapes) {
            export_out_puts(o, "</td><td class=\"name\">");
            export_out_html(o, r->shape);
        }
        export_out_printf(o, "</td><td>%llu</td>", (unsigned long long)r->count);
        html_td_time(o, r->self_cpu), html_td_time(o, r->cpu_total);
        html_td_time(o, r->self_device), html_td_time(o, r->device_total);
        if (flops && r->flops)
            export_out_printf(o, "<td>%llu</td>", (unsigned long long)r->flops);
        else if (flops)
            export_out_puts(o, "<td data-v=\"0\">--</td>"); /* sorts as 0 */
        export_out_puts(o, "</tr>\n");
        shown++;
    }
    if (shown == 0)
        export_out_puts(o, "<tr><td class=\"none\">No CPU operators in this trace.</td></tr>\n");
}

/* The top operators by `group`, sorted by device time where there is a GPU, else CPU time. */
static void ops_table(export_out *o, const gp_analysis *a, gp_group_by group)
{
    gp_keyavg k;
    if (gp_keyavg_compute(a, group, gp_sort_key_default(a), &k, NULL) != GP_OK) {
        o->err_no = ENOMEM;
        return;
    }
    int shapes = group == GP_GROUP_NAME_SHAPE, flops = any_flops(&k);
    export_out_puts(o, "<table class=\"sortable\"><tr><th class=\"name\">Name</th>");
    export_out_puts(o, shapes ? "<th class=\"name\">Input shapes</th>" : "");
    export_out_puts(o, "<th>Calls</th><th>Self CPU</th><th>CPU total</th><th>Self device</th>"
                       "<th>Device total</th>");
    export_out_puts(o, flops ? "<th>FLOPs</th>" : "");
    export_out_puts(o, "</tr>\n");
    ops_rows(o, &k, shapes, flops);
    export_out_puts(o, "</table>\n");
    gp_keyavg_release(&k);
}

/* Whether any op recorded its input shapes (record_shapes=True). */
static int has_shapes(const gp_analysis *a)
{
    const gp_trace *t = gp_analysis_trace(a);
    size_t n;
    const gp_event *ev = gp_trace_events(t, &n);
    for (size_t i = 0; i < n; i++)
        if (gp_trace_event_shape(t, &ev[i]) != GP_STR_NONE)
            return 1;
    return 0;
}

void html_operators(export_out *o, const gp_analysis *a)
{
    export_out_printf(o,
                      "<section><h2>Operators</h2>\n<p class=\"note\">The top %d by %s, as "
                      "PyTorch's key averages (<code>gprof-train report</code>).</p>\n",
                      TOP_OPS, "device time where there is a GPU, else CPU time");
    ops_table(o, a, GP_GROUP_NAME);
    if (has_shapes(a)) {
        export_out_puts(o, "<h3>By name and input shape</h3>\n");
        ops_table(o, a, GP_GROUP_NAME_SHAPE);
    }
    export_out_puts(o, "</section>\n");
}

void html_timeline_howto(export_out *o, const char *trace)
{
    export_out_puts(o, "<section><h2>Timeline</h2>\n<p>Every finding is a slice on the track "
                       "<i>gprof-train findings</i>, spanning its evidence, in the Perfetto "
                       "trace of this run:</p>\n<p><code>gprof-train export ");
    export_out_html(o, trace && *trace ? trace : "TRACE");
    export_out_puts(o, " --perfetto trace.pftrace</code></p>\n<p>then open "
                       "<code>ui.perfetto.dev</code> and drop <code>trace.pftrace</code> on it "
                       "(<i>Open trace file</i>): the file stays on this machine.</p></section>\n");
}

/* ---- Modules: the nn.Module tree of with_stack traces (python frames with a module id) ---- */

#define MAX_MODULES 200
#define MAX_DEPTH   32

typedef struct module_row {
    char path[256]; /* names from the root, '/'-joined: the row's identity */
    int depth;
    uint64_t calls;
    int64_t total_ns;
} module_row;

typedef struct module_sweep {
    module_row *rows;
    size_t n;
    int64_t open_end[MAX_DEPTH];
    size_t open_row[MAX_DEPTH];
    int depth;
} module_sweep;

static size_t module_row_of(module_sweep *m, const char *path, int depth)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->rows[i].path, path) == 0)
            return i;
    if (m->n == MAX_MODULES)
        return MAX_MODULES;
    module_row *r = &m->rows[m->n];
    snprintf(r->path, sizeof r->path, "%s", path);
    r->depth = depth;
    return m->n++;
}

static void module_frame(module_sweep *m, const char *name, int64_t ts, int64_t end)
{
    while (m->depth && m->open_end[m->depth - 1] <= ts)
        m->depth--;
    if (m->depth == MAX_DEPTH)
        return;
    char path[256];
    const char *parent = m->depth ? m->rows[m->open_row[m->depth - 1]].path : "";
    int len = snprintf(path, sizeof path, "%s%s%s", parent, *parent ? "/" : "", name);
    if (len < 0 || (size_t)len >= sizeof path)
        return;
    size_t r = module_row_of(m, path, m->depth);
    if (r == MAX_MODULES)
        return;
    m->rows[r].calls++;
    m->rows[r].total_ns += end - ts;
    m->open_end[m->depth] = end;
    m->open_row[m->depth++] = r;
}

static void module_table(export_out *o, const module_sweep *m)
{
    export_out_puts(o, "<table class=\"sortable\"><tr><th class=\"name\">Module</th><th>Calls</th>"
                       "<th>Host total</th><th>Host mean</th></tr>\n");
    for (size_t i = 0; i < m->n; i++) {
        const module_row *r = &m->rows[i];
        const char *leaf = strrchr(r->path, '/');
        export_out_printf(o, "<tr><td class=\"name\" style=\"padding-left:%dpx\">",
                          8 + 16 * r->depth);
        export_out_html(o, leaf ? leaf + 1 : r->path);
        export_out_printf(o, "</td><td>%llu</td>", (unsigned long long)r->calls);
        html_td_time(o, r->total_ns);
        html_td_time(o, r->total_ns / (int64_t)(r->calls ? r->calls : 1));
        export_out_puts(o, "</tr>\n");
    }
    export_out_puts(o, "</table>\n");
}

void html_modules(export_out *o, const gp_analysis *a)
{
    const gp_trace *t = gp_analysis_trace(a);
    size_t nt;
    const gp_track *tr = gp_trace_tracks(t, &nt);
    const gp_event *ev = gp_trace_events(t, &(size_t){0});
    module_sweep m = {calloc(MAX_MODULES, sizeof(module_row)), 0, {0}, {0}, 0};
    if (!m.rows) {
        o->err_no = ENOMEM;
        return;
    }
    for (size_t k = 0; k < nt; k++, m.depth = 0)
        for (uint32_t i = tr[k].first; i < tr[k].first + tr[k].count; i++) {
            const gp_py_info *py = gp_trace_py_info(t, &ev[i]);
            if (py && py->module_id >= 0)
                module_frame(&m, gp_trace_str(t, ev[i].name), ev[i].ts, ev[i].ts + ev[i].dur);
        }
    if (m.n) {
        export_out_puts(o, "<section><h2>Modules</h2>\n<p class=\"note\">The nn.Module calls "
                           "(with_stack=True), nested as they ran, with their host time.</p>\n");
        module_table(o, &m);
        export_out_puts(o, "</section>\n");
    }
    free(m.rows);
}

/* ---- Memory: each allocator series' peaks (the chart above shows their curves) ---- */

static void td_mib(export_out *o, int64_t bytes)
{
    export_out_printf(o, "<td data-v=\"%lld\">%.2f MiB</td>", (long long)bytes,
                      (double)bytes / 1048576.0);
}

void html_memory_peaks(export_out *o, const gp_analysis *a, const html_time *tx)
{
    size_t n;
    const gp_mem_series *m = gp_analysis_memory(a, &n);
    if (n == 0)
        return;
    export_out_printf(o,
                      "<table class=\"sortable\"><tr><th class=\"name\">Device</th><th>Peak "
                      "allocated</th><th>at (%s)</th><th>Peak reserved</th><th>at (%s)</th>"
                      "<th>Allocations</th><th>Frees</th></tr>\n",
                      tx->unit, tx->unit);
    char dev[32];
    for (size_t i = 0; i < n; i++) {
        export_out_printf(o, "<tr><td class=\"name\">%s</td>",
                          html_mem_device(&m[i], dev, sizeof dev));
        td_mib(o, m[i].peak_allocated);
        export_out_printf(o, "<td>%.3f</td>",
                          (double)(m[i].peak_allocated_ts - tx->t0) / tx->scale);
        if (m[i].device_type == GP_MEM_DEVICE_TYPE_CUDA) { /* the host has no cache: none */
            td_mib(o, m[i].peak_reserved);
            export_out_printf(o, "<td>%.3f</td>",
                              (double)(m[i].peak_reserved_ts - tx->t0) / tx->scale);
        } else {
            export_out_puts(o, "<td data-v=\"0\">-</td><td>-</td>");
        }
        export_out_printf(o, "<td>%llu</td><td>%llu</td></tr>\n", (unsigned long long)m[i].n_allocs,
                          (unsigned long long)m[i].n_frees);
    }
    export_out_puts(o, "</table>\n");
}
