/* The scheduler of a search handle (docs/SCHED.md): every engine device a
 * lane with a worker thread and a queue; queries placed by policy and the
 * lanes' cost models; batches under load; faults handed to other lanes.
 *
 * It sits above host/drive and host/plan: a query is prepared once in the caller's
 * thread (plan/search_prepare.h, tdm_search_prepare), the scheduler reads the
 * prepared query (its lists' lengths, its plan's algorithm) to place it, and
 * a lane runs it on its device (tdm_search_run_prepared). The public search
 * calls (search_api.c) are built on it.
 *
 * Threads: tdm_sched_search and tdm_sched_stats_get from any number of
 * threads at once; tdm_sched_close with no call running. */
#ifndef TDM_SCHED_SCHED_H
#define TDM_SCHED_SCHED_H

#include "common/error.h"
#include "tandem.h"

typedef struct tdm_sched tdm_sched;

/* Lanes for every device of s (its engine's settings: policy, window,
 * threshold, deadline, calibration, test switches), the stored cost models
 * loaded (else calibrated on sample queries), workers started. */
int tdm_sched_open(tdm_search *s, tdm_sched **out, tdm_err *err);
/* Stops the workers, stores the cost models. Accepts NULL. Bounded: a
 * worker stuck in a run the watchdog abandoned is left (detached); then
 * sc stays allocated for it and 1 is returned: the caller keeps what such
 * a run reads (the search handle) allocated too. 0 otherwise. */
int tdm_sched_close(tdm_sched *sc);

/* Ranks one query (text or terms) by opts' policy (else the engine's):
 * placed on a lane, run there (or in the caller's thread when that lane is
 * idle under light load: watched by the run watchdog like a lane's run, so
 * a caller whose device hangs waits for it), answered once. *out on
 * success. */
int tdm_sched_search(tdm_sched *sc, const tdm_search_query *q, const tdm_search_options *opts,
                     tdm_search_result **out, tdm_err *err);

/* tdm_sched_search in two halves, for a caller that places several
 * queries before it waits (a partitioned handle: one on each partition's
 * lane, run at once). Begin prepares the query and queues it on a lane
 * (never runs it in the caller's thread; a query needing no lane, or
 * failing its preparation, is answered here); *call (allocated, also on a
 * failure, which tdm_sched_end reports) is ended exactly once by
 * tdm_sched_end, which waits for the answer and gives what
 * tdm_sched_search would have. Begin returns TDM_OK or TDM_ERR_NOMEM
 * (*call NULL). */
typedef struct tdm_sched_call tdm_sched_call;
int tdm_sched_begin(tdm_sched *sc, const tdm_search_query *q, const tdm_search_options *opts,
                    tdm_sched_call **call, tdm_err *err);
int tdm_sched_end(tdm_sched_call *call, tdm_search_result **out, tdm_err *err);

/* Ranks a batch (tdm_search_batch) with the checked options o: placed on
 * the lanes by policy, split by predicted finish under hybrid; results[i]
 * as tdm_search_batch fills them. */
int tdm_sched_batch_search(tdm_sched *sc, const tdm_search_query *queries, size_t n,
                           const tdm_search_options *o, tdm_search_result **results,
                           tdm_err *err);

/* A snapshot of the counters into st (as far as st->struct_size goes). */
void tdm_sched_stats_get(tdm_sched *sc, tdm_sched_stats *st);

#endif
