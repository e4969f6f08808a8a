/* The CUDA backend: one device arena (its activations shared by the dropped ones under
 * --checkpoint-activations), a compute and a copy stream, pinned or pageable loader slots,
 * blocking (copy + stream sync, PyTorch's .to(device)) or non-blocking (copy stream + events)
 * input copies, and state transfer for checkpoints. */
#include "cuda_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Oldest compute capability CUDA 13 (and so this build) supports: Turing, 7.5. */
#define MIN_CC 75

static char absent_why[256];

int backend_cuda_present(void)
{
    int n = 0, major = 0, minor = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n == 0) {
        snprintf(absent_why, sizeof(absent_why), "no usable CUDA device (%s)",
                 rc != cudaSuccess ? cudaGetErrorString(rc) : "none found");
        return 0;
    }
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    if (major * 10 + minor < MIN_CC) {
        snprintf(absent_why, sizeof(absent_why),
                 "GPU 0 has compute capability %d.%d; CUDA 13 and this build need 7.5 or newer",
                 major, minor);
        return 0;
    }
    if (!cuk_have_image()) {
        snprintf(absent_why, sizeof(absent_why),
                 "this build has no kernels for GPU 0 (compute capability %d.%d; built for %s): "
                 "rebuild with -DCMAKE_CUDA_ARCHITECTURES=native",
                 major, minor, GP_CUDA_ARCHS);
        return 0;
    }
    return 1;
}

const char *backend_cuda_absent_why(void)
{
    return absent_why;
}

static void *host_alloc(size_t bytes, void *ud)
{
    struct backend *b = ud;
    void *p = NULL;
    if (!b->cfg.pin_memory)
        return malloc(bytes);
    return cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess ? p : NULL;
}

static void host_free(void *p, void *ud)
{
    struct backend *b = ud;
    if (b->cfg.pin_memory)
        cudaFreeHost(p);
    else
        free(p);
}

/* Bump allocation from the arena; with base NULL only the size is counted. */
static void *take(char *base, size_t *used, size_t bytes)
{
    void *p = base ? base + *used : NULL;
    *used += (bytes + 255) & ~(size_t)255;
    return p;
}

static size_t input_bytes(const struct backend *b)
{
    return (size_t)b->cfg.max_batch * (model_act_size(&b->spec, 0) * sizeof(float) + 4);
}

/* Take an activation-side buffer (activations, argmax, gradients) and count its bytes. */
static void *take_act(struct backend *b, char *base, size_t *used, size_t bytes)
{
    size_t before = *used;
    void *p = take(base, used, bytes);
    b->act_bytes += (long long)(*used - before);
    return p;
}

/* act[i] each its own buffer; under --checkpoint-activations the dropped ones of a segment lie
 * side by side in one scratch that every segment reuses (one is live at a time, as on the CPU). */
static void layout_acts(struct backend *b, char *base, size_t *used)
{
    const struct model_spec *m = &b->spec;
    size_t nb = (size_t)b->cfg.max_batch, seg = 0, most = 0, at[MODEL_MAX_LAYERS + 1];
    for (int i = 0; i <= m->n_layers; i++) {
        size_t len = (nb * model_act_size(m, i) * b->es + 255) & ~(size_t)255;
        b->dropped[i] = b->cfg.checkpoint_activations && !model_ckpt_kept(m, i);
        at[i] = b->dropped[i] ? seg : 0;
        seg = b->dropped[i] ? seg + len : 0;
        most = seg > most ? seg : most;
    }
    char *scratch = most ? take_act(b, base, used, most) : NULL;
    for (int i = 0; i <= m->n_layers; i++)
        b->act[i] = !b->dropped[i] ? take_act(b, base, used, nb * model_act_size(m, i) * b->es)
                    : scratch      ? scratch + at[i]
                                   : NULL;
}

