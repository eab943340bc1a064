/* Codecs: host encoders, plain-C reference decoders (the oracle for kernel
 * tests) and device decoders, behind one interface.
 *
 * Every codec encodes a list of n uint32 values in blocks of `block_size`
 * into a tdm_encoded: 32-bit payload words, an endpoints array (word offset of
 * each block), and per block a base. For docid lists (delta = 1, values
 * strictly increasing) a block stores the d-gaps of its values from the
 * block's base, which is the value just before the block (0 for the first
 * block), so any block decodes on its own: value = base + prefix sum of gaps.
 * For frequency lists (delta = 0) values are stored as they are and every
 * base is 0 (callers store tf - 1 when they want zero-based values).
 *
 * Thread-safety: all functions are reentrant; a tdm_encoded is plain data.
 */
#ifndef TDM_CODEC_H
#define TDM_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

enum tdm_codec_id {
    TDM_CODEC_RAW = 0,        /* uncompressed gaps, blocks of 128 */
    TDM_CODEC_BP128 = 1,      /* GPU-BP (Mallia 2019), blocks of 128 */
    TDM_CODEC_BP256 = 2,      /* GPU-BP, blocks of 256 */
    TDM_CODEC_VBYTE128 = 3,   /* GPU-VByte (Mallia 2019), blocks of 128 */
    TDM_CODEC_VBYTE1024 = 4,  /* GPU-VByte, blocks of 1024 */
    TDM_CODEC_PEF = 5,        /* partitioned Elias-Fano (Griffin), partitions of 128 */
    TDM_CODEC_PFOR = 6,       /* PForDelta (Ding 2009): one bit width a list, blocks of 512 */
    TDM_CODEC_NEWPFD128 = 7,  /* PForDelta, one bit width a block (NewPFD), blocks of 128 */
    TDM_CODEC_RICE = 8,       /* Rice (Ding 2009) */
    TDM_CODEC_NEWPFD64 = 9,   /* NewPFD, blocks of 64 (finer block-max scores) */
    TDM_CODEC_COUNT
};

/* The codec an index gets when none is named: GPU-BP with blocks of 128
 * compresses as well as the others on real lists and decodes fastest. */
#define TDM_CODEC_DEFAULT "bp128"

#define TDM_CODEC_MAX_PARAMS 8

/* An encoded list. All arrays are malloc'd and owned by the struct. */
typedef struct tdm_encoded {
    int codec;             /* enum tdm_codec_id */
    int delta;             /* 1: docids (gaps from block bases), 0: plain values */
    uint32_t n;            /* number of values */
    uint32_t block_size;   /* values per block; the last block may be shorter */
    uint32_t nblocks;      /* ceil(n / block_size) */
    uint32_t *bases;       /* [nblocks] value before each block (0 if delta = 0) */
    uint32_t *offsets;     /* [nblocks + 1] word offset of each block in words[] */
    uint32_t *words;       /* [nwords] payload, block b at words[offsets[b]..offsets[b+1]) */
    size_t nwords;
    uint32_t params[TDM_CODEC_MAX_PARAMS]; /* codec-wide parameters (e.g. a bit width) */
    int borrowed;          /* 1: the arrays point into memory the struct does not own
                              (a memory-mapped index); tdm_encoded_free leaves them */
} tdm_encoded;

/* What one codec implements. Device decoders live with their kernels. */
typedef struct tdm_codec_ops {
    int id;
    const char *name;            /* "bp128", "vbyte1024", ... as the CLI spells it */
    uint32_t block_size;
    /* Encodes values[0..n) into *out (zeroed by the caller). delta: see above.
     * Fails with TDM_ERR_INVALID_ARG if delta and values are not strictly
     * increasing, or a value does not fit the codec. */
    int (*encode)(const uint32_t *values, size_t n, int delta, tdm_encoded *out, tdm_err *err);
    /* Decodes block b into out[0..block length): the reference decoder.
     * Returns TDM_ERR_CORRUPT where the payload is detectably bad. */
    int (*decode_block)(const tdm_encoded *enc, uint32_t b, uint32_t *out, tdm_err *err);
    /* 1 where decode_block of a delta list fails unless its values rise
     * strictly from the block's base (the list's first may equal it) and
     * stay below 2^32: a caller need not check that again. */
    int increasing_checked;
    /* Random access to value i, or NULL where the format has none. */
    int (*get)(const tdm_encoded *enc, uint32_t i, uint32_t *value, tdm_err *err);
    /* 1 where get of a plain (not delta) value reads that value alone, no
     * block decoded: the host path takes it for a block's few frequencies
     * (drive/search_host_dec.h). */
    int get_cheap;
    /* The device decoder (codec_dev.h), or NULL where there is none. */
    const struct tdm_codec_dev_ops *dev;
} tdm_codec_ops;

/* The codec with this id or name, or NULL. */
const tdm_codec_ops *tdm_codec_by_id(int id);
const tdm_codec_ops *tdm_codec_by_name(const char *name);
/* Every registered codec, in id order; *count gets how many. */
const tdm_codec_ops *const *tdm_codec_all(size_t *count);

/* Encodes with codec `id`. */
int tdm_codec_encode(int id, const uint32_t *values, size_t n, int delta, tdm_encoded *out,
                     tdm_err *err);
/* Reference decode of the whole list into out[0..enc->n). */
int tdm_codec_decode(const tdm_encoded *enc, uint32_t *out, tdm_err *err);
/* Reference decode of the listed blocks, concatenated into out in the order given. */
int tdm_codec_decode_blocks(const tdm_encoded *enc, const uint32_t *blocks, size_t nblocks,
                            uint32_t *out, tdm_err *err);
/* Values in block b (block_size, or fewer for the last block). */
uint32_t tdm_encoded_block_len(const tdm_encoded *enc, uint32_t b);
/* Checks the structure (sizes, monotone offsets within nwords) so that a
 * decoder can trust it: TDM_ERR_CORRUPT with a message if not. */
int tdm_encoded_validate(const tdm_encoded *enc, tdm_err *err);
/* Allocates bases/offsets for n values in blocks of block_size (words left NULL). */
int tdm_encoded_init(tdm_encoded *enc, int codec, size_t n, uint32_t block_size, int delta,
                     tdm_err *err);
void tdm_encoded_free(tdm_encoded *enc);
/* Computes block bases and per-block gaps for a delta list into gaps[0..n);
 * checks strict increase. Shared by every encoder. */
int tdm_codec_gaps(const uint32_t *values, size_t n, int delta, tdm_encoded *enc,
                   uint32_t *gaps, tdm_err *err);

#endif
