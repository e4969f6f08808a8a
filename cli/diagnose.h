/* cli/diagnose.h: the diagnosis half of `gprof-train diagnose`, shared with `gprof-train run`,
 * which ends with the same diagnosis: expand TRACE|DIR arguments, diagnose in parallel, print. */
#ifndef GP_CLI_DIAGNOSE_H
#define GP_CLI_DIAGNOSE_H

#include "gp/rules.h"
#include "trace_jobs.h"

#include <stdio.h>

/* Read, analyse and diagnose every path with `rules` (up to `jobs` at once, 0 = one per core)
 * and write the findings to `out`; with `warn`, each trace's read warnings and notes go to
 * stderr first (trace_warnings_print). @return CLI_OK, CLI_FINDINGS when a finding reaches
 * `fail_on` (GP_SEV_OK = never), or CLI_ERROR when a trace cannot be read (message printed). */
int diag_run(const struct trace_paths *paths, const gp_rules *rules, gp_findings_format format,
             gp_severity fail_on, long jobs, int warn, FILE *out);

/* The diagnosis `gprof-train run` ends with: default rules, text, to stdout, no warnings (run
 * prints each trace's notes once, at its very end); the rules that did not fire on one line
 * unless `verbose`. @return the number of traces that could not be diagnosed (0 or n; errors
 * printed as by diag_run). */
int diag_print_default(const char *const *paths, int n, int verbose);

#endif
