/* gp/trace_schema.h: the trace contract between libprof's writer and analyze's reader.
 * Category names, arg keys, event-name conventions and top-level keys, as Kineto writes
 * them (see DESIGN.md "The trace contract"). Header-only; nothing else couples the two. */
#ifndef GP_LIBPROF_TRACE_SCHEMA_H
#define GP_LIBPROF_TRACE_SCHEMA_H

/* ---- Top-level keys of the object form. traceEvents is always written LAST. ---- */
#define GP_KEY_SCHEMA_VERSION    "schemaVersion"       /* int, 1 */
#define GP_KEY_DEVICE_PROPERTIES "deviceProperties"    /* array, index = device id */
#define GP_KEY_DISTRIBUTED_INFO  "distributedInfo"     /* {"rank","world_size","backend"} */
#define GP_KEY_DISPLAY_TIME_UNIT "displayTimeUnit"     /* "ms" */
#define GP_KEY_BASE_TIME_NS      "baseTimeNanoseconds" /* unix ns = ts * 1000 + base */
#define GP_KEY_TRACE_NAME        "traceName"
#define GP_KEY_GPROF             "gprof" /* our run configuration object */
#define GP_KEY_TRACE_EVENTS      "traceEvents"
#define GP_SCHEMA_VERSION        1

/* ---- Keys inside "gprof": what the rules need to name the knob to turn. ---- */
#define GP_CFG_TOOL_VERSION    "version"  /* gprof-train version string */
#define GP_CFG_PRODUCER        "producer" /* "trainer" | "inject" | "api" */
#define GP_CFG_COMMAND         "command"  /* argv of the profiled program */
#define GP_CFG_MODEL           "model"    /* "mlp" | "cnn" */
#define GP_CFG_BATCH_SIZE      "batch_size"
#define GP_CFG_WORKERS         "workers" /* loader threads, 0 = main thread */
#define GP_CFG_PREFETCH        "prefetch"
#define GP_CFG_DROP_LAST       "drop_last"
#define GP_CFG_PIN_MEMORY      "pin_memory"      /* bool */
#define GP_CFG_NON_BLOCKING    "non_blocking"    /* bool */
#define GP_CFG_AMP             "amp"             /* "off" | "fp16" | "bf16" */
#define GP_CFG_CUDNN_BENCHMARK "cudnn_benchmark" /* bool */
#define GP_CFG_DATASET_FORMAT  "dataset_format"  /* "idx" | "png" */
#define GP_CFG_DEVICE          "device"          /* "cuda" | "cpu" */
#define GP_CFG_DEVICE_NAME     "device_name"
#define GP_CFG_DEVICE_MEMORY   "total_device_memory" /* bytes */
#define GP_CFG_CPU_COUNT       "cpu_count"           /* online logical CPUs */
#define GP_CFG_PHYSICAL_CORES  "physical_cores"
#define GP_CFG_BLAS_THREADS    "blas_threads" /* trainer: OpenBLAS threads of the CPU backend */
#define GP_CFG_CKPT_ACTIVATIONS                                                                    \
    "checkpoint_activations"             /* bool: trainer recomputes activations                   \
                                          */
#define GP_CFG_BF16_GEMM     "bf16_gemm" /* trainer, CPU --amp bf16: "sbgemm" | "rounded-sgemm" */
#define GP_CFG_ZERO_GRAD     "zero_grad" /* trainer: "zero" | "none" (set_to_none) */
#define GP_CFG_FUSED         "fused"     /* bool: trainer fuses bias+ReLU and zero_grad */
#define GP_CFG_CHANNELS_LAST "channels_last" /* bool: trainer's convolutions in NHWC */
#define GP_CFG_CUDA_GRAPHS   "cuda_graphs"   /* bool: trainer replays a captured step (CUDA) */
/* trainer (CPU): elementwise passes over activations, gradients and parameters per optimizer
 * step (GEMMs and im2col aside): what --fused saves */
#define GP_CFG_ELEMENTWISE_PASSES "elementwise_passes"
#define GP_CFG_CKPT_SAVING        "checkpoint_saving_bytes" /* trainer: what checkpointing saves */
#define GP_CFG_ACTIVATION_BYTES   "activation_bytes" /* trainer (CPU): activation + grad buffers */
/* trainer, over its training loop: the wall time of its steps and the training thread's CPU time
 * in them; its loader threads' CPU time; the CPU time every other process on the machine used
 * meanwhile (/proc/stat less this process), and the wall time that covers (all ns) */
