/* The seed of the pruning algorithms' shared threshold (cl/search_seed.cl):
 * a score at least k distinct documents of the query reach, found on the
 * device from the decoded lists before the range kernel runs, so that short
 * docid ranges (a GPU's) prune against the query's k-th score from their
 * first document. The planner (search_plan.c) says when a query gets one
 * (tdm_search_seeded, plan/search_plan.h); the compressed variant's comes
 * from the host (plan/search_hseed.h).
 *
 * Threads: pure functions, and enqueues on buffers the caller owns. */
#ifndef TDM_DRIVE_SEARCH_SEED_H
#define TDM_DRIVE_SEARCH_SEED_H

#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "plan/search_layout.h" /* TDM_SEED_BUCKETS */
#include "runtime/runtime.h"


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

#endif
