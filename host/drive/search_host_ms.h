/* MaxScore on the host path (search_host.c): document at a time over block
 * cursors, terms ordered by an upper bound of their float scores; the
 * shortest prefix whose bounds together cannot beat the k-th score is
 * non-essential: a candidate comes from the essential lists only, and the
 * non-essential ones are looked up (blocks skipped by their last docids,
 * decoded only where the candidate falls) while its partial score plus
 * the bounds left may still beat the k-th. The essential lists' postings
 * are summed a window of docids at a time, list by list (no branch a
 * posting; one essential list left first skips its postings and blocks
 * that cannot beat the k-th with the others' bounds), and a window's documents that cannot beat the
 * k-th with the non-essential lists' bounds, then with those of their
 * blocks at the document, are passed before any lookup; the others are
 * looked up list at a time (each list sought once a window, in docid
 * order), a document dropped once it cannot beat the k-th with the block
 * bounds of the lists left.
 *
 * Exact: the bound tests run in double with a margin over the float sum's
 * rounding (a document's float score, summed in any order, is within
 * (nt - 1) 2^-24 relative of its real sum), and a surviving document's
 * score is summed afresh as the oracle sums it, 0.0f + s_t0 + s_t1 ... in
 * term order (a term without the document adds 0.0f: no change), so the
 * top k is OR's bit for bit. */
#ifndef TDM_DRIVE_SEARCH_HOST_MS_H
#define TDM_DRIVE_SEARCH_HOST_MS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "query/query.h"
#include "query/score.h"
#include "search_host_dec.h"
#include "search_host_topk.h"

typedef struct tdm_hms {
    const tdm_query *q;
    const tdm_scorer *sc;
    const uint32_t *dl;       /* document lengths */
    const tdm_hlist *lists;   /* [nt] in term order, nt >= 2 */
    const float *bound;       /* [nt] >= every float score of the term */
    size_t nt;
    uint32_t maxbs;           /* the largest block of the lists' codecs */
    tdm_htopk *top;
    tdm_err *err;
} tdm_hms;

/* Each term's bound from the index's stored bounds (its list's, the
 * largest of its blocks', scaled as bounds.h says): 1, or 0 where they do
 * not bound this scoring (no bound then without decoding every list). */
int tdm_hms_bounds(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *sc,
                   const tdm_hlist *lists, float *bound);

/* Scratch bytes tdm_hms_rank needs (16-byte aligned). */
size_t tdm_hms_bytes(size_t nt, uint32_t maxbs);

/* The top k of m's query into m->top; TDM_OK or a decode error. */
int tdm_hms_rank(const tdm_hms *m, void *mem);

#endif
