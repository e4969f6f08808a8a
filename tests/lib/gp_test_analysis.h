/* gp_test_analysis.h: a trace from JSON text in memory, analysed, for the analysis' unit tests. */
#ifndef GP_TEST_ANALYSIS_H
#define GP_TEST_ANALYSIS_H

#include <stdio.h>
#include <string.h>

#include "gp/analysis.h"
#include "gp/trace.h"

/* The analysis of the trace `json` (named `name` in errors), its trace in *t; NULL, said on
 * stderr, where either fails. */
static inline gp_analysis *gp_test_analyse(const char *json, const char *name, gp_trace **t)
{
    gp_error err;
    *t = NULL;
    gp_analysis *a = NULL;
    if (gp_trace_open_mem(json, strlen(json), name, NULL, t, &err) != GP_OK ||
        gp_analysis_run(*t, NULL, &a, &err) != GP_OK) {
        fprintf(stderr, "cannot analyse: %s\n", err.msg);
        return NULL;
    }
    return a;
}

static inline void gp_test_analysis_free(gp_analysis *a, gp_trace *t)
{
    gp_analysis_free(a);
    gp_trace_free(t);
}

#endif