#define GP_CFG_STEP_WALL  "step_wall_ns"
#define GP_CFG_STEP_CPU   "step_thread_cpu_ns"
#define GP_CFG_LOADER_CPU "loader_cpu_ns"
#define GP_CFG_OTHER_CPU  "other_cpu_ns"
#define GP_CFG_LOOP_WALL  "loop_wall_ns"
/* trainer, over its loop: time runnable but waiting for a core (/proc/thread-self/schedstat) of
 * the training thread and of its loader threads (ns) */
#define GP_CFG_TRAIN_RUNQ  "train_runq_ns"
#define GP_CFG_LOADER_RUNQ "loader_runq_ns"
#define GP_CFG_GPU_STATUS  "gpu_status" /* "recorded" | why GPU activity is absent */
/* Set by a simulated device (tests/simdev): its timing model. gpu_status then says "simulated"
 * where it would say "recorded": the GPU records are real records of modelled times. */
#define GP_CFG_GPU_TIMING_MODEL   "gpu_timing_model"
#define GP_CFG_DROPPED_RECORDS    "dropped_records" /* records lost to full buffers */
#define GP_CFG_WARNINGS           "warnings"        /* array of strings (e.g. unbalanced pops) */
#define GP_CFG_DROPPED_CPU        "dropped_cpu_records" /* part of dropped_records: past the limit */
#define GP_CFG_DROPPED_GPU        "dropped_gpu_records" /* part of dropped_records: CUPTI */
#define GP_CFG_BUFFER_LIMIT       "buffer_limit_bytes"  /* libprof: record memory limit */
#define GP_CFG_BUFFER_PEAK        "buffer_peak_bytes"   /* libprof: most record memory held */
#define GP_CFG_FLUSH_INTERVAL     "flush_interval_ms"   /* libprof: the writer's pass period */
#define GP_CFG_RECORD_COST        "record_cost_ns" /* libprof: one range's cost, measured at init */
#define GP_CFG_COMPLETE           "complete"       /* bool: false while written / if cut off */
#define GP_CFG_PEAK_DEVICE_MEMORY "peak_device_memory_allocated" /* bytes, fullest GPU, CUPTI */
#define GP_CFG_CLOCK_REALTIME_NS  "clock_realtime_ns"            /* anchor pair read together */
#define GP_CFG_CLOCK_MONOTONIC_NS "clock_monotonic_ns"
/* The capture-health ledger (libprof, per session): what was recorded and lost, how far the
 * writer fell behind, what the profiler cost, and GPU records with impossible times. */
#define GP_CFG_H_CPU_RANGES    "health_cpu_ranges"           /* ranges and steps written */
#define GP_CFG_H_CPU_MARKS     "health_cpu_marks"            /* instant marks */
#define GP_CFG_H_CPU_COUNTERS  "health_cpu_counters"         /* counter samples */
#define GP_CFG_H_CPU_ASYNC     "health_cpu_async"            /* NVTX start/end ranges */
#define GP_CFG_H_CPU_DROPPED   "health_cpu_dropped"          /* CPU records lost (= dropped_cpu) */
#define GP_CFG_H_GPU_RECORDS   "health_gpu_records"          /* CUPTI activity records converted */
#define GP_CFG_H_GPU_DROPPED   "health_gpu_dropped"          /* dropped by CUPTI (= dropped_gpu) */
#define GP_CFG_H_GPU_NO_TIME   "health_gpu_no_timestamp"     /* kernels/copies with 0 times */
#define GP_CFG_H_GPU_END_FIRST "health_gpu_end_before_start" /* end < start */
#define GP_CFG_H_GPU_EARLY     "health_gpu_start_before_launch" /* start < its API call */
#define GP_CFG_H_WRITER_BEHIND "health_writer_max_behind_ns"    /* oldest record a pass found */
#define GP_CFG_H_PROFILER_COST "health_profiler_cost_ns"        /* record_cost_ns x CPU records */
#define GP_CFG_H_WRITER_CPU    "health_writer_cpu_ns"           /* the writer thread's CPU time */

