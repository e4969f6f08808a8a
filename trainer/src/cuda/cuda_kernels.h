/* trainer/src/cuda/cuda_kernels.h: launchers of the trainer's own CUDA kernels (C-callable; the
 * kernels live in k_*.cu, one layer per file). Activations are `dt` (fp32, fp16 or bf16);
 * parameters, gradients, optimizer state and loss statistics are fp32. All run on `stream`. */
#ifndef GP_TRAINER_CUDA_KERNELS_H
#define GP_TRAINER_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cuk_dtype { CUK_F32 = 0, CUK_F16 = 1, CUK_BF16 = 2 };

/* Loss statistics accumulated on the device; read back only when logging. */
struct cuk_stats {
    double loss_sum;
    unsigned long long correct;
    unsigned long long samples;
};

/* Optimizer step count and dynamic loss-scaling state, kept on the device (no host sync). */
struct cuk_amp {
    float scale;        /* loss scale (1 when not scaling) */
    int growth_tracker; /* good steps since the last change */
    int found_inf;      /* set by cuk_unscale_check, cleared after the step */
    int dynamic;        /* 1: fp16 loss scaling; 0: only count steps */
    long long skipped;  /* steps skipped on inf/nan */
    long long t;        /* optimizer steps applied (Adam's bias correction) */
};

size_t cuk_dtype_size(enum cuk_dtype dt);
/* @return 1 if this build's device code runs on the current device (machine code for its
 * architecture, or PTX the driver can compile for it). */
int cuk_have_image(void);

/* ---- k_elementwise.cu ---- */
void cuk_cast_from_f32(enum cuk_dtype dt, void *dst, const float *src, size_t n, cudaStream_t s);
void cuk_relu_fwd(enum cuk_dtype dt, void *y, const void *x, size_t n, cudaStream_t s);
void cuk_relu_bwd(enum cuk_dtype dt, void *dx, const void *dy, const void *y, size_t n,
                  cudaStream_t s);
/* --fused: y = relu(x) after the bias add: y (n, c, hw) = max(y + b (c), 0), NaN kept */
void cuk_bias_relu_fwd(enum cuk_dtype dt, void *y, const float *b, int n, int c, int hw,
                       cudaStream_t s);
/* --fused: dx = dy where y > 0 else 0 (y the ReLU's output, (n, c, hw)), and db (c) += the sum of
 * dx over n and hw (db = that sum with add 0), in one pass */
void cuk_relu_bwd_bias_grad(enum cuk_dtype dt, void *dx, float *db, const void *dy, const void *y,
                            int n, int c, int hw, int add, cudaStream_t s);
/* y (n, c, hw) += b (c) */
void cuk_bias_add(enum cuk_dtype dt, void *y, const float *b, int n, int c, int hw, cudaStream_t s);
/* db (c) += sum over n and hw of dy (n, c, hw); with add 0, db = that sum (gradients "None") */
void cuk_bias_grad(enum cuk_dtype dt, float *db, const void *dy, int n, int c, int hw, int add,
                   cudaStream_t s);
/* dst (fp32) += src (dt); with add 0, dst = src */
void cuk_accum_f32(enum cuk_dtype dt, float *dst, const void *src, size_t n, int add,
                   cudaStream_t s);

/* ---- k_pool.cu: 2x2 max pooling, stride 2, x (n, c, h, w) ---- */
void cuk_maxpool2_fwd(enum cuk_dtype dt, void *y, int32_t *arg, const void *x, int n, int c, int h,
                      int w, cudaStream_t s);
void cuk_maxpool2_bwd(enum cuk_dtype dt, void *dx, const void *dy, const int32_t *arg, int n, int c,
                      int h, int w, cudaStream_t s);

/* --channels-last: the same on x (n, h, w, c); arg offsets within an image of (h, w, c) */
void cuk_maxpool2_nhwc_fwd(enum cuk_dtype dt, void *y, int32_t *arg, const void *x, int n, int c,
                           int h, int w, cudaStream_t s);
void cuk_maxpool2_nhwc_bwd(enum cuk_dtype dt, void *dx, const void *dy, const int32_t *arg, int n,
                           int c, int h, int w, cudaStream_t s);
/* --channels-last's flatten: dst (n, c, hw) from src (n, hw, c) with to_nchw, else the reverse */
void cuk_layout(enum cuk_dtype dt, void *dst, const void *src, int n, int c, int hw, int to_nchw,
                cudaStream_t s);

/* ---- k_loss.cu: softmax cross-entropy over logits (n, k) ---- */
void cuk_softmax_ce_fwd(enum cuk_dtype dt, float *prob, const void *logits, const int32_t *labels,
                        int n, int k, struct cuk_stats *st, cudaStream_t s);
/* dlogits = (prob - onehot) * inv_nacc * amp->scale */
void cuk_softmax_ce_bwd(enum cuk_dtype dt, void *dlogits, const float *prob, const int32_t *labels,
                        int n, int k, float inv_nacc, const struct cuk_amp *amp, cudaStream_t s);

/* ---- k_optim.cu ---- */
/* g /= amp->scale; amp->found_inf = 1 when any g is inf/nan. */
void cuk_unscale_check(float *g, size_t n, struct cuk_amp *amp, cudaStream_t s);
/* One thread: GradScaler's update (when dynamic) and t++ unless found_inf. */
void cuk_amp_update(struct cuk_amp *amp, cudaStream_t s);
/* Adam / SGD-momentum on fp32 master weights, skipped when amp->found_inf; writes the
 * low-precision copy `lp` (dt) when it is not NULL; with `zero` (--fused) each gradient is
 * zeroed as it is read, skipped step or not. */
void cuk_adam(float *p, void *lp, enum cuk_dtype dt, float *g, float *m, float *v, size_t n,
              float lr, float beta1, float beta2, float eps, const struct cuk_amp *amp, int zero,
              cudaStream_t s);
void cuk_sgd(float *p, void *lp, enum cuk_dtype dt, float *g, float *buf, size_t n, float lr,
             float momentum, const struct cuk_amp *amp, int zero, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
