/* List views over the mapping, decoding, and the full verification pass. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bm25.h"
#include "reader_priv.h"
#include "tandem.h"

/* Reserves `bytes` at the next 8-byte boundary of [*cur, end). */
static int take(uint64_t *cur, uint64_t end, uint64_t bytes, uint64_t *at)
{
    uint64_t c = (*cur + 7) & ~(uint64_t)7;
    if (c > end || bytes > end - c)
        return -1;
    *at = c;
    *cur = c + bytes;
    return 0;
}

static int list_fail(const tdm_ireader *r, uint64_t i, uint64_t at, tdm_err *err,
                     const char *what)
{
    const tdm_idx_term *t = &r->lex[i];
    return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %llu: list of term '%.*s': %s",
                       r->path, OFF(r->sec[TDM_SEC_POSTINGS].offset + at),
                       (int)t->term_len, r->terms + t->term_off, what);
}

/* Points an encoded view at its three arrays, read in file order. */
static int map_encoded(const tdm_ireader *r, const tdm_idx_list *h, int delta, uint64_t nwords,
                       const uint32_t *params, uint64_t *cur, uint64_t end, tdm_encoded *e)
{
    uint64_t ab, ao, aw;
    if (nwords > UINT32_MAX || take(cur, end, (uint64_t)h->nblocks * 4, &ab) ||
        take(cur, end, ((uint64_t)h->nblocks + 1) * 4, &ao) || take(cur, end, nwords * 4, &aw))
        return -1;
    memset(e, 0, sizeof *e);
    e->codec = (int)h->codec;
    e->delta = delta;
    e->n = h->n;
    e->block_size = h->block_size;
    e->nblocks = h->nblocks;
    e->bases = (uint32_t *)(r->postings + ab);
    e->offsets = (uint32_t *)(r->postings + ao);
    e->words = (uint32_t *)(r->postings + aw);
    e->nwords = (size_t)nwords;
    memcpy(e->params, params, sizeof e->params);
    e->borrowed = 1;
    return 0;
}

static int check_blocks(const tdm_ireader *r, uint64_t i, const tdm_ilist *l, tdm_err *err)
{
    for (uint32_t b = 0; b < l->nblocks; b++)
        if (l->block_first[b] > l->block_last[b] ||
            (b + 1 < l->nblocks && l->block_last[b] >= l->block_first[b + 1]) ||
            l->block_last[b] >= r->info.ndocs)
            return list_fail(r, i, r->lex[i].list_off, err, "block docid ranges out of order");
    return TDM_OK;
}

int tdm_ireader_list(const tdm_ireader *r, uint64_t i, tdm_ilist *out, tdm_err *err)
{
    memset(out, 0, sizeof *out);
    if (i >= r->info.nterms)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term index %llu out of range (%llu)",
                           OFF(i), OFF(r->info.nterms));
    const tdm_idx_term *t = &r->lex[i];
    const tdm_idx_list *h = (const void *)(r->postings + t->list_off);
    const tdm_codec_ops *ops = tdm_codec_by_id((int)h->codec);
    if (!ops)
        return list_fail(r, i, t->list_off, err, "unknown codec");
    if (h->n != t->df || h->block_size != ops->block_size ||
        h->nblocks != (h->n + (uint64_t)h->block_size - 1) / h->block_size)
        return list_fail(r, i, t->list_off, err, "count, block size or block count wrong");
    uint64_t cur = t->list_off + sizeof *h, end = t->list_off + t->list_size, a1, a2, a3;
    if (map_encoded(r, h, 1, h->doc_nwords, h->doc_params, &cur, end, &out->docs) ||
        map_encoded(r, h, 0, h->freq_nwords, h->freq_params, &cur, end, &out->freqs) ||
        take(&cur, end, (uint64_t)h->nblocks * 4, &a1) ||
        take(&cur, end, (uint64_t)h->nblocks * 4, &a2) ||
        take(&cur, end, (uint64_t)h->nblocks * 4, &a3) || cur != end)
        return list_fail(r, i, t->list_off, err, "arrays do not fit the list's size");
    tdm_err e2 = {0};
    if (tdm_encoded_validate(&out->docs, &e2) || tdm_encoded_validate(&out->freqs, &e2)) {
        int rc = list_fail(r, i, t->list_off, err, tdm_err_msg(&e2));
        tdm_err_clear(&e2);
        return rc;
    }
    out->term_index = i;
    out->term = r->terms + t->term_off;
    out->term_len = t->term_len;
    out->df = t->df;
    out->cf = t->cf;
    out->max_score = t->max_score;
    out->nblocks = h->nblocks;
    out->block_first = (const uint32_t *)(r->postings + a1);
    out->block_last = (const uint32_t *)(r->postings + a2);
    out->block_max = (const float *)(r->postings + a3);
    return check_blocks(r, i, out, err);
}

