/* Test hooks of the drivers (host/drive): switches and twins that only the tests use,
 * kept out of the product headers so that product code never reaches for
 * them by accident. Nothing here is part of the library's contract. */
#ifndef TDM_DRIVE_SEARCH_TESTING_H
#define TDM_DRIVE_SEARCH_TESTING_H

#include <stddef.h>
#include <stdint.h>

#include "tandem.h"

/* A device batch whose tables pass `limit` entries (instead of 2^32 - 1) is
 * refused as too big, so that its queries rerun alone; 0 gives the default
 * back. Process-wide; meant to be set while no search runs. */
void tdm_search_batch_limit_force(uint64_t limit);

/* The runs alone of a batch call's queries (search_alone.c) of exactly
 * `nterms` distinct known terms fail with `code` (TDM_ERR_*) instead of
 * running: a query's own error (TDM_ERR_CORRUPT, say) or one that ends the
 * call (TDM_ERR_OPENCL); nterms 0 gives the default back. Process-wide;
 * meant to be set while no search runs. */
void tdm_search_alone_fail_force(uint32_t nterms, int code);

/* One query of terms on the planner's device in the caller's thread
 * (public errors, as tdm_search_terms): prepared and run as a lane runs
 * it, without the scheduler (search_run.c); the oracle test_sched compares
 * the lanes' answers with. */
int tdm_search_terms_plain(tdm_search *s, const tdm_search_term *terms, size_t n,
                           const tdm_search_options *opts, tdm_search_result **out);

#endif
