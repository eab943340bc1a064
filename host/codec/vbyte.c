/* GPU-VByte (Mallia et al. 2019), blocks of 128 or 1024. A block of len
 * values is ceil(len / 4) selector bytes, one 2-bit selector per value
 * (value i in bits 2*(i%4) of byte i/4, holding its byte length - 1), then
 * each value's 1..4 bytes, little-endian, packed back to back; the block is
 * padded to whole 32-bit words, byte k of a block being bits 8*(k%4) of its
 * word k/4. The endpoints array gives each block's word range, so the data
 * length the selectors imply is checked against it: a mismatch is a corrupt
 * payload. */
#include <stdlib.h>

#include "codec.h"
#include "codec_dev.h"
#include "tandem.h"

static uint32_t byte_len(uint32_t v)
{
    return v < (1u << 8) ? 1 : v < (1u << 16) ? 2 : v < (1u << 24) ? 3 : 4;
}

static void put_byte(uint32_t *w, size_t k, uint32_t byte)
{
    w[k >> 2] |= (byte & 0xffu) << (8 * (k & 3));
}

static uint32_t get_byte(const uint32_t *w, size_t k)
{
    return (w[k >> 2] >> (8 * (k & 3))) & 0xffu;
}

static const char *vb_name(const tdm_encoded *enc)
{
    return enc->block_size == 128 ? "vbyte128" : "vbyte1024";
}

/* Writes one block at word `w` (zeroed); returns its words. */
static uint32_t encode_block(uint32_t *w, const uint32_t *g, uint32_t len)
{
    size_t sb = (len + 3) / 4, k = sb;
    for (uint32_t i = 0; i < len; i++) {
        uint32_t l = byte_len(g[i]);
        put_byte(w, i / 4, get_byte(w, i / 4) | ((l - 1) << (2 * (i % 4))));
        for (uint32_t j = 0; j < l; j++)
            put_byte(w, k++, g[i] >> (8 * j));
    }
    return (uint32_t)((k + 3) / 4);
}

static int vb_encode(int codec, uint32_t block, const uint32_t *values, size_t n, int delta,
                     tdm_encoded *out, tdm_err *err)
{
    int rc = tdm_encoded_init(out, codec, n, block, delta, err);
    if (rc != TDM_OK)
        return rc;
    /* Worst case: 4 data bytes and a quarter selector byte a value, plus
     * rounding and padding a block. */
    size_t cap = n + n / 16 + 2 * (size_t)out->nblocks + 2;
    uint32_t *gaps = malloc(n ? n * 4 : 4);
    out->words = calloc(cap, 4);
    if (!gaps || !out->words)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu values", n);
    if (rc == TDM_OK)
        rc = tdm_codec_gaps(values, n, delta, out, gaps, err);
    size_t pos = 0;
    for (uint32_t b = 0; rc == TDM_OK && b < out->nblocks; b++) {
        out->offsets[b] = (uint32_t)pos;
        pos += encode_block(out->words + pos, gaps + (size_t)b * block,
                            tdm_encoded_block_len(out, b));
    }
    if (rc == TDM_OK) {
        out->offsets[out->nblocks] = (uint32_t)pos;
        out->nwords = pos;
    }
    free(gaps);
    return rc;
}

static int vb128_encode(const uint32_t *v, size_t n, int delta, tdm_encoded *out, tdm_err *err)
{
    return vb_encode(TDM_CODEC_VBYTE128, 128, v, n, delta, out, err);
}

static int vb1024_encode(const uint32_t *v, size_t n, int delta, tdm_encoded *out,
                         tdm_err *err)
{
    return vb_encode(TDM_CODEC_VBYTE1024, 1024, v, n, delta, out, err);
}

/* Words a block of len values may span: all 1-byte to all 4-byte values. */
static int words_plausible(uint32_t nw, uint32_t len)
{
    uint64_t sb = (len + 3) / 4;
    return nw >= (sb + len + 3) / 4 && nw <= (sb + 4ull * len + 3) / 4;
}

/* Checks the selectors against the block's words: the data they imply must
 * end in the block's last word. */
