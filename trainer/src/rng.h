/* trainer/src/rng.h: small deterministic random numbers (splitmix64). Streams are derived from
 * (seed, purpose, index) by hashing, so results do not depend on thread count or order. */
#ifndef GP_TRAINER_RNG_H
#define GP_TRAINER_RNG_H

#include <stdint.h>

/* One splitmix64 step: advances *state and returns 64 well-mixed bits. */
static inline uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A stream state for (seed, a, b): e.g. (seed, epoch, sample) for augmentation. */
static inline uint64_t rng_stream(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t s = seed ^ 0x5851F42D4C957F2Dull;
    s = rng_next(&s) ^ a;
    s = rng_next(&s) ^ b;
    return rng_next(&s);
}

/* Uniform in [0, n) (n > 0); the tiny modulo bias is irrelevant here. */
static inline uint32_t rng_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)((rng_next(state) >> 32) % n);
}

/* Uniform float in [lo, hi). */
static inline float rng_uniform(uint64_t *state, float lo, float hi)
{
    return lo + (hi - lo) * (float)((rng_next(state) >> 40) * (1.0 / 16777216.0));
}

#endif
