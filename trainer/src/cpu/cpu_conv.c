/* 3x3 convolution (stride 1, padding 1) as im2col + one OpenBLAS GEMM per sample; backward uses
 * the same column buffer for the weight gradient and col2im for the input gradient. */
#include "cpu_ops.h"

#include <cblas.h>
#include <string.h>

size_t cpu_conv3_col_size(int cin, int h, int w)
{
    return (size_t)cin * 9 * (size_t)h * (size_t)w;
}

/* col (cin*9, h*w): row (c, ky, kx) holds x[c, y+ky-1, x+kx-1], 0 outside. */
static void im2col(float *col, const float *x, int cin, int h, int w)
{
    for (int c = 0; c < cin; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                float *row = col + ((size_t)(c * 9 + ky * 3 + kx)) * h * w;
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

/* dx[c, y+ky-1, x+kx-1] += col[(c, ky, kx), (y, x)]; dx must be zeroed first. */
static void col2im(float *dx, const float *col, int cin, int h, int w)
{
    for (int c = 0; c < cin; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                const float *row = col + ((size_t)(c * 9 + ky * 3 + kx)) * h * w;
                float *plane = dx + (size_t)c * h * w;
                for (int y = 0; y < h; y++) {
                    int sy = y + ky - 1;
                    if (sy < 0 || sy >= h)
                        continue;
                    int lo = kx == 0 ? 1 : 0, hi = kx == 2 ? w - 1 : w;
                    float *dst = plane + (size_t)sy * w;
                    const float *src = row + (size_t)y * w;
                    for (int x = lo; x < hi; x++)
                        dst[x + kx - 1] += src[x];
                }
            }
}

void cpu_conv3_forward(float *y, const float *x, const float *wt, const float *b, float *col, int n,
                       int cin, int cout, int h, int w)
{
    int hw = h * w, k = cin * 9;
    for (int i = 0; i < n; i++) {
        float *yi = y + (size_t)i * cout * hw;
        im2col(col, x + (size_t)i * cin * hw, cin, h, w);
        for (int o = 0; o < cout; o++)
            for (int p = 0; p < hw; p++)
                yi[(size_t)o * hw + p] = b[o];
        /* y_i (cout, hw) += wt (cout, k) . col (k, hw) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, cout, hw, k, 1.0f, wt, k, col, hw,
                    1.0f, yi, hw);
    }
}

void cpu_conv3_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                        const float *wt, float *col, int n, int cin, int cout, int h, int w)
{
    int hw = h * w, k = cin * 9;
    for (int i = 0; i < n; i++) {
        const float *dyi = dy + (size_t)i * cout * hw;
        for (int o = 0; o < cout; o++) {
            float s = 0.0f;
            for (int p = 0; p < hw; p++)
                s += dyi[(size_t)o * hw + p];
            db[o] += s;
        }
        im2col(col, x + (size_t)i * cin * hw, cin, h, w);
        /* dw (cout, k) += dy_i (cout, hw) . col^T (hw, k) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, cout, k, hw, 1.0f, dyi, hw, col, hw,
                    1.0f, dw, k);
        if (!dx)
            continue;
        /* col (k, hw) = wt^T (k, cout) . dy_i (cout, hw), then scatter back */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, hw, cout, 1.0f, wt, k, dyi, hw,
                    0.0f, col, hw);
        float *dxi = dx + (size_t)i * cin * hw;
        memset(dxi, 0, (size_t)cin * hw * sizeof(float));
        col2im(dxi, col, cin, h, w);
    }
}
