/* Synthetic text collections for benchmarks, deterministic from a seed.
 *
 * Each document draws from its own random stream, seeded from (seed, docid),
 * so documents are generated on several threads and written in order, the
 * same bytes for any thread count. Each token is drawn from a Zipf distribution over a vocabulary of V terms
 * (P(rank k) ~ 1/k^s, rejection-inversion sampling: O(1) a token, no
 * tables); document lengths are log-normal. Term names follow frequency rank:
 * given a query log, the k-th most frequent term is named after the k-th most
 * frequent query word, so real queries hit lists of realistic lengths; later
 * ranks get synthetic names that no query word uses. Output streams in
 * batches: memory is the vocabulary's names and 2 x 4 x threads blocks of
 * 256 documents, not the collection.
 *
 * Words are counted with the index tokenizer's rule (maximal runs of ASCII
 * letters and digits, lowercased, runs over 64 bytes skipped) but not stemmed:
 * build with `--stemmer none` to keep the rank mapping exact.
 *
 * TDM_GEN_VECTORS writes a learned sparse collection instead, shaped like a
 * SPLADE index (Anserini's JSON vectors, docs/LEARNED_SPARSE.md, "A generated
 * collection"): a document is a set of distinct terms drawn by Zipf rank
 * (drawn again on a repeat), as many as a log-normal length says (mean
 * TDM_GEN_VECTOR_MEAN_TERMS), each with an integer impact in
 * 1 .. TDM_GEN_IMPACT_MAX from a log-normal whose median grows with the
 * term's rank (rarer terms weigh more). Names come from a query log's tokens
 * taken as written (WordPieces such as "##ing" whole), most queries first.
 *
 * gzip compresses each block of documents as its own gzip member on the
 * worker that made it (zlib level 1); the decompressed bytes are the same as
 * without it.
 *
 * Reentrant; no global state (the threads are the call's own).
 */
#ifndef TDM_SUPPORT_COLLECTION_GEN_H
#define TDM_SUPPORT_COLLECTION_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

enum tdm_gen_format {
    TDM_GEN_LINES = 0,   /* name<TAB>text, one document a line */
    TDM_GEN_JSONL = 1,   /* {"id": "name", "contents": "text"} one a line */
    TDM_GEN_VECTORS = 2  /* {"id": "name", "contents": "", "vector": {"term": impact, ...}} */
};

/* Learned sparse defaults (TDM_GEN_VECTORS). */
#define TDM_GEN_VECTOR_MEAN_TERMS 100.0 /* distinct terms a document */
#define TDM_GEN_VECTOR_SIGMA 0.5        /* log-normal shape of that count */
#define TDM_GEN_VECTOR_VOCAB 30522      /* BERT's WordPiece vocabulary (SPLADE's) */
#define TDM_GEN_IMPACT_MAX 255          /* impacts are 1 .. 255 (8 bits, as quantized exports) */

/* Limits of the options (tdm_gen_collection refuses values beyond them, and
 * nan or inf, with TDM_ERR_INVALID_ARG naming the option). */
#define TDM_GEN_MAX_VOCAB (UINT64_C(1) << 32)
#define TDM_GEN_MAX_ZIPF 10.0        /* zipf_s in (0, 10] */
#define TDM_GEN_MAX_MEAN_LEN 1e6     /* mean_len in (0, 10^6]: lengths are capped there */
#define TDM_GEN_MAX_SIGMA 4.0        /* sigma in (0, 4] */

/* Zero-initialise; zero / NULL fields mean the default. */
typedef struct tdm_gen_options {
    uint64_t ndocs;          /* documents (required, >= 1) */
    uint64_t seed;
    uint64_t vocab;          /* V; 0 = max(1000, 10 * T^0.6), T = expected tokens */
    double zipf_s;           /* Zipf exponent; 0 = 1.0 */
    double mean_len;         /* mean document length in tokens; 0 = 250 (vectors:
                                distinct terms, 0 = TDM_GEN_VECTOR_MEAN_TERMS) */
    double sigma;            /* log-normal shape of the lengths; 0 = 0.8 (vectors: 0.5) */
    int format;              /* enum tdm_gen_format */
    const char *vocab_from;  /* query log ("id:text" lines) naming ranks; NULL = none.
                                Vectors: id<TAB>tokens or id:tokens lines, plain or
                                gzip, tokens split on white space (tdm_gen_query_tokens) */
    int gzip;                /* nonzero: gzip the output */
    unsigned threads;        /* 0 = every processor; the output is the same for any */
    /* Called after each batch of documents (at most 1024 per thread) and at
     * the end, on the calling thread; may be NULL. */
    void (*progress)(void *user, uint64_t docs_done, uint64_t tokens_done);
    void *progress_user;
} tdm_gen_options;

/* Writes the collection to `out`. `name` labels I/O errors. */
int tdm_gen_collection(const tdm_gen_options *o, FILE *out, const char *name, tdm_err *err);

/* The words of a query log, most frequent first (ties in byte order):
 * *words is one malloc'd block (free(*words) frees all), *n its length.
 * counts (may be NULL) gets a malloc'd array of the frequencies. */
int tdm_gen_query_words(const char *path, char ***words, size_t *n, uint64_t **counts,
                        tdm_err *err);

/* The tokens of a query log as TDM_GEN_VECTORS names them: lines
 * "id<TAB>tokens" or "id:tokens" (the id ends at the first tab or colon),
 * plain or gzip; tokens are split on ASCII white space and kept as written
 * (1 .. 1024 bytes; longer ones skipped). Ranked by the number of queries
 * holding them (a repeated token, a weight, counts once), ties in byte order;
 * *words, *n and counts as tdm_gen_query_words. Lines starting '{' (JSON
 * queries) are skipped. */
int tdm_gen_query_tokens(const char *path, char ***words, size_t *n, uint64_t **counts,
                         tdm_err *err);

/* The default vocabulary size for ndocs documents of mean length mean_len,
 * at most TDM_GEN_MAX_VOCAB. */
uint64_t tdm_gen_default_vocab(uint64_t ndocs, double mean_len);

#endif
