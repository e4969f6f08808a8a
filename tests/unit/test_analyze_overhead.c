/* CUPTI's overhead events in key averages, as PyTorch (2.11) builds them: rows of the thread
 * that runs ProfilerStep#N, nested in the ops that wholly contain them (taking their CPU time),
 * with the device time of the GPU work of the op open at their start, whether or not that op
 * contains their end. A hand-made trace whose rows are worked out by hand. */
#include "gp/analysis.h"
#include "gp_test.h"

#include <string.h>

#define HOST(cat, name, ts, dur, args)                                                             \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" #ts      \
    ",\"dur\":" #dur ",\"args\":{" args "}}"
#define OVERHEAD(name, ts, dur)                                                                    \
    "{\"ph\":\"X\",\"cat\":\"overhead\",\"name\":\"" name "\",\"pid\":-1,\"tid\":0,\"ts\":" #ts    \
    ",\"dur\":" #dur "}"
#define KERNEL(name, ts, dur, corr, ext)                                                           \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts       \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr                 \
    ",\"External id\":" #ext "}}"

/* ProfilerStep#1 [0, 100] holds aten::mm [10, 40], which launches (cudaLaunchKernel [20, 30])
 * a 10 us kernel; "Command Buffer Full" [22, 28] sits in the launch, "Buffer Flush" [35, 45]
 * starts in aten::mm and ends after it, so its parent is the step. */
static const char *const events[] = {
        HOST("user_annotation", "ProfilerStep#1", 0, 100, "\"External id\":1"),
        HOST("cpu_op", "aten::mm", 10, 30, "\"External id\":2"),
        HOST("cuda_runtime", "cudaLaunchKernel", 20, 10, "\"External id\":2,\"correlation\":100"),
        OVERHEAD("Command Buffer Full", 22, 6),
        OVERHEAD("Buffer Flush", 35, 10),
        KERNEL("gemm", 50, 10, 100, 2),
};

/* The trace of `events`, read from memory. */
static gp_status open_events(gp_trace **t)
{
    static char doc[2048] = "{\"traceEvents\":[";
    size_t n = sizeof(events) / sizeof(events[0]);
    for (size_t i = 0; i < n; i++) {
        strcat(doc, events[i]);
        strcat(doc, i + 1 < n ? "," : "]}");
    }
    return gp_trace_open_mem(doc, strlen(doc), "overhead", NULL, t, NULL);
}

static const gp_keyavg_row *row(const gp_keyavg *k, const char *name)
{
    for (size_t i = 0; i < k->n_rows; i++)
        if (strcmp(k->rows[i].name, name) == 0 && !k->rows[i].is_device)
            return &k->rows[i];
    return NULL;
}

/* count, CPU total, self CPU, device total, self device (ns) */
static void check_row(const gp_keyavg *k, const char *name, const int64_t want[5])
{
    const gp_keyavg_row *r = row(k, name);
    GP_CHECK(r != NULL);
    if (!r)
        return;
    GP_ASSERT_EQ_INT(r->count, want[0]);
    GP_ASSERT_EQ_INT(r->cpu_total, want[1]);
    GP_ASSERT_EQ_INT(r->self_cpu, want[2]);
    GP_ASSERT_EQ_INT(r->device_total, want[3]);
    GP_ASSERT_EQ_INT(r->self_device, want[4]);
}

static void test_overhead_rows(void)
{
    gp_trace *t = NULL;
    GP_ASSERT_OK(open_events(&t));
    gp_analysis *a = NULL;
    GP_ASSERT_OK(gp_analysis_run(t, NULL, &a, NULL));
    gp_keyavg k;
    GP_ASSERT_OK(gp_keyavg_compute(a, GP_GROUP_NAME, GP_SORT_CPU_TIME_TOTAL, &k, NULL));
    /* the kernels of aten::mm, the op open at its start, counted again above it */
    check_row(&k, "Command Buffer Full", (const int64_t[]){1, 6000, 6000, 10000, 10000});
    check_row(&k, "cudaLaunchKernel", (const int64_t[]){1, 10000, 4000, 10000, 0});
    check_row(&k, "aten::mm", (const int64_t[]){1, 30000, 20000, 20000, 10000});
    /* a child of the step, yet with aten::mm's kernels: build_tree needs no containment */
    check_row(&k, "Buffer Flush", (const int64_t[]){1, 10000, 10000, 10000, 10000});
    check_row(&k, "ProfilerStep*", (const int64_t[]){1, 100000, 60000, 30000, 0});
    GP_ASSERT_EQ_INT(k.self_cpu_total, 100000);
    gp_keyavg_release(&k);
    gp_analysis_free(a);
    gp_trace_free(t);
}

int main(void)
{
    GP_RUN(test_overhead_rows);
    return gp_test_summary();
}
