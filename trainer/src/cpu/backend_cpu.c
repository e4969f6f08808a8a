/* The CPU backend: the reference implementation and test oracle. Activations of every layer are
 * kept for backward; gradients flow through two ping-pong buffers. A ReLU after a convolution
 * runs inside it (forward and backward), so its pass over the activations is saved; under
 * --fused so does a ReLU after a linear layer, and the optimizer step zeroes the gradients in
 * its own pass. Under --channels-last the cnn's activations up to its first linear layer are
 * NHWC; that layer flattens them in NCHW order (a copy, as PyTorch's flatten of a channels_last
 * tensor), so the weights mean the same in both layouts. The backend counts its elementwise passes
 * (what fusing saves) while training. */
#include "backend.h"
#include "cpu_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct backend {
    struct backend_config cfg;
    struct model_spec spec;
    float *params, *grads, *opt; /* opt: Adam m then v, or the SGD momentum buffer */
    long long t;
    float *act[MODEL_MAX_LAYERS + 1]; /* act[0] = input, act[i+1] = output of layer i */
    float *act_scratch; /* --checkpoint-activations: the dropped activations of one segment */
    int dropped[MODEL_MAX_LAYERS + 1]; /* act[i] lies in act_scratch, recomputed in backward */
    int grads_live; /* 0: gradients "set to None" by the last step: backward writes, not adds */
    long long act_bytes;            /* activation, argmax and gradient buffers */
    int32_t *arg[MODEL_MAX_LAYERS]; /* max-pool argmax */
    int32_t *labels;
    float *prob, *dbuf[2], *ws; /* ws: convolution workspace, shared by the layers */
    struct cpu_conv3 conv[MODEL_MAX_LAYERS];
    int fused[MODEL_MAX_LAYERS];    /* 1: a ReLU layer done inside the GEMM layer before it */
    int nhwc[MODEL_MAX_LAYERS + 1]; /* --channels-last: act[i] is NHWC */
    float *flat;                    /* the NHWC linear layer's input and dx in NCHW, side by side */
    float *wk;                      /* NHWC convolutions' permuted weights, shared */
    int n;
    int counting;     /* count passes: in training steps, not in evaluation */
    long long passes; /* elementwise passes counted */
    struct step_stats stats;
    struct cpu_autocast ac; /* --amp bf16: the GEMMs' rounded inputs */
};

static void *host_alloc(size_t bytes, void *ud)
{
    (void)ud;
    return malloc(bytes);
}

static void host_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

static void cpu_close(struct backend *b)
{
    if (!b)
        return;
    for (int i = 0; i <= MODEL_MAX_LAYERS; i++)
        if (!b->dropped[i])
            free(b->act[i]);
    free(b->act_scratch);
    for (int i = 0; i < MODEL_MAX_LAYERS; i++)
        free(b->arg[i]);
    free(b->params);
    free(b->grads);
    free(b->opt);
    free(b->labels);
    free(b->prob);
    free(b->dbuf[0]);
    free(b->dbuf[1]);
    free(b->ws);
    free(b->flat);
    free(b->wk);
    cpu_autocast_free(&b->ac);
    free(b);
}

/* --channels-last: the cnn's activations are NHWC up to the input of its first linear layer. */
static void mark_nhwc(struct backend *b)
{
    int on = b->cfg.channels_last && b->spec.kind == MODEL_CNN;
    for (int i = 0; i <= b->spec.n_layers; i++) {
        b->nhwc[i] = on;
        if (i < b->spec.n_layers && b->spec.l[i].kind == LAYER_LINEAR)
            on = 0;
    }
}

/* The NHWC convolutions' permuted weights, and the NCHW copies of the flattening layer. */
static int alloc_nhwc(struct backend *b)
{
    const struct model_spec *m = &b->spec;
    size_t wk = 0, nb = (size_t)b->cfg.max_batch;
    for (int i = 0; i < m->n_layers; i++) {
        const struct layer_spec *l = &m->l[i];
        if (b->nhwc[i] && l->kind == LAYER_CONV3) {
            size_t need = cpu_conv3_nhwc_wk_size(l->cin, l->cout);
            wk = need > wk ? need : wk;
        }
        if (b->nhwc[i] && l->kind == LAYER_LINEAR) {
            if (!(b->flat = malloc(2 * nb * model_act_size(m, i) * sizeof(float))))
                return 0;
            b->act_bytes += (long long)(2 * nb * model_act_size(m, i) * sizeof(float));
        }
    }
    if (wk && !(b->wk = malloc(wk * sizeof(float))))
        return 0;
    for (int i = 0; i < m->n_layers; i++)
        b->conv[i].wk = b->wk;
    return 1;
}

