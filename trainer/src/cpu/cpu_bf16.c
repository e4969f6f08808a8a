/* bf16 autocast on the CPU, as torch.autocast("cpu", dtype=torch.bfloat16) runs it: GEMMs (the
 * linear and convolution layers, PyTorch's lower-precision list) take bf16 inputs and accumulate
 * in fp32; their outputs are rounded to bf16 by the backend; the loss (cross-entropy, on the fp32
 * list) and the optimizer (fp32 master weights) stay fp32; ReLU and max-pool run on the bf16
 * values they are given, where rounding commutes with them.
 *
 * The GEMM: OpenBLAS's cblas_sbgemm (bf16 inputs, fp32 accumulation and output) where the
 * loaded library exports it. Debian's OpenBLAS 0.3.21 does not (nm -D shows only
 * support_avx512_bf16), so there the inputs are rounded to bf16 values held in fp32 and
 * multiplied by cblas_sgemm: a product of two bf16 values is exact in fp32, so the result is
 * sbgemm's up to the order of the fp32 sums, but the rounding is one more pass over each input
 * and no faster GEMM runs (the speed is measured by bench/bench_amp_cpu.sh). */
#include "cpu_ops.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local struct cpu_autocast *current;

void cpu_autocast_begin(struct cpu_autocast *ac)
{
    current = ac;
}

void cpu_autocast_end(void)
{
    current = NULL;
}

struct cpu_autocast *cpu_autocast_current(void)
{
    return current;
}

void cpu_autocast_free(struct cpu_autocast *ac)
{
    free(ac->buf[0]);
    free(ac->buf[1]);
    memset(ac, 0, sizeof(*ac));
}

void cpu_round_bf16(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = cpu_bf16_round(p[i]);
}

/* Scratch i of at least `bytes`, or NULL (ac->failed set). */
static void *scratch(struct cpu_autocast *ac, int i, size_t bytes)
{
    if (ac->cap[i] < bytes) {
        void *p = realloc(ac->buf[i], bytes);
        if (!p) {
            ac->failed = 1;
            return NULL;
        }
        ac->buf[i] = p;
        ac->cap[i] = bytes;
    }
    return ac->buf[i];
}

/* src (n floats) rounded to bf16 into scratch i: as fp32 values, or as bf16 bits for sbgemm. */
static const void *cast_input(struct cpu_autocast *ac, int i, const float *src, size_t n, int bits)
{
    if (bits) {
        uint16_t *dst = scratch(ac, i, n * sizeof(uint16_t));
        for (size_t k = 0; dst && k < n; k++)
            dst[k] = cpu_bf16_bits(src[k]);
        return dst;
    }
    float *dst = scratch(ac, i, n * sizeof(float));
    for (size_t k = 0; dst && k < n; k++)
        dst[k] = cpu_bf16_round(src[k]);
    return dst;
}

int cpu_autocast_gemm_inputs(struct cpu_autocast *ac, int trans_a, int trans_b, int m, int n, int k,
                             const float *a, int lda, const float *b, int ldb, int bits,
                             const void **ra, const void **rb)
{
    size_t na = (size_t)(trans_a ? k : m) * (size_t)lda;
    size_t nb = (size_t)(trans_b ? n : k) * (size_t)ldb;
    *ra = cast_input(ac, 0, a, na, bits);
    *rb = cast_input(ac, 1, b, nb, bits);
    return *ra && *rb;
}
