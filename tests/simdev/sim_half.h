/* sim_half.h: fp16 and bf16 to and from fp32 on the host (round to nearest even), for the
 * simulated cuBLAS and cuDNN, which compute in fp32 on 16-bit data as the real ones do. */
#ifndef GP_TESTS_SIM_HALF_H
#define GP_TESTS_SIM_HALF_H

#include <library_types.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline float sim_bf2f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t sim_f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f))
        return 0x7fc0;
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float sim_h2f(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

static inline uint16_t sim_f2h(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    float a = fabsf(f);
    if (isnan(f))
        return 0x7e00;
    if (a >= 65520.0f) /* rounds to infinity */
        return sign | 0x7c00;
    if (a < ldexpf(1, -14)) /* subnormal: multiples of 2^-24 */
        return sign | (uint16_t)nearbyintf(a * ldexpf(1, 24));
    int e;
    float m = frexpf(a, &e);                          /* a = m 2^e, m in [0.5, 1) */
    uint32_t q = (uint32_t)nearbyintf(ldexpf(m, 11)); /* 11 significant bits */
    if (q == 2048) {
        q = 1024;
        e++;
    }
    return sign | (uint16_t)((uint32_t)(e + 14) << 10) | (uint16_t)(q & 0x3ff);
}

/* n values of type t at src as fp32 in dst. */
static inline void sim_to_f32(float *dst, const void *src, cudaDataType t, size_t n)
{
    const uint16_t *h = src;
    for (size_t i = 0; i < n; i++)
        dst[i] = t == CUDA_R_32F   ? ((const float *)src)[i]
                 : t == CUDA_R_16F ? sim_h2f(h[i])
                                   : sim_bf2f(h[i]);
}

static inline void sim_from_f32(void *dst, const float *src, cudaDataType t, size_t n)
{
    uint16_t *h = dst;
    for (size_t i = 0; i < n; i++) {
        if (t == CUDA_R_32F)
            ((float *)dst)[i] = src[i];
        else
            h[i] = t == CUDA_R_16F ? sim_f2h(src[i]) : sim_f2bf(src[i]);
    }
}

static inline size_t sim_type_size(cudaDataType t)
{
    return t == CUDA_R_32F ? 4 : 2;
}

#endif
