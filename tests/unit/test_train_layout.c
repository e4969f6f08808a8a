/* The CPU layers of --channels-last and --fused against the ones they replace: the NHWC 3x3
 * convolution (forward, the fused ReLU, dx, dw, db over several blocks, accumulating or not)
 * and 2x2 max pooling against the NCHW kernels on transposed tensors, on a non-square image
 * with several input channels; the fused linear+ReLU and the zeroing optimizer steps against
 * the separate passes. */
#include "cpu/cpu_ops.h"
#include "gp_test.h"
#include "rng.h"

#include <math.h>
#include <string.h>

enum { N = 3, CIN = 2, COUT = 3, HH = 5, WW = 4, HW = HH * WW, BLOCK = 2 };

static uint64_t seed_state = 11;

static void fill(float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = rng_uniform(&seed_state, -1, 1);
}

static double worst(const float *a, const float *b, size_t n)
{
    double w = 0;
    for (size_t i = 0; i < n; i++)
        w = fmax(w, fabs((double)a[i] - b[i]));
    return w;
}

struct conv_io {
    float y[N * COUT * HW], dx[N * CIN * HW], dw[COUT * CIN * 9], db[COUT];
};

/* The convolution of x (NCHW) through the NCHW kernels, or through the NHWC ones on transposed
 * tensors with the results transposed back; backward run twice (the second accumulates). */
static void run_conv(int nhwc, int relu, const float *x, const float *wt, const float *b,
                     const float *dy, struct conv_io *o)
{
    static float ws[(CIN * 9 + COUT) * BLOCK * HW], wk[2 * COUT * CIN * 9];
    float xl[N * CIN * HW], dyl[N * COUT * HW], yl[N * COUT * HW], dxl[N * CIN * HW];
    struct cpu_conv3 c;
    cpu_conv3_init(&c, CIN, COUT, HH, WW, BLOCK, ws);
    c.relu = relu, c.wk = wk;
    memset(o->dw, 0, sizeof(o->dw)), memset(o->db, 0, sizeof(o->db));
    if (!nhwc) {
        cpu_conv3_forward(&c, o->y, x, wt, b, N);
        cpu_conv3_backward(&c, o->dx, o->dw, o->db, dy, relu ? o->y : NULL, x, wt, N, 0);
        cpu_conv3_backward(&c, o->dx, o->dw, o->db, dy, relu ? o->y : NULL, x, wt, N, 1);
        return;
    }
    cpu_nchw_to_nhwc(xl, x, N, CIN, HW);
    cpu_nchw_to_nhwc(dyl, dy, N, COUT, HW);
    cpu_conv3_nhwc_forward(&c, yl, xl, wt, b, N);
    cpu_conv3_nhwc_backward(&c, dxl, o->dw, o->db, dyl, relu ? yl : NULL, xl, wt, N, 0);
    cpu_conv3_nhwc_backward(&c, dxl, o->dw, o->db, dyl, relu ? yl : NULL, xl, wt, N, 1);
    cpu_nhwc_to_nchw(o->y, yl, N, COUT, HW);
    cpu_nhwc_to_nchw(o->dx, dxl, N, CIN, HW);
}

static void test_conv_nhwc(void)
{
    float x[N * CIN * HW], wt[COUT * CIN * 9], b[COUT], dy[N * COUT * HW];
    for (int relu = 0; relu < 2; relu++) {
        fill(x, sizeof(x) / 4), fill(wt, sizeof(wt) / 4), fill(b, COUT), fill(dy, sizeof(dy) / 4);
        struct conv_io a, c;
        run_conv(0, relu, x, wt, b, dy, &a);
        run_conv(1, relu, x, wt, b, dy, &c);
        GP_CHECK(worst(a.y, c.y, sizeof(a.y) / 4) < 1e-5);
        GP_CHECK(worst(a.dx, c.dx, sizeof(a.dx) / 4) < 1e-5);
        GP_CHECK(worst(a.dw, c.dw, sizeof(a.dw) / 4) < 1e-5);
        GP_CHECK(worst(a.db, c.db, COUT) < 1e-5);
        GP_CHECK(fabs(a.dw[5]) > 1e-3); /* the gradients are not all zero */
    }
}

