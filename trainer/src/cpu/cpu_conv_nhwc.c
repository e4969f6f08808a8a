/* --channels-last: the 3x3 convolution and 2x2 max pooling over NHWC activations, as PyTorch's
 * channels_last tensors. im2col makes a row per output pixel holding its 3x3 window's channels,
 * (ky, kx, c) in order, so each tap is one contiguous copy of c floats; the GEMM's output is the
 * NHWC activation itself (no scatter). The weights stay (cout, cin, 3, 3) in the parameters and
 * are permuted to (cout, 3, 3, cin) in c->wk for the GEMMs, their gradient permuted back. */
#include "cpu_ops.h"

#include <string.h>

size_t cpu_conv3_nhwc_wk_size(int cin, int cout)
{
    return 2 * (size_t)cout * (size_t)cin * 9;
}

/* col (nb*h*w, 9*cin): row (i, y, x) holds x[i, y+ky-1, x+kx-1, :] (0 outside) for each tap. */
static void im2col_nhwc(float *col, const float *x, int nb, int cin, int h, int w)
{
    size_t k = (size_t)cin * 9, cb = (size_t)cin * sizeof(float);
    for (int i = 0; i < nb; i++)
        for (int y = 0; y < h; y++)
            for (int xx = 0; xx < w; xx++) {
                float *row = col + (((size_t)i * h + y) * w + xx) * k;
                for (int t = 0; t < 9; t++) {
                    int sy = y + t / 3 - 1, sx = xx + t % 3 - 1;
                    if (sy < 0 || sy >= h || sx < 0 || sx >= w)
                        memset(row + (size_t)t * cin, 0, cb);
                    else
                        memcpy(row + (size_t)t * cin, x + (((size_t)i * h + sy) * w + sx) * cin,
                               cb);
                }
            }
}

/* dx[i, y+ky-1, x+kx-1, :] += col[(i, y, x), (ky, kx, :)]; dx zeroed first. */
static void col2im_nhwc(float *dx, const float *col, int nb, int cin, int h, int w)
{
    size_t k = (size_t)cin * 9;
    for (int i = 0; i < nb; i++)
        for (int y = 0; y < h; y++)
            for (int xx = 0; xx < w; xx++) {
                const float *row = col + (((size_t)i * h + y) * w + xx) * k;
                for (int t = 0; t < 9; t++) {
                    int sy = y + t / 3 - 1, sx = xx + t % 3 - 1;
                    if (sy < 0 || sy >= h || sx < 0 || sx >= w)
                        continue;
                    float *dst = dx + (((size_t)i * h + sy) * w + sx) * cin;
                    const float *src = row + (size_t)t * cin;
                    for (int c = 0; c < cin; c++)
                        dst[c] += src[c];
                }
            }
}

/* wk (cout, 9, cin) = wt (cout, cin, 9) */
static void permute_weights(float *wk, const float *wt, int cin, int cout)
{
    for (int o = 0; o < cout; o++)
        for (int c = 0; c < cin; c++)
            for (int t = 0; t < 9; t++)
                wk[((size_t)o * 9 + t) * cin + c] = wt[((size_t)o * cin + c) * 9 + t];
}

void cpu_conv3_nhwc_forward(const struct cpu_conv3 *c, float *y, const float *x, const float *wt,
                            const float *b, int n)
{
    size_t hw = (size_t)c->h * c->w;
    int k = c->cin * 9;
    permute_weights(c->wk, wt, c->cin, c->cout);
    for (int i0 = 0; i0 < n; i0 += c->block) {
        int nb = n - i0 < c->block ? n - i0 : c->block, rows = nb * (int)hw;
        im2col_nhwc(c->col, x + (size_t)i0 * c->cin * hw, nb, c->cin, c->h, c->w);
        float *yb = y + (size_t)i0 * c->cout * hw;
        /* yb (rows, cout) = col (rows, k) . wk^T (k, cout) */
        cpu_sgemm(0, 1, rows, c->cout, k, 1.0f, c->col, k, c->wk, k, 0.0f, yb, c->cout);
        for (size_t p = 0; p < (size_t)rows; p++)
            for (int o = 0; o < c->cout; o++) {
                float s = yb[p * c->cout + o] + b[o];
                yb[p * c->cout + o] = c->relu && s <= 0.0f ? 0.0f : s; /* NaN stays */
            }
    }
}

