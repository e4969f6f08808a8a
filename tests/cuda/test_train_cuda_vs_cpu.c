/* The CUDA kernels and the whole CUDA backend against the CPU reference: elementwise, pooling,
 * softmax cross-entropy, the optimizers, the loss scaler's state machine (growth, backoff, skip)
 * and a full forward/backward/step of both models in fp32, fp16 and bf16.
 * Exits 77 (skipped) without a usable GPU. */
#include "amp.h"
#include "backend.h"
#include "cpu/cpu_ops.h"
#include "cuda_kernels.h"
#include "gp_test.h"
#include "rng.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rs = 11;

static float *rnd(size_t n, float lo, float hi)
{
    float *a = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        a[i] = rng_uniform(&rs, lo, hi);
    return a;
}

/* Every CUDA call's result is checked: a failing one ends the test with its message. */
static void must(cudaError_t rc, const char *what)
{
    if (rc != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(rc));
        exit(1);
    }
}

static void *up(const void *h, size_t bytes)
{
    void *d = NULL;
    must(cudaMalloc(&d, bytes), "cudaMalloc");
    must(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    return d;
}

static void down(void *h, const void *d, size_t bytes)
{
    must(cudaGetLastError(), "a kernel launch");
    must(cudaDeviceSynchronize(), "a kernel"); /* reports a failed launch or kernel */
    must(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}

static void dfree(void *d)
{
    must(cudaFree(d), "cudaFree");
}

static double max_diff(const float *a, const float *b, size_t n)
{
    double w = 0;
    for (size_t i = 0; i < n; i++)
        w = fmax(w, fabs((double)a[i] - b[i]));
    return w;
}

static void test_relu_pool(void)
{
    int n = 2, c = 3, h = 6, w = 4;
    size_t nx = (size_t)n * c * h * w, ny = nx / 4;
    float *x = rnd(nx, -1, 1), *dy = rnd(ny, -1, 1), y[144], yg[144], dx[144], dxg[144];
    int32_t arg[36], argg[36];
    float *dxd = up(x, nx * 4), *xd = up(x, nx * 4), *yd = up(x, nx * 4), *dyd = up(dy, ny * 4);
    int32_t *ad = up(arg, sizeof(arg));
    cpu_maxpool2_forward(y, arg, x, n, c, h, w);
    cuk_maxpool2_fwd(CUK_F32, yd, ad, xd, n, c, h, w, 0);
    down(yg, yd, ny * 4);
    down(argg, ad, sizeof(argg));
    GP_ASSERT_NEAR(max_diff(y, yg, ny), 0, 0);
    GP_CHECK(memcmp(arg, argg, sizeof(arg)) == 0);
    cpu_maxpool2_backward(dx, dy, arg, n, c, h, w);
    cuk_maxpool2_bwd(CUK_F32, dxd, dyd, ad, n, c, h, w, 0);
    down(dxg, dxd, nx * 4);
    GP_ASSERT_NEAR(max_diff(dx, dxg, nx), 0, 0);
    cpu_relu_forward(y, x, nx);
    cuk_relu_fwd(CUK_F32, yd, xd, nx, 0);
    down(yg, yd, nx * 4);
    GP_ASSERT_NEAR(max_diff(y, yg, nx), 0, 0);
    free(x), free(dy), dfree(dxd), dfree(xd), dfree(yd), dfree(dyd), dfree(ad);
}

static void test_softmax_ce(void)
{
    int n = 37, k = 10;
    float *z = rnd((size_t)n * k, -4, 4), p[370], pg[370], dz[370], dzg[370];
    int32_t lab[37];
    for (int i = 0; i < n; i++)
        lab[i] = (i * 7) % k;
    int correct;
    double loss = cpu_softmax_ce_forward(p, &correct, z, lab, n, k);
    cpu_softmax_ce_backward(dz, p, lab, n, k, 0.5f / n);
    struct cuk_stats st = {0, 0, 0};
    struct cuk_amp amp = {0.5f, 0, 0, 1, 0, 0};
    float *zd = up(z, sizeof(p)), *pd = up(p, sizeof(p)), *dzd = up(p, sizeof(p));
    int32_t *ld = up(lab, sizeof(lab));
    struct cuk_stats *sd = up(&st, sizeof(st));
    struct cuk_amp *ampd = up(&amp, sizeof(amp));
    cuk_softmax_ce_fwd(CUK_F32, pd, zd, ld, n, k, sd, 0);
    cuk_softmax_ce_bwd(CUK_F32, dzd, pd, ld, n, k, 1.0f / n, ampd, 0);
    down(pg, pd, sizeof(pg));
    down(dzg, dzd, sizeof(dzg));
    down(&st, sd, sizeof(st));
    GP_CHECK(max_diff(p, pg, 370) < 1e-5);
    GP_CHECK(max_diff(dz, dzg, 370) < 1e-6);
    GP_ASSERT_NEAR(st.loss_sum, loss, 1e-3);
    GP_ASSERT_EQ_INT(st.correct, correct);
    GP_ASSERT_EQ_INT(st.samples, n);
    free(z), dfree(zd), dfree(pd), dfree(dzd), dfree(ld), dfree(sd), dfree(ampd);
}

/* The device scaler follows amp_scaler_update step by step, including skips. */
static void test_scaler_state_machine(void)
{
    struct amp_scaler ref;
    amp_scaler_init(&ref);
    struct cuk_amp a = {AMP_INIT_SCALE, 0, 0, 1, 0, 0};
    struct cuk_amp *ad = up(&a, sizeof(a));
    float g[4] = {1, 2, 3, 4};
    float *gd = up(g, sizeof(g));
    for (int step = 0; step < 4100; step++) {
        int bad = step == 10 || step == 11 || step == 3000;
        g[2] = bad ? INFINITY : 3.0f;
        must(cudaMemcpy(gd, g, sizeof(g), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
        cuk_unscale_check(gd, 4, ad, 0);
        cuk_amp_update(ad, 0);
        must(cudaGetLastError(), "a kernel launch");
        must(cudaMemset(&ad->found_inf, 0, sizeof(int)), "cudaMemset");
        amp_scaler_update(&ref, bad);
    }
    down(&a, ad, sizeof(a));
    GP_ASSERT_NEAR(a.scale, ref.scale, 0);
    GP_ASSERT_EQ_INT(a.growth_tracker, ref.growth_tracker);
    GP_ASSERT_EQ_INT(a.skipped, 3);
    GP_ASSERT_EQ_INT(a.t, 4100 - 3);
    dfree(ad), dfree(gd);
}

static void test_adam_skip(void)
{
    size_t n = 1000;
    float *p = rnd(n, -1, 1), *g = rnd(n, -1, 1), *m = calloc(n, 4), *v = calloc(n, 4);
    float *pd = up(p, n * 4), *gd = up(g, n * 4), *md = up(m, n * 4), *vd = up(v, n * 4);
    float *out = malloc(n * 4);
    struct cuk_amp a = {1.0f, 0, 1, 0, 0, 0}; /* found_inf set: the step is skipped */
    struct cuk_amp *ad = up(&a, sizeof(a));
    cuk_amp_update(ad, 0);
    cuk_adam(pd, NULL, CUK_F32, gd, md, vd, n, 1e-2f, 0.9f, 0.999f, 1e-8f, ad, 0, 0);
    down(out, pd, n * 4);
    GP_ASSERT_NEAR(max_diff(out, p, n), 0, 0);
    a.found_inf = 0;
    must(cudaMemcpy(ad, &a, sizeof(a), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    cuk_amp_update(ad, 0);
    cuk_adam(pd, NULL, CUK_F32, gd, md, vd, n, 1e-2f, 0.9f, 0.999f, 1e-8f, ad, 0, 0);
    cpu_adam_step(p, g, m, v, n, 1e-2f, 0.9f, 0.999f, 1e-8f, 1, 1.0f);
    down(out, pd, n * 4);
    GP_CHECK(max_diff(out, p, n) < 1e-6);
    free(p), free(g), free(m), free(v), free(out);
    dfree(pd), dfree(gd), dfree(md), dfree(vd), dfree(ad);
}

/* A training step on both backends from the same weights and micro-batches. */
struct run_case {
    const char *what;
    enum model_kind kind;
    enum amp_mode amp;
    enum optim_kind optimizer;
    int max_batch;
    int micro[3]; /* micro-batch sizes, 0-terminated: accumulate = their count */
    int pin, non_blocking, cudnn_benchmark;
    int via_module; /* the CUDA backend as the trainer loads it (cuda_module.c) */
    double tol;     /* max |weight difference| after the step */
};

/* A failed backend call fails the case with the backend's message. */
static int ok(gp_status rc, const gp_error *err, const char *what, const char *call)
{
    if (rc == GP_OK)
        return 1;
    fprintf(stderr, "%s: %s failed (%d): %s\n", what, call, (int)rc, err->msg);
    return 0;
}

#define CALL(expr, name)                                                                           \
    do {                                                                                           \
        if (!ok((expr), &err, c->what, name))                                                      \
            goto out;                                                                              \
    } while (0)

/* Adam moves every weight by lr on its first step whatever the gradient's size, so a gradient
 * that fp16/bf16 rounds to the other sign moves a weight by up to 2 lr: all weights must be within
 * 2 lr + tol, and 99% within tol (97% in bf16, 8 significant bits). SGD: every weight within tol.
 */
static int weights_close(const struct run_case *c, const float *a, const float *b, size_t n,
                         float lr)
{
    size_t far = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        worst = fmax(worst, d);
        far += d > c->tol;
    }
    fprintf(stderr, "%s: max weight diff %.3g, %zu of %zu beyond %.3g\n", c->what, worst, far, n,
            c->tol);
    if (c->optimizer == OPTIM_ADAM)
        return worst <= 2 * lr + c->tol && far <= n / (c->amp == AMP_BF16 ? 33 : 100);
    return far == 0;
}

static int compare_backends(const struct run_case *c)
{
    struct model_spec m;
    model_spec_init(&m, c->kind, 28, 28);
    int nb = c->max_batch, acc = 0, total = 0, result = 0;
    while (acc < 3 && c->micro[acc])
        total += c->micro[acc++];
    float lr = c->optimizer == OPTIM_ADAM ? 1e-3f : 0.1f;
    struct backend_config gc = {.spec = &m,
                                .max_batch = nb,
                                .optimizer = c->optimizer,
                                .lr = lr,
                                .accumulate = acc,
                                .amp = c->amp,
                                .pin_memory = c->pin,
                                .non_blocking = c->non_blocking,
                                .cudnn_benchmark = c->cudnn_benchmark};
    struct backend_config cc = gc;
    cc.amp = AMP_OFF;
    const struct backend_ops *gpu = c->via_module ? train_cuda_ops() : &backend_cuda_ops;
    const struct backend_ops *ops[2] = {gpu, &backend_cpu_ops};
    struct backend *bs[2] = {NULL, NULL};
    gp_error err = {0};
    char name[128];
    long long mem;
    size_t slots = (size_t)m.n_params * backend_opt_slots(c->optimizer);
    float *params = calloc(m.n_params, 4), *opt = calloc(slots, 4);
    float *pg = calloc(m.n_params, 4), *og = calloc(slots, 4);
    float *pc = calloc(m.n_params, 4), *oc = calloc(slots, 4);
    char *slot = NULL;
    struct step_stats s[2];
    if (!gpu) {
        fprintf(stderr, "%s: the CUDA module did not load: %s\n", c->what, train_cuda_why());
        goto out;
    }
    model_init_params(&m, params, 3);
    struct backend_state st = {params, opt, 0}, sg = {pg, og, 0}, sc = {pc, oc, 0};
    CALL(gpu->open(&bs[0], &gc, name, sizeof(name), &mem, &err), "CUDA open");
    CALL(backend_cpu_ops.open(&bs[1], &cc, name, sizeof(name), &mem, &err), "CPU open");
    for (int k = 0; k < 2; k++)
        CALL(ops[k]->set_state(bs[k], &st, &err), "set_state");
    /* a loader slot: x for max_batch samples, then the labels (cuda_set_input finds them there) */
    size_t xbytes = (size_t)nb * 784 * 4;
    slot = gpu->host_alloc(xbytes + nb * 4, bs[0]);
    if (!slot) {
        fprintf(stderr, "%s: host_alloc failed\n", c->what);
        goto out;
    }
    struct batch b = {(float *)slot, (int32_t *)(slot + xbytes), NULL, 0, 0, 0, 0, xbytes + nb * 4};
    for (int i = 0; i < acc; i++) {
        b.n = c->micro[i];
        b.step = b.seq = i;
        for (int j = 0; j < b.n * 784; j++)
            b.x[j] = rng_uniform(&rs, -1, 1);
        for (int j = 0; j < b.n; j++)
            b.y[j] = (int32_t)rng_below(&rs, 10);
        for (int k = 0; k < 2; k++) {
            CALL(ops[k]->set_input(bs[k], &b, &err), "set_input");
            CALL(ops[k]->forward(bs[k], 1, &err), "forward");
            CALL(ops[k]->backward(bs[k], &err), "backward");
            CALL(ops[k]->input_done(bs[k], &err), "input_done");
        }
    }
    for (int k = 0; k < 2; k++) {
        CALL(ops[k]->step(bs[k], &err), "step");
        CALL(ops[k]->read_stats(bs[k], &s[k], &err), "read_stats");
    }
    CALL(gpu->get_state(bs[0], &sg, &err), "CUDA get_state");
    CALL(backend_cpu_ops.get_state(bs[1], &sc, &err), "CPU get_state");
    double dl = fabs(s[0].loss_sum - s[1].loss_sum) / total;
    fprintf(stderr, "%s: loss diff per sample %.3g, steps %lld/%lld, scale %g\n", c->what, dl, sg.t,
            sc.t, s[0].scale);
    /* near-tied logits may rank differently in fp16/bf16: compare correct counts in fp32 only */
    int same_correct = c->amp != AMP_OFF || s[0].correct == s[1].correct;
    /* per-sample loss: as before for fp32; fp16/bf16 logits are good to ~1e-3/1e-2 relative */
    double loss_tol = c->amp == AMP_OFF ? 50 * c->tol : c->amp == AMP_FP16 ? 0.1 : 0.5;
    result = weights_close(c, pg, pc, m.n_params, lr) && dl <= loss_tol && s[0].samples == total &&
             s[1].samples == total && same_correct && sg.t == sc.t && s[0].skipped == 0;
out:
    if (slot)
        gpu->host_free(slot, bs[0]);
    for (int k = 0; k < 2; k++)
        if (bs[k])
            ops[k]->close(bs[k]);
    free(params), free(opt), free(pg), free(og), free(pc), free(oc);
    return result;
}

#define PINNED            1, 1
#define PAGEABLE_BLOCKING 0, 0

static const struct run_case cases[] = {
        {"mlp fp32", MODEL_MLP, AMP_OFF, OPTIM_SGD, 16, {16}, PINNED, 0, 0, 1e-4},
        {"cnn fp32", MODEL_CNN, AMP_OFF, OPTIM_SGD, 16, {16}, PINNED, 0, 0, 1e-3},
        {"mlp fp16", MODEL_MLP, AMP_FP16, OPTIM_SGD, 16, {16}, PINNED, 0, 0, 2e-3},
        {"mlp bf16", MODEL_MLP, AMP_BF16, OPTIM_SGD, 16, {16}, PINNED, 0, 0, 1e-2},
        {"cnn fp16", MODEL_CNN, AMP_FP16, OPTIM_SGD, 16, {16}, PINNED, 0, 0, 2e-3},
        {"cnn bf16", MODEL_CNN, AMP_BF16, OPTIM_SGD, 16, {16}, PINNED, 0, 0, 1e-2},
        /* the last batch of an epoch: 11 samples in slots sized for 16 */
        {"mlp partial batch, pageable blocking copies",
         MODEL_MLP,
         AMP_OFF,
         OPTIM_SGD,
         16,
         {11},
         PAGEABLE_BLOCKING,
         0,
         0,
         1e-4},
        /* --accumulate 3 ending on a partial micro-batch */
        {"mlp accumulate 3", MODEL_MLP, AMP_OFF, OPTIM_SGD, 16, {16, 16, 11}, PINNED, 0, 0, 1e-4},
        {"mlp adam fp16", MODEL_MLP, AMP_FP16, OPTIM_ADAM, 16, {16}, PINNED, 0, 0, 1e-5},
        {"mlp adam bf16 accumulate 2",
         MODEL_MLP,
         AMP_BF16,
         OPTIM_ADAM,
         16,
         {16, 9},
         PINNED,
         0,
         0,
         1e-5},
        {"cnn cudnn-benchmark accumulate 2, pageable blocking copies",
         MODEL_CNN,
         AMP_OFF,
         OPTIM_SGD,
         16,
         {16, 5},
         PAGEABLE_BLOCKING,
         1,
         0,
         1e-3},
        {"cnn adam fp16 cudnn-benchmark, through the module",
         MODEL_CNN,
         AMP_FP16,
         OPTIM_ADAM,
         16,
         {16},
         PINNED,
         1,
         1,
         1e-5},
};

static void test_backends(void)
{
    int failed = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (!compare_backends(&cases[i])) {
            fprintf(stderr, "FAIL case: %s\n", cases[i].what);
            failed++;
        }
    GP_ASSERT_EQ_INT(failed, 0);
}

/* The trainer's own way in: cuda_module.c loads lib/libgp_train_cuda.so and agrees that the
 * device is usable. */
static void test_module(void)
{
    GP_CHECK(train_cuda_ops() != NULL);
    GP_CHECK(train_cuda_present());
    GP_CHECK(train_cuda_why() == NULL);
    GP_ASSERT_STR_EQ(train_cuda_ops()->name, backend_cuda_ops.name);
}

int main(void)
{
    /* the module the trainer would load, from this build */
    setenv("GP_TRAIN_CUDA_LIB", GP_BUILD_DIR "/lib/libgp_train_cuda.so", 0);
    if (!backend_cuda_present()) {
        int count = 0;
        cudaError_t rc = cudaGetDeviceCount(&count);
        printf("no usable CUDA device (%s): skipped\n",
               rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
        return GP_TEST_SKIP;
    }
    GP_RUN(test_relu_pool);
    GP_RUN(test_softmax_ce);
    GP_RUN(test_scaler_state_machine);
    GP_RUN(test_adam_skip);
    GP_RUN(test_module);
    GP_RUN(test_backends);
    return gp_test_summary();
}
