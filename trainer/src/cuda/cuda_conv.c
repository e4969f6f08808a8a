/* 3x3 convolutions on cuDNN's legacy API (NCHW, fp32 compute, tensor-op math for fp16/bf16).
 * Descriptors are cached per (layer, batch size), the least recently used replaced; the
 * algorithms chosen are kept apart, for up to CONV_MEMO batch sizes per layer, so a shape whose
 * descriptors were replaced never searches again: --cudnn-benchmark times the candidates once
 * per shape with cudnnFind*Ex (PyTorch's cudnn.benchmark), otherwise cuDNN's heuristics pick.
 * The run's batch sizes are prepared before the first step, so no search is timed in one. The
 * workspace is a fixed slice of the arena: no allocation in a step. */
#include "cuda_int.h"

#include <stdlib.h>
#include <string.h>

#ifdef GP_HAVE_CUDNN
#    include "gp/prof.h"

#    include <cudnn.h>

#    define CUDNN_TRY(call, err)                                                                   \
        do {                                                                                       \
            cudnnStatus_t dn_rc = (call);                                                          \
            if (dn_rc != CUDNN_STATUS_SUCCESS)                                                     \
                return gp_error_set((err), GP_ECUDA, NULL, "%s: %s (%s:%d)", #call,                \
                                    cudnnGetErrorString(dn_rc), CUDA_SRC, __LINE__);               \
        } while (0)

#    define ALGO_CANDIDATES 8
#    define CONV_MEMO       64 /* algorithm choices kept per layer (batch sizes) */

struct conv_shape {
    int n; /* batch size these descriptors are for; 0 = unused */
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgoPerf_t fwd;
    cudnnConvolutionBwdDataAlgoPerf_t bwd_data;
    cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter;
    int have_fwd;
    int have_bwd;       /* 1: filter algorithm chosen, 2: data algorithm too */
    long long last_use; /* the least recently used set of descriptors is replaced */
};

/* The algorithms chosen for (layer, batch size n), kept when its descriptors are replaced. */
struct conv_memo {
    int n; /* 0 = unused */
    cudnnConvolutionFwdAlgoPerf_t fwd;
    cudnnConvolutionBwdDataAlgoPerf_t bwd_data;
    cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter;
    int have_fwd, have_bwd;
};

struct conv_state {
    cudnnHandle_t h;
    struct conv_shape s[MODEL_MAX_LAYERS][CUDA_CONV_CACHE];
    struct conv_memo memo[MODEL_MAX_LAYERS][CONV_MEMO];
    long long uses;
};

static cudnnDataType_t dn_type(enum cuk_dtype dt)
{
    return dt == CUK_F16    ? CUDNN_DATA_HALF
           : dt == CUK_BF16 ? CUDNN_DATA_BFLOAT16
                            : CUDNN_DATA_FLOAT;
}

gp_status cuda_conv_open(struct backend *b, gp_error *err)
{
    b->conv = calloc(1, sizeof(*b->conv));
    if (!b->conv)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    CUDNN_TRY(cudnnCreate(&b->conv->h), err);
    CUDNN_TRY(cudnnSetStream(b->conv->h, b->compute), err);
    return GP_OK;
}

static void destroy_shape(struct conv_shape *s)
{
    if (s->x)
        cudnnDestroyTensorDescriptor(s->x);
    if (s->y)
        cudnnDestroyTensorDescriptor(s->y);
    if (s->w)
        cudnnDestroyFilterDescriptor(s->w);
    if (s->conv)
        cudnnDestroyConvolutionDescriptor(s->conv);
    memset(s, 0, sizeof(*s));
}

void cuda_conv_close(struct backend *b)
{
    if (!b->conv)
        return;
    for (int i = 0; i < MODEL_MAX_LAYERS; i++)
        for (int k = 0; k < CUDA_CONV_CACHE; k++)
            destroy_shape(&b->conv->s[i][k]);
    if (b->conv->h)
        cudnnDestroy(b->conv->h);
    free(b->conv);
    b->conv = NULL;
}

