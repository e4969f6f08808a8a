/* gp/report.h: `gprof-train report` output for one analysed trace: a summary (steps, step time,
 * breakdown, GPU busy and idle split, peak memory) and PyTorch's key-averages table, as text,
 * CSV or JSON. Output is deterministic: fixed formats, sorted rows, no wall-clock times.
 * `err` and NULL: the conventions in gp/trace.h. */
#ifndef GP_ANALYZE_REPORT_H
#define GP_ANALYZE_REPORT_H

#include "gp/analysis.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Output formats. */
typedef enum gp_report_format {
    GP_REPORT_TABLE = 0, /**< summary lines, then PyTorch's table and footers */
    GP_REPORT_CSV,       /**< the rows only, one header line, times in us */
    GP_REPORT_JSON,      /**< {"trace":..,"summary":{..},"rows":[..]}, a row a line */
    GP_REPORT_NDJSON     /**< the same object on one line */
} gp_report_format;

/** What to print. */
typedef struct gp_report_opts {
    gp_report_format format;
    gp_sort_key sort;
    gp_group_by group_by;
    long row_limit;    /**< 0 = all rows */
    const char *title; /**< printed as the section heading (the path), or NULL for none */
} gp_report_opts;

/** Parse "table", "csv", "json", "ndjson". @return GP_OK or GP_EINVAL. */
gp_status gp_report_format_parse(const char *s, gp_report_format *out, gp_error *err);

/** Parse "name", "name+shape". @return GP_OK or GP_EINVAL. */
gp_status gp_group_by_parse(const char *s, gp_group_by *out, gp_error *err);

/** Write the summary of `a` as text lines (also part of GP_REPORT_TABLE). */
gp_status gp_report_write_summary(FILE *out, const gp_analysis *a, gp_error *err);

/** Write the report of `a` to `out`.
 * @param out a stream the caller owns (the library never picks stdout).
 * @param a the analysis. @param opts what to print: required (no defaults).
 * @param err NULL: the status alone. @return GP_OK, GP_ENOMEM or GP_EIO (write failed). */
gp_status gp_report_write(FILE *out, const gp_analysis *a, const gp_report_opts *opts,
                          gp_error *err);

/** Format a duration given in ns the way PyTorch's table does: "812.000us", "1.234ms",
 * "2.500s". Writes at most `cap` bytes to `buf`. @return buf. */
char *gp_report_fmt_time(char *buf, size_t cap, int64_t ns);

#ifdef __cplusplus
}
#endif
#endif
