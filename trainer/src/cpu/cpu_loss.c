/* Softmax cross-entropy on the CPU (log-sum-exp with the max subtracted). */
#include "cpu_ops.h"

#include <math.h>

double cpu_softmax_ce_forward(float *prob, int *correct, const float *logits, const int32_t *labels,
                              int n, int k)
{
    double loss = 0.0;
    int ok = 0;
    for (int i = 0; i < n; i++) {
        const float *z = logits + (size_t)i * k;
        float *p = prob + (size_t)i * k;
        int arg = 0;
        for (int j = 1; j < k; j++)
            if (z[j] > z[arg])
                arg = j;
        double sum = 0.0;
        for (int j = 0; j < k; j++)
            sum += exp((double)z[j] - z[arg]);
        for (int j = 0; j < k; j++)
            p[j] = (float)(exp((double)z[j] - z[arg]) / sum);
        loss += log(sum) - ((double)z[labels[i]] - z[arg]);
        ok += arg == labels[i];
    }
    *correct = ok;
    return loss;
}

void cpu_softmax_ce_backward(float *dlogits, const float *prob, const int32_t *labels, int n, int k,
                             float scale)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < k; j++) {
            size_t q = (size_t)i * k + j;
            dlogits[q] = (prob[q] - (j == labels[i] ? 1.0f : 0.0f)) * scale;
        }
}
