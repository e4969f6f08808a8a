/* trainer/src/cuda/cuda_int.h: the CUDA backend's state, shared by backend_cuda.c (memory,
 * streams, input copies, state), cuda_layers.c (forward/backward/step), cuda_gemm.c (cuBLAS) and
 * cuda_conv.c (cuDNN). Every device buffer comes from one arena allocated at open, so
 * steady-state steps never call cudaMalloc. */
#ifndef GP_TRAINER_CUDA_INT_H
#define GP_TRAINER_CUDA_INT_H

#include "backend.h"
#include "cuda_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#define CUDA_WORKSPACE_BYTES    (64u << 20) /* cuDNN workspace cap */
#define CUDA_LT_WORKSPACE_BYTES (4u << 20)  /* cuBLASLt workspace */
/* cuBLAS's own, set so that it never allocates one inside a captured step (32 MiB on Hopper) */
#define CUDA_BLAS_WORKSPACE_BYTES (32u << 20)
#define CUDA_CONV_CACHE           4 /* descriptor sets per layer (batch sizes) */
#define CUDA_GRAPH_CACHE          8 /* --cuda-graphs: captured steps (slot, batch, optimizer, grads) */

/* Where a failed call is (file:line), for the error message. */
#ifdef __FILE_NAME__
#    define CUDA_SRC __FILE_NAME__
#else
#    define CUDA_SRC __FILE__
#endif

#define CU_TRY(call, err)                                                                          \
    do {                                                                                           \
        cudaError_t cu_rc = (call);                                                                \
        if (cu_rc != cudaSuccess)                                                                  \
            return gp_error_set((err), GP_ECUDA, NULL, "%s: %s (%s:%d)", #call,                    \
                                cudaGetErrorString(cu_rc), CUDA_SRC, __LINE__);                    \
    } while (0)

#define CUBLAS_TRY(call, err)                                                                      \
    do {                                                                                           \
        cublasStatus_t cb_rc = (call);                                                             \
        if (cb_rc != CUBLAS_STATUS_SUCCESS)                                                        \
            return gp_error_set((err), GP_ECUDA, NULL, "%s: %s (%s:%d)", #call,                    \
                                cublasGetStatusString(cb_rc), CUDA_SRC, __LINE__);                 \
    } while (0)

struct conv_state; /* cuda_conv.c */
struct lt_state;   /* cuda_lt.c */

struct dev_input {
    char *buf;                      /* x (max_batch, area) fp32 then y (max_batch) int32 */
    cudaEvent_t h2d_done, consumed; /* copy finished; compute finished reading */
};

/* A training step captured as a graph, for one input slot, batch size, whether it ends with the
 * optimizer, and whether the gradients were live (added to) when it began. */
struct step_graph {
    int used;             /* 0: a free entry */
    cudaGraphExec_t exec; /* NULL: not captured yet (its shape's warm-up step ran) */
    int slot, n, optimizer, grads_live;
    int grads_after;    /* grads_live after the step, as its host code left it */
    long long last_use; /* the least recently used is replaced */
};

struct backend {
    struct backend_config cfg;
    struct model_spec spec;
    enum cuk_dtype dt;
    size_t es; /* activation element size */
    cudaStream_t compute, copy;
    cublasHandle_t blas;
    struct conv_state *conv;
    struct lt_state *lt;
    char *arena;
    float *params, *grads, *opt; /* fp32 master weights, gradients, optimizer moments */
    void *wlp;                   /* low-precision weights (== params for fp32) */
    void *act[MODEL_MAX_LAYERS + 1];
    int dropped[MODEL_MAX_LAYERS + 1]; /* --checkpoint-activations: act[i] in the shared scratch */
    int grads_live; /* 0: --zero-grad none left the gradients "None": backward writes, not adds */
    long long act_bytes; /* activation, argmax and gradient buffers */
    int32_t *arg[MODEL_MAX_LAYERS];
    void *dbuf[2], *dw_tmp, *workspace, *lt_workspace, *blas_workspace;
    void *flat, *flat_grad; /* --channels-last: the first linear layer's NCHW input, its gradient */
    /* --channels-last: a conv layer's filter and its gradient in cuDNN's NHWC order (KRSC), as
     * cuDNN 9 refuses NHWC activations with a KCRS filter in backward (H200, 2026-11-26) */
    void *w_krsc, *dw_krsc;
    float *prob;
    struct cuk_stats *stats;
    struct cuk_amp *amp;
    struct dev_input in[2];
    long long n_inputs;
    void *x_in; /* the current batch's input activations (act[0] or the fp32 input) */
    int32_t *labels;
    int n;
    struct step_graph graphs[CUDA_GRAPH_CACHE];
    long long graph_uses, captures;
};

