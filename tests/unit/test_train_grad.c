/* Finite-difference gradient checks of every CPU layer (linear, conv3x3, ReLU, max-pool,
 * softmax cross-entropy) and the optimizers' update rules. Loss = sum(y * r) for a fixed
 * random r, so dL/dy = r; central differences in double around float kernels. */
#include "backend.h"
#include "cpu/cpu_ops.h"
#include "gp_test.h"
#include "rng.h"

#include <stdlib.h>
#include <string.h>

#define H 1e-2f

static uint64_t seed_state = 7;

static void fill(float *a, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        a[i] = rng_uniform(&seed_state, lo, hi);
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* A forward pass whose loss is dot(y, r); `v` is the tensor being perturbed. */
typedef double (*loss_fn)(void *ctx);

/* Compare grad[i] with (L(v+h) - L(v-h)) / 2h for every element of v. @return worst error. */
static double fd_check(loss_fn f, void *ctx, float *v, const float *grad, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        float keep = v[i];
        v[i] = keep + H;
        double up = f(ctx);
        v[i] = keep - H;
        double down = f(ctx);
        v[i] = keep;
        double num = (up - down) / (2.0 * H), err = fabs(num - grad[i]) / (1.0 + fabs(num));
        worst = err > worst ? err : worst;
    }
    return worst;
}

struct lin {
    int n, cin, cout;
    float *x, *w, *b, *y, *r;
};

static double lin_loss(void *p)
{
    struct lin *c = p;
    cpu_linear_forward(c->y, c->x, c->w, c->b, c->n, c->cin, c->cout);
    return dot(c->y, c->r, (size_t)c->n * c->cout);
}

static void test_linear(void)
{
    struct lin c = {3, 5, 4, NULL, NULL, NULL, NULL, NULL};
    float x[15], w[20], b[4], y[12], r[12], dx[15], dw[20] = {0}, db[4] = {0};
    c.x = x, c.w = w, c.b = b, c.y = y, c.r = r;
    fill(x, 15, -1, 1), fill(w, 20, -1, 1), fill(b, 4, -1, 1), fill(r, 12, -1, 1);
    cpu_linear_backward(dx, dw, db, r, x, w, c.n, c.cin, c.cout, 1);
    GP_CHECK(fd_check(lin_loss, &c, x, dx, 15) < 1e-3);
    GP_CHECK(fd_check(lin_loss, &c, w, dw, 20) < 1e-3);
    GP_CHECK(fd_check(lin_loss, &c, b, db, 4) < 1e-3);
    /* backward accumulates into dw/db */
    cpu_linear_backward(NULL, dw, db, r, x, w, c.n, c.cin, c.cout, 1);
    float dw1[20] = {0}, db1[4] = {0};
    cpu_linear_backward(NULL, dw1, db1, r, x, w, c.n, c.cin, c.cout, 1);
    GP_ASSERT_NEAR(dw[7], 2 * dw1[7], 1e-5);
    GP_ASSERT_NEAR(db[2], 2 * db1[2], 1e-5);
    /* accumulate 0 (--zero-grad none): overwrites what was there */
    cpu_linear_backward(NULL, dw, db, r, x, w, c.n, c.cin, c.cout, 0);
    for (int k = 0; k < 20; k++)
        GP_ASSERT_NEAR(dw[k], dw1[k], 1e-6);
    for (int k = 0; k < 4; k++)
        GP_ASSERT_NEAR(db[k], db1[k], 1e-6);
}

struct conv {
    struct cpu_conv3 cv;
    int n;
    float *x, *wt, *b, *y, *r;
};

static double conv_loss(void *p)
{
    struct conv *c = p;
    cpu_conv3_forward(&c->cv, c->y, c->x, c->wt, c->b, c->n);
    return dot(c->y, c->r, (size_t)c->n * c->cv.cout * c->cv.h * c->cv.w);
}

