/* Writing an index file: open -> documents -> lists in term order -> finish.
 *
 *   tdm_iwriter *w;
 *   tdm_iwriter_open(path, &opts, &w, err);
 *   tdm_iwriter_set_docs(w, ndocs, lengths, names, err);   (or add_doc per doc)
 *   for each term in strictly increasing byte order:
 *       tdm_iwriter_add_list(w, term, len, docids, freqs, n, err);
 *   tdm_iwriter_finish(w, err);   writes PATH.tmp.<pid>.<tag>, fsyncs, renames to PATH
 *   tdm_iwriter_free(w);          always; removes the temporary file if unfinished
 *
 * Documents must all be given before the first list (block-max BM25 bounds
 * need the document lengths). Memory: the per-term arrays (about 25 bytes a
 * term plus its bytes), the document lengths and names; payloads stream to
 * the file, block-table rows (16 bytes per block) to an unlinked spill file
 * next to it. Limits of format 2: a term's cf and the term bytes below 2^32,
 * the payload below 2^32 words (TDM_ERR_LIMIT). One writer per thread
 * (tdm_iwriter_add_lists makes its own threads).
 */
#ifndef TDM_INDEX_WRITER_H
#define TDM_INDEX_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "bm25.h"   /* tdm_bm25, which used to live here */
#include "common/error.h"

typedef struct tdm_iwriter tdm_iwriter;

/* Zero-initialise; zero / NULL fields mean the default. */
typedef struct tdm_iwriter_options {
    const char *codec;       /* a name in the codec registry; NULL = TDM_CODEC_DEFAULT (bp128) */
    double k1, b;            /* BM25 for the stored bounds; 0 = 1.2 / 0.75 */
    const char *stemmer;     /* recorded for query-time tokenizing; NULL = "none" */
    const char *const *stopwords; /* recorded too; may be NULL */
    size_t nstopwords;
    int bm25_as_given;       /* nonzero: k1 and b exactly as given (b = 0 is BM25
                                without length normalisation); the public API
                                validates them and always sets this */
    int impact;              /* nonzero: an impact index (format.h
                                TDM_IDX_FLAG_IMPACT): impact bounds, and the
                                quantization rule below recorded */
    int quant;               /* enum tdm_quantize */
    unsigned quant_bits;     /* TDM_QUANT_LINEAR */
    double quant_scale;      /* the rule's scale (1 for TDM_QUANT_INTEGER) */
    double quant_max;        /* TDM_QUANT_LINEAR's largest weight */
} tdm_iwriter_options;

int tdm_iwriter_open(const char *path, const tdm_iwriter_options *opts, tdm_iwriter **out,
                     tdm_err *err);
/* All documents at once: lengths[ndocs], names[ndocs] (NULL or a NULL name
 * means the decimal docid). Copies what it needs. */
int tdm_iwriter_set_docs(tdm_iwriter *w, uint32_t ndocs, const uint32_t *lengths,
                         const char *const *names, tdm_err *err);
/* One document at a time, docids 0, 1, 2, ... in call order. */
int tdm_iwriter_add_doc(tdm_iwriter *w, uint32_t length, const char *name, tdm_err *err);
/* One list: docids strictly increasing and < ndocs, freqs >= 1, n >= 1, term
 * bytes (any bytes but NUL, 1..TDM_IDX_TERM_MAX) strictly greater than the
 * previous term's (memcmp order, a prefix sorts first). */
int tdm_iwriter_add_list(tdm_iwriter *w, const char *term, size_t term_len,
                         const uint32_t *docids, const uint32_t *freqs, size_t n,
                         tdm_err *err);
/* One list for tdm_iwriter_add_lists. */
typedef struct tdm_iw_list {
    const char *term;
    size_t len;
    const uint32_t *docids, *freqs;
    size_t n;
} tdm_iw_list;

/* lists[0..n) as n calls of tdm_iwriter_add_list would add them (the same
 * file, the same errors for the first bad list), with the checking, encoding
 * and block scores spread over up to `threads` threads (workers.h); the
 * appending stays in order on the calling thread. */
int tdm_iwriter_add_lists(tdm_iwriter *w, const tdm_iw_list *lists, size_t n, unsigned threads,
                          tdm_err *err);
/* The codec of the lists added from now on (the format allows one per list;
 * the header keeps the name given at open, for information). */
int tdm_iwriter_set_codec(tdm_iwriter *w, const char *codec, tdm_err *err);
int tdm_iwriter_finish(tdm_iwriter *w, tdm_err *err);
void tdm_iwriter_free(tdm_iwriter *w);

/* The byte a block's BM25 bound is stored as (format.h): the smallest q with
 * tdm_idx_block_bound(max_score, q) >= score, or 255 if none is. */
uint8_t tdm_idx_quantize_bound(float max_score, double score);

#endif
