/* A term's list decoded a block at a time on the host path
 * (search_host_dec.h). */
#include "search_host_dec.h"

#include <string.h>

#include "tandem.h"

int tdm_hlist_open(tdm_hlist *h, const tdm_ireader *r, uint64_t term, tdm_err *err)
{
    int rc = tdm_ireader_list(r, term, &h->l, err);
    if (rc)
        return rc;
    h->ops = tdm_codec_by_id(h->l.docs.codec); /* known: the reader checked it */
    h->r = r;
    h->ndocs = tdm_ireader_info_get(r)->ndocs;
    h->bp = h->l.docs.codec == TDM_CODEC_BP128 || h->l.docs.codec == TDM_CODEC_BP256;
    return TDM_OK;
}

static int fail(const tdm_hlist *h, uint32_t b, const char *what, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: list of term '%.*s': block %u: %s",
                       tdm_ireader_path(h->r), (int)h->l.term_len, h->l.term, b, what);
}

/* 32 values of w bits (1..32) from in[0..w): with w a constant each value's
 * words and shifts are constants, and the loop unrolls into straight code. */
static inline __attribute__((always_inline)) void unpack32(const uint32_t *in, uint32_t *out,
                                                           const unsigned w)
{
    const uint32_t mask = w >= 32 ? 0xFFFFFFFFu : (1u << w) - 1u;
#pragma GCC unroll 32
    for (unsigned j = 0; j < 32; j++) {
        unsigned bit = j * w, i = bit >> 5, s = bit & 31;
        uint32_t v = in[i] >> s;
        if (s && s + w > 32)
            v |= in[i + 1] << (32 - s);
        out[j] = v & mask;
    }
}

#define UNPACK_CASE(n)                                                                           \
    case n:                                                                                      \
        for (uint32_t g = 0; g < groups; g++)                                                    \
            unpack32(in + g * (n), out + g * 32, (n));                                             \
        break;
#define UNPACK_CASES4(n) UNPACK_CASE(n) UNPACK_CASE((n) + 1) UNPACK_CASE((n) + 2) UNPACK_CASE((n) + 3)

/* len values of w bits packed from bit 0 of in (ceil(len * w / 32) words,
 * no more read): whole groups of 32 by the routine of their width, the rest
 * one by one. */
static void bp_unpack(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out)
{
    if (w == 0) {
        memset(out, 0, len * sizeof *out);
        return;
    }
    uint32_t groups = len / 32;
    switch (w) {
        UNPACK_CASES4(1)
        UNPACK_CASES4(5)
        UNPACK_CASES4(9)
        UNPACK_CASES4(13)
        UNPACK_CASES4(17)
        UNPACK_CASES4(21)
        UNPACK_CASES4(25)
        UNPACK_CASES4(29)
    default:
        break;
    }
    const uint32_t mask = w >= 32 ? 0xFFFFFFFFu : (1u << w) - 1u;
    for (uint32_t j = groups * 32; j < len; j++) {
        uint64_t bit = (uint64_t)j * w;
        uint32_t i = (uint32_t)(bit >> 5), s = (uint32_t)(bit & 31);
        uint32_t v = in[i] >> s;
        if (s && s + w > 32) /* the value's last bit lies in word i + 1 < the block's */
            v |= in[i + 1] << (32 - s);
        out[j] = v & mask;
    }
}

/* Block b of a GPU-BP stream unpacked (gaps or values), after bp.c's check
 * that its word count is one the encoder writes for its length: the width
 * is min(32, floor(32 * words / len)). */
static int bp_block(const tdm_hlist *h, const tdm_encoded *e, uint32_t b, uint32_t *out,
                    tdm_err *err)
{
    uint32_t nw = e->offsets[b + 1] - e->offsets[b], len = tdm_encoded_block_len(e, b);
    uint64_t w64 = len ? (uint64_t)nw * 32 / len : 0;
    uint32_t w = w64 > 32 ? 32 : (uint32_t)w64;
    if (nw > len || ((uint64_t)len * w + 31) / 32 != nw)
        return fail(h, b, "its words cannot hold its packed values", err);
    bp_unpack(e->words + e->offsets[b], len, w, out);
    return TDM_OK;
}

/* The reference decoder of another codec. */
static int ref_block(const tdm_hlist *h, const tdm_encoded *e, uint32_t b, uint32_t *out,
                     tdm_err *err)
{
    tdm_err e2 = {0};
    int rc = h->ops->decode_block(e, b, out, &e2);
    if (rc) {
        rc = fail(h, b, tdm_err_msg(&e2), err);
        tdm_err_clear(&e2);
    }
    return rc;
}

/* Gaps to docids from base, the zero gap allowed only first in the list:
 * 0 when increasing and below 2^32. */
static int gaps_to_docids(uint32_t *v, uint32_t len, uint32_t base, uint32_t b)
{
    uint64_t acc = base;
    uint32_t zero = b > 0 && len && v[0] == 0;
    for (uint32_t i = 0; i < len; i++) {
        zero |= i > 0 && v[i] == 0;
        acc += v[i];
        v[i] = (uint32_t)acc;
    }
    return zero || acc > UINT32_MAX ? -1 : 0;
}

/* Docids that another codec decoded, strictly increasing from base. */
static int increasing(const uint32_t *v, uint32_t len, uint32_t base, uint32_t b)
{
    uint32_t bad = b > 0 && len && v[0] <= base;
    for (uint32_t i = 1; i < len; i++)
        bad |= v[i] <= v[i - 1];
    return bad ? -1 : 0;
}

int tdm_hlist_docs(const tdm_hlist *h, uint32_t b, uint32_t *out, tdm_err *err)
{
    const tdm_encoded *e = &h->l.docs;
    uint32_t len = tdm_encoded_block_len(e, b), base = e->bases[b];
    int rc, bad;
    if (h->bp) {
        rc = bp_block(h, e, b, out, err);
        bad = rc ? 0 : gaps_to_docids(out, len, base, b);
    } else {
        rc = ref_block(h, e, b, out, err);
        bad = rc ? 0 : increasing(out, len, base, b);
    }
    if (rc)
        return rc;
    if (bad || (len && out[len - 1] >= h->ndocs))
        return fail(h, b, "decoded docids not increasing or out of range", err);
    if (len && h->l.block_last && out[len - 1] != h->l.block_last[b])
        return fail(h, b, "the block does not end at its stored last docid", err);
    return TDM_OK;
}

int tdm_hlist_tfs(const tdm_hlist *h, uint32_t b, uint32_t *out, tdm_err *err)
{
    const tdm_encoded *e = &h->l.freqs;
    int rc = h->bp ? bp_block(h, e, b, out, err) : ref_block(h, e, b, out, err);
    if (rc)
        return rc;
    uint32_t len = tdm_encoded_block_len(e, b), over = 0;
    for (uint32_t i = 0; i < len; i++) {
        over |= out[i] == UINT32_MAX;
        out[i]++;
    }
    return over ? fail(h, b, "term frequency overflows", err) : TDM_OK;
}
