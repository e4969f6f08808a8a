/* Unit tests for gp_export_tensorboard(): the run directory and file name torch-tb-profiler
 * discovers, traceEvents as the last key, runtime calls as 0.4.3's "Runtime", steps only on the
 * CPU thread (a GPU-side ProfilerStep# is dropped), non-integer step suffixes renamed, string
 * tids numbered, and bad run names refused. torch-tb-profiler itself loads the export in
 * tests/export/test_tb_plugin.py. */
#include "export_test_util.h"
#include "gp_test.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char logdir[512];

static char *export_tb(const char *json, const char *run, char *path, size_t cap, gp_status *rc)
{
    loaded l;
    gp_error err;
    if (load_trace(SAMPLE_TRACE, json, &l) != GP_OK)
        return NULL;
    *rc = gp_export_tensorboard(l.a, NULL, logdir, run, path, cap, &err);
    unload(&l);
    return *rc == GP_OK ? slurp_file(path) : NULL;
}

static void test_sample_run(void)
{
    char path[4600], want[1200];
    gp_status rc;
    char *s = export_tb(NULL, "sample", path, sizeof path, &rc);
    GP_ASSERT_OK(rc);
    GP_CHECK(s != NULL);
    snprintf(want, sizeof want, "%s/sample/starved_worker.1700000000001.pt.trace.json.gz", logdir);
    GP_ASSERT_STR_EQ(path, want);
    size_t n = strlen(s);
    GP_CHECK(n > 4 && strcmp(s + n - 3, "]}\n") == 0); /* traceEvents closes the file */
    GP_CHECK(strncmp(s, "{\"schemaVersion\":1,", 19) == 0);
    GP_ASSERT_CONTAINS(s, "\"distributedInfo\":{\"rank\": 0,");
    GP_ASSERT_CONTAINS(s, "\"cat\":\"Runtime\",\"name\":\"cudaLaunchKernel\"");
    GP_CHECK(strstr(s, "cuda_runtime") == NULL);
    GP_ASSERT_EQ_INT(count_str(s, "\"name\":\"ProfilerStep#"), 6);
    GP_ASSERT_EQ_INT(count_str(s, "\"name\":\"[memory]\""), 6 * 20);
    GP_ASSERT_CONTAINS(s, "\"totalGlobalMem\":85018279936");
    free(s);
    unlink(path);
}

static void test_gpu_steps_dropped(void)
{
    static const char json[] =
            "{\"traceEvents\":["
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":5,"
            "\"tid\":5,\"ts\":0,\"dur\":50},"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#x\",\"pid\":5,"
            "\"tid\":5,\"ts\":60,\"dur\":10},"
            "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":0,"
            "\"tid\":7,\"ts\":1,\"dur\":48,\"args\":{\"device\":0,\"stream\":7}},"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":5,\"tid\":\"main\","
            "\"ts\":2,\"dur\":3}]}";
    char path[4600];
    gp_status rc;
    char *s = export_tb(json, "gpu_steps", path, sizeof path, &rc);
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(count_str(s, "ProfilerStep#3"), 1);
    GP_CHECK(strstr(s, "\"cat\":\"gpu_user_annotation\"") == NULL);
    GP_ASSERT_CONTAINS(s, "\"name\":\"ProfilerStep_x\"");
    GP_CHECK(strstr(s, "ProfilerStep#x") == NULL);
    GP_CHECK(strstr(s, "\"tid\":\"main\"") == NULL); /* tb needs int(tid) for operators */
    GP_ASSERT_CONTAINS(s, "\"name\":\"op\",\"pid\":5,\"tid\":");
    free(s);
    unlink(path);
}

static void test_bad_run_names(void)
{
    const char *bad[] = {"a/b", "", "..", "."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[4600];
        gp_status rc = GP_OK;
        char *s = export_tb(NULL, bad[i], path, sizeof path, &rc);
        GP_CHECK(s == NULL);
        GP_ASSERT_EQ_INT(rc, GP_EINVAL);
    }
}

int main(void)
{
    snprintf(logdir, sizeof logdir, "%s/test_export_tb_%d", GP_BUILD_DIR, (int)getpid());
    GP_RUN(test_sample_run);
    GP_RUN(test_gpu_steps_dropped);
    GP_RUN(test_bad_run_names);
    char d[600];
    snprintf(d, sizeof d, "%s/sample", logdir);
    rmdir(d);
    snprintf(d, sizeof d, "%s/gpu_steps", logdir);
    rmdir(d);
    rmdir(logdir);
    return gp_test_summary();
}
