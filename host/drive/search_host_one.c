/* One term's top k on the host path (search_host_one.h). */
#include "search_host_one.h"

#include "query/bounds.h"
#include "search_host_score.h"
#include "tandem.h"

size_t tdm_hone_bytes(uint32_t maxbs)
{
    return 4 * (((size_t)maxbs * sizeof(uint32_t) + 15) & ~(size_t)15);
}

typedef struct one {
    const tdm_hone *o;
    uint32_t *docs, *tfs, *dls;
    float *s;
} one;

/* Block b decoded, scored and pushed. */
static int block(const one *x, uint32_t b)
{
    const tdm_hone *o = x->o;
    int rc = tdm_hlist_docs(o->h, b, x->docs, o->err);
    if (!rc)
        rc = tdm_hlist_tfs(o->h, b, x->tfs, o->err);
    if (rc)
        return rc;
    uint32_t n = tdm_hlist_block_len(o->h, b);
    tdm_hscore_block(o->sc, 0, o->dl, x->docs, x->tfs, n, x->dls, x->s);
    for (uint32_t i = 0; i < n; i++) /* a document's sum: 0.0f + its one score */
        tdm_htopk_push(o->top, tdm_htopk_key(0.0f + x->s[i], x->docs[i]));
    return TDM_OK;
}

int tdm_hone_rank(const tdm_hone *o, void *mem)
{
    size_t room = tdm_hone_bytes(o->h->l.docs.block_size) / 4;
    one x = {.o = o, .docs = mem, .tfs = (uint32_t *)((char *)mem + room),
             .s = (float *)((char *)mem + 2 * room), .dls = (uint32_t *)((char *)mem + 3 * room)};
    const tdm_ilist *l = &o->h->l;
    const uint8_t *q = l->block_maxq; /* NULL: one bound for every block */
    uint8_t hi = 0;
    for (uint32_t b = 0; q && b < l->nblocks; b++)
        hi = q[b] > hi ? q[b] : hi;
    /* first the blocks of the largest bound: the threshold rises at once */
    for (uint32_t b = 0; b < l->nblocks; b++)
        if (!q || q[b] == hi) {
            int rc = block(&x, b);
            if (rc)
                return rc;
        }
    for (uint32_t b = 0; q && b < l->nblocks; b++) {
        if (q[b] == hi)
            continue;
        /* below the k-th score: passed (blocks come out of docid order now,
           so a bound equal to it may still win a tie on the docid) */
        if (tdm_hlist_block_bound(o->h, b, o->weight) < tdm_htopk_score_thr(o->top))
            continue;
        int rc = block(&x, b);
        if (rc)
            return rc;
    }
    return TDM_OK;
}
