/* Text to terms: the one tokenizer used at build time and at query time.
 *
 * A term is a maximal run of ASCII letters and digits, lowercased. Every
 * other byte (punctuation, space, control, and every byte >= 0x80, so any
 * UTF-8 or binary input is safe) separates terms. Runs longer than
 * TDM_TERM_MAX_BYTES are skipped (hashes, base64: never useful query terms).
 * Then stopwords (compared with the lowercased surface form) are dropped and
 * the rest are stemmed with Snowball (libstemmer).
 *
 * Threads: a tokenizer holds a Snowball stemmer, which is not thread-safe:
 * one tokenizer per thread.
 */
#ifndef TDM_TEXT_TOKENIZE_H
#define TDM_TEXT_TOKENIZE_H

#include <stddef.h>

#include "common/error.h"

#define TDM_TERM_MAX_BYTES 64

typedef struct tdm_tokenizer tdm_tokenizer;

/* stemmer: "none", NULL (= "english") or a Snowball language name
 * ("english", "porter", "french", ...; sb_stemmer_list()). stopwords: words
 * (lowercased by this function) or NULL. */
int tdm_tokenizer_open(const char *stemmer, const char *const *stopwords, size_t nstopwords,
                       tdm_tokenizer **out, tdm_err *err);
void tdm_tokenizer_free(tdm_tokenizer *t);

/* A stopword list by name (lucene, snowball, none: stoplists.h) or from a
 * file: words separated by white space or newlines, '#' starts a comment
 * line; any readable file (/dev/null: no words). *words is malloc'd (one
 * block: free(*words)). */
int tdm_stopwords_load(const char *path, char ***words, size_t *n, tdm_err *err);

/* Called once per term in text order; a non-zero return stops tokenizing and
 * is returned by tdm_tokenize. `term` is valid only during the call. */
typedef int (*tdm_token_fn)(void *user, const char *term, size_t len);

int tdm_tokenize(tdm_tokenizer *t, const char *text, size_t len, tdm_token_fn fn, void *user);

/* The normalized form of one word (lowercase, stem); 0 if it yields no term
 * (stopword, too long, no alphanumerics), else its length (written to out,
 * NUL-terminated, out has TDM_TERM_MAX_BYTES * 2 + 1 bytes at least). */
size_t tdm_tokenize_first(tdm_tokenizer *t, const char *text, size_t len, char *out);

#endif