/* ---- The "gprof" keys, one line each: the one list the reader's decoder (gp_run_config), the
 * docs' table (README "The trace's \"gprof\" keys", checked by test_trace_config_keys) are made
 * from. X(MACRO, KIND, FIELD, WRITER, DOC): KIND is how it is written and read:
 *   STR     a string            -> const char *FIELD, NULL when absent or not a string
 *   NUM     an integer          -> gp_cfg_num FIELD, known 0 when absent or not a number
 *   POS     an integer, 0 = not measured -> gp_cfg_num FIELD, known only when > 0
 *   SWITCH  a bool              -> gp_cfg_switch FIELD, GP_CFG_UNKNOWN when absent
 *   COUNT   a health count      -> int64_t health.FIELD, 0 when absent (the ledger is known
 *           when its first count is there)
 *   LIST    an array of strings, not decoded (FIELD unused)
 * WRITER: who writes it (libprof for every trace it writes; trainer for the bundled trainer's).
 * Adding a key: its #define above, its line here (the decoder and the table follow), then
 * `GP_UPDATE_GOLDEN=1 ctest -R test_trace_config_keys` rewrites the README table. ---- */
/* clang-format off */
#define GP_TRACE_CONFIG_KEYS(X) \
    X(GP_CFG_TOOL_VERSION,       STR,    version,             "libprof", "gprof-train version that wrote the trace") \
    X(GP_CFG_PRODUCER,           STR,    producer,            "libprof", "\"trainer\" (the bundled trainer), \"inject\" (`run -- CMD`) or \"api\" (a program linking libprof)") \
    X(GP_CFG_COMMAND,            LIST,   command,             "libprof", "argv of the profiled program") \
    X(GP_CFG_MODEL,              STR,    model,               "trainer", "\"mlp\" or \"cnn\"") \
    X(GP_CFG_BATCH_SIZE,         NUM,    batch_size,          "trainer", "samples per micro-batch (one step)") \
    X(GP_CFG_WORKERS,            NUM,    workers,             "trainer", "loader threads; 0 = the training thread loads") \
    X(GP_CFG_PREFETCH,           NUM,    prefetch,            "trainer", "batches each loader thread prepares ahead") \
    X(GP_CFG_DROP_LAST,          SWITCH, drop_last,           "trainer", "each epoch's last batch left out where it holds fewer") \
    X(GP_CFG_PIN_MEMORY,         SWITCH, pin_memory,          "trainer", "batches in page-locked memory") \
    X(GP_CFG_NON_BLOCKING,       SWITCH, non_blocking,        "trainer", "host-to-device copies asynchronous") \
    X(GP_CFG_AMP,                STR,    amp,                 "trainer", "\"off\", \"fp16\" or \"bf16\"") \
    X(GP_CFG_CUDNN_BENCHMARK,    SWITCH, cudnn_benchmark,     "trainer", "convolution algorithms timed and chosen") \
    X(GP_CFG_CKPT_ACTIVATIONS,   SWITCH, checkpoint_activations, "trainer", "activations recomputed in backward") \
    X(GP_CFG_BF16_GEMM,          STR,    bf16_gemm,           "trainer", "CPU `--amp bf16`: \"sbgemm\" or \"rounded-sgemm\"") \
    X(GP_CFG_ZERO_GRAD,          STR,    zero_grad,           "trainer", "\"zero\" or \"none\" (set_to_none)") \
    X(GP_CFG_FUSED,              SWITCH, fused,               "trainer", "bias+ReLU in one pass, gradients zeroed in the optimizer's pass") \
    X(GP_CFG_CHANNELS_LAST,      SWITCH, channels_last,       "trainer", "the CNN's convolutions in NHWC") \
    X(GP_CFG_CUDA_GRAPHS,        SWITCH, cuda_graphs,         "trainer", "each training step one launch of a captured CUDA graph") \
    X(GP_CFG_ELEMENTWISE_PASSES, NUM,    elementwise_passes,  "trainer", "elementwise passes over memory per optimizer step (CPU; GEMMs and im2col not counted)") \
    X(GP_CFG_CKPT_SAVING,        NUM,    checkpoint_saving_bytes, "trainer", "bytes `--checkpoint-activations` would save (CPU)") \
    X(GP_CFG_ACTIVATION_BYTES,   NUM,    activation_bytes,    "trainer", "activation and gradient buffers, bytes (CPU)") \
    X(GP_CFG_DATASET_FORMAT,     STR,    dataset_format,      "trainer", "\"idx\" or \"png\"") \
    X(GP_CFG_DEVICE,             STR,    device,              "trainer", "\"cuda\" or \"cpu\"") \
    X(GP_CFG_DEVICE_NAME,        STR,    device_name,         "both",    "the GPU's name, \"\" on the CPU") \
    X(GP_CFG_DEVICE_MEMORY,      POS,    device_memory,       "both",    "the GPU's memory, bytes (the trace's deviceProperties win)") \
    X(GP_CFG_CPU_COUNT,          NUM,    cpu_count,           "both",    "online logical CPUs") \
    X(GP_CFG_PHYSICAL_CORES,     NUM,    physical_cores,      "trainer", "physical cores") \
    X(GP_CFG_BLAS_THREADS,       NUM,    blas_threads,        "trainer", "OpenBLAS threads of the CPU backend") \
    X(GP_CFG_STEP_WALL,          NUM,    step_wall,           "trainer", "ns: wall time of the profiled steps") \
    X(GP_CFG_STEP_CPU,           NUM,    step_cpu,            "trainer", "ns: the training thread's CPU time in them") \
    X(GP_CFG_LOADER_CPU,         NUM,    loader_cpu,          "trainer", "ns: the loader threads' CPU time over the loop") \
    X(GP_CFG_OTHER_CPU,          NUM,    other_cpu,           "trainer", "ns: CPU time every other process used over the loop") \
    X(GP_CFG_LOOP_WALL,          NUM,    loop_wall,           "trainer", "ns: the training loop's wall time") \
    X(GP_CFG_TRAIN_RUNQ,         NUM,    train_runq,          "trainer", "ns: the training thread runnable without a core") \
    X(GP_CFG_LOADER_RUNQ,        NUM,    loader_runq,         "trainer", "ns: the loader threads runnable without a core") \
    X(GP_CFG_GPU_STATUS,         STR,    gpu_status,          "libprof", "\"recorded\", \"recorded, except: ...\", \"simulated\" or why GPU activity is absent") \
    X(GP_CFG_GPU_TIMING_MODEL,   STR,    gpu_timing_model,    "trainer", "a simulated device's timing model (tests/simdev)") \
    X(GP_CFG_DROPPED_RECORDS,    NUM,    dropped_records,     "libprof", "records lost, all kinds") \
    X(GP_CFG_WARNINGS,           LIST,   warnings,            "libprof", "what went wrong while recording (e.g. unbalanced pops)") \
    X(GP_CFG_DROPPED_CPU,        NUM,    dropped_cpu,         "libprof", "of them, CPU records past the record-memory limit") \
    X(GP_CFG_DROPPED_GPU,        NUM,    dropped_gpu,         "libprof", "of them, GPU records CUPTI dropped") \
    X(GP_CFG_BUFFER_LIMIT,       NUM,    buffer_limit_bytes,  "libprof", "record-memory limit, bytes") \
    X(GP_CFG_BUFFER_PEAK,        NUM,    buffer_peak_bytes,   "libprof", "most record memory held, bytes") \
    X(GP_CFG_FLUSH_INTERVAL,     NUM,    flush_interval_ms,   "libprof", "the writer's pass period, ms") \
    X(GP_CFG_RECORD_COST,        POS,    record_cost_ns,      "libprof", "ns one recorded range costs its thread (measured at init; 0 = not measured)") \
    X(GP_CFG_COMPLETE,           SWITCH, complete,            "libprof", "false while being written, or when the program died") \
    X(GP_CFG_PEAK_DEVICE_MEMORY, NUM,    peak_device_memory,  "libprof", "bytes allocated at the peak, fullest GPU (CUPTI)") \
    X(GP_CFG_CLOCK_REALTIME_NS,  NUM,    clock_realtime_ns,   "libprof", "CLOCK_REALTIME, read together with the next") \
    X(GP_CFG_CLOCK_MONOTONIC_NS, NUM,    clock_monotonic_ns,  "libprof", "CLOCK_MONOTONIC, read together with the previous") \
    X(GP_CFG_H_CPU_RANGES,       COUNT,  cpu_ranges,          "libprof", "ranges and steps written") \
    X(GP_CFG_H_CPU_MARKS,        COUNT,  cpu_marks,           "libprof", "instant marks") \
    X(GP_CFG_H_CPU_COUNTERS,     COUNT,  cpu_counters,        "libprof", "counter samples") \
    X(GP_CFG_H_CPU_ASYNC,        COUNT,  cpu_async,           "libprof", "NVTX start/end ranges") \
    X(GP_CFG_H_CPU_DROPPED,      COUNT,  cpu_dropped,         "libprof", "CPU records lost (= dropped_cpu_records)") \
    X(GP_CFG_H_GPU_RECORDS,      COUNT,  gpu_records,         "libprof", "CUPTI activity records converted") \
    X(GP_CFG_H_GPU_DROPPED,      COUNT,  gpu_dropped,         "libprof", "dropped by CUPTI (= dropped_gpu_records)") \
    X(GP_CFG_H_GPU_NO_TIME,      COUNT,  gpu_no_timestamp,    "libprof", "kernels and copies with 0 times") \
    X(GP_CFG_H_GPU_END_FIRST,    COUNT,  gpu_end_before_start, "libprof", "GPU records that end before they start") \
    X(GP_CFG_H_GPU_EARLY,        COUNT,  gpu_start_before_launch, "libprof", "GPU records that start before their API call") \
    X(GP_CFG_H_WRITER_BEHIND,    COUNT,  writer_max_behind_ns, "libprof", "ns the oldest record a writer pass found had waited") \
    X(GP_CFG_H_PROFILER_COST,    COUNT,  profiler_cost_ns,    "libprof", "ns: record_cost_ns x CPU records, in the program's threads") \
    X(GP_CFG_H_WRITER_CPU,       COUNT,  writer_cpu_ns,       "libprof", "ns: the writer thread's CPU time")
