/* trainer/src/backend.h: what a compute backend provides to the training loop (train.c). The CPU
 * backend (OpenBLAS) is the reference; the CUDA backend keeps everything on the device and is
 * read back only by read_stats, so there is no per-step host sync. */
#ifndef GP_TRAINER_BACKEND_H
#define GP_TRAINER_BACKEND_H

#include "amp.h"
#include "gp/status.h"
#include "loader.h"
#include "model.h"

enum optim_kind { OPTIM_ADAM, OPTIM_SGD };

#define OPTIM_BETA1    0.9f
#define OPTIM_BETA2    0.999f
#define OPTIM_EPS      1e-8f
#define OPTIM_MOMENTUM 0.9f

struct backend_config {
    const struct model_spec *spec;
    int max_batch;
    enum optim_kind optimizer;
    float lr;
    int accumulate; /* micro-batches per optimizer step: the loss is divided by it */
    enum amp_mode amp;
    int pin_memory, non_blocking, cudnn_benchmark;
    int host_threads; /* at most this many GEMM threads on the CPU (0: the BLAS library's own) */
    int checkpoint_activations; /* keep only model_ckpt_kept activations; recompute the rest */
    int zero_grad_none; /* the step leaves gradients "None": backward writes them (no memset) */
    int fused;          /* --fused: linear bias+ReLU in one pass, the step zeroes as it updates */
    int channels_last;  /* --channels-last: the CNN's convolution activations in NHWC */
};

/* Counters since the last read_stats. */
struct step_stats {
    double loss_sum;   /* summed per-sample loss */
    long long correct; /* correct argmax predictions */
    long long samples;
    long long skipped; /* optimizer steps skipped by the loss scaler (total) */
    float scale;       /* current loss scale (1 without fp16) */
};

/* Optimizer state for checkpoints: params and n_state floats of optimizer moments. */
struct backend_state {
    float *params; /* n_params */
    float *opt;    /* n_params * backend_opt_slots(optimizer) */
    long long t;   /* optimizer steps taken */
};

struct backend;

struct backend_ops {
    const char *name;
    /* Open; names the device and gives its memory in bytes (0 for the CPU). */
    gp_status (*open)(struct backend **out, const struct backend_config *cfg, char *device_name,
                      size_t name_cap, long long *device_memory, gp_error *err);
    /* Loader slot memory (pinned with --pin-memory on CUDA); `ud` is the backend. */
    loader_alloc_fn host_alloc;
    loader_free_fn host_free;
    /* Take the batch's input (the H2D copy on CUDA). */
    gp_status (*set_input)(struct backend *b, const struct batch *batch, gp_error *err);
    /* Block until the batch's host memory may be reused (after the copy). */
    gp_status (*input_done)(struct backend *b, gp_error *err);
    /* Forward and loss; `train` keeps what backward needs. Counters accumulate. */
    gp_status (*forward)(struct backend *b, int train, gp_error *err);
    /* Backward: accumulates parameter gradients. */
    gp_status (*backward)(struct backend *b, gp_error *err);
    /* Optimizer step (skipped on inf/nan under fp16), scaler update, zero the gradients. */
    gp_status (*step)(struct backend *b, gp_error *err);
    /* Read and reset the counters (a host sync on CUDA). */
    gp_status (*read_stats)(struct backend *b, struct step_stats *out, gp_error *err);
    gp_status (*get_state)(struct backend *b, struct backend_state *st, gp_error *err);
    gp_status (*set_state)(struct backend *b, const struct backend_state *st, gp_error *err);
    void (*close)(struct backend *b);
    /* Bytes of activation and activation-gradient buffers held for a step (NULL: not known). */
    long long (*activation_bytes)(struct backend *b);
    /* Elementwise passes over activations, gradients or parameters (GEMMs and im2col aside) per
     * optimizer step, counted over the training steps so far (NULL: not counted). */
    long long (*elementwise_passes)(struct backend *b);
    /* Before the first step (NULL: nothing to do): set up for batches of n (forward and, with
     * `train`, backward), so per-shape work such as --cudnn-benchmark's search is not timed
     * inside a profiled step. */
    gp_status (*prepare_batch)(struct backend *b, int n, int train, gp_error *err);
    /* --cuda-graphs (NULL: no graphs here): forward, backward and (with `optimizer`) the step of
     * the batch set_input took, as one launch of a graph captured from the first such step. */
    gp_status (*graph_step)(struct backend *b, int optimizer, gp_error *err);
};

/* Optimizer moments per parameter: 2 for Adam, 1 for SGD. */
static inline int backend_opt_slots(enum optim_kind k)
{
    return k == OPTIM_ADAM ? 2 : 1;
}

extern const struct backend_ops backend_cpu_ops;
#ifdef GP_HAVE_CUDA
/* Defined in lib/libgp_train_cuda.so (src/cuda/), which the trainer loads on first use. */
extern const struct backend_ops backend_cuda_ops;
/* @return 1 when device 0 is usable: present, compute capability >= 7.5, and this build's
 * kernels run on it; else 0, and backend_cuda_absent_why says which. */
int backend_cuda_present(void);
const char *backend_cuda_absent_why(void);

/* The trainer's side (cuda_module.c), thread-safe: the loaded module's backend or NULL,
 * whether a device is usable, and why CUDA cannot train here (NULL when it can). */
const struct backend_ops *train_cuda_ops(void);
int train_cuda_present(void);
const char *train_cuda_why(void);
/* The timing model of a simulated device (the test module of tests/simdev), else NULL. */
const char *train_cuda_simulated(void);
#endif

#endif