/* y[i, o, oy, ox] by the definition (bias + 3x3 window, zero padding), in double. */
static double conv_direct(const struct conv *c, int i, int o, int oy, int ox)
{
    int cin = c->cv.cin, h = c->cv.h, w = c->cv.w;
    double s = c->b[o];
    for (int ci = 0; ci < cin; ci++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                int sy = oy + ky - 1, sx = ox + kx - 1;
                if (sy >= 0 && sy < h && sx >= 0 && sx < w)
                    s += (double)c->wt[(o * cin + ci) * 9 + ky * 3 + kx] *
                         c->x[((i * cin + ci) * h + sy) * w + sx];
            }
    return s;
}

/* Smallest |pre-activation| of c: a ReLU kink nearer than H * max|w| breaks the central
 * difference (|w| <= 1 moves it by <= H), so fused-ReLU cases redraw until it is >= 2H. */
static double conv_min_abs(const struct conv *c)
{
    double m = 1e30;
    for (int i = 0; i < c->n; i++)
        for (int o = 0; o < c->cv.cout; o++)
            for (int p = 0; p < c->cv.h * c->cv.w; p++)
                m = fmin(m, fabs(conv_direct(c, i, o, p / c->cv.w, p % c->cv.w)));
    return m;
}

/* Gradient checks of a 2-in, 3-out 5x4 convolution over n samples in blocks of `block`, with
 * the fused ReLU when `relu`; every output is compared with the definition. */
static void conv_case(int n, int block, int relu)
{
    enum { CIN = 2, COUT = 3, HH = 5, WW = 4, HW = HH * WW, MAXN = 5 };
    float x[MAXN * CIN * HW], wt[COUT * CIN * 9], b[COUT], y[MAXN * COUT * HW], r[MAXN * COUT * HW];
    float dx[MAXN * CIN * HW], dw[COUT * CIN * 9] = {0}, db[COUT] = {0};
    float ws[(CIN * 9 + COUT) * MAXN * HW];
    size_t nx = (size_t)n * CIN * HW, nw = COUT * CIN * 9, ny = (size_t)n * COUT * HW;
    if (n > MAXN || block > MAXN) {
        GP_CHECK(!"conv_case: n and block must be <= MAXN");
        return;
    }
    GP_ASSERT_EQ_INT(cpu_conv3_ws_size(CIN, COUT, HH, WW, block), (CIN * 9 + COUT) * block * HW);
    struct conv c = {.n = n, .x = x, .wt = wt, .b = b, .y = y, .r = r};
    cpu_conv3_init(&c.cv, CIN, COUT, HH, WW, block, ws);
    c.cv.relu = relu;
    do
        fill(x, nx, -1, 1), fill(wt, nw, -1, 1), fill(b, COUT, -1, 1), fill(r, ny, -1, 1);
    while (relu && conv_min_abs(&c) < 2 * H);
    conv_loss(&c);
    for (int i = 0; i < n; i++)
        for (int o = 0; o < COUT; o++)
            for (int p = 0; p < HW; p++) {
                double want = conv_direct(&c, i, o, p / WW, p % WW);
                GP_ASSERT_NEAR(y[(i * COUT + o) * HW + p], relu && want < 0 ? 0.0 : want, 1e-4);
            }
    cpu_conv3_backward(&c.cv, dx, dw, db, r, relu ? y : NULL, x, wt, n, 1);
    GP_CHECK(fd_check(conv_loss, &c, x, dx, nx) < 1e-3);
    GP_CHECK(fd_check(conv_loss, &c, wt, dw, nw) < 1e-3);
    GP_CHECK(fd_check(conv_loss, &c, b, db, COUT) < 1e-3);
    /* backward accumulates dw/db; dx may be NULL */
    float dw1[COUT * CIN * 9], db1[COUT];
    memcpy(dw1, dw, sizeof dw), memcpy(db1, db, sizeof db);
    conv_loss(&c);
    cpu_conv3_backward(&c.cv, NULL, dw, db, r, relu ? y : NULL, x, wt, n, 1);
    GP_ASSERT_NEAR(dw[7], 2 * dw1[7], 1e-5);
    GP_ASSERT_NEAR(db[2], 2 * db1[2], 1e-5);
    /* accumulate 0 (--zero-grad none): overwrites, over every block */
    cpu_conv3_backward(&c.cv, NULL, dw, db, r, relu ? y : NULL, x, wt, n, 0);
    for (int k = 0; k < COUT * CIN * 9; k++)
        GP_ASSERT_NEAR(dw[k], dw1[k], 1e-5);
    for (int k = 0; k < COUT; k++)
        GP_ASSERT_NEAR(db[k], db1[k], 1e-5);
}

