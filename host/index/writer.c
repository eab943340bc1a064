/* The index writer: streams lists into PATH.tmp.<pid>, then appends the
 * lexicon and document sections, writes the header and section table last,
 * and renames the file into place (FORMAT.md). */
#include "writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "bm25.h"
#include "codec/codec.h"
#include "common/fsutil.h"
#include "format.h"
#include "tandem.h"

_Static_assert(sizeof(tdm_idx_header) == 160, "header layout");
_Static_assert(sizeof(tdm_idx_section_entry) == 32, "section entry layout");
_Static_assert(sizeof(tdm_idx_term) == 48, "lexicon entry layout");
_Static_assert(sizeof(tdm_idx_list) == 96, "list header layout");

/* A growable byte buffer. */
typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

struct tdm_iwriter {
    char *path, *tmp;
    FILE *f;
    uint64_t pos;                 /* bytes written to f */
    XXH64_state_t *hash;          /* running hash of the POSTINGS section */
    const tdm_codec_ops *codec;
    double k1, b;
    char stemmer[TDM_IDX_NAME_MAX];
    buf stopwords;                /* NUL-terminated words */
    uint32_t nstopwords;
    buf doclens;                  /* uint32 per doc */
    buf nameoffs;                 /* uint64 per doc + 1 */
    buf names;
    uint64_t ndocs, total_doclen;
    int docs_frozen;              /* a list was added: no more documents */
    buf lexicon;                  /* tdm_idx_term per list */
    buf terms;
    uint64_t nterms, npostings;
    uint64_t last_term_off;
    uint32_t last_term_len;
    uint32_t *scratch;            /* tf - 1 values of the current list */
    size_t scratch_cap;
    int failed;
};

static int buf_add(buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static int fail_io(tdm_iwriter *w, tdm_err *err, const char *what)
{
    w->failed = 1;
    return tdm_err_set(err, TDM_ERR_IO, "%s: %s: %s", w->path, what, strerror(errno));
}

/* Writes n bytes, hashing them into h when not NULL. */
static int put(tdm_iwriter *w, const void *p, size_t n, XXH64_state_t *h, tdm_err *err)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return fail_io(w, err, "write");
    if (h)
        XXH64_update(h, p, n);
    w->pos += n;
    return TDM_OK;
}

static int pad8(tdm_iwriter *w, tdm_err *err)
{
    static const char zeros[8];
    size_t n = (size_t)((8 - w->pos % 8) % 8);
    if (n && fwrite(zeros, 1, n, w->f) != n)
        return fail_io(w, err, "write");
    w->pos += n;
    return TDM_OK;
}

/* Puts an array at the next 8-byte boundary, hashing the padding too: the
 * POSTINGS checksum covers every byte of the section. */
static int put_array(tdm_iwriter *w, const void *p, size_t n, tdm_err *err)
{
    static const char zeros[8];
    size_t padn = (size_t)((8 - w->pos % 8) % 8);
    int rc = put(w, zeros, padn, w->hash, err);
    return rc ? rc : put(w, p, n, w->hash, err);
}

int tdm_iwriter_open(const char *path, const tdm_iwriter_options *opts, tdm_iwriter **out,
                     tdm_err *err)
{
    *out = NULL;
    tdm_iwriter_options o = {0};
    if (opts)
        o = *opts;
    int guard = tdm_output_check(path, NULL, 0, err); /* a device or FIFO stays */
    if (guard != TDM_OK)
        return guard;
    const tdm_codec_ops *codec = tdm_codec_by_name(o.codec ? o.codec : TDM_CODEC_DEFAULT);
    if (!codec)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown codec '%s'", o.codec);
    if (o.stemmer && strlen(o.stemmer) >= TDM_IDX_NAME_MAX)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "stemmer name too long");
    tdm_iwriter *w = calloc(1, sizeof *w);
    if (!w)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    w->codec = codec;
    w->k1 = o.k1 > 0 ? o.k1 : TDM_IDX_DEFAULT_K1;
    w->b = o.b > 0 ? o.b : TDM_IDX_DEFAULT_B;
    snprintf(w->stemmer, sizeof w->stemmer, "%s", o.stemmer ? o.stemmer : "none");
    size_t len = strlen(path) + 32;
    w->path = strdup(path);
    w->tmp = malloc(len);
    w->hash = XXH64_createState();
    uint64_t zero = 0;
    if (!w->path || !w->tmp || !w->hash || buf_add(&w->nameoffs, &zero, 8)) {
        tdm_iwriter_free(w);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < o.nstopwords; i++) {
        if (!o.stopwords[i] || !*o.stopwords[i])
            continue;
        if (buf_add(&w->stopwords, o.stopwords[i], strlen(o.stopwords[i]) + 1)) {
            tdm_iwriter_free(w);
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        }
        w->nstopwords++;
    }
    snprintf(w->tmp, len, "%s.tmp.%ld", path, (long)getpid());
    XXH64_reset(w->hash, 0);
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        int rc = tdm_err_set(err, TDM_ERR_IO, "%s: %s", w->path, strerror(errno));
        tdm_iwriter_free(w);
        return rc;
    }
    /* Room for the header and section table, written at finish. */
    char zeros[sizeof(tdm_idx_header) + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry)] = {0};
    int rc = put(w, zeros, sizeof zeros, NULL, err);
    if (rc) {
        tdm_iwriter_free(w);
        return rc;
    }
    *out = w;
    return TDM_OK;
}

