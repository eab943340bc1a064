/* The index area's test hooks (HACKING.md, "Test hooks"): not for product
 * code but where it reads the hook. */
#ifndef TDM_INDEX_TESTING_H
#define TDM_INDEX_TESTING_H

#include <stdint.h>

#include "reader.h"

/* Lexicon hashes made in this process so far (lexhash.c): a handle of n
 * shards made from one index makes one, not n + 1. */
uint64_t tdm_ir_lexhash_builds(void);
/* Which lexicon hash r uses: readers that share one give the same. */
const void *tdm_ir_lexhash_id(const tdm_ireader *r);

#endif
