/* libFuzzer target: the CIFF reader on arbitrary bytes. Whatever it accepts
 * must keep the collection contract that the index writer relies on: terms
 * strictly increasing, docids strictly increasing and below num_docs, tf >= 1.
 * Nothing may read out of bounds or leak. */
#include <stdint.h>
#include <stdlib.h>

#include "import/ciff.h"
#include "tandem.h"

static void check_list(const tdm_coll_list *l, const tdm_coll_list *prev, uint32_t ndocs)
{
    if (l->n == 0 || l->term_len == 0)
        abort();
    if (prev && tdm_term_cmp(prev->term, prev->term_len, l->term, l->term_len) >= 0)
        abort();
    for (size_t k = 0; k < l->n; k++)
        if (l->docids[k] >= ndocs || l->freqs[k] == 0 || (k && l->docids[k] <= l->docids[k - 1]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tdm_ciff *c = NULL;
    tdm_err err = {0};
    if (tdm_ciff_open_mem(data, size, "fuzz", &c, &err) == TDM_OK) {
        tdm_coll_source src;
        tdm_ciff_source(c, &src);
        /* the previous term points into the input, so it stays valid */
        tdm_coll_list prev = {0}, l;
        for (uint64_t i = 0; i < src.nlists; i++) {
            if (src.list(src.self, i, &l, &err) != TDM_OK)
                break;
            check_list(&l, i ? &prev : NULL, src.ndocs);
            prev = l;
        }
        tdm_ciff_close(c);
    }
    tdm_err_clear(&err);
    return 0;
}