static gp_status set_descriptors(struct backend *b, const struct layer_spec *l,
                                 struct conv_shape *s, int n, gp_error *err)
{
    cudnnDataType_t t = dn_type(b->dt);
    CUDNN_TRY(cudnnCreateTensorDescriptor(&s->x), err);
    CUDNN_TRY(cudnnCreateTensorDescriptor(&s->y), err);
    CUDNN_TRY(cudnnCreateFilterDescriptor(&s->w), err);
    CUDNN_TRY(cudnnCreateConvolutionDescriptor(&s->conv), err);
    /* --channels-last: the activations NHWC, and the filter too (KRSC): the weights stay KCRS
     * (the CPU's), reordered for each call (filter_for_cudnn, grad_from_cudnn) */
    cudnnTensorFormat_t f = b->cfg.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CUDNN_TRY(cudnnSetTensor4dDescriptor(s->x, f, t, n, l->cin, l->h, l->w), err);
    CUDNN_TRY(cudnnSetTensor4dDescriptor(s->y, f, t, n, l->cout, l->h, l->w), err);
    CUDNN_TRY(cudnnSetFilter4dDescriptor(s->w, t, f, l->cout, l->cin, 3, 3), err); /* f: KRSC */
    CUDNN_TRY(cudnnSetConvolution2dDescriptor(s->conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT),
              err);
    CUDNN_TRY(cudnnSetConvolutionMathType(s->conv, b->dt == CUK_F32 ? CUDNN_DEFAULT_MATH
                                                                    : CUDNN_TENSOR_OP_MATH),
              err);
    s->n = n;
    return GP_OK;
}

/* First candidate that succeeded and fits the workspace; else an error that says what cuDNN
 * answered (how many candidates it did not support, how many needed more workspace), the pass,
 * the data type and the layout, since only the real cuDNN can refuse a configuration. */
#    define PICK(perf, count, out, pass)                                                           \
        do {                                                                                       \
            int found_ = 0, refused_ = 0, big_ = 0;                                                \
            for (int k_ = 0; k_ < (count) && !found_; k_++) {                                      \
                if ((perf)[k_].status != CUDNN_STATUS_SUCCESS)                                     \
                    refused_++;                                                                    \
                else if ((perf)[k_].memory > CUDA_WORKSPACE_BYTES)                                 \
                    big_++;                                                                        \
                else {                                                                             \
                    (out) = (perf)[k_];                                                            \
                    found_ = 1;                                                                    \
                }                                                                                  \
            }                                                                                      \
            if (!found_)                                                                           \
                return no_algorithm(b, pass, count, refused_, big_, __LINE__, err);                \
        } while (0)

static gp_status no_algorithm(const struct backend *b, const char *pass, int count, int refused,
                              int too_big, int line, gp_error *err)
{
    return gp_error_set(err, GP_ECUDA, NULL,
                        "cuDNN found no usable %s algorithm for %s %s convolutions: of %d "
                        "candidates, %d not supported, %d needing over %u MiB of workspace "
                        "(%s:%d)",
                        pass,
                        b->dt == CUK_F32    ? "fp32"
                        : b->dt == CUK_BF16 ? "bf16"
                                            : "fp16",
                        b->cfg.channels_last ? "NHWC" : "NCHW", count, refused, too_big,
                        CUDA_WORKSPACE_BYTES >> 20, CUDA_SRC, line);
}

static gp_status choose_fwd(struct backend *b, struct conv_shape *s, void *y, const void *x,
                            const void *w, gp_error *err)
{
    cudnnConvolutionFwdAlgoPerf_t perf[ALGO_CANDIDATES];
    int got = 0;
    if (b->cfg.cudnn_benchmark) {
        GP_PROF_PUSH("cudnn_find");
        cudnnStatus_t rc = cudnnFindConvolutionForwardAlgorithmEx(
                b->conv->h, s->x, x, s->w, w, s->conv, s->y, y, ALGO_CANDIDATES, &got, perf,
                b->workspace, CUDA_WORKSPACE_BYTES);
        GP_PROF_POP();
        CUDNN_TRY(rc, err);
    } else {
        CUDNN_TRY(cudnnGetConvolutionForwardAlgorithm_v7(b->conv->h, s->x, s->w, s->conv, s->y,
                                                         ALGO_CANDIDATES, &got, perf),
                  err);
    }
    PICK(perf, got, s->fwd, "forward");
    s->have_fwd = 1;
    return GP_OK;
}

static gp_status choose_bwd(struct backend *b, struct conv_shape *s, void *dx, void *dw,
                            const void *dy, const void *x, const void *w, gp_error *err)
{
    cudnnConvolutionBwdDataAlgoPerf_t pd[ALGO_CANDIDATES];
    cudnnConvolutionBwdFilterAlgoPerf_t pf[ALGO_CANDIDATES];
    int gd = 0, gf = 0;
    cudnnHandle_t h = b->conv->h;
    if (b->cfg.cudnn_benchmark) {
        GP_PROF_PUSH("cudnn_find");
        cudnnStatus_t rc = cudnnFindConvolutionBackwardFilterAlgorithmEx(
                h, s->x, x, s->y, dy, s->conv, s->w, dw, ALGO_CANDIDATES, &gf, pf, b->workspace,
                CUDA_WORKSPACE_BYTES);
        if (rc == CUDNN_STATUS_SUCCESS && dx)
            rc = cudnnFindConvolutionBackwardDataAlgorithmEx(h, s->w, w, s->y, dy, s->conv, s->x,
                                                             dx, ALGO_CANDIDATES, &gd, pd,
                                                             b->workspace, CUDA_WORKSPACE_BYTES);
        GP_PROF_POP();
        CUDNN_TRY(rc, err);
    } else {
        CUDNN_TRY(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, s->x, s->y, s->conv, s->w,
                                                                ALGO_CANDIDATES, &gf, pf),
                  err);
        CUDNN_TRY(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s->w, s->y, s->conv, s->x,
                                                              ALGO_CANDIDATES, &gd, pd),
                  err);
    }
    PICK(pf, gf, s->bwd_filter, "backward-filter");
    if (gd > 0)
        PICK(pd, gd, s->bwd_data, "backward-data");
    s->have_bwd = 1 + (dx != NULL);
    return GP_OK;
}