/* One workspace for all convolutions, sized here once; a ReLU right after a convolution is
 * fused into it (its output goes straight to the ReLU's activation). */
static int alloc_conv(struct backend *b)
{
    const struct model_spec *m = &b->spec;
    size_t ws = 0;
    for (int i = 0; i < m->n_layers; i++) {
        const struct layer_spec *l = &m->l[i];
        if (l->kind != LAYER_CONV3)
            continue;
        int block = cpu_conv3_block(l->cin, l->h, l->w, b->cfg.max_batch);
        size_t need = cpu_conv3_ws_size(l->cin, l->cout, l->h, l->w, block);
        ws = need > ws ? need : ws;
    }
    if (!ws)
        return 1;
    if (!(b->ws = malloc(ws * sizeof(float))))
        return 0;
    for (int i = 0; i < m->n_layers; i++) {
        const struct layer_spec *l = &m->l[i];
        if (l->kind != LAYER_CONV3)
            continue;
        int block = cpu_conv3_block(l->cin, l->h, l->w, b->cfg.max_batch);
        cpu_conv3_init(&b->conv[i], l->cin, l->cout, l->h, l->w, block, b->ws);
        b->conv[i].relu = b->fused[i + 1];
    }
    return 1;
}

/* A ReLU right after a convolution (or under --fused a linear layer) runs inside it: the GEMM
 * layer's own output is never made. */
static void mark_fused(struct backend *b)
{
    const struct model_spec *m = &b->spec;
    for (int i = 0; i + 1 < m->n_layers; i++) {
        enum layer_kind k = m->l[i].kind;
        b->fused[i + 1] = m->l[i + 1].kind == LAYER_RELU &&
                          (k == LAYER_CONV3 || (k == LAYER_LINEAR && b->cfg.fused));
    }
}

static void count_passes(struct backend *b, int k)
{
    b->passes += b->counting ? k : 0;
}

/* Per sample: each activation its own buffer, or under checkpointing the dropped ones of a
 * segment side by side in one scratch that every segment reuses (one is live at a time). */
static int alloc_acts(struct backend *b, size_t nb)
{
    const struct model_spec *m = &b->spec;
    size_t seg = 0, most = 0;
    for (int i = 0; i <= m->n_layers; i++) {
        b->dropped[i] = b->cfg.checkpoint_activations && !model_ckpt_kept(m, i);
        if (i > 0 && i < m->n_layers &&
            b->fused[i]) /* act[i], the input of a fused ReLU: never made */
            continue;
        seg = b->dropped[i] ? seg + model_act_size(m, i) : 0;
        most = seg > most ? seg : most;
    }
    if (most && !(b->act_scratch = calloc(nb * most, sizeof(float))))
        return 0;
    b->act_bytes += (long long)(nb * most * sizeof(float));
    seg = 0;
    for (int i = 0; i <= m->n_layers; i++) {
        size_t len = nb * model_act_size(m, i);
        if (i > 0 && i < m->n_layers &&
            b->fused[i]) /* the fused convolution's output: never made */
            continue;
        if (b->dropped[i]) {
            b->act[i] = b->act_scratch + seg;
            seg += len;
            continue;
        }
        seg = 0;
        if (!(b->act[i] = calloc(len, sizeof(float))))
            return 0;
        b->act_bytes += (long long)(len * sizeof(float));
    }
    return 1;
}

