/* gp_run_config_read: the one decoder of the "gprof" object (issue 16 item 2). Every field of
 * the trainer's object is read with its type; a trace without the object (PyTorch's) leaves all
 * of them unknown; a value of the wrong type is unknown, not 0; the producer decides whether the
 * knobs are the trainer's; the device properties' memory wins over the config's. */
#include "gp/run_config.h"
#include "gp_test.h"

#include <string.h>

static gp_trace *open_text(const char *json)
{
    gp_trace *t = NULL;
    gp_error err;
    if (gp_trace_open_mem(json, strlen(json), "cfg", NULL, &t, &err) != GP_OK)
        fprintf(stderr, "cfg: %s\n", err.msg);
    return t;
}

static void test_every_field(void)
{
    gp_trace *t =
            open_text("{\"gprof\":{\"producer\":\"trainer\",\"model\":\"cnn\",\"batch_size\":64,"
                      "\"workers\":2,\"prefetch\":4,\"pin_memory\":true,\"non_blocking\":false,"
                      "\"amp\":\"bf16\",\"cudnn_benchmark\":true,\"dataset_format\":\"png\","
                      "\"device\":\"cuda\",\"device_name\":\"GPU\",\"total_device_memory\":1000,"
                      "\"cpu_count\":16,\"physical_cores\":8,\"gpu_status\":\"recorded\","
                      "\"dropped_records\":5,\"dropped_cpu_records\":2,\"dropped_gpu_records\":3,"
                      "\"complete\":false},\"traceEvents\":[]}");
    GP_CHECK(t != NULL);
    gp_run_config c;
    gp_run_config_read(t, &c);
    GP_CHECK(c.trainer);
    GP_ASSERT_STR_EQ(c.model, "cnn");
    GP_ASSERT_STR_EQ(c.amp, "bf16");
    GP_ASSERT_STR_EQ(c.device, "cuda");
    GP_ASSERT_STR_EQ(c.device_name, "GPU");
    GP_ASSERT_STR_EQ(c.dataset_format, "png");
    GP_ASSERT_STR_EQ(c.gpu_status, "recorded");
    GP_CHECK(c.batch_size.known && c.batch_size.v == 64);
    GP_CHECK(c.workers.known && c.workers.v == 2);
    GP_CHECK(c.prefetch.known && c.prefetch.v == 4);
    GP_CHECK(c.cpu_count.known && c.cpu_count.v == 16);
    GP_CHECK(c.physical_cores.known && c.physical_cores.v == 8);
    GP_CHECK(c.device_memory.known && c.device_memory.v == 1000);
    GP_CHECK(c.dropped_records.v == 5 && c.dropped_cpu.v == 2 && c.dropped_gpu.v == 3);
    GP_CHECK(c.pin_memory == GP_CFG_ON && c.non_blocking == GP_CFG_OFF);
    GP_CHECK(c.cudnn_benchmark == GP_CFG_ON && c.complete == GP_CFG_OFF);
    gp_trace_free(t);
}

static void test_unknown(void)
{
    gp_run_config c;
    gp_trace *t = open_text("{\"traceEvents\":[]}"); /* PyTorch's: no "gprof" */
    GP_CHECK(t != NULL);
    gp_run_config_read(t, &c);
    GP_CHECK(!c.trainer && !c.producer && !c.model && !c.device);
    GP_CHECK(!c.workers.known && !c.batch_size.known && !c.device_memory.known);
    GP_CHECK(c.pin_memory == GP_CFG_UNKNOWN && c.complete == GP_CFG_UNKNOWN);
    gp_trace_free(t);
    /* wrong types are unknown: a workers count of 0 would say "the training thread loads" */
    t = open_text("{\"gprof\":{\"workers\":\"four\",\"pin_memory\":\"yes\",\"amp\":16,"
                  "\"model\":\"mlp\"},\"traceEvents\":[]}");
    GP_CHECK(t != NULL);
    gp_run_config_read(t, &c);
    GP_CHECK(!c.workers.known && c.pin_memory == GP_CFG_UNKNOWN && c.amp == NULL);
    GP_CHECK(c.trainer); /* a model without a producer: an older trainer trace */
    gp_trace_free(t);
}

static void test_producer_and_device_memory(void)
{
    gp_run_config c;
    gp_trace *t = open_text("{\"gprof\":{\"producer\":\"inject\",\"model\":\"mlp\","
                            "\"total_device_memory\":1000},\"deviceProperties\":[{\"id\":0,"
                            "\"totalGlobalMem\":2000}],\"traceEvents\":[]}");
    GP_CHECK(t != NULL);
    gp_run_config_read(t, &c);
    GP_CHECK(!c.trainer); /* run -- CMD: the program's own settings, not the trainer's flags */
    GP_CHECK(c.device_memory.known && c.device_memory.v == 2000);
    gp_trace_free(t);
}

/* Keys the one list (GP_TRACE_CONFIG_KEYS) decodes by their kind: the trainer's knobs beside
 * the flags, a POS number that is 0 (not measured) is unknown, a health count present. */
static void test_list_kinds(void)
{
    gp_run_config c;
    gp_trace *t = open_text("{\"gprof\":{\"zero_grad\":\"none\",\"checkpoint_activations\":true,"
                            "\"activation_bytes\":4096,\"record_cost_ns\":0,"
                            "\"health_cpu_ranges\":7,\"command\":[\"a\"]},\"traceEvents\":[]}");
    GP_CHECK(t != NULL);
    gp_run_config_read(t, &c);
    GP_CHECK(c.zero_grad && strcmp(c.zero_grad, "none") == 0);
    GP_CHECK(c.checkpoint_activations == GP_CFG_ON);
    GP_CHECK(c.activation_bytes.known && c.activation_bytes.v == 4096);
    GP_CHECK(!c.record_cost_ns.known && !c.bf16_gemm);
    GP_CHECK(c.health.known && c.health.cpu_ranges == 7 && c.health.cpu_marks == 0);
    gp_trace_free(t);
}

int main(void)
{
    GP_RUN(test_every_field);
    GP_RUN(test_unknown);
    GP_RUN(test_producer_and_device_memory);
    GP_RUN(test_list_kinds);
    return gp_test_summary();
}
