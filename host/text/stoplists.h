/* The stopword lists tandem ships, chosen by name wherever a stopword file
 * is accepted (`--stopwords NAME`, tdm_index_build_options.stopwords):
 *   lucene    Lucene's default English set (EnglishAnalyzer), which Anserini
 *             uses: 33 words
 *   snowball  Snowball's English list (snowballstem.org), 174 words; its
 *             contractions ("don't") never match, since the tokenizer splits
 *             at the apostrophe
 *   none      the empty list
 * A file named like one of these is given with a path: ./lucene. */
#ifndef TDM_TEXT_STOPLISTS_H
#define TDM_TEXT_STOPLISTS_H

#include <stddef.h>

/* The named list's words and their count (*n), or NULL if `name` names none. */
const char *const *tdm_stoplist_named(const char *name, size_t *n);

#endif
