/* cli/run_analysis.h: what `gprof-train run` prints after the profiled work ends: for each trace,
 * the summary and key-averages table (report) and the diagnosis (diagnose). */
#ifndef GP_CLI_RUN_ANALYSIS_H
#define GP_CLI_RUN_ANALYSIS_H

/* Analyse and print each of `paths` (n traces) to stdout. Problems are reported as warnings:
 * the run itself already succeeded. @return the number of traces that could not be analysed. */
int run_print_analysis(const char *const *paths, int n);

#endif
