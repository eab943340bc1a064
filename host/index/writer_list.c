/* One list into the index: checked, encoded with the writer's codec, its
 * block metadata (last docids, payload endpoints, quantized BM25 bounds)
 * spilled as block-table rows, its payload appended to the arena, and its
 * descriptor and lexicon entries kept for finish (FORMAT.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bm25.h"
#include "tandem.h"
#include "common/workers.h"
#include "writer_priv.h"

uint8_t tdm_idx_quantize_bound(float max_score, double score)
{
    /* Start just below the exact quotient, then step up: rounding of the
     * binary32 product can leave a bound one step short. */
    double est = max_score > 0 ? score / max_score * 256.0 - 2.0 : 0;
    unsigned q = est > 0 ? (unsigned)est : 0;
    if (q > 255)
        q = 255;
    while (q > 0 && (double)tdm_idx_block_bound(max_score, (uint8_t)q) >= score &&
           (double)tdm_idx_block_bound(max_score, (uint8_t)(q - 1)) >= score)
        q--;
    while (q < 255 && (double)tdm_idx_block_bound(max_score, (uint8_t)q) < score)
        q++;
    return (uint8_t)q;
}

/* The term after the previous one, and room for its bytes (serial part). */
static int check_order(const tdm_iwriter *w, const char *term, size_t len, tdm_err *err)
{
    if (w->nterms) {
        const uint32_t *offs = (const uint32_t *)w->termoffs.p;
        const char *prev = w->terms.p + offs[w->nterms - 1];
        size_t plen = offs[w->nterms] - offs[w->nterms - 1], m = len < plen ? len : plen;
        int c = memcmp(prev, term, m);
        if (c > 0 || (c == 0 && plen >= len))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "term '%.*s' does not sort after '%.*s'", (int)len, term,
                               (int)plen, prev);
    }
    if (w->terms.len + len > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "terms exceed the format's 4 GiB of term bytes");
    return TDM_OK;
}

/* The term's bytes and the postings (any thread). */
static int check_list(const tdm_iwriter *w, const char *term, size_t len,
                      const uint32_t *docids, const uint32_t *freqs, size_t n, tdm_err *err)
{
    if (len == 0 || len > TDM_IDX_TERM_MAX || memchr(term, 0, len))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term of %zu bytes: empty, too long "
                           "(max %u) or with a NUL byte", len, TDM_IDX_TERM_MAX);
    if (n == 0 || n > UINT32_MAX || n > w->ndocs)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term '%.*s': %zu postings for %llu "
                           "documents", (int)len, term, n, (unsigned long long)w->ndocs);
    uint64_t cf = 0;
    for (size_t i = 0; i < n; i++) {
        if (docids[i] >= w->ndocs || (i && docids[i] <= docids[i - 1]))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term '%.*s': docid %u at position "
                               "%zu not increasing or >= %llu documents", (int)len, term,
                               docids[i], i, (unsigned long long)w->ndocs);
        if (freqs[i] == 0)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "term '%.*s': frequency 0 at position %zu", (int)len, term, i);
        cf += freqs[i];
    }
    if (cf > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "term '%.*s': collection frequency %llu "
                           "exceeds the format's 2^32-1", (int)len, term,
                           (unsigned long long)cf);
    return TDM_OK;
}

/* Encodes docids and tf - 1 into *d and *f; *scratch (of *cap values) is
 * grown as needed. Reads only the writer's options: any thread. */
static int encode_list(const tdm_iwriter *w, const uint32_t *docids, const uint32_t *freqs,
                       size_t n, uint32_t **scratch, size_t *cap, tdm_encoded *d,
                       tdm_encoded *f, tdm_err *err)
{
    if (n > *cap) {
        uint32_t *s = realloc(*scratch, n * sizeof *s);
        if (!s)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu postings", n);
        *scratch = s;
        *cap = n;
    }
    for (size_t i = 0; i < n; i++)
        (*scratch)[i] = freqs[i] - 1;
    int rc = tdm_codec_encode(w->list_codec->id, docids, n, 1, d, err);
    if (!rc)
        rc = tdm_codec_encode(w->list_codec->id, *scratch, n, 0, f, err);
    if (!rc && (d->block_size != f->block_size || d->nblocks != f->nblocks))
        return tdm_err_set(err, TDM_ERR_INTERNAL, "codec %s: docid and frequency blocks differ",
                           w->list_codec->name);
    uint32_t np = tdm_idx_codec_nparams(w->list_codec->id);
    for (uint32_t k = np; !rc && k < TDM_CODEC_MAX_PARAMS; k++)
        if (d->params[k] || f->params[k])
            rc = tdm_err_set(err, TDM_ERR_INTERNAL, "codec %s sets parameter %u, which the "
                             "index format does not store", w->list_codec->name, k);
    if (!rc && d->nblocks == 1 && (d->nwords > TDM_IDX_SHORT_MAXW ||
                                   f->nwords > TDM_IDX_SHORT_MAXW))
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "codec %s wrote a block of %zu + %zu words, "
                         "above the format's %u", w->list_codec->name, d->nwords, f->nwords,
                         TDM_IDX_SHORT_MAXW);
    return rc;
}

