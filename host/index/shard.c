/* Shards by docid range (shard.h): every list cut to the range and encoded
 * again, the sections of a shard assembled in memory in the canonical
 * layout (FORMAT.md), then written or opened. */
#include "shard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bm25.h"
#include "common/buf.h"
#include "common/fsutil.h"
#include "common/workers.h"
#include "format.h"
#include "tandem.h"
#include "writer.h"

/* ---- the split */

int tdm_shard_bounds(const tdm_ireader *r, uint32_t n, uint32_t *bounds, tdm_err *err)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    if (in->shard)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s is a shard already (%u of %u): split "
                           "the whole index", tdm_ireader_path(r), in->shard_index, in->nshards);
    if (n == 0 || n > TDM_SHARDS_MAX || n > in->ndocs)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%u shards of %llu documents: 1 to %u, "
                           "and no more than the documents", n, (unsigned long long)in->ndocs,
                           TDM_SHARDS_MAX);
    const uint32_t *dl = tdm_ireader_doclens(r);
    uint64_t total = 0, cum = 0;
    for (uint64_t d = 0; d < in->ndocs; d++)
        total += (uint64_t)dl[d] + 1; /* + 1: documents of no length still count */
    bounds[0] = 0;
    uint32_t i = 1;
    for (uint64_t d = 0; d < in->ndocs && i < n; d++) {
        cum += (uint64_t)dl[d] + 1;
        /* cut after d at i / n of the total, or where the documents left
           are only enough for one a shard */
        uint64_t left = in->ndocs - (d + 1);
        if ((cum * n >= total * i && left >= n - i) || left == n - i)
            bounds[i++] = (uint32_t)(d + 1);
    }
    bounds[n] = (uint32_t)in->ndocs;
    return TDM_OK;
}

uint64_t tdm_shard_split_id(const tdm_ireader *r, uint32_t n, const uint32_t *bounds)
{
    XXH64_state_t *st = XXH64_createState();
    if (!st)
        return 0;
    uint64_t whole = tdm_ireader_header(r)->checksum;
    XXH64_reset(st, 0x7368617264ull); /* "shard" */
    XXH64_update(st, &whole, sizeof whole);
    XXH64_update(st, &n, sizeof n);
    XXH64_update(st, bounds, ((size_t)n + 1) * sizeof *bounds);
    uint64_t id = XXH64_digest(st);
    XXH64_freeState(st);
    return id;
}

/* ---- one list cut to the range */

typedef struct cut {
    uint32_t df, cf, ndw;     /* postings here, their tf sum, docid payload words */
    uint32_t nb;              /* blocks */
    float max_score;
    uint32_t *words;          /* the list's arena words */
    size_t nwords;
    uint32_t *rows;           /* nb > 1: [4 * (nb + 1)] last, doc, freq, maxq a row */
} cut;

typedef struct scratch {
    uint32_t *d, *f, *g;
    double *bmax;
    size_t cap, bcap;
} scratch;

typedef struct ctx {
    const tdm_ireader *r;
    const tdm_ireader_info *in;
    uint32_t lo, hi;
    int bm25;                 /* bounds are BM25's (else taken from the source blocks) */
    uint64_t first;           /* the chunk's first term */
    cut *cuts;
    int *rc;
    tdm_err *errs;
    scratch *sc;              /* per worker */
} ctx;

static size_t lower(const uint32_t *d, size_t n, uint32_t v)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (d[m] < v)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

static int grow(scratch *s, size_t n, tdm_err *err)
{
    if (n <= s->cap)
        return TDM_OK;
    uint32_t *d = realloc(s->d, n * 4), *f = d ? realloc(s->f, n * 4) : NULL,
             *g = f ? realloc(s->g, n * 4) : NULL;
    if (d)
        s->d = d;
    if (f)
        s->f = f;
    if (!g)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for a list of %zu", n);
    s->g = g;
    s->cap = n;
    return TDM_OK;
}

/* Block j's bound byte: BM25 recomputed from the whole index's statistics,
 * or the largest source byte over the source blocks its postings came from
 * (positions a + j * B ..). */
