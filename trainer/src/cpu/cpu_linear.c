/* Fully connected layer on OpenBLAS: three GEMMs and a column sum. With a fused ReLU (--fused)
 * the bias and the activation are one pass after the GEMM, and backward masks the gradient and
 * sums the bias gradient in one pass. */
#include "cpu_ops.h"

#include <string.h>

void cpu_linear_forward(float *y, const float *x, const float *w, const float *b, int n, int cin,
                        int cout)
{
    for (int i = 0; i < n; i++)
        for (int o = 0; o < cout; o++)
            y[(size_t)i * cout + o] = b[o];
    /* y (n, cout) += x (n, cin) . w^T */
    cpu_sgemm(0, 1, n, cout, cin, 1.0f, x, cin, w, cin, 1.0f, y, cout);
}

void cpu_linear_relu_forward(float *y, const float *x, const float *w, const float *b, int n,
                             int cin, int cout)
{
    cpu_sgemm(0, 1, n, cout, cin, 1.0f, x, cin, w, cin, 0.0f, y, cout);
    for (int i = 0; i < n; i++)
        for (int o = 0; o < cout; o++) {
            float *v = &y[(size_t)i * cout + o], s = *v + b[o];
            *v = s <= 0.0f ? 0.0f : s; /* NaN stays, as cpu_relu_forward */
        }
}

/* dw (cout, cin) (+)= dy^T . x; dx (n, cin) = dy . w when dx */
static void linear_gemms(float *dx, float *dw, const float *dy, const float *x, const float *w,
                         int n, int cin, int cout, int accumulate)
{
    cpu_sgemm(1, 0, cout, cin, n, 1.0f, dy, cout, x, cin, accumulate ? 1.0f : 0.0f, dw, cin);
    if (dx)
        cpu_sgemm(0, 0, n, cin, cout, 1.0f, dy, cout, w, cin, 0.0f, dx, cin);
}

void cpu_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int n, int cin, int cout, int accumulate)
{
    if (!accumulate)
        memset(db, 0, (size_t)cout * sizeof(float));
    for (int i = 0; i < n; i++)
        for (int o = 0; o < cout; o++)
            db[o] += dy[(size_t)i * cout + o];
    linear_gemms(dx, dw, dy, x, w, n, cin, cout, accumulate);
}

void cpu_linear_relu_backward(float *dx, float *dw, float *db, float *dy, const float *y,
                              const float *x, const float *w, int n, int cin, int cout,
                              int accumulate)
{
    if (!accumulate)
        memset(db, 0, (size_t)cout * sizeof(float));
    for (int i = 0; i < n; i++)
        for (int o = 0; o < cout; o++) {
            size_t k = (size_t)i * cout + o;
            dy[k] = y[k] <= 0.0f ? 0.0f : dy[k];
            db[o] += dy[k];
        }
    linear_gemms(dx, dw, dy, x, w, n, cin, cout, accumulate);
}