/* The memo entry of (layer, n): found, else a free one (NULL when all CONV_MEMO are taken). */
static struct conv_memo *memo_for(struct backend *b, int layer, int n)
{
    struct conv_memo *row = b->conv->memo[layer], *free_entry = NULL;
    for (int k = 0; k < CONV_MEMO; k++) {
        if (row[k].n == n)
            return &row[k];
        if (!row[k].n && !free_entry)
            free_entry = &row[k];
    }
    if (free_entry)
        free_entry->n = n;
    return free_entry;
}

/* Keep the algorithms `s` has for its layer and batch size. */
static void memo_save(struct backend *b, int layer, const struct conv_shape *s)
{
    struct conv_memo *m = memo_for(b, layer, s->n);
    if (!m)
        return;
    m->fwd = s->fwd;
    m->bwd_data = s->bwd_data;
    m->bwd_filter = s->bwd_filter;
    m->have_fwd = s->have_fwd;
    m->have_bwd = s->have_bwd;
}

/* The cached shape for (layer, current batch size), created on first use in place of the least
 * recently used one, with the algorithms chosen for it before. */
static gp_status shape_for(struct backend *b, int layer, struct conv_shape **out, gp_error *err)
{
    struct conv_shape *row = b->conv->s[layer], *s = &row[0];
    for (int k = 0; k < CUDA_CONV_CACHE; k++) {
        if (row[k].n == b->n) {
            *out = &row[k];
            row[k].last_use = ++b->conv->uses;
            return GP_OK;
        }
        if (row[k].last_use < s->last_use)
            s = &row[k];
    }
    destroy_shape(s);
    GP_TRY(set_descriptors(b, &b->spec.l[layer], s, b->n, err));
    s->last_use = ++b->conv->uses;
    const struct conv_memo *m = memo_for(b, layer, b->n);
    if (m) {
        s->fwd = m->fwd;
        s->bwd_data = m->bwd_data;
        s->bwd_filter = m->bwd_filter;
        s->have_fwd = m->have_fwd;
        s->have_bwd = m->have_bwd;
    }
    *out = s;
    return GP_OK;
}

/* Layer `layer`'s weights w (KCRS) as cuDNN's filter: w itself, or with --channels-last its
 * KRSC copy, made on the compute stream. */
static const void *filter_for_cudnn(struct backend *b, int layer, const void *w)
{
    const struct layer_spec *l = &b->spec.l[layer];
    if (!b->cfg.channels_last)
        return w;
    cuk_layout(b->dt, b->w_krsc, w, l->cout, l->cin, 9, 0, b->compute);
    return b->w_krsc;
}

/* Where cuDNN writes layer `layer`'s weight gradient: dw, or with --channels-last a KRSC
 * buffer that grad_from_cudnn reorders into dw (KCRS). */
static void *grad_for_cudnn(struct backend *b, void *dw)
{
    return b->cfg.channels_last ? b->dw_krsc : dw;
}

static void grad_from_cudnn(struct backend *b, int layer, void *dw)
{
    const struct layer_spec *l = &b->spec.l[layer];
    if (b->cfg.channels_last)
        cuk_layout(b->dt, dw, b->dw_krsc, l->cout, l->cin, 9, 1, b->compute);
}

gp_status cuda_conv_fwd(struct backend *b, int layer, void *y, const void *x, const void *w,
                        gp_error *err)
{
    struct conv_shape *s;
    GP_TRY(shape_for(b, layer, &s, err));
    w = filter_for_cudnn(b, layer, w);
    if (!s->have_fwd) {
        GP_TRY(choose_fwd(b, s, y, x, w, err));
        memo_save(b, layer, s);
    }
    const float one = 1.0f, zero = 0.0f;
    CUDNN_TRY(cudnnSetConvolutionMathType(s->conv, s->fwd.mathType), err);
    CUDNN_TRY(cudnnConvolutionForward(b->conv->h, &one, s->x, x, s->w, w, s->conv, s->fwd.algo,
                                      b->workspace, CUDA_WORKSPACE_BYTES, &zero, s->y, y),
              err);
    return GP_OK;
}

