/* The compressed variant's seed, on the host (search_hseed.c), for the
 * pruning algorithms' shared threshold (drive/search_seed.h has the
 * decoded variants' device seed). */
#ifndef TDM_PLAN_SEARCH_HSEED_H
#define TDM_PLAN_SEARCH_HSEED_H

#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"

struct tdm_splan;
struct tdm_sprep;
struct tdm_bcache;

/* The compressed variant decodes nothing before its range kernel, so its
 * seed comes from the host: for each term with at least k postings, the
 * k-th best of its postings' float scores (score.h's formula with p's
 * constants and the term's qw, word 4), found by decoding its blocks on the
 * host in descending order of their bounds (p->bmax) until the k-th score
 * reached is >= the next block's bound, or TDM_TUNE_HSEED_K_TIMES (k /
 * block size + 1) + TDM_TUNE_HSEED_EXTRA_BLOCKS blocks were decoded (then
 * the k-th best of those: lower, still valid); the largest of those over the terms. Its float bits in *seed (0:
 * none: no term has k postings, a list is damaged, or p's block bounds are
 * made on the device, p->device_bounds). bc (may be NULL)
 * keeps each term's value (bounds.h, tdm_bcache_kth_*), so a term seen
 * again costs a lookup; a term's block bounds where p has not made them
 * (tdm_sprep_build_defer) are made for that term alone, where its value is
 * computed. TDM_OK or TDM_ERR_NOMEM. Thread-safe (bc is). */
int tdm_search_hseed(const struct tdm_sprep *p, const tdm_ireader *r, struct tdm_bcache *bc,
                     uint32_t k, uint32_t *seed, tdm_err *err);
/* Whether a run of algorithm salg with plan pl and k gets the host seed:
 * the pruning algorithms on the compressed variant, when k >= 100, on a
 * GPU's plan (groups of ranges) or on a plan of 32 ranges or more; on the
 * decoded variant when `batched` (a query planned for a batch of several:
 * the device batch has no seed pass of its own; H200, 10M documents,
 * batches of 512, k10, its range kernel took 154 us a MaxScore query
 * unseeded); and OR on the group kernel from k = 100 when `batched` (a
 * batch call's lone runs, whose host seeds overlap the device: H200, 8.8M
 * SPLADE-shaped documents, SPLADE++ queries, OR k 1,000 in batches of 500,
 * 209 q/s unseeded, 759 seeded; one query at a time the cold terms' seeds
 * cost the host more than the device saved, p99 5.7 -> 8-9 ms); the
 * pruning algorithms on the decoded variants alone below the row's
 * hseed_alone_below_k (instead of the device seed's two launches: then
 * tdm_search_seeded says no). TANDEM_ZR_SEED=0 never, =1 always, for A/B
 * runs. */
int tdm_search_hseeded(const struct tdm_splan *pl, int salg, uint32_t k, int batched);


/* Where the plan says so (pl->hseeded, the planner's tdm_search_hseeded):
 * the host seed into p's term table (word 7 of term 0, the shared threshold
 * G the range kernels start from, where the device seed puts it), raised to
 * it. salg names the run in the profile. */
int tdm_search_hseed_plan(struct tdm_sprep *p, const tdm_ireader *r, struct tdm_bcache *bc,
                          const struct tdm_splan *pl, int salg, uint32_t k, tdm_err *err);

#endif
