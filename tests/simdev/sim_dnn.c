/* The simulated cuDNN (legacy convolution API): NCHW or NHWC (tensors; filters KCRS) 2-D
 * convolutions computed in fp32 on the host by im2col and OpenBLAS (16-bit data converted), one
 * kernel record per call. Algorithms differ only in the time the model gives them (a fraction of
 * peak each); the *_v7 heuristics rank them without running anything, and cudnnFind*AlgorithmEx
 * runs (and records) each candidate once, as cuDNN's benchmark mode does, and returns them fastest
 * first. */
#include "sim_half.h"
#include "sim_int.h"

#include <cblas.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cudnnContext {
    cudaStream_t stream;
};
struct cudnnTensorStruct {
    cudnnDataType_t t;
    int n, c, h, w;
    int nhwc; /* CUDNN_TENSOR_NHWC: stored (n, h, w, c) */
};
struct cudnnFilterStruct {
    cudnnDataType_t t;
    int k, c, r, s;
    int nhwc; /* CUDNN_TENSOR_NHWC: stored (k, r, s, c) */
};
struct cudnnConvolutionStruct {
    int pad_h, pad_w, stride_h, stride_w;
    cudnnMathType_t math;
};

#define N_ALGOS 3
static const double algo_eff[N_ALGOS] = {0.35, 0.6, 0.5}; /* share of peak each achieves */
static const char *const kernel_names_nhwc[3][N_ALGOS] = {
        {"sim_cudnn_fwd_implicit_gemm_nhwc", "sim_cudnn_fwd_implicit_precomp_gemm_nhwc",
         "sim_cudnn_fwd_winograd_nonfused_nhwc"},
        {"sim_cudnn_bwd_data_algo_0_nhwc", "sim_cudnn_bwd_data_algo_1_nhwc",
         "sim_cudnn_bwd_data_winograd_nonfused_nhwc"},
        {"sim_cudnn_bwd_filter_algo_0_nhwc", "sim_cudnn_bwd_filter_algo_1_nhwc",
         "sim_cudnn_bwd_filter_winograd_nonfused_nhwc"}};
static const char *const kernel_names[3][N_ALGOS] = {
        {"sim_cudnn_fwd_implicit_gemm", "sim_cudnn_fwd_implicit_precomp_gemm",
         "sim_cudnn_fwd_winograd_nonfused"},
        {"sim_cudnn_bwd_data_algo_0", "sim_cudnn_bwd_data_algo_1",
         "sim_cudnn_bwd_data_winograd_nonfused"},
        {"sim_cudnn_bwd_filter_algo_0", "sim_cudnn_bwd_filter_algo_1",
         "sim_cudnn_bwd_filter_winograd_nonfused"}};
/* cuDNN's enum values of those algorithms, per direction */
static const int algo_ids[3][N_ALGOS] = {
        {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
         CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED},
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
         CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED}};
enum dir { FWD, BWD_DATA, BWD_FILTER };

const char *cudnnGetErrorString(cudnnStatus_t s)
{
    return s == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS" : "simulated cuDNN error";
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    *h = calloc(1, sizeof(**h));
    return *h ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    free(h);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUDNN_STATUS_SUCCESS;
}

#define CREATE_DESTROY(type, st)                                                                   \
    cudnnStatus_t cudnnCreate##type##Descriptor(cudnn##type##Descriptor_t *d)                      \
    {                                                                                              \
        *d = calloc(1, sizeof(struct st));                                                         \
        return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;                              \
    }                                                                                              \
    cudnnStatus_t cudnnDestroy##type##Descriptor(cudnn##type##Descriptor_t d)                      \
    {                                                                                              \
        free(d);                                                                                   \
        return CUDNN_STATUS_SUCCESS;                                                               \
    }
