/* GPU-BP's bit unpacking (bp_unpack.h): the scalar path, on x86-64 an AVX2
 * one (its functions compiled for AVX2 alone, so the build needs no -mavx2
 * and runs on any x86-64), and the choice at run time among them and
 * bp_unpack_avx512.c's. */
#include "bp_unpack.h"

#include <stdatomic.h>
#include <string.h>

/* The low w bits (w 1..32). */
static inline uint32_t low_bits(unsigned w)
{
    return w >= 32 ? 0xFFFFFFFFu : (1u << w) - 1u;
}

/* 32 values of w bits (1..32) from in[0..w): with w a constant each value's
 * words and shifts are constants, and the loop unrolls into straight code. */
static inline __attribute__((always_inline)) void unpack32(const uint32_t *in, uint32_t *out,
                                                           const unsigned w)
{
    const uint32_t mask = low_bits(w);
#pragma GCC unroll 32
    for (unsigned j = 0; j < 32; j++) {
        unsigned bit = j * w, i = bit >> 5, s = bit & 31;
        uint32_t v = in[i] >> s;
        if (s && s + w > 32)
            v |= in[i + 1] << (32 - s);
        out[j] = v & mask;
    }
}

#define UNPACK_CASE(n)                                                                           \
    case n:                                                                                      \
        for (uint32_t g = 0; g < groups; g++)                                                    \
            unpack32(in + g * (n), out + g * 32, (n));                                           \
        break;
#define UNPACK_CASES4(n) UNPACK_CASE(n) UNPACK_CASE((n) + 1) UNPACK_CASE((n) + 2) UNPACK_CASE((n) + 3)

/* Whole groups of 32 by the routine of their width, the rest one by one. */
void tdm_bp_unpack_scalar(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    if (w == 0) {
        memset(out, 0, len * sizeof *out);
        return;
    }
    uint32_t groups = len / 32;
    switch (w) {
        UNPACK_CASES4(1)
        UNPACK_CASES4(5)
        UNPACK_CASES4(9)
        UNPACK_CASES4(13)
        UNPACK_CASES4(17)
        UNPACK_CASES4(21)
        UNPACK_CASES4(25)
        UNPACK_CASES4(29)
    default:
        break;
    }
    const uint32_t mask = low_bits(w);
    for (uint32_t j = groups * 32; j < len; j++) {
        uint64_t bit = (uint64_t)j * w;
        uint32_t i = (uint32_t)(bit >> 5), s = (uint32_t)(bit & 31);
        uint32_t v = in[i] >> s;
        if (s && s + w > 32) /* the value's last bit lies in word i + 1 < the block's */
            v |= in[i + 1] << (32 - s);
        out[j] = v & mask;
    }
}

/* No sum of the block can pass 2^32 - 1: base + len * (2^w - 1) does not. */
static int sum_fits(uint32_t len, uint32_t w, uint32_t base)
{
    uint64_t most = low_bits(w);
    return (uint64_t)base + len * most <= 0xFFFFFFFFu;
}

int tdm_bp_unpack_sum_scalar(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             int first_zero_ok, uint32_t *out)
{
    if (!sum_fits(len, w, base))
        return -1;
    tdm_bp_unpack_scalar(in, len, w, out);
    uint32_t acc = base, zero = 0;
    for (uint32_t i = 0; i < len; i++) {
        zero |= (out[i] == 0) & (i > 0 || !first_zero_ok);
        out[i] = acc += out[i];
    }
    return zero ? -1 : 0;
}

/* A zero gap was marked: it is allowed only first, and where first_ok.
 * With no sum wrapping, gap i is zero exactly where value i equals the one
 * before (or the base). */
static int zero_allowed(const uint32_t *out, uint32_t len, int first_ok)
{
    if (!first_ok)
        return 0;
    for (uint32_t i = 1; i < len; i++)
        if (out[i] == out[i - 1])
            return 0;
    return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2")))

/* Eight values of w bits are w bytes. Values 0-3 of a group are read from a
 * 16-byte load at its first byte, 4-7 from one at byte w / 2, where value 4
 * starts at bit 4 * (w & 1). A lane takes the 4 bytes from its value's first
 * one (a byte shuffle within each 128-bit half), shifts its first bit down
 * (a shift a lane) and masks: that holds the value whole where its bit in
 * its first byte plus w is at most 32, which is every w to 26 and 28 (at 28
 * values start at bit 0 or 4 of a byte). BITPOS: value j's first bit from
 * its half's load. */
#define BITPOS(j, w) (((j) & 3) * (w) + ((j) >> 2) * 4 * ((w) & 1))
#define BYTE(j, k, w) (char)((BITPOS(j, w) >> 3) + (k))
#define BYTES4(j, w) BYTE(j, 0, w), BYTE(j, 1, w), BYTE(j, 2, w), BYTE(j, 3, w)

/* The group's 8 values from its two loads: `off` adds to each half's byte
 * indices (a masked load starts at a word, before its group's byte). */
AVX2_INLINE __m256i extract8(__m128i lo, __m128i hi, __m256i off, const unsigned w)
{
    const __m256i idx = _mm256_setr_epi8(BYTES4(0, w), BYTES4(1, w), BYTES4(2, w), BYTES4(3, w),
                                         BYTES4(4, w), BYTES4(5, w), BYTES4(6, w), BYTES4(7, w));
    const __m256i sh = _mm256_setr_epi32(BITPOS(0, w) & 7, BITPOS(1, w) & 7, BITPOS(2, w) & 7,
                                         BITPOS(3, w) & 7, BITPOS(4, w) & 7, BITPOS(5, w) & 7,
                                         BITPOS(6, w) & 7, BITPOS(7, w) & 7);
    const __m256i mask = _mm256_set1_epi32((int)((1u << w) - 1u));
    __m256i x = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    x = _mm256_srlv_epi32(_mm256_shuffle_epi8(x, _mm256_add_epi8(idx, off)), sh);
    return _mm256_and_si256(x, mask);
}

/* The group at `in`, its 16-byte loads within the block. */
AVX2_INLINE __m256i group8(const uint8_t *in, const unsigned w)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)in);
    __m128i hi = _mm_loadu_si128((const __m128i *)(in + (w >> 1)));
    return extract8(lo, hi, _mm256_setzero_si256(), w);
}

