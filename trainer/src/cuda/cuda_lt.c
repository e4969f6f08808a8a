/* The linear layers' forward pass on cuBLASLt with the bias fused into the GEMM epilogue
 * (y^T = W x^T + b). Descriptors and the heuristic's algorithm are cached per (layer, batch
 * size), not rebuilt per call. A shape cuBLASLt cannot run reports *done = 0 and the caller uses
 * cublasGemmEx + the bias kernel. */
#include "cuda_int.h"
#include "gp/log.h"

#include <cublasLt.h>
#include <stdlib.h>
#include <string.h>

struct lt_plan {
    int n; /* batch size; 0 = unused */
    int usable;
    uint32_t align[3]; /* byte alignment of W, x, y the algorithm was chosen for */
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

/* Largest power of two (<= 256) dividing the address: cuBLASLt's heuristic assumes 256-byte
 * aligned matrices unless told otherwise, and an algorithm that needs more alignment than a
 * pointer has fails at cublasLtMatmul. */
static uint32_t ptr_align(const void *p)
{
    uint32_t a = 256;
    while (a > 1 && (uintptr_t)p % a)
        a /= 2;
    return a;
}

static cudaDataType_t lt_type(enum cuk_dtype dt)
{
    return dt == CUK_F16 ? CUDA_R_16F : dt == CUK_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* Workspace cap and the real alignment of W, x and y (C and D are both y). @return 1 if set. */
static int set_prefs(cublasLtMatmulPreference_t pref, struct lt_plan *p, const void *const mats[3])
{
    static const cublasLtMatmulPreferenceAttributes_t keys[4] = {
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    size_t ws = CUDA_LT_WORKSPACE_BYTES;
    int ok = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &ws, sizeof(ws)) == 0;
    for (int k = 0; k < 3; k++)
        p->align[k] = ptr_align(mats[k]);
    for (int k = 0; k < 4 && ok; k++)
        ok = cublasLtMatmulPreferenceSetAttribute(pref, keys[k], &p->align[k < 3 ? k : 2],
                                                  sizeof(uint32_t)) == 0;
    return ok;
}

/* Describe y^T (cout, n) = op_T(W (cin, cout)) . x^T (cin, n) + bias and ask for an algorithm.
 * Any refusal leaves the plan unusable, which is not an error: the caller falls back to
 * cublasGemmEx. The bias is fp32 (the master weights), and cublasLt.h documents the bias type
 * as the output's (fp8 and int8 kernels aside): fp16/bf16 outputs take the fallback. */
static void plan_make(struct backend *b, struct lt_plan *p, int layer, const float *bias,
                      const void *const mats[3])
{
    const struct layer_spec *l = &b->spec.l[layer];
    cudaDataType_t t = lt_type(b->dt), bt = CUDA_R_32F;
    if (b->dt != CUK_F32)
        return; /* p->usable stays 0 */
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cublasLtEpilogue_t epi =
            cuda_fuses_relu(b, layer) ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
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
    ok = ok && set_prefs(pref, p, mats);
    ok = ok && ptr_align(bias) >= 16; /* the bias epilogue reads it in 16-byte vectors */
    ok = ok && cublasLtMatmulAlgoGetHeuristic(b->lt->h, p->op, p->a, p->x, p->y, p->y, pref, 1,
                                              &res, &got) == 0;
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    p->usable = ok && got > 0;
    if (p->usable)
        p->algo = res.algo;
}

static gp_status plan_for(struct backend *b, int layer, const float *bias,
                          const void *const mats[3], struct lt_plan **out, gp_error *err)
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
    plan_make(b, p, layer, bias, mats);
    return GP_OK;
}

gp_status cuda_lt_linear_fwd(struct backend *b, int layer, void *y, const void *x, const void *w,
                             const float *bias, int *done, gp_error *err)
{
    struct lt_plan *p;
    const void *const mats[3] = {w, x, y};
    *done = 0;
    GP_TRY(plan_for(b, layer, bias, mats, &p, err));
    if (!p->usable)
        return GP_OK;
    for (int k = 0; k < 3; k++) /* e.g. the input buffer changed: not the planned alignment */
        if (ptr_align(mats[k]) < p->align[k])
            return GP_OK;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t rc =
            cublasLtMatmul(b->lt->h, p->op, &one, w, p->a, x, p->x, &zero, y, p->y, y, p->y,
                           &p->algo, b->lt_workspace, CUDA_LT_WORKSPACE_BYTES, b->compute);
    if (rc != CUBLAS_STATUS_SUCCESS) { /* the heuristic's algorithm refused: not fatal */
        GP_LOG(GP_LOG_DEBUG, "cublasLtMatmul failed (%d) for layer %d: using cublasGemmEx", (int)rc,
               layer);
        p->usable = 0;
        return GP_OK;
    }
    *done = 1;
    return GP_OK;
}