/* Lay out every device buffer in `base` (NULL: just count). @return the bytes needed. */
static size_t layout(struct backend *b, char *base)
{
    const struct model_spec *m = &b->spec;
    size_t used = 0, nb = (size_t)b->cfg.max_batch, np = m->n_params, filt = 0;
    b->act_bytes = 0;
    b->params = take(base, &used, np * 4);
    b->grads = take(base, &used, np * 4);
    b->opt = take(base, &used, np * 4 * (size_t)backend_opt_slots(b->cfg.optimizer));
    b->wlp = b->dt == CUK_F32 ? b->params : take(base, &used, np * b->es);
    layout_acts(b, base, &used);
    for (int i = 0; i < m->n_layers; i++) {
        if (m->l[i].kind == LAYER_POOL2)
            b->arg[i] = take_act(b, base, &used, nb * model_act_size(m, i + 1) * 4);
        if (m->l[i].kind == LAYER_CONV3 && m->l[i].w_len > filt)
            filt = m->l[i].w_len;
    }
    b->dbuf[0] = take_act(b, base, &used, nb * model_max_act(m) * b->es);
    b->dbuf[1] = take_act(b, base, &used, nb * model_max_act(m) * b->es);
    if (b->cfg.channels_last && m->kind == MODEL_CNN) {
        b->flat = take_act(b, base, &used, nb * model_max_act(m) * b->es);
        b->flat_grad = take_act(b, base, &used, nb * model_max_act(m) * b->es);
    }
    b->dw_tmp = take(base, &used, filt * 4);
    if (b->cfg.channels_last && m->kind == MODEL_CNN) {
        b->w_krsc = take(base, &used, filt * 4);
        b->dw_krsc = take(base, &used, filt * 4);
    }
    b->prob = take(base, &used, nb * (size_t)m->classes * 4);
    b->stats = take(base, &used, sizeof(struct cuk_stats));
    b->amp = take(base, &used, sizeof(struct cuk_amp));
    b->in[0].buf = take(base, &used, input_bytes(b));
    b->in[1].buf = take(base, &used, input_bytes(b));
    b->workspace = b->spec.kind == MODEL_CNN ? take(base, &used, CUDA_WORKSPACE_BYTES) : NULL;
    b->lt_workspace = take(base, &used, CUDA_LT_WORKSPACE_BYTES);
    b->blas_workspace = take(base, &used, CUDA_BLAS_WORKSPACE_BYTES);
    return used;
}

static gp_status open_device(struct backend *b, gp_error *err)
{
    size_t bytes = layout(b, NULL);
    CU_TRY(cudaMalloc((void **)&b->arena, bytes), err);
    layout(b, b->arena);
    CU_TRY(cudaStreamCreateWithFlags(&b->compute, cudaStreamNonBlocking), err);
    CU_TRY(cudaStreamCreateWithFlags(&b->copy, cudaStreamNonBlocking), err);
    /* Non-blocking streams do not wait for the legacy default stream: set memory up on
     * `compute` itself, so the first step cannot overtake it. */
    CU_TRY(cudaMemsetAsync(b->arena, 0, bytes, b->compute), err);
    for (int i = 0; i < 2; i++) {
        CU_TRY(cudaEventCreateWithFlags(&b->in[i].h2d_done, cudaEventDisableTiming), err);
        CU_TRY(cudaEventCreateWithFlags(&b->in[i].consumed, cudaEventDisableTiming), err);
    }
    CUBLAS_TRY(cublasCreate(&b->blas), err);
    CUBLAS_TRY(cublasSetStream(b->blas, b->compute), err);
    CUBLAS_TRY(cublasSetWorkspace(b->blas, b->blas_workspace, CUDA_BLAS_WORKSPACE_BYTES), err);
    GP_TRY(cuda_lt_open(b, err));
    struct cuk_amp a = {
            b->cfg.amp == AMP_FP16 ? AMP_INIT_SCALE : 1.0f, 0, 0, b->cfg.amp == AMP_FP16, 0, 0};
    CU_TRY(cudaMemcpyAsync(b->amp, &a, sizeof(a), cudaMemcpyHostToDevice, b->compute), err);
    CU_TRY(cudaStreamSynchronize(b->compute), err); /* `a` is on this stack frame */
    if (b->spec.kind == MODEL_CNN)
        GP_TRY(cuda_conv_open(b, err));
    return GP_OK;
}