/* 16 bytes from the word holding byte `at` of the block, the words at or
 * past its end (nbytes, a whole number of words) masked: never read, zero.
 * *off: at's byte within the word. */
AVX2_INLINE __m128i load_masked(const uint8_t *in, uint32_t at, uint32_t nbytes, int *off)
{
    int word = (int)(at >> 2), left = (int)(nbytes >> 2) - word;
    __m128i m = _mm_cmpgt_epi32(_mm_set1_epi32(left), _mm_setr_epi32(0, 1, 2, 3));
    *off = (int)(at & 3);
    return _mm_maskload_epi32((const int *)(left > 0 ? in + 4 * word : in), m);
}

/* The group at byte `at` of the block whose loads would run past its end:
 * masked loads, so a half's last bytes read as zero. Every byte index plus
 * its offset stays in its half: at most 12 + 3 (widths to 26; at 28 a group
 * starts on a word). */
AVX2_INLINE __m256i group8_tail(const uint8_t *in, uint32_t at, uint32_t nbytes, const unsigned w)
{
    int olo, ohi;
    __m128i lo = load_masked(in, at, nbytes, &olo);
    __m128i hi = load_masked(in, at + (w >> 1), nbytes, &ohi);
    __m256i off = _mm256_inserti128_si256(_mm256_set1_epi8((char)olo), _mm_set1_epi8((char)ohi), 1);
    return extract8(lo, hi, off, w);
}

/* A block's running sum: `carry` holds the sum so far in every lane, `zero`
 * a lane's mark of a zero gap seen. */
typedef struct {
    __m256i carry, zero;
} sums;

/* Eight gaps x summed onto s's carry (with sum; as they are without):
 * prefix sums within each half, the low half's total onto the high one,
 * then the carry. The carry's next value adds x's total, which does not
 * wait for the carry, so one add a group is the chain. `valid`: the lanes
 * that are values of the block (a zero in the others is padding). */
AVX2_INLINE __m256i sum8(__m256i x, const int sum, sums *s, __m256i valid)
{
    if (!sum)
        return x;
    s->zero = _mm256_or_si256(s->zero,
                              _mm256_and_si256(_mm256_cmpeq_epi32(x, _mm256_setzero_si256()), valid));
    x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4));
    x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
    __m256i low3 = _mm256_shuffle_epi32(x, 0xFF); /* lane 3 across the low half */
    x = _mm256_add_epi32(x, _mm256_permute2x128_si256(low3, low3, 0x08));
    __m256i y = _mm256_add_epi32(x, s->carry);
    s->carry = _mm256_add_epi32(s->carry, _mm256_permutevar8x32_epi32(x, _mm256_set1_epi32(7)));
    return y;
}

/* The block's groups whose loads end within its nbytes straight from it,
 * the rest (a load would run past the block's end, or the last group is
 * short) by masked loads, and a short last group stored masked: nothing
 * read or written past the block. */
AVX2_INLINE void unpack_w(const uint32_t *in32, uint32_t len, uint32_t *out, const unsigned w,
                          const int sum, sums *s)
{
    const uint8_t *in = (const uint8_t *)in32;
    const __m256i all = _mm256_set1_epi32(-1);
    uint32_t nbytes = (uint32_t)(((uint64_t)len * w + 31) / 32) * 4, reach = (w >> 1) + 16;
    uint32_t full = len / 8, safe = nbytes >= reach ? (nbytes - reach) / w + 1 : 0;
    if (safe > full)
        safe = full;
    uint32_t g = 0;
    for (; g < safe; g++)
        _mm256_storeu_si256((__m256i *)(out + g * 8), sum8(group8(in + g * w, w), sum, s, all));
    for (; g < full; g++)
        _mm256_storeu_si256((__m256i *)(out + g * 8),
                            sum8(group8_tail(in, g * w, nbytes, w), sum, s, all));
    if (len % 8) {
        __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(len % 8)),
                                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_epi32((int *)(out + full * 8), valid,
                               sum8(group8_tail(in, full * w, nbytes, w), sum, s, valid));
    }
}