static void test_maxpool_nhwc(void)
{
    enum { C = 3, H = 4, W = 6, O = (H / 2) * (W / 2) };
    float x[N * C * H * W], xl[N * C * H * W], y[N * C * O], yl[N * C * O], yb[N * C * O];
    float dy[N * C * O], dyl[N * C * O], dx[N * C * H * W], dxl[N * C * H * W], dxb[N * C * H * W];
    int32_t arg[N * C * O], argl[N * C * O];
    fill(x, sizeof(x) / 4), fill(dy, sizeof(dy) / 4);
    x[7] = x[6]; /* a tie: both layouts keep the first maximum */
    cpu_maxpool2_forward(y, arg, x, N, C, H, W);
    cpu_maxpool2_backward(dx, dy, arg, N, C, H, W);
    cpu_nchw_to_nhwc(xl, x, N, C, H * W);
    cpu_nchw_to_nhwc(dyl, dy, N, C, O);
    cpu_maxpool2_nhwc_forward(yl, argl, xl, N, C, H, W);
    cpu_maxpool2_nhwc_backward(dxl, dyl, argl, N, C, H, W);
    cpu_nhwc_to_nchw(yb, yl, N, C, O);
    cpu_nhwc_to_nchw(dxb, dxl, N, C, H * W);
    GP_CHECK(worst(y, yb, sizeof(y) / 4) == 0);
    GP_CHECK(worst(dx, dxb, sizeof(dx) / 4) == 0);
}

/* ReLU(linear) as two passes and as the fused one: forward, then dx, dw, db. */
static void test_linear_relu_fused(void)
{
    enum { IN = 7, OUT = 5 };
    float x[N * IN], w[OUT * IN], b[OUT], dy[N * OUT], pre[N * OUT], y[N * OUT], yf[N * OUT];
    float d[N * OUT], dx[N * IN], dw[OUT * IN], db[OUT], dxf[N * IN], dwf[OUT * IN], dbf[OUT];
    fill(x, N * IN), fill(w, OUT * IN), fill(b, OUT), fill(dy, N * OUT);
    cpu_linear_forward(pre, x, w, b, N, IN, OUT);
    cpu_relu_forward(y, pre, N * OUT);
    cpu_relu_backward(d, dy, y, N * OUT);
    cpu_linear_backward(dx, dw, db, d, x, w, N, IN, OUT, 0);
    cpu_linear_relu_forward(yf, x, w, b, N, IN, OUT);
    cpu_linear_relu_backward(dxf, dwf, dbf, dy, yf, x, w, N, IN, OUT, 0);
    GP_CHECK(worst(y, yf, N * OUT) < 1e-6);
    GP_CHECK(worst(dx, dxf, N * IN) < 1e-6);
    GP_CHECK(worst(dw, dwf, OUT * IN) < 1e-6);
    GP_CHECK(worst(db, dbf, OUT) < 1e-6);
    GP_CHECK(worst(d, dy, N * OUT) == 0); /* dy masked in place */
}

static void test_optim_zero(void)
{
    float p[4], g[4], m[8] = {0}, q[4], g2[4], m2[8] = {0}, zero[4] = {0};
    fill(p, 4), fill(g, 4);
    memcpy(q, p, sizeof(p)), memcpy(g2, g, sizeof(g));
    cpu_adam_step(p, g, m, m + 4, 4, 0.1f, 0.9f, 0.999f, 1e-8f, 1, 1.0f);
    cpu_adam_step_zero(q, g2, m2, m2 + 4, 4, 0.1f, 0.9f, 0.999f, 1e-8f, 1, 1.0f);
    GP_CHECK(worst(p, q, 4) == 0 && worst(m, m2, 8) == 0 && worst(g2, zero, 4) == 0);
    memcpy(g2, g, sizeof(g));
    cpu_sgd_step(p, g, m, 4, 0.1f, 0.9f, 1.0f);
    cpu_sgd_step_zero(q, g2, m2, 4, 0.1f, 0.9f, 1.0f);
    GP_CHECK(worst(p, q, 4) == 0 && worst(m, m2, 4) == 0 && worst(g2, zero, 4) == 0);
}

int main(void)
{
    GP_RUN(test_conv_nhwc);
    GP_RUN(test_maxpool_nhwc);
    GP_RUN(test_linear_relu_fused);
    GP_RUN(test_optim_zero);
    return gp_test_summary();
}
