/* Sorted run files of the builder and their k-way merge.
 *
 * A run holds terms in increasing byte order, each as
 *   varint term length, term bytes, varint n, n x (varint docid gap, varint tf)
 * ending with a zero length. Runs are written in docid order, so a term's
 * postings are the concatenation of its lists over the runs, in run order.
 * Temporary files only: nothing outside a build reads them.
 */
#ifndef TDM_BUILD_RUNS_H
#define TDM_BUILD_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct tdm_runwriter tdm_runwriter;

/* Creates the run file `path` (a name of tdm_temp_name) exclusively. */
int tdm_run_create(const char *path, tdm_runwriter **out, tdm_err *err);
int tdm_run_add(tdm_runwriter *w, const char *term, size_t len, const uint32_t *docids,
                const uint32_t *freqs, size_t n, tdm_err *err);
/* Writes the end marker and closes; frees w either way. */
int tdm_run_close(tdm_runwriter *w, tdm_err *err);

/* Called once per distinct term, in order, with the merged postings. */
typedef int (*tdm_merge_fn)(void *user, const char *term, size_t len, const uint32_t *docids,
                            const uint32_t *freqs, size_t n, tdm_err *err);
int tdm_runs_merge(const char *const *paths, size_t nruns, tdm_merge_fn fn, void *user,
                   tdm_err *err);

/* Merges the runs into w, a term's postings copied as they are read (the
 * bytes tdm_run_add would write for the merged list, without holding it:
 * memory is the runs' read buffers, whatever the lists' lengths). */
int tdm_runs_merge_to_run(const char *const *paths, size_t nruns, tdm_runwriter *w,
                          tdm_err *err);

#endif