static int alloc_buffers(struct backend *b)
{
    const struct model_spec *m = &b->spec;
    size_t nb = (size_t)b->cfg.max_batch, np = m->n_params;
    b->params = calloc(np, sizeof(float));
    b->grads = calloc(np, sizeof(float));
    b->opt = calloc(np * (size_t)backend_opt_slots(b->cfg.optimizer), sizeof(float));
    b->labels = calloc(nb, sizeof(int32_t));
    b->prob = calloc(nb * (size_t)m->classes, sizeof(float));
    b->dbuf[0] = calloc(nb * model_max_act(m), sizeof(float));
    b->dbuf[1] = calloc(nb * model_max_act(m), sizeof(float));
    int ok = b->params && b->grads && b->opt && b->labels && b->prob && b->dbuf[0] && b->dbuf[1];
    b->act_bytes = (long long)(2 * nb * model_max_act(m) * sizeof(float));
    mark_fused(b);
    ok = ok && alloc_acts(b, nb);
    for (int i = 0; i < m->n_layers; i++)
        if (m->l[i].kind == LAYER_POOL2) {
            ok = ok && (b->arg[i] = calloc(nb * model_act_size(m, i + 1), sizeof(int32_t)));
            b->act_bytes += (long long)(nb * model_act_size(m, i + 1) * sizeof(int32_t));
        }
    mark_nhwc(b);
    return ok && alloc_conv(b) && alloc_nhwc(b);
}

static gp_status cpu_open(struct backend **out, const struct backend_config *cfg, char *device_name,
                          size_t name_cap, long long *device_memory, gp_error *err)
{
    *out = NULL;
    *device_memory = 0;
    if (cfg->amp == AMP_FP16) /* fp16 with loss scaling is the GPU's; the CPU autocasts to bf16 */
        return gp_error_set(err, GP_EINVAL, NULL,
                            "--amp fp16 needs the CUDA backend; on the CPU use --amp bf16");
    /* OpenBLAS's worker threads start when it loads and inherit this thread's environment */
    unsigned fpenv = cpu_flush_denormals();
    const char *blas = cpu_blas_load();
    cpu_restore_fpenv(fpenv);
    if (blas)
        return gp_error_set(err, GP_EIO, NULL, "%s", blas);
    struct backend *b = calloc(1, sizeof(*b));
    if (!b)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    b->cfg = *cfg;
    b->spec = *cfg->spec;
    b->cfg.spec = &b->spec;
    if (!alloc_buffers(b)) {
        cpu_close(b);
        return gp_error_set(err, GP_ENOMEM, NULL, "cannot allocate the CPU model buffers");
    }
    b->stats.scale = 1.0f;
    b->grads_live = !cfg->zero_grad_none;
    int threads = cpu_blas_limit_threads(cfg->host_threads);
    if (threads > 0)
        snprintf(device_name, name_cap, "cpu (OpenBLAS, %d thread%s)", threads,
                 threads == 1 ? "" : "s");
    else
        snprintf(device_name, name_cap, "cpu (OpenBLAS)");
    *out = b;
    return GP_OK;
}

static gp_status cpu_set_input(struct backend *b, const struct batch *batch, gp_error *err)
{
    GP_FAIL_IF(batch->n > b->cfg.max_batch, GP_EINVAL, err, "batch of %d exceeds %d", batch->n,
               b->cfg.max_batch);
    b->n = batch->n;
    const struct model_spec *m = &b->spec;
    if (b->nhwc[0] && m->in_c > 1)
        cpu_nchw_to_nhwc(b->act[0], batch->x, batch->n, m->in_c, m->in_h * m->in_w);
    else /* one channel: NCHW is NHWC */
        memcpy(b->act[0], batch->x, (size_t)batch->n * model_act_size(m, 0) * sizeof(float));
    memcpy(b->labels, batch->y, (size_t)batch->n * sizeof(int32_t));
    return GP_OK;
}

static gp_status cpu_input_done(struct backend *b, gp_error *err)
{
    (void)b, (void)err;
    return GP_OK;
}

/* The channels and pixels of activation i (0 < i: the output of layer i - 1). */
static void act_shape(const struct backend *b, int i, int *c, int *hw)
{
    const struct layer_spec *l = &b->spec.l[i - 1];
    *c = l->cout, *hw = l->oh * l->ow;
}

/* The flattening linear layer i's input, NHWC, as the NCHW copy its GEMMs read. */
static const float *flatten_nchw(struct backend *b, int i)
{
    int c, hw;
    act_shape(b, i, &c, &hw);
    cpu_nhwc_to_nchw(b->flat, b->act[i], b->n, c, hw);
    count_passes(b, 1);
    return b->flat;
}

