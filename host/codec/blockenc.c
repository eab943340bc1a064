#include "blockenc.h"

#include <stdlib.h>

#include "tandem.h"

int tdm_codec_encode_blocks(int codec, uint32_t block, const uint32_t *values, size_t n,
                            int delta, tdm_list_params_fn params, tdm_put_block_fn put,
                            tdm_encoded *out, tdm_err *err)
{
    const char *name = tdm_codec_by_id(codec) ? tdm_codec_by_id(codec)->name : "codec";
    int rc = tdm_encoded_init(out, codec, n, block, delta, err);
    uint32_t *gaps = rc == TDM_OK ? malloc(n ? n * 4 : 4) : NULL;
    if (rc == TDM_OK && !gaps)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu values", n);
    if (rc == TDM_OK)
        rc = tdm_codec_gaps(values, n, delta, out, gaps, err);
    if (rc == TDM_OK && params)
        params(gaps, n, out);
    tdm_wbuf buf = {0};
    for (uint32_t b = 0; rc == TDM_OK && b < out->nblocks; b++) {
        out->offsets[b] = (uint32_t)tdm_wbuf_len(&buf);
        if (put(&buf, gaps + (size_t)b * block, tdm_encoded_block_len(out, b), out) != TDM_OK)
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu values", n);
        else if (tdm_wbuf_len(&buf) > UINT32_MAX)
            rc = tdm_err_set(err, TDM_ERR_LIMIT, "%s: payload exceeds 2^32 words", name);
    }
    free(gaps);
    if (rc != TDM_OK) {
        tdm_buf_free(&buf.b);
        return rc;
    }
    out->offsets[out->nblocks] = (uint32_t)tdm_wbuf_len(&buf);
    out->words = buf.b.p ? tdm_wbuf_words(&buf) : calloc(1, 4);
    out->nwords = tdm_wbuf_len(&buf);
    return out->words ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
}
