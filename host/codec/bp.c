/* GPU-BP (Mallia et al. 2019): binary packing in blocks of 128 or 256 with no
 * per-block header. A block of len values packed at w bits takes
 * nw = ceil(len * w / 32) words, and the decoder recovers w from the endpoints
 * alone as min(32, floor(32 * nw / len)). The encoder picks the smallest w
 * that holds the block's largest gap, then packs at that recovered width
 * (which is >= it and gives the same nw), so full blocks use exactly w and
 * a short last block never needs a header either. Values are packed from bit
 * i * w, little-endian across words. Gaps are taken from the block base
 * (codec.h), so a gap of 2^32-1 is simply w = 32. */
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bp_unpack.h"
#include "codec.h"
#include "codec_dev.h"
#include "tandem.h"

/* The width the decoder derives from a block's word count. */
static uint32_t bp_width(uint32_t nw, uint32_t len)
{
    if (len == 0)
        return 0;
    uint64_t w = (uint64_t)nw * 32 / len;
    return w > 32 ? 32 : (uint32_t)w;
}

static uint32_t bits_needed(uint32_t v)
{
    uint32_t b = 0;
    while (b < 32 && (v >> b) != 0)
        b++;
    return b;
}

static void pack(uint32_t *w, const uint32_t *v, uint32_t len, uint32_t width)
{
    for (uint32_t i = 0; width && i < len; i++) {
        uint64_t bit = (uint64_t)i * width;
        uint32_t wi = (uint32_t)(bit >> 5), sh = (uint32_t)(bit & 31);
        w[wi] |= v[i] << sh;
        if (sh + width > 32)
            w[wi + 1] |= v[i] >> (32 - sh);
    }
}

static uint32_t unpack_one(const uint32_t *w, uint32_t nw, uint32_t i, uint32_t width)
{
    if (width == 0)
        return 0;
    uint64_t bit = (uint64_t)i * width;
    uint32_t wi = (uint32_t)(bit >> 5), sh = (uint32_t)(bit & 31);
    uint64_t x = w[wi] | (wi + 1 < nw ? (uint64_t)w[wi + 1] << 32 : 0);
    x >>= sh;
    return width == 32 ? (uint32_t)x : (uint32_t)x & ((1u << width) - 1u);
}

static int bp_encode(int codec, uint32_t block, const uint32_t *values, size_t n, int delta,
                     tdm_encoded *out, tdm_err *err)
{
    int rc = tdm_encoded_init(out, codec, n, block, delta, err);
    uint32_t *gaps = rc == TDM_OK ? malloc(n ? n * 4 : 4) : NULL;
    if (rc == TDM_OK && gaps) {
        out->words = calloc(n ? n : 1, 4); /* w <= 32: never more words than values */
        if (!out->words)
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu values", n);
    } else if (rc == TDM_OK) {
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu values", n);
    }
    if (rc == TDM_OK)
        rc = tdm_codec_gaps(values, n, delta, out, gaps, err);
    size_t pos = 0;
    for (uint32_t b = 0; rc == TDM_OK && b < out->nblocks; b++) {
        const uint32_t *g = gaps + (size_t)b * block;
        uint32_t len = tdm_encoded_block_len(out, b), maxg = 0;
        for (uint32_t i = 0; i < len; i++)
            maxg |= g[i];
        uint32_t nw = (uint32_t)(((uint64_t)len * bits_needed(maxg) + 31) / 32);
        out->offsets[b] = (uint32_t)pos;
        pack(out->words + pos, g, len, bp_width(nw, len));
        pos += nw;
    }
    if (rc == TDM_OK) {
        out->offsets[out->nblocks] = (uint32_t)pos;
        out->nwords = pos;
    }
    free(gaps);
    return rc;
}

static int bp128_encode(const uint32_t *v, size_t n, int delta, tdm_encoded *out, tdm_err *err)
{
    return bp_encode(TDM_CODEC_BP128, 128, v, n, delta, out, err);
}

static int bp256_encode(const uint32_t *v, size_t n, int delta, tdm_encoded *out, tdm_err *err)
{
    return bp_encode(TDM_CODEC_BP256, 256, v, n, delta, out, err);
}

/* A block's word count must be one the encoder can produce for its length. */
static int check_block(const tdm_encoded *enc, uint32_t b, tdm_err *err)
{
    uint32_t nw = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    uint32_t w = bp_width(nw, len);
    if (nw > len || ((uint64_t)len * w + 31) / 32 != nw)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "%s block %u: %u words cannot hold %u packed values",
                           enc->codec == TDM_CODEC_BP128 ? "bp128" : "bp256", b, nw, len);
    return TDM_OK;
}

/* Sums gaps onto the block base; a zero gap (after the list's first value)
 * or a sum past 2^32-1 means a corrupt payload. */
static int add_gap(uint32_t b, uint32_t i, uint32_t *acc, uint32_t g,
                   tdm_err *err)
{
    if ((g == 0 && (b || i)) || *acc > UINT32_MAX - g)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "block %u value %u: docids not increasing or past 2^32-1", b, i);
    *acc += g;
    return TDM_OK;
}

/* Gaps summed onto the base in place, without a branch: 0 where they are
 * docids increasing below 2^32 (a zero gap allowed only first in the list).
 * With SSE2 four lanes at a time, wrapping: a sum past 2^32 - 1 first shows
 * as a value below its predecessor (a gap is below 2^32), a zero gap as one
 * equal to it, so "each value above the one before" (the first of the list
 * at or above the base) is the same test. */
#if defined(__SSE2__)
/* The summed values rise strictly from the base (the list's first, b 0,
 * may equal it): 0, else -1. */
