/* Reading an index file (formats 2 and 3, FORMAT.md) through a read-only memory
 * mapping.
 *
 * Opening validates the header, the section table and its padding, the
 * checksums of every section but the arena (the block table included: a
 * few percent of the file), the lexicon and every list descriptor:
 * O(lexicon + documents + blocks), never O(postings). A list's block-table
 * entries are validated when tdm_ireader_list builds its view (O(blocks of
 * that list)). The arena's checksum is checked before any of its bytes is
 * used: by tdm_ireader_list (through tdm_ireader_check_list) before its
 * first view of each list, by a device upload and by the exporters (through
 * tdm_ireader_check_payload); the answer is remembered, so it is hashed
 * once per open reader. A file of format 1 is refused with TDM_ERR_VERSION
 * and a message saying how to convert it.
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
#include "format.h"

typedef struct tdm_ireader tdm_ireader;

/* A view of one list. Every pointer points into the mapping (or, for a
 * one-block list's endpoints and base, into constant tables of the reader):
 * valid until tdm_ireader_close, read-only. The view holds no pointer into
 * itself, so it may be copied freely. docs and freqs have borrowed = 1;
 * tdm_encoded_free on them is harmless. freqs hold tf - 1; freqs.bases
 * aliases docs.bases (decoders ignore bases when delta = 0). */
typedef struct tdm_ilist {
    uint64_t term_index;
    const char *term;          /* not NUL-terminated: term_len bytes */
    size_t term_len;
    uint32_t df;
    uint64_t cf;
    float max_score;           /* BM25 upper bound over the list */
    tdm_encoded docs;          /* delta = 1; docs.bases[b] = docid before block b */
    tdm_encoded freqs;         /* delta = 0, tf - 1 */
    uint32_t nblocks;          /* = docs.nblocks = freqs.nblocks */
    uint32_t arena_word;       /* where the list starts in the arena (FORMAT.md) */
    /* Block metadata, only for lists of more than one block (NULL for one
     * block, whose base is 0, whose last docid is the list's, and whose
     * bound is max_score). Block b holds the docids in
     * (docs.bases[b], block_last[b]] (from 0 inclusive for b = 0). */
    uint32_t first_entry;         /* first block-table entry (FORMAT.md) */
    const uint32_t *block_last;   /* [nblocks] last docid of each block */
    const uint8_t *block_maxq;    /* [nblocks] quantized BM25 bound of each block */
} tdm_ilist;

/* Block b's BM25 upper bound: tdm_idx_block_bound(max_score, block_maxq[b]),
 * or max_score for a one-block list. */
float tdm_ilist_block_max(const tdm_ilist *l, uint32_t b);

/* Collection-wide facts from the header. */
typedef struct tdm_ireader_info {
    uint32_t version;
    uint64_t ndocs, nterms, npostings, total_doclen;
    double avg_doclen;
    double k1, b;               /* BM25 of the stored bounds; 0 in an impact index */
    char codec[32];
    char stemmer[32];
    uint32_t nstopwords;
    int impact;                 /* frequencies are impacts, bounds impact bounds */
    int quant;                  /* impact: enum tdm_quantize */
    unsigned quant_bits;        /* TDM_QUANT_LINEAR's bits */
    double quant_scale;         /* impact = round(weight x scale) (+ 1 for linear) */
    double quant_max;           /* TDM_QUANT_LINEAR: the largest weight; else 0 */
    uint64_t file_size;
    uint64_t section_size[TDM_SEC_COUNT];   /* by enum tdm_idx_section */
    uint64_t arena_words;       /* ARENA section, in words */
    uint64_t block_entries;     /* rows of the block table */
    /* A shard (format.h, docs/PARTITION.md): ndocs, total_doclen and
     * avg_doclen above are the whole index's; npostings the shard's. */
    int shard;                  /* 1: the file is a shard */
    uint64_t split_id;
    uint32_t shard_index, nshards;
    uint32_t doc_lo, doc_hi;    /* its documents [doc_lo, doc_hi); 0, ndocs if plain */
    uint64_t whole_npostings;   /* the whole index's postings (npostings if plain) */
} tdm_ireader_info;

/* Maps `path` and validates it. Errors name the file and the byte offset. */
int tdm_ireader_open(const char *path, tdm_ireader **out, tdm_err *err);
/* The same on a buffer (copied; for tests and fuzzing); `name` labels errors. */
int tdm_ireader_open_mem(const void *data, size_t size, const char *name, tdm_ireader **out,
                         tdm_err *err);
/* The same on a malloc'd buffer the reader takes (freed at close, or here
 * on failure): a shard made in memory (index/shard.h). */
int tdm_ireader_open_take(void *data, size_t size, const char *name, tdm_ireader **out,
                          tdm_err *err);