/* clang-format on */

/* ---- Categories ("cat"), current Kineto schema. ---- */
#define GP_CAT_CPU_OP              "cpu_op"
#define GP_CAT_USER_ANNOTATION     "user_annotation"
#define GP_CAT_GPU_USER_ANNOTATION "gpu_user_annotation"
#define GP_CAT_CUDA_RUNTIME        "cuda_runtime"
#define GP_CAT_CUDA_DRIVER         "cuda_driver"
#define GP_CAT_CUDA_SYNC           "cuda_sync"
#define GP_CAT_CUDA_EVENT          "cuda_event"
#define GP_CAT_KERNEL              "kernel"
#define GP_CAT_GPU_MEMCPY          "gpu_memcpy"
#define GP_CAT_GPU_MEMSET          "gpu_memset"
#define GP_CAT_CPU_INSTANT         "cpu_instant_event"
#define GP_CAT_PYTHON_FUNCTION     "python_function"
#define GP_CAT_OVERHEAD            "overhead"
#define GP_CAT_COLLECTIVE          "collective_comm"
#define GP_CAT_FLOW_AC2G           "ac2g" /* flow cat and name: launch -> GPU activity */
#define GP_CAT_FLOW_FWDBWD         "fwdbwd"
#define GP_CAT_TRACE               "Trace"