static void test_conv3(void)
{
    conv_case(2, 2, 0); /* one block */
    conv_case(5, 2, 0); /* blocks of 2, 2 and 1 */
    conv_case(5, 5, 1); /* fused ReLU */
    conv_case(3, 2, 1);
    /* the block keeps the workspace bounded but never below one sample or above the batch */
    GP_ASSERT_EQ_INT(cpu_conv3_block(1, 5, 4, 3), 3);
    GP_ASSERT_EQ_INT(cpu_conv3_block(1 << 20, 5, 4, 64), 1);
    GP_CHECK(cpu_conv3_block(32, 14, 14, 1 << 20) < 1 << 20);
}

struct act {
    size_t n;
    float *x, *y, *r;
    int32_t *arg;
};

static double relu_loss(void *p)
{
    struct act *c = p;
    cpu_relu_forward(c->y, c->x, c->n);
    return dot(c->y, c->r, c->n);
}

static void test_relu(void)
{
    float x[32], y[32], r[32], dx[32];
    struct act c = {32, x, y, r, NULL};
    fill(r, 32, -1, 1);
    for (int i = 0; i < 32; i++) /* away from the kink at 0 */
        x[i] = (i % 2 ? 1 : -1) * rng_uniform(&seed_state, 0.1f, 1.0f);
    relu_loss(&c);
    cpu_relu_backward(dx, r, y, 32);
    GP_CHECK(fd_check(relu_loss, &c, x, dx, 32) < 1e-3);
    GP_ASSERT_NEAR(y[0], 0.0, 0.0);
}

static double pool_loss(void *p)
{
    struct act *c = p;
    cpu_maxpool2_forward(c->y, c->arg, c->x, 1, 2, 4, 6);
    return dot(c->y, c->r, 12);
}

static void test_maxpool(void)
{
    float x[48], y[12], r[12], dx[48];
    int32_t arg[12];
    struct act c = {48, x, y, r, arg};
    for (int i = 0; i < 48; i++) /* distinct values 0.1 apart: no ties within 2h */
        x[i] = 0.1f * (float)((i * 29) % 48);
    fill(r, 12, -1, 1);
    pool_loss(&c);
    cpu_maxpool2_backward(dx, r, arg, 1, 2, 4, 6);
    GP_CHECK(fd_check(pool_loss, &c, x, dx, 48) < 1e-3);
    float m = x[0];
    for (int k = 0; k < 4; k++)
        m = fmaxf(m, x[(k / 2) * 6 + k % 2]);
    GP_ASSERT_NEAR(y[0], m, 0.0);
}

struct ce {
    float *z, *p;
    int32_t *lab;
};

static double ce_loss(void *p)
{
    struct ce *c = p;
    int ok;
    return cpu_softmax_ce_forward(c->p, &ok, c->z, c->lab, 3, 10);
}