CREATE_DESTROY(Tensor, cudnnTensorStruct)
CREATE_DESTROY(Filter, cudnnFilterStruct)
CREATE_DESTROY(Convolution, cudnnConvolutionStruct)

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f,
                                         cudnnDataType_t t, int n, int c, int h, int w)
{
    if (f != CUDNN_TENSOR_NCHW && f != CUDNN_TENSOR_NHWC)
        return CUDNN_STATUS_NOT_SUPPORTED;
    *d = (struct cudnnTensorStruct){t, n, c, h, w, f == CUDNN_TENSOR_NHWC};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t,
                                         cudnnTensorFormat_t f, int k, int c, int r, int s)
{
    if (f != CUDNN_TENSOR_NCHW && f != CUDNN_TENSOR_NHWC)
        return CUDNN_STATUS_NOT_SUPPORTED;
    *d = (struct cudnnFilterStruct){t, k, c, r, s, f == CUDNN_TENSOR_NHWC};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w,
                                              int u, int v, int dil_h, int dil_w,
                                              cudnnConvolutionMode_t mode, cudnnDataType_t compute)
{
    if (dil_h != 1 || dil_w != 1 || mode != CUDNN_CROSS_CORRELATION || compute != CUDNN_DATA_FLOAT)
        return CUDNN_STATUS_NOT_SUPPORTED;
    d->pad_h = pad_h, d->pad_w = pad_w, d->stride_h = u, d->stride_w = v;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m)
{
    d->math = m;
    return CUDNN_STATUS_SUCCESS;
}

static cudaDataType dn_cuda_type(cudnnDataType_t t)
{
    return t == CUDNN_DATA_HALF ? CUDA_R_16F : t == CUDNN_DATA_BFLOAT16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* The model's time for one direction of this convolution with algorithm index a. */
static uint64_t conv_ns(const struct cudnnTensorStruct *x, const struct cudnnFilterStruct *w,
                        const struct cudnnTensorStruct *y, const struct cudnnConvolutionStruct *c,
                        int a)
{
    double flops = 2.0 * y->n * y->c * y->h * y->w * (double)w->c * w->r * w->s;
    double es = x->t == CUDNN_DATA_FLOAT ? 4 : 2;
    double bytes = es * ((double)x->n * x->c * x->h * x->w + (double)y->n * y->c * y->h * y->w +
                         (double)w->k * w->c * w->r * w->s);
    int tensor = x->t != CUDNN_DATA_FLOAT && c->math != CUDNN_DEFAULT_MATH;
    return sim_kernel_ns(flops / algo_eff[a], bytes, tensor);
}

static int algo_index(enum dir d, int algo)
{
    for (int a = 0; a < N_ALGOS; a++)
        if (algo_ids[d][a] == algo)
            return a;
    return -1;
}

/* One image's columns: cols (C*R*S, OH*OW) of x (C, H, W), or (back) x += cols. */
static void im2col(float *x, float *cols, const struct cudnnTensorStruct *xd,
                   const struct cudnnFilterStruct *wd, const struct cudnnTensorStruct *yd,
                   const struct cudnnConvolutionStruct *c, int back)
{
    size_t row = 0;
    for (int ch = 0; ch < xd->c; ch++)
        for (int r = 0; r < wd->r; r++)
            for (int s = 0; s < wd->s; s++, row++)
                for (int oh = 0; oh < yd->h; oh++) {
                    int ih = oh * c->stride_h - c->pad_h + r;
                    float *col = cols + (row * yd->h + oh) * yd->w;
                    for (int ow = 0; ow < yd->w; ow++) {
                        int iw = ow * c->stride_w - c->pad_w + s;
                        int in = ih >= 0 && ih < xd->h && iw >= 0 && iw < xd->w;
                        float *xp =
                                &x[((size_t)ch * xd->h + (in ? ih : 0)) * xd->w + (in ? iw : 0)];
                        if (back && in)
                            *xp += col[ow];
                        else if (!back)
                            col[ow] = in ? *xp : 0.0f;
                    }
                }
}

/* The convolution in fp32 on converted copies, as im2col and OpenBLAS GEMMs per image; `d`
 * picks what is computed: FWD y = conv(x, w), BWD_DATA x = conv^T(dy, w), BWD_FILTER
 * w = corr(x, dy). @return 0, or -1 out of memory. */
static int direct(enum dir d, float *x, float *w, float *y, const struct cudnnTensorStruct *xd,
                  const struct cudnnFilterStruct *wd, const struct cudnnTensorStruct *yd,
                  const struct cudnnConvolutionStruct *c)
{
    int k = yd->c, crs = wd->c * wd->r * wd->s, hw = yd->h * yd->w;
    float *cols = malloc((size_t)crs * hw * sizeof(float));
    if (!cols)
        return -1;
    for (int n = 0; n < yd->n; n++) {
        float *xn = x + (size_t)n * xd->c * xd->h * xd->w, *yn = y + (size_t)n * k * hw;
        if (d != BWD_DATA)
            im2col(xn, cols, xd, wd, yd, c, 0);
        if (d == FWD)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, k, hw, crs, 1.0f, w, crs, cols,
                        hw, 0.0f, yn, hw);
        else if (d == BWD_FILTER)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, k, crs, hw, 1.0f, yn, hw, cols, hw,
                        1.0f, w, crs);
        else {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, crs, hw, k, 1.0f, w, crs, yn, hw,
                        0.0f, cols, hw);
            im2col(xn, cols, xd, wd, yd, c, 1);
        }
    }
    free(cols);
    return 0;
}

