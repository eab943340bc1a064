/* Partitioned Elias-Fano (Griffin, Liu 2018): partitions of 128 values, each
 * an Elias-Fano code of its values relative to the partition's base.
 *
 * A partition holds x[k] = v[k] - base (docids, delta = 1) or the running
 * sum x[k] = v[0] + ... + v[k] (frequencies, delta = 0, so that the sequence
 * is monotone). Its payload:
 *
 *   word 0        header: bits 0-7 l, bits 8-15 kind (TDM_PEF_EF)
 *   low bits      ceil(len * l / 32) words: x[k] mod 2^l at bit k * l
 *   high bits     ceil(((x[len-1] >> l) + len) / 32) words: bit (x[k] >> l) + k
 *                 set for every k, the rest zero
 *
 * with l = floor(log2((x[len-1] + 1) / len)) (0 if that is below 1, at most
 * 31), so the high part is below 3 * len bits: at most 12 words for 128
 * values, few enough that every work-item of a partition counts their ones
 * (popcount and prefix) to find its values and selects within a word
 * (cl/codec_pef.cl). The universe is implied by the high part's length and
 * needs no field. A frequency partition whose running sum passes 2^32 - 1 is
 * stored as kind TDM_PEF_PACKED instead: the values bit-packed at width l.
 */
#include <stdlib.h>
#include <string.h>

#include "blockenc.h"
#include "codec.h"
#include "codec_dev.h"
#include "tandem.h"


static unsigned pef_low_width(uint64_t universe, uint32_t len)
{
    if (universe <= len)
        return 0;
    unsigned l = tdm_bits_log2(universe / len);
    return l > 31 ? 31 : l;
}

static int pef_put_packed(tdm_wbuf *buf, const uint32_t *g, uint32_t len)
{
    uint32_t max = 0;
    for (uint32_t k = 0; k < len; k++)
        max = g[k] > max ? g[k] : max;
    unsigned w = tdm_bits_width(max);
    uint32_t *p = tdm_wbuf_grow(buf, 1 + tdm_bits_words((uint64_t)len * w));
    if (!p)
        return TDM_ERR_NOMEM;
    p[0] = w | TDM_PEF_PACKED << 8;
    for (uint32_t k = 0; k < len; k++)
        tdm_bits_put(p + 1, (uint64_t)k * w, g[k], w);
    return TDM_OK;
}

/* Appends one partition of len values given as gaps (delta) or values. */
static int pef_put_block(tdm_wbuf *buf, const uint32_t *g, uint32_t len,
                   const tdm_encoded *enc)
{
    (void)enc;
    uint32_t x[TDM_PEF_BLOCK];
    uint64_t acc = 0;
    for (uint32_t k = 0; k < len; k++) {
        acc += g[k];
        if (acc > UINT32_MAX)
            return pef_put_packed(buf, g, len);
        x[k] = (uint32_t)acc;
    }
    unsigned l = pef_low_width((uint64_t)x[len - 1] + 1, len);
    size_t nlow = tdm_bits_words((uint64_t)len * l);
    size_t nhigh = tdm_bits_words((uint64_t)(x[len - 1] >> l) + len);
    uint32_t *p = tdm_wbuf_grow(buf, 1 + nlow + nhigh);
    if (!p)
        return TDM_ERR_NOMEM;
    p[0] = l | TDM_PEF_EF << 8;
    for (uint32_t k = 0; k < len; k++) {
        tdm_bits_put(p + 1, (uint64_t)k * l, x[k], l);
        uint64_t h = (uint64_t)(x[k] >> l) + k;
        p[1 + nlow + h / 32] |= 1u << (h % 32);
    }
    return TDM_OK;
}

static int pef_encode(const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                      tdm_err *err)
{
    return tdm_codec_encode_blocks(TDM_CODEC_PEF, TDM_PEF_BLOCK, values, n, delta, NULL, pef_put_block,
                                   out, err);
}

/* Turns relative values x[0..len) into output values, checking what the
 * format promises: docids strictly increasing without passing 2^32 - 1,
 * running sums non-decreasing. */
static int pef_finish(const tdm_encoded *enc, uint32_t b, const uint32_t *x, uint32_t len,
                      uint32_t *out, tdm_err *err)
{
    uint32_t base = enc->delta ? enc->bases[b] : 0;
    for (uint32_t k = 0; k < len; k++) {
        uint32_t prev = k ? x[k - 1] : 0;
        int bad = enc->delta ? (x[k] <= prev && (k > 0 || b > 0)) || x[k] > UINT32_MAX - base
                             : x[k] < prev;
        if (bad)
            return tdm_err_set(err, TDM_ERR_CORRUPT, "pef block %u: value %u out of order",
                               b, k);
        out[k] = enc->delta ? base + x[k] : x[k] - prev;
    }
    return TDM_OK;
}

