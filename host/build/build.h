/* Building an index from text collections with bounded memory.
 *
 * Documents come from parsers (parse.h) in input order and get docids 0, 1, ...
 * Postings accumulate in memory until the budget is reached; then the terms
 * are sorted and written as a run file next to the output; at the end the
 * runs are merged term by term into the index writer, in passes of at most
 * TDM_BUILD_FANIN runs (so that a tiny budget cannot exhaust file
 * descriptors). Run files and the writer's temporary file are registered
 * with common/cleanup.h (removed on SIGINT/SIGTERM where the program asked
 * for it); leftovers of killed builds into the same path are removed first.
 * With threads > 1 (tdm_index_build_options.threads) the reading thread hands
 * chunks of documents to workers that write the runs (build_chunks.h), merge
 * passes run groups at once and lists are encoded in parallel batches
 * (tdm_iwriter_add_lists); the index is the same file for any thread count.
 * The public entry point is tdm_index_build (include/tandem.h); this is its
 * internal form.
 */
#ifndef TDM_BUILD_BUILD_H
#define TDM_BUILD_BUILD_H

#include "common/error.h"
#include "tandem.h"

#define TDM_BUILD_FANIN 64   /* runs merged at once */
#define TDM_BUILD_MAX_THREADS 1024
/* Threads get at least this much of the budget each (fewer threads run
 * where it is smaller): smaller shares would write a run every few documents. */
#define TDM_BUILD_THREAD_MIN (2u << 20)

int tdm_build_index(const char *const *inputs, size_t ninputs, const char *out_path,
                    const tdm_index_build_options *opts, tdm_err *err);

/* Knobs for tests; zero fields keep the defaults. */
typedef struct tdm_build_tuning {
    size_t budget_bytes;     /* posting budget in bytes instead of memory_mb */
    size_t fanin;            /* runs merged at once (>= 2) instead of TDM_BUILD_FANIN */
    /* Called after each run file of the first phase is complete. */
    void (*after_run)(void *user, size_t nruns);
    void *user;
} tdm_build_tuning;

int tdm_build_index_tuned(const char *const *inputs, size_t ninputs, const char *out_path,
                          const tdm_index_build_options *opts, const tdm_build_tuning *tuning,
                          tdm_err *err);

#endif