static void layer_forward(struct backend *b, int i)
{
    const struct layer_spec *l = &b->spec.l[i];
    const float *x = b->act[i], *w = b->params + l->w_off, *bias = b->params + l->b_off;
    float *y = b->act[i + 1];
    count_passes(b, 1); /* bias fill, bias+ReLU, ReLU or pooling */
    int cl = b->nhwc[i];
    switch (l->kind) {
    case LAYER_LINEAR:
        if (cl)
            x = flatten_nchw(b, i);
        if (b->fused[i + 1]) /* the fused ReLU's output */
            cpu_linear_relu_forward(b->act[i + 2], x, w, bias, b->n, l->cin, l->cout);
        else
            cpu_linear_forward(y, x, w, bias, b->n, l->cin, l->cout);
        break;
    case LAYER_CONV3:
        if (b->conv[i].relu) /* the fused ReLU's output */
            y = b->act[i + 2];
        if (cl)
            cpu_conv3_nhwc_forward(&b->conv[i], y, x, w, bias, b->n);
        else
            cpu_conv3_forward(&b->conv[i], y, x, w, bias, b->n);
        break;
    case LAYER_RELU:
        cpu_relu_forward(y, x, (size_t)b->n * model_act_size(&b->spec, i));
        break;
    case LAYER_POOL2:
        if (cl)
            cpu_maxpool2_nhwc_forward(y, b->arg[i], x, b->n, l->cin, l->h, l->w);
        else
            cpu_maxpool2_forward(y, b->arg[i], x, b->n, l->cin, l->h, l->w);
        break;
    }
}

/* Under --amp bf16, the output of a GEMM layer (linear, convolution) is a bf16 tensor. */
static void round_output(struct backend *b, int i)
{
    enum layer_kind k = b->spec.l[i].kind;
    if (k != LAYER_LINEAR && k != LAYER_CONV3)
        return;
    float *y = b->act[b->fused[i + 1] ? i + 2 : i + 1];
    cpu_round_bf16(y, (size_t)b->n * model_act_size(&b->spec, i + 1));
    count_passes(b, 1);
}

/* Layer i's forward (nothing for a ReLU fused into the convolution before it). */
static void forward_layer(struct backend *b, int i)
{
    if (b->fused[i])
        return;
    layer_forward(b, i);
    if (b->cfg.amp == AMP_BF16)
        round_output(b, i);
}

/* bf16 autocast around a pass (forward or backward), as torch.autocast("cpu") encloses it. */
static void autocast_begin(struct backend *b)
{
    if (b->cfg.amp == AMP_BF16)
        cpu_autocast_begin(&b->ac);
}

static gp_status autocast_end(struct backend *b, gp_error *err)
{
    if (b->cfg.amp != AMP_BF16)
        return GP_OK;
    cpu_autocast_end();
    GP_FAIL_IF(b->ac.failed, GP_ENOMEM, err, "out of memory for the bf16 GEMM inputs");
    return GP_OK;
}

static gp_status cpu_forward(struct backend *b, int train, gp_error *err)
{
    b->counting = train;
    count_passes(b, 1); /* the loss */
    unsigned fpenv = cpu_flush_denormals();
    autocast_begin(b);
    for (int i = 0; i < b->spec.n_layers; i++)
        forward_layer(b, i);
    gp_status rc = autocast_end(b, err); /* the loss runs in fp32, as on autocast's fp32 list */
    int correct = 0;
    b->stats.loss_sum += cpu_softmax_ce_forward(b->prob, &correct, b->act[b->spec.n_layers],
                                                b->labels, b->n, b->spec.classes);
    b->stats.correct += correct;
    b->stats.samples += b->n;
    cpu_restore_fpenv(fpenv);
    return rc;
}

/* A linear layer's backward; when it flattens NHWC activations its GEMMs read the NCHW copy
 * forward made and their dx is made NCHW, then laid out NHWC. */
static void linear_backward(struct backend *b, int i, float *dy, float *dx)
{
    const struct layer_spec *l = &b->spec.l[i];
    const float *x = b->nhwc[i] ? b->flat : b->act[i], *w = b->params + l->w_off;
    float *dw = b->grads + l->w_off, *db = b->grads + l->b_off;
    float *d = dx && b->nhwc[i] ? b->flat + (size_t)b->n * l->cin : dx;
    if (b->fused[i + 1]) /* dy is the fused ReLU's output gradient */
        cpu_linear_relu_backward(d, dw, db, dy, b->act[i + 2], x, w, b->n, l->cin, l->cout,
                                 b->grads_live);
    else
        cpu_linear_backward(d, dw, db, dy, x, w, b->n, l->cin, l->cout, b->grads_live);
    if (d != dx) {
        int c, hw;
        act_shape(b, i, &c, &hw);
        cpu_nchw_to_nhwc(dx, d, b->n, c, hw);
        count_passes(b, 1);
    }
}