static void cuda_close(struct backend *b)
{
    if (!b)
        return;
    if (b->compute)
        cudaStreamSynchronize(b->compute);
    cuda_graphs_release(b);
    cuda_conv_close(b);
    cuda_lt_close(b);
    if (b->blas)
        cublasDestroy(b->blas);
    for (int i = 0; i < 2; i++) {
        if (b->in[i].h2d_done)
            cudaEventDestroy(b->in[i].h2d_done);
        if (b->in[i].consumed)
            cudaEventDestroy(b->in[i].consumed);
    }
    if (b->copy)
        cudaStreamDestroy(b->copy);
    if (b->compute)
        cudaStreamDestroy(b->compute);
    cudaFree(b->arena);
    free(b);
}

static gp_status cuda_open(struct backend **out, const struct backend_config *cfg,
                           char *device_name, size_t name_cap, long long *device_memory,
                           gp_error *err)
{
    struct cudaDeviceProp prop;
    *out = NULL;
    CU_TRY(cudaSetDevice(0), err);
    CU_TRY(cudaGetDeviceProperties(&prop, 0), err);
    const char *refused = amp_device_refusal(cfg->amp, prop.major, prop.minor);
    GP_FAIL_IF(refused, GP_EINVAL, err, "%s: GPU 0 (%s) has compute capability %d.%d", refused,
               prop.name, prop.major, prop.minor);
    snprintf(device_name, name_cap, "%s", prop.name);
    *device_memory = (long long)prop.totalGlobalMem;
    struct backend *b = calloc(1, sizeof(*b));
    if (!b)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    b->cfg = *cfg;
    b->spec = *cfg->spec;
    b->cfg.spec = &b->spec;
    b->dt = cfg->amp == AMP_FP16 ? CUK_F16 : cfg->amp == AMP_BF16 ? CUK_BF16 : CUK_F32;
    b->es = cuk_dtype_size(b->dt);
    b->grads_live = !cfg->zero_grad_none;
    gp_status rc = open_device(b, err);
    if (rc != GP_OK) {
        cuda_close(b);
        return rc;
    }
    *out = b;
    return GP_OK;
}

static gp_status cuda_set_input(struct backend *b, const struct batch *batch, gp_error *err)
{
    GP_FAIL_IF(batch->n > b->cfg.max_batch, GP_EINVAL, err, "batch of %d exceeds %d", batch->n,
               b->cfg.max_batch);
    struct dev_input *in = &b->in[b->n_inputs++ % 2];
    if (b->cfg.non_blocking) {
        CU_TRY(cudaStreamWaitEvent(b->copy, in->consumed, 0), err);
        CU_TRY(cudaMemcpyAsync(in->buf, batch->x, batch->bytes, cudaMemcpyHostToDevice, b->copy),
               err);
        CU_TRY(cudaEventRecord(in->h2d_done, b->copy), err);
        CU_TRY(cudaStreamWaitEvent(b->compute, in->h2d_done, 0), err);
    } else { /* PyTorch's blocking .to(device): copy on the compute stream, then wait for it */
        CU_TRY(cudaMemcpyAsync(in->buf, batch->x, batch->bytes, cudaMemcpyHostToDevice, b->compute),
               err);
        CU_TRY(cudaStreamSynchronize(b->compute), err);
    }
    size_t area = model_act_size(&b->spec, 0);
    b->n = batch->n;
    b->labels = (int32_t *)(in->buf + (size_t)b->cfg.max_batch * area * sizeof(float));
    b->x_in = in->buf;
    if (b->dt != CUK_F32) {
        cuk_cast_from_f32(b->dt, b->act[0], (const float *)in->buf, (size_t)b->n * area,
                          b->compute);
        b->x_in = b->act[0];
    }
    return GP_OK;
}

static gp_status cuda_input_done(struct backend *b, gp_error *err)
{
    if (!b->cfg.non_blocking)
        return GP_OK;
    struct dev_input *in = &b->in[(b->n_inputs - 1) % 2];
    CU_TRY(cudaEventRecord(in->consumed, b->compute), err);
    CU_TRY(cudaEventSynchronize(in->h2d_done), err);
    return GP_OK;
}

