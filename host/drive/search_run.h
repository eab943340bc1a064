/* The handle's open and close, and a prepared query's runs (search_run.c).
 *
 * The way of a query through the engine: tdm_search_prepare
 * (plan/search_prepare.h) tokenizes or looks it up, prepares its lists and
 * plans it; the scheduler (host/sched) places it on a lane, and the lane
 * runs it with tdm_search_run_prepared on its device: planned again only
 * where that device or the batch it runs in differ from the prepared
 * plan's, seeded, run, answered.
 *
 * Threads: a prepared query is one caller's (or one lane's while it runs
 * it); every function here is safe on many threads for different queries. */
#ifndef TDM_DRIVE_SEARCH_RUN_H
#define TDM_DRIVE_SEARCH_RUN_H

#include <stddef.h>

#include "common/error.h"
#include "search.h"
#include "tandem.h"

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
