/* What the areas above index (query) need from a public tdm_index handle.
 * Not part of the public API. */
#ifndef TDM_INDEX_PRIV_H
#define TDM_INDEX_PRIV_H

#include <stddef.h>

#include "reader.h"
#include "tandem.h"

/* The reader behind an open index (owned by it, valid until
 * tdm_index_close); NULL for NULL. Thread-safe: the reader is immutable.
 * For a split opened whole (tdm_index_open_shards), shard 0's: its
 * lexicon, analyzer, document count and lengths are the whole index's, its
 * postings and names only its own. */
const tdm_ireader *tdm_index_ireader(const tdm_index *index);

/* A split opened whole: its shards' readers in order (*rs, owned by the
 * index; a holder beyond it takes tdm_ireader_ref) and how many; 0 and
 * NULL for one index file. */
size_t tdm_index_shards(const tdm_index *index, tdm_ireader *const **rs);

#endif
