/* GPU-BP's unpacking sixteen values at a time with AVX-512 VBMI (any byte
 * of 64 to any lane, bp_unpack.h): its functions compiled for those
 * extensions alone, chosen at run time by bp_unpack.c. */
#include "bp_unpack.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define Z512 __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#define Z512_INLINE static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vbmi")))

/* Sixteen values of w bits are 2 * w bytes, all within one 64-byte load
 * (value 15's four bytes end by byte 15 * w / 8 + 4 <= 56 at w 28). Lane j
 * takes the 4 bytes from its value's first one (one byte permutation across
 * the 64), shifts its first bit down and masks, as the AVX2 path: whole
 * values at every w to 26 and 28. FIRST4: lane j's byte indices, 4 bytes
 * from its first, as a 32-bit lane. */
#define FIRST4(j, w) ((((j) * (w)) >> 3) * 0x01010101u + 0x03020100u)
#define SHIFT(j, w) (((j) * (w)) & 7)

Z512_INLINE __m512i extract16(__m512i bytes, const unsigned w)
{
    const __m512i idx = _mm512_setr_epi32(
        (int)FIRST4(0, w), (int)FIRST4(1, w), (int)FIRST4(2, w), (int)FIRST4(3, w),
        (int)FIRST4(4, w), (int)FIRST4(5, w), (int)FIRST4(6, w), (int)FIRST4(7, w),
        (int)FIRST4(8, w), (int)FIRST4(9, w), (int)FIRST4(10, w), (int)FIRST4(11, w),
        (int)FIRST4(12, w), (int)FIRST4(13, w), (int)FIRST4(14, w), (int)FIRST4(15, w));
    const __m512i sh = _mm512_setr_epi32(SHIFT(0, w), SHIFT(1, w), SHIFT(2, w), SHIFT(3, w),
                                         SHIFT(4, w), SHIFT(5, w), SHIFT(6, w), SHIFT(7, w),
                                         SHIFT(8, w), SHIFT(9, w), SHIFT(10, w), SHIFT(11, w),
                                         SHIFT(12, w), SHIFT(13, w), SHIFT(14, w), SHIFT(15, w));
    __m512i x = _mm512_srlv_epi32(_mm512_permutexvar_epi8(idx, bytes), sh);
    return _mm512_and_si512(x, _mm512_set1_epi32((int)((1u << w) - 1u)));
}

/* Sixteen gaps summed onto *carry (all lanes the sum so far): prefix sums
 * in four steps, then the carry, whose next value adds x's total and so
 * waits on no more than one add a group. *zero: the valid lanes whose gap
 * is zero. */
Z512_INLINE __m512i sum16(__m512i x, const int sum, __m512i *carry, __mmask16 *zero,
                          __mmask16 valid)
{
    if (!sum)
        return x;
    const __m512i z = _mm512_setzero_si512();
    *zero |= _mm512_mask_cmpeq_epi32_mask(valid, x, z);
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 15)); /* each lane plus the one below */
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 14));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 12));
    x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 8));
    __m512i y = _mm512_add_epi32(x, *carry);
    *carry = _mm512_add_epi32(*carry, _mm512_permutexvar_epi32(_mm512_set1_epi32(15), x));
    return y;
}

/* Groups whose 64-byte load ends within the block's nbytes straight from
 * it; the rest by a load masked at the block's last byte (nothing past it
 * read; zero) and, the last one short, a masked store. */
Z512_INLINE void unpack_w(const uint32_t *in32, uint32_t len, uint32_t *out, const unsigned w,
                          const int sum, __m512i *carry, __mmask16 *zero)
{
    const uint8_t *in = (const uint8_t *)in32;
    uint32_t nbytes = (uint32_t)(((uint64_t)len * w + 31) / 32) * 4, full = len / 16, g = 0;
    for (; g < full && g * 2 * w + 64 <= nbytes; g++)
        _mm512_storeu_si512(out + g * 16, sum16(extract16(_mm512_loadu_si512(in + g * 2 * w), w),
                                                sum, carry, zero, 0xFFFF));
    for (; g * 16 < len; g++) {
        uint32_t at = g * 2 * w, left = nbytes - at, r = len - g * 16;
        __mmask64 m = left >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << left) - 1;
        __mmask16 valid = r >= 16 ? 0xFFFF : (__mmask16)((1u << r) - 1u);
        __m512i x = extract16(_mm512_maskz_loadu_epi8(m, in + at), w);
        _mm512_mask_storeu_epi32(out + g * 16, valid, sum16(x, sum, carry, zero, valid));
    }
}

#define Z_CASE(n)                                                                                \
    case n:                                                                                      \
        unpack_w(in, len, out, n, sum, carry, zero);                                             \
        return 1;
#define Z_CASES4(n) Z_CASE(n) Z_CASE((n) + 1) Z_CASE((n) + 2) Z_CASE((n) + 3)

Z512_INLINE int unpack_any(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out,
                           const int sum, __m512i *carry, __mmask16 *zero)
{
    switch (w) {
        Z_CASES4(1)
        Z_CASES4(5)
        Z_CASES4(9)
        Z_CASES4(13)
        Z_CASES4(17)
        Z_CASES4(21)
        Z_CASE(25)
        Z_CASE(26)
        Z_CASE(28)
    default:
        return 0;
    }
}

Z512 int tdm_bp_avx512_unpack(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    __m512i carry = _mm512_setzero_si512();
    __mmask16 zero = 0;
    return unpack_any(in, len, w, out, 0, &carry, &zero);
}

Z512 int tdm_bp_avx512_unpack_sum(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                                  uint32_t *out, int *zero_gap)
{
    __m512i carry = _mm512_set1_epi32((int)base);
    __mmask16 zero = 0;
    int done = unpack_any(in, len, w, out, 1, &carry, &zero);
    *zero_gap = zero != 0;
    return done;
}

int tdm_bp_avx512_ok(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vbmi");
}
#else
int tdm_bp_avx512_ok(void)
{
    return 0;
}

int tdm_bp_avx512_unpack(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    (void)in, (void)len, (void)w, (void)out;
    return 0;
}

int tdm_bp_avx512_unpack_sum(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             uint32_t *out, int *zero_gap)
{
    (void)in, (void)len, (void)w, (void)base, (void)out;
    *zero_gap = 0;
    return 0;
}
#endif
