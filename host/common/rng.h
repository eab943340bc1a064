/* The one pseudo-random generator of the project: splitmix64 (Steele, Lea
 * and Flood 2014), 64 bits of state, every seed (0 included) good, and the
 * same sequence on every platform, so a seed names a list, a collection or a
 * test input for good. Not for anything secret.
 *
 * The draws below are defined on top of tdm_rng_next and must not change:
 * the list and collection generators (tandem gen) and the tests' inputs are
 * fixed by them. A tdm_rng is plain state: one per thread (or per stream). */
#ifndef TDM_COMMON_RNG_H
#define TDM_COMMON_RNG_H

#include <stdint.h>

typedef struct tdm_rng {
    uint64_t s;
} tdm_rng;

static inline void tdm_rng_seed(tdm_rng *r, uint64_t seed) { r->s = seed; }

/* The next 64 random bits. */
static inline uint64_t tdm_rng_next(tdm_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* 32 random bits (the high half of a draw: the better bits). */
static inline uint32_t tdm_rng_u32(tdm_rng *r) { return (uint32_t)(tdm_rng_next(r) >> 32); }

/* Uniform in [0, bound), bound >= 1, without modulo bias: Lemire's
 * multiply-and-reject ("Fast random integer generation in an interval",
 * 2019). */
static inline uint32_t tdm_rng_below(tdm_rng *r, uint32_t bound)
{
    uint64_t m = (uint64_t)tdm_rng_u32(r) * bound;
    if ((uint32_t)m < bound) {
        uint32_t t = (uint32_t)(-bound) % bound;
        while ((uint32_t)m < t)
            m = (uint64_t)tdm_rng_u32(r) * bound;
    }
    return (uint32_t)(m >> 32);
}

/* Uniform in [lo, hi], both included; lo <= hi (0 .. UINT32_MAX is fine). */
static inline uint32_t tdm_rng_range(tdm_rng *r, uint32_t lo, uint32_t hi)
{
    uint32_t span = hi - lo + 1u;   /* 0: the whole 32-bit range */
    return span ? lo + tdm_rng_below(r, span) : tdm_rng_u32(r);
}

/* Uniform in [0, 1) on the 2^53 grid. */
static inline double tdm_rng_double(tdm_rng *r)
{
    return (double)(tdm_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in (0, 1): never 0 (nor 1), so a log or a quotient stays finite. */
static inline double tdm_rng_open01(tdm_rng *r)
{
    return ((double)(tdm_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

#endif