/* Reorder f between NHWC and NCHW (to_nchw or back), in place through a copy. */
static int reorder(float *f, const struct cudnnTensorStruct *d, int to_nchw)
{
    size_t hw = (size_t)d->h * d->w, img = hw * d->c, n = img * d->n;
    float *t = malloc((n ? n : 1) * sizeof(float));
    if (!t)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t b = i / img, r = i % img;
        size_t nchw = b * img + (r % d->c) * hw + r / d->c; /* r: (p, ch) in NHWC */
        if (to_nchw)
            t[nchw] = f[i];
        else
            t[i] = f[nchw];
    }
    memcpy(f, t, n * sizeof(float));
    free(t);
    return 0;
}

/* Tensor p of descriptor d as fp32 NCHW (zeros with `zero`). */
static float *f32_of(const void *p, const struct cudnnTensorStruct *d, int zero)
{
    size_t n = (size_t)d->n * d->c * d->h * d->w;
    float *f = calloc(n ? n : 1, sizeof(float));
    if (f && !zero)
        sim_to_f32(f, p, dn_cuda_type(d->t), n);
    if (f && !zero && d->nhwc && reorder(f, d, 1) != 0) {
        free(f);
        return NULL;
    }
    return f;
}

/* fp32 NCHW f into p, laid out and typed as d says. */
static int f32_to(void *p, float *f, const struct cudnnTensorStruct *d)
{
    if (d->nhwc && reorder(f, d, 0) != 0)
        return -1;
    sim_from_f32(p, f, dn_cuda_type(d->t), (size_t)d->n * d->c * d->h * d->w);
    return 0;
}

/* Filter f between KRSC and KCRS (to_kcrs or back), as a (k, c, r, s) tensor's reorder. */
static int reorder_filter(float *f, const struct cudnnFilterStruct *wd, int to_kcrs)
{
    struct cudnnTensorStruct as_tensor = {wd->t, wd->k, wd->c, wd->r, wd->s, 1};
    return reorder(f, &as_tensor, to_kcrs);
}

/* NHWC activations with a KCRS filter, or the reverse: the real cuDNN 9 on an H200 refused
 * every backward candidate it was asked for with them (backward-data in fp32, bf16 and fp16,
 * backward-filter in bf16; 2026-11-26), so the simulated one refuses both backward passes. */
static int mixed_layout(const struct cudnnTensorStruct *xd, const struct cudnnFilterStruct *wd)
{
    return xd->nhwc != wd->nhwc;
}

/* One convolution call's arguments (descriptors by value), copied into a graph node when
 * captured. */
struct conv_job {
    enum dir d;
    struct cudnnTensorStruct xd, yd;
    struct cudnnFilterStruct wd;
    struct cudnnConvolutionStruct c;
    const void *x, *w, *y;
    void *out;
    int failed; /* out of memory (seen only when run at once) */
};

/* Compute direction d and write the output (alpha 1, beta 0). */
static void run_conv(void *arg)
{
    struct conv_job *j = arg;
    enum dir d = j->d;
    size_t nw = (size_t)j->wd.k * j->wd.c * j->wd.r * j->wd.s;
    float *fx = f32_of(j->x, &j->xd, d == BWD_DATA), *fy = f32_of(j->y, &j->yd, d == FWD);
    float *fw = calloc(nw ? nw : 1, sizeof(float));
    if (fw && d != BWD_FILTER) {
        sim_to_f32(fw, j->w, dn_cuda_type(j->wd.t), nw);
        if (j->wd.nhwc && reorder_filter(fw, &j->wd, 1) != 0)
            free(fw), fw = NULL;
    }
    j->failed = !(fx && fw && fy && direct(d, fx, fw, fy, &j->xd, &j->wd, &j->yd, &j->c) == 0);
    if (!j->failed) {
        if (d == FWD)
            j->failed = f32_to(j->out, fy, &j->yd) != 0;
        else if (d == BWD_DATA)
            j->failed = f32_to(j->out, fx, &j->xd) != 0;
        else if (!(j->failed = j->wd.nhwc && reorder_filter(fw, &j->wd, 0) != 0))
            sim_from_f32(j->out, fw, dn_cuda_type(j->wd.t), nw);
    }
    free(fx), free(fw), free(fy);
}