static int decode_checked(const tdm_ireader *r, const tdm_ilist *l, uint32_t *docids,
                          uint32_t *freqs, tdm_err *err)
{
    int rc = tdm_codec_decode(&l->docs, docids, err);
    if (!rc)
        rc = tdm_codec_decode(&l->freqs, freqs, err);
    if (rc)
        return rc;
    for (uint32_t k = 0; k < l->df; k++) {
        if (docids[k] >= r->info.ndocs || (k && docids[k] <= docids[k - 1]))
            return list_fail(r, l->term_index, r->lex[l->term_index].list_off, err,
                             "decoded docids not increasing or out of range");
        if (freqs[k] == UINT32_MAX)
            return list_fail(r, l->term_index, r->lex[l->term_index].list_off, err,
                             "term frequency overflows");
        freqs[k]++;
    }
    return TDM_OK;
}

int tdm_ireader_decode(const tdm_ireader *r, uint64_t i, uint32_t *docids, uint32_t *freqs,
                       tdm_err *err)
{
    tdm_ilist l;
    int rc = tdm_ireader_list(r, i, &l, err);
    if (rc)
        return rc;
    uint32_t *tmp = malloc(((size_t)l.df + 1) * 8);
    if (!tmp)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory decoding %u postings", l.df);
    rc = decode_checked(r, &l, tmp, tmp + l.df, err);
    if (!rc && docids)
        memcpy(docids, tmp, (size_t)l.df * 4);
    if (!rc && freqs)
        memcpy(freqs, tmp + l.df, (size_t)l.df * 4);
    free(tmp);
    return rc;
}

/* Decoded postings against the stored df, cf, block ranges and bounds. */
static int verify_list(const tdm_ireader *r, const tdm_ilist *l, const uint32_t *docids,
                       const uint32_t *freqs, tdm_err *err)
{
    uint64_t cf = 0, at = r->lex[l->term_index].list_off;
    float lmax = 0;
    for (uint32_t b = 0; b < l->nblocks; b++) {
        size_t s = (size_t)b * l->docs.block_size, e = s + tdm_encoded_block_len(&l->docs, b);
        if (docids[s] != l->block_first[b] || docids[e - 1] != l->block_last[b])
            return list_fail(r, l->term_index, at, err, "block first/last docid wrong");
        for (size_t k = s; k < e; k++) {
            cf += freqs[k];
            double sc = tdm_bm25(r->info.k1, r->info.b, r->info.ndocs, l->df, freqs[k],
                                 r->doclens[docids[k]], r->info.avg_doclen);
            if (!(sc <= l->block_max[b] * (1.0 + 1e-6)))   /* NaN fails too */
                return list_fail(r, l->term_index, at, err, "block-max score understated");
        }
        lmax = l->block_max[b] > lmax ? l->block_max[b] : lmax;
    }
    if (cf != l->cf || !(lmax <= l->max_score))
        return list_fail(r, l->term_index, at, err, "cf or list-max score wrong");
    return TDM_OK;
}

int tdm_ireader_verify(const tdm_ireader *r, tdm_err *err)
{
    const tdm_idx_section_entry *s = &r->sec[TDM_SEC_POSTINGS];
    if (XXH64(r->postings, s->size, 0) != s->checksum)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %llu: checksum mismatch in the "
                           "postings section", r->path, OFF(s->offset));
    uint32_t maxdf = 0;
    for (uint64_t i = 0; i < r->info.nterms; i++)
        maxdf = r->lex[i].df > maxdf ? r->lex[i].df : maxdf;
    uint32_t *buf = malloc(((size_t)maxdf + 1) * 8);
    if (!buf)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = TDM_OK;
    for (uint64_t i = 0; rc == TDM_OK && i < r->info.nterms; i++) {
        tdm_ilist l;
        rc = tdm_ireader_list(r, i, &l, err);
        if (!rc)
            rc = decode_checked(r, &l, buf, buf + l.df, err);
        if (!rc)
            rc = verify_list(r, &l, buf, buf + l.df, err);
    }
    free(buf);
    return rc;
}
