/* List views over the mapping, decoding, and the full verification pass. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bm25.h"
#include "reader_priv.h"
#include "tandem.h"

/* Endpoint pairs {0, k} for k = 0 .. TDM_IDX_SHORT_MAXW: a one-block list's
 * offsets arrays (and, at index 0, its base 0) point here, since the file
 * keeps only the sizes in the descriptor. */
#define P1(k) 0u, (k),
#define P2(k) P1(k) P1((k) + 1)
#define P4(k) P2(k) P2((k) + 2)
#define P8(k) P4(k) P4((k) + 4)
#define P16(k) P8(k) P8((k) + 8)
#define P32(k) P16(k) P16((k) + 16)
#define P64(k) P32(k) P32((k) + 32)
#define P128(k) P64(k) P64((k) + 64)
#define P256(k) P128(k) P128((k) + 128)
#define P512(k) P256(k) P256((k) + 256)
#define P1024(k) P512(k) P512((k) + 512)
#define P2048(k) P1024(k) P1024((k) + 1024)
static const uint32_t pairs[] = {P2048(0u)};
_Static_assert(sizeof pairs / sizeof *pairs == 2 * (TDM_IDX_SHORT_MAXW + 1), "pair table");

float tdm_ilist_block_max(const tdm_ilist *l, uint32_t b)
{
    return l->block_maxq ? tdm_idx_block_bound(l->max_score, l->block_maxq[b]) : l->max_score;
}

static int list_fail(const tdm_ireader *r, uint64_t i, unsigned sec, uint64_t at,
                     const char *what, tdm_err *err)
{
    uint32_t o = r->termoffs[i];
    return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %llu: section %s: list of term "
                       "'%.*s': %s", r->path, tdm_ir_at(r, sec, at),
                       tdm_ireader_section_name(sec), (int)(r->termoffs[i + 1] - o),
                       r->terms + o, what);
}

static void set_encoded(tdm_encoded *e, int codec, int delta, const tdm_idx_list *l,
                        uint32_t bs, uint32_t nb)
{
    memset(e, 0, sizeof *e);
    e->codec = codec;
    e->delta = delta;
    e->n = l->df;
    e->block_size = bs;
    e->nblocks = nb;
    e->borrowed = 1;
}

/* The per-term map of lists already checked (reader_priv.h), made at the
 * first call; NULL when out of memory (every call checks then). A search
 * looks its lists up on every query: the O(blocks) checks below cost the
 * H200's host ~10 us a query of long lists. */