static int rising(const uint32_t *v, uint32_t len, uint32_t base, uint32_t b)
{
    uint32_t bad = b ? v[0] <= base : v[0] < base;
    for (uint32_t i = 1; i < len; i++)
        bad |= v[i] <= v[i - 1];
    return bad ? -1 : 0;
}

static int sum_gaps(uint32_t *v, uint32_t len, uint32_t base, uint32_t b)
{
    if (!len)
        return 0;
    const __m128i sign = _mm_set1_epi32((int)0x80000000u);
    __m128i carry = _mm_set1_epi32((int)base), ok = _mm_set1_epi32(-1);
    uint32_t i = 0;
    for (; i + 4 <= len; i += 4) {
        __m128i x = _mm_loadu_si128((const __m128i *)(v + i));
        x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
        x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
        x = _mm_add_epi32(x, carry);
        /* each lane above its predecessor (the lanes below; the last one
           carried in), unsigned */
        __m128i prev = _mm_or_si128(_mm_slli_si128(x, 4), _mm_srli_si128(carry, 12));
        ok = _mm_and_si128(ok, _mm_cmpgt_epi32(_mm_xor_si128(x, sign),
                                               _mm_xor_si128(prev, sign)));
        _mm_storeu_si128((__m128i *)(v + i), x);
        carry = _mm_shuffle_epi32(x, 0xFF);
    }
    uint32_t acc = (uint32_t)_mm_cvtsi128_si32(carry), bad = 0;
    for (; i < len; i++) {
        uint32_t prev = acc;
        acc += v[i];
        bad |= acc <= prev;
        v[i] = acc;
    }
    /* a failed test may be the list's first value equal to the base, which
       is allowed: the exact test then (rare: block 0 of a list with docid 0,
       or damage) */
    return bad || _mm_movemask_epi8(ok) != 0xFFFF ? rising(v, len, base, b) : 0;
}
#else
static int sum_gaps(uint32_t *v, uint32_t len, uint32_t base, uint32_t b)
{
    uint64_t acc = base;
    uint32_t zero = b > 0 && len && v[0] == 0;
    for (uint32_t i = 0; i < len; i++) {
        zero |= i > 0 && v[i] == 0;
        acc += v[i];
        v[i] = (uint32_t)acc;
    }
    return zero || acc > UINT32_MAX ? -1 : 0;
}
#endif

/* The block unpacked whole (bp_unpack.c). Docid gaps summed as they are
 * unpacked where no sum can pass 2^32 - 1 (its width and base tell: nearly
 * every block), else, or where that finds a zero gap, unpacked then summed
 * with sum_gaps's exact test; a damaged one unpacked again to name its
 * first bad value (add_gap). */
static int bp_decode_block(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    int rc = check_block(enc, b, err);
    if (rc)
        return rc;
    uint32_t nw = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    uint32_t w = bp_width(nw, len);
    const uint32_t *words = enc->words + enc->offsets[b];
    if (enc->delta && tdm_bp_unpack_sum(words, len, w, enc->bases[b], b == 0, out) == 0)
        return TDM_OK;
    tdm_bp_unpack(words, len, w, out);
    if (!enc->delta || sum_gaps(out, len, enc->bases[b], b) == 0)
        return TDM_OK;
    tdm_bp_unpack(words, len, w, out);
    uint32_t acc = enc->bases[b];
    for (uint32_t i = 0; rc == TDM_OK && i < len; i++)
        rc = add_gap(b, i, &acc, out[i], err);
    return rc;
}

/* Random access: unpack value i, and for docids the gaps before it in its block. */
static int bp_get(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err)
{
    if (i >= enc->n)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "index %u out of range (%u values)", i,
                           enc->n);
    uint32_t b = i / enc->block_size, k = i % enc->block_size;
    int rc = check_block(enc, b, err);
    uint32_t nw = enc->offsets[b + 1] - enc->offsets[b];
    uint32_t w = bp_width(nw, tdm_encoded_block_len(enc, b));
    const uint32_t *words = enc->words + enc->offsets[b];
    if (rc == TDM_OK && !enc->delta) {
        *value = unpack_one(words, nw, k, w);
        return TDM_OK;
    }
    uint32_t acc = enc->bases[b];
    for (uint32_t j = 0; rc == TDM_OK && j <= k; j++)
        rc = add_gap(b, j, &acc, unpack_one(words, nw, j, w), err);
    if (rc == TDM_OK)
        *value = acc;
    return rc;
}

static int bp_dev_check(const tdm_encoded *enc, tdm_err *err)
{
    int rc = TDM_OK;
    for (uint32_t b = 0; rc == TDM_OK && b < enc->nblocks; b++)
        rc = check_block(enc, b, err);
    return rc;
}

static const tdm_codec_dev_ops bp128_dev = {
    .kernel = "tdm_bp128_decode",
    .get_kernel = "tdm_bp128_get",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
    .check = bp_dev_check,
};

static const tdm_codec_dev_ops bp256_dev = {
    .kernel = "tdm_bp256_decode",
    .get_kernel = "tdm_bp256_get",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
    .check = bp_dev_check,
};

const tdm_codec_ops tdm_codec_bp128_ops = {
    .id = TDM_CODEC_BP128,
    .name = "bp128",
    .block_size = 128,
    .encode = bp128_encode,
    .decode_block = bp_decode_block,
    .increasing_checked = 1,
    .get = bp_get,
    .get_cheap = 1,
    .dev = &bp128_dev,
};

const tdm_codec_ops tdm_codec_bp256_ops = {
    .id = TDM_CODEC_BP256,
    .name = "bp256",
    .block_size = 256,
    .encode = bp256_encode,
    .decode_block = bp_decode_block,
    .increasing_checked = 1,
    .get = bp_get,
    .get_cheap = 1,
    .dev = &bp256_dev,
};
