/* Ranked AND on the host path (search_host.c): the documents holding every
 * term of the query, their top k.
 *
 * The shortest list is read a block at a time: its block's documents are
 * the candidates, filtered list by list in ascending df (each list's
 * cursor moves forward once over them: whole blocks passed by their stored
 * last docids, a block decoded only where a candidate falls in it, a
 * candidate kept or dropped without a branch), and the block's matches
 * scored together, each sum in term order, frequencies decoded only for
 * the blocks that hold a match. Per candidate that is a compare and a
 * short scan in a tight loop, where a cursor seek per candidate and list
 * (PISA's ranked AND, and this path's before) pays a call and several
 * unpredictable branches. */
#ifndef TDM_DRIVE_SEARCH_HOST_AND_H
#define TDM_DRIVE_SEARCH_HOST_AND_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "query/query.h"
#include "query/score.h"
#include "search_host_dec.h"
#include "search_host_topk.h"

typedef struct tdm_hand {
    const tdm_query *q;
    const tdm_scorer *sc;
    const uint32_t *dl;       /* document lengths */
    const tdm_hlist *lists;   /* [nt] in term order, nt >= 1 */
    size_t nt;
    uint32_t maxbs;           /* the largest block of the lists' codecs */
    tdm_htopk *top;
    tdm_err *err;
} tdm_hand;

/* Scratch bytes tdm_hand_rank needs (16-byte aligned). */
size_t tdm_hand_bytes(size_t nt, uint32_t maxbs);

/* The top k of the documents holding every term into a->top; TDM_OK or a
 * decode error. */
int tdm_hand_rank(const tdm_hand *a, void *mem);

#endif