/* tmp (rows, cout) = dy, masked by y > 0 when c->relu; db += its column sums. */
static void gather_dy_nhwc(const struct cpu_conv3 *c, float *db, const float *dy, const float *y,
                           int rows)
{
    for (size_t p = 0; p < (size_t)rows; p++)
        for (int o = 0; o < c->cout; o++) {
            size_t at = p * c->cout + o;
            float d = c->relu && y[at] <= 0.0f ? 0.0f : dy[at];
            c->tmp[at] = d;
            db[o] += d;
        }
}

/* dw (cout, cin, 9) (+)= dwk (cout, 9, cin) */
static void unpermute_grad(float *dw, const float *dwk, int cin, int cout, int accumulate)
{
    for (int o = 0; o < cout; o++)
        for (int ci = 0; ci < cin; ci++)
            for (int t = 0; t < 9; t++) {
                float g = dwk[((size_t)o * 9 + t) * cin + ci];
                float *d = &dw[((size_t)o * cin + ci) * 9 + t];
                *d = accumulate ? *d + g : g;
            }
}

void cpu_conv3_nhwc_backward(const struct cpu_conv3 *c, float *dx, float *dw, float *db,
                             const float *dy, const float *y, const float *x, const float *wt,
                             int n, int accumulate)
{
    if (!accumulate)
        memset(db, 0, (size_t)c->cout * sizeof(float));
    size_t hw = (size_t)c->h * c->w, xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw;
    int k = c->cin * 9;
    float *dwk = c->wk + (size_t)c->cout * k;
    permute_weights(c->wk, wt, c->cin, c->cout);
    for (int i0 = 0; i0 < n; i0 += c->block) {
        int nb = n - i0 < c->block ? n - i0 : c->block, rows = nb * (int)hw;
        gather_dy_nhwc(c, db, dy + i0 * ys, y ? y + i0 * ys : NULL, rows);
        im2col_nhwc(c->col, x + i0 * xs, nb, c->cin, c->h, c->w);
        /* dwk (cout, k) (+)= tmp^T (cout, rows) . col (rows, k) */
        cpu_sgemm(1, 0, c->cout, k, rows, 1.0f, c->tmp, c->cout, c->col, k, i0 > 0 ? 1.0f : 0.0f,
                  dwk, k);
        if (!dx)
            continue;
        /* col (rows, k) = tmp (rows, cout) . wk (cout, k), then scattered back per pixel */
        cpu_sgemm(0, 0, rows, k, c->cout, 1.0f, c->tmp, c->cout, c->wk, k, 0.0f, c->col, k);
        float *dxb = dx + i0 * xs;
        memset(dxb, 0, (size_t)nb * xs * sizeof(float));
        col2im_nhwc(dxb, c->col, nb, c->cin, c->h, c->w);
    }
    unpermute_grad(dw, dwk, c->cin, c->cout, accumulate);
}

void cpu_maxpool2_nhwc_forward(float *y, int32_t *arg, const float *x, int n, int c, int h, int w)
{
    int oh = h / 2, ow = w / 2;
    for (int i = 0; i < n; i++) {
        const float *in = x + (size_t)i * h * w * c;
        float *out = y + (size_t)i * oh * ow * c;
        int32_t *a = arg + (size_t)i * oh * ow * c;
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int ch = 0; ch < c; ch++) {
                    /* the NCHW kernel's order: (0,0), (0,1), (1,0), (1,1), first maximum kept */
                    int best = ((2 * oy) * w + 2 * ox) * c + ch;
                    const int cand[3] = {best + c, best + w * c, best + w * c + c};
                    for (int t = 0; t < 3; t++)
                        if (in[cand[t]] > in[best])
                            best = cand[t];
                    size_t o = ((size_t)oy * ow + ox) * c + ch;
                    out[o] = in[best];
                    a[o] = best;
                }
    }
}

void cpu_maxpool2_nhwc_backward(float *dx, const float *dy, const int32_t *arg, int n, int c, int h,
                                int w)
{
    size_t o = (size_t)(h / 2) * (w / 2) * c, plane = (size_t)h * w * c;
    memset(dx, 0, (size_t)n * plane * sizeof(float));
    for (size_t i = 0; i < (size_t)n; i++)
        for (size_t k = 0; k < o; k++)
            dx[i * plane + arg[i * o + k]] += dy[i * o + k];
}

void cpu_nchw_to_nhwc(float *dst, const float *src, int n, int c, int hw)
{
    for (size_t i = 0; i < (size_t)n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++)
                dst[(i * hw + p) * c + ch] = src[(i * c + ch) * hw + p];
}

void cpu_nhwc_to_nchw(float *dst, const float *src, int n, int c, int hw)
{
    for (size_t i = 0; i < (size_t)n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++)
                dst[(i * c + ch) * hw + p] = src[(i * hw + p) * c + ch];
}
