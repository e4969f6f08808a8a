/* Optimizers on the CPU: PyTorch's Adam and SGD with momentum, with loss-scale unscaling. */
#include "cpu_ops.h"

#include <math.h>

void cpu_adam_step(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
                   float beta2, float eps, long long t, float inv_scale)
{
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    float step = lr / c1, rc2 = 1.0f / sqrtf(c2);
    for (size_t i = 0; i < n; i++) {
        float gi = g[i] * inv_scale;
        m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
        v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
        p[i] -= step * m[i] / (sqrtf(v[i]) * rc2 + eps);
    }
}

void cpu_sgd_step(float *p, const float *g, float *buf, size_t n, float lr, float momentum,
                  float inv_scale)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = momentum * buf[i] + g[i] * inv_scale;
        p[i] -= lr * buf[i];
    }
}

int cpu_nonfinite(const float *g, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= !isfinite(g[i]);
    return bad;
}
