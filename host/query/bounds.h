/* Upper bounds of a query term's float scores per block (score.h's
 * device-exact formula), for pruning (WAND, Block-Max WAND, MaxScore,
 * block skipping in OR) that stays exact.
 *
 * Why sums of bounds are safe: float addition is monotone (a <= a', b <= b'
 * gives fl(a + b) <= fl(a' + b')), so if every term's score is at most its
 * bound, a document's float score, summed in term order, is at most the
 * float sum of those bounds in the same order. A pruning test therefore
 * compares that sum (same order, no FMA) with the threshold.
 *
 * Two sources of bounds:
 *   - recomputed (tdm_score_block_bounds): the largest float score in each
 *     block for the request's parameters, from the postings: exact, valid
 *     for any k1, b, any weight, and impact scoring. O(postings of the list):
 *     a search handle computes them once per (term, parameters) and keeps
 *     them in its tdm_bcache (below).
 *   - from the index's stored bounds (tdm_score_stored_bound), only when
 *     they bound what the request scores: BM25 at the k1 and b the index
 *     stored its bounds for (the stored bound B is >= the double BM25 of
 *     every posting of the block, FORMAT.md, the float score is within
 *     2^-21 relative of weight times that), or impact scores on an impact
 *     index (B is >= every impact of the block, FORMAT.md "Impact indexes";
 *     the float score qw * (float)impact is within 2^-23 relative of weight
 *     times that, bounds.c): (float)(B * weight * TDM_SCORE_BOUND_SLACK) is
 *     an upper bound either way. O(blocks), nothing decoded.
 *
 * Threads: pure functions of their arguments.
 */
#ifndef TDM_QUERY_BOUNDS_H
#define TDM_QUERY_BOUNDS_H

#include "common/error.h"
#include "index/reader.h"
#include "query/query.h"
#include "query/score.h"

/* For the t-th term of q (scored by s, built for q on r): bounds[b] = the
 * largest float score of block b (bounds has room for the list's nblocks,
 * tdm_ireader_list), *list_max = the largest of them. */
int tdm_score_block_bounds(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *s,
                           size_t t, float *bounds, float *list_max, tdm_err *err);

/* A bound on the t-th term's float scores in a block whose stored bound is
 * `stored` (tdm_ilist_block_max); -1 when the stored bounds do not apply
 * (BM25 at k1, b other than the index's; impact scoring of a BM25 index). */
float tdm_score_stored_bound(const tdm_ireader *r, const tdm_query *q, const tdm_scorer *s,
                             size_t t, float stored);
/* Its value where the stored bounds apply: the one expression, for callers
 * that checked that once (a term weighing `weight`). */
static inline float tdm_score_stored_scale(float stored, double weight)
{
    return (float)((double)stored * weight * TDM_SCORE_BOUND_SLACK);
}

/* ---- a cache of recomputed bounds (bounds_cache.c), one per search handle
 *
 * For requests whose k1, b are not those the index stored its bounds for
 * (and for impact scoring of a BM25 index), the bounds of a term's blocks are the exact
 * maxima tdm_score_block_bounds computes, which depend only on the scoring
 * (kind, k1, b), the term, and the term's float weight qw[t] (score.h):
 * that is the key. A hit copies the same floats a recomputation would give,
 * bit for bit, so pruning with them stays exact. A miss computes them on the
 * host (O(postings of the list), outside the lock) and keeps them; the
 * least recently used entries go when the cache would pass its byte budget
 * (an entry larger than the budget is used once and not kept).
 *
 * Threads: every call takes the cache's mutex for a lookup and an insert
 * only; any number of threads may call tdm_bcache_bounds at once.
 * tdm_bcache_close frees everything (no call may be running). */
typedef struct tdm_bcache tdm_bcache;

typedef struct tdm_bcache_stats {
    uint64_t hits, misses, evictions;
    size_t entries, bytes, max_bytes;
} tdm_bcache_stats;

#define TDM_BCACHE_DEFAULT_BYTES ((size_t)64 << 20)

int tdm_bcache_open(size_t max_bytes, tdm_bcache **out, tdm_err *err);
void tdm_bcache_close(tdm_bcache *c);
/* bounds[b] for each block b of q's t-th term scored by s (s built for q on
 * r, the same values as tdm_score_block_bounds): from the cache, or computed
 * and kept. */
int tdm_bcache_bounds(tdm_bcache *c, const tdm_ireader *r, const tdm_query *q,
                      const tdm_scorer *s, size_t t, float *bounds, tdm_err *err);
void tdm_bcache_stats_get(tdm_bcache *c, tdm_bcache_stats *st);

/* The same cache also keeps one float per (scoring kind, the formula's c0
 * and c1 for BM25, term, qw, k): a term's k-th best float score, the host
 * seed's (search_hseed.h), in a table of its own (a 16th of the budget, at
 * most 4 MiB: 65,536 values at the default budget; two slots a set, the
 * older dropped), under
 * 64 locks by set, not the bounds' lock: a GPU batch's threads look one up
 * for each term of each query. _get returns 1 and sets *v on a hit, 0 on a
 * miss; _put keeps v (a racing insert of the same key keeps the first).
 * Thread-safe as above. */
int tdm_bcache_kth_get(tdm_bcache *c, int kind, float c0, float c1, uint64_t term, float qw,
                       uint32_t k, float *v);
void tdm_bcache_kth_put(tdm_bcache *c, int kind, float c0, float c1, uint64_t term, float qw,
                        uint32_t k, float v);

#endif
