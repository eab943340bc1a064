/* One term's top k on the host path (search_host.c): AND, AND-then-OR and
 * the pruning algorithms of a one-term query, whose every posting is a
 * match (ranked OR, the exhaustive baseline, never comes here).
 *
 * The blocks holding the list's largest block bound go first (one of them
 * holds its best document), the others then in order, each passed
 * undecoded where its stored bound is below the k-th score kept: none of
 * its documents can rank (a document scoring the k-th score exactly may
 * beat it on a smaller docid, so only a bound strictly below passes a
 * block). A block read is decoded, checked and scored whole
 * (search_host_dec.h) and its documents pushed to the top k.
 *
 * A one-term document's float score is its one posting's, 0.0f + s, and
 * the stored block bound, scaled to the query's weight (bounds.h), is at or
 * above it: the top k is the exhaustive pass's bit for bit. Terabyte05's
 * one-term queries (a fifth of the log) spent a third of a host AND batch's
 * time on the 2-core VM scoring every posting through AND's cursors. */
#ifndef TDM_DRIVE_SEARCH_HOST_ONE_H
#define TDM_DRIVE_SEARCH_HOST_ONE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "query/query.h"
#include "query/score.h"
#include "search_host_dec.h"
#include "search_host_topk.h"

typedef struct tdm_hone {
    const tdm_scorer *sc;
    const uint32_t *dl;     /* document lengths */
    const tdm_hlist *h;     /* the query's one list (term 0) */
    double weight;          /* the term's query weight (the stored bounds' scale) */
    tdm_htopk *top;
    tdm_err *err;
} tdm_hone;

/* Scratch bytes tdm_hone_rank needs for blocks of up to maxbs postings
 * (16-byte aligned). */
size_t tdm_hone_bytes(uint32_t maxbs);

/* The list's top k into o->top (top->matched: the documents scored),
 * where the index's stored bounds bound the scoring (bounds.h,
 * tdm_score_stored_bound); TDM_OK or a decode error. */
int tdm_hone_rank(const tdm_hone *o, void *mem);

#endif
