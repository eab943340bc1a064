/* PForDelta as Ding et al. (2009) run it on a GPU: one bit width b for the
 * whole list (params[0]), the smallest that holds at least 90% of its gaps
 * (values for frequency lists), blocks of 512 decoded by a localized prefix
 * sum. A gap of b bits or more is an exception: its low b bits stay in its
 * slot, and its position and its high part go to two arrays that are
 * compressed once more with PForDelta (one level of recursion). Every block
 * carries its own exception arrays, so any block decodes on its own.
 *
 * Block payload:
 *   word 0     bits 0-9 e (exceptions, 0..512), bits 10-15 wo, bits 16-21 wh
 *   slots      ceil(len * b / 32) words: gap mod 2^b at bit k * b
 * and when e > 0:
 *   word       bits 0-15 xo, bits 16-31 xh: exceptions of the two arrays
 *   O slots    ceil(e * wo / 32) words: o[j] mod 2^wo, where o[j] is the
 *              position gap pos[j] - pos[j-1] - 1 (pos[-1] = -1)
 *   H slots    ceil(e * wh / 32) words: h[j] mod 2^wh, h[j] = (gap >> b) - 1
 *   O excepts  xo pairs of words (j, o[j] >> wo)
 *   H excepts  xh pairs of words (j, h[j] >> wh)
 * The inner widths wo and wh minimize each array's size; an inner exception
 * costs two plain words since there are few.
 */
#include <stdlib.h>
#include <string.h>

#include "blockenc.h"
#include "codec.h"
#include "codec_dev.h"
#include "tandem.h"


/* The smallest b such that at least 90% of the n gaps are below 2^b. */
static unsigned pfor_list_width(const uint32_t *g, size_t n)
{
    size_t hist[33] = {0}, need = n - n / 10, acc = 0;
    for (size_t i = 0; i < n; i++)
        hist[tdm_bits_width(g[i])]++;
    for (unsigned b = 0; b < 32; b++)
        if ((acc += hist[b]) >= need)
            return b;
    return 32;
}

/* The width that makes an inner array of e values smallest, an inner
 * exception costing 64 bits. */
static unsigned pfor_inner_width(const uint32_t *a, uint32_t e)
{
    uint32_t hist[33] = {0};
    for (uint32_t j = 0; j < e; j++)
        hist[tdm_bits_width(a[j])]++;
    uint64_t best_cost = UINT64_MAX, above = e;
    unsigned best = 32;
    for (unsigned w = 0; w <= 32; w++) {
        above -= hist[w]; /* values that need more than w bits */
        uint64_t cost = (uint64_t)e * w + above * 64;
        if (cost < best_cost) {
            best_cost = cost;
            best = w;
        }
    }
    return best;
}

static uint32_t pfor_inner_exceptions(const uint32_t *a, uint32_t e, unsigned w)
{
    uint32_t x = 0;
    for (uint32_t j = 0; w < 32 && j < e; j++)
        x += (a[j] >> w) != 0;
    return x;
}

static void pfor_inner_put(uint32_t *slots, uint32_t *exc, const uint32_t *a, uint32_t e,
                           unsigned w)
{
    for (uint32_t j = 0; j < e; j++) {
        tdm_bits_put(slots, (uint64_t)j * w, a[j], w);
        if (w < 32 && (a[j] >> w)) {
            *exc++ = j;
            *exc++ = a[j] >> w;
        }
    }
}

static int pfor_put_block(tdm_wbuf *buf, const uint32_t *g, uint32_t len,
                          const tdm_encoded *enc)
{
    unsigned b = enc->params[0];
    uint32_t o[TDM_PFOR_BLOCK] = {0}, h[TDM_PFOR_BLOCK] = {0}, e = 0, next = 0; /* zeroed: GCC -O2 cannot see e bounds the reads */
    for (uint32_t k = 0; b < 32 && k < len; k++) {
        if (g[k] >> b) {
            o[e] = k - next;
            h[e++] = (g[k] >> b) - 1;
            next = k + 1;
        }
    }
    unsigned wo = pfor_inner_width(o, e), wh = pfor_inner_width(h, e);
    uint32_t xo = pfor_inner_exceptions(o, e, wo), xh = pfor_inner_exceptions(h, e, wh);
    size_t nslots = tdm_bits_words((uint64_t)len * b);
    size_t no = tdm_bits_words((uint64_t)e * wo), nh = tdm_bits_words((uint64_t)e * wh);
    size_t size = 1 + nslots + (e ? 1 + no + nh + 2 * (size_t)(xo + xh) : 0);
    uint32_t *p = tdm_wbuf_grow(buf, size);
    if (!p)
        return TDM_ERR_NOMEM;
    p[0] = e ? e | wo << 10 | wh << 16 : 0;
    for (uint32_t k = 0; k < len; k++)
        tdm_bits_put(p + 1, (uint64_t)k * b, g[k], b);
    if (e) {
        uint32_t *q = p + 1 + nslots;
        q[0] = xo | xh << 16;
        pfor_inner_put(q + 1, q + 1 + no + nh, o, e, wo);
        pfor_inner_put(q + 1 + no, q + 1 + no + nh + 2 * xo, h, e, wh);
    }
    return TDM_OK;
}

/* The list-wide bit width, in params[0]. */
static void pfor_params(const uint32_t *gaps, size_t n, tdm_encoded *enc)
{
    enc->params[0] = pfor_list_width(gaps, n);
}