static void test_softmax_ce(void)
{
    float z[30], p[30], dz[30];
    int32_t lab[3] = {4, 0, 9};
    struct ce c = {z, p, lab};
    fill(z, 30, -3, 3);
    z[4] = 5; /* sample 0 is predicted right */
    double l = ce_loss(&c);
    cpu_softmax_ce_backward(dz, p, lab, 3, 10, 1.0f);
    GP_CHECK(fd_check(ce_loss, &c, z, dz, 30) < 1e-3);
    double naive = 0;
    for (int i = 0; i < 3; i++) {
        double s = 0;
        for (int j = 0; j < 10; j++)
            s += exp(z[i * 10 + j]);
        naive += log(s) - z[i * 10 + lab[i]];
    }
    GP_ASSERT_NEAR(l, naive, 1e-4);
    int ok;
    z[0] = 1000; /* large logits do not overflow */
    GP_CHECK(isfinite(cpu_softmax_ce_forward(p, &ok, z, lab, 3, 10)));
    GP_ASSERT_NEAR(p[0], 1.0, 1e-6);
}

static void test_optimizers(void)
{
    float p[3] = {1, 1, 1}, g[3] = {0.5f, -2, 0}, m[3] = {0}, v[3] = {0}, buf[3] = {0};
    /* Adam's first step moves each weight by lr * sign(g) (bias-corrected m/sqrt(v) = g/|g|) */
    cpu_adam_step(p, g, m, v, 3, 0.1f, 0.9f, 0.999f, 1e-8f, 1, 1.0f);
    GP_ASSERT_NEAR(p[0], 0.9, 1e-5);
    GP_ASSERT_NEAR(p[1], 1.1, 1e-5);
    GP_ASSERT_NEAR(p[2], 1.0, 1e-6);
    /* unscaling: gradients 1000x with inv_scale 1e-3 give the same step */
    float q[3] = {1, 1, 1}, g2[3] = {500, -2000, 0}, m2[3] = {0}, v2[3] = {0};
    cpu_adam_step(q, g2, m2, v2, 3, 0.1f, 0.9f, 0.999f, 1e-8f, 1, 1e-3f);
    GP_ASSERT_NEAR(q[1], p[1], 1e-5);
    /* SGD with momentum: buf = 0.9 buf + g; p -= lr buf */
    float s[1] = {1}, sg[1] = {2};
    cpu_sgd_step(s, sg, buf, 1, 0.1f, 0.9f, 1.0f);
    cpu_sgd_step(s, sg, buf, 1, 0.1f, 0.9f, 1.0f);
    GP_ASSERT_NEAR(buf[0], 3.8, 1e-6);
    GP_ASSERT_NEAR(s[0], 1 - 0.2 - 0.38, 1e-6);
    float bad[2] = {1, NAN};
    GP_CHECK(cpu_nonfinite(bad, 2));
    GP_CHECK(!cpu_nonfinite(bad, 1));
}

/* Summed loss of the model at `params` on batch `b` (forward only). */
static double model_loss(struct backend *be, struct backend_state *st, const struct batch *b)
{
    struct step_stats s;
    backend_cpu_ops.set_state(be, st, NULL);
    backend_cpu_ops.set_input(be, b, NULL);
    backend_cpu_ops.forward(be, 0, NULL);
    backend_cpu_ops.read_stats(be, &s, NULL);
    return s.loss_sum;
}

/* Whole-model check through the CPU backend: one SGD step with lr 1 from a zero momentum buffer
 * moves each weight by its gradient of the mean loss; compare with central differences of the
 * summed loss on sampled weights. ReLU/max-pool kinks may spoil a few: 90% must agree. */
