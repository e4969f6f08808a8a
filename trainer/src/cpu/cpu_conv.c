/* 3x3 convolution (stride 1, padding 1) as im2col + OpenBLAS GEMMs over blocks of samples: one
 * GEMM per block in forward and two in backward (weight gradient, then input gradient + col2im).
 * Measured hot path (~80% of a CPU CNN step); blocks give OpenBLAS's threads larger GEMMs. */
#include "cpu_ops.h"

#include <string.h>

/* Column floats one block may hold: 1 MiB, the L2 of a core here. 2^16..2^18 measured equal
 * CPU time on one thread, 2^20 (L3) 7% more; the GEMM kernel runs near peak either way. */
#define CONV_COL_BUDGET ((size_t)1 << 18)

int cpu_conv3_block(int cin, int h, int w, int max_batch)
{
    size_t per = (size_t)cin * 9 * (size_t)h * (size_t)w, fit = CONV_COL_BUDGET / per;
    int block = fit < 1 ? 1 : fit > (size_t)max_batch ? max_batch : (int)fit;
    return block < 1 ? 1 : block;
}

size_t cpu_conv3_ws_size(int cin, int cout, int h, int w, int block)
{
    return ((size_t)cin * 9 + (size_t)cout) * (size_t)block * (size_t)h * (size_t)w;
}

void cpu_conv3_init(struct cpu_conv3 *c, int cin, int cout, int h, int w, int block, float *ws)
{
    *c = (struct cpu_conv3){cin, cout, h, w, block, 0, ws, NULL, NULL};
    c->tmp = ws + (size_t)cin * 9 * (size_t)block * (size_t)h * (size_t)w;
}

/* col (cin*9, ld): row (c, ky, kx) holds x[c, y+ky-1, x+kx-1] (0 outside) in its first h*w
 * columns; x is one sample (cin, h, w). */
static void im2col(float *col, size_t ld, const float *x, int cin, int h, int w)
{
    for (int c = 0; c < cin; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                float *row = col + (size_t)(c * 9 + ky * 3 + kx) * ld;
                const float *plane = x + (size_t)c * h * w;
                for (int y = 0; y < h; y++) {
                    int sy = y + ky - 1;
                    float *dst = row + (size_t)y * w;
                    if (sy < 0 || sy >= h) {
                        memset(dst, 0, (size_t)w * sizeof(float));
                        continue;
                    }
                    int lo = kx == 0 ? 1 : 0, hi = kx == 2 ? w - 1 : w;
                    const float *src = plane + (size_t)sy * w + lo + (kx - 1);
                    dst[0] = 0.0f;
                    dst[w - 1] = 0.0f;
                    memcpy(dst + lo, src, (size_t)(hi - lo) * sizeof(float));
                }
            }
}

/* dx[c, y+ky-1, x+kx-1] += col[(c, ky, kx), (y, x)] for one sample; dx must be zeroed first. */
static void col2im(float *dx, const float *col, size_t ld, int cin, int h, int w)
{
    for (int c = 0; c < cin; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                const float *row = col + (size_t)(c * 9 + ky * 3 + kx) * ld;
                float *plane = dx + (size_t)c * h * w;
                for (int y = 0; y < h; y++) {
                    int sy = y + ky - 1;
                    if (sy < 0 || sy >= h)
                        continue;
                    int lo = kx == 0 ? 1 : 0, hi = kx == 2 ? w - 1 : w;
                    float *dst = plane + (size_t)sy * w + (kx - 1);
                    const float *src = row + (size_t)y * w;
                    for (int x = lo; x < hi; x++)
                        dst[x] += src[x];
                }
            }
}

/* im2col of samples x[0..nb) side by side: sample i fills columns [i*hw, (i+1)*hw). */
static void im2col_block(const struct cpu_conv3 *c, const float *x, int nb)
{
    size_t hw = (size_t)c->h * c->w, ld = (size_t)nb * hw;
    for (int i = 0; i < nb; i++)
        im2col(c->col + i * hw, ld, x + i * c->cin * hw, c->cin, c->h, c->w);
}

