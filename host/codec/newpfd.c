/* PForDelta with one bit width per block (NewPFD style, Yan et al. 2009),
 * blocks of 128 or 64: the layout for block-max indexes, where each block is
 * read on its own (64 gives finer block-max scores, 128 fewer headers). Each
 * block picks the width b that makes it smallest; a gap of b bits or more
 * is an exception whose low b bits stay in its slot while its position and
 * high part go to two small arrays after the slots.
 *
 * Block payload:
 *   word 0      bits 0-5 b, bits 6-13 e (exceptions, 0..block), bits 14-19 hw
 *   slots       ceil(len * b / 32) words: gap mod 2^b at bit k * b
 *   positions   ceil(e / 4) words: one byte per exception, increasing
 *   high parts  ceil(e * hw / 32) words: (gap >> b) - 1 at width hw
 */
#include <stdlib.h>
#include <string.h>

#include "blockenc.h"
#include "codec.h"
#include "codec_dev.h"
#include "tandem.h"


typedef struct npfd_shape {
    unsigned b, hw;
    uint32_t e;
} npfd_shape;

static npfd_shape npfd_shape_for(const uint32_t *g, uint32_t len, unsigned b)
{
    npfd_shape s = {b, 0, 0};
    uint32_t maxhigh = 0;
    for (uint32_t k = 0; b < 32 && k < len; k++) {
        if (g[k] >> b) {
            s.e++;
            maxhigh = (g[k] >> b) - 1 > maxhigh ? (g[k] >> b) - 1 : maxhigh;
        }
    }
    s.hw = tdm_bits_width(maxhigh);
    return s;
}

static uint64_t npfd_cost(npfd_shape s, uint32_t len)
{
    return (uint64_t)len * s.b + (uint64_t)s.e * (8 + s.hw);
}

static int npfd_put_block(tdm_wbuf *buf, const uint32_t *g, uint32_t len,
                    const tdm_encoded *enc)
{
    (void)enc;
    npfd_shape best = npfd_shape_for(g, len, 32);
    for (unsigned b = 0; b < 32; b++) {
        npfd_shape s = npfd_shape_for(g, len, b);
        if (npfd_cost(s, len) < npfd_cost(best, len))
            best = s;
    }
    size_t nslots = tdm_bits_words((uint64_t)len * best.b);
    size_t npos = (best.e + 3) / 4, nhigh = tdm_bits_words((uint64_t)best.e * best.hw);
    uint32_t *p = tdm_wbuf_grow(buf, 1 + nslots + npos + nhigh);
    if (!p)
        return TDM_ERR_NOMEM;
    p[0] = best.b | best.e << 6 | best.hw << 14;
    uint32_t j = 0;
    for (uint32_t k = 0; k < len; k++) {
        tdm_bits_put(p + 1, (uint64_t)k * best.b, g[k], best.b);
        if (best.b < 32 && (g[k] >> best.b)) {
            p[1 + nslots + j / 4] |= k << (8 * (j % 4));
            tdm_bits_put(p + 1 + nslots + npos, (uint64_t)j * best.hw, (g[k] >> best.b) - 1,
                         best.hw);
            j++;
        }
    }
    return TDM_OK;
}

static int npfd_encode(int id, uint32_t block, const uint32_t *values, size_t n, int delta,
                       tdm_encoded *out, tdm_err *err)
{
    return tdm_codec_encode_blocks(id, block, values, n, delta, NULL, npfd_put_block, out, err);
}

static int npfd128_encode(const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                          tdm_err *err)
{
    return npfd_encode(TDM_CODEC_NEWPFD128, 128, values, n, delta, out, err);
}

static int npfd64_encode(const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                         tdm_err *err)
{
    return npfd_encode(TDM_CODEC_NEWPFD64, 64, values, n, delta, out, err);
}

/* Checks a block's header against its payload size and fills in its shape;
 * -1 if they disagree. */
static int npfd_header(const tdm_encoded *enc, uint32_t blk, npfd_shape *s)
{
    uint32_t np = enc->offsets[blk + 1] - enc->offsets[blk], len = tdm_encoded_block_len(enc, blk);
    if (np == 0)
        return -1;
    uint32_t h = enc->words[enc->offsets[blk]];
    s->b = h & 0x3F;
    s->e = h >> 6 & 0xFF;
    s->hw = h >> 14 & 0x3F;
    if (h >> 20 || s->b > 32 || s->hw > 32 || s->e > len || (s->b == 32 && s->e))
        return -1;
    size_t size = 1 + tdm_bits_words((uint64_t)len * s->b) + (s->e + 3) / 4 +
                  tdm_bits_words((uint64_t)s->e * s->hw);
    return size == np ? 0 : -1;
}

