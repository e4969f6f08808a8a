/* libFuzzer target for the trace reader: any bytes (plain or gzip JSON) must either load, then
 * analyse and report without crashing, or fail with a parse error and a position. */
#include "gp/report.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_trace *t = NULL;
    gp_error err;
    gp_trace_opts opts = {0, 1u << 20};
    if (gp_trace_open_mem(data, size, "fuzz.json", &opts, &t, &err) != GP_OK)
        return 0;
    gp_analysis *a = NULL;
    if (gp_analysis_run(t, NULL, &a, &err) == GP_OK) {
        FILE *out = fopen("/dev/null", "w");
        gp_report_opts ro = {GP_REPORT_TABLE, GP_SORT_CUDA_TIME_TOTAL, GP_GROUP_NAME_SHAPE, 0, "f"};
        if (out) {
            gp_report_write(out, a, &ro, &err);
            fclose(out);
        }
    }
    gp_analysis_free(a);
    gp_trace_free(t);
    return 0;
}
