/* libFuzzer target for the trace reader: any bytes (plain or gzip JSON) must either load, then
 * analyse and report without crashing, or fail with a parse error and a position. Every input is
 * also cut into parts parsed on threads (as big files are), so the split and merge are fuzzed. */
#include "gp/report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_trace *t = NULL;
    gp_error err;
    /* split inputs of any size into parts parsed on three threads */
    gp_trace_opts opts = {.flags = GP_TRACE_SPLIT_ANY, .max_value_bytes = 1u << 20, .threads = 3};
    if (gp_trace_open_mem(data, size, "fuzz.json", &opts, &t, &err) != GP_OK)
        return 0;
    gp_analysis *a = NULL;
    if (gp_analysis_run(t, NULL, &a, &err) == GP_OK) {
        FILE *out = fopen("/dev/null", "w");
        gp_report_opts ro = {.format = GP_REPORT_TABLE,
                             .sort = GP_SORT_CUDA_TIME_TOTAL,
                             .group_by = GP_GROUP_NAME_SHAPE,
                             .title = "f"};
        if (out) {
            gp_report_write(out, a, &ro, &err);
            fclose(out);
        }
    }
    gp_analysis_free(a);
    gp_trace_free(t);
    return 0;
}