static int pfor_encode(const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                       tdm_err *err)
{
    return tdm_codec_encode_blocks(TDM_CODEC_PFOR, TDM_PFOR_BLOCK, values, n, delta, pfor_params,
                                   pfor_put_block, out, err);
}

/* Decodes an inner array; -1 if an inner exception is out of range or
 * does not fit. */
static int pfor_inner_get(const uint32_t *slots, const uint32_t *exc, uint32_t x, uint32_t e,
                          unsigned w, uint32_t *a)
{
    for (uint32_t j = 0; j < e; j++)
        a[j] = tdm_bits_get(slots, (uint64_t)j * w, w);
    for (uint32_t i = 0; i < x; i++) {
        uint32_t j = exc[2 * i], hi = exc[2 * i + 1];
        if (j >= e || w >= 32 || hi == 0 || hi > (UINT32_MAX >> w) || (a[j] >> w))
            return -1;
        a[j] |= hi << w;
    }
    return 0;
}

/* Positions and full high parts (gap >> b) of a block's exceptions, in
 * order; -1 where the payload is inconsistent. */
static int pfor_exceptions(const uint32_t *p, uint32_t np, uint32_t len, unsigned b,
                           uint32_t *pos, uint32_t *high, uint32_t *count)
{
    uint32_t e = p[0] & 0x3FF, wo = p[0] >> 10 & 0x3F, wh = p[0] >> 16 & 0x3F;
    size_t nslots = tdm_bits_words((uint64_t)len * b);
    *count = e;
    if (p[0] >> 22 || e > len || wo > 32 || wh > 32 || b > 32 || (b == 32 && e))
        return -1;
    if (e == 0)
        return p[0] == 0 && np == 1 + nslots ? 0 : -1;
    size_t no = tdm_bits_words((uint64_t)e * wo), nh = tdm_bits_words((uint64_t)e * wh);
    if (np < 2 + nslots)
        return -1;
    const uint32_t *q = p + 1 + nslots;
    uint32_t xo = q[0] & 0xFFFF, xh = q[0] >> 16;
    if (xo > e || xh > e || np != 2 + nslots + no + nh + 2 * (size_t)(xo + xh))
        return -1;
    if (pfor_inner_get(q + 1, q + 1 + no + nh, xo, e, wo, pos) ||
        pfor_inner_get(q + 1 + no, q + 1 + no + nh + 2 * xo, xh, e, wh, high))
        return -1;
    uint64_t at = 0;
    for (uint32_t j = 0; j < e; j++) {
        at += pos[j];
        if (at >= len || high[j] == UINT32_MAX || high[j] + 1 > (UINT32_MAX >> b))
            return -1; /* exception offsets past the block, or a high part too big */
        pos[j] = (uint32_t)at++;
        high[j]++;
    }
    return 0;
}

static int pfor_decode_block(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    uint32_t np = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    const uint32_t *p = enc->words + enc->offsets[b];
    unsigned w = enc->params[0];
    uint32_t pos[TDM_PFOR_BLOCK], high[TDM_PFOR_BLOCK], e;
    if (np == 0 || w > 32 || pfor_exceptions(p, np, len, w, pos, high, &e) != 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "pfor block %u: bad exceptions", b);
    for (uint32_t k = 0; k < len; k++)
        out[k] = tdm_bits_get(p + 1, (uint64_t)k * w, w);
    for (uint32_t j = 0; j < e; j++)
        out[pos[j]] |= high[j] << w;
    if (enc->delta && tdm_bits_gaps_to_docids(out, len, enc->bases[b], b == 0) != 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "pfor block %u: docids out of order", b);
    return TDM_OK;
}

/* A frequency straight from its slot plus its exception's high part, if any;
 * a docid needs the block's prefix sum. */
static int pfor_get(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err)
{
    if (i >= enc->n)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "index %u out of range", i);
    uint32_t b = i / TDM_PFOR_BLOCK, k = i % TDM_PFOR_BLOCK, out[TDM_PFOR_BLOCK];
    if (enc->delta) {
        int rc = pfor_decode_block(enc, b, out, err);
        if (rc == TDM_OK)
            *value = out[k];
        return rc;
    }
    uint32_t np = enc->offsets[b + 1] - enc->offsets[b], len = tdm_encoded_block_len(enc, b);
    const uint32_t *p = enc->words + enc->offsets[b];
    unsigned w = enc->params[0];
    uint32_t pos[TDM_PFOR_BLOCK], high[TDM_PFOR_BLOCK], e;
    if (np == 0 || w > 32 || pfor_exceptions(p, np, len, w, pos, high, &e) != 0)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "pfor block %u: bad exceptions", b);
    uint32_t v = tdm_bits_get(p + 1, (uint64_t)k * w, w);
    for (uint32_t j = 0; j < e && pos[j] <= k; j++)
        if (pos[j] == k)
            v |= high[j] << w;
    *value = v;
    return TDM_OK;
}

static const tdm_codec_dev_ops pfor_dev = {
    .kernel = "tdm_pfor_decode",
    .get_kernel = "tdm_pfor_get",
    .blocks_per_group = tdm_codec_dev_bpg_wide, /* narrower where local memory is short */
};

const tdm_codec_ops tdm_codec_pfor_ops = {
    .id = TDM_CODEC_PFOR,
    .name = "pfor",
    .block_size = TDM_PFOR_BLOCK,
    .encode = pfor_encode,
    .decode_block = pfor_decode_block,
    .get = pfor_get,
    .dev = &pfor_dev,
};
