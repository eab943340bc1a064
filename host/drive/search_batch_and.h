/* Ranked AND for a batch of queries with Wu 2010's element-per-work-item
 * mapping (cl/search_batch_and.cl): one work-item per element of each
 * query's shortest list, the other lists searched through the resident
 * block table, only their blocks that can hold a lead docid decoded (jobs
 * made on the device), the matches' scores summed in term order (the
 * single-query path's bits), then the batch merge (tdm_search_merge_batch)
 * per query. Launches: one decode per codec of the leads, one selection
 * and one decode per codec of the other lists, the scoring, the merge:
 * whatever the batch's size.
 *
 * Threads: thread-safe; each call has its own buffers. */
#ifndef TDM_QUERY_SEARCH_BATCH_AND_H
#define TDM_QUERY_SEARCH_BATCH_AND_H

#include <stdint.h>

#include "search.h"

/* What the kernels wrote, for the tests: per query its matches (count[i])
 * and, from its first lead element on (the lead elements of the queries
 * before it), their docids (hd), scores (hs) and hn = 1: on the device in
 * any order, in the reference for every lead element in order (hn = 0 for
 * one that does not match); per codec the decode jobs the selection made
 * (the non-lead lists of that codec, queries then terms in order, a job per
 * block). */
typedef struct tdm_sband_trace {
    size_t nelem;
    uint32_t nq, *count;
    float *hs;
    uint32_t *hd, *hn;
    tdm_decode_job *jobs[TDM_CODEC_COUNT];
    uint32_t njobs[TDM_CODEC_COUNT];
} tdm_sband_trace;

void tdm_sband_trace_free(tdm_sband_trace *t);

/* Runs the n >= 1 prepared queries qs[i] (ranked AND, one scoring, k) on
 * device sd as one batch: qs[i]->so as tdm_search_dev_batch fills it. With
 * trace non-NULL it also gets the kernels' outputs (free it with
 * tdm_sband_trace_free). TDM_ERR_CORRUPT when a list failed to decode (the
 * caller reruns the queries alone). Blocking. */
int tdm_search_dev_batch_and(const tdm_sdev *sd, tdm_sbq *const *qs, uint32_t n, uint32_t k,
                             tdm_sband_trace *trace, tdm_err *err);

/* The plain-C reference of the kernels: the trace the device must give for
 * qs on index r (lists decoded whole on the host, a lead docid looked up by
 * a binary search of the whole list, scores by score.h's float formula in
 * term order; only the first df postings of a term count, df its term
 * table's word 1). */
int tdm_sband_ref(const tdm_ireader *r, tdm_sbq *const *qs, uint32_t n, tdm_sband_trace *out,
                  tdm_err *err);

#endif
