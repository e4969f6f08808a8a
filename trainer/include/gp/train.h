/* gp/train.h: the bundled reference trainer (MLP or CNN on Fashion-MNIST) run under the profiler,
 * and the PNG image-folder export that `gprof-train prepare` writes. The library never prints:
 * progress goes to a caller-supplied callback, results to gp_train_result and summary.json. */
#ifndef GP_TRAINER_TRAIN_H
#define GP_TRAINER_TRAIN_H

#include "gp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default data folder: the Debian package dataset-fashion-mnist. */
#define GP_TRAIN_DEFAULT_DATA "/usr/share/datasets/fashion-mnist"

/** What a progress callback is told about. */
typedef enum gp_train_event {
    GP_TRAIN_EV_START = 0, /**< the run directory exists and training is about to begin */
    GP_TRAIN_EV_STEP = 1,  /**< one batch trained (loss is the latest value read back) */
    GP_TRAIN_EV_EPOCH = 2  /**< an epoch ended and the test set was evaluated */
} gp_train_event;

/** A progress report. Times in seconds; fields a report does not fill are 0. */
typedef struct gp_train_progress {
    gp_train_event event;
    int epoch, epochs;           /**< 1-based epoch and the number planned */
    long long step, epoch_steps; /**< 1-based batch within the epoch and batches in it */
    long long global_step;       /**< optimizer steps taken so far */
    double loss;                 /**< mean training loss of the batches read back so far this
                                      epoch; NaN before the first read (CUDA reads every 50) */
    double train_accuracy;       /**< EPOCH: accuracy on the training batches of the epoch */
    double test_accuracy;        /**< EPOCH: accuracy on the test set */
    double samples_per_s;        /**< training throughput of the epoch so far */
    double elapsed_s, eta_s;     /**< since the epoch began, and the estimate to its end */
    const char *run_dir;         /**< START: the run directory */
    const char *device_name;     /**< START: "cpu (OpenBLAS)" or the GPU's name */
} gp_train_progress;

/** Progress callback; runs on the training thread. */
typedef void (*gp_train_progress_fn)(const gp_train_progress *p, void *ud);

/** Everything `gprof-train run` can set. Strings are borrowed for the duration of the call.
 * Zero-initialise and call gp_train_config_init for the defaults (the seeds' naive baseline). */
typedef struct gp_train_config {
    const char *model;      /**< "mlp" (784-128-64-10) or "cnn" */
    const char *optimizer;  /**< "adam" or "sgd" (momentum 0.9) */
    const char *device;     /**< "auto", "cuda" or "cpu" */
    const char *amp;        /**< "off", "fp16" (CUDA only) or "bf16" (CPU autocast too) */
    const char *data_dir;   /**< IDX folder or PNG image folder; NULL = GP_TRAIN_DEFAULT_DATA */
    const char *out_dir;    /**< parent of the run directory <model>-<date-time>/ ("runs") */
    const char *checkpoint; /**< save weights and optimizer state here at the end, or NULL */
    const char *resume;     /**< load them from here before training, or NULL */
    int epochs; /**< 0 with max_steps: as many as max_steps need (the run trains them all) */
    long long max_steps; /**< stop after this many optimizer steps; 0 = no limit */
    int batch_size;
    double lr;
    int accumulate; /**< micro-batches per optimizer step */
    unsigned seed;
    int workers;      /**< loader threads; 0 = load in the training thread */
    int prefetch;     /**< batches each worker loads ahead */
    int drop_last;    /**< leave out each epoch's last batch where it holds fewer (DataLoader's) */
    int pin_memory;   /**< pinned host slots (CUDA) */
    int non_blocking; /**< copies on a copy stream with an event the compute stream waits on */
    int cudnn_benchmark;
    int augment;                /**< random crop with padding 2 and horizontal flip */
    int checkpoint_activations; /**< drop activations inside each block, recompute in backward */
    const char *zero_grad; /**< "zero" (NULL: memset after each step) or "none" (set_to_none) */
    int fused;             /**< CPU: linear bias+ReLU in one pass; the step zeroes as it updates */
    int channels_last;     /**< CPU, cnn: the convolutions' activations in NHWC */
    int cuda_graphs;       /**< CUDA: each step replays a graph captured from the first */
    int profile;           /**< write the trace with libprof (when built with it) */
    const char *command;   /**< the command line, recorded in the trace; may be NULL */
    gp_train_progress_fn on_progress; /**< may be NULL */
    void *progress_ud;
} gp_train_config;

/** What a finished run produced. */
typedef struct gp_train_result {
    char run_dir[512];
    char trace_path[1024]; /**< empty when no trace was written */
    char summary_path[1024];
    char device_name[128];
    long long device_memory;    /**< bytes of device memory (0 on the CPU) */
    long long activation_bytes; /**< CPU: activation and gradient buffers of a step (0: unknown) */
    long long elementwise_passes; /**< CPU: elementwise passes per optimizer step (0: unknown) */
    int epochs_done;
    long long steps;      /**< optimizer steps taken */
    long long samples;    /**< training samples seen */
    double final_loss;    /**< mean training loss of the last epoch */
    double test_accuracy; /**< after the last epoch */
    double samples_per_s; /**< training samples over training time (evaluation excluded) */
    double train_s;       /**< training time: the steps alone, as samples_per_s counts it */
    double wall_s;        /**< the whole run: setup, training, evaluation, output */
    /** The optimizer step after which the training loss was first NaN or infinite: training
     * stopped there and no checkpoint was saved (0: it never diverged). */
    long long diverged_step;
} gp_train_result;

/** Fill `cfg` with the defaults: mlp, adam, lr 1e-3, 1 epoch, batch 64, seed 42, device auto,
 * amp off, 0 workers, prefetch 2, pageable, blocking, out_dir "runs", profiling on. */
void gp_train_config_init(gp_train_config *cfg);

/**
 * Train as `cfg` says, evaluate on the test set after each epoch, and write the run directory
 * (trace, summary.json, TensorBoard scalars) under cfg->out_dir.
 * @return GP_OK; GP_EINVAL for a bad option (e.g. --amp fp16 on the CPU); GP_EPARSE for a corrupt
 *         dataset or checkpoint (err names the file); GP_EUNSUPPORTED when CUDA was asked for
 *         but is not built or not present; GP_EIO, GP_ENOMEM, GP_ECUDA otherwise.
 */
gp_status gp_train_run(const gp_train_config *cfg, gp_train_result *result, gp_error *err);

/**
 * Write every sample of the IDX dataset in `data_dir` (NULL = default) as a grayscale PNG under
 * out_dir/{train,test}/<label>/<index>.png, the layout `--data out_dir` trains from.
 * @param written optional: number of files written.
 */
gp_status gp_train_prepare_png(const char *data_dir, const char *out_dir, long long *written,
                               gp_error *err);

/** @return the physical core count (distinct sysfs core ids), for `--workers auto`. */
int gp_train_physical_cores(void);

/** @return 1 when a CUDA device can be used by this build, 0 otherwise. */
int gp_train_cuda_available(void);

#ifdef __cplusplus
}
#endif
#endif
