/* The reader's state, shared by reader.c (open, header, sections, documents),
 * reader_lex.c (terms and list descriptors) and reader_list.c (list views,
 * decoding, verification). Not for other files. */
#ifndef TDM_INDEX_READER_PRIV_H
#define TDM_INDEX_READER_PRIV_H

#include "format.h"
#include "reader.h"

#define OFF(x) ((unsigned long long)(x))

typedef struct tdm_lexhash tdm_lexhash; /* lexhash.c */

struct tdm_ireader {
    char *path;
    const unsigned char *base;  /* the mapping (or a heap copy) */
    size_t size;
    int mapped;                 /* base is an mmap */
    int owned;                  /* base is a heap copy */
    tdm_ireader_info info;
    tdm_idx_header hdr;         /* the file's header in version 3's layout (a version 2
                                   header's rule moved to quant_scale, quant_max) */
    uint32_t hsize;             /* the header's size in the file (version 2: 160) */
    const tdm_idx_section_entry *sec;  /* [TDM_SEC_COUNT] */
    const uint32_t *arena;
    const tdm_idx_list *lists;
    const uint8_t *codecs;
    const uint32_t *blk_last, *blk_docs, *blk_freqs;
    const uint8_t *blk_max;
    const uint32_t *doclens;
    const uint32_t *termoffs, *cfs;
    const char *terms;
    const uint64_t *nameoffs;
    const char *names;
    const char **stopwords;     /* [nstopwords], into the mapping */
    unsigned char *list_ok;     /* [nterms] 1 once tdm_ireader_list checked the list (made
                                   at first use, atomically; a cache, not the file) */
    int arena_state;            /* ARENA's checksum: 0 not checked yet, 1 matches,
                                   -1 does not (atomic; a cache, not the file) */
    uint32_t nsec;              /* sections in the file: TDM_SEC_COUNT, or
                                   TDM_SEC_SHARD_COUNT for a shard */
    const tdm_idx_shard *shard; /* a shard's section, else NULL */
    const uint32_t *gdf;        /* a shard's whole-index dfs [nterms], else NULL */
    int refs;                   /* owners (atomic): tdm_ireader_ref adds one, close drops one */
    tdm_lexhash *lexhash;       /* the lexicon's hash (lexhash.c): a cache, not the file;
                                   held by every reader of the same lexicon that shares it */
};

/* File offset of byte `at` of section id. */
static inline unsigned long long tdm_ir_at(const tdm_ireader *r, unsigned id, uint64_t at)
{
    return OFF(r->sec[id].offset + at);
}

/* A shard's own sections and facts (reader_shard.c): sizes, the range,
 * the whole-index dfs; fills r->info's shard fields. TDM_OK for a plain
 * file. After tdm_ir_check_lexicon. */
int tdm_ir_check_shard(tdm_ireader *r, tdm_err *err);
/* tdm_ireader_verify's pass over a shard's lists (reader_list.c): the
 * plain checks, docids within the shard's range, bounds with the whole
 * index's statistics. */
int tdm_ir_verify_shard(const tdm_ireader *r, tdm_err *err);

/* Terms strictly increasing, list descriptors consistent (reader_lex.c). */
int tdm_ir_check_lexicon(tdm_ireader *r, tdm_err *err);
/* The lexicon's hash (lexhash.c): a reader's own from its creation (new:
 * 0 when out of memory), made once (tdm_ir_lexhash_make, by the first
 * caller; safe on many threads), its reference dropped at close (free; the
 * last frees it). find: 1 and *index for a term, 0 for none, -1 while there
 * is no table (search the sorted terms). Shared through
 * tdm_ireader_share_lexicon (reader.h). */
int tdm_ir_lexhash_new(tdm_ireader *r);
void tdm_ir_lexhash_make(const tdm_ireader *r);
int tdm_ir_lexhash_find(const tdm_ireader *r, const char *term, size_t len, uint64_t *index);
void tdm_ir_lexhash_free(tdm_ireader *r);
/* Where list i ends in the arena (the next list's start, or the arena's end). */
uint64_t tdm_ir_list_end(const tdm_ireader *r, uint64_t i);

#endif
