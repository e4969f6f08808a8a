/* ReLU and 2x2 max pooling on the CPU. */
#include "cpu_ops.h"

#include <string.h>

/* NaN propagates, as in PyTorch (an overflow must reach the loss scaler, not become 0). */
void cpu_relu_forward(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] <= 0.0f ? 0.0f : x[i];
}

void cpu_relu_backward(float *dx, const float *dy, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = y[i] <= 0.0f ? 0.0f : dy[i];
}

void cpu_maxpool2_forward(float *y, int32_t *arg, const float *x, int n, int c, int h, int w)
{
    int oh = h / 2, ow = w / 2;
    for (size_t p = 0; p < (size_t)n * c; p++) {
        const float *in = x + p * h * w;
        float *out = y + p * oh * ow;
        int32_t *a = arg + p * oh * ow;
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                int best = 2 * i * w + 2 * j;
                const int cand[3] = {best + 1, best + w, best + w + 1};
                for (int k = 0; k < 3; k++)
                    if (in[cand[k]] > in[best])
                        best = cand[k];
                out[i * ow + j] = in[best];
                a[i * ow + j] = best;
            }
    }
}

void cpu_maxpool2_backward(float *dx, const float *dy, const int32_t *arg, int n, int c, int h,
                           int w)
{
    int o = (h / 2) * (w / 2);
    memset(dx, 0, (size_t)n * c * h * w * sizeof(float));
    for (size_t p = 0; p < (size_t)n * c; p++)
        for (int k = 0; k < o; k++)
            dx[p * h * w + arg[p * o + k]] += dy[p * o + k];
}
