/* The seed of the pruning algorithms' shared threshold (cl/search_seed.cl):
 * a score at least k distinct documents of the query reach, found on the
 * device from the decoded lists before the range kernel runs, so that short
 * docid ranges (a GPU's) prune against the query's k-th score from their
 * first document. The planner (search_plan.c) says when a query gets one
 * (tdm_splan.seed).
 *
 * Threads: pure functions, and enqueues on buffers the caller owns. */
#ifndef TDM_QUERY_SEARCH_SEED_H
#define TDM_QUERY_SEARCH_SEED_H

#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "query/search_layout.h" /* TDM_SEED_BUCKETS */
#include "runtime/runtime.h"

struct tdm_splan;
struct tdm_sprep;
struct tdm_bcache;

/* Whether a run of algorithm salg (TDM_SALG_*) with plan pl and k gets the
 * seed (search_plan.c): the pruning algorithms, on a GPU's plan (groups of
 * more than one range) or when the ranges are short for k. */
int tdm_search_seeded(const struct tdm_splan *pl, int salg, uint32_t k);

/* Bytes of the histogram buffer the seed of a query of nt terms needs. */
size_t tdm_search_seed_bytes(uint32_t nt);

/* Enqueues on q (NULL: d's compute queue), after `wait` (may be NULL): the
 * zeroing of hist's first nt terms unless hist_zero (the caller knows them
 * zero: a seed leaves the histogram it read zeroed, so a buffer kept
 * between queries needs a fill only when made), the histogram over the
 * npost decoded postings (docs, freqs; term table `terms` with words 5 set
 * by tdm_search_order) and the selection that raises word 7 of term 0 to
 * the seed (the term table must hold 0 there before). doclens holds ndocs
 * lengths: a posting past them (a forged index's) is not counted. *done
 * gets the last command's event; *launches grows by the kernels enqueued
 * (2). Non-blocking. */
int tdm_search_seed_enqueue(tdm_device *d, cl_command_queue q, cl_mem docs, cl_mem freqs,
                            cl_mem terms, cl_mem doclens, uint32_t ndocs, cl_mem hist,
                            int hist_zero, uint32_t nt, uint32_t npost, uint32_t kind, float c0, float c1,
                            uint32_t k, cl_event wait, cl_event *done, uint32_t *launches,
                            tdm_err *err);

/* The plain-C reference: the seed's float bits for a term table of nt terms
 * (TDM_SEARCH_TW words each, words 0, 1, 4, 5 set) over the decoded
 * postings, by sorting each list's scores (score.h's float formula with
 * constants kind, c0, c1): for each term with at least k postings, its k-th
 * largest score's top 16 bits (at most its bound's) unless that is 1023 or
 * more below the bound's; the largest of those, shifted back; 0 if none.
 * TDM_ERR_NOMEM or TDM_OK. */
int tdm_search_seed_ref(const uint32_t *terms, uint32_t nt, const uint32_t *docs,
                        const uint32_t *freqs, const uint32_t *doclens, uint32_t kind, float c0,
                        float c1, uint32_t k, uint32_t *seed);

/* ---- the compressed variant's seed, on the host (search_hseed.c)
 *
 * The compressed variant decodes nothing before its range kernel, so its
 * seed comes from the host: for each term with at least k postings, the
 * k-th best of its postings' float scores (score.h's formula with p's
 * constants and the term's qw, word 4), found by decoding its blocks on the
 * host in descending order of their bounds (p->bmax) until the k-th score
 * reached is >= the next block's bound, or HSEED_EXTRA_BLOCKS + 2 (k / block
 * size + 1) blocks were decoded (then the k-th best of those: lower, still
 * valid); the largest of those over the terms. Its float bits in *seed (0:
 * none: no term has k postings, a list is damaged, or p's block bounds are
 * made on the device, p->device_bounds). bc (may be NULL)
 * keeps each term's value (bounds.h, tdm_bcache_kth_*), so a term seen
 * again costs a lookup. TDM_OK or TDM_ERR_NOMEM. Thread-safe (bc is). */
int tdm_search_hseed(const struct tdm_sprep *p, const tdm_ireader *r, struct tdm_bcache *bc,
                     uint32_t k, uint32_t *seed, tdm_err *err);

/* Whether a run of algorithm salg with plan pl and k gets the host seed:
 * the pruning algorithms on the compressed variant, when k >= 100, on a
 * GPU's plan (groups of ranges) or on a plan of 32 ranges or more; on the
 * decoded variant when `batched` (a query planned for a batch of several:
 * the device batch has no seed pass of its own; H200, 10M documents,
 * batches of 512, k10, its range kernel took 154 us a MaxScore query
 * unseeded). TANDEM_ZR_SEED=0 never, =1 always, for A/B runs (the decoded
 * variant only when batched). */
int tdm_search_hseeded(const struct tdm_splan *pl, int salg, uint32_t k, int batched);

/* Where tdm_search_hseeded says so: the host seed into p's term table (word
 * 7 of term 0, the shared threshold G the range kernels start from, where
 * the device seed puts it), raised to it. */
int tdm_search_hseed_plan(struct tdm_sprep *p, const tdm_ireader *r, struct tdm_bcache *bc,
                          const struct tdm_splan *pl, int salg, uint32_t k, int batched,
                          tdm_err *err);

#endif
