/* Row-major linear layers on cuBLAS (column-major): y^T = W x^T etc. A and B are the activation
 * dtype; the weight gradient is written in fp32 with beta = 1 (accumulation; 0 when --zero-grad
 * none left it "None"); compute is fp32 (tensor cores for fp16/bf16 inputs). */
#include "cuda_int.h"

static cudaDataType_t cuda_type(enum cuk_dtype dt)
{
    return dt == CUK_F16 ? CUDA_R_16F : dt == CUK_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static gp_status gemm(struct backend *b, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                      int k, const void *A, int lda, const void *B, int ldb, float beta, void *C,
                      cudaDataType_t ctype, int ldc, gp_error *err)
{
    const float alpha = 1.0f;
    cudaDataType_t t = cuda_type(b->dt);
    CUBLAS_TRY(cublasGemmEx(b->blas, ta, tb, m, n, k, &alpha, A, t, lda, B, t, ldb, &beta, C, ctype,
                            ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    return GP_OK;
}

gp_status cuda_linear_fwd(struct backend *b, void *y, const void *x, const void *w, int n, int cin,
                          int cout, gp_error *err)
{
    /* y^T (cout, n) = W (cout, cin) . x^T (cin, n): W is stored (cin, cout) column-major */
    return gemm(b, CUBLAS_OP_T, CUBLAS_OP_N, cout, n, cin, w, cin, x, cin, 0.0f, y,
                cuda_type(b->dt), cout, err);
}

gp_status cuda_linear_bwd(struct backend *b, void *dx, float *dw, const void *dy, const void *x,
                          const void *w, int n, int cin, int cout, int add, gp_error *err)
{
    /* dW^T (cin, cout) += x^T (cin, n) . dy (n, cout) */
    GP_TRY(gemm(b, CUBLAS_OP_N, CUBLAS_OP_T, cin, cout, n, x, cin, dy, cout, add ? 1.0f : 0.0f, dw,
                CUDA_R_32F, cin, err));
    if (!dx)
        return GP_OK;
    /* dx^T (cin, n) = W^T (cin, cout) . dy^T (cout, n) */
    return gemm(b, CUBLAS_OP_N, CUBLAS_OP_N, cin, n, cout, w, cin, dy, cout, 0.0f, dx,
                cuda_type(b->dt), cin, err);
}
