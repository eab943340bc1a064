/* A query as the engine evaluates it: distinct lexicon terms, each with a
 * weight and the number of times it was given.
 *
 * Building: tdm_query_init, then any mix of
 *   tdm_query_add_text  words through the index's tokenizer (lowercase,
 *                       stopwords, stemmer: the tokenizer must be the index's,
 *                       see index/tokpool.h), each resulting term weight w;
 *                       on an impact index, words split on white space and
 *                       taken exactly as written instead (its terms were
 *                       kept as written: WordPieces such as "##ing" whole),
 *                       a run of one word repeated one term of weight
 *                       w x its length (SPLADE's repeated-token queries);
 *   tdm_query_add_term  a term exactly as stored (already normalised);
 *   tdm_query_add_id    a lexicon position;
 * then tdm_query_finish. Rules:
 *   - a term given c times (by text or otherwise) is ONE entry with
 *     count = c and weight = the sum of its weights (c * w when every
 *     occurrence has weight w): "a a b" weighs a twice as much as b, as in
 *     Lucene, Anserini and PISA's query parsing;
 *   - unknown terms (not in the lexicon) are ignored, and counted in
 *     `unknown`; a query whose terms are all unknown or stopwords has no
 *     terms (and no results: not an error); on a shard, a term of the whole
 *     index without postings in the shard is left out too and counted in
 *     `absent` (it scores nothing here, but AND must match nothing);
 *   - more than TDM_QUERY_MAX_TERMS terms given (after tokenizing, repeats
 *     and unknown terms included) is TDM_ERR_LIMIT;
 *   - a weight must be finite and > 0 (top-k pruning needs non-negative
 *     contributions), else TDM_ERR_INVALID_ARG; an id >= nterms likewise.
 * After tdm_query_finish the terms are sorted by ascending lexicon id: the
 * order in which every device sums a document's score (score.h). On an error
 * the query holds what was added before it: reset it before reuse.
 *
 * Threads: a query is used by one thread at a time; a finished query may be
 * read by many.
 */
#ifndef TDM_QUERY_QUERY_H
#define TDM_QUERY_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "text/tokenize.h"

#define TDM_QUERY_MAX_TERMS 1024

typedef struct tdm_qterm {
    uint64_t id;        /* position in the index's lexicon */
    double weight;      /* the sum of the weights it was given with */
    uint32_t count;     /* how many times it was given */
    uint32_t df;        /* from the lexicon, for planners */
} tdm_qterm;

typedef struct tdm_query {
    tdm_qterm *terms;   /* [nterms] after tdm_query_finish: distinct, ascending id */
    size_t nterms;
    uint32_t given;     /* terms given, repeats and unknown terms included */
    uint32_t unknown;   /* of which not in the lexicon */
    uint32_t absent;    /* of which in the lexicon of a shard's whole index but
                           without postings in the shard (df 0): not in terms;
                           a conjunction over them matches nothing here */
    size_t cap;         /* internal */
    int finished;
} tdm_query;

void tdm_query_init(tdm_query *q);
/* Empties q for reuse, keeping its memory. */
void tdm_query_reset(tdm_query *q);
void tdm_query_free(tdm_query *q);

int tdm_query_add_text(tdm_query *q, const tdm_ireader *r, tdm_tokenizer *t,
                       const char *text, size_t len, double weight, tdm_err *err);
int tdm_query_add_term(tdm_query *q, const tdm_ireader *r, const char *term, size_t len,
                       double weight, tdm_err *err);
int tdm_query_add_id(tdm_query *q, const tdm_ireader *r, uint64_t id, double weight,
                     tdm_err *err);
/* Sorts by id and merges repeats (weights summed in the order given). */
void tdm_query_finish(tdm_query *q);

/* Convenience: a fresh query from text with weight 1 per word, finished. */
int tdm_query_from_text(tdm_query *q, const tdm_ireader *r, tdm_tokenizer *t,
                        const char *text, size_t len, tdm_err *err);

#endif
