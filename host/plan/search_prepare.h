/* A query prepared once (search_prepare.c): tokenized (text) or looked up
 * (terms), its lists prepared for the kernels (tdm_sprep: decode jobs,
 * block bounds, term table) and planned (search_plan.c) for its pinned
 * device or the planner's. The scheduler (host/sched) reads what it needs
 * from the prepared query (its lists' lengths, the plan's algorithm) and
 * places it; a lane runs it (host/drive/search_run.h). A prepared query may
 * run again (a lane that failed hands it to another); it is freed by
 * whoever prepared it.
 *
 * Threads: a prepared query is one caller's (or one lane's while it runs
 * it); every function here is safe on many threads for different queries. */
#ifndef TDM_PLAN_SEARCH_PREPARE_H
#define TDM_PLAN_SEARCH_PREPARE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "plan/search_handle.h"
#include "plan/search_plan.h"
#include "plan/sprep.h"
#include "query/query.h"
#include "tandem.h"

/* What one device run returns. */
typedef struct tdm_sout {
    uint64_t *keys;     /* [k] best first: score bits << 32 | ~docid */
    uint32_t n;         /* keys written */
    uint32_t total;     /* candidates in the range heaps (>= k iff >= k matches) */
    uint32_t launches;
    uint64_t bytes_up, bytes_down;
} tdm_sout;

/* A query on its way through the engine (search_run.h): the finished
 * query, its options, its preparation and plan, its device output, and its
 * own outcome. Prepared once (tdm_search_prepare); a run (planned again
 * where its device or batch differ) resets the run's part. */
typedef struct tdm_sbq {
    tdm_query q;
    tdm_search_options o; /* checked (tdm_search_options_check) */
    int prc;            /* the preparation's outcome: TDM_OK, or the query's own
                           error (in err) that every run of it answers */
    tdm_sprep p;        /* built for a device's run; left empty (prepped 0)
                           for a query the planner's host rule answers
                           (pl.host: the host path reads q and o alone) */
    int prepped;        /* p is built (free it) */
    tdm_splan pl;
    int pl_batched;     /* pl was made for a batch of several (tdm_search_plan) */
    int run;            /* goes to a device (it has terms, no error; not
                           pl.host, answered on the host by its run) */
    int salg;           /* TDM_SALG_* */
    uint32_t k;
    tdm_sout so;        /* so.keys holds k */
    uint32_t batch;     /* queries that shared its launches */
    int rc;             /* TDM_OK, or this query's own error (in err) */
    tdm_err err;
} tdm_sbq;

/* The public options' defaults (tdm_search_options_init's). */
void tdm_search_options_defaults(tdm_search_options *o);
/* Checks and completes public options (struct_size, ranges of every field)
 * into *o. */
int tdm_search_options_check(const tdm_search_options *in, tdm_search_options *o, tdm_err *err);
/* Tokenizes (text) or looks up (terms) rq into the finished query q
 * (tdm_query_init'ed by the caller): tdm_search_prepare's first step. */
int tdm_search_query_build(tdm_search *s, const tdm_search_query *rq, tdm_query *q, tdm_err *err);
/* Prepares rq with the checked options o into it (zeroed here): built,
 * planned and, unless the planner's host rule takes it as soon as its
 * lists' lengths are known (tdm_search_plan_host), its lists prepared for
 * a device; or it->prc (and it->err) the query's own failure
 * (a bad term, too many terms, a damaged list) or one that fails its whole
 * call (tdm_search_prep_fatal). it->pl.alg is the algorithm the planner
 * runs (auto resolved) whenever the query built, even with no terms. Free
 * with tdm_sbq_free. Returns it->prc. */
int tdm_search_prepare(tdm_search *s, const tdm_search_query *rq, const tdm_search_options *o,
                       tdm_sbq *it);
/* The n queries qs[i], each with o, into items[i], as a batch call's
 * (the planner's host rule for a batch of several when n > 1: a query it
 * answers on the host is answered there even where its run is alone); a
 * big batch on several threads (preparing costs tens of microseconds of
 * host time a query). */
void tdm_search_prepare_all(tdm_search *s, const tdm_search_query *qs, const tdm_search_options *o,
                            size_t n, tdm_sbq *items);
/* Runs fn(ctx, i) for every i < n: on the calling thread and, where n is
 * per_thread or more, helpers (one per per_thread items, within the CPUs
 * and 16) made for the call. fn must be safe on many threads for different
 * i. */
void tdm_search_parallel(size_t n, size_t per_thread, void (*fn)(void *ctx, size_t i), void *ctx);
/* The same on the helpers of the process's pool (common/workers.h,
 * tdm_pool_for), kept between calls: for short work (a batch's queries). */
void tdm_search_parallel_pool(size_t n, size_t per_thread, void (*fn)(void *ctx, size_t i),
                              void *ctx);
/* Whether a preparation's failure prc fails the whole call (host memory, a
 * device gone) rather than its query alone. */
int tdm_search_prep_fatal(int prc);
void tdm_sbq_free(tdm_sbq *it);

#endif
