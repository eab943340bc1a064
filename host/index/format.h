/* The on-disk index format, version 3 (docs/FORMAT.md describes it byte by
 * byte; version 2 is still read).
 *
 * The file holds the index in the shape a device uses: one arena of 32-bit
 * payload words for every list, one table of fixed-size list descriptors,
 * one global block table (stored as columns) for the lists longer than one
 * block, and the document lengths, each a section that uploads as one buffer.
 * Little-endian throughout; every section starts 64-byte aligned, so a
 * memory-mapped file is read in place through these structs. The writer and
 * the reader share this header; nothing else should depend on the layout.
 */
#ifndef TDM_INDEX_FORMAT_H
#define TDM_INDEX_FORMAT_H

#include <stdint.h>

#include "codec/codec.h"

#define TDM_IDX_MAGIC "TDMINDEX"       /* 8 bytes, no NUL */
#define TDM_IDX_VERSION 3u             /* what writers write; readers refuse newer */
#define TDM_IDX_VERSION_OLDEST 2u      /* the oldest version readers still read */
#define TDM_IDX_HEADER_V2 160u         /* a version 2 header's size: the first 160
                                          bytes of version 3's */
#define TDM_IDX_DEFAULT_K1 1.2
#define TDM_IDX_DEFAULT_B 0.75
#define TDM_IDX_NAME_MAX 32            /* stemmer and codec names, NUL-padded */
#define TDM_IDX_TERM_MAX 1024u         /* longest term the format accepts, bytes */
#define TDM_IDX_ALIGN 64u              /* every section starts at a multiple of this */
/* A one-block list keeps its payload sizes in its descriptor; each of its
 * two payloads is at most this many words (every codec's block is far below:
 * 1024 values of vbyte take at most 1280 words). */
#define TDM_IDX_SHORT_MAXW 2047u

enum tdm_idx_section {
    TDM_SEC_ARENA = 0,        /* uint32[]: every list's params and payload, in list order */
    TDM_SEC_LISTS = 1,        /* tdm_idx_list[nterms], in term order */
    TDM_SEC_CODECS = 2,       /* uint8[nterms]: codec id of each list */
    TDM_SEC_BLOCK_LAST = 3,   /* uint32[nentries] block table: 0, then last docid of each block */
    TDM_SEC_BLOCK_DOCS = 4,   /* uint32[nentries] block table: docid payload endpoints */
    TDM_SEC_BLOCK_FREQS = 5,  /* uint32[nentries] block table: frequency payload endpoints */
    TDM_SEC_BLOCK_MAX = 6,    /* uint8[nentries] block table: quantized BM25 bounds, then 0 */
    TDM_SEC_DOCLENS = 7,      /* uint32[ndocs]: tokens per document */
    TDM_SEC_TERM_OFFS = 8,    /* uint32[nterms + 1]: term i is TERMS[offs[i] .. offs[i + 1]) */
    TDM_SEC_TERM_CF = 9,      /* uint32[nterms]: collection frequency of each term */
    TDM_SEC_TERMS = 10,       /* term bytes, sorted, back to back */
    TDM_SEC_DOCNAME_OFFS = 11, /* uint64[ndocs + 1]: offsets into DOCNAMES */
    TDM_SEC_DOCNAMES = 12,    /* NUL-terminated names, back to back */
    TDM_SEC_STOPWORDS = 13,   /* NUL-terminated stopwords used at build time */
    TDM_SEC_COUNT
};

/* Fixed header at offset 0 (192 bytes); the section table follows it. The
 * first 16 bytes are the same in every version, so any version is named.
 * Version 2's header is the first 160 bytes of this one (through checksum):
 * version 3 appended the quantizer's fields, which version 2 kept in k1 and
 * b of an impact index. A reader shows a version 2 header in this layout
 * (tdm_ireader_header): quant_scale and quant_max from its k1 and b. */
typedef struct tdm_idx_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size;      /* sizeof(tdm_idx_header); TDM_IDX_HEADER_V2 in version 2 */
    uint32_t nsections;        /* entries in the section table that follows */
    uint32_t flags;            /* TDM_IDX_FLAG_*: 0, or IMPACT */
    uint64_t file_size;        /* whole file, for truncation checks */
    uint64_t ndocs;
    uint64_t nterms;
    uint64_t npostings;
    uint64_t total_doclen;     /* sum of DOCLENS */
    double k1, b;              /* BM25 parameters of the stored upper bounds; 0 in an
                                  impact index (version 2: its quantizer's scale and
                                  largest weight) */
    char codec[TDM_IDX_NAME_MAX];   /* codec name used to build (informative) */
    char stemmer[TDM_IDX_NAME_MAX]; /* Snowball language, or "none" */
    uint32_t nstopwords;
    uint32_t quant;            /* an impact index's quantization rule: kind
                                  (enum tdm_quantize) | bits << 8; else 0 */
    uint64_t checksum;         /* XXH64 (seed 0) of the header (header_size bytes)
                                  with this field 0, plus the section table */
    /* version 3 on */
    double quant_scale;        /* an impact index's rule: impact = round(weight x
                                  scale) (+ 1 for linear); else 0 */
    double quant_max;          /* linear: the largest weight M; else 0 */
    uint64_t reserved[2];      /* 0 */
} tdm_idx_header;