int tdm_iwriter_add_doc(tdm_iwriter *w, uint32_t length, const char *name, tdm_err *err)
{
    if (w->docs_frozen)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "documents must come before the lists");
    if (w->ndocs >= UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "more than 2^32-1 documents");
    char num[24];
    if (!name) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)w->ndocs);
        name = num;
    }
    uint64_t end = w->names.len + strlen(name) + 1;
    if (buf_add(&w->doclens, &length, 4) || buf_add(&w->names, name, strlen(name) + 1) ||
        buf_add(&w->nameoffs, &end, 8))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory storing document names");
    w->ndocs++;
    w->total_doclen += length;
    return TDM_OK;
}

int tdm_iwriter_set_docs(tdm_iwriter *w, uint32_t ndocs, const uint32_t *lengths,
                         const char *const *names, tdm_err *err)
{
    for (uint32_t d = 0; d < ndocs; d++) {
        int rc = tdm_iwriter_add_doc(w, lengths ? lengths[d] : 0, names ? names[d] : NULL, err);
        if (rc)
            return rc;
    }
    return TDM_OK;
}

static int check_list(tdm_iwriter *w, const char *term, size_t len, const uint32_t *docids,
                      const uint32_t *freqs, size_t n, tdm_err *err)
{
    if (len == 0 || len > TDM_IDX_TERM_MAX || memchr(term, 0, len))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term of %zu bytes: empty, too long "
                           "(max %u) or with a NUL byte", len, TDM_IDX_TERM_MAX);
    if (w->nterms) {
        const char *prev = w->terms.p + w->last_term_off;
        size_t m = len < w->last_term_len ? len : w->last_term_len;
        int c = memcmp(prev, term, m);
        if (c > 0 || (c == 0 && w->last_term_len >= len))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "term '%.*s' does not sort after '%.*s'", (int)len, term,
                               (int)w->last_term_len, prev);
    }
    if (n == 0 || n > UINT32_MAX || n > w->ndocs)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term '%.*s': %zu postings for %llu "
                           "documents", (int)len, term, n, (unsigned long long)w->ndocs);
    for (size_t i = 0; i < n; i++) {
        if (docids[i] >= w->ndocs || (i && docids[i] <= docids[i - 1]))
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term '%.*s': docid %u at position "
                               "%zu not increasing or >= %llu documents", (int)len, term,
                               docids[i], i, (unsigned long long)w->ndocs);
        if (freqs[i] == 0)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "term '%.*s': frequency 0 at position %zu", (int)len, term, i);
    }
    return TDM_OK;
}

/* Per block: first and last docid and the BM25 upper bound, rounded up so
 * that the float never understates a double score. */
static int block_meta(tdm_iwriter *w, const tdm_encoded *enc, const uint32_t *docids,
                      const uint32_t *freqs, uint32_t *first, uint32_t *last, float *bmax,
                      float *lmax)
{
    const uint32_t *lens = (const uint32_t *)w->doclens.p;
    double avgdl = w->ndocs ? (double)w->total_doclen / w->ndocs : 0;
    *lmax = 0;
    for (uint32_t blk = 0; blk < enc->nblocks; blk++) {
        size_t s = (size_t)blk * enc->block_size, e = s + tdm_encoded_block_len(enc, blk);
        double m = 0;
        for (size_t i = s; i < e; i++) {
            double sc = tdm_bm25(w->k1, w->b, w->ndocs, enc->n, freqs[i], lens[docids[i]],
                                 avgdl);
            m = sc > m ? sc : m;
        }
        first[blk] = docids[s];
        last[blk] = docids[e - 1];
        bmax[blk] = nextafterf((float)m, INFINITY);
        *lmax = bmax[blk] > *lmax ? bmax[blk] : *lmax;
    }
    return TDM_OK;
}

