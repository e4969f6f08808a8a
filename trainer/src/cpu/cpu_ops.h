/* trainer/src/cpu/cpu_ops.h: the CPU reference layers (OpenBLAS GEMMs, im2col convolution).
 * They are the CPU backend and the oracle the CUDA kernels are tested against.
 * Layout: activations NCHW, row-major; linear weights (out, in) as in PyTorch.
 * Backward functions ACCUMULATE into dw/db (gradient accumulation) and overwrite dx; with
 * `accumulate` 0 they overwrite dw/db instead (gradients set to None: no zeroing pass first). */
#ifndef GP_TRAINER_CPU_OPS_H
#define GP_TRAINER_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Load OpenBLAS (once; cpu_blas.c). @return NULL, or why it cannot be loaded. */
const char *cpu_blas_load(void);

/* Flush subnormal floats to zero (inputs and results) on the calling thread, for the backend's
 * compute (cpu_fpenv.c says why). @return the state to give back with cpu_restore_fpenv. */
unsigned cpu_flush_denormals(void);
void cpu_restore_fpenv(unsigned saved);

/* Lower OpenBLAS's thread count to `most` where it is higher (OPENBLAS_NUM_THREADS or every core:
 * never raised). @return the threads it now uses, 0 if unknown. */
int cpu_blas_limit_threads(int most);
/* Row-major C (m, n) = alpha op(A) op(B) + beta C, op = transpose when trans_*: cblas_sgemm. */
void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc);

/* bf16 autocast (cpu_bf16.c): while a state is current on a thread, cpu_sgemm rounds its inputs
 * to bf16 and accumulates in fp32 (cblas_sbgemm where OpenBLAS exports it). The state owns the
 * rounded copies; `failed` is set when one could not be allocated (the GEMM is then skipped). */
struct cpu_autocast {
    void *buf[2];
    size_t cap[2];
    int failed;
};
void cpu_autocast_begin(struct cpu_autocast *ac);
void cpu_autocast_end(void);
struct cpu_autocast *cpu_autocast_current(void);
void cpu_autocast_free(struct cpu_autocast *ac);
/* Round A and B of a GEMM into the state's buffers: fp32 values, or bf16 bits when `bits`.
 * @return 0 when out of memory. */
int cpu_autocast_gemm_inputs(struct cpu_autocast *ac, int trans_a, int trans_b, int m, int n, int k,
                             const float *a, int lda, const float *b, int ldb, int bits,
                             const void **ra, const void **rb);
/* 1 when the loaded OpenBLAS exports cblas_sbgemm (bf16 GEMM). */
int cpu_blas_has_sbgemm(void);

/* fp32 -> bf16 with round-to-nearest-even (NaN kept NaN, overflow to inf): the bits, or the
 * value as an fp32. */
static inline uint16_t cpu_bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static inline float cpu_bf16_round(float f)
{
    uint32_t u = (uint32_t)cpu_bf16_bits(f) << 16;
    memcpy(&f, &u, sizeof(f));
    return f;
}
/* p[0..n) rounded to bf16 in place. */
void cpu_round_bf16(float *p, size_t n);

/* y (n, cout) = x (n, cin) . w^T (cin, cout) + b */
void cpu_linear_forward(float *y, const float *x, const float *w, const float *b, int n, int cin,
                        int cout);
/* dx (n, cin) = dy . w (may be NULL); dw (cout, cin) += dy^T . x; db (cout) += sum_n dy */
void cpu_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int n, int cin, int cout, int accumulate);
/* --fused: y = ReLU(x . w^T + b), the bias and ReLU in one pass after the GEMM. Backward takes
 * the gradient of that output, masks it in place by y > 0 and sums db in the same pass. */
void cpu_linear_relu_forward(float *y, const float *x, const float *w, const float *b, int n,
                             int cin, int cout);
void cpu_linear_relu_backward(float *dx, float *dw, float *db, float *dy, const float *y,
                              const float *x, const float *w, int n, int cin, int cout,
                              int accumulate);

/* 3x3 convolution, stride 1, padding 1: x (n, cin, h, w) -> y (n, cout, h, w), computed over
 * blocks of `block` samples (one GEMM per block) in a workspace the caller sizes once. */
