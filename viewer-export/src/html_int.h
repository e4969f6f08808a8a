/* viewer-export/src/html_int.h: private API between the HTML report's page (html_report.c) and
 * its charts (html_charts.c). */
#ifndef GP_EXPORT_HTML_INT_H
#define GP_EXPORT_HTML_INT_H

#include "export_int.h"
#include "gp/analysis.h"
#include "gp/rules.h"

/* The time axis of the time charts: x = (ns - t0) / scale, in `unit`. */
typedef struct html_time {
    int64_t t0, span;
    double scale;
    const char *unit;
} html_time;

void html_time_axis(const gp_analysis *a, html_time *tx);
const char *html_bd_color(gp_bd_cat c);
void html_chart_steps(export_out *o, const gp_analysis *a);
void html_chart_util(export_out *o, const gp_analysis *a, const export_band *bands, size_t n_bands);
void html_chart_memory(export_out *o, const gp_analysis *a, const export_band *bands,
                       size_t n_bands);
void html_series_legend(export_out *o, const export_series *s, size_t n);
/* A memory series' device: "GPU 0", "CPU" (PyTorch's Device Id -1), "CPU 1". */
const char *html_mem_device(const gp_mem_series *m, char *buf, size_t cap);

/* html_report.c: the page's head (inline CSS, the heading and a subtitle), its footer, and a
 * summary card (a value over its label). */
void html_page_head(export_out *o, const char *heading, const char *title);
void html_page_foot(export_out *o);
void html_card(export_out *o, const char *value, const char *label);
/* A finding's evidence table, and its "Fix:" line (recommendation, knob, gain). */
void html_evidence_table(export_out *o, const gp_finding *f);
void html_recommendation(export_out *o, const gp_finding *f);
/* The file name of a path (after its last '/'); "" for NULL. */
const char *html_base_name(const char *p);
/* A kernel's short name into buf: the function without return type, template arguments and
 * parameters ("void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" ->
 * "at::native::vectorized_elementwise_kernel"). @return its length. */
size_t html_short_kernel_name(const char *full, char *buf, size_t cap);
/* The views of html_views.c: each step's breakdown (a table under the step chart), the
 * operators (by name, and by name + input shape when the trace has shapes; FLOPs with
 * with_flops), and the command that opens the run's timeline in Perfetto. */
void html_steps_table(export_out *o, const gp_analysis *a);
void html_operators(export_out *o, const gp_analysis *a);
void html_timeline_howto(export_out *o, const char *trace);
void html_modules(export_out *o, const gp_analysis *a);
/* Each memory series' peak allocated and reserved bytes, when (on the charts' axis) and its
 * allocation count: a table under the memory chart. */
void html_memory_peaks(export_out *o, const gp_analysis *a, const html_time *tx);
/* html_sort.c: the script that sorts a table.sortable by the header clicked, its hash for the
 * page's Content-Security-Policy, and a time cell (its ns in data-v, what the script sorts by). */
extern const char html_sort_js[];
extern const char html_sort_js_sha256[];
void html_td_time(export_out *o, int64_t ns);
/* A kernel name cell: its short name, the full one on hover and when expanded. */
void html_kernel_name(export_out *o, const char *full);

#endif