static void bounds_of(const ctx *c, const tdm_ilist *l, uint64_t t, const tdm_encoded *de,
                      const uint32_t *d, const uint32_t *f, size_t a, scratch *s, cut *o,
                      uint8_t *q)
{
    uint32_t bs = de->block_size;
    if (c->bm25) {
        uint32_t gdf = tdm_ireader_score_df(c->r, t);
        const uint32_t *dl = tdm_ireader_doclens(c->r);
        double lmax = 0;
        for (uint32_t j = 0; j < de->nblocks; j++) {
            size_t s0 = (size_t)j * bs, e = s0 + tdm_encoded_block_len(de, j);
            double m = 0;
            for (size_t k = s0; k < e; k++) {
                double sc = tdm_bm25(c->in->k1, c->in->b, c->in->ndocs, gdf, f[k], dl[d[k]],
                                     c->in->avg_doclen);
                m = sc > m ? sc : m;
            }
            s->bmax[j] = m;
            lmax = m > lmax ? m : lmax;
        }
        /* the writer's rule (writer_list.c): rounded up past the double */
        o->max_score = nextafterf((float)lmax, INFINITY);
        for (uint32_t j = 0; j < de->nblocks; j++)
            q[j] = tdm_idx_quantize_bound(o->max_score, s->bmax[j]);
        return;
    }
    o->max_score = l->max_score;
    for (uint32_t j = 0; j < de->nblocks; j++) {
        size_t p0 = a + (size_t)j * bs, p1 = p0 + tdm_encoded_block_len(de, j) - 1;
        uint8_t m = 0;
        for (size_t b = p0 / l->docs.block_size; b <= p1 / l->docs.block_size; b++) {
            uint8_t v = l->block_maxq ? l->block_maxq[b] : 255;
            m = v > m ? v : m;
        }
        q[j] = m;
    }
}

/* The arena words and block rows of the encoded cut (FORMAT.md). */
static int lay_out(const tdm_encoded *de, const tdm_encoded *fe, const uint32_t *d,
                   const uint8_t *q, cut *o, tdm_err *err)
{
    uint32_t np = tdm_idx_codec_nparams(de->codec);
    o->nwords = 2 * np + de->nwords + fe->nwords;
    o->words = malloc((o->nwords ? o->nwords : 1) * 4);
    o->nb = de->nblocks;
    o->ndw = (uint32_t)de->nwords;
    if (o->nb > 1)
        o->rows = malloc(4 * ((size_t)o->nb + 1) * 4);
    if (!o->words || (o->nb > 1 && !o->rows))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    memcpy(o->words, de->params, np * 4);
    memcpy(o->words + np, fe->params, np * 4);
    memcpy(o->words + 2 * np, de->words, de->nwords * 4);
    memcpy(o->words + 2 * np + de->nwords, fe->words, fe->nwords * 4);
    for (uint32_t j = 0; o->nb > 1 && j <= o->nb; j++) {
        uint32_t *row = o->rows + 4 * (size_t)j;
        size_t end = j ? (size_t)(j - 1) * de->block_size + tdm_encoded_block_len(de, j - 1) : 0;
        row[0] = j ? d[end - 1] : 0;
        row[1] = de->offsets[j];
        row[2] = fe->offsets[j];
        row[3] = j < o->nb ? q[j] : 0;
    }
    return TDM_OK;
}

static int encode_cut(const ctx *c, const tdm_ilist *l, uint64_t t, size_t a, size_t n,
                      scratch *s, cut *o, tdm_err *err)
{
    const uint32_t *d = s->d + a, *f = s->f + a;
    uint64_t cf = 0;
    for (size_t k = 0; k < n; k++) {
        s->g[k] = f[k] - 1;
        cf += f[k];
    }
    o->df = (uint32_t)n;
    o->cf = (uint32_t)cf;
    tdm_encoded de = {0}, fe = {0};
    int rc = tdm_codec_encode(l->docs.codec, d, n, 1, &de, err);
    if (!rc)
        rc = tdm_codec_encode(l->docs.codec, s->g, n, 0, &fe, err);
    if (!rc && (de.nblocks != fe.nblocks ||
                (de.nblocks == 1 && (de.nwords > TDM_IDX_SHORT_MAXW ||
                                     fe.nwords > TDM_IDX_SHORT_MAXW))))
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "term %llu: the codec's blocks do not fit "
                         "the format", (unsigned long long)t);
    if (!rc && de.nblocks > s->bcap) {
        double *b = realloc(s->bmax, de.nblocks * sizeof *b);
        if (!b)
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        else {
            s->bmax = b;
            s->bcap = de.nblocks;
        }
    }
    uint8_t *q = rc ? NULL : malloc(de.nblocks);
    if (!rc && !q)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (!rc) {
        bounds_of(c, l, t, &de, d, f, a, s, o, q);
        rc = lay_out(&de, &fe, d, q, o, err);
    }
    free(q);
    tdm_encoded_free(&de);
    tdm_encoded_free(&fe);
    return rc;
}

