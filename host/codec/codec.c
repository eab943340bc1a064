/* The codec registry and what every codec shares: block layout, gaps, checks. */
#include "codec.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tandem.h"

extern const tdm_codec_ops tdm_codec_raw_ops;
extern const tdm_codec_ops tdm_codec_bp128_ops, tdm_codec_bp256_ops;
extern const tdm_codec_ops tdm_codec_vbyte128_ops, tdm_codec_vbyte1024_ops;
extern const tdm_codec_ops tdm_codec_pef_ops;
extern const tdm_codec_ops tdm_codec_pfor_ops;
extern const tdm_codec_ops tdm_codec_newpfd128_ops, tdm_codec_newpfd64_ops;
extern const tdm_codec_ops tdm_codec_rice_ops;

/* Indexed by id; a codec adds itself here. */
static const tdm_codec_ops *const registry[] = {
    &tdm_codec_raw_ops,
    &tdm_codec_bp128_ops,
    &tdm_codec_bp256_ops,
    &tdm_codec_vbyte128_ops,
    &tdm_codec_vbyte1024_ops,
    &tdm_codec_pef_ops,
    &tdm_codec_pfor_ops,
    &tdm_codec_newpfd128_ops,
    &tdm_codec_rice_ops,
    &tdm_codec_newpfd64_ops,
};

const tdm_codec_ops *const *tdm_codec_all(size_t *count)
{
    *count = sizeof registry / sizeof *registry;
    return registry;
}

const tdm_codec_ops *tdm_codec_by_id(int id)
{
    for (size_t i = 0; i < sizeof registry / sizeof *registry; i++)
        if (registry[i]->id == id)
            return registry[i];
    return NULL;
}

const tdm_codec_ops *tdm_codec_by_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof registry / sizeof *registry; i++)
        if (strcasecmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

uint32_t tdm_encoded_block_len(const tdm_encoded *enc, uint32_t b)
{
    uint64_t start = (uint64_t)b * enc->block_size;
    if (start >= enc->n)
        return 0;
    uint64_t left = enc->n - start;
    return left < enc->block_size ? (uint32_t)left : enc->block_size;
}

int tdm_encoded_init(tdm_encoded *enc, int codec, size_t n, uint32_t block_size, int delta,
                     tdm_err *err)
{
    memset(enc, 0, sizeof *enc);
    if (n > UINT32_MAX || block_size == 0)
        return tdm_err_set(err, TDM_ERR_LIMIT, "list of %zu values exceeds 2^32-1", n);
    enc->codec = codec;
    enc->delta = delta;
    enc->n = (uint32_t)n;
    enc->block_size = block_size;
    enc->nblocks = (uint32_t)((n + block_size - 1) / block_size);
    enc->bases = calloc(enc->nblocks ? enc->nblocks : 1, sizeof *enc->bases);
    enc->offsets = calloc((size_t)enc->nblocks + 1, sizeof *enc->offsets);
    if (!enc->bases || !enc->offsets) {
        tdm_encoded_free(enc);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu values", n);
    }
    return TDM_OK;
}

void tdm_encoded_free(tdm_encoded *enc)
{
    if (!enc)
        return;
    if (enc->borrowed) {
        memset(enc, 0, sizeof *enc);
        return;
    }
    free(enc->bases);
    free(enc->offsets);
    free(enc->words);
    memset(enc, 0, sizeof *enc);
}

int tdm_codec_gaps(const uint32_t *values, size_t n, int delta, tdm_encoded *enc,
                   uint32_t *gaps, tdm_err *err)
{
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (!delta) {
            gaps[i] = values[i];
            continue;
        }
        if (i > 0 && values[i] <= prev)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "docids not strictly increasing at position %zu (%u after %u)",
                               i, values[i], prev);
        if (i % enc->block_size == 0)
            enc->bases[i / enc->block_size] = i ? prev : 0;
        gaps[i] = values[i] - (i % enc->block_size == 0 ? enc->bases[i / enc->block_size] : prev);
        prev = values[i];
    }
    return TDM_OK;
}

int tdm_encoded_validate(const tdm_encoded *enc, tdm_err *err)
{
    if (!enc || enc->block_size == 0 ||
        enc->nblocks != (uint32_t)(((uint64_t)enc->n + enc->block_size - 1) / enc->block_size))
        return tdm_err_set(err, TDM_ERR_CORRUPT, "encoded list: inconsistent block count");
    if (!tdm_codec_by_id(enc->codec))
        return tdm_err_set(err, TDM_ERR_CORRUPT, "encoded list: unknown codec %d", enc->codec);
    if (enc->offsets[0] != 0 || enc->offsets[enc->nblocks] != enc->nwords)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "encoded list: endpoints do not span payload");
    for (uint32_t b = 0; b < enc->nblocks; b++)
        if (enc->offsets[b + 1] < enc->offsets[b])
            return tdm_err_set(err, TDM_ERR_CORRUPT,
                               "encoded list: block %u ends before it starts", b);
    return TDM_OK;
}

int tdm_codec_encode(int id, const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                     tdm_err *err)
{
    const tdm_codec_ops *ops = tdm_codec_by_id(id);
    if (!ops)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown codec %d", id);
    memset(out, 0, sizeof *out);
    int rc = ops->encode(values, n, delta, out, err);
    if (rc != TDM_OK)
        tdm_encoded_free(out);
    return rc;
}

int tdm_codec_decode_blocks(const tdm_encoded *enc, const uint32_t *blocks, size_t nblocks,
                            uint32_t *out, tdm_err *err)
{
    int rc = tdm_encoded_validate(enc, err);
    const tdm_codec_ops *ops = tdm_codec_by_id(enc->codec);
    size_t pos = 0;
    for (size_t i = 0; rc == TDM_OK && i < nblocks; i++) {
        uint32_t b = blocks ? blocks[i] : (uint32_t)i;
        if (b >= enc->nblocks)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "block %u out of range (%u blocks)",
                               b, enc->nblocks);
        rc = ops->decode_block(enc, b, out + pos, err);
        pos += tdm_encoded_block_len(enc, b);
    }
    return rc;
}

int tdm_codec_decode(const tdm_encoded *enc, uint32_t *out, tdm_err *err)
{
    return tdm_codec_decode_blocks(enc, NULL, enc->nblocks, out, err);
}