static int check_block(const tdm_encoded *enc, uint32_t b, tdm_err *err)
{
    uint32_t nw = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    const uint32_t *w = enc->words + enc->offsets[b];
    if (!words_plausible(nw, len))
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s block %u: %u words for %u values",
                           vb_name(enc), b, nw, len);
    uint64_t bytes = (len + 3) / 4;
    for (uint32_t i = 0; i < len; i++)
        bytes += ((get_byte(w, i / 4) >> (2 * (i % 4))) & 3) + 1;
    if ((bytes + 3) / 4 != nw)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "%s block %u: selectors imply %llu bytes, the block has %u words",
                           vb_name(enc), b, (unsigned long long)bytes, nw);
    return TDM_OK;
}

/* Sums gaps onto the block base; a zero gap (after the list's first value)
 * or a sum past 2^32-1 means a corrupt payload. */
static int add_gap(uint32_t b, uint32_t i, uint32_t *acc, uint32_t g, tdm_err *err)
{
    if ((g == 0 && (b || i)) || *acc > UINT32_MAX - g)
        return tdm_err_set(err, TDM_ERR_CORRUPT,
                           "block %u value %u: docids not increasing or past 2^32-1", b, i);
    *acc += g;
    return TDM_OK;
}

/* Decodes values [0, upto] of block b into out (NULL: only the last into *last). */
static int decode_prefix(const tdm_encoded *enc, uint32_t b, uint32_t upto, uint32_t *out,
                         uint32_t *last, tdm_err *err)
{
    int rc = check_block(enc, b, err);
    const uint32_t *w = enc->words + enc->offsets[b];
    uint32_t len = tdm_encoded_block_len(enc, b), acc = enc->delta ? enc->bases[b] : 0, v = 0;
    size_t k = (len + 3) / 4;
    for (uint32_t i = 0; rc == TDM_OK && i <= upto; i++) {
        uint32_t l = ((get_byte(w, i / 4) >> (2 * (i % 4))) & 3) + 1, g = 0;
        for (uint32_t j = 0; j < l; j++)
            g |= get_byte(w, k++) << (8 * j);
        if (!enc->delta)
            v = g;
        else if ((rc = add_gap(b, i, &acc, g, err)) == TDM_OK)
            v = acc;
        if (out)
            out[i] = v;
    }
    if (rc == TDM_OK && last)
        *last = v;
    return rc;
}

static int vb_decode_block(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    uint32_t len = tdm_encoded_block_len(enc, b);
    return len ? decode_prefix(enc, b, len - 1, out, NULL, err) : TDM_OK;
}

/* Random access: the format allows it within a block, by walking its selectors. */
static int vb_get(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err)
{
    if (i >= enc->n)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "index %u out of range (%u values)", i,
                           enc->n);
    return decode_prefix(enc, i / enc->block_size, i % enc->block_size, NULL, value, err);
}

/* At upload only the cheap bound is checked; the kernel compares the
 * selectors with the block length and flags a mismatch. */
static int vb_dev_check(const tdm_encoded *enc, tdm_err *err)
{
    for (uint32_t b = 0; b < enc->nblocks; b++) {
        uint32_t nw = enc->offsets[b + 1] - enc->offsets[b];
        if (!words_plausible(nw, tdm_encoded_block_len(enc, b)))
            return tdm_err_set(err, TDM_ERR_CORRUPT, "%s block %u: %u words for %u values",
                               vb_name(enc), b, nw, tdm_encoded_block_len(enc, b));
    }
    return TDM_OK;
}

static const tdm_codec_dev_ops vb128_dev = {
    .kernel = "tdm_vbyte128_decode",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
    .check = vb_dev_check,
};

static const tdm_codec_dev_ops vb1024_dev = {
    .kernel = "tdm_vbyte1024_decode",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
    .check = vb_dev_check,
};

const tdm_codec_ops tdm_codec_vbyte128_ops = {
    .id = TDM_CODEC_VBYTE128,
    .name = "vbyte128",
    .block_size = 128,
    .encode = vb128_encode,
    .decode_block = vb_decode_block,
    .get = vb_get,
    .dev = &vb128_dev,
};

const tdm_codec_ops tdm_codec_vbyte1024_ops = {
    .id = TDM_CODEC_VBYTE1024,
    .name = "vbyte1024",
    .block_size = 1024,
    .encode = vb1024_encode,
    .decode_block = vb_decode_block,
    .get = vb_get,
    .dev = &vb1024_dev,
};
