/* The on-disk index format (docs/FORMAT.md describes it byte by byte).
 *
 * Little-endian throughout; every section and every list starts 8-byte
 * aligned, so a memory-mapped file can be read in place through these
 * structs. The writer and the reader share this header; nothing else should
 * depend on the byte layout.
 */
#ifndef TDM_INDEX_FORMAT_H
#define TDM_INDEX_FORMAT_H

#include <stdint.h>

#define TDM_IDX_MAGIC "TDMINDEX"       /* 8 bytes, no NUL */
#define TDM_IDX_VERSION 1u             /* readers refuse anything newer */
#define TDM_IDX_DEFAULT_K1 1.2
#define TDM_IDX_DEFAULT_B 0.75
#define TDM_IDX_NAME_MAX 32            /* stemmer and codec names, NUL-padded */
#define TDM_IDX_TERM_MAX 1024u         /* longest term the format accepts, bytes */

enum tdm_idx_section {
    TDM_SEC_LEXICON = 0,   /* tdm_idx_term[nterms], sorted by term bytes */
    TDM_SEC_TERMS = 1,     /* term bytes, referenced by the lexicon */
    TDM_SEC_DOCLENS = 2,   /* uint32[ndocs]: tokens per document */
    TDM_SEC_DOCNAME_OFFS = 3, /* uint64[ndocs + 1]: offsets into DOCNAMES */
    TDM_SEC_DOCNAMES = 4,  /* NUL-terminated names, back to back */
    TDM_SEC_STOPWORDS = 5, /* NUL-terminated stopwords used at build time */
    TDM_SEC_POSTINGS = 6,  /* the lists, each 8-byte aligned (tdm_idx_list + arrays) */
    TDM_SEC_COUNT
};

/* Fixed header at offset 0 (160 bytes); the section table follows it. */
typedef struct tdm_idx_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size;      /* sizeof(tdm_idx_header) */
    uint32_t nsections;        /* entries in the section table that follows */
    uint32_t flags;            /* 0; reserved */
    uint64_t file_size;        /* whole file, for truncation checks */
    uint64_t ndocs;
    uint64_t nterms;
    uint64_t npostings;
    uint64_t total_doclen;     /* sum of DOCLENS */
    double k1, b;              /* BM25 parameters of the stored upper bounds */
    char codec[TDM_IDX_NAME_MAX];   /* codec name used to build (informative) */
    char stemmer[TDM_IDX_NAME_MAX]; /* Snowball language, or "none" */
    uint32_t nstopwords;
    uint32_t reserved;
    uint64_t checksum;         /* XXH64 (seed 0) of the header with this field 0
                                  plus the section table */
} tdm_idx_header;

/* One entry of the section table, which follows the header. */
typedef struct tdm_idx_section_entry {
    uint32_t id;        /* enum tdm_idx_section */
    uint32_t reserved;
    uint64_t offset;    /* from the start of the file, multiple of 8 */
    uint64_t size;      /* bytes, without padding */
    uint64_t checksum;  /* XXH64 (seed 0) of the section's bytes */
} tdm_idx_section_entry;

/* One lexicon entry (48 bytes). */
typedef struct tdm_idx_term {
    uint64_t term_off;  /* into TERMS */
    uint32_t term_len;
    uint32_t df;        /* postings in the list */
    uint64_t cf;        /* sum of term frequencies */
    uint64_t list_off;  /* into POSTINGS, multiple of 8 */
    uint64_t list_size; /* bytes of the list, without padding */
    float max_score;    /* BM25 upper bound over the whole list */
    uint32_t reserved;
} tdm_idx_term;

/* Header of one list inside POSTINGS (96 bytes); the arrays follow it, each
 * starting 8-byte aligned, in this order:
 *   doc_bases[nblocks] doc_offsets[nblocks+1] doc_words[doc_nwords]
 *   freq_bases[nblocks] freq_offsets[nblocks+1] freq_words[freq_nwords]
 *   block_first[nblocks] block_last[nblocks]     (uint32 docids)
 *   block_max[nblocks]                           (float BM25 upper bounds)
 * Docids are encoded with delta = 1, frequencies as tf - 1 with delta = 0,
 * both with the same codec and block size. */
typedef struct tdm_idx_list {
    uint32_t codec;       /* enum tdm_codec_id */
    uint32_t n;           /* = df */
    uint32_t block_size;
    uint32_t nblocks;
    uint64_t doc_nwords;
    uint64_t freq_nwords;
    uint32_t doc_params[8];
    uint32_t freq_params[8];
} tdm_idx_list;

#endif
