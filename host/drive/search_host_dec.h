/* A query term's list on the host path (search_host.c), decoded a block at
 * a time: what a pass needs and no more (AND decodes only the blocks its
 * candidates fall in, and a block's frequencies only where a document
 * matched).
 *
 * A block is decoded by its codec's block decoder (codec.h; GPU-BP's, the
 * default codec's, unpacks 32 values a step by a routine per bit width),
 * then checked as the reader's whole-list decoder checks it
 * (tdm_ireader_decode), so a damaged file never reads out of bounds here: docids strictly increasing from the block's
 * base, below the index's document count, ending at the block's stored last
 * docid; no frequency overflowing. (The one whole-list check left out, the
 * frequencies' sum against the stored cf, guards no memory access, and the
 * list's checksum was checked before its first use.) */
#ifndef TDM_DRIVE_SEARCH_HOST_DEC_H
#define TDM_DRIVE_SEARCH_HOST_DEC_H

#include <stdint.h>

#include "codec/codec.h"
#include "common/error.h"
#include "index/format.h"
#include "index/reader.h"
#include "query/bounds.h"

typedef struct tdm_hlist {
    tdm_ilist l;
    const tdm_codec_ops *ops;
    const tdm_ireader *r;
    uint64_t ndocs;
} tdm_hlist;

/* List `term` of r (tdm_ireader_list's checks). */
int tdm_hlist_open(tdm_hlist *h, const tdm_ireader *r, uint64_t term, tdm_err *err);

static inline uint32_t tdm_hlist_block_len(const tdm_hlist *h, uint32_t b)
{
    return tdm_encoded_block_len(&h->l.docs, b);
}

/* The first block from b on whose last docid is >= d (nblocks: none), by
 * the stored last docids, nothing decoded; last1 is the list's last docid
 * where it stores none (a list of one block). */
static inline uint32_t tdm_hlist_skip(const tdm_hlist *h, uint32_t b, uint32_t last1, uint32_t d)
{
    const uint32_t *last = h->l.block_last;
    uint32_t nb = h->l.nblocks;
    if (!last)
        return b < nb && last1 < d ? nb : b;
    while (b < nb && last[b] < d)
        b++;
    return b;
}

/* The bound of a block of the list whose quantized byte is q, scaled to a
 * term of weight w (bounds.h: where the caller checked that the stored
 * bounds apply). */
static inline double tdm_hlist_byte_bound(const tdm_hlist *h, uint8_t q, double w)
{
    return tdm_score_stored_scale(tdm_idx_block_bound(h->l.max_score, q), w);
}

/* Block b's stored bound so scaled: tdm_ilist_block_max's value, inline (a
 * call a block cost MaxScore's lookups 4 %). */
static inline double tdm_hlist_block_bound(const tdm_hlist *h, uint32_t b, double w)
{
    const tdm_ilist *l = &h->l;
    return l->block_maxq ? tdm_hlist_byte_bound(h, l->block_maxq[b], w)
                         : tdm_score_stored_scale(l->max_score, w);
}

/* The first of v[p..len) >= d, where v[len - 1] >= d (v ascending, a
 * decoded block): eight at a time while the eighth is below d, then the
 * few left counted without a branch (the loop's exit, a misprediction,
 * comes once per eight docids passed instead of once per docid). */
static inline uint32_t tdm_hscan(const uint32_t *v, uint32_t p, uint32_t len, uint32_t d)
{
    while (p + 8 <= len && v[p + 7] < d)
        p += 8;
    if (p + 8 <= len) { /* v[p + 7] >= d: the answer is among v[p..p + 7] */
        uint32_t n = 0;
        for (uint32_t i = 0; i < 7; i++)
            n += v[p + i] < d;
        return p + n;
    }
    while (v[p] < d) /* stops: v[len - 1] >= d */
        p++;
    return p;
}

/* Block b's docids (out has room for a block) checked as above. */
int tdm_hlist_docs(const tdm_hlist *h, uint32_t b, uint32_t *out, tdm_err *err);

/* Block b's term frequencies (tf, not tf - 1). */
int tdm_hlist_tfs(const tdm_hlist *h, uint32_t b, uint32_t *out, tdm_err *err);

/* Whether a block's frequency is read alone more cheaply than the block
 * decoded (the codec's get_cheap: bp unpacks one value where a block costs
 * 15-25 ns): a caller reads at most TDM_HLIST_FEW of a block so. */
#define TDM_HLIST_FEW 4u
static inline int tdm_hlist_tf_cheap(const tdm_hlist *h)
{
    return h->ops->get_cheap && h->ops->get;
}

/* The frequency at position p of block b (tf, not tf - 1), by the codec's
 * random access, checked as tdm_hlist_tfs checks it. */
int tdm_hlist_tf_at(const tdm_hlist *h, uint32_t b, uint32_t p, uint32_t *tf, tdm_err *err);

#endif