/* Exception j's position and full high part; -1 where they cannot be right
 * (positions not increasing or past the block, a high part that overflows). */
static int npfd_exception(const uint32_t *p, npfd_shape s, uint32_t len, uint32_t j,
                          uint32_t *pos, uint32_t *high)
{
    size_t nslots = tdm_bits_words((uint64_t)len * s.b), npos = (s.e + 3) / 4;
    *pos = p[1 + nslots + j / 4] >> (8 * (j % 4)) & 0xFF;
    uint32_t h = tdm_bits_get(p + 1 + nslots + npos, (uint64_t)j * s.hw, s.hw);
    if (*pos >= len || h == UINT32_MAX || h + 1 > (UINT32_MAX >> s.b))
        return -1;
    *high = h + 1;
    return 0;
}

static int npfd_decode_block(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    npfd_shape s;
    uint32_t len = tdm_encoded_block_len(enc, b);
    if (npfd_header(enc, b, &s) != 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "newpfd block %u: bad header", b);
    const uint32_t *p = enc->words + enc->offsets[b];
    for (uint32_t k = 0; k < len; k++)
        out[k] = tdm_bits_get(p + 1, (uint64_t)k * s.b, s.b);
    uint32_t last = 0;
    for (uint32_t j = 0; j < s.e; j++) {
        uint32_t pos, high;
        if (npfd_exception(p, s, len, j, &pos, &high) != 0 || (j && pos <= last))
            return tdm_err_set(err, TDM_ERR_CORRUPT, "newpfd block %u: bad exception %u", b, j);
        out[pos] |= high << s.b;
        last = pos;
    }
    if (enc->delta && tdm_bits_gaps_to_docids(out, len, enc->bases[b], b == 0) != 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "newpfd block %u: docids out of order", b);
    return TDM_OK;
}

/* A frequency from its slot plus, if it is an exception, its high part
 * (found by scanning the block's position bytes); a docid needs the block. */
static int npfd_get(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err)
{
    if (i >= enc->n)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "index %u out of range", i);
    uint32_t B = enc->block_size, b = i / B, k = i % B, len = tdm_encoded_block_len(enc, b);
    npfd_shape s;
    if (enc->delta || npfd_header(enc, b, &s) != 0) {
        uint32_t out[TDM_NPFD_BLOCK_MAX];
        int rc = npfd_decode_block(enc, b, out, err);
        if (rc == TDM_OK)
            *value = out[k];
        return rc;
    }
    const uint32_t *p = enc->words + enc->offsets[b];
    uint32_t v = tdm_bits_get(p + 1, (uint64_t)k * s.b, s.b);
    for (uint32_t j = 0; j < s.e; j++) {
        uint32_t pos, high;
        if (npfd_exception(p, s, len, j, &pos, &high) != 0)
            return tdm_err_set(err, TDM_ERR_CORRUPT, "newpfd block %u: bad exception %u", b, j);
        if (pos == k)
            v |= high << s.b;
    }
    *value = v;
    return TDM_OK;
}

static const tdm_codec_dev_ops npfd128_dev = {
    .kernel = "tdm_newpfd128_decode",
    .get_kernel = "tdm_newpfd128_get",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
};

static const tdm_codec_dev_ops npfd64_dev = {
    .kernel = "tdm_newpfd64_decode",
    .get_kernel = "tdm_newpfd64_get",
    .blocks_per_group = tdm_codec_dev_bpg_wide,
};

const tdm_codec_ops tdm_codec_newpfd128_ops = {
    .id = TDM_CODEC_NEWPFD128,
    .name = "newpfd128",
    .block_size = 128,
    .encode = npfd128_encode,
    .decode_block = npfd_decode_block,
    .get = npfd_get,
    .dev = &npfd128_dev,
};

const tdm_codec_ops tdm_codec_newpfd64_ops = {
    .id = TDM_CODEC_NEWPFD64,
    .name = "newpfd64",
    .block_size = 64,
    .encode = npfd64_encode,
    .decode_block = npfd_decode_block,
    .get = npfd_get,
    .dev = &npfd64_dev,
};
