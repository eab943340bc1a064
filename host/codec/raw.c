/* RAW: uncompressed gaps in blocks of 128; the baseline every codec is measured against. */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "codec_dev.h"
#include "tandem.h"


static int raw_encode(const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                      tdm_err *err)
{
    int rc = tdm_encoded_init(out, TDM_CODEC_RAW, n, TDM_RAW_BLOCK, delta, err);
    if (rc != TDM_OK)
        return rc;
    out->words = malloc(n ? n * 4 : 4);
    if (!out->words)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu values", n);
    out->nwords = n;
    for (uint32_t b = 0; b <= out->nblocks; b++)
        out->offsets[b] = b == out->nblocks ? (uint32_t)n : b * TDM_RAW_BLOCK;
    return tdm_codec_gaps(values, n, delta, out, out->words, err);
}

static int raw_decode_block(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err)
{
    uint32_t len = tdm_encoded_block_len(enc, b);
    if (enc->offsets[b + 1] - enc->offsets[b] != len)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "raw block %u: %u words for %u values", b,
                           enc->offsets[b + 1] - enc->offsets[b], len);
    const uint32_t *w = enc->words + enc->offsets[b];
    uint32_t acc = enc->delta ? enc->bases[b] : 0;
    for (uint32_t i = 0; i < len; i++)
        out[i] = enc->delta ? (acc += w[i]) : w[i];
    return TDM_OK;
}

static int raw_get(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err)
{
    if (i >= enc->n)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "index %u out of range", i);
    if (!enc->delta) {
        *value = enc->words[i];
        return TDM_OK;
    }
    uint32_t b = i / enc->block_size, acc = enc->bases[b];
    for (uint32_t j = b * enc->block_size; j <= i; j++)
        acc += enc->words[j];
    *value = acc;
    return TDM_OK;
}

/* The kernel reads one word a value: every block must hold exactly that. */
static int raw_dev_check(const tdm_encoded *enc, tdm_err *err)
{
    for (uint32_t b = 0; b < enc->nblocks; b++)
        if (enc->offsets[b + 1] - enc->offsets[b] != tdm_encoded_block_len(enc, b))
            return tdm_err_set(err, TDM_ERR_CORRUPT, "raw block %u: %u words for %u values",
                               b, enc->offsets[b + 1] - enc->offsets[b],
                               tdm_encoded_block_len(enc, b));
    return TDM_OK;
}

static const tdm_codec_dev_ops raw_dev = {
    .kernel = "tdm_raw_decode",
    .blocks_per_group = tdm_codec_dev_bpg_vpt,
    .check = raw_dev_check,
};

const tdm_codec_ops tdm_codec_raw_ops = {
    .id = TDM_CODEC_RAW,
    .name = "raw",
    .block_size = TDM_RAW_BLOCK,
    .encode = raw_encode,
    .decode_block = raw_decode_block,
    .get = raw_get,
    .dev = &raw_dev,
};
