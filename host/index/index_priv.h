/* What the areas above index (query) need from a public tdm_index handle.
 * Not part of the public API. */
#ifndef TDM_INDEX_PRIV_H
#define TDM_INDEX_PRIV_H

#include "reader.h"
#include "tandem.h"

/* The reader behind an open index (owned by it, valid until
 * tdm_index_close); NULL for NULL. Thread-safe: the reader is immutable. */
const tdm_ireader *tdm_index_ireader(const tdm_index *index);

#endif
