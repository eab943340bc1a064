/* Reading an index file through a read-only memory mapping.
 *
 * Opening validates the header, the section table, the checksums of every
 * section except POSTINGS, and the lexicon (sorted terms, lists in bounds):
 * O(lexicon + documents), never O(postings). A list's structure is validated
 * when tdm_ireader_list builds its view (O(blocks of that list)); the
 * POSTINGS checksum is checked only by tdm_ireader_verify.
 *
 * Threads: an open reader is immutable; any number of threads may call the
 * functions below on it at once (each passes its own tdm_err).
 */
#ifndef TDM_INDEX_READER_H
#define TDM_INDEX_READER_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "common/error.h"

typedef struct tdm_ireader tdm_ireader;

/* A view of one list. Every pointer points into the mapping: valid until
 * tdm_ireader_close, read-only (writing through them faults). docs and freqs
 * have borrowed = 1; tdm_encoded_free on them is harmless. freqs hold tf - 1. */
typedef struct tdm_ilist {
    uint64_t term_index;
    const char *term;          /* not NUL-terminated: term_len bytes */
    size_t term_len;
    uint32_t df;
    uint64_t cf;
    float max_score;           /* BM25 upper bound over the list */
    tdm_encoded docs;          /* delta = 1 */
    tdm_encoded freqs;         /* delta = 0, tf - 1 */
    uint32_t nblocks;          /* = docs.nblocks = freqs.nblocks */
    const uint32_t *block_first;  /* [nblocks] first docid of each block */
    const uint32_t *block_last;   /* [nblocks] last docid of each block */
    const float *block_max;       /* [nblocks] BM25 upper bound of each block */
} tdm_ilist;

/* Collection-wide facts from the header. */
typedef struct tdm_ireader_info {
    uint32_t version;
    uint64_t ndocs, nterms, npostings, total_doclen;
    double avg_doclen;
    double k1, b;
    char codec[32];
    char stemmer[32];
    uint32_t nstopwords;
    uint64_t file_size;
    uint64_t section_size[7];   /* by enum tdm_idx_section */
} tdm_ireader_info;

/* Maps `path` and validates it. Errors name the file and the byte offset. */
int tdm_ireader_open(const char *path, tdm_ireader **out, tdm_err *err);
/* The same on a buffer (copied; for tests and fuzzing); `name` labels errors. */
int tdm_ireader_open_mem(const void *data, size_t size, const char *name, tdm_ireader **out,
                         tdm_err *err);
void tdm_ireader_close(tdm_ireader *r);

const tdm_ireader_info *tdm_ireader_info_get(const tdm_ireader *r);
const char *tdm_ireader_path(const tdm_ireader *r);

/* Binary search: *index gets the term's position, or TDM_ERR_NOT_FOUND. */
int tdm_ireader_find(const tdm_ireader *r, const char *term, size_t len, uint64_t *index);
/* The term at position i (0 <= i < nterms); NULL if out of range. */
const char *tdm_ireader_term(const tdm_ireader *r, uint64_t i, size_t *len, uint32_t *df,
                             uint64_t *cf);
/* Builds the view of list i, validating its structure. */
int tdm_ireader_list(const tdm_ireader *r, uint64_t i, tdm_ilist *out, tdm_err *err);
/* Decodes list i into docids[df] and freqs[df] (tf, not tf - 1); either may
 * be NULL. Checks docids are strictly increasing and < ndocs. */
int tdm_ireader_decode(const tdm_ireader *r, uint64_t i, uint32_t *docids, uint32_t *freqs,
                       tdm_err *err);

const uint32_t *tdm_ireader_doclens(const tdm_ireader *r);  /* [ndocs] */
/* The name of document d, NUL-terminated in the mapping; NULL if d is out of
 * range or the entry is malformed. */
const char *tdm_ireader_docname(const tdm_ireader *r, uint64_t d);
/* Stopword i (0 <= i < nstopwords), NULL if out of range. */
const char *tdm_ireader_stopword(const tdm_ireader *r, uint32_t i);

/* Full check: the POSTINGS checksum, then every list decoded and compared
 * with its df, cf, block metadata and bounds. */
int tdm_ireader_verify(const tdm_ireader *r, tdm_err *err);

#endif
