/* Optimizers on the CPU: PyTorch's Adam and SGD with momentum, with loss-scale unscaling. The
 * fused steps (--fused) zero each gradient as they read it: update and zero_grad in one pass. */
#include "cpu_ops.h"

#include <math.h>

struct adam_k {
    float b1, b2, eps, step, rc2, inv_scale;
};

static struct adam_k adam_consts(float lr, float beta1, float beta2, float eps, long long t,
                                 float inv_scale)
{
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    return (struct adam_k){beta1, beta2, eps, lr / c1, 1.0f / sqrtf(c2), inv_scale};
}

static inline void adam_one(const struct adam_k *k, float *p, float g, float *m, float *v)
{
    float gi = g * k->inv_scale;
    *m = k->b1 * *m + (1.0f - k->b1) * gi;
    *v = k->b2 * *v + (1.0f - k->b2) * gi * gi;
    *p -= k->step * *m / (sqrtf(*v) * k->rc2 + k->eps);
}

void cpu_adam_step(float *p, const float *g, float *m, float *v, size_t n, float lr, float beta1,
                   float beta2, float eps, long long t, float inv_scale)
{
    struct adam_k k = adam_consts(lr, beta1, beta2, eps, t, inv_scale);
    for (size_t i = 0; i < n; i++)
        adam_one(&k, &p[i], g[i], &m[i], &v[i]);
}

void cpu_adam_step_zero(float *p, float *g, float *m, float *v, size_t n, float lr, float beta1,
                        float beta2, float eps, long long t, float inv_scale)
{
    struct adam_k k = adam_consts(lr, beta1, beta2, eps, t, inv_scale);
    for (size_t i = 0; i < n; i++) {
        adam_one(&k, &p[i], g[i], &m[i], &v[i]);
        g[i] = 0.0f;
    }
}

static inline void sgd_one(float *p, float g, float *buf, float lr, float momentum, float inv_scale)
{
    *buf = momentum * *buf + g * inv_scale;
    *p -= lr * *buf;
}

void cpu_sgd_step(float *p, const float *g, float *buf, size_t n, float lr, float momentum,
                  float inv_scale)
{
    for (size_t i = 0; i < n; i++)
        sgd_one(&p[i], g[i], &buf[i], lr, momentum, inv_scale);
}

void cpu_sgd_step_zero(float *p, float *g, float *buf, size_t n, float lr, float momentum,
                       float inv_scale)
{
    for (size_t i = 0; i < n; i++) {
        sgd_one(&p[i], g[i], &buf[i], lr, momentum, inv_scale);
        g[i] = 0.0f;
    }
}

int cpu_nonfinite(const float *g, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= !isfinite(g[i]);
    return bad;
}
