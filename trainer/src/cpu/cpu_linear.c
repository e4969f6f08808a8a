/* Fully connected layer on OpenBLAS: three GEMMs and a column sum. */
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

void cpu_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int n, int cin, int cout, int accumulate)
{
    /* dw (cout, cin) (+)= dy^T (cout, n) . x (n, cin) */
    cpu_sgemm(1, 0, cout, cin, n, 1.0f, dy, cout, x, cin, accumulate ? 1.0f : 0.0f, dw, cin);
    if (!accumulate)
        memset(db, 0, (size_t)cout * sizeof(float));
    for (int i = 0; i < n; i++)
        for (int o = 0; o < cout; o++)
            db[o] += dy[(size_t)i * cout + o];
    if (dx) /* dx (n, cin) = dy (n, cout) . w (cout, cin) */
        cpu_sgemm(0, 0, n, cin, cout, 1.0f, dy, cout, w, cin, 0.0f, dx, cin);
}
