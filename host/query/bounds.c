/* Block bounds of float scores (bounds.h). */
#include "bounds.h"

#include <stdlib.h>

#include "tandem.h"

int tdm_score_block_bounds(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *s,
                           size_t t, float *bounds, float *list_max, tdm_err *err)
{
    tdm_ilist l;
    int rc = tdm_ireader_list(r, q->terms[t].id, &l, err);
    if (rc)
        return rc;
    uint32_t *d = malloc((size_t)l.df * sizeof *d), *f = malloc((size_t)l.df * sizeof *f);
    if (!d || !f)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for a list of %u", l.df);
    if (rc == TDM_OK)
        rc = tdm_ireader_decode(r, q->terms[t].id, d, f, err);
    if (rc == TDM_OK) {
        const uint32_t *dl = tdm_ireader_doclens(r);
        uint32_t bs = l.docs.block_size;
        *list_max = 0;
        for (uint32_t b = 0; b < l.nblocks; b++)
            bounds[b] = 0;
        for (uint32_t i = 0; i < l.df; i++) {
            float sc = tdm_score_f(s, t, f[i], dl[d[i]]);
            if (sc > bounds[i / bs])
                bounds[i / bs] = sc;
            if (sc > *list_max)
                *list_max = sc;
        }
    }
    free(d);
    free(f);
    return rc;
}

/* Whether the index's stored bounds bound this scoring: BM25 at the k1, b
 * they were computed for, or impact scoring of an impact index, whose stored
 * bounds bound the block's impacts (FORMAT.md "Impact indexes"). Impact
 * scoring of a BM25 index (asked for on purpose) has BM25 bounds: no. */
static int stored_apply(const tdm_ireader_info *info, const tdm_scorer *s)
{
    if (s->kind == TDM_SCORING_IMPACT)
        return info->impact;
    return s->kind == TDM_SCORING_BM25 && !info->impact && s->k1 == info->k1 && s->b == info->b;
}

float tdm_score_stored_bound(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *s,
                             size_t t, float stored)
{
    if (!stored_apply(tdm_ireader_info_get(r), s))
        return -1;
    /* One expression for both (cl/search_batch.cl computes it so too). For
     * impacts, with u = 2^-24: every impact f of the block is <= stored (an
     * integer below a float), so (float)f <= stored (rounding is monotone),
     * and the float score qw * (float)f, qw = (float)w <= w (1 + u), is at
     * most w * stored * (1 + u)^2 < w * stored * SLACK (1 - 2^-53)^2, which
     * is below the double product here before its rounding to float, and
     * that rounding cannot go below a float it is above. */
    return tdm_score_stored_scale(stored, q->terms[t].weight);
}
