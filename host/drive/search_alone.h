/* A batch call's queries that run alone (search_alone.c): each through the
 * single-query path (tdm_search_dev_run), several at once on host threads
 * where the device's row allows, so that one query's host work (its
 * launches, its download's wait, its checks) overlaps another's device
 * work. search_batch.c hands them here. */
#ifndef TDM_DRIVE_SEARCH_ALONE_H
#define TDM_DRIVE_SEARCH_ALONE_H

#include <stddef.h>

#include "search.h"

/* Whether error rc ends a whole batch call (host memory, a device, a bug)
 * rather than belonging to one of its queries. */
int tdm_search_fatal(int rc);

/* Query it alone with algorithm salg: its block bounds filled where salg
 * prunes, then tdm_search_dev_run on its plan's device; it->batch = 1. A
 * failure of its own goes to it->rc (it->err); one that ends the call
 * (tdm_err_reach beyond the request) is returned, with its message in err. */
int tdm_search_alone_run(const struct tdm_search *s, tdm_sbq *it, int salg, tdm_err *err);

/* Runs items[0..n) alone, each with its own algorithm (it->salg): a
 * device's on up to tdm_search_alone_threads of it at once (the caller's
 * thread one of them, the others the process's kept helpers,
 * common/workers.h). Each query keeps its own error; an error that ends
 * the call stops the queries not started yet and is returned (the first
 * such in items' order among those that ran), never a partial answer. */
int tdm_search_alone_all(const struct tdm_search *s, tdm_sbq *const *items, size_t n,
                         tdm_err *err);

/* Queries alone at once on device sd: TANDEM_BATCH_ALONE_THREADS, else its
 * row's alone_threads; 1 where a run must hold the device's serial lock
 * (PoCL's basic driver: runtime/serial.h) and on Oclgrind. */
unsigned tdm_search_alone_threads(const tdm_sdev *sd);

#endif
