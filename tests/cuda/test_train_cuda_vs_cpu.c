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
    must(cudaDeviceSynchronize(), "a kernel"); /* reports a failed launch or kernel */
    must(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
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
    free(x), free(dy), cudaFree(dxd), cudaFree(xd), cudaFree(yd), cudaFree(dyd), cudaFree(ad);
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
    free(z), cudaFree(zd), cudaFree(pd), cudaFree(dzd), cudaFree(ld), cudaFree(sd), cudaFree(ampd);
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
        cudaMemcpy(gd, g, sizeof(g), cudaMemcpyHostToDevice);
        cuk_unscale_check(gd, 4, ad, 0);
        cuk_amp_update(ad, 0);
        cudaMemset(&ad->found_inf, 0, sizeof(int));
        amp_scaler_update(&ref, bad);
    }
    down(&a, ad, sizeof(a));
    GP_ASSERT_NEAR(a.scale, ref.scale, 0);
    GP_ASSERT_EQ_INT(a.growth_tracker, ref.growth_tracker);
    GP_ASSERT_EQ_INT(a.skipped, 3);
    GP_ASSERT_EQ_INT(a.t, 4100 - 3);
    cudaFree(ad), cudaFree(gd);
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
    cuk_adam(pd, NULL, CUK_F32, gd, md, vd, n, 1e-2f, 0.9f, 0.999f, 1e-8f, ad, 0);
    down(out, pd, n * 4);
    GP_ASSERT_NEAR(max_diff(out, p, n), 0, 0);
    a.found_inf = 0;
    cudaMemcpy(ad, &a, sizeof(a), cudaMemcpyHostToDevice);
    cuk_amp_update(ad, 0);
    cuk_adam(pd, NULL, CUK_F32, gd, md, vd, n, 1e-2f, 0.9f, 0.999f, 1e-8f, ad, 0);
    cpu_adam_step(p, g, m, v, n, 1e-2f, 0.9f, 0.999f, 1e-8f, 1, 1.0f);
    down(out, pd, n * 4);
    GP_CHECK(max_diff(out, p, n) < 1e-6);
    free(p), free(g), free(m), free(v), free(out);
    cudaFree(pd), cudaFree(gd), cudaFree(md), cudaFree(vd), cudaFree(ad);
}

/* One forward/backward/step on both backends from the same weights and batch. */
static int compare_backends(enum model_kind kind, enum amp_mode amp, double tol)
{
    struct model_spec m;
    model_spec_init(&m, kind, 28, 28);
    int nb = 16;
    struct backend_config bc = {&m, nb, OPTIM_SGD, 0.1f, 1, amp, 1, 1, 0};
    struct backend_config cc = bc;
    cc.amp = AMP_OFF;
    struct backend *gb, *cb;
    char name[128];
    long long mem;
    if (backend_cuda_ops.open(&gb, &bc, name, sizeof(name), &mem, NULL) != GP_OK)
        return 1;
    backend_cpu_ops.open(&cb, &cc, name, sizeof(name), &mem, NULL);
    float *params = calloc(m.n_params, 4), *opt = calloc(m.n_params, 4);
    float *pg = calloc(m.n_params, 4), *og = calloc(m.n_params, 4);
    model_init_params(&m, params, 3);
    struct backend_state st = {params, opt, 0}, sg = {pg, og, 0};
    backend_cuda_ops.set_state(gb, &st, NULL);
    backend_cpu_ops.set_state(cb, &st, NULL);
    size_t xbytes = (size_t)nb * 784 * 4;
    char *slot = backend_cuda_ops.host_alloc(xbytes + nb * 4, gb);
    struct batch b = {(float *)slot,  (int32_t *)(slot + xbytes), NULL, nb, 0, 0, 0,
                      xbytes + nb * 4};
    for (int i = 0; i < nb * 784; i++)
        b.x[i] = rng_uniform(&rs, -1, 1);
    for (int i = 0; i < nb; i++)
        b.y[i] = i % 10;
    const struct backend_ops *ops[2] = {&backend_cuda_ops, &backend_cpu_ops};
    struct backend *bs[2] = {gb, cb};
    struct step_stats s[2];
    for (int k = 0; k < 2; k++) {
        ops[k]->set_input(bs[k], &b, NULL);
        ops[k]->forward(bs[k], 1, NULL);
        ops[k]->backward(bs[k], NULL);
        ops[k]->input_done(bs[k], NULL);
        ops[k]->step(bs[k], NULL);
        ops[k]->read_stats(bs[k], &s[k], NULL);
    }
    backend_cuda_ops.get_state(gb, &sg, NULL);
    backend_cpu_ops.get_state(cb, &st, NULL);
    double d = max_diff(pg, params, m.n_params), dl = fabs(s[0].loss_sum - s[1].loss_sum) / nb;
    fprintf(stderr, "model %d amp %d: max weight diff %.3g, loss diff %.3g\n", kind, amp, d, dl);
    backend_cuda_ops.host_free(slot, gb);
    backend_cuda_ops.close(gb);
    backend_cpu_ops.close(cb);
    free(params), free(opt), free(pg), free(og);
    /* near-tied logits may rank differently in fp16/bf16: compare correct counts in fp32 only */
    int same_correct = amp != AMP_OFF || s[0].correct == s[1].correct;
    return d <= tol && dl <= 50 * tol && s[0].samples == nb && same_correct;
}

static void test_backends_fp32(void)
{
    GP_CHECK(compare_backends(MODEL_MLP, AMP_OFF, 1e-4));
    GP_CHECK(compare_backends(MODEL_CNN, AMP_OFF, 1e-3));
}

static void test_backends_low_precision(void)
{
    GP_CHECK(compare_backends(MODEL_MLP, AMP_FP16, 2e-3));
    GP_CHECK(compare_backends(MODEL_MLP, AMP_BF16, 1e-2));
    GP_CHECK(compare_backends(MODEL_CNN, AMP_FP16, 2e-3));
    GP_CHECK(compare_backends(MODEL_CNN, AMP_BF16, 1e-2));
}

int main(void)
{
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
    GP_RUN(test_backends_fp32);
    GP_RUN(test_backends_low_precision);
    return gp_test_summary();
}
