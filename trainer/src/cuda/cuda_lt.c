/* The linear layers' forward pass on cuBLASLt with the bias fused into the GEMM epilogue
 * (y^T = W x^T + b). Descriptors and the heuristic's algorithm are cached per (layer, batch
 * size), not rebuilt per call. A shape cuBLASLt cannot run reports *done = 0 and the caller uses
 * cublasGemmEx + the bias kernel. */
#include "cuda_int.h"

#include <cublasLt.h>
#include <stdlib.h>
#include <string.h>

struct lt_plan {
    int n; /* batch size; 0 = unused */
    int usable;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, x, y;
    cublasLtMatmulAlgo_t algo;
};

struct lt_state {
    cublasLtHandle_t h;
    struct lt_plan p[MODEL_MAX_LAYERS][CUDA_CONV_CACHE];
    int next_evict[MODEL_MAX_LAYERS];
};

#define LT_TRY(call, err) CUBLAS_TRY(call, err)

gp_status cuda_lt_open(struct backend *b, gp_error *err)
{
    b->lt = calloc(1, sizeof(*b->lt));
    if (!b->lt)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    LT_TRY(cublasLtCreate(&b->lt->h), err);
    return GP_OK;
}

static void plan_free(struct lt_plan *p)
{
    if (p->op)
        cublasLtMatmulDescDestroy(p->op);
    if (p->a)
        cublasLtMatrixLayoutDestroy(p->a);
    if (p->x)
        cublasLtMatrixLayoutDestroy(p->x);
    if (p->y)
        cublasLtMatrixLayoutDestroy(p->y);
    memset(p, 0, sizeof(*p));
}

void cuda_lt_close(struct backend *b)
{
    if (!b->lt)
        return;
    for (int i = 0; i < MODEL_MAX_LAYERS; i++)
        for (int k = 0; k < CUDA_CONV_CACHE; k++)
            plan_free(&b->lt->p[i][k]);
    if (b->lt->h)
        cublasLtDestroy(b->lt->h);
    free(b->lt);
    b->lt = NULL;
}

static cudaDataType_t lt_type(enum cuk_dtype dt)
{
    return dt == CUK_F16 ? CUDA_R_16F : dt == CUK_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* Describe y^T (cout, n) = op_T(W (cin, cout)) . x^T (cin, n) + bias and ask for an algorithm.
 * Any refusal (e.g. an fp32 bias with fp16 output on an older cuBLASLt) leaves the plan unusable,
 * which is not an error: the caller falls back to cublasGemmEx. */
static void plan_make(struct backend *b, struct lt_plan *p, const struct layer_spec *l,
                      const float *bias)
{
    cudaDataType_t t = lt_type(b->dt), bt = CUDA_R_32F;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    size_t ws = CUDA_LT_WORKSPACE_BYTES;
    cublasLtMatmulDescAttributes_t keys[5] = {
            CUBLASLT_MATMUL_DESC_TRANSA, CUBLASLT_MATMUL_DESC_TRANSB, CUBLASLT_MATMUL_DESC_EPILOGUE,
            CUBLASLT_MATMUL_DESC_BIAS_POINTER, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE};
    const void *vals[5] = {&ta, &tb, &epi, &bias, &bt};
    size_t sizes[5] = {sizeof(ta), sizeof(tb), sizeof(epi), sizeof(bias), sizeof(bt)};
    int ok = cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F) == 0;
    for (int k = 0; k < 5 && ok; k++)
        ok = cublasLtMatmulDescSetAttribute(p->op, keys[k], vals[k], sizes[k]) == 0;
    ok = ok &&
         cublasLtMatrixLayoutCreate(&p->a, t, (uint64_t)l->cin, (uint64_t)l->cout, l->cin) == 0;
    ok = ok && cublasLtMatrixLayoutCreate(&p->x, t, (uint64_t)l->cin, (uint64_t)p->n, l->cin) == 0;
    ok = ok &&
         cublasLtMatrixLayoutCreate(&p->y, t, (uint64_t)l->cout, (uint64_t)p->n, l->cout) == 0;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    ok = ok && cublasLtMatmulPreferenceCreate(&pref) == 0;
    ok = ok && cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &ws, sizeof(ws)) == 0;
    ok = ok && cublasLtMatmulAlgoGetHeuristic(b->lt->h, p->op, p->a, p->x, p->y, p->y, pref, 1,
                                              &res, &got) == 0;
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    p->usable = ok && got > 0;
    if (p->usable)
        p->algo = res.algo;
}

static gp_status plan_for(struct backend *b, int layer, const float *bias, struct lt_plan **out,
                          gp_error *err)
{
    struct lt_plan *row = b->lt->p[layer];
    for (int k = 0; k < CUDA_CONV_CACHE; k++)
        if (row[k].n == b->n) {
            *out = &row[k];
            return GP_OK;
        }
    struct lt_plan *p = &row[b->lt->next_evict[layer]++ % CUDA_CONV_CACHE];
    plan_free(p);
    p->n = b->n;
    *out = p;
    plan_make(b, p, &b->spec.l[layer], bias);
    return GP_OK;
}

gp_status cuda_lt_linear_fwd(struct backend *b, int layer, void *y, const void *x, const void *w,
                             const float *bias, int *done, gp_error *err)
{
    struct lt_plan *p;
    *done = 0;
    GP_TRY(plan_for(b, layer, bias, &p, err));
    if (!p->usable)
        return GP_OK;
    const float one = 1.0f, zero = 0.0f;
    LT_TRY(cublasLtMatmul(b->lt->h, p->op, &one, w, p->a, x, p->x, &zero, y, p->y, y, p->y,
                          &p->algo, b->lt_workspace, CUDA_LT_WORKSPACE_BYTES, b->compute),
           err);
    *done = 1;
    return GP_OK;
}