struct cpu_conv3 {
    int cin, cout, h, w;
    int block;  /* samples per GEMM */
    int relu;   /* forward writes ReLU(conv); backward masks dy by y > 0 (fused ReLU layer) */
    float *col; /* (cin*9, block*h*w) columns, reused for the input gradient */
    float *tmp; /* (cout, block*h*w) GEMM output / gathered dy */
    float *wk;  /* NHWC only: cpu_conv3_nhwc_wk_size floats, the permuted weights and gradient */
};
/* Samples per block for a batch of at most max_batch: bounds the workspace to a few MiB. */
int cpu_conv3_block(int cin, int h, int w, int max_batch);
/* Workspace floats cpu_conv3_init needs for this shape and block. */
size_t cpu_conv3_ws_size(int cin, int cout, int h, int w, int block);
/* Fill c (relu off) over ws of cpu_conv3_ws_size floats; layers run one at a time may share ws. */
void cpu_conv3_init(struct cpu_conv3 *c, int cin, int cout, int h, int w, int block, float *ws);
void cpu_conv3_forward(const struct cpu_conv3 *c, float *y, const float *x, const float *wt,
                       const float *b, int n);
/* dx may be NULL (first layer); y is the forward output, read only when c->relu. */
void cpu_conv3_backward(const struct cpu_conv3 *c, float *dx, float *dw, float *db, const float *dy,
                        const float *y, const float *x, const float *wt, int n, int accumulate);

/* --channels-last (cpu_conv_nhwc.c): the same convolution over x (n, h, w, cin) -> y (n, h, w,
 * cout), in the same workspace plus c->wk (set by the caller) of cpu_conv3_nhwc_wk_size floats. */
size_t cpu_conv3_nhwc_wk_size(int cin, int cout);
void cpu_conv3_nhwc_forward(const struct cpu_conv3 *c, float *y, const float *x, const float *wt,
                            const float *b, int n);
void cpu_conv3_nhwc_backward(const struct cpu_conv3 *c, float *dx, float *dw, float *db,
                             const float *dy, const float *y, const float *x, const float *wt,
                             int n, int accumulate);
/* 2x2 max pooling over NHWC; arg holds the argmax offset within each sample's input. */
void cpu_maxpool2_nhwc_forward(float *y, int32_t *arg, const float *x, int n, int c, int h, int w);
void cpu_maxpool2_nhwc_backward(float *dx, const float *dy, const int32_t *arg, int n, int c, int h,
                                int w);
/* Layout changes of n samples of c channels by hw pixels. */
void cpu_nchw_to_nhwc(float *dst, const float *src, int n, int c, int hw);
void cpu_nhwc_to_nchw(float *dst, const float *src, int n, int c, int hw);

/* y = max(x, 0); dx = dy where y > 0 */
void cpu_relu_forward(float *y, const float *x, size_t n);
void cpu_relu_backward(float *dx, const float *dy, const float *y, size_t n);

/* 2x2 max pooling, stride 2: x (n, c, h, w) -> y (n, c, h/2, w/2); arg holds the argmax
 * offset within each input plane, for backward. */
void cpu_maxpool2_forward(float *y, int32_t *arg, const float *x, int n, int c, int h, int w);
void cpu_maxpool2_backward(float *dx, const float *dy, const int32_t *arg, int n, int c, int h,
                           int w);

/* Softmax cross-entropy over logits (n, k): writes prob (n, k); returns the summed loss and
 * counts correct argmax predictions into *correct. */
double cpu_softmax_ce_forward(float *prob, int *correct, const float *logits, const int32_t *labels,
                              int n, int k);
/* dlogits = (prob - onehot(label)) * scale (scale = loss_scale / (n * accumulate)). */
void cpu_softmax_ce_backward(float *dlogits, const float *prob, const int32_t *labels, int n, int k,
                             float scale);

/* Adam (PyTorch's: bias-corrected, eps outside the sqrt), step t counts from 1.
 * g is multiplied by inv_scale first (loss-scale unscaling; 1 without AMP). */
void cpu_adam_step(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
                   float beta2, float eps, long long t, float inv_scale);
/* SGD with momentum (PyTorch's: buf = mu * buf + g; p -= lr * buf). */
void cpu_sgd_step(float *p, const float *g, float *buf, size_t n, float lr, float momentum,
                  float inv_scale);
/* --fused: the same steps, zeroing each gradient as they read it (zero_grad in the same pass). */
void cpu_adam_step_zero(float *p, float *g, float *m, float *v, size_t n, float lr, float beta1,
                        float beta2, float eps, long long t, float inv_scale);
void cpu_sgd_step_zero(float *p, float *g, float *buf, size_t n, float lr, float momentum,
                       float inv_scale);
/* 1 when any of g[0..n) is inf or nan. */
int cpu_nonfinite(const float *g, size_t n);

#endif
