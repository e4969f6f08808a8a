/* run_config.c: the one decoder of the "gprof" object (gp/run_config.h). */
#include "gp/run_config.h"
#include "gp/trace_schema.h"

#include <string.h>

static const char *str_of(const gp_kv *kv, size_t n, const char *key)
{
    const gp_kv *v = gp_kv_find(kv, n, key);
    return v && v->type == GP_KV_STRING ? v->str : NULL;
}

static gp_cfg_num num_of(const gp_kv *kv, size_t n, const char *key)
{
    const gp_kv *v = gp_kv_find(kv, n, key);
    if (v && (v->type == GP_KV_INT || v->type == GP_KV_DOUBLE))
        return (gp_cfg_num){1, v->i};
    return (gp_cfg_num){0, 0};
}

static gp_cfg_switch switch_of(const gp_kv *kv, size_t n, const char *key)
{
    const gp_kv *v = gp_kv_find(kv, n, key);
    if (v && (v->type == GP_KV_BOOL || v->type == GP_KV_INT))
        return v->i ? GP_CFG_ON : GP_CFG_OFF;
    return GP_CFG_UNKNOWN;
}

/* A ledger count: 0 when absent (the ledger is known when its first member is there). */
static int64_t count_of(const gp_kv *kv, size_t n, const char *key)
{
    gp_cfg_num v = num_of(kv, n, key);
    return v.known && v.v > 0 ? v.v : 0;
}

static void read_health(const gp_kv *kv, size_t n, gp_capture_health *h)
{
    h->known = num_of(kv, n, GP_CFG_H_CPU_RANGES).known;
    h->cpu_ranges = count_of(kv, n, GP_CFG_H_CPU_RANGES);
    h->cpu_marks = count_of(kv, n, GP_CFG_H_CPU_MARKS);
    h->cpu_counters = count_of(kv, n, GP_CFG_H_CPU_COUNTERS);
    h->cpu_async = count_of(kv, n, GP_CFG_H_CPU_ASYNC);
    h->cpu_dropped = count_of(kv, n, GP_CFG_H_CPU_DROPPED);
    h->gpu_records = count_of(kv, n, GP_CFG_H_GPU_RECORDS);
    h->gpu_dropped = count_of(kv, n, GP_CFG_H_GPU_DROPPED);
    h->gpu_no_timestamp = count_of(kv, n, GP_CFG_H_GPU_NO_TIME);
    h->gpu_end_before_start = count_of(kv, n, GP_CFG_H_GPU_END_FIRST);
    h->gpu_start_before_launch = count_of(kv, n, GP_CFG_H_GPU_EARLY);
    h->writer_max_behind_ns = count_of(kv, n, GP_CFG_H_WRITER_BEHIND);
    h->profiler_cost_ns = count_of(kv, n, GP_CFG_H_PROFILER_COST);
    h->writer_cpu_ns = count_of(kv, n, GP_CFG_H_WRITER_CPU);
}

void gp_run_config_read(const gp_trace *t, gp_run_config *out)
{
    size_t n, nd;
    const gp_kv *kv = gp_trace_config(t, &n);
    memset(out, 0, sizeof(*out));
    out->producer = str_of(kv, n, GP_CFG_PRODUCER);
    out->model = str_of(kv, n, GP_CFG_MODEL);
    out->trainer = out->producer ? strcmp(out->producer, "trainer") == 0 : out->model != NULL;
    out->amp = str_of(kv, n, GP_CFG_AMP);
    out->device = str_of(kv, n, GP_CFG_DEVICE);
    out->device_name = str_of(kv, n, GP_CFG_DEVICE_NAME);
    out->dataset_format = str_of(kv, n, GP_CFG_DATASET_FORMAT);
    out->gpu_status = str_of(kv, n, GP_CFG_GPU_STATUS);
    out->batch_size = num_of(kv, n, GP_CFG_BATCH_SIZE);
    out->workers = num_of(kv, n, GP_CFG_WORKERS);
    out->prefetch = num_of(kv, n, GP_CFG_PREFETCH);
    out->cpu_count = num_of(kv, n, GP_CFG_CPU_COUNT);
    out->physical_cores = num_of(kv, n, GP_CFG_PHYSICAL_CORES);
    out->dropped_records = num_of(kv, n, GP_CFG_DROPPED_RECORDS);
    out->dropped_cpu = num_of(kv, n, GP_CFG_DROPPED_CPU);
    out->dropped_gpu = num_of(kv, n, GP_CFG_DROPPED_GPU);
    out->record_cost_ns = num_of(kv, n, GP_CFG_RECORD_COST);
    if (out->record_cost_ns.known && out->record_cost_ns.v <= 0)
        out->record_cost_ns = (gp_cfg_num){0, 0}; /* libprof writes 0 when it could not time it */
    out->blas_threads = num_of(kv, n, GP_CFG_BLAS_THREADS);
    out->step_wall = num_of(kv, n, GP_CFG_STEP_WALL);
    out->step_cpu = num_of(kv, n, GP_CFG_STEP_CPU);
    out->loader_cpu = num_of(kv, n, GP_CFG_LOADER_CPU);
    out->other_cpu = num_of(kv, n, GP_CFG_OTHER_CPU);
    out->loop_wall = num_of(kv, n, GP_CFG_LOOP_WALL);
    out->train_runq = num_of(kv, n, GP_CFG_TRAIN_RUNQ);
    out->loader_runq = num_of(kv, n, GP_CFG_LOADER_RUNQ);
    out->elementwise_passes = num_of(kv, n, GP_CFG_ELEMENTWISE_PASSES);
    out->fused = switch_of(kv, n, GP_CFG_FUSED);
    out->channels_last = switch_of(kv, n, GP_CFG_CHANNELS_LAST);
    out->pin_memory = switch_of(kv, n, GP_CFG_PIN_MEMORY);
    out->non_blocking = switch_of(kv, n, GP_CFG_NON_BLOCKING);
    out->cudnn_benchmark = switch_of(kv, n, GP_CFG_CUDNN_BENCHMARK);
    out->complete = switch_of(kv, n, GP_CFG_COMPLETE);
    out->device_memory = num_of(kv, n, GP_CFG_DEVICE_MEMORY);
    if (out->device_memory.known && out->device_memory.v <= 0)
        out->device_memory = (gp_cfg_num){0, 0};
    read_health(kv, n, &out->health);
    const gp_device_props *dp = gp_trace_devices(t, &nd);
    if (nd > 0 && dp[0].total_global_mem > 0)
        out->device_memory = (gp_cfg_num){1, dp[0].total_global_mem};
}
