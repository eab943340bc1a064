/* Rice coding as Ding et al. (2009) decode it on a GPU: each gap g (value
 * for frequency lists) is q * 2^k + r with a binary remainder r of k bits and
 * a unary quotient q, the two kept in separate bit vectors so that a block
 * decodes by two localized prefix sums: docid = base + 2^k * (q[0] + ... +
 * q[i]) + (r[0] + ... + r[i]).
 *
 * The parameter k is per block (blocks of 128), floor(log2(mean gap)) of the
 * block: a per-list k lets one block of large gaps write runs of millions of
 * bits, while a block's own mean bounds its unary part below 3 * 128 bits
 * (sum q < 2 * len): at most 12 words, few enough that every work-item of
 * a block counts their ones to find its values' terminators
 * (cl/codec_rice.cl). The block's base sum is the block base every codec
 * stores.
 *
 * Block payload:
 *   word 0    bits 0-7 k (0..31)
 *   binary    ceil(len * k / 32) words: r[i] at bit i * k
 *   unary     ceil((sum q + len) / 32) words: for each value q zeros then a
 *             one (the convention of Elias-Fano's high part: the i-th one
 *             sits at bit q[0] + ... + q[i] + i), zero padding after
 */
#include <stdlib.h>
#include <string.h>

#include "blockenc.h"
#include "codec.h"
#include "codec_dev.h"
#include "tandem.h"


static unsigned rice_param(const uint32_t *g, uint32_t len)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < len; i++)
        sum += g[i];
    uint64_t mean = sum / len;
    return mean ? tdm_bits_log2(mean) : 0;
}

static int rice_put_block(tdm_wbuf *buf, const uint32_t *g, uint32_t len,
                    const tdm_encoded *enc)
{
    (void)enc;
    unsigned k = rice_param(g, len);
    uint64_t unary = len;
    for (uint32_t i = 0; i < len; i++)
        unary += g[i] >> k;
    size_t nbin = tdm_bits_words((uint64_t)len * k), nun = tdm_bits_words(unary);
    uint32_t *p = tdm_wbuf_grow(buf, 1 + nbin + nun);
    if (!p)
        return TDM_ERR_NOMEM;
    p[0] = k;
    uint64_t at = 0;
    for (uint32_t i = 0; i < len; i++) {
        tdm_bits_put(p + 1, (uint64_t)i * k, g[i], k);
        at += g[i] >> k;
        p[1 + nbin + at / 32] |= 1u << (at % 32);
        at++;
    }
    return TDM_OK;
}

static int rice_encode(const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                       tdm_err *err)
{
    return tdm_codec_encode_blocks(TDM_CODEC_RICE, TDM_RICE_BLOCK, values, n, delta, NULL, rice_put_block,
                                   out, err);
}

/* Adds each value's quotient (its unary run) to its remainder in out[];
 * -1 if the unary part does not hold exactly len runs ending in its last
 * word, or a quotient does not fit. */
static int rice_unary(const uint32_t *u, size_t nu, unsigned k, uint32_t len, uint32_t *out)
{
    uint32_t i = 0;
    uint64_t start = 0, last = 0;
    for (size_t w = 0; w < nu; w++) {
        for (uint32_t word = u[w]; word; word &= word - 1) {
            uint64_t at = (uint64_t)w * 32 + (unsigned)__builtin_ctz(word), q = at - start;
            if (i >= len || q > (UINT32_MAX >> k) || (q << k) > UINT32_MAX - out[i])
                return -1;
            out[i++] += (uint32_t)(q << k);
            start = at + 1;
            last = at;
        }
    }
    return i == len && tdm_bits_words(last + 1) == nu ? 0 : -1;
}

static int rice_decode_block(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    uint32_t np = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    const uint32_t *p = enc->words + enc->offsets[b];
    unsigned k = np ? p[0] : 0;
    size_t nbin = tdm_bits_words((uint64_t)len * k);
    if (np == 0 || k > 31 || 1 + nbin >= np)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "rice block %u: bad header", b);
    for (uint32_t i = 0; i < len; i++)
        out[i] = tdm_bits_get(p + 1, (uint64_t)i * k, k);
    if (rice_unary(p + 1 + nbin, np - 1 - nbin, k, len, out) != 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "rice block %u: unary part does not hold %u values", b, len);
    if (enc->delta && tdm_bits_gaps_to_docids(out, len, enc->bases[b], b == 0) != 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "rice block %u: docids out of order", b);
    return TDM_OK;
}

/* Rice has no slot to read a value from: a value costs decoding its block. */
static int rice_get(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err)
{
    if (i >= enc->n)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "index %u out of range", i);
    uint32_t out[TDM_RICE_BLOCK];
    int rc = rice_decode_block(enc, i / TDM_RICE_BLOCK, out, err);
    if (rc == TDM_OK)
        *value = out[i % TDM_RICE_BLOCK];
    return rc;
}

static const tdm_codec_dev_ops rice_dev = {
    .kernel = "tdm_rice_decode",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
};

const tdm_codec_ops tdm_codec_rice_ops = {
    .id = TDM_CODEC_RICE,
    .name = "rice",
    .block_size = TDM_RICE_BLOCK,
    .encode = rice_encode,
    .decode_block = rice_decode_block,
    .get = rice_get,
    .dev = &rice_dev,
};