/* Drops an owner of r: the last one unmaps and frees it. */
void tdm_ireader_close(tdm_ireader *r);
/* Adds an owner of r (each closes it once): a reader shared by an index
 * and the search handles of its shards (sched/partition.c). Returns r. */
tdm_ireader *tdm_ireader_ref(const tdm_ireader *r);

const tdm_ireader_info *tdm_ireader_info_get(const tdm_ireader *r);
const char *tdm_ireader_path(const tdm_ireader *r);
/* The name of section id ("arena", "lists", ...), or NULL past the last. */
const char *tdm_ireader_section_name(unsigned id);
/* Section id in the mapping, *size its bytes: what a device upload copies. */
const void *tdm_ireader_section(const tdm_ireader *r, unsigned id, uint64_t *size);

/* *index gets the term's position, or TDM_ERR_NOT_FOUND: through the
 * lexicon's hash (made at the first lookup of a reader of 4,096 terms or
 * more, ~40 ms for 1M terms), else a binary search. */
int tdm_ireader_find(const tdm_ireader *r, const char *term, size_t len, uint64_t *index);
/* Makes the lexicon's hash now rather than at the first lookup (a search
 * handle's open). Safe on many threads. */
void tdm_ireader_index_terms(const tdm_ireader *r);
/* r, freshly opened and not yet used by another thread, uses from's
 * lexicon hash (one table, made once, freed with the last reader holding
 * it) where their terms are the same bytes: 1; else it keeps its own, 0.
 * The shards of one index have its lexicon (shard.c, index_api.c); from
 * may be in use meanwhile. */
int tdm_ireader_share_lexicon(tdm_ireader *r, const tdm_ireader *from);
/* The term at position i (0 <= i < nterms); NULL if out of range. */
const char *tdm_ireader_term(const tdm_ireader *r, uint64_t i, size_t *len, uint32_t *df,
                             uint64_t *cf);
/* Builds the view of list i, validating its structure. */
int tdm_ireader_list(const tdm_ireader *r, uint64_t i, tdm_ilist *out, tdm_err *err);
/* What tdm_ireader_list gives of list i's blocks (nblocks, first_entry,
 * max_score), from its descriptor alone (checked at open): no byte of the
 * list read, nothing validated. TDM_ERR_INVALID_ARG past the last term. */
int tdm_ireader_list_meta(const tdm_ireader *r, uint64_t i, uint32_t *nblocks,
                          uint32_t *first_entry, float *max_score);
/* Decodes list i into docids[df] and freqs[df] (tf, not tf - 1); either may
 * be NULL. Checks docids are strictly increasing and < ndocs, each block
 * ends at its stored last docid, and the frequencies sum to cf, so a damaged
 * payload is TDM_ERR_CORRUPT rather than wrong postings. */
int tdm_ireader_decode(const tdm_ireader *r, uint64_t i, uint32_t *docids, uint32_t *freqs,
                       tdm_err *err);

const uint32_t *tdm_ireader_doclens(const tdm_ireader *r);  /* [ndocs] */
/* The df that scores read for term i (its idf): the whole index's in a
 * shard, where a list's own df counts only the shard's postings (and may be
 * 0: a term of the whole index without postings here); else the list's. */
uint32_t tdm_ireader_score_df(const tdm_ireader *r, uint64_t i);
/* A shard's section (format.h), NULL for a plain index. */
const tdm_idx_shard *tdm_ireader_shard(const tdm_ireader *r);
/* The file's header, as validated, in version 3's layout: a version 2
 * impact index's rule moved from k1 and b to quant_scale and quant_max;
 * version, header_size and checksum the file's (index/shard.c copies it). */
const tdm_idx_header *tdm_ireader_header(const tdm_ireader *r);
/* The name of document d, NUL-terminated in the mapping; NULL if d is out of
 * range or the entry is malformed. */
const char *tdm_ireader_docname(const tdm_ireader *r, uint64_t d);
/* Stopword i (0 <= i < nstopwords), NULL if out of range. */
const char *tdm_ireader_stopword(const tdm_ireader *r, uint32_t i);

/* The checksum of the section open leaves alone (ARENA): O(index) the
 * first time, remembered after (thread-safe). Exporters and device uploads
 * call it before reading the arena. TDM_ERR_CORRUPT naming the file and
 * the section. */
int tdm_ireader_check_payload(const tdm_ireader *r, tdm_err *err);
/* Everything list i's bytes are checked by before their first use: the
 * arena's checksum (tdm_ireader_check_payload). A list cache calls it
 * before uploading a list; tdm_ireader_list calls it itself. */
int tdm_ireader_check_list(const tdm_ireader *r, uint64_t i, tdm_err *err);
/* Full check: tdm_ireader_check_payload, then every list decoded and
 * compared with its df, cf, block metadata and bounds. */
int tdm_ireader_verify(const tdm_ireader *r, tdm_err *err);

#endif
