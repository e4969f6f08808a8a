/* The CUDA backend's forward, backward and optimizer step: cuBLAS GEMMs and cuDNN convolutions
 * plus our kernels, all enqueued on the compute stream with no host sync. */
#include "cuda_int.h"

static void *lw(const struct backend *b, const struct layer_spec *l)
{
    return (char *)b->wlp + l->w_off * b->es;
}

static void *layer_in(const struct backend *b, int i)
{
    return i == 0 ? b->x_in : cuda_flattens(b, i) ? b->flat : b->act[i];
}

/* --channels-last: the channels and positions of linear layer i's NHWC input. */
static void flat_shape(const struct backend *b, int i, int *c, int *hw)
{
    int j = i - 1;
    while (j > 0 && b->spec.l[j].kind != LAYER_CONV3)
        j--;
    *c = b->spec.l[j].cout;
    *hw = (int)(model_act_size(&b->spec, i) / (size_t)*c);
}

/* A linear layer: the GEMM with the bias (and, --fused, the next layer's ReLU, into its output)
 * in cuBLASLt's epilogue, else cuBLAS and a bias (or bias+ReLU) pass. */
static gp_status linear_forward(struct backend *b, int i, gp_error *err)
{
    const struct layer_spec *l = &b->spec.l[i];
    int relu = cuda_fuses_relu(b, i), done = 0;
    void *x = layer_in(b, i), *y = b->act[i + 1 + relu];
    float *bias = b->params + l->b_off;
    GP_TRY(cuda_lt_linear_fwd(b, i, y, x, lw(b, l), bias, &done, err));
    if (done)
        return GP_OK;
    GP_TRY(cuda_linear_fwd(b, y, x, lw(b, l), b->n, l->cin, l->cout, err));
    if (relu)
        cuk_bias_relu_fwd(b->dt, y, bias, b->n, l->cout, 1, b->compute);
    else
        cuk_bias_add(b->dt, y, bias, b->n, l->cout, 1, b->compute);
    return GP_OK;
}

static gp_status layer_forward(struct backend *b, int i, gp_error *err)
{
    const struct layer_spec *l = &b->spec.l[i];
    void *x = layer_in(b, i), *y = b->act[i + 1];
    float *bias = b->params + l->b_off;
    switch (l->kind) {
    case LAYER_LINEAR:
        if (cuda_flattens(b, i)) { /* PyTorch's flatten of a channels_last tensor: NCHW order */
            int c, hw;
            flat_shape(b, i, &c, &hw);
            cuk_layout(b->dt, b->flat, b->act[i], b->n, c, hw, 1, b->compute);
        }
        GP_TRY(linear_forward(b, i, err));
        break;
    case LAYER_CONV3:
        GP_TRY(cuda_conv_fwd(b, i, y, x, lw(b, l), err));
        if (cuda_nhwc(b, i)) /* (n*h*w, c): the channel innermost */
            cuk_bias_add(b->dt, y, bias, b->n * l->h * l->w, l->cout, 1, b->compute);
        else
            cuk_bias_add(b->dt, y, bias, b->n, l->cout, l->h * l->w, b->compute);
        break;
    case LAYER_RELU:
        if (i == 0 || !cuda_fuses_relu(b, i - 1)) /* else the linear layer applied it */
            cuk_relu_fwd(b->dt, y, x, (size_t)b->n * model_act_size(&b->spec, i), b->compute);
        break;
    case LAYER_POOL2:
        if (cuda_nhwc(b, i))
            cuk_maxpool2_nhwc_fwd(b->dt, y, b->arg[i], x, b->n, l->cin, l->h, l->w, b->compute);
        else
            cuk_maxpool2_fwd(b->dt, y, b->arg[i], x, b->n, l->cin, l->h, l->w, b->compute);
        break;
    }
    return GP_OK;
}

gp_status cuda_forward(struct backend *b, int train, gp_error *err)
{
    (void)train;
    for (int i = 0; i < b->spec.n_layers; i++)
        GP_TRY(layer_forward(b, i, err));
    cuk_softmax_ce_fwd(b->dt, b->prob, b->act[b->spec.n_layers], b->labels, b->n, b->spec.classes,
                       b->stats, b->compute);
    CU_TRY(cudaGetLastError(), err);
    return GP_OK;
}

static gp_status conv_backward(struct backend *b, int i, const void *dy, void *dx, gp_error *err)
{
    const struct layer_spec *l = &b->spec.l[i];
    float *dw = b->grads + l->w_off;
    GP_TRY(cuda_conv_bwd(b, i, dx, b->dw_tmp, dy, layer_in(b, i), lw(b, l), err));
    cuk_accum_f32(b->dt, dw, b->dw_tmp, l->w_len, b->grads_live, b->compute);
    if (cuda_nhwc(b, i))
        cuk_bias_grad(b->dt, b->grads + l->b_off, dy, b->n * l->h * l->w, l->cout, 1, b->grads_live,
                      b->compute);
    else
        cuk_bias_grad(b->dt, b->grads + l->b_off, dy, b->n, l->cout, l->h * l->w, b->grads_live,
                      b->compute);
    return GP_OK;
}

