/* Spreading independent items over threads: for the builder and the
 * collection generator (threads made for the call), and for search batches
 * (a pool's, kept).
 *
 * tdm_par_for calls fn(ctx, item, worker) for every item in [0, n), taking
 * items in increasing order from an atomic counter, on up to `threads`
 * threads (the caller's among them, as worker 0; the others are created for
 * the call and joined before it returns). Where a thread cannot be created
 * the ones that run take its share, so every item is done exactly once.
 * fn must be safe to run concurrently for different items; `worker` (below
 * `threads`) indexes per-thread scratch state.
 */
#ifndef TDM_COMMON_WORKERS_H
#define TDM_COMMON_WORKERS_H

#include <stddef.h>

typedef void (*tdm_par_fn)(void *ctx, size_t item, unsigned worker);

void tdm_par_for(unsigned threads, size_t n, tdm_par_fn fn, void *ctx);

/* The same on up to `threads` threads (at most TDM_POOL_MAX) of which the
 * caller's is one and the others the helpers of a process-wide pool, made
 * at their first use and kept idle between calls: for work repeated many
 * times a second (a search batch's preparation: making and joining 15
 * threads costs a call ~0.5 ms). Calls from several threads at once share
 * the helpers (a call's items are done by the caller where none is free);
 * fn may call tdm_pool_for itself. `worker` numbers are a call's own. */
#define TDM_POOL_MAX 64u
void tdm_pool_for(unsigned threads, size_t n, tdm_par_fn fn, void *ctx);

/* Online processors (at least 1): the default thread count. Read at the
 * first call and kept (a processor brought online later is not seen). */
unsigned tdm_ncpus(void);

#endif
