/* Building an index from text collections with bounded memory.
 *
 * Documents come from parsers (parse.h) in input order and get docids 0, 1, ...
 * Postings accumulate in memory until the budget is reached; then the terms
 * are sorted and written as a run file next to the output; at the end the
 * runs are merged term by term into the index writer. The public entry point
 * is tdm_index_build (include/tandem.h); this is its internal form.
 */
#ifndef TDM_INDEX_BUILD_H
#define TDM_INDEX_BUILD_H

#include "common/error.h"
#include "tandem.h"

int tdm_build_index(const char *const *inputs, size_t ninputs, const char *out_path,
                    const tdm_index_build_options *opts, tdm_err *err);

#endif