/* The largest BM25 score of each block into bmax[nblocks] and of the list;
 * in an impact index the largest impact (the score of a query weight of 1). */
static double block_scores(const tdm_iwriter *w, const tdm_encoded *enc,
                           const uint32_t *docids, const uint32_t *freqs, double *bmax)
{
    const uint32_t *lens = (const uint32_t *)w->doclens.p;
    double avgdl = w->ndocs ? (double)w->total_doclen / w->ndocs : 0, lmax = 0;
    for (uint32_t blk = 0; blk < enc->nblocks; blk++) {
        size_t s = (size_t)blk * enc->block_size, e = s + tdm_encoded_block_len(enc, blk);
        double m = 0;
        for (size_t i = s; i < e; i++) {
            double sc = w->impact ? (double)freqs[i]
                                  : tdm_bm25(w->k1, w->b, w->ndocs, enc->n, freqs[i],
                                             lens[docids[i]], avgdl);
            m = sc > m ? sc : m;
        }
        bmax[blk] = m;
        lmax = m > lmax ? m : lmax;
    }
    return lmax;
}

/* Block-table rows of a list of more than one block (FORMAT.md). */
static int spill_blocks(tdm_iwriter *w, const tdm_encoded *d, const tdm_encoded *f,
                        const uint32_t *docids, const double *bmax, float max_score,
                        tdm_err *err)
{
    if (w->nentries + d->nblocks + 1 > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "more than 2^32-1 block-table entries");
    for (uint32_t j = 0; j <= d->nblocks; j++) {
        tdm_iw_row row = {0};
        if (j) {
            size_t end = (size_t)(j - 1) * d->block_size + tdm_encoded_block_len(d, j - 1);
            row.last = docids[end - 1];
        }
        row.doc = d->offsets[j];
        row.freq = f->offsets[j];
        row.maxq = j < d->nblocks ? tdm_idx_quantize_bound(max_score, bmax[j]) : 0;
        if (fwrite(&row, sizeof row, 1, w->spill) != 1)
            return tdm_iw_fail_io(w, err, "write the block spill");
    }
    w->nentries += d->nblocks + 1;
    return TDM_OK;
}

static int put_arena(tdm_iwriter *w, const tdm_encoded *d, const tdm_encoded *f,
                     tdm_err *err)
{
    uint32_t np = tdm_idx_codec_nparams(d->codec);
    int rc = tdm_iw_put(w, d->params, np * 4, err);
    if (!rc)
        rc = tdm_iw_put(w, f->params, np * 4, err);
    if (!rc)
        rc = tdm_iw_put(w, d->words, d->nwords * 4, err);
    if (!rc)
        rc = tdm_iw_put(w, f->words, f->nwords * 4, err);
    if (!rc)
        w->arena_words += 2ull * np + d->nwords + f->nwords;
    return rc;
}

/* Descriptor, codec, term bytes and offset, cf: the per-term arrays. */
static int add_entries(tdm_iwriter *w, const tdm_idx_list *desc, const char *term,
                       size_t len, uint32_t cf, tdm_err *err)
{
    uint8_t codec = (uint8_t)w->list_codec->id;
    uint32_t end = (uint32_t)(w->terms.len + len);
    if (tdm_buf_append(&w->lists, desc, sizeof *desc) || tdm_buf_append(&w->codecs, &codec, 1) ||
        tdm_buf_append(&w->terms, term, len) || tdm_buf_append(&w->termoffs, &end, 4) ||
        tdm_buf_append(&w->cfs, &cf, 4)) {
        w->failed = 1;
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory growing the lexicon");
    }
    w->nterms++;
    w->npostings += desc->df;
    return TDM_OK;
}

/* A list checked and encoded, its block scores computed, before it is
 * appended: the part of adding a list that any thread can do. */
typedef struct prepared {
    tdm_encoded d, f;
    double *bmax;             /* per block */
    float max_score;
    uint32_t cf;
} prepared;

static void prepared_free(prepared *p)
{
    tdm_encoded_free(&p->d);
    tdm_encoded_free(&p->f);
    free(p->bmax);
    memset(p, 0, sizeof *p);
}