/* dy -> dx for layer i (dx NULL for the first layer); dy is written where a ReLU fused into a
 * linear layer masks it in place. */
static void layer_backward(struct backend *b, int i, float *dy, float *dx)
{
    const struct layer_spec *l = &b->spec.l[i];
    const float *x = b->act[i], *w = b->params + l->w_off;
    float *dw = b->grads + l->w_off, *db = b->grads + l->b_off;
    /* a convolution's dy is the fused ReLU's output gradient, masked by its output act[i + 2] */
    const float *y = l->kind == LAYER_CONV3 && b->conv[i].relu ? b->act[i + 2] : NULL;
    int cl = b->nhwc[i];
    count_passes(b, l->kind == LAYER_POOL2 ? 2 * !!dx : l->kind == LAYER_RELU ? !!dx : 1);
    if (l->kind == LAYER_LINEAR)
        linear_backward(b, i, dy, dx);
    else if (l->kind == LAYER_CONV3 && cl)
        cpu_conv3_nhwc_backward(&b->conv[i], dx, dw, db, dy, y, x, w, b->n, b->grads_live);
    else if (l->kind == LAYER_CONV3)
        cpu_conv3_backward(&b->conv[i], dx, dw, db, dy, y, x, w, b->n, b->grads_live);
    else if (l->kind == LAYER_RELU && dx)
        cpu_relu_backward(dx, dy, b->act[i + 1], (size_t)b->n * model_act_size(&b->spec, i));
    else if (l->kind == LAYER_POOL2 && dx && cl)
        cpu_maxpool2_nhwc_backward(dx, dy, b->arg[i], b->n, l->cin, l->h, l->w);
    else if (l->kind == LAYER_POOL2 && dx)
        cpu_maxpool2_backward(dx, dy, b->arg[i], b->n, l->cin, l->h, l->w);
}

/* Whether layer i's backward reads an activation checkpointing dropped: a GEMM layer its input,
 * a ReLU its output, a convolution with a fused ReLU that ReLU's output; max-pool its argmax. */
static int reads_dropped(const struct backend *b, int i)
{
    switch (b->spec.l[i].kind) {
    case LAYER_LINEAR:
        return b->dropped[i] || (b->fused[i + 1] && b->dropped[i + 2]);
    case LAYER_CONV3:
        return b->dropped[i] || (b->conv[i].relu && b->dropped[i + 2]);
    case LAYER_RELU:
        return !b->fused[i] && b->dropped[i + 1];
    case LAYER_POOL2:
        return 0;
    }
    return 0;
}

/* Backward is about to enter, at its last layer e - 1, the segment [s, e) of layers between
 * two kept activations: recompute the dropped activations its backward reads. */
static void recompute_segment(struct backend *b, int e)
{
    if (!b->dropped[e - 1] || b->dropped[e])
        return;
    int s = e - 1, need = 0;
    while (s > 0 && b->dropped[s])
        s--;
    for (int i = s; i < e; i++)
        need |= reads_dropped(b, i);
    for (int i = s; need && i < e - 1; i++)
        forward_layer(b, i);
}

/* Under --amp bf16 the weight and bias gradients are the bf16 GEMM's fp32 sums, accumulated
 * into the fp32 master gradients (PyTorch rounds mm's output to bf16 before it casts it back). */
static gp_status cpu_backward(struct backend *b, gp_error *err)
{
    unsigned fpenv = cpu_flush_denormals();
    int cur = 0;
    float scale = 1.0f / ((float)b->n * (float)b->cfg.accumulate);
    b->counting = 1;
    count_passes(b, 1); /* the loss */
    cpu_softmax_ce_backward(b->dbuf[0], b->prob, b->labels, b->n, b->spec.classes, scale);
    autocast_begin(b);
    for (int i = b->spec.n_layers - 1; i >= 0; i--) {
        recompute_segment(b, i + 1);
        if (b->fused[i])
            continue;
        enum layer_kind k = b->spec.l[i].kind;
        if (b->cfg.amp == AMP_BF16 && (k == LAYER_LINEAR || k == LAYER_CONV3)) { /* a bf16 grad */
            cpu_round_bf16(b->dbuf[cur], (size_t)b->n * model_act_size(&b->spec, i + 1));
            count_passes(b, 1);
        }
        layer_backward(b, i, b->dbuf[cur], i > 0 ? b->dbuf[1 - cur] : NULL);
        cur = 1 - cur;
    }
    b->grads_live = 1; /* a further micro-batch adds to these */
    gp_status rc = autocast_end(b, err);
    cpu_restore_fpenv(fpenv);
    return rc;
}