/* header.flags. IMPACT: the stored frequencies are impacts (learned sparse
 * models: SPLADE, uniCOIL, ...), made from the collection's weights by the
 * rule in `quant` (FORMAT.md, "Impact indexes"); its stored bounds are
 * impact bounds (the largest impact of each block) instead of BM25's, and
 * quant_scale and quant_max hold the rule's scale and largest weight (in
 * version 2, k1 and b did). */
#define TDM_IDX_FLAG_IMPACT 1u
#define TDM_IDX_FLAGS_KNOWN TDM_IDX_FLAG_IMPACT

/* One entry of the section table, which follows the header. */
typedef struct tdm_idx_section_entry {
    uint32_t id;        /* enum tdm_idx_section; entry i has id i */
    uint32_t reserved;
    uint64_t offset;    /* from the start of the file, multiple of TDM_IDX_ALIGN */
    uint64_t size;      /* bytes, without padding */
    uint64_t checksum;  /* XXH64 (seed 0) of the section's bytes */
} tdm_idx_section_entry;

/* One list descriptor (16 bytes, one 128-bit load on a device).
 *
 * A list starts at arena word `words` and ends where the next list starts
 * (the last one at the end of the arena): first P words of docid parameters
 * and P of frequency parameters (P = tdm_idx_codec_nparams, 0 for most
 * codecs), then the docid payload, then the frequency payload.
 *
 * A list of one block (df <= the codec's block size) has no block-table
 * entries: `ext` is the number of docid payload words, the frequency payload
 * is the rest of the list, the block's base is 0 and its bound max_score.
 * A longer list of nb blocks owns block-table entries ext .. ext + nb: in
 * BLOCK_LAST 0 then the last docid of each block (so entries ext .. ext+nb-1
 * are the block bases, ext+1 .. ext+nb the last docids), in BLOCK_DOCS and
 * BLOCK_FREQS the word offset of each block within its payload and then the
 * payload's size, in BLOCK_MAX each block's quantized bound and then 0. */
typedef struct tdm_idx_list {
    uint32_t words;     /* arena word where the list starts */
    uint32_t df;        /* postings */
    uint32_t ext;       /* one block: docid payload words; else first block-table entry */
    float max_score;    /* BM25 upper bound over the list, >= every block bound */
} tdm_idx_list;

/* Codec parameter words a list stores, for docids and again for frequencies:
 * only the codecs that have list-wide parameters store any. */
static inline uint32_t tdm_idx_codec_nparams(int codec)
{
    return codec == TDM_CODEC_PFOR ? 1u : 0u;
}

/* A block's BM25 bound from its quantized byte q and the list's max_score:
 * max_score * (q + 1) / 256 in binary32 (the product rounded once, the
 * division exact), so q = 255 is max_score itself. Writers store the smallest
 * q whose bound, computed exactly so, is not below the block's scores. */
static inline float tdm_idx_block_bound(float max_score, uint8_t q)
{
    return max_score * (float)(q + 1) * 0x1p-8f;
}

/* A shard (docs/PARTITION.md): the documents [doc_lo, doc_hi) of an index,
 * with their GLOBAL docids and the whole index's statistics, so that a
 * document scores on its shard exactly as in the whole index. Its header has
 * nsections = TDM_SEC_SHARD_COUNT (a reader of plain files refuses it), the
 * whole index's ndocs and total_doclen, DOCLENS of every document (what
 * avgdl and the kernels read), names only for its own documents (the others
 * empty), and every term of the whole index in the same order, so term ids
 * agree across shards: a term without postings in the shard has df 0, cf 0,
 * an empty arena span, ext 0 and max_score 0. Two more sections follow the
 * plain ones: */
#define TDM_SEC_SHARD 14u        /* tdm_idx_shard */
#define TDM_SEC_TERM_GDF 15u     /* uint32[nterms]: each term's df in the whole index */
#define TDM_SEC_SHARD_COUNT 16u

/* Section TDM_SEC_SHARD (64 bytes). */
typedef struct tdm_idx_shard {
    uint64_t split_id;         /* the split's identity (a hash of the whole
                                  index's header checksum, the shard count and
                                  every boundary): shards of two splits never mix */
    uint32_t shard, nshards;   /* shard < nshards */
    uint32_t doc_lo, doc_hi;   /* its documents, doc_lo < doc_hi <= ndocs */
    uint64_t whole_npostings;  /* postings of the whole index */
    uint64_t whole_checksum;   /* the whole index's header checksum */
    uint32_t reserved[6];      /* 0 */
} tdm_idx_shard;

#endif