/* --fused: linear layer i is followed by a ReLU, which its forward applies with the bias (into the
 * ReLU's output, act[i + 2]), and the ReLU's backward sums the bias gradient as it masks. */
static inline int cuda_fuses_relu(const struct backend *b, int i)
{
    return b->cfg.fused && b->spec.l[i].kind == LAYER_LINEAR && i + 1 < b->spec.n_layers &&
           b->spec.l[i + 1].kind == LAYER_RELU;
}

/* --channels-last: layer i works on NHWC activations (the cnn's convolution blocks, before any
 * linear layer). */
static inline int cuda_nhwc(const struct backend *b, int i)
{
    if (!b->cfg.channels_last || b->spec.kind != MODEL_CNN)
        return 0;
    for (int j = 0; j <= i; j++)
        if (b->spec.l[j].kind == LAYER_LINEAR)
            return 0;
    return 1;
}

/* --channels-last: linear layer i flattens an NHWC input (through b->flat, in NCHW order). */
static inline int cuda_flattens(const struct backend *b, int i)
{
    return i > 0 && b->spec.l[i].kind == LAYER_LINEAR && cuda_nhwc(b, i - 1);
}

/* cuda_layers.c */
gp_status cuda_forward(struct backend *b, int train, gp_error *err);
gp_status cuda_backward(struct backend *b, gp_error *err);
gp_status cuda_step(struct backend *b, gp_error *err);

/* cuda_graph.c: forward, backward and (with `optimizer`) the optimizer step of the current batch
 * as one cudaGraphLaunch of the step captured for its input slot and batch size (captured
 * first, when new); graphs_release destroys them. */
gp_status cuda_graph_step(struct backend *b, int optimizer, gp_error *err);
void cuda_graphs_release(struct backend *b);

/* cuda_gemm.c: row-major linear layer on cuBLAS (A/B in b->dt, fp32 compute). */
gp_status cuda_linear_fwd(struct backend *b, void *y, const void *x, const void *w, int n, int cin,
                          int cout, gp_error *err);
/* dw (fp32) += dy^T x (dw = dy^T x when add is 0); dx = dy w when dx is not NULL. */
gp_status cuda_linear_bwd(struct backend *b, void *dx, float *dw, const void *dy, const void *x,
                          const void *w, int n, int cin, int cout, int add, gp_error *err);

/* cuda_lt.c: the linear forward with the bias (and the ReLU when cuda_fuses_relu) in cuBLASLt's
 * epilogue, for `layer` at the current batch size; *done = 0 when cuBLASLt offers no algorithm
 * (the caller falls back). */
gp_status cuda_lt_open(struct backend *b, gp_error *err);
void cuda_lt_close(struct backend *b);
gp_status cuda_lt_linear_fwd(struct backend *b, int layer, void *y, const void *x, const void *w,
                             const float *bias, int *done, gp_error *err);

/* cuda_conv.c: 3x3 convolutions on cuDNN (GP_EUNSUPPORTED when built without it). */
gp_status cuda_conv_open(struct backend *b, gp_error *err);
void cuda_conv_close(struct backend *b);
gp_status cuda_conv_fwd(struct backend *b, int layer, void *y, const void *x, const void *w,
                        gp_error *err);
/* Choose the algorithms of every convolution for batches of b->n (backward too with `train`)
 * before training; with --cudnn-benchmark this is the search. */
gp_status cuda_conv_prepare(struct backend *b, int train, gp_error *err);
/* dw (layer's dtype, overwritten) and dx (NULL for the first layer). */
gp_status cuda_conv_bwd(struct backend *b, int layer, void *dx, void *dw, const void *dy,
                        const void *x, const void *w, gp_error *err);

#endif
