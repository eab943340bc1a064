/* Bit-level helpers for the host encoders and reference decoders: values are
 * packed LSB-first into 32-bit words (bit p lives in word p / 32 at bit
 * p % 32), the layout every codec kernel reads. Plus a growable word buffer
 * that encoders append block payloads to. */
#ifndef TDM_CODEC_BITS_H
#define TDM_CODEC_BITS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* Bits needed to write v in binary: 0 for 0, 32 for values >= 2^31. */
static inline unsigned tdm_bits_width(uint32_t v)
{
    unsigned w = 0;
    while (v) {
        w++;
        v >>= 1;
    }
    return w;
}

/* floor(log2(v)) for v >= 1. */
static inline unsigned tdm_bits_log2(uint64_t v)
{
    unsigned l = 0;
    while (v >>= 1)
        l++;
    return l;
}

/* Words that hold `bits` bits. */
static inline size_t tdm_bits_words(uint64_t bits) { return (size_t)((bits + 31) / 32); }

static inline uint32_t tdm_bits_mask(unsigned width)
{
    return width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1u;
}

/* ORs the low `width` bits (0..32) of v into w at bit position pos; the words
 * it touches must exist and be zero where v goes. */
static inline void tdm_bits_put(uint32_t *w, uint64_t pos, uint32_t v, unsigned width)
{
    if (width == 0)
        return;
    v &= tdm_bits_mask(width);
    size_t i = (size_t)(pos >> 5);
    unsigned s = (unsigned)(pos & 31);
    w[i] |= v << s;
    if (s + width > 32)
        w[i + 1] |= v >> (32 - s);
}

/* The `width` bits (0..32) at bit position pos; the caller has checked that
 * pos + width bits lie within the words. */
static inline uint32_t tdm_bits_get(const uint32_t *w, uint64_t pos, unsigned width)
{
    if (width == 0)
        return 0;
    size_t i = (size_t)(pos >> 5);
    unsigned s = (unsigned)(pos & 31);
    uint32_t v = w[i] >> s;
    if (s + width > 32)
        v |= w[i + 1] << (32 - s);
    return v & tdm_bits_mask(width);
}

/* Turns a decoded block's gaps v[0..len) into docids from `base` in place
 * (nothing to do for frequencies), checking what a docid list promises:
 * every gap at least 1 (only the list's first docid may be 0, when
 * `first` says this is block 0) and no docid past 2^32 - 1. Returns 0, or
 * -1 where the block is corrupt. */
static inline int tdm_bits_gaps_to_docids(uint32_t *v, uint32_t len, uint32_t base, int first)
{
    uint64_t acc = base;
    for (uint32_t k = 0; k < len; k++) {
        if (v[k] == 0 && (k > 0 || !first))
            return -1;
        acc += v[k];
        if (acc > UINT32_MAX)
            return -1;
        v[k] = (uint32_t)acc;
    }
    return 0;
}

/* A growable array of words (on the common byte buffer); encoders append
 * zeroed room and fill it. */
typedef struct tdm_wbuf {
    tdm_buf b;
} tdm_wbuf;

/* Appends `add` zeroed words and returns a pointer to them (NULL: no memory).
 * Pointers returned earlier are invalidated. */
static inline uint32_t *tdm_wbuf_grow(tdm_wbuf *b, size_t add)
{
    return add > SIZE_MAX / 4 ? NULL : (uint32_t *)tdm_buf_grow(&b->b, add * 4);
}

/* The words so far and their number (the memory is malloc'd: the caller
 * may take it over and free it). */
static inline uint32_t *tdm_wbuf_words(const tdm_wbuf *b) { return (uint32_t *)(void *)b->b.p; }
static inline size_t tdm_wbuf_len(const tdm_wbuf *b) { return b->b.len / 4; }

#endif