/* Run direction d once: its kernel record, and the computation (now, or captured). */
static cudnnStatus_t run(cudnnHandle_t h, enum dir d, int algo, const struct cudnnTensorStruct *xd,
                         const void *x, const struct cudnnFilterStruct *wd, const void *w,
                         const struct cudnnTensorStruct *yd, const void *y,
                         const struct cudnnConvolutionStruct *c, void *out)
{
    int a = algo_index(d, algo);
    if (a < 0 || (d != FWD && mixed_layout(xd, wd)))
        return CUDNN_STATUS_NOT_SUPPORTED;
    struct conv_job j = {d, *xd, *yd, *wd, *c, x, w, y, out, 0};
    const char *name = xd->nhwc ? kernel_names_nhwc[d][a] : kernel_names[d][a];
    if (sim_work(h->stream, name, conv_ns(xd, wd, yd, c, a), (unsigned)(yd->n * yd->c), 256,
                 run_conv, &j, sizeof(j)) != cudaSuccess)
        return CUDNN_STATUS_ALLOC_FAILED;
    return j.failed ? CUDNN_STATUS_ALLOC_FAILED : CUDNN_STATUS_SUCCESS;
}

static int ones(const void *alpha, const void *beta)
{
    return *(const float *)alpha == 1.0f && *(const float *)beta == 0.0f;
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha,
                                      const cudnnTensorDescriptor_t xd, const void *x,
                                      const cudnnFilterDescriptor_t wd, const void *w,
                                      const cudnnConvolutionDescriptor_t c,
                                      cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
                                      const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
    (void)ws, (void)ws_bytes;
    if (!ones(alpha, beta))
        return CUDNN_STATUS_NOT_SUPPORTED;
    return run(h, FWD, algo, xd, x, wd, w, yd, y, c, y);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha,
                                           const cudnnFilterDescriptor_t wd, const void *w,
                                           const cudnnTensorDescriptor_t dyd, const void *dy,
                                           const cudnnConvolutionDescriptor_t c,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *ws,
                                           size_t ws_bytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxd, void *dx)
{
    (void)ws, (void)ws_bytes;
    if (!ones(alpha, beta))
        return CUDNN_STATUS_NOT_SUPPORTED;
    return run(h, BWD_DATA, algo, dxd, dx, wd, w, dyd, dy, c, dx);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha,
                                             const cudnnTensorDescriptor_t xd, const void *x,
                                             const cudnnTensorDescriptor_t dyd, const void *dy,
                                             const cudnnConvolutionDescriptor_t c,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
                                             size_t ws_bytes, const void *beta,
                                             const cudnnFilterDescriptor_t dwd, void *dw)
{
    (void)ws, (void)ws_bytes;
    if (!ones(alpha, beta))
        return CUDNN_STATUS_NOT_SUPPORTED;
    return run(h, BWD_FILTER, algo, xd, x, dwd, dw, dyd, dy, c, dw);
}

/* ---- algorithm choice ---- */

struct ranked {
    int a;
    uint64_t ns;
};

static int by_time(const void *p, const void *q)
{
    const struct ranked *a = p, *b = q; /* ties (the shortest kernel): the more efficient */
    if (a->ns != b->ns)
        return (a->ns > b->ns) - (a->ns < b->ns);
    return (algo_eff[a->a] < algo_eff[b->a]) - (algo_eff[a->a] > algo_eff[b->a]);
}

/* With SIMDEV_DNN_SEARCH_LOG set, a line per search (cudnnFind*Ex) appended to that file: its
 * direction and input shape, for tests that count searches. */
