/* The host path's top k (search_host.c): the kernels' keys (score bits << 32
 * | ~docid, best = largest) of the documents a pass matched, the k largest
 * kept, best first.
 *
 * Why not a heap: at k = 1000 a heap's sift-downs and its final heap sort
 * cost the host about 50 ns a kept key, more than decoding and scoring
 * every posting. Keys above the threshold go into a buffer instead (one
 * compare a match); a full buffer is cut to its k largest by radix
 * selection (the threshold rises to the k-th), and the k kept are radix
 * sorted at the end. At k <= TDM_HTOPK_HEAP_MAX, where a heap's steps are
 * few, the buffer is a min-heap of k keys (no cut, no radix pass). Keys are
 * distinct (one a document), so the k largest are one set, whatever order
 * they came in. */
#ifndef TDM_DRIVE_SEARCH_HOST_TOPK_H
#define TDM_DRIVE_SEARCH_HOST_TOPK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "query/score.h"

#define TDM_HTOPK_HEAP_MAX 64u

/* Document d's key with float score s: s's bits above ~d (scores are >= 0,
 * so their bits order as the floats; a tie goes to the smaller docid). */
static inline uint64_t tdm_htopk_key(float s, uint32_t d)
{
    return (uint64_t)tdm_f2u(s) << 32 | (uint32_t)~d;
}

typedef struct tdm_htopk {
    uint64_t *buf;      /* [cap] keys above thr, unordered */
    uint64_t *tmp;      /* [cap] scratch for selection and sorting */
    uint32_t n, cap, k; /* cap > k (a heap: cap = k) */
    int heap;           /* buf is a min-heap of at most k keys */
    int full;           /* k keys were kept once: only keys above thr count */
    uint64_t thr;       /* the k-th largest key kept, once full */
    uint64_t matched;   /* keys pushed */
} tdm_htopk;

/* Scratch keys a top k of k needs (buf and tmp together). */
size_t tdm_htopk_words(uint32_t k);

/* Sets t up for k >= 1 on mem (tdm_htopk_words(k) keys). */
void tdm_htopk_init(tdm_htopk *t, uint32_t k, uint64_t *mem);

/* As tdm_htopk_init, for a pass that prunes by the threshold (MaxScore's
 * evaluator): a heap to TDM_HTOPK_TIGHT_HEAP_MAX, past it cuts every
 * TDM_HTOPK_TIGHT_SLACK keys, so the threshold trails the k-th key by
 * little; the cuts' cost is won back by the postings a higher threshold
 * passes (search_host_topk.c says what was measured). */
#define TDM_HTOPK_TIGHT_HEAP_MAX 256u
#define TDM_HTOPK_TIGHT_SLACK 128u
void tdm_htopk_init_tight(tdm_htopk *t, uint32_t k, uint64_t *mem);

/* Empties t for another pass (k and memory kept). */
void tdm_htopk_reset(tdm_htopk *t);

/* A key above the threshold into the buffer or the heap. */
void tdm_htopk_add(tdm_htopk *t, uint64_t key);

/* A match: kept if it may rank among the k largest. */
static inline void tdm_htopk_push(tdm_htopk *t, uint64_t key)
{
    t->matched++;
    if (!t->full || key > t->thr)
        tdm_htopk_add(t, key);
}

/* The score of the k-th key kept, once k are (-inf before): what a pass
 * that prunes must beat. */
static inline float tdm_htopk_score_thr(const tdm_htopk *t)
{
    return t->full ? tdm_u2f((uint32_t)(t->thr >> 32)) : -INFINITY;
}

/* The k largest (fewer where fewer were pushed) into out, best first;
 * returns how many. */
uint32_t tdm_htopk_finish(tdm_htopk *t, uint64_t *out);

#endif
