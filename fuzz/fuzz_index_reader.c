/* libFuzzer target: the index reader on arbitrary bytes. Each input is
 * opened as it is, and once more with every checksum recomputed, so that
 * mutations get past the checksums into the structural checks, the list
 * views and the codecs' reference decoders. Nothing may read out of bounds.
 * Seeds (scripts/fuzz.sh): a small format-3 index per codec, with one-block
 * lists and a list of several blocks, and an impact index (older corpora
 * hold format-2 ones too). forge_sums reseals either version's header. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "index/format.h"
#include "index/reader.h"
#include "tandem.h"
#include "forge.h" /* tests/forge.h */

static void exercise(const uint8_t *data, size_t size)
{
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    if (tdm_ireader_open_mem(data, size, "fuzz", &r, &err) == TDM_OK) {
        const tdm_ireader_info *in = tdm_ireader_info_get(r);
        uint32_t *buf = malloc(((size_t)in->ndocs + 1) * 8);
        for (uint64_t i = 0; buf && i < in->nterms; i++) {
            tdm_ilist l;
            if (tdm_ireader_list(r, i, &l, &err) != TDM_OK)
                continue;
            float sum = 0;
            for (uint32_t b = 0; b < l.nblocks; b++)
                sum += tdm_ilist_block_max(&l, b);
            if (!(sum >= 0))
                abort();   /* validated: max_score positive, bounds below it */
            tdm_ireader_decode(r, i, buf, buf + in->ndocs, &err);
        }
        for (uint64_t d = 0; d < in->ndocs; d++)
            if (!tdm_ireader_docname(r, d))
                abort();   /* validated at open: every name must be there */
        uint64_t idx;
        tdm_ireader_find(r, "a", 1, &idx);
        tdm_ireader_check_payload(r, &err);
        tdm_ireader_verify(r, &err);
        free(buf);
        tdm_ireader_close(r);
    }
    tdm_err_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    exercise(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    forge_sums(copy, size);
    exercise(copy, size);
    free(copy);
    return 0;
}