/* ---- Categories of the 2021 schema (PyTorch 1.8/1.9), read but never written. ---- */
#define GP_CAT_OLD_OPERATOR "Operator"
#define GP_CAT_OLD_RUNTIME  "Runtime"
#define GP_CAT_OLD_KERNEL   "Kernel"
#define GP_CAT_OLD_MEMCPY   "Memcpy"
#define GP_CAT_OLD_MEMSET   "Memset"
#define GP_CAT_OLD_FLOW     "async" /* flow name "launch" */

/* ---- Arg keys. ---- */
#define GP_ARG_EXTERNAL_ID "External id"
#define GP_ARG_CORRELATION "correlation"
#define GP_ARG_CBID        "cbid"
#define GP_ARG_DEVICE      "device"
#define GP_ARG_CONTEXT     "context"
#define GP_ARG_STREAM      "stream"
#define GP_ARG_QUEUED      "queued"
/* work launched from a CUDA graph (cudaGraphLaunch): CUPTI's graph and node ids */
#define GP_ARG_GRAPH_ID        "graph id"
#define GP_ARG_GRAPH_NODE_ID   "graph node id"
#define GP_ARG_REGISTERS       "registers per thread"
#define GP_ARG_SHARED_MEMORY   "shared memory"
#define GP_ARG_BLOCKS_PER_SM   "blocks per SM"
#define GP_ARG_WARPS_PER_SM    "warps per SM"
#define GP_ARG_GRID            "grid"
#define GP_ARG_BLOCK           "block"
#define GP_ARG_OCCUPANCY       "est. achieved occupancy %"
#define GP_ARG_BYTES           "bytes"
#define GP_ARG_BANDWIDTH       "memory bandwidth (GB/s)"
#define GP_ARG_SYNC_KIND       "cuda_sync_kind"
#define GP_ARG_WAIT_ON_STREAM  "wait_on_stream"
#define GP_ARG_INPUT_DIMS      "Input Dims"
#define GP_ARG_INPUT_TYPE      "Input type"
#define GP_ARG_SEQUENCE_NUMBER "Sequence number"
/* python_function (with_stack=True): PyTorch's Python tracer ids */
#define GP_ARG_PYTHON_ID        "Python id"
#define GP_ARG_PYTHON_PARENT_ID "Python parent id"
#define GP_ARG_PYTHON_MODULE_ID "Python module id" /* an nn.Module call */
/* ProfilerStep#N written by libprof (gp_prof_step*), where the system says (Linux schedstat):
 * the stepping thread's time on a core and its time runnable but waiting for one, ns, over the
 * step (ours; PyTorch writes no args on its steps) */