static int cut_list(const ctx *c, uint64_t t, scratch *s, cut *o, tdm_err *err)
{
    tdm_ilist l;
    int rc = tdm_ireader_list(c->r, t, &l, err);
    if (!rc)
        rc = grow(s, (size_t)l.df + 1, err);
    if (!rc)
        rc = tdm_ireader_decode(c->r, t, s->d, s->f, err);
    if (rc)
        return rc;
    size_t a = lower(s->d, l.df, c->lo), b = lower(s->d, l.df, c->hi);
    return b > a ? encode_cut(c, &l, t, a, b - a, s, o, err) : TDM_OK; /* else df 0 */
}

static void cut_one(void *arg, size_t item, unsigned worker)
{
    ctx *c = arg;
    c->rc[item] = cut_list(c, c->first + item, &c->sc[worker], &c->cuts[item], &c->errs[item]);
}

/* ---- the sections */

typedef struct image {
    tdm_buf sec[TDM_SEC_SHARD_COUNT];
} image;

static int put(image *im, unsigned id, const void *p, size_t n, tdm_err *err)
{
    return tdm_buf_append(&im->sec[id], p, n) ? tdm_err_set(err, TDM_ERR_NOMEM, "out of memory")
                                              : TDM_OK;
}

/* Appends a cut list: descriptor, codec, cf, arena words, block rows. */
static int append_cut(image *im, const cut *o, uint8_t codec, tdm_err *err)
{
    tdm_idx_list desc = {(uint32_t)(im->sec[TDM_SEC_ARENA].len / 4), o->df, 0, 0};
    if (im->sec[TDM_SEC_ARENA].len / 4 + o->nwords > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "the shard exceeds 2^32-1 arena words");
    if (o->df) {
        desc.max_score = o->max_score;
        desc.ext = o->nb == 1 ? o->ndw : (uint32_t)(im->sec[TDM_SEC_BLOCK_LAST].len / 4);
    }
    int rc = put(im, TDM_SEC_LISTS, &desc, sizeof desc, err);
    if (!rc)
        rc = put(im, TDM_SEC_CODECS, &codec, 1, err);
    if (!rc)
        rc = put(im, TDM_SEC_TERM_CF, &o->cf, 4, err);
    if (!rc && o->nwords)
        rc = put(im, TDM_SEC_ARENA, o->words, o->nwords * 4, err);
    for (uint32_t j = 0; !rc && o->nb > 1 && j <= o->nb; j++) {
        const uint32_t *row = o->rows + 4 * (size_t)j;
        uint8_t mq = (uint8_t)row[3];
        rc = put(im, TDM_SEC_BLOCK_LAST, &row[0], 4, err);
        if (!rc)
            rc = put(im, TDM_SEC_BLOCK_DOCS, &row[1], 4, err);
        if (!rc)
            rc = put(im, TDM_SEC_BLOCK_FREQS, &row[2], 4, err);
        if (!rc)
            rc = put(im, TDM_SEC_BLOCK_MAX, &mq, 1, err);
    }
    return rc;
}

#define CHUNK 4096u /* terms cut at once (their cuts held until appended) */

static int cut_lists(ctx *c, unsigned threads, image *im, uint64_t *npost, tdm_err *err)
{
    uint64_t nt = c->in->nterms;
    c->cuts = calloc(CHUNK, sizeof *c->cuts);
    c->rc = calloc(CHUNK, sizeof *c->rc);
    c->errs = calloc(CHUNK, sizeof *c->errs);
    c->sc = calloc(threads, sizeof *c->sc);
    int rc = c->cuts && c->rc && c->errs && c->sc ? TDM_OK
             : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    const uint8_t *codecs = tdm_ireader_section(c->r, TDM_SEC_CODECS, NULL);
    for (c->first = 0; !rc && c->first < nt; c->first += CHUNK) {
        size_t m = nt - c->first < CHUNK ? (size_t)(nt - c->first) : CHUNK;
        tdm_par_for(threads, m, cut_one, c);
        for (size_t k = 0; k < m; k++) {
            if (!rc)
                rc = c->rc[k] ? tdm_err_copy(err, &c->errs[k])
                              : append_cut(im, &c->cuts[k], codecs[c->first + k], err);
            *npost += c->cuts[k].df;
            free(c->cuts[k].words);
            free(c->cuts[k].rows);
            tdm_err_clear(&c->errs[k]);
            memset(&c->cuts[k], 0, sizeof c->cuts[k]);
            c->rc[k] = 0;
        }
    }
    for (unsigned w = 0; c->sc && w < threads; w++) {
        free(c->sc[w].d);
        free(c->sc[w].f);
        free(c->sc[w].g);
        free(c->sc[w].bmax);
    }
    free(c->cuts);
    free(c->rc);
    free(c->errs);
    free(c->sc);
    return rc;
}