static unsigned char *checked_map(const tdm_ireader *r)
{
    tdm_ireader *w = (tdm_ireader *)r; /* the cache only: the file is not changed */
    unsigned char *m = __atomic_load_n(&w->list_ok, __ATOMIC_ACQUIRE);
    if (m)
        return m;
    unsigned char *fresh = calloc(r->info.nterms ? r->info.nterms : 1, 1), *none = NULL;
    if (!fresh)
        return NULL;
    if (__atomic_compare_exchange_n(&w->list_ok, &none, fresh, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return fresh;
    free(fresh); /* another thread's came first */
    return none;
}

/* The block-table entries of a list of nb > 1 blocks (FORMAT.md); the
 * O(blocks) checks unless `known` (passed before). */
static int map_blocks(const tdm_ireader *r, uint64_t i, tdm_ilist *out, uint64_t payload,
                      int known, tdm_err *err)
{
    uint32_t k = out->first_entry, nb = out->nblocks;
    const uint32_t *last = r->blk_last + k;
    if (last[0] != 0)
        return list_fail(r, i, TDM_SEC_BLOCK_LAST, 4ull * k, "first base is not 0", err);
    for (uint32_t j = 1; !known && j <= nb; j++)
        if ((j > 1 && last[j] <= last[j - 1]) || last[j] >= r->info.ndocs)
            return list_fail(r, i, TDM_SEC_BLOCK_LAST, 4ull * (k + j),
                             "block last docids not increasing or out of range", err);
    if (r->blk_max[k + nb] != 0)
        return list_fail(r, i, TDM_SEC_BLOCK_MAX, k + nb, "closing entry not 0", err);
    uint64_t ndw = r->blk_docs[k + nb], nfw = r->blk_freqs[k + nb];
    if (ndw + nfw != payload)
        return list_fail(r, i, TDM_SEC_BLOCK_DOCS, 4ull * (k + nb),
                         "payload sizes do not fill the list's arena span", err);
    out->docs.bases = (uint32_t *)last;
    out->docs.offsets = (uint32_t *)(r->blk_docs + k);
    out->docs.nwords = ndw;
    out->freqs.offsets = (uint32_t *)(r->blk_freqs + k);
    out->freqs.nwords = nfw;
    out->block_last = last + 1;
    out->block_maxq = r->blk_max + k;
    return TDM_OK;
}

static void map_one_block(const tdm_idx_list *l, tdm_ilist *out, uint64_t payload)
{
    out->docs.bases = (uint32_t *)pairs;
    out->docs.offsets = (uint32_t *)(pairs + 2 * l->ext);
    out->docs.nwords = l->ext;
    out->freqs.offsets = (uint32_t *)(pairs + 2 * (payload - l->ext));
    out->freqs.nwords = payload - l->ext;
}

static void set_term(const tdm_ireader *r, uint64_t i, tdm_ilist *out)
{
    const tdm_idx_list *l = &r->lists[i];
    out->term_index = i;
    out->term = r->terms + r->termoffs[i];
    out->term_len = r->termoffs[i + 1] - r->termoffs[i];
    out->df = l->df;
    out->cf = r->cfs[i];
    out->max_score = l->max_score;
    out->arena_word = l->words;
}

int tdm_ireader_list_meta(const tdm_ireader *r, uint64_t i, uint32_t *nblocks,
                          uint32_t *first_entry, float *max_score)
{
    if (i >= r->info.nterms)
        return TDM_ERR_INVALID_ARG;
    const tdm_idx_list *l = &r->lists[i];
    uint32_t bs = tdm_codec_by_id(r->codecs[i])->block_size; /* checked at open */
    *nblocks = l->df ? (uint32_t)(((uint64_t)l->df + bs - 1) / bs) : 0;
    *first_entry = *nblocks > 1 ? (uint32_t)l->ext : 0;
    *max_score = l->max_score;
    return TDM_OK;
}

int tdm_ireader_list(const tdm_ireader *r, uint64_t i, tdm_ilist *out, tdm_err *err)
{
    memset(out, 0, sizeof *out);
    if (i >= r->info.nterms)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term index %llu out of range (%llu)",
                           OFF(i), OFF(r->info.nterms));
    /* Open checked the codec, the counts and the arena span of every list. */
    const tdm_idx_list *l = &r->lists[i];
    const tdm_codec_ops *ops = tdm_codec_by_id(r->codecs[i]);
    if (l->df == 0) { /* a shard's term without postings here: an empty view */
        set_term(r, i, out);
        set_encoded(&out->docs, ops->id, 1, l, ops->block_size, 0);
        set_encoded(&out->freqs, ops->id, 0, l, ops->block_size, 0);
        out->docs.bases = out->docs.offsets = out->freqs.offsets = (uint32_t *)pairs;
        out->docs.words = out->freqs.words = (uint32_t *)r->arena;
        out->freqs.bases = out->docs.bases;
        return TDM_OK;
    }
    uint32_t np = tdm_idx_codec_nparams(ops->id), bs = ops->block_size;
    uint32_t nb = (uint32_t)(((uint64_t)l->df + bs - 1) / bs);
    unsigned char *ok = checked_map(r);
    int known = ok && __atomic_load_n(&ok[i], __ATOMIC_RELAXED);
    if (!known) { /* no byte of the list is read before its checksum matched */
        int rc = tdm_ireader_check_list(r, i, err);
        if (rc)
            return rc;
    }
    set_term(r, i, out);
    set_encoded(&out->docs, ops->id, 1, l, bs, nb);
    set_encoded(&out->freqs, ops->id, 0, l, bs, nb);
    out->nblocks = nb;
    const uint32_t *at = r->arena + l->words;
    memcpy(out->docs.params, at, np * 4);
    memcpy(out->freqs.params, at + np, np * 4);
    uint64_t payload = tdm_ir_list_end(r, i) - l->words - 2ull * np;
    if (nb == 1) {
        map_one_block(l, out, payload);
    } else {
        out->first_entry = l->ext;
        int rc = map_blocks(r, i, out, payload, known, err);
        if (rc)
            return rc;
    }
    out->docs.words = (uint32_t *)(at + 2 * np);
    out->freqs.words = (uint32_t *)(at + 2 * np + out->docs.nwords);
    out->freqs.bases = out->docs.bases;
    tdm_err e2 = {0};
    if (!known &&
        (tdm_encoded_validate(&out->docs, &e2) || tdm_encoded_validate(&out->freqs, &e2))) {
        int rc = list_fail(r, i, TDM_SEC_ARENA, 4ull * l->words, tdm_err_msg(&e2), err);
        tdm_err_clear(&e2);
        return rc;
    }
    if (ok && !known)
        __atomic_store_n(&ok[i], 1, __ATOMIC_RELAXED);
    return TDM_OK;
}

/* Decodes and checks a list against what the file says about it: docids
 * increasing and in range, blocks ending at their stored last docids, the
 * frequencies summing to cf. */
static int decode_checked(const tdm_ireader *r, const tdm_ilist *l, uint32_t *docids,
                          uint32_t *freqs, tdm_err *err)
{
    uint64_t i = l->term_index, at = 4ull * l->arena_word;
    tdm_err e2 = {0};
    int rc = tdm_codec_decode(&l->docs, docids, &e2);
    if (!rc)
        rc = tdm_codec_decode(&l->freqs, freqs, &e2);
    if (rc) {
        rc = list_fail(r, i, TDM_SEC_ARENA, at, tdm_err_msg(&e2), err);
        tdm_err_clear(&e2);
        return rc;
    }
    uint64_t cf = 0;
    for (uint32_t k = 0; k < l->df; k++) {
        if (docids[k] >= r->info.ndocs || (k && docids[k] <= docids[k - 1]))
            return list_fail(r, i, TDM_SEC_ARENA, at,
                             "decoded docids not increasing or out of range", err);
        if (freqs[k] == UINT32_MAX)
            return list_fail(r, i, TDM_SEC_ARENA, at, "term frequency overflows", err);
        freqs[k]++;
        cf += freqs[k];
    }
    for (uint32_t b = 0; l->block_last && b < l->nblocks; b++) {
        uint64_t end = (uint64_t)b * l->docs.block_size + tdm_encoded_block_len(&l->docs, b);
        if (docids[end - 1] != l->block_last[b])
            return list_fail(r, i, TDM_SEC_ARENA, at, "a block does not end at its stored "
                             "last docid", err);
    }
    if (cf != l->cf)
        return list_fail(r, i, TDM_SEC_ARENA, at, "frequencies do not sum to the stored cf",
                         err);
    return TDM_OK;
}

int tdm_ireader_decode(const tdm_ireader *r, uint64_t i, uint32_t *docids, uint32_t *freqs,
                       tdm_err *err)
{
    tdm_ilist l;
    int rc = tdm_ireader_list(r, i, &l, err);
    if (rc || l.df == 0) /* a shard's empty list decodes to nothing */
        return rc;
    if (docids && freqs) /* straight into the caller's arrays: no copy, no allocation */
        return decode_checked(r, &l, docids, freqs, err);
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

/* Every block's stored bound (and the list's) at or above its BM25 scores. */
static int verify_bounds(const tdm_ireader *r, const tdm_ilist *l, const uint32_t *docids,
                         const uint32_t *freqs, tdm_err *err)
{
    for (uint32_t b = 0; b < l->nblocks; b++) {
        size_t s = (size_t)b * l->docs.block_size, e = s + tdm_encoded_block_len(&l->docs, b);
        double bound = tdm_ilist_block_max(l, b);
        for (size_t k = s; k < e; k++) {
            double sc = r->info.impact ? (double)freqs[k]
                        : tdm_bm25(r->info.k1, r->info.b, r->info.ndocs, l->df, freqs[k],
                                   r->doclens[docids[k]], r->info.avg_doclen);
            if (!(sc <= bound))   /* NaN fails too */
                return list_fail(r, l->term_index,
                                 l->block_maxq ? TDM_SEC_BLOCK_MAX : TDM_SEC_LISTS,
                                 l->block_maxq ? l->first_entry + b
                                               : l->term_index * sizeof(tdm_idx_list),
                                 r->info.impact ? "impact bound below an impact"
                                                : "BM25 bound below a score", err);
        }
    }
    return TDM_OK;
}

static int arena_fail(const tdm_ireader *r, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset %llu: checksum mismatch in section "
                       "%s", r->path, OFF(r->sec[TDM_SEC_ARENA].offset),
                       tdm_ireader_section_name(TDM_SEC_ARENA));
}

/* The arena's checksum, hashed once and remembered (either way): a search
 * checks it before its first list and never again. Two threads that come
 * first both hash; they store the same answer. */
int tdm_ireader_check_payload(const tdm_ireader *r, tdm_err *err)
{
    tdm_ireader *w = (tdm_ireader *)r; /* the cache only: the file is not changed */
    int state = __atomic_load_n(&w->arena_state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        const tdm_idx_section_entry *s = &r->sec[TDM_SEC_ARENA];
        state = XXH64(r->base + s->offset, s->size, 0) == s->checksum ? 1 : -1;
        __atomic_store_n(&w->arena_state, state, __ATOMIC_RELEASE);
    }
    return state > 0 ? TDM_OK : arena_fail(r, err);
}

int tdm_ireader_check_list(const tdm_ireader *r, uint64_t i, tdm_err *err)
{
    if (i >= r->info.nterms)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term index %llu out of range (%llu)",
                           OFF(i), OFF(r->info.nterms));
    return tdm_ireader_check_payload(r, err);
}

