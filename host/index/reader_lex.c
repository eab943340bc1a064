/* The lexicon: term lookup, and the open-time checks of the terms and of
 * every list descriptor (O(terms)). */
#include <math.h>
#include <string.h>

#include "reader_priv.h"
#include "tandem.h"

static int term_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static int check_terms(tdm_ireader *r, tdm_err *err)
{
    uint64_t n = r->info.nterms, tsize = r->sec[TDM_SEC_TERMS].size;
    const uint32_t *o = r->termoffs;
    if (o[0] != 0 || o[n] != tsize)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: term offsets do not span "
                           "the terms section", r->path, tdm_ir_at(r, TDM_SEC_TERM_OFFS, 0));
    for (uint64_t i = 0; i < n; i++) {
        unsigned long long at = tdm_ir_at(r, TDM_SEC_TERM_OFFS, 4 * (i + 1));
        if (o[i + 1] <= o[i] || o[i + 1] - o[i] > TDM_IDX_TERM_MAX || o[i + 1] > tsize)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: term %llu is empty, "
                               "longer than %u bytes or outside the terms section", r->path,
                               at, OFF(i), TDM_IDX_TERM_MAX);
        if (i && term_cmp(r->terms + o[i - 1], o[i] - o[i - 1], r->terms + o[i],
                          o[i + 1] - o[i]) >= 0)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: term %llu is not in "
                               "increasing order", r->path, at, OFF(i));
    }
    return TDM_OK;
}

uint64_t tdm_ir_list_end(const tdm_ireader *r, uint64_t i)
{
    return i + 1 < r->info.nterms ? r->lists[i + 1].words : r->info.arena_words;
}

static int list_fail(const tdm_ireader *r, uint64_t i, const char *what, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: section lists: list %llu: %s",
                       r->path, tdm_ir_at(r, TDM_SEC_LISTS, i * sizeof(tdm_idx_list)), OFF(i),
                       what);
}

/* One descriptor: codec, counts, arena span, and where its block-table
 * entries lie (*entry, the next free entry, advances past them). */
static int check_list(tdm_ireader *r, uint64_t i, uint64_t *entry, tdm_err *err)
{
    const tdm_idx_list *l = &r->lists[i];
    const tdm_codec_ops *ops = tdm_codec_by_id(r->codecs[i]);
    if (!ops)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: section codecs: list %llu: "
                           "unknown codec %u", r->path, tdm_ir_at(r, TDM_SEC_CODECS, i),
                           OFF(i), r->codecs[i]);
    if (l->df == 0 && r->nsec == TDM_SEC_SHARD_COUNT) {
        /* a shard's term without postings here: nothing in the arena */
        if (r->cfs[i] || l->ext || l->max_score != 0 || l->words != tdm_ir_list_end(r, i) ||
            (i == 0 && l->words != 0))
            return list_fail(r, i, "a shard's empty list with postings, bounds or words", err);
        return TDM_OK;
    }
    if (l->df == 0 || l->df > r->info.ndocs || r->cfs[i] < l->df)
        return list_fail(r, i, "absurd df or cf", err);
    if (!(l->max_score > 0) || isinf(l->max_score))
        return list_fail(r, i, "max_score not a positive number", err);
    uint64_t start = l->words, end = tdm_ir_list_end(r, i);
    uint64_t np2 = 2ull * tdm_idx_codec_nparams(ops->id);
    if ((i == 0 && start != 0) || start > end || end - start < np2)
        return list_fail(r, i, "arena span out of order, outside the arena or too short", err);
    uint64_t nb = ((uint64_t)l->df + ops->block_size - 1) / ops->block_size;
    uint64_t payload = end - start - np2;
    if (nb == 1) {
        if (l->ext > TDM_IDX_SHORT_MAXW || l->ext > payload ||
            payload - l->ext > TDM_IDX_SHORT_MAXW)
            return list_fail(r, i, "one-block payload sizes wrong", err);
        return TDM_OK;
    }
    if (l->ext != *entry || nb + 1 > r->info.block_entries - *entry)
        return list_fail(r, i, "block-table entries out of order or outside the table", err);
    *entry += nb + 1;
    return TDM_OK;
}

static int check_lists(tdm_ireader *r, tdm_err *err)
{
    uint64_t entry = 0, postings = 0;
    for (uint64_t i = 0; i < r->info.nterms; i++) {
        int rc = check_list(r, i, &entry, err);
        if (rc)
            return rc;
        postings += r->lists[i].df;
    }
    if (r->info.nterms == 0 && r->info.arena_words)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: section arena: payload "
                           "without lists", r->path, tdm_ir_at(r, TDM_SEC_ARENA, 0));
    if (entry != r->info.block_entries)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: section block_last: %llu "
                           "entries, the lists use %llu", r->path,
                           tdm_ir_at(r, TDM_SEC_BLOCK_LAST, 0), OFF(r->info.block_entries),
                           OFF(entry));
    if (postings != r->info.npostings)
        return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: offset 48: %llu postings in the header, "
                           "%llu in the lists", r->path, OFF(r->info.npostings), OFF(postings));
    return TDM_OK;
}

int tdm_ir_check_lexicon(tdm_ireader *r, tdm_err *err)
{
    int rc = check_terms(r, err);
    return rc ? rc : check_lists(r, err);
}

void tdm_ireader_index_terms(const tdm_ireader *r)
{
    tdm_ir_lexhash_make(r);
}

int tdm_ireader_find(const tdm_ireader *r, const char *term, size_t len, uint64_t *index)
{
    int h = tdm_ir_lexhash_find(r, term, len, index);
    if (h >= 0)
        return h ? TDM_OK : TDM_ERR_NOT_FOUND;
    uint64_t lo = 0, hi = r->info.nterms;
    const uint32_t *o = r->termoffs;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int c = term_cmp(r->terms + o[mid], o[mid + 1] - o[mid], term, len);
        if (c == 0) {
            *index = mid;
            return TDM_OK;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return TDM_ERR_NOT_FOUND;
}

const char *tdm_ireader_term(const tdm_ireader *r, uint64_t i, size_t *len, uint32_t *df,
                             uint64_t *cf)
{
    if (i >= r->info.nterms)
        return NULL;
    if (len)
        *len = r->termoffs[i + 1] - r->termoffs[i];
    if (df)
        *df = r->lists[i].df;
    if (cf)
        *cf = r->cfs[i];
    return r->terms + r->termoffs[i];
}