/* The sections every shard copies or derives from the whole index's. */
static int copy_sections(const tdm_ireader *r, uint32_t lo, uint32_t hi, image *im,
                         tdm_err *err)
{
    static const unsigned same[] = {TDM_SEC_DOCLENS, TDM_SEC_TERM_OFFS, TDM_SEC_TERMS,
                                    TDM_SEC_STOPWORDS};
    int rc = TDM_OK;
    for (size_t k = 0; !rc && k < sizeof same / sizeof *same; k++) {
        uint64_t size;
        const void *p = tdm_ireader_section(r, same[k], &size);
        rc = put(im, same[k], p, size, err);
    }
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t off = 0;
    rc = rc ? rc : put(im, TDM_SEC_DOCNAME_OFFS, &off, 8, err);
    for (uint64_t d = 0; !rc && d < in->ndocs; d++) {
        /* its own documents' names; the others' empty */
        const char *name = d >= lo && d < hi ? tdm_ireader_docname(r, d) : "";
        size_t len = strlen(name) + 1;
        rc = put(im, TDM_SEC_DOCNAMES, name, len, err);
        off += len;
        if (!rc)
            rc = put(im, TDM_SEC_DOCNAME_OFFS, &off, 8, err);
    }
    for (uint64_t t = 0; !rc && t < in->nterms; t++) {
        uint32_t g = tdm_ireader_score_df(r, t);
        rc = put(im, TDM_SEC_TERM_GDF, &g, 4, err);
    }
    return rc;
}

/* Header, section table and sections in the canonical layout (FORMAT.md). */
static int assemble(const tdm_ireader *r, image *im, uint64_t npost, void **out, size_t *size,
                    tdm_err *err)
{
    tdm_idx_header h = *tdm_ireader_header(r); /* flags, parameters, names: the whole's */
    tdm_idx_section_entry sec[TDM_SEC_SHARD_COUNT];
    memset(sec, 0, sizeof sec);
    uint64_t at = sizeof h + sizeof sec;
    for (unsigned id = 0; id < TDM_SEC_SHARD_COUNT; id++) {
        at = (at + TDM_IDX_ALIGN - 1) / TDM_IDX_ALIGN * TDM_IDX_ALIGN;
        sec[id].id = id;
        sec[id].offset = at;
        sec[id].size = im->sec[id].len;
        sec[id].checksum = XXH64(im->sec[id].p ? im->sec[id].p : "", im->sec[id].len, 0);
        at += im->sec[id].len;
    }
    unsigned char *p = calloc(1, at);
    if (!p)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for a shard of %llu bytes",
                           (unsigned long long)at);
    for (unsigned id = 0; id < TDM_SEC_SHARD_COUNT; id++)
        if (im->sec[id].len)
            memcpy(p + sec[id].offset, im->sec[id].p, im->sec[id].len);
    h.version = TDM_IDX_VERSION; /* a version 2 index's shards: version 3, its rule moved */
    h.header_size = sizeof h;
    h.nsections = TDM_SEC_SHARD_COUNT;
    h.file_size = at;
    h.npostings = npost;
    h.checksum = 0;
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, sec, sizeof sec);
    h.checksum = XXH64(p, sizeof h + sizeof sec, 0);
    memcpy(p, &h, sizeof h);
    *out = p;
    *size = at;
    return TDM_OK;
}