#define AVX2_CASE(n)                                                                             \
    case n:                                                                                      \
        unpack_w(in, len, out, n, sum, s);                                                       \
        return 1;
#define AVX2_CASES4(n) AVX2_CASE(n) AVX2_CASE((n) + 1) AVX2_CASE((n) + 2) AVX2_CASE((n) + 3)

/* 1 done; 0 for widths 0, 27, 29-32 (never seen but in a list's rare huge
 * gaps), which stay scalar. */
AVX2_INLINE int unpack_any(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out,
                           const int sum, sums *s)
{
    switch (w) {
        AVX2_CASES4(1)
        AVX2_CASES4(5)
        AVX2_CASES4(9)
        AVX2_CASES4(13)
        AVX2_CASES4(17)
        AVX2_CASES4(21)
        AVX2_CASE(25)
        AVX2_CASE(26)
        AVX2_CASE(28)
    default:
        return 0;
    }
}

AVX2 static void unpack_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    sums none;
    if (!unpack_any(in, len, w, out, 0, &none))
        tdm_bp_unpack_scalar(in, len, w, out);
}

AVX2 static int unpack_sum_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                                int first_zero_ok, uint32_t *out)
{
    if (!sum_fits(len, w, base))
        return -1;
    sums s = {_mm256_set1_epi32((int)base), _mm256_setzero_si256()};
    if (!unpack_any(in, len, w, out, 1, &s))
        return tdm_bp_unpack_sum_scalar(in, len, w, base, first_zero_ok, out);
    if (_mm256_testz_si256(s.zero, s.zero) || zero_allowed(out, len, first_zero_ok))
        return 0;
    return -1;
}

static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#else
static int have_avx2(void)
{
    return 0;
}

static void unpack_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    tdm_bp_unpack_scalar(in, len, w, out);
}

static int unpack_sum_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                           int first_zero_ok, uint32_t *out)
{
    return tdm_bp_unpack_sum_scalar(in, len, w, base, first_zero_ok, out);
}
#endif

static int unpack_sum_avx512(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             int first_zero_ok, uint32_t *out)
{
    if (!sum_fits(len, w, base))
        return -1;
    int zero;
    if (!tdm_bp_avx512_unpack_sum(in, len, w, base, out, &zero))
        return tdm_bp_unpack_sum_scalar(in, len, w, base, first_zero_ok, out);
    return !zero || zero_allowed(out, len, first_zero_ok) ? 0 : -1;
}

enum { PATH_SCALAR = 1, PATH_AVX2, PATH_AVX512 };

/* The CPU's best path, asked once (0: not yet). */
static int best_path(void)
{
    static _Atomic int path;
    int p = atomic_load_explicit(&path, memory_order_relaxed);
    if (!p) {
        p = tdm_bp_avx512_ok() ? PATH_AVX512 : have_avx2() ? PATH_AVX2 : PATH_SCALAR;
        atomic_store_explicit(&path, p, memory_order_relaxed);
    }
    return p;
}

int tdm_bp_unpack_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    if (!have_avx2())
        return 0;
    unpack_avx2(in, len, w, out);
    return 1;
}

int tdm_bp_unpack_avx512(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    if (!tdm_bp_avx512_ok())
        return 0;
    if (!tdm_bp_avx512_unpack(in, len, w, out))
        tdm_bp_unpack_scalar(in, len, w, out);
    return 1;
}

void tdm_bp_unpack(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    switch (best_path()) {
    case PATH_AVX512:
        if (!tdm_bp_avx512_unpack(in, len, w, out))
            tdm_bp_unpack_scalar(in, len, w, out);
        break;
    case PATH_AVX2:
        unpack_avx2(in, len, w, out);
        break;
    default:
        tdm_bp_unpack_scalar(in, len, w, out);
        break;
    }
}

int tdm_bp_unpack_sum_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                           int first_zero_ok, uint32_t *out)
{
    return have_avx2() ? unpack_sum_avx2(in, len, w, base, first_zero_ok, out) : 1;
}

int tdm_bp_unpack_sum_avx512(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             int first_zero_ok, uint32_t *out)
{
    return tdm_bp_avx512_ok() ? unpack_sum_avx512(in, len, w, base, first_zero_ok, out) : 1;
}

int tdm_bp_unpack_sum(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                      int first_zero_ok, uint32_t *out)
{
    switch (best_path()) {
    case PATH_AVX512:
        return unpack_sum_avx512(in, len, w, base, first_zero_ok, out);
    case PATH_AVX2:
        return unpack_sum_avx2(in, len, w, base, first_zero_ok, out);
    default:
        return tdm_bp_unpack_sum_scalar(in, len, w, base, first_zero_ok, out);
    }
}