static int pef_decode_packed(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    const uint32_t *p = enc->words + enc->offsets[b];
    uint32_t np = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    unsigned w = p[0] & 0xFF;
    if (w > 32 || np != 1 + tdm_bits_words((uint64_t)len * w))
        return tdm_err_set(err, TDM_ERR_CORRUPT, "pef block %u: bad packed size", b);
    uint32_t base = enc->delta ? enc->bases[b] : 0;
    for (uint32_t k = 0; k < len; k++) {
        uint32_t v = tdm_bits_get(p + 1, (uint64_t)k * w, w);
        if (enc->delta && ((k && v <= out[k - 1] - base) || v > UINT32_MAX - base))
            return tdm_err_set(err, TDM_ERR_CORRUPT, "pef block %u: value %u out of order",
                               b, k);
        out[k] = base + v;
    }
    return TDM_OK;
}

/* Decodes the high part: for the k-th set bit at position q, x[k] gets
 * (q - k) << l. Exactly len ones and no word past the last one. */
static int pef_decode_high(const uint32_t *h, size_t nh, unsigned l, uint32_t len,
                           uint32_t b, uint32_t *x, tdm_err *err)
{
    uint32_t k = 0;
    uint64_t last = 0;
    for (size_t i = 0; i < nh; i++) {
        for (uint32_t w = h[i]; w; w &= w - 1) {
            uint64_t q = (uint64_t)i * 32 + (unsigned)__builtin_ctz(w);
            uint64_t hi = q - k;
            if (k >= len || hi > (UINT32_MAX >> l))
                return tdm_err_set(err, TDM_ERR_CORRUPT,
                                   "pef block %u: unary part has too many ones", b);
            x[k++] |= (uint32_t)hi << l;
            last = q;
        }
    }
    if (k != len || tdm_bits_words(last + 1) != nh)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "pef block %u: unary part has %u ones for %u values", b, k, len);
    return TDM_OK;
}

static int pef_decode_block(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    uint32_t np = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    if (np == 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "pef block %u: empty payload", b);
    const uint32_t *p = enc->words + enc->offsets[b];
    unsigned l = p[0] & 0xFF, kind = p[0] >> 8;
    if (kind == TDM_PEF_PACKED)
        return pef_decode_packed(enc, b, out, err);
    size_t nlow = tdm_bits_words((uint64_t)len * l);
    if (kind != TDM_PEF_EF || l > 31 || 1 + nlow > np)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "pef block %u: bad header %#x", b, p[0]);
    uint32_t x[TDM_PEF_BLOCK];
    for (uint32_t k = 0; k < len; k++)
        x[k] = tdm_bits_get(p + 1, (uint64_t)k * l, l);
    int rc = pef_decode_high(p + 1 + nlow, np - 1 - nlow, l, len, b, x, err);
    return rc == TDM_OK ? pef_finish(enc, b, x, len, out, err) : rc;
}

/* x[k] of an EF partition by select on the high part; -1 if not there. */
static int64_t pef_select(const uint32_t *p, uint32_t np, uint32_t len, uint32_t k)
{
    unsigned l = p[0] & 0xFF;
    size_t nlow = tdm_bits_words((uint64_t)len * l);
    uint32_t seen = 0;
    for (size_t i = 1 + nlow; i < np; i++) {
        uint32_t w = p[i], c = (uint32_t)__builtin_popcount(w);
        if (seen + c <= k) {
            seen += c;
            continue;
        }
        for (; seen < k; seen++)
            w &= w - 1;
        uint64_t hi = (uint64_t)(i - 1 - nlow) * 32 + (unsigned)__builtin_ctz(w) - k;
        return (int64_t)((hi << l) | tdm_bits_get(p + 1, (uint64_t)k * l, l));
    }
    return -1;
}

/* Random access: low bits straight from their slot, high bits by select. */
static int pef_get(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err)
{
    if (i >= enc->n)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "index %u out of range", i);
    uint32_t b = i / TDM_PEF_BLOCK, k = i % TDM_PEF_BLOCK, len = tdm_encoded_block_len(enc, b);
    const uint32_t *p = enc->words + enc->offsets[b];
    uint32_t np = enc->offsets[b + 1] - enc->offsets[b];
    if (np == 0 || (p[0] >> 8) != TDM_PEF_EF || (p[0] & 0xFF) > 31 ||
        1 + tdm_bits_words((uint64_t)len * (p[0] & 0xFF)) > np) {
        uint32_t tmp[TDM_PEF_BLOCK];
        int rc = pef_decode_block(enc, b, tmp, err);
        if (rc == TDM_OK)
            *value = tmp[k];
        return rc;
    }
    int64_t x = pef_select(p, np, len, k), prev = k ? pef_select(p, np, len, k - 1) : 0;
    if (x < 0 || prev < 0 || x > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "pef block %u: value %u missing", b, k);
    *value = enc->delta ? enc->bases[b] + (uint32_t)x : (uint32_t)(x - prev);
    return TDM_OK;
}

static const tdm_codec_dev_ops pef_dev = {
    .kernel = "tdm_pef_decode",
    .get_kernel = "tdm_pef_get",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
};

const tdm_codec_ops tdm_codec_pef_ops = {
    .id = TDM_CODEC_PEF,
    .name = "pef",
    .block_size = TDM_PEF_BLOCK,
    .encode = pef_encode,
    .decode_block = pef_decode_block,
    .get = pef_get,
    .dev = &pef_dev,
};