#define GP_ARG_STEP_CPU  "gprof_thread_cpu_ns"
#define GP_ARG_STEP_RUNQ "gprof_runq_ns"
/* [memory] instant events */
#define GP_ARG_COUNTER_VALUE      "value" /* a counter's (ph "C") sample */
#define GP_ARG_MEM_ADDR           "Addr"
#define GP_ARG_MEM_BYTES          "Bytes" /* negative = free */
#define GP_ARG_MEM_TOTAL_ALLOC    "Total Allocated"
#define GP_ARG_MEM_TOTAL_RESERVED "Total Reserved"
#define GP_ARG_MEM_DEVICE_TYPE    "Device Type" /* 0 = CPU, 1 = CUDA */
#define GP_ARG_MEM_DEVICE_ID      "Device Id"   /* -1 for CPU */
#define GP_MEM_DEVICE_TYPE_CPU    0
#define GP_MEM_DEVICE_TYPE_CUDA   1

/* ---- Event names and name conventions. ---- */
#define GP_NAME_STEP_PREFIX   "ProfilerStep#"          /* ProfilerStep#N, CPU thread only */
#define GP_NAME_LOADER_PREFIX "enumerate(DataLoader)#" /* loader wait range */
#define GP_NAME_LOADER_SUFFIX ".__next__"
/* The trainer's loader wait, exactly as PyTorch names it. */
#define GP_NAME_LOADER_NEXT    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
#define GP_NAME_LOADER_NEXT_MP "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
#define GP_NAME_MEMORY         "[memory]"
/* libprof's counter ("ph":"C", pid only): from its ts to the next sample's, the most time any
 * one CPU of the machine lost to the hypervisor (steal), % of that span; none without steal */
#define GP_NAME_HOST_STEAL     "[gprof] host steal %"
#define GP_NAME_SETUP          "setup" /* trainer: backend, device memory, weights */
#define GP_NAME_FORWARD        "forward"
#define GP_NAME_BACKWARD       "backward"
#define GP_NAME_OPTIMIZER      "Optimizer.step"
#define GP_NAME_H2D            "h2d_copy"
#define GP_NAME_MEMCPY_PREFIX  "Memcpy "      /* "Memcpy HtoD (Pageable -> Device)" */
#define GP_NAME_MEMSET_PREFIX  "Memset "      /* "Memset (Device)" */
#define GP_NAME_PROCESS_NAME   "process_name" /* ph M metadata */
#define GP_NAME_PROCESS_LABELS "process_labels"
#define GP_NAME_PROCESS_SORT   "process_sort_index"
#define GP_NAME_THREAD_NAME    "thread_name"
#define GP_NAME_THREAD_SORT    "thread_sort_index"
/* trainer --cuda-graphs: the step's one graph launch, and the capture of a new shape's step */
#define GP_NAME_GRAPH_REPLAY  "CUDAGraph.replay"
#define GP_NAME_GRAPH_CAPTURE "CUDAGraph.capture"
/* trainer: a counter ("ph":"C") sampled in each step, the samples its batch holds (the epoch's last
 * batch may hold fewer): GT14 tells a new batch size's first-time work from a stall */
#define GP_NAME_BATCH_COUNTER  "batch_size"
#define GP_GPU_SORT_INDEX_BASE 5000000 /* Kineto: GPU process_sort_index = base + n */

/* ---- Memory kinds as they appear in memcpy names: "Memcpy HtoD (Pageable -> Device)". ---- */
#define GP_MEMKIND_PAGEABLE "Pageable"
#define GP_MEMKIND_PINNED   "Pinned"
#define GP_MEMKIND_DEVICE   "Device"
#define GP_MEMKIND_MANAGED  "Managed"

/* ---- File naming (tensorboard_trace_handler's): <host>_<pid>.<ms>.pt.trace.json[.gz]. ---- */
#define GP_TRACE_SUFFIX    ".pt.trace.json"
#define GP_TRACE_SUFFIX_GZ ".pt.trace.json.gz"

#endif