static int write_encoded(tdm_iwriter *w, const tdm_encoded *e, tdm_err *err)
{
    int rc = put_array(w, e->bases, (size_t)e->nblocks * 4, err);
    if (!rc)
        rc = put_array(w, e->offsets, ((size_t)e->nblocks + 1) * 4, err);
    if (!rc)
        rc = put_array(w, e->words, e->nwords * 4, err);
    return rc;
}

static int write_list(tdm_iwriter *w, const tdm_encoded *d, const tdm_encoded *f,
                      const uint32_t *first, const uint32_t *last, const float *bmax,
                      tdm_err *err)
{
    tdm_idx_list h = {0};
    h.codec = (uint32_t)d->codec;
    h.n = d->n;
    h.block_size = d->block_size;
    h.nblocks = d->nblocks;
    h.doc_nwords = d->nwords;
    h.freq_nwords = f->nwords;
    memcpy(h.doc_params, d->params, sizeof h.doc_params);
    memcpy(h.freq_params, f->params, sizeof h.freq_params);
    int rc = put_array(w, &h, sizeof h, err);
    if (!rc)
        rc = write_encoded(w, d, err);
    if (!rc)
        rc = write_encoded(w, f, err);
    if (!rc)
        rc = put_array(w, first, (size_t)d->nblocks * 4, err);
    if (!rc)
        rc = put_array(w, last, (size_t)d->nblocks * 4, err);
    if (!rc)
        rc = put_array(w, bmax, (size_t)d->nblocks * 4, err);
    return rc;
}

static int encode_list(tdm_iwriter *w, const uint32_t *docids, const uint32_t *freqs,
                       size_t n, tdm_encoded *d, tdm_encoded *f, tdm_err *err)
{
    if (n > w->scratch_cap) {
        uint32_t *s = realloc(w->scratch, n * sizeof *s);
        if (!s)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory encoding %zu postings", n);
        w->scratch = s;
        w->scratch_cap = n;
    }
    for (size_t i = 0; i < n; i++)
        w->scratch[i] = freqs[i] - 1;
    int rc = tdm_codec_encode(w->codec->id, docids, n, 1, d, err);
    if (!rc)
        rc = tdm_codec_encode(w->codec->id, w->scratch, n, 0, f, err);
    if (!rc && (d->block_size != f->block_size || d->nblocks != f->nblocks))
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "codec %s: docid and frequency blocks differ",
                         w->codec->name);
    return rc;
}

int tdm_iwriter_add_list(tdm_iwriter *w, const char *term, size_t term_len,
                         const uint32_t *docids, const uint32_t *freqs, size_t n,
                         tdm_err *err)
{
    if (w->failed)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "writer failed earlier");
    int rc = check_list(w, term, term_len, docids, freqs, n, err);
    if (rc)
        return rc;
    w->docs_frozen = 1;
    tdm_encoded d = {0}, f = {0};
    rc = encode_list(w, docids, freqs, n, &d, &f, err);
    uint32_t *meta = rc ? NULL : malloc((size_t)d.nblocks * 12 + 4);
    if (!rc && !meta)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    tdm_idx_term t = {0};
    if (!rc) {
        float *bmax = (float *)(meta + 2 * (size_t)d.nblocks);
        block_meta(w, &d, docids, freqs, meta, meta + d.nblocks, bmax, &t.max_score);
        rc = put_array(w, "", 0, err);   /* align, hashing the padding */
        t.list_off = w->pos;
        if (!rc)
            rc = write_list(w, &d, &f, meta, meta + d.nblocks, bmax, err);
    }
    free(meta);
    tdm_encoded_free(&d);
    tdm_encoded_free(&f);
    if (rc) {
        w->failed = 1;
        return rc;
    }
    uint64_t base = sizeof(tdm_idx_header) + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry);
    t.list_size = w->pos - t.list_off;
    t.list_off -= base;
    t.term_off = w->terms.len;
    t.term_len = (uint32_t)term_len;
    t.df = (uint32_t)n;
    for (size_t i = 0; i < n; i++)
        t.cf += freqs[i];
    if (buf_add(&w->terms, term, term_len) || buf_add(&w->lexicon, &t, sizeof t)) {
        w->failed = 1;
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory growing the lexicon");
    }
    w->last_term_off = t.term_off;
    w->last_term_len = t.term_len;
    w->nterms++;
    w->npostings += n;
    return TDM_OK;
}

