/* The builder's first phase on several threads.
 *
 * The caller (one thread) hands documents over in input order; they are
 * copied into chunks of about chunk_bytes of text, each a contiguous range of
 * docids. Worker threads, each with its own tokenizer and inverter, turn a
 * chunk into sorted run files (runs.h): one at the end of the chunk, more
 * where the worker's postings pass worker_budget first. Runs of a chunk
 * precede those of the next in docid order, so the runs delivered in order
 * merge exactly as the single-threaded builder's do, and the index is the
 * same byte for byte.
 *
 * Delivery happens on the caller's thread, inside tdm_chunker_add and
 * tdm_chunker_finish, in docid order: on_doc for every document (its
 * length after stopping, its name), then on_run for each run of its chunk.
 * When all the input fits in the first chunk, finish hands its documents to
 * `direct` instead, unprocessed (so that a small collection needs no run).
 *
 * Memory: threads + 1 chunk buffers plus threads inverters (each up to
 * about worker_budget before it is written out).
 */
#ifndef TDM_BUILD_BUILD_CHUNKS_H
#define TDM_BUILD_BUILD_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct tdm_chunker tdm_chunker;

typedef struct tdm_chunker_config {
    unsigned threads;          /* workers (>= 1) */
    size_t chunk_bytes;        /* text and names a chunk (a document may exceed it) */
    size_t worker_budget;      /* inverter bytes at which a worker writes a run */
    const char *stemmer;       /* as tdm_tokenizer_open */
    const char *const *stopwords;
    size_t nstopwords;
    int vector;                /* documents are packed vectors (vector.h), not text */
    /* A new run file path, registered for cleanup (malloc'd), NULL when out
     * of memory; called by workers, one at a time. */
    char *(*new_run)(void *user);
    int (*on_doc)(void *user, uint32_t doclen, const char *name, tdm_err *err);
    /* Takes the path (malloc'd) over, also when it fails. */
    int (*on_run)(void *user, char *path, tdm_err *err);
    int (*direct)(void *user, const char *name, const char *text, size_t len, tdm_err *err);
    void *user;
} tdm_chunker_config;

int tdm_chunker_open(const tdm_chunker_config *cfg, tdm_chunker **out, tdm_err *err);
/* One document, docid = the number added before. May block until a worker
 * is free; delivers what is complete. */
int tdm_chunker_add(tdm_chunker *c, const char *name, const char *text, size_t len,
                    tdm_err *err);
/* Processes what is left and delivers everything. */
int tdm_chunker_finish(tdm_chunker *c, tdm_err *err);
/* Stops the workers; run files not delivered are removed. Accepts NULL. */
void tdm_chunker_free(tdm_chunker *c);

#endif
