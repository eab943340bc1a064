/* The block-by-block encoding loop of the codecs whose block sizes depend on
 * the data (PEF, PForDelta, NewPFD, Rice): gaps, optional list-wide
 * parameters, then each block appended to a growing word buffer. */
#ifndef TDM_CODEC_BLOCKENC_H
#define TDM_CODEC_BLOCKENC_H

#include "bits.h"
#include "codec.h"

/* Appends one block of `len` gaps to buf; enc carries the list-wide params.
 * Returns TDM_OK or TDM_ERR_NOMEM. */
typedef int (*tdm_put_block_fn)(tdm_wbuf *buf, const uint32_t *gaps, uint32_t len,
                                const tdm_encoded *enc);
/* Sets enc->params from all n gaps before any block is written. */
typedef void (*tdm_list_params_fn)(const uint32_t *gaps, size_t n, tdm_encoded *enc);

/* Encodes values[0..n) with `codec` in blocks of `block` through `put`;
 * `params` may be NULL. On failure *out is left for tdm_encoded_free. */
int tdm_codec_encode_blocks(int codec, uint32_t block, const uint32_t *values, size_t n,
                            int delta, tdm_list_params_fn params, tdm_put_block_fn put,
                            tdm_encoded *out, tdm_err *err);

#endif