static void log_search(enum dir d, const struct cudnnTensorStruct *xd)
{
    static const char *const dir_names[] = {"fwd", "bwd_data", "bwd_filter"};
    const char *path = getenv("SIMDEV_DNN_SEARCH_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    fprintf(f, "%s %d %d %d %d\n", dir_names[d], xd->n, xd->c, xd->h, xd->w);
    fclose(f);
}

/* The algorithms ranked by modelled time; `bench`: each is run (and recorded) once, as a
 * search times them; its output is what the last run wrote. */
static cudnnStatus_t
rank(cudnnHandle_t h, enum dir d, int bench, const struct cudnnTensorStruct *xd, const void *x,
     const struct cudnnFilterStruct *wd, const void *w, const struct cudnnTensorStruct *yd,
     const void *y, const struct cudnnConvolutionStruct *c, void *out, struct ranked r[N_ALGOS])
{
    if (bench && sim_capture_unsafe()) /* a search syncs to time its runs: not in a capture */
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (bench)
        log_search(d, xd);
    for (int a = 0; a < N_ALGOS; a++) {
        r[a] = (struct ranked){a, conv_ns(xd, wd, yd, c, a)};
        if (bench && !(d != FWD && mixed_layout(xd, wd)) &&
            run(h, d, algo_ids[d][a], xd, x, wd, w, yd, y, c, out) != CUDNN_STATUS_SUCCESS)
            return CUDNN_STATUS_ALLOC_FAILED;
    }
    qsort(r, N_ALGOS, sizeof(r[0]), by_time);
    return CUDNN_STATUS_SUCCESS;
}

#define FILL(perf, requested, returned, d, r, math, refused)                                       \
    do {                                                                                           \
        int n_ = (requested) < N_ALGOS ? (requested) : N_ALGOS;                                    \
        for (int i_ = 0; i_ < n_; i_++) {                                                          \
            memset(&(perf)[i_], 0, sizeof((perf)[i_]));                                            \
            (perf)[i_].algo = algo_ids[d][(r)[i_].a];                                              \
            (perf)[i_].status = (refused) ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_SUCCESS;     \
            (perf)[i_].time = (float)((r)[i_].ns / 1e6);                                           \
            (perf)[i_].determinism = CUDNN_DETERMINISTIC;                                          \
            (perf)[i_].mathType = (math);                                                          \
        }                                                                                          \
        *(returned) = n_;                                                                          \
    } while (0)

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
        cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const cudnnFilterDescriptor_t wd,
        const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t yd, const int requested,
        int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    struct ranked r[N_ALGOS];
    rank(h, FWD, 0, xd, NULL, wd, NULL, yd, NULL, c, NULL, r);
    FILL(perf, requested, returned, FWD, r, c->math, 0);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
        cudnnHandle_t h, const cudnnFilterDescriptor_t wd, const cudnnTensorDescriptor_t dyd,
        const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t dxd,
        const int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *perf)
{
    struct ranked r[N_ALGOS];
    rank(h, BWD_DATA, 0, dxd, NULL, wd, NULL, dyd, NULL, c, NULL, r);
    FILL(perf, requested, returned, BWD_DATA, r, c->math, mixed_layout(dxd, wd));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const cudnnTensorDescriptor_t dyd,
        const cudnnConvolutionDescriptor_t c, const cudnnFilterDescriptor_t dwd,
        const int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *perf)
{
    struct ranked r[N_ALGOS];
    rank(h, BWD_FILTER, 0, xd, NULL, dwd, NULL, dyd, NULL, c, NULL, r);
    FILL(perf, requested, returned, BWD_FILTER, r, c->math, mixed_layout(xd, dwd));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
        cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x,
        const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t c,
        const cudnnTensorDescriptor_t yd, void *y, const int requested, int *returned,
        cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    (void)ws, (void)ws_bytes;
    struct ranked r[N_ALGOS];
    cudnnStatus_t rc = rank(h, FWD, 1, xd, x, wd, w, yd, y, c, y, r);
    if (rc != CUDNN_STATUS_SUCCESS)
        return rc;
    FILL(perf, requested, returned, FWD, r, c->math, 0);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
        cudnnHandle_t h, const cudnnFilterDescriptor_t wd, const void *w,
        const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t c,
        const cudnnTensorDescriptor_t dxd, void *dx, const int requested, int *returned,
        cudnnConvolutionBwdDataAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    (void)ws, (void)ws_bytes;
    struct ranked r[N_ALGOS];
    cudnnStatus_t rc = rank(h, BWD_DATA, 1, dxd, dx, wd, w, dyd, dy, c, dx, r);
    if (rc != CUDNN_STATUS_SUCCESS)
        return rc;
    FILL(perf, requested, returned, BWD_DATA, r, c->math, mixed_layout(dxd, wd));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
        cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x,
        const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t c,
        const cudnnFilterDescriptor_t dwd, void *dw, const int requested, int *returned,
        cudnnConvolutionBwdFilterAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    (void)ws, (void)ws_bytes;
    struct ranked r[N_ALGOS];
    cudnnStatus_t rc = rank(h, BWD_FILTER, 1, xd, x, dwd, dw, dyd, dy, c, dw, r);
    if (rc != CUDNN_STATUS_SUCCESS)
        return rc;
    FILL(perf, requested, returned, BWD_FILTER, r, c->math, mixed_layout(xd, dwd));
    return CUDNN_STATUS_SUCCESS;
}
