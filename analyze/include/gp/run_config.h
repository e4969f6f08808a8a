/* gp/run_config.h: the run configuration a trace carries (the "gprof" object libprof and the
 * trainer write), typed. Every field can be unknown, and says so: a PyTorch trace carries none
 * of them, a program under `run -- CMD` only some. One decoder for every reader (the rules, the
 * trace-quality checks, the report). */
#ifndef GP_RUN_CONFIG_H
#define GP_RUN_CONFIG_H

#include "gp/trace.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A switch the trace may not state. */
typedef enum gp_cfg_switch { GP_CFG_UNKNOWN = -1, GP_CFG_OFF = 0, GP_CFG_ON = 1 } gp_cfg_switch;

/** A number the trace may not state: `known` 0 means absent (or not a number), never 0 or -1. */
typedef struct gp_cfg_num {
    int known;
    int64_t v;
} gp_cfg_num;

/** libprof's capture-health ledger (the "health_*" members, per session); `known` 0 for a trace
 * without one (PyTorch's, or libprof's before it). Counts and ns. */
typedef struct gp_capture_health {
    int known;
    int64_t cpu_ranges, cpu_marks, cpu_counters, cpu_async, cpu_dropped;
    int64_t gpu_records, gpu_dropped, gpu_no_timestamp, gpu_end_before_start,
            gpu_start_before_launch;
    int64_t writer_max_behind_ns; /**< the oldest record a writer pass found had waited this */
    int64_t profiler_cost_ns;     /**< record_cost_ns x CPU records: in the program's threads */
    int64_t writer_cpu_ns;        /**< the writer thread's CPU time */
} gp_capture_health;

typedef struct gp_run_config {
    /** The bundled trainer wrote the trace (producer "trainer", or a model named without a
     * producer, as older traces were): its knobs are `gprof-train run` flags. */
    int trainer;
    /* Strings: NULL when absent or not a string; valid until gp_trace_free. */
    const char *producer;       /**< "trainer", "inject", "api" */
    const char *model;          /**< "mlp", "cnn" */
    const char *amp;            /**< "off", "fp16", "bf16" */
    const char *device;         /**< "cuda", "cpu" */
    const char *device_name;    /**< the GPU's, or "" on the CPU */
    const char *dataset_format; /**< "idx", "png" */
    const char *gpu_status;     /**< "recorded", "recorded, except: ...", or why there is none */
    gp_cfg_num batch_size, workers, prefetch, cpu_count, physical_cores;
    gp_cfg_num device_memory;   /**< bytes: the trace's device properties, else the config's */
    gp_cfg_num dropped_records; /**< records the profiler lost, all kinds */
    gp_cfg_num dropped_cpu;     /**< of them, CPU ranges past the record-memory limit */
    gp_cfg_num dropped_gpu;     /**< of them, GPU records CUPTI dropped */
    gp_cfg_num record_cost_ns;  /**< libprof: what one recorded range costs its thread, in ns */
    gp_cfg_num blas_threads;    /**< trainer: OpenBLAS threads of its CPU backend */
    /** trainer, over its training loop (ns): steps' wall time and the training thread's CPU time
     * in them, its loader threads' CPU time, other processes' CPU time and the loop's wall time */
    gp_cfg_num step_wall, step_cpu, loader_cpu, other_cpu, loop_wall;
    gp_cfg_num train_runq, loader_runq; /**< trainer: time waiting for a core (schedstat), ns */
    /** trainer (CPU): elementwise passes per optimizer step, and the knobs that change them */
    gp_cfg_num elementwise_passes;
    gp_cfg_switch fused, channels_last;
    gp_cfg_switch pin_memory, non_blocking, cudnn_benchmark;
    gp_cfg_switch complete; /**< GP_CFG_OFF while being written, or when the program died */
    gp_capture_health health;
} gp_run_config;

/** Decode `t`'s "gprof" object (and its device properties, for device_memory) into `out`. A key
 * of the wrong type is unknown, not an error.
 * @param t the trace; the strings of `out` are borrowed from it (valid until gp_trace_free).
 * @param out filled in full (required; every field unknown for a trace without the object). */
void gp_run_config_read(const gp_trace *t, gp_run_config *out);

#ifdef __cplusplus
}
#endif
#endif