static void optim_step(struct backend *b)
{
    size_t np = b->spec.n_params;
    if (b->cfg.optimizer == OPTIM_ADAM)
        cpu_adam_step(b->params, b->grads, b->opt, b->opt + np, np, b->cfg.lr, OPTIM_BETA1,
                      OPTIM_BETA2, OPTIM_EPS, b->t, 1.0f);
    else
        cpu_sgd_step(b->params, b->grads, b->opt, np, b->cfg.lr, OPTIM_MOMENTUM, 1.0f);
}

/* --fused: the update and zero_grad in one pass over the gradients. */
static void optim_step_zero(struct backend *b)
{
    size_t np = b->spec.n_params;
    if (b->cfg.optimizer == OPTIM_ADAM)
        cpu_adam_step_zero(b->params, b->grads, b->opt, b->opt + np, np, b->cfg.lr, OPTIM_BETA1,
                           OPTIM_BETA2, OPTIM_EPS, b->t, 1.0f);
    else
        cpu_sgd_step_zero(b->params, b->grads, b->opt, np, b->cfg.lr, OPTIM_MOMENTUM, 1.0f);
}

static gp_status cpu_step(struct backend *b, gp_error *err)
{
    (void)err;
    size_t np = b->spec.n_params;
    unsigned fpenv = cpu_flush_denormals();
    b->t++;
    int fuse = b->cfg.fused && !b->cfg.zero_grad_none; /* zero as the update reads them */
    if (fuse)
        optim_step_zero(b);
    else
        optim_step(b);
    b->passes += 1;
    if (b->cfg.zero_grad_none) /* zero_grad(set_to_none=True): no pass over the gradients */
        b->grads_live = 0;
    else if (!fuse) {
        memset(b->grads, 0, np * sizeof(float));
        b->passes += 1;
    }
    cpu_restore_fpenv(fpenv);
    return GP_OK;
}

static gp_status cpu_read_stats(struct backend *b, struct step_stats *out, gp_error *err)
{
    (void)err;
    *out = b->stats;
    b->stats.loss_sum = 0.0;
    b->stats.correct = 0;
    b->stats.samples = 0;
    return GP_OK;
}

static gp_status cpu_get_state(struct backend *b, struct backend_state *st, gp_error *err)
{
    (void)err;
    size_t np = b->spec.n_params;
    memcpy(st->params, b->params, np * sizeof(float));
    memcpy(st->opt, b->opt, np * (size_t)backend_opt_slots(b->cfg.optimizer) * sizeof(float));
    st->t = b->t;
    return GP_OK;
}

static gp_status cpu_set_state(struct backend *b, const struct backend_state *st, gp_error *err)
{
    (void)err;
    size_t np = b->spec.n_params;
    memcpy(b->params, st->params, np * sizeof(float));
    memcpy(b->opt, st->opt, np * (size_t)backend_opt_slots(b->cfg.optimizer) * sizeof(float));
    b->t = st->t;
    return GP_OK;
}

static long long cpu_activation_bytes(struct backend *b)
{
    return b->act_bytes;
}

static long long cpu_elementwise_passes(struct backend *b)
{
    return b->t > 0 ? b->passes / b->t : 0;
}

const struct backend_ops backend_cpu_ops = {
        .name = "cpu",
        .open = cpu_open,
        .host_alloc = host_alloc,
        .host_free = host_free,
        .set_input = cpu_set_input,
        .input_done = cpu_input_done,
        .forward = cpu_forward,
        .backward = cpu_backward,
        .step = cpu_step,
        .read_stats = cpu_read_stats,
        .get_state = cpu_get_state,
        .set_state = cpu_set_state,
        .close = cpu_close,
        .activation_bytes = cpu_activation_bytes,
        .elementwise_passes = cpu_elementwise_passes,
};
