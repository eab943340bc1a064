/* Spreading independent items over threads, for the builder and the
 * collection generator.
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

/* Online processors (at least 1): the default thread count. */
unsigned tdm_ncpus(void);

#endif
