/* The simulated cuBLAS and cuBLASLt: column-major GEMMs computed by OpenBLAS in fp32 (16-bit
 * inputs and outputs converted, as tensor cores accumulate in fp32), the bias epilogue of
 * cublasLtMatmul, and one kernel record each, timed by the model (2mnk FLOPs; tensor cores for
 * 16-bit inputs). SIMDEV_LT_FAIL=1 makes cublasLtMatmul refuse (CUBLAS_STATUS_NOT_SUPPORTED), so
 * the trainer's fallback to cublasGemmEx runs. */
#include "sim_half.h"
#include "sim_int.h"

#include <cblas.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdlib.h>

struct cublasContext {
    cudaStream_t stream;
};
struct cublasLtContext {
    int unused;
};
struct lt_desc { /* inside cublasLtMatmulDescOpaque_t */
    cublasOperation_t ta, tb;
    cublasLtEpilogue_t epi;
    const void *bias;
    cudaDataType bias_type;
};
struct lt_layout { /* inside cublasLtMatrixLayoutOpaque_t */
    cudaDataType t;
    uint64_t rows, cols;
    int64_t ld;
};
_Static_assert(sizeof(struct lt_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "lt_desc");
_Static_assert(sizeof(struct lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "lt_layout");

const char *cublasGetStatusString(cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "simulated cuBLAS error";
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = calloc(1, sizeof(**h));
    openblas_set_num_threads(1);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *workspace, size_t bytes)
{
    (void)h;
    return workspace || !bytes ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

/* A column-major matrix of type t as fp32: rows x cols of storage with leading dimension ld. */
static float *as_f32(const void *p, cudaDataType t, int ld, int cols)
{
    size_t n = (size_t)ld * (size_t)cols;
    float *f = malloc((n ? n : 1) * sizeof(float));
    if (f)
        sim_to_f32(f, p, t, n);
    return f;
}

/* lt: 0 cublasGemmEx, 1 cublasLtMatmul with the bias epilogue, 2 with bias and ReLU */
static const char *gemm_name(cudaDataType t, int lt)
{
    static const char *names[3][3] = {
            {"sim_gemm_f32", "sim_gemm_f16", "sim_gemm_bf16"},
            {"sim_lt_gemm_bias_f32", "sim_lt_gemm_bias_f16", "sim_lt_gemm_bias_bf16"},
            {"sim_lt_gemm_bias_relu_f32", "sim_lt_gemm_bias_relu_f16",
             "sim_lt_gemm_bias_relu_bf16"}};
    return names[lt][t == CUDA_R_32F ? 0 : t == CUDA_R_16F ? 1 : 2];
}

/* One GEMM's arguments, copied into a graph node when captured. */
struct gemm_job {
    cublasOperation_t ta, tb;
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const void *A, *B;
    void *C;
    cudaDataType at, bt, ct;
    const float *bias;
    int relu;   /* the RELU_BIAS epilogue: max(0, .) after the bias */
    int failed; /* out of memory (seen only when run at once) */
};

/* C = alpha op(A) op(B) + beta C, then + bias[row] when bias is set. */
static void run_gemm(void *arg)
{
    struct gemm_job *j = arg;
    float *a = as_f32(j->A, j->at, j->lda, j->ta == CUBLAS_OP_N ? j->k : j->m);
    float *b = as_f32(j->B, j->bt, j->ldb, j->tb == CUBLAS_OP_N ? j->n : j->k);
    float *c = as_f32(j->C, j->ct, j->ldc, j->n);
    j->failed = !a || !b || !c;
    if (!j->failed) {
        cblas_sgemm(CblasColMajor, j->ta == CUBLAS_OP_N ? CblasNoTrans : CblasTrans,
                    j->tb == CUBLAS_OP_N ? CblasNoTrans : CblasTrans, j->m, j->n, j->k, j->alpha, a,
                    j->lda, b, j->ldb, j->beta, c, j->ldc);
        for (int col = 0; j->bias && col < j->n; col++)
            for (int i = 0; i < j->m; i++) {
                float *v = &c[(size_t)col * j->ldc + i];
                *v += j->bias[i];
                *v = j->relu && *v <= 0.0f ? 0.0f : *v;
            }
        sim_from_f32(j->C, c, j->ct, (size_t)j->ldc * j->n);
    }
    free(a), free(b), free(c);
}

/* The GEMM's kernel on stream s (its record, run now or captured). */
static cublasStatus_t gemm(cudaStream_t s, int lt, struct gemm_job *j)
{
    double es = (double)sim_type_size(j->at), cs = (double)sim_type_size(j->ct);
    double m = j->m, n = j->n, k = j->k;
    double bytes = es * (m * k + k * n) + cs * m * n * (j->beta != 0 ? 2 : 1);
    uint64_t ns = sim_kernel_ns(2.0 * m * n * k, bytes, j->at != CUDA_R_32F);
    unsigned blocks = (unsigned)((j->m + 127) / 128 * ((j->n + 127) / 128));
    if (sim_work(s, gemm_name(j->at, lt), ns, blocks, 256, run_gemm, j, sizeof(*j)) != cudaSuccess)
        return CUBLAS_STATUS_ALLOC_FAILED;
    return j->failed ? CUBLAS_STATUS_ALLOC_FAILED : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *A, cudaDataType at,
                            int lda, const void *B, cudaDataType bt, int ldb, const void *beta,
                            void *C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo)
{
    (void)algo;
    if (compute != CUBLAS_COMPUTE_32F || at != bt)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    struct gemm_job j = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k};
    j.lda = lda, j.ldb = ldb, j.ldc = ldc, j.A = A, j.B = B, j.C = C, j.at = at, j.bt = bt;
    j.ct = ct, j.alpha = *(const float *)alpha, j.beta = *(const float *)beta;
    return gemm(h->stream, 0, &j);
}

/* ---- cuBLASLt ---- */

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = calloc(1, sizeof(**h));
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    if (compute != CUBLAS_COMPUTE_32F || scale != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    *d = calloc(1, sizeof(**d));
    return *d ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t size)
{
    struct lt_desc *x = (struct lt_desc *)d->data;
    void *field = attr == CUBLASLT_MATMUL_DESC_TRANSA           ? (void *)&x->ta
                  : attr == CUBLASLT_MATMUL_DESC_TRANSB         ? (void *)&x->tb
                  : attr == CUBLASLT_MATMUL_DESC_EPILOGUE       ? (void *)&x->epi
                  : attr == CUBLASLT_MATMUL_DESC_BIAS_POINTER   ? (void *)&x->bias
                  : attr == CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE ? (void *)&x->bias_type
                                                                : NULL;
    if (!field || size > 8)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(field, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType t, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    *l = calloc(1, sizeof(**l));
    if (!*l)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *(struct lt_layout *)(*l)->data = (struct lt_layout){t, rows, cols, ld};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    *p = calloc(1, sizeof(**p));
    return *p ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size)
{
    (void)p, (void)attr, (void)buf;
    return size <= 8 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

/* One algorithm for every shape the reference GEMM can do. */
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *returned)
{
    (void)h, (void)d, (void)a, (void)b, (void)c, (void)dd, (void)pref;
    *returned = 0;
    if (requested < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(&results[0], 0, sizeof(results[0]));
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

static int lt_refuses(void)
{
    const char *f = getenv("SIMDEV_LT_FAIL");
    return f && *f == '1';
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t ad, const void *B,
                              cublasLtMatrixLayout_t bd, const void *beta, const void *C,
                              cublasLtMatrixLayout_t cd, void *D, cublasLtMatrixLayout_t dd,
                              const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_bytes,
                              cudaStream_t s)
{
    (void)h, (void)algo, (void)ws, (void)ws_bytes;
    const struct lt_desc *x = (const struct lt_desc *)d->data;
    const struct lt_layout *la = (const void *)ad->data, *lb = (const void *)bd->data,
                           *lc = (const void *)cd->data, *ld = (const void *)dd->data;
    if (lt_refuses() || C != D || lc->ld != ld->ld)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    int relu = x->epi == CUBLASLT_EPILOGUE_RELU_BIAS;
    int has_bias = x->epi == CUBLASLT_EPILOGUE_BIAS || relu;
    if ((x->epi != CUBLASLT_EPILOGUE_DEFAULT && !has_bias) ||
        (has_bias && x->bias_type != CUDA_R_32F))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    int m = (int)ld->rows, n = (int)ld->cols;
    int k = (int)(x->ta == CUBLAS_OP_N ? la->cols : la->rows);
    struct gemm_job j = {.ta = x->ta, .tb = x->tb, .m = m, .n = n, .k = k};
    j.lda = (int)la->ld, j.ldb = (int)lb->ld, j.ldc = (int)ld->ld, j.A = A, j.B = B, j.C = D;
    j.at = la->t, j.bt = lb->t, j.ct = ld->t, j.alpha = *(const float *)alpha;
    j.beta = *(const float *)beta, j.bias = has_bias ? x->bias : NULL, j.relu = relu;
    return gemm(s, 1 + relu, &j);
}