static int model_check(enum model_kind kind)
{
    struct model_spec m;
    model_spec_init(&m, kind, 8, 8);
    int n = 4;
    struct backend_config bc = {
            .spec = &m, .max_batch = n, .optimizer = OPTIM_SGD, .lr = 1.0f, .accumulate = 1};
    struct backend *be;
    char name[64];
    long long mem;
    backend_cpu_ops.open(&be, &bc, name, sizeof(name), &mem, NULL);
    float *p0 = calloc(m.n_params, 4), *p1 = calloc(m.n_params, 4), *opt = calloc(m.n_params, 4);
    float x[4 * 64];
    int32_t y[4] = {1, 7, 3, 9};
    fill(x, 4 * 64, -1, 1);
    struct batch b = {x, y, NULL, n, 0, 0, 0, sizeof(x) + sizeof(y)};
    model_init_params(&m, p0, 5);
    struct backend_state st = {p0, opt, 0}, out = {p1, opt, 0};
    backend_cpu_ops.set_state(be, &st, NULL);
    backend_cpu_ops.set_input(be, &b, NULL);
    backend_cpu_ops.forward(be, 1, NULL);
    backend_cpu_ops.backward(be, NULL);
    backend_cpu_ops.step(be, NULL);
    backend_cpu_ops.get_state(be, &out, NULL);
    int good = 0, tried = 0;
    for (size_t k = 7; k < m.n_params; k += m.n_params / 40 + 1, tried++) {
        double g = ((double)p0[k] - p1[k]) * n; /* gradient of the summed loss */
        float keep = p0[k];
        memset(opt, 0, m.n_params * 4);
        p0[k] = keep + H;
        double up = model_loss(be, &st, &b);
        p0[k] = keep - H;
        double down = model_loss(be, &st, &b);
        p0[k] = keep;
        double num = (up - down) / (2.0 * H);
        good += fabs(num - g) <= 2e-2 * (1.0 + fabs(num));
    }
    backend_cpu_ops.close(be);
    free(p0), free(p1), free(opt);
    return good * 10 >= tried * 9 && tried >= 30;
}

static void test_whole_models(void)
{
    GP_CHECK(model_check(MODEL_MLP));
    GP_CHECK(model_check(MODEL_CNN));
}

/* Subnormal floats cost ~100 cycles an operation on x86 (Adam's second moment underflows into
 * them): the backend's step flushes them to zero, and gives the caller's environment back. */
static void test_subnormals_flushed(void)
{
    struct model_spec m;
    model_spec_init(&m, MODEL_MLP, 8, 8);
    struct backend_config bc = {
            .spec = &m, .max_batch = 4, .optimizer = OPTIM_ADAM, .lr = 1e-3f, .accumulate = 1};
    struct backend *be;
    char name[64];
    long long mem;
    GP_CHECK(backend_cpu_ops.open(&be, &bc, name, sizeof(name), &mem, NULL) == GP_OK);
    size_t np = m.n_params;
    float *p = calloc(np, 4), *opt = calloc(2 * np, 4);
    model_init_params(&m, p, 5);
    for (size_t i = 0; i < np; i++)
        opt[np + i] = 1e-39f; /* v: subnormal (FLT_MIN is 1.18e-38) */
    struct backend_state st = {p, opt, 0};
    backend_cpu_ops.set_state(be, &st, NULL);
    backend_cpu_ops.step(be, NULL); /* grads are zero: v = 0.999 v, subnormal unless flushed */
    backend_cpu_ops.get_state(be, &st, NULL);
    size_t kept = 0;
    for (size_t i = 0; i < np; i++)
        kept += opt[np + i] != 0.0f;
    GP_ASSERT_EQ_INT(kept, 0);
    volatile float tiny = 1e-39f;
    GP_CHECK(tiny * 0.5f != 0.0f); /* this thread keeps its subnormals */
    backend_cpu_ops.close(be);
    free(p), free(opt);
}

/* The layers call OpenBLAS, which the CPU backend loads on open; these tests call them direct. */
static void test_blas_loads(void)
{
    const char *why = cpu_blas_load();
    if (why)
        GP_TEST_FAIL("%s", why);
}

int main(void)
{
    GP_RUN(test_blas_loads);
    GP_RUN(test_linear);
    GP_RUN(test_conv3);
    GP_RUN(test_relu);
    GP_RUN(test_maxpool);
    GP_RUN(test_softmax_ce);
    GP_RUN(test_optimizers);
    GP_RUN(test_whole_models);
    GP_RUN(test_subnormals_flushed);
    return gp_test_summary();
}