static int prepare(const tdm_iwriter *w, const char *term, size_t len, const uint32_t *docids,
                   const uint32_t *freqs, size_t n, uint32_t **scratch, size_t *cap,
                   prepared *p, tdm_err *err)
{
    int rc = check_list(w, term, len, docids, freqs, n, err);
    if (!rc)
        rc = encode_list(w, docids, freqs, n, scratch, cap, &p->d, &p->f, err);
    if (!rc && !(p->bmax = malloc((size_t)p->d.nblocks * sizeof *p->bmax)))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc)
        return rc;
    /* Rounded up to the next binary32, so the bound is above the double score. */
    p->max_score = nextafterf((float)block_scores(w, &p->d, docids, freqs, p->bmax), INFINITY);
    uint64_t cf = 0;
    for (size_t i = 0; i < n; i++)
        cf += freqs[i];
    p->cf = (uint32_t)cf;
    return TDM_OK;
}

/* Appends a prepared list: block rows, payload, lexicon entries (in order,
 * one thread). */
static int commit(tdm_iwriter *w, const char *term, size_t len, const uint32_t *docids,
                  const prepared *p, tdm_err *err)
{
    int rc = check_order(w, term, len, err);
    if (rc)
        return rc;   /* the writer stays usable */
    uint64_t words = 2ull * tdm_idx_codec_nparams(p->d.codec) + p->d.nwords + p->f.nwords;
    w->docs_frozen = 1;
    if (w->arena_words + words > UINT32_MAX) {
        w->failed = 1;
        return tdm_err_set(err, TDM_ERR_LIMIT, "the postings exceed the format's 2^32-1 arena "
                           "words (16 GiB)");
    }
    tdm_idx_list desc = {0};
    desc.max_score = p->max_score;
    desc.words = (uint32_t)w->arena_words;
    desc.df = p->d.n;
    desc.ext = (uint32_t)(p->d.nblocks == 1 ? p->d.nwords : w->nentries);
    rc = p->d.nblocks == 1 ? TDM_OK
                           : spill_blocks(w, &p->d, &p->f, docids, p->bmax, p->max_score, err);
    if (!rc)
        rc = put_arena(w, &p->d, &p->f, err);
    if (!rc)
        rc = add_entries(w, &desc, term, len, p->cf, err);
    if (rc)
        w->failed = 1;
    return rc;
}

int tdm_iwriter_add_list(tdm_iwriter *w, const char *term, size_t term_len,
                         const uint32_t *docids, const uint32_t *freqs, size_t n,
                         tdm_err *err)
{
    if (w->failed)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "writer failed earlier");
    prepared p = {0};
    int rc = prepare(w, term, term_len, docids, freqs, n, &w->scratch, &w->scratch_cap, &p, err);
    if (!rc)
        rc = commit(w, term, term_len, docids, &p, err);
    else if (rc != TDM_ERR_INVALID_ARG && rc != TDM_ERR_LIMIT)
        w->failed = 1;
    prepared_free(&p);
    return rc;
}

/* ---- several lists on several threads */

typedef struct batch {
    const tdm_iwriter *w;
    const tdm_iw_list *lists;
    prepared *p;
    int *rc;
    tdm_err *errs;
    struct scratch { uint32_t *p; size_t cap; } *scratch;  /* per worker */
} batch;

static void prepare_one(void *ctx, size_t i, unsigned worker)
{
    batch *b = ctx;
    const tdm_iw_list *l = &b->lists[i];
    b->rc[i] = prepare(b->w, l->term, l->len, l->docids, l->freqs, l->n,
                       &b->scratch[worker].p, &b->scratch[worker].cap, &b->p[i], &b->errs[i]);
}

int tdm_iwriter_add_lists(tdm_iwriter *w, const tdm_iw_list *lists, size_t n, unsigned threads,
                          tdm_err *err)
{
    if (w->failed)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "writer failed earlier");
    if (threads < 1)
        threads = 1;
    batch b = {w, lists, calloc(n ? n : 1, sizeof *b.p), calloc(n ? n : 1, sizeof *b.rc),
               calloc(n ? n : 1, sizeof *b.errs), calloc(threads, sizeof *b.scratch)};
    int rc = b.p && b.rc && b.errs && b.scratch ? TDM_OK
             : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (!rc)
        tdm_par_for(threads, n, prepare_one, &b);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = b.rc[i] ? tdm_err_copy(err, &b.errs[i])
                     : commit(w, lists[i].term, lists[i].len, lists[i].docids, &b.p[i], err);
        if (b.rc[i] && rc != TDM_ERR_INVALID_ARG && rc != TDM_ERR_LIMIT)
            w->failed = 1;
    }
    for (size_t i = 0; b.p && b.errs && i < n; i++) {
        prepared_free(&b.p[i]);
        tdm_err_clear(&b.errs[i]);
    }
    for (unsigned t = 0; b.scratch && t < threads; t++)
        free(b.scratch[t].p);
    free(b.p);
    free(b.rc);
    free(b.errs);
    free(b.scratch);
    return rc;
}
