/* The exhaustive evaluator (oracle.h): every list of the query decoded whole,
 * then scored term at a time one window of docids after another, every
 * posting scored. */
#include "oracle.h"

#include <stdlib.h>
#include <string.h>

#include "tandem.h"

struct tdm_oracle {
    const tdm_ireader *r;
    uint32_t *docs, *freqs;  /* the query's lists back to back, term order */
    size_t cap;              /* postings they hold room for */
    size_t *pos, *end;       /* [nterms] each term's cursor and end in docs */
    size_t tcap;
    /* one window's accumulators (WIN entries each), zero between windows */
    float *accf;             /* float mode's sums */
    double *accd;            /* double mode's */
    uint16_t *cnt;           /* terms seen (a query has at most 1024 terms) */
    uint16_t *touched;       /* offsets with cnt > 0, first-touch order */
    size_t ntouched;
};

#define WIN 32768u /* docids a window: its accumulators fit in a core's L2 */

int tdm_oracle_open(const tdm_ireader *r, tdm_oracle **out, tdm_err *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    tdm_oracle *o = *out;
    o->r = r;
    o->accf = calloc(WIN, sizeof *o->accf);
    o->accd = calloc(WIN, sizeof *o->accd);
    o->cnt = calloc(WIN, sizeof *o->cnt);
    o->touched = malloc(WIN * sizeof *o->touched);
    if (!o->accf || !o->accd || !o->cnt || !o->touched) {
        tdm_oracle_close(o);
        *out = NULL;
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    return TDM_OK;
}

void tdm_oracle_close(tdm_oracle *o)
{
    if (!o)
        return;
    free(o->docs);
    free(o->freqs);
    free(o->pos);
    free(o->end);
    free(o->accf);
    free(o->accd);
    free(o->cnt);
    free(o->touched);
    free(o);
}

/* Room for npost postings and nt cursors, kept across calls (grown only). */
static int ensure(tdm_oracle *o, size_t npost, size_t nt, tdm_err *err)
{
    if (npost > o->cap) {
        uint32_t *d = realloc(o->docs, npost * sizeof *d);
        if (d)
            o->docs = d;
        uint32_t *f = realloc(o->freqs, npost * sizeof *f);
        if (f)
            o->freqs = f;
        if (!d || !f)
            return tdm_err_set(err, TDM_ERR_NOMEM, "oracle: out of memory for %zu postings",
                               npost);
        o->cap = npost;
    }
    if (nt > o->tcap) {
        size_t *p = realloc(o->pos, nt * sizeof *p);
        if (p)
            o->pos = p;
        size_t *e = realloc(o->end, nt * sizeof *e);
        if (e)
            o->end = e;
        if (!p || !e)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        o->tcap = nt;
    }
    return TDM_OK;
}

/* Decodes every list of q into o->docs/freqs, term t's at [pos[t], end[t]). */
static int decode_all(tdm_oracle *o, const tdm_query *q, tdm_err *err)
{
    size_t npost = 0;
    for (size_t t = 0; t < q->nterms; t++)
        npost += q->terms[t].df;
    int rc = ensure(o, npost, q->nterms, err);
    size_t off = 0;
    for (size_t t = 0; rc == TDM_OK && t < q->nterms; t++) {
        rc = tdm_ireader_decode(o->r, q->terms[t].id, o->docs + off, o->freqs + off, err);
        o->pos[t] = off;
        off += q->terms[t].df;
        o->end[t] = off;
    }
    return rc;
}

/* a ranks above the heap's worst (oracle.h's order): worth a push. */
static int beats_worst(const tdm_topk *t, uint32_t d, double s)
{
    if (t->n < t->k)
        return 1;
    const tdm_hit *w = &t->h[0];
    return s > w->score || (s == w->score && d < w->docid);
}

/* Term at a time inside a window of WIN docids: every term's postings in
 * [base, base + WIN), in the query's term order, into accumulators of WIN
 * entries that stay in the cache whatever the index's size (one dense array
 * over the index costs a cache miss a posting once it outgrows the cache). */
static void window(tdm_oracle *o, const tdm_query *q, const tdm_scorer *s, int precision,
                   uint32_t base, uint64_t lim)
{
    const uint32_t *dl = tdm_ireader_doclens(o->r);
    for (size_t t = 0; t < q->nterms; t++) {
        size_t p = o->pos[t], e = o->end[t];
        for (; p < e && o->docs[p] < lim; p++) {
            uint32_t d = o->docs[p], w = d - base;
            if (o->cnt[w]++ == 0)
                o->touched[o->ntouched++] = (uint16_t)w;
            if (precision == TDM_ORACLE_FLOAT)
                o->accf[w] = o->accf[w] + tdm_score_f(s, t, o->freqs[p], dl[d]);
            else
                o->accd[w] += tdm_score_d(s, t, o->freqs[p], dl[d]);
        }
        o->pos[t] = p;
    }
}

/* Ranks the window's touched documents and clears their accumulators. */
static uint64_t collect(tdm_oracle *o, int precision, size_t need, uint32_t base, tdm_topk *top)
{
    uint64_t m = 0;
    for (size_t i = 0; i < o->ntouched; i++) {
        uint16_t w = o->touched[i];
        if (o->cnt[w] >= need) {
            double sc = precision == TDM_ORACLE_FLOAT ? (double)o->accf[w] : o->accd[w];
            m++;
            if (beats_worst(top, base + w, sc))
                tdm_topk_push(top, base + w, sc);
        }
        o->accf[w] = 0;
        o->accd[w] = 0;
        o->cnt[w] = 0;
    }
    o->ntouched = 0;
    return m;
}

/* Every window that holds a posting, in docid order; a document is kept
 * when it holds at least `need` of the terms. Every posting is scored once. */
static uint64_t rank_all(tdm_oracle *o, const tdm_query *q, const tdm_scorer *s, int precision,
                         size_t need, tdm_topk *top)
{
    uint64_t m = 0;
    for (;;) {
        uint64_t first = UINT64_MAX;
        for (size_t t = 0; t < q->nterms; t++)
            if (o->pos[t] < o->end[t] && o->docs[o->pos[t]] < first)
                first = o->docs[o->pos[t]];
        if (first == UINT64_MAX)
            return m;
        uint32_t base = (uint32_t)(first & ~(uint64_t)(WIN - 1));
        window(o, q, s, precision, base, (uint64_t)base + WIN);
        m += collect(o, precision, need, base, top);
    }
}

static int check_request(const tdm_oracle_request *req, tdm_err *err)
{
    if (req->k < 1 || req->k > TDM_TOPK_MAX)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "k = %u: must be 1 .. %d", req->k,
                           TDM_TOPK_MAX);
    if (req->match != TDM_MATCH_OR && req->match != TDM_MATCH_AND)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "match mode %d: neither OR nor AND",
                           req->match);
    if (req->precision != TDM_ORACLE_DOUBLE && req->precision != TDM_ORACLE_FLOAT)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "oracle precision %d", req->precision);
    return TDM_OK;
}

int tdm_oracle_search(tdm_oracle *o, const tdm_query *q, const tdm_oracle_request *req,
                      tdm_hit *hits, size_t *n, uint64_t *matched, tdm_err *err)
{
    *n = 0;
    if (matched)
        *matched = 0;
    tdm_scorer s;
    int rc = check_request(req, err);
    if (rc || (rc = tdm_scorer_init(&s, o->r, q, &req->score, err)))
        return rc;
    /* a shard's term without postings here: no document of the shard has
       every term */
    if (q->nterms == 0 || (req->match == TDM_MATCH_AND && q->absent)) {
        tdm_scorer_free(&s);
        return TDM_OK;
    }
    tdm_topk top;
    if (tdm_topk_init(&top, req->k) != TDM_OK)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    else if ((rc = decode_all(o, q, err)) == TDM_OK) {
        uint64_t m = rank_all(o, q, &s, req->precision,
                              req->match == TDM_MATCH_AND ? q->nterms : 1, &top);
        if (matched)
            *matched = m;
        *n = tdm_topk_drain(&top, hits);
    }
    tdm_topk_free(&top);
    tdm_scorer_free(&s);
    return rc;
}