/* y (nb, cout, hw) = tmp (cout, nb*hw) + b, through ReLU when c->relu. */
static void scatter_out(const struct cpu_conv3 *c, float *y, const float *b, int nb)
{
    size_t hw = (size_t)c->h * c->w, ld = (size_t)nb * hw;
    for (int i = 0; i < nb; i++)
        for (int o = 0; o < c->cout; o++) {
            const float *src = c->tmp + o * ld + i * hw;
            float *dst = y + ((size_t)i * c->cout + o) * hw, bo = b[o];
            if (c->relu)
                for (size_t p = 0; p < hw; p++)
                    dst[p] = src[p] + bo <= 0.0f ? 0.0f : src[p] + bo; /* NaN stays */
            else
                for (size_t p = 0; p < hw; p++)
                    dst[p] = src[p] + bo;
        }
}

void cpu_conv3_forward(const struct cpu_conv3 *c, float *y, const float *x, const float *wt,
                       const float *b, int n)
{
    size_t hw = (size_t)c->h * c->w;
    int k = c->cin * 9;
    for (int i0 = 0; i0 < n; i0 += c->block) {
        int nb = n - i0 < c->block ? n - i0 : c->block, ld = nb * (int)hw;
        im2col_block(c, x + (size_t)i0 * c->cin * hw, nb);
        /* tmp (cout, nb*hw) = wt (cout, k) . col (k, nb*hw) */
        cpu_sgemm(0, 0, c->cout, ld, k, 1.0f, wt, k, c->col, ld, 0.0f, c->tmp, ld);
        scatter_out(c, y + (size_t)i0 * c->cout * hw, b, nb);
    }
}

/* tmp (cout, nb*hw) = dy (nb, cout, hw), masked by y > 0 when c->relu; db += its row sums. */
static void gather_dy(const struct cpu_conv3 *c, float *db, const float *dy, const float *y, int nb)
{
    size_t hw = (size_t)c->h * c->w, ld = (size_t)nb * hw;
    for (int i = 0; i < nb; i++)
        for (int o = 0; o < c->cout; o++) {
            size_t off = ((size_t)i * c->cout + o) * hw;
            float *dst = c->tmp + o * ld + i * hw, s = 0.0f;
            for (size_t p = 0; p < hw; p++) {
                dst[p] = c->relu && y[off + p] <= 0.0f ? 0.0f : dy[off + p];
                s += dst[p];
            }
            db[o] += s;
        }
}

void cpu_conv3_backward(const struct cpu_conv3 *c, float *dx, float *dw, float *db, const float *dy,
                        const float *y, const float *x, const float *wt, int n, int accumulate)
{
    if (!accumulate) /* the first block's GEMM overwrites dw; the bias sums start from 0 */
        memset(db, 0, (size_t)c->cout * sizeof(float));
    size_t hw = (size_t)c->h * c->w, xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw;
    int k = c->cin * 9;
    for (int i0 = 0; i0 < n; i0 += c->block) {
        int nb = n - i0 < c->block ? n - i0 : c->block, ld = nb * (int)hw;
        gather_dy(c, db, dy + i0 * ys, y ? y + i0 * ys : NULL, nb);
        im2col_block(c, x + i0 * xs, nb);
        /* dw (cout, k) (+)= tmp (cout, nb*hw) . col^T (nb*hw, k) */
        float beta = accumulate || i0 > 0 ? 1.0f : 0.0f;
        cpu_sgemm(0, 1, c->cout, k, ld, 1.0f, c->tmp, ld, c->col, ld, beta, dw, k);
        if (!dx)
            continue;
        /* col (k, nb*hw) = wt^T (k, cout) . tmp (cout, nb*hw), then scatter back per sample */
        cpu_sgemm(1, 0, k, ld, c->cout, 1.0f, wt, k, c->tmp, ld, 0.0f, c->col, ld);
        float *dxb = dx + i0 * xs;
        memset(dxb, 0, (size_t)nb * xs * sizeof(float));
        for (int i = 0; i < nb; i++)
            col2im(dxb + i * xs, c->col + i * hw, (size_t)ld, c->cin, c->h, c->w);
    }
}