static gp_status cuda_read_stats(struct backend *b, struct step_stats *out, gp_error *err)
{
    struct cuk_stats st;
    struct cuk_amp a;
    CU_TRY(cudaMemcpyAsync(&st, b->stats, sizeof(st), cudaMemcpyDeviceToHost, b->compute), err);
    CU_TRY(cudaMemcpyAsync(&a, b->amp, sizeof(a), cudaMemcpyDeviceToHost, b->compute), err);
    CU_TRY(cudaMemsetAsync(b->stats, 0, sizeof(st), b->compute), err);
    CU_TRY(cudaStreamSynchronize(b->compute), err);
    out->loss_sum = st.loss_sum;
    out->correct = (long long)st.correct;
    out->samples = (long long)st.samples;
    out->skipped = a.skipped;
    out->scale = a.scale;
    return GP_OK;
}

static gp_status cuda_get_state(struct backend *b, struct backend_state *st, gp_error *err)
{
    size_t np = b->spec.n_params, nopt = np * (size_t)backend_opt_slots(b->cfg.optimizer);
    struct cuk_amp a;
    CU_TRY(cudaStreamSynchronize(b->compute), err);
    CU_TRY(cudaMemcpy(st->params, b->params, np * 4, cudaMemcpyDeviceToHost), err);
    CU_TRY(cudaMemcpy(st->opt, b->opt, nopt * 4, cudaMemcpyDeviceToHost), err);
    CU_TRY(cudaMemcpy(&a, b->amp, sizeof(a), cudaMemcpyDeviceToHost), err);
    st->t = a.t;
    return GP_OK;
}

static gp_status cuda_set_state(struct backend *b, const struct backend_state *st, gp_error *err)
{
    size_t np = b->spec.n_params, nopt = np * (size_t)backend_opt_slots(b->cfg.optimizer);
    struct cuk_amp a;
    /* All on `compute`: a pageable cudaMemcpy on the legacy stream may return before its DMA
     * ends, and the non-blocking compute stream would not wait for it. */
    cudaStream_t s = b->compute;
    CU_TRY(cudaMemcpyAsync(b->params, st->params, np * 4, cudaMemcpyHostToDevice, s), err);
    CU_TRY(cudaMemcpyAsync(b->opt, st->opt, nopt * 4, cudaMemcpyHostToDevice, s), err);
    CU_TRY(cudaMemcpyAsync(&a, b->amp, sizeof(a), cudaMemcpyDeviceToHost, s), err);
    CU_TRY(cudaStreamSynchronize(s), err);
    a.t = st->t;
    CU_TRY(cudaMemcpyAsync(b->amp, &a, sizeof(a), cudaMemcpyHostToDevice, s), err);
    if (b->dt != CUK_F32)
        cuk_cast_from_f32(b->dt, b->wlp, b->params, np, b->compute);
    CU_TRY(cudaGetLastError(), err);
    CU_TRY(cudaStreamSynchronize(b->compute), err);
    return GP_OK;
}

/* The convolutions' algorithms for batches of n, before training: no search in a step. */
static gp_status cuda_prepare_batch(struct backend *b, int n, int train, gp_error *err)
{
    if (b->spec.kind != MODEL_CNN || n <= 0 || n > b->cfg.max_batch)
        return GP_OK;
    b->n = n;
    GP_TRY(cuda_conv_prepare(b, train, err));
    CU_TRY(cudaStreamSynchronize(b->compute), err);
    return GP_OK;
}

static long long cuda_activation_bytes(struct backend *b)
{
    return b->act_bytes;
}

const struct backend_ops backend_cuda_ops = {
        .name = "cuda",
        .open = cuda_open,
        .host_alloc = host_alloc,
        .host_free = host_free,
        .set_input = cuda_set_input,
        .input_done = cuda_input_done,
        .forward = cuda_forward,
        .backward = cuda_backward,
        .step = cuda_step,
        .read_stats = cuda_read_stats,
        .get_state = cuda_get_state,
        .set_state = cuda_set_state,
        .close = cuda_close,
        .activation_bytes = cuda_activation_bytes,
        .prepare_batch = cuda_prepare_batch,
        .graph_step = cuda_graph_step,
};