int tdm_shard_make(const tdm_ireader *r, uint32_t n, const uint32_t *bounds, uint32_t i,
                   unsigned threads, void **out, size_t *size, tdm_err *err)
{
    *out = NULL;
    *size = 0;
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    if (in->shard || i >= n || bounds[i] >= bounds[i + 1] || bounds[n] != in->ndocs)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s: shard %u of %u: not a split of "
                           "this index", tdm_ireader_path(r), i, n);
    ctx c = {.r = r, .in = in, .lo = bounds[i], .hi = bounds[i + 1]};
    c.bm25 = !in->impact; /* an impact index's bounds: from the source blocks */
    if (threads == 0)
        threads = tdm_ncpus();
    image im;
    memset(&im, 0, sizeof im);
    tdm_idx_shard rec = {tdm_shard_split_id(r, n, bounds), i, n, c.lo, c.hi,
                         in->npostings, tdm_ireader_header(r)->checksum, {0}};
    uint64_t npost = 0;
    int rc = tdm_ireader_check_payload(r, err);
    if (!rc)
        rc = cut_lists(&c, threads, &im, &npost, err);
    if (!rc)
        rc = copy_sections(r, c.lo, c.hi, &im, err);
    if (!rc)
        rc = put(&im, TDM_SEC_SHARD, &rec, sizeof rec, err);
    if (!rc)
        rc = assemble(r, &im, npost, out, size, err);
    for (unsigned id = 0; id < TDM_SEC_SHARD_COUNT; id++)
        tdm_buf_free(&im.sec[id]);
    return rc;
}

int tdm_shard_open_mem(const tdm_ireader *r, uint32_t n, const uint32_t *bounds, uint32_t i,
                       unsigned threads, tdm_ireader **out, tdm_err *err)
{
    *out = NULL;
    void *p;
    size_t size;
    int rc = tdm_shard_make(r, n, bounds, i, threads, &p, &size, err);
    if (rc)
        return rc;
    char name[512];
    snprintf(name, sizeof name, "%s shard %u/%u", tdm_ireader_path(r), i, n);
    rc = tdm_ireader_open_take(p, size, name, out, err);
    if (rc == TDM_OK) /* its terms are r's (copy_sections): r's hash serves it */
        tdm_ireader_share_lexicon(*out, r);
    return rc;
}

int tdm_shard_write(const tdm_ireader *r, uint32_t n, const char *prefix, unsigned threads,
                    tdm_err *err)
{
    uint32_t *bounds = malloc(((size_t)n + 2) * sizeof *bounds);
    if (!bounds)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = tdm_shard_bounds(r, n, bounds, err);
    for (uint32_t i = 0; !rc && i < n; i++) {
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s.%u", prefix, i) >= sizeof path) {
            rc = tdm_err_set(err, TDM_ERR_INVALID_ARG, "output prefix too long");
            break;
        }
        const char *src = tdm_ireader_path(r);
        if ((rc = tdm_output_check(path, &src, 1, err)))
            break;
        void *p = NULL;
        size_t size = 0;
        rc = tdm_shard_make(r, n, bounds, i, threads, &p, &size, err);
        tdm_outfile o = {0};
        if (!rc)
            rc = tdm_outfile_open(&o, path, err);
        if (!rc) {
            if (fwrite(p, 1, size, o.f) != size) {
                tdm_outfile_abort(&o);
                rc = tdm_err_set(err, TDM_ERR_IO, "%s: write failed", path);
            } else {
                rc = tdm_outfile_commit(&o, err);
            }
        }
        free(p);
    }
    free(bounds);
    return rc;
}

int tdm_shard_set_check(const tdm_ireader *const *rs, size_t n, tdm_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const tdm_ireader_info *a = tdm_ireader_info_get(rs[i]), *z = tdm_ireader_info_get(rs[0]);
        const char *p = tdm_ireader_path(rs[i]);
        if (!a->shard)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: not a shard (tandem shard makes them)",
                               p);
        if (a->split_id != z->split_id || a->nshards != z->nshards)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: shard of split %016llx (%u shards), "
                               "%s of split %016llx (%u shards): shards of two splits do not "
                               "mix", p, (unsigned long long)a->split_id, a->nshards,
                               tdm_ireader_path(rs[0]), (unsigned long long)z->split_id,
                               z->nshards);
        if (a->nshards != n || a->shard_index != i)
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: shard %u of %u given as shard %zu of "
                               "%zu: every shard of the split once, in order", p,
                               a->shard_index, a->nshards, i, n);
        if (a->ndocs != z->ndocs || a->doc_lo != (i ? tdm_ireader_info_get(rs[i - 1])->doc_hi
                                                    : 0) ||
            (i + 1 == n && a->doc_hi != a->ndocs))
            return tdm_err_set(err, TDM_ERR_FORMAT, "%s: documents [%u, %u) do not continue "
                               "the shards before it", p, a->doc_lo, a->doc_hi);
    }
    return TDM_OK;
}
