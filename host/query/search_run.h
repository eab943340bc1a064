/* A query prepared once, and its runs (search_prepare.c, search_run.c).
 *
 * The way of a query through the engine: tdm_search_prepare tokenizes (text)
 * or looks up (terms) it, prepares its lists for the kernels (tdm_sprep:
 * decode jobs, block bounds, term table) and plans it (search_plan.c) for
 * its pinned device or the planner's. The scheduler (host/sched) reads
 * what it needs from the prepared query (its lists' lengths, the plan's
 * algorithm), places it on a lane, and the lane runs it with
 * tdm_search_run_prepared on its device: planned again only where that
 * device or the batch it runs in differ from the prepared plan's, seeded,
 * run, answered. A prepared query may run again (a lane that failed hands
 * it to another); it is freed by whoever prepared it.
 *
 * Threads: a prepared query is one caller's (or one lane's while it runs
 * it); every function here is safe on many threads for different queries. */
#ifndef TDM_QUERY_SEARCH_RUN_H
#define TDM_QUERY_SEARCH_RUN_H

#include <stddef.h>

#include "common/error.h"
#include "search.h"
#include "tandem.h"

/* The public options' defaults (tdm_search_options_init's). */
void tdm_search_options_defaults(tdm_search_options *o);
/* Checks and completes public options (struct_size, ranges of every field)
 * into *o. */
int tdm_search_options_check(const tdm_search_options *in, tdm_search_options *o, tdm_err *err);
/* Frees a result (tdm_search_result_free's). Accepts NULL. */
void tdm_search_result_release(tdm_search_result *r);

/* The handle with the index resident on every device, no lanes (the
 * scheduler's open adds them: host/sched/search_api.c). */
int tdm_search_handle_open(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                           tdm_err *err);
/* The handle on the index with no device and no lanes: a partitioned
 * handle's own (its partitions' handles added by host/sched/partition.c). */
int tdm_search_handle_open_bare(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                                tdm_err *err);
/* A partition's handle (docs/PARTITION.md): the shard r (taken: closed
 * with the handle, also on failure) resident on engine device `device`
 * only (the handle's device 0: device_base `device`), no lanes. */
int tdm_search_handle_open_part(tdm_engine *engine, tdm_ireader *r, int device,
                                tdm_search **out, tdm_err *err);
/* Closes s and, for a partitioned handle, its partitions' handles (their
 * lanes closed first by the caller). */
void tdm_search_handle_close(tdm_search *s);

/* Tokenizes (text) or looks up (terms) rq into the finished query q
 * (tdm_query_init'ed by the caller): tdm_search_prepare's first step. */
int tdm_search_query_build(tdm_search *s, const tdm_search_query *rq, tdm_query *q, tdm_err *err);
/* Prepares rq with the checked options o into it (zeroed here): built,
 * prepared and planned, or it->prc (and it->err) the query's own failure
 * (a bad term, too many terms, a damaged list) or one that fails its whole
 * call (tdm_search_prep_fatal). it->pl.alg is the algorithm the planner
 * runs (auto resolved) whenever the query built, even with no terms. Free
 * with tdm_sbq_free. Returns it->prc. */
int tdm_search_prepare(tdm_search *s, const tdm_search_query *rq, const tdm_search_options *o,
                       tdm_sbq *it);
/* The n queries qs[i], each with o, into items[i]; a big batch on several
 * threads (preparing costs tens of microseconds of host time a query). */
void tdm_search_prepare_all(tdm_search *s, const tdm_search_query *qs, const tdm_search_options *o,
                            size_t n, tdm_sbq *items);
/* Runs fn(ctx, i) for every i < n: on the calling thread and, where n is
 * per_thread or more, helpers (one per per_thread items, within the CPUs
 * and 16). fn must be safe on many threads for different i. */
void tdm_search_parallel(size_t n, size_t per_thread, void (*fn)(void *ctx, size_t i), void *ctx);
/* Whether a preparation's failure prc fails the whole call (host memory, a
 * device gone) rather than its query alone. */
int tdm_search_prep_fatal(int prc);
void tdm_sbq_free(tdm_sbq *it);

/* Runs the prepared queries items[0 .. n) on engine device `device` (-1:
 * each its prepared plan's), as one call: those that land on one device
 * with the same algorithm, k and scoring share one set of launches.
 * results[i] gets query i's result: a query failing alone (its preparation,
 * or its list on the device) has status != TDM_OK, its message in error and
 * no hits. Returns TDM_OK when every results[i] is set; else the error that
 * failed the whole call (out of memory, OpenCL or device memory failure) in
 * *err, with every results[i] NULL. Each result's `seconds` is this call's
 * wall time. */
int tdm_search_run_prepared(tdm_search *s, tdm_sbq *const *items, size_t n, int device,
                            tdm_search_result **results, tdm_err *err);

#endif