/* Appends one small section at the next 8-byte boundary and fills its entry. */
static int put_section(tdm_iwriter *w, tdm_idx_section_entry *e, uint32_t id, const void *p,
                       size_t n, tdm_err *err)
{
    int rc = pad8(w, err);
    e->id = id;
    e->offset = w->pos;
    e->size = n;
    e->checksum = XXH64(p, n, 0);
    return rc ? rc : put(w, p, n, NULL, err);
}

int tdm_iwriter_finish(tdm_iwriter *w, tdm_err *err)
{
    if (w->failed || !w->f)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "writer failed earlier");
    uint64_t base = sizeof(tdm_idx_header) + TDM_SEC_COUNT * sizeof(tdm_idx_section_entry);
    tdm_idx_section_entry sec[TDM_SEC_COUNT] = {{0}};
    /* POSTINGS ends with its padding hashed in, so its size is a multiple of 8. */
    int rc = put_array(w, "", 0, err);
    sec[TDM_SEC_POSTINGS] = (tdm_idx_section_entry){TDM_SEC_POSTINGS, 0, base, w->pos - base,
                                                    XXH64_digest(w->hash)};
    if (!rc)
        rc = put_section(w, &sec[TDM_SEC_LEXICON], TDM_SEC_LEXICON, w->lexicon.p,
                         w->lexicon.len, err);
    if (!rc)
        rc = put_section(w, &sec[TDM_SEC_TERMS], TDM_SEC_TERMS, w->terms.p, w->terms.len, err);
    if (!rc)
        rc = put_section(w, &sec[TDM_SEC_DOCLENS], TDM_SEC_DOCLENS, w->doclens.p,
                         w->doclens.len, err);
    if (!rc)
        rc = put_section(w, &sec[TDM_SEC_DOCNAME_OFFS], TDM_SEC_DOCNAME_OFFS, w->nameoffs.p,
                         w->nameoffs.len, err);
    if (!rc)
        rc = put_section(w, &sec[TDM_SEC_DOCNAMES], TDM_SEC_DOCNAMES, w->names.p,
                         w->names.len, err);
    if (!rc)
        rc = put_section(w, &sec[TDM_SEC_STOPWORDS], TDM_SEC_STOPWORDS, w->stopwords.p,
                         w->stopwords.len, err);
    if (!rc)
        rc = pad8(w, err);
    if (rc)
        return rc;
    tdm_idx_header h = {0};
    memcpy(h.magic, TDM_IDX_MAGIC, 8);
    h.version = TDM_IDX_VERSION;
    h.header_size = sizeof h;
    h.nsections = TDM_SEC_COUNT;
    h.file_size = w->pos;
    h.ndocs = w->ndocs;
    h.nterms = w->nterms;
    h.npostings = w->npostings;
    h.total_doclen = w->total_doclen;
    h.k1 = w->k1;
    h.b = w->b;
    snprintf(h.codec, sizeof h.codec, "%s", w->codec->name);
    memcpy(h.stemmer, w->stemmer, sizeof h.stemmer);
    h.nstopwords = w->nstopwords;
    XXH64_reset(w->hash, 0);
    XXH64_update(w->hash, &h, sizeof h);
    XXH64_update(w->hash, sec, sizeof sec);
    h.checksum = XXH64_digest(w->hash);
    if (fseek(w->f, 0, SEEK_SET) != 0 || fwrite(&h, sizeof h, 1, w->f) != 1 ||
        fwrite(sec, sizeof sec, 1, w->f) != 1 || fflush(w->f) != 0 || fsync(fileno(w->f)))
        return fail_io(w, err, "write");
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0)
        return fail_io(w, err, "close");
    if (rename(w->tmp, w->path) != 0)
        return tdm_err_set(err, TDM_ERR_IO, "%s: rename: %s", w->path, strerror(errno));
    free(w->tmp);
    w->tmp = NULL;
    return TDM_OK;
}

void tdm_iwriter_free(tdm_iwriter *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    if (w->tmp)
        unlink(w->tmp);
    free(w->tmp);
    free(w->path);
    if (w->hash)
        XXH64_freeState(w->hash);
    free(w->stopwords.p);
    free(w->doclens.p);
    free(w->nameoffs.p);
    free(w->names.p);
    free(w->lexicon.p);
    free(w->terms.p);
    free(w->scratch);
    free(w);
}
