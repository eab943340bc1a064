/* The oracle: an exhaustive plain-C evaluator that every search algorithm on
 * every device is tested against.
 *
 * It decodes every list of the query whole (index/reader.h), then scores
 * every posting (score.h) term at a time within windows of 32768 docids (the
 * window's accumulators stay in the cache whatever the index's size), so
 * each document's contributions are summed in the query's term order; it
 * keeps the exact top k with a bounded heap of k entries (never a sort of
 * every matching document). Order: score descending, ties broken by the
 * smaller docid. The order is total (docids are distinct), so the top k of
 * any k <= K is exactly the first k entries of the top K: a caller asking
 * for several k may run the largest and take prefixes (test_oracle checks
 * it).
 *
 * Matching: TDM_MATCH_OR, every document holding at least one query term;
 * TDM_MATCH_AND, documents holding every distinct term of the query (unknown
 * terms were dropped when the query was built, so they do not empty an AND).
 * An empty query has no results (TDM_OK, n = 0).
 *
 * Precision: TDM_ORACLE_DOUBLE scores in double (the reference the 1e-5 check
 * uses); TDM_ORACLE_FLOAT with the device-exact float formula of score.h, the
 * list kernels must match bit for bit.
 *
 * Memory: an oracle holds 8 bytes per posting of the longest query it has
 * ranked (its decoded lists, grown as needed and reused) and 512 KiB of
 * window state; nothing per document of the index. A search costs
 * O(postings of its terms + matching documents * log k).
 *
 * Threads: one oracle per thread; the reader may be shared.
 */
#ifndef TDM_HARNESS_ORACLE_H
#define TDM_HARNESS_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "query/query.h"
#include "query/score.h"

#define TDM_TOPK_MAX 10000

enum tdm_match { TDM_MATCH_OR = 0, TDM_MATCH_AND = 1 };
enum tdm_precision { TDM_ORACLE_DOUBLE = 0, TDM_ORACLE_FLOAT = 1 };

typedef struct tdm_hit {
    uint32_t docid;
    double score;       /* in float mode, a float widened exactly */
} tdm_hit;

typedef struct tdm_oracle_request {
    uint32_t k;             /* 1 .. TDM_TOPK_MAX */
    int match;              /* enum tdm_match */
    int precision;          /* enum tdm_precision */
    tdm_score_params score;
} tdm_oracle_request;

typedef struct tdm_oracle tdm_oracle;

int tdm_oracle_open(const tdm_ireader *r, tdm_oracle **out, tdm_err *err);
void tdm_oracle_close(tdm_oracle *o);

/* Ranks q (finished) on the oracle's index. hits has room for req->k
 * entries; *n gets how many were written (min(k, matches)); *matched, if not
 * NULL, the number of matching documents. Errors: TDM_ERR_INVALID_ARG (k out
 * of range, bad mode or scoring parameters), TDM_ERR_NOMEM, and the reader's
 * errors for a corrupt list. */
int tdm_oracle_search(tdm_oracle *o, const tdm_query *q, const tdm_oracle_request *req,
                      tdm_hit *hits, size_t *n, uint64_t *matched, tdm_err *err);

/* The bounded top-k heap the oracle uses, for other host code (and tests):
 * keeps the k best hits pushed, by score descending then docid ascending. */
typedef struct tdm_topk {
    tdm_hit *h;         /* heap, worst at h[0] */
    size_t n, k;
} tdm_topk;

int tdm_topk_init(tdm_topk *t, size_t k);
void tdm_topk_free(tdm_topk *t);
void tdm_topk_push(tdm_topk *t, uint32_t docid, double score);
/* Moves the hits, best first, to out[0 .. t->n) and empties the heap;
 * returns how many. */
size_t tdm_topk_drain(tdm_topk *t, tdm_hit *out);

#endif