int tdm_ireader_verify(const tdm_ireader *r, tdm_err *err)
{
    int rc = tdm_ireader_check_payload(r, err);
    if (rc || r->shard)
        return rc ? rc : tdm_ir_verify_shard(r, err);
    uint32_t maxdf = 0;
    for (uint64_t i = 0; i < r->info.nterms; i++)
        maxdf = r->lists[i].df > maxdf ? r->lists[i].df : maxdf;
    uint32_t *buf = malloc(((size_t)maxdf + 1) * 8);
    if (!buf)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; rc == TDM_OK && i < r->info.nterms; i++) {
        tdm_ilist l;
        rc = tdm_ireader_list(r, i, &l, err);
        if (!rc)
            rc = decode_checked(r, &l, buf, buf + l.df, err);
        if (!rc)
            rc = verify_bounds(r, &l, buf, buf + l.df, err);
    }
    free(buf);
    return rc;
}

/* ---- a shard's verification (tdm_ir_verify_shard, reader_priv.h) */

static int verify_list(const tdm_ireader *r, uint64_t t, uint32_t *d, uint32_t *f, tdm_err *err)
{
    tdm_ilist l;
    int rc = tdm_ireader_list(r, t, &l, err);
    if (!rc && l.df)
        rc = tdm_ireader_decode(r, t, d, f, err);
    if (rc || !l.df)
        return rc;
    const tdm_ireader_info *in = &r->info;
    for (uint32_t k = 0; k < l.df; k++) {
        if (d[k] < in->doc_lo || d[k] >= in->doc_hi)
            return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: list of term '%.*s': docid %u "
                               "outside the shard's documents [%u, %u)", r->path,
                               (int)l.term_len, l.term, d[k], in->doc_lo, in->doc_hi);
        /* an impact index's bounds are its largest impacts */
        double sc = !in->impact ? tdm_bm25(in->k1, in->b, in->ndocs, r->gdf[t], f[k],
                                           r->doclens[d[k]], in->avg_doclen)
                                : (double)f[k];
        if (!(sc <= tdm_ilist_block_max(&l, k / l.docs.block_size)))
            return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: list of term '%.*s': block bound "
                               "below a score", r->path, (int)l.term_len, l.term);
    }
    return TDM_OK;
}

int tdm_ir_verify_shard(const tdm_ireader *r, tdm_err *err)
{
    uint32_t maxdf = 0;
    for (uint64_t t = 0; t < r->info.nterms; t++)
        maxdf = r->lists[t].df > maxdf ? r->lists[t].df : maxdf;
    uint32_t *buf = malloc(((size_t)maxdf + 1) * 8);
    if (!buf)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = TDM_OK;
    for (uint64_t t = 0; rc == TDM_OK && t < r->info.nterms; t++)
        rc = verify_list(r, t, buf, buf + maxdf + 1, err);
    free(buf);
    return rc;
}
