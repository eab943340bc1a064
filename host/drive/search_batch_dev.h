/* The range-kernel batch's tables as the device left them, for the tests,
 * and what cuts a group into batches (search_batch_dev.c; the batch itself
 * is search.h's tdm_search_dev_batch). */
#ifndef TDM_QUERY_SEARCH_BATCH_DEV_H
#define TDM_QUERY_SEARCH_BATCH_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "search.h"

/* tdm_search_dev_batch (salg not AND: AND takes search_batch_and.h), then
 * *terms gets the batch's term table (*nterms terms of TDM_SEARCH_TW words,
 * queries in order: words 5 and 6 each term's bound and MaxScore order as
 * the range kernel read them) and *bmax the batch's block bounds (*nbmax,
 * queries then terms in order), both malloc'ed (NULL after a failure). */
int tdm_search_dev_batch_tables(const tdm_sdev *sd, uint32_t ndocs, tdm_sbq *const *qs,
                                uint32_t n, int salg, uint32_t k, uint32_t **terms, float **bmax,
                                size_t *nterms, size_t *nbmax, tdm_err *err);

/* Whether a device batch of algorithm salg at k runs query it by the
 * compressed cursors (tdm_search_zrange_batch or _queue: no decoded
 * postings) when every query of the batch has it; its cursors, terms x
 * ranges x (TDM_ZR_CW + 2 x the batch's largest block) words, must then fit
 * the device's budget (tdm_search_zr_words; the batch gets fewer ranges
 * until they do), and a batch of a range each always does when its terms
 * x (TDM_ZR_CW + 2 x block) fit. Ranked AND by Wu's mapping (the plan's
 * and_wu) has no cursors. */
int tdm_search_batch_zr(const tdm_sbq *it, int salg);

/* The heap slots at most of a device batch of nq queries on device d at k
 * over ndocs documents (their ranges' caps, and the device's ranges they
 * share, times k): what search_batch.c counts to keep a batch's heaps
 * within TDM_TUNE_BATCH_HEAP_MEM_DIV of the device's memory. */
uint64_t tdm_search_batch_heap_keys(const tdm_device *d, uint32_t ndocs, uint32_t k, uint64_t nq);

#endif