static gp_status layer_backward(struct backend *b, int i, const void *dy, void *dx, gp_error *err)
{
    const struct layer_spec *l = &b->spec.l[i];
    size_t n_in = (size_t)b->n * model_act_size(&b->spec, i);
    switch (l->kind) {
    case LAYER_LINEAR:
        GP_TRY(cuda_linear_bwd(b, dx && cuda_flattens(b, i) ? b->flat_grad : dx,
                               b->grads + l->w_off, dy, layer_in(b, i), lw(b, l), b->n, l->cin,
                               l->cout, b->grads_live, err));
        if (dx && cuda_flattens(b, i)) { /* the gradient back to NHWC */
            int c, hw;
            flat_shape(b, i, &c, &hw);
            cuk_layout(b->dt, dx, b->flat_grad, b->n, c, hw, 0, b->compute);
        }
        if (!cuda_fuses_relu(b, i)) /* else the ReLU's backward summed it */
            cuk_bias_grad(b->dt, b->grads + l->b_off, dy, b->n, l->cout, 1, b->grads_live,
                          b->compute);
        break;
    case LAYER_CONV3:
        GP_TRY(conv_backward(b, i, dy, dx, err));
        break;
    case LAYER_RELU:
        if (dx && i > 0 && cuda_fuses_relu(b, i - 1))
            cuk_relu_bwd_bias_grad(b->dt, dx, b->grads + b->spec.l[i - 1].b_off, dy, b->act[i + 1],
                                   b->n, b->spec.l[i - 1].cout, 1, b->grads_live, b->compute);
        else if (dx)
            cuk_relu_bwd(b->dt, dx, dy, b->act[i + 1], n_in, b->compute);
        break;
    case LAYER_POOL2:
        if (dx && cuda_nhwc(b, i))
            cuk_maxpool2_nhwc_bwd(b->dt, dx, dy, b->arg[i], b->n, l->cin, l->h, l->w, b->compute);
        else if (dx)
            cuk_maxpool2_bwd(b->dt, dx, dy, b->arg[i], b->n, l->cin, l->h, l->w, b->compute);
        break;
    }
    return GP_OK;
}

/* Whether layer i's backward reads an activation checkpointing dropped: a GEMM layer its
 * input, a ReLU its output (max-pool reads its argmax, always kept). */
static int reads_dropped(const struct backend *b, int i)
{
    switch (b->spec.l[i].kind) {
    case LAYER_LINEAR:
    case LAYER_CONV3:
        return b->dropped[i];
    case LAYER_RELU:
        return b->dropped[i + 1];
    case LAYER_POOL2:
        return 0;
    }
    return 0;
}

/* Backward is about to enter, at its last layer e - 1, the segment [s, e) of layers between two
 * kept activations: run the segment's forward again for the dropped activations it reads. */
static gp_status recompute_segment(struct backend *b, int e, gp_error *err)
{
    int s = model_ckpt_segment(b->dropped, e), need = 0;
    if (s < 0)
        return GP_OK;
    for (int i = s; i < e; i++)
        need |= reads_dropped(b, i);
    for (int i = s; need && i < e - 1; i++)
        GP_TRY(layer_forward(b, i, err));
    return GP_OK;
}

gp_status cuda_backward(struct backend *b, gp_error *err)
{
    int cur = 0;
    float inv = 1.0f / ((float)b->n * (float)b->cfg.accumulate);
    cuk_softmax_ce_bwd(b->dt, b->dbuf[0], b->prob, b->labels, b->n, b->spec.classes, inv, b->amp,
                       b->compute);
    for (int i = b->spec.n_layers - 1; i >= 0; i--) {
        GP_TRY(recompute_segment(b, i + 1, err));
        GP_TRY(layer_backward(b, i, b->dbuf[cur], i > 0 ? b->dbuf[1 - cur] : NULL, err));
        cur = 1 - cur;
    }
    b->grads_live = 1; /* a further micro-batch adds to these */
    CU_TRY(cudaGetLastError(), err);
    return GP_OK;
}

gp_status cuda_step(struct backend *b, gp_error *err)
{
    size_t np = b->spec.n_params;
    void *lp = b->dt == CUK_F32 ? NULL : b->wlp;
    int zero = b->cfg.fused && !b->cfg.zero_grad_none; /* the update zeroes as it reads */
    if (b->cfg.amp == AMP_FP16)
        cuk_unscale_check(b->grads, np, b->amp, b->compute);
    cuk_amp_update(b->amp, b->compute);
    if (b->cfg.optimizer == OPTIM_ADAM)
        cuk_adam(b->params, lp, b->dt, b->grads, b->opt, b->opt + np, np, b->cfg.lr, OPTIM_BETA1,
                 OPTIM_BETA2, OPTIM_EPS, b->amp, zero, b->compute);
    else
        cuk_sgd(b->params, lp, b->dt, b->grads, b->opt, np, b->cfg.lr, OPTIM_MOMENTUM, b->amp, zero,
                b->compute);
    CU_TRY(cudaMemsetAsync(&b->amp->found_inf, 0, sizeof(int), b->compute), err);
    if (b->cfg.zero_grad_none) /* zero_grad(set_to_none=True): no pass over the gradients */
        b->grads_live = 0;
    else if (!zero)
        CU_TRY(cudaMemsetAsync(b->grads, 0, np * sizeof(float), b->compute), err);
    CU_TRY(cudaGetLastError(), err);
    return GP_OK;
}
