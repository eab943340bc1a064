/* The analyzer (stemmer and stopwords) carried through CIFF and PISA, which
 * have no field for it: one text line,
 *   tandem-analyzer: stemmer=NAME stopwords=N WORD...
 * at the end of a CIFF header's description, or alone in a PISA collection's
 * side file BASE.analyzer. An index whose analyzer is not known (imported
 * without one) records the stemmer "unknown": queries are lowercased and
 * split but not stemmed or stopped, and the CLI warns when none of a query's
 * terms is in it. */
#ifndef TDM_INDEX_ANALYZER_H
#define TDM_INDEX_ANALYZER_H

#include <stddef.h>

#include "common/error.h"

#define TDM_ANALYZER_PREFIX "tandem-analyzer:"
#define TDM_ANALYZER_EXT ".analyzer"

typedef struct tdm_analyzer {
    char stemmer[32];          /* "" while not known */
    char **stops;              /* malloc'd */
    size_t nstops;
    char *mem;                 /* the words, when parsed */
} tdm_analyzer;

/* The line for an index's analyzer (malloc'd, newline-terminated), or NULL
 * with *err set when out of memory; "" (malloc'd) for the stemmer "unknown",
 * which is nothing to carry. Words with white space are left out: no token
 * can match them. */
char *tdm_analyzer_format(const char *stemmer, const char *const *stops, size_t n,
                          tdm_err *err);

/* tdm_analyzer_format of an open index's own analyzer. */
struct tdm_ireader;
char *tdm_analyzer_of_index(const struct tdm_ireader *r, tdm_err *err);

/* Finds the line in `text` (at a line start) and parses it into *a (which
 * starts zeroed); no line leaves a->stemmer "". A malformed line is
 * TDM_ERR_FORMAT naming `where`. */
int tdm_analyzer_parse(const char *text, const char *where, tdm_analyzer *a, tdm_err *err);

/* tdm_analyzer_parse of the file at `path`; a missing or empty file is no
 * analyzer. */
int tdm_analyzer_read_file(const char *path, tdm_analyzer *a, tdm_err *err);

/* What an import records: `stemmer` and `stopwords` (a list name or file,
 * tokenize.h), where given, over what the input carried; a stemmer neither
 * gave is "unknown" (and then no stopwords unless given). Checks that the
 * stemmer exists. */
int tdm_analyzer_choose(tdm_analyzer *a, const char *stemmer, const char *stopwords,
                        tdm_err *err);

void tdm_analyzer_free(tdm_analyzer *a);

#endif
