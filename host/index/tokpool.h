/* A pool of an index's tokenizers, so that query-time text goes through the
 * index's own stopwords and stemmer without opening a Snowball stemmer per
 * call (sb_stemmer_new allocates and is far slower than stemming a query).
 *
 * A Snowball stemmer is not thread-safe, so a tokenizer serves one thread at
 * a time: tdm_tokpool_get hands out a free one (opening a new one when all
 * are in use) and tdm_tokpool_put returns it. The pool keeps every tokenizer
 * it opened until tdm_tokpool_free, so it holds as many as the most threads
 * that ever tokenized at once.
 *
 * Threads: get and put may be called from any number of threads at once.
 */
#ifndef TDM_INDEX_TOKPOOL_H
#define TDM_INDEX_TOKPOOL_H

#include "common/error.h"
#include "index/reader.h"
#include "text/tokenize.h"

typedef struct tdm_tokpool tdm_tokpool;

/* A pool for the stemmer and stopwords recorded in r (which must outlive the
 * pool). Opens one tokenizer at once, so an index whose stemmer this build
 * does not know fails here (TDM_ERR_INVALID_ARG naming it), not per query. */
int tdm_tokpool_open(const tdm_ireader *r, tdm_tokpool **out, tdm_err *err);
void tdm_tokpool_free(tdm_tokpool *p);

/* A tokenizer for the calling thread's exclusive use until put back. NULL
 * with err set on failure (out of memory). */
tdm_tokenizer *tdm_tokpool_get(tdm_tokpool *p, tdm_err *err);
void tdm_tokpool_put(tdm_tokpool *p, tdm_tokenizer *t);

/* How many tokenizers the pool has opened (for tests). */
size_t tdm_tokpool_size(tdm_tokpool *p);

#endif