/* Layer i's algorithms for batches of b->n, chosen on the arena's buffers (nothing is live
 * before the first step): its input, output, weight gradient and activation gradients. */
static gp_status prepare_layer(struct backend *b, int i, int train, gp_error *err)
{
    const struct layer_spec *l = &b->spec.l[i];
    const void *w = b->cfg.channels_last ? b->w_krsc : (const char *)b->wlp + l->w_off * b->es;
    void *x = i == 0 && b->dt == CUK_F32 ? (void *)b->in[0].buf : b->act[i];
    struct conv_shape *s;
    GP_TRY(shape_for(b, i, &s, err));
    if (!s->have_fwd) {
        GP_TRY(choose_fwd(b, s, b->act[i + 1], x, w, err));
        memo_save(b, i, s);
    }
    void *dx = i > 0 ? b->dbuf[1] : NULL; /* the first layer's backward makes no dx */
    if (train && s->have_bwd < 1 + (dx != NULL)) {
        GP_TRY(choose_bwd(b, s, dx, grad_for_cudnn(b, b->dw_tmp), b->dbuf[0], x, w, err));
        memo_save(b, i, s);
    }
    return GP_OK;
}

gp_status cuda_conv_prepare(struct backend *b, int train, gp_error *err)
{
    for (int i = 0; i < b->spec.n_layers; i++)
        if (b->spec.l[i].kind == LAYER_CONV3)
            GP_TRY(prepare_layer(b, i, train, err));
    return GP_OK;
}

gp_status cuda_conv_bwd(struct backend *b, int layer, void *dx, void *dw, const void *dy,
                        const void *x, const void *w, gp_error *err)
{
    struct conv_shape *s;
    GP_TRY(shape_for(b, layer, &s, err));
    void *dw_out = grad_for_cudnn(b, dw);
    w = filter_for_cudnn(b, layer, w);
    if (s->have_bwd < 1 + (dx != NULL)) {
        GP_TRY(choose_bwd(b, s, dx, dw_out, dy, x, w, err));
        memo_save(b, layer, s);
    }
    const float one = 1.0f, zero = 0.0f;
    CUDNN_TRY(cudnnSetConvolutionMathType(s->conv, s->bwd_filter.mathType), err);
    CUDNN_TRY(cudnnConvolutionBackwardFilter(b->conv->h, &one, s->x, x, s->y, dy, s->conv,
                                             s->bwd_filter.algo, b->workspace, CUDA_WORKSPACE_BYTES,
                                             &zero, s->w, dw_out),
              err);
    grad_from_cudnn(b, layer, dw);
    if (!dx)
        return GP_OK;
    CUDNN_TRY(cudnnSetConvolutionMathType(s->conv, s->bwd_data.mathType), err);
    CUDNN_TRY(cudnnConvolutionBackwardData(b->conv->h, &one, s->w, w, s->y, dy, s->conv,
                                           s->bwd_data.algo, b->workspace, CUDA_WORKSPACE_BYTES,
                                           &zero, s->x, dx),
              err);
    return GP_OK;
}

#else /* no cuDNN: the mlp trains on CUDA, the cnn does not */

gp_status cuda_conv_open(struct backend *b, gp_error *err)
{
    (void)b;
    return gp_error_set(err, GP_EUNSUPPORTED, NULL,
                        "the cnn on CUDA needs cuDNN, which this build did not find (CUDNN_ROOT)");
}

void cuda_conv_close(struct backend *b)
{
    (void)b;
}

gp_status cuda_conv_fwd(struct backend *b, int layer, void *y, const void *x, const void *w,
                        gp_error *err)
{
    (void)b, (void)layer, (void)y, (void)x, (void)w;
    return gp_error_set(err, GP_EUNSUPPORTED, NULL, "built without cuDNN");
}

gp_status cuda_conv_bwd(struct backend *b, int layer, void *dx, void *dw, const void *dy,
                        const void *x, const void *w, gp_error *err)
{
    (void)b, (void)layer, (void)dx, (void)dw, (void)dy, (void)x, (void)w;
    return gp_error_set(err, GP_EUNSUPPORTED, NULL, "built without cuDNN");
}

gp_status cuda_conv_prepare(struct backend *b, int train, gp_error *err)
{
    (void)b, (void)train;
    return gp_error_set(err, GP_EUNSUPPORTED, NULL, "built without cuDNN");
}
#endif
