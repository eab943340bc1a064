/* The exhaustive evaluator (oracle.h). */
#include "oracle.h"

#include <stdlib.h>
#include <string.h>

#include "tandem.h"

struct tdm_oracle {
    const tdm_ireader *r;
    uint64_t ndocs;
    double *acc;        /* [ndocs] sums; float sums widened in float mode */
    uint16_t *cnt;      /* [ndocs] distinct query terms seen (<= 1024) */
    uint32_t *touched;  /* documents with cnt > 0, in first-touch order */
    size_t ntouched;
    uint32_t *docs, *freqs;  /* decode buffers */
    size_t cap;
};

int tdm_oracle_open(const tdm_ireader *r, tdm_oracle **out, tdm_err *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    (*out)->r = r;
    (*out)->ndocs = tdm_ireader_info_get(r)->ndocs;
    return TDM_OK;
}

void tdm_oracle_close(tdm_oracle *o)
{
    if (!o)
        return;
    free(o->acc);
    free(o->cnt);
    free(o->touched);
    free(o->docs);
    free(o->freqs);
    free(o);
}

static int ensure_state(tdm_oracle *o, tdm_err *err)
{
    if (o->acc || o->ndocs == 0)
        return TDM_OK;
    size_t n = (size_t)o->ndocs;
    o->acc = calloc(n, sizeof *o->acc);
    o->cnt = calloc(n, sizeof *o->cnt);
    o->touched = malloc(n * sizeof *o->touched);
    if (!o->acc || !o->cnt || !o->touched) {
        free(o->acc);
        free(o->cnt);
        free(o->touched);
        o->acc = NULL;
        o->cnt = NULL;
        o->touched = NULL;
        return tdm_err_set(err, TDM_ERR_NOMEM, "oracle: out of memory for %llu documents",
                           (unsigned long long)o->ndocs);
    }
    return TDM_OK;
}

static int ensure_buffers(tdm_oracle *o, size_t df, tdm_err *err)
{
    if (df <= o->cap)
        return TDM_OK;
    uint32_t *d = realloc(o->docs, df * sizeof *d);
    if (d)
        o->docs = d;
    uint32_t *f = realloc(o->freqs, df * sizeof *f);
    if (f)
        o->freqs = f;
    if (!d || !f)
        return tdm_err_set(err, TDM_ERR_NOMEM, "oracle: out of memory for a list of %zu", df);
    o->cap = df;
    return TDM_OK;
}

/* Adds the t-th query term's postings to the accumulators. */
static int add_term(tdm_oracle *o, const tdm_query *q, const tdm_scorer *s, size_t t,
                    int precision, tdm_err *err)
{
    uint32_t df = q->terms[t].df;
    int rc = ensure_buffers(o, df, err);
    if (rc || (rc = tdm_ireader_decode(o->r, q->terms[t].id, o->docs, o->freqs, err)))
        return rc;
    const uint32_t *dl = tdm_ireader_doclens(o->r);
    for (uint32_t i = 0; i < df; i++) {
        uint32_t d = o->docs[i];
        if (o->cnt[d]++ == 0)
            o->touched[o->ntouched++] = d;
        if (precision == TDM_ORACLE_FLOAT)
            o->acc[d] = (double)((float)o->acc[d] + tdm_score_f(s, t, o->freqs[i], dl[d]));
        else
            o->acc[d] += tdm_score_d(s, t, o->freqs[i], dl[d]);
    }
    return TDM_OK;
}

/* Ranks the touched documents and clears their accumulators. */
static void collect(tdm_oracle *o, size_t need, tdm_topk *top, uint64_t *matched)
{
    uint64_t m = 0;
    for (size_t i = 0; i < o->ntouched; i++) {
        uint32_t d = o->touched[i];
        if (o->cnt[d] >= need) {
            m++;
            tdm_topk_push(top, d, o->acc[d]);
        }
        o->acc[d] = 0;
        o->cnt[d] = 0;
    }
    o->ntouched = 0;
    if (matched)
        *matched = m;
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
    if (q->nterms == 0) {
        tdm_scorer_free(&s);
        return TDM_OK;
    }
    tdm_topk top;
    if ((rc = ensure_state(o, err)) == TDM_OK && tdm_topk_init(&top, req->k) != TDM_OK)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc) {
        tdm_scorer_free(&s);
        return rc;
    }
    for (size_t t = 0; t < q->nterms && rc == TDM_OK; t++)
        rc = add_term(o, q, &s, t, req->precision, err);
    collect(o, req->match == TDM_MATCH_AND ? q->nterms : 1, &top, matched);
    if (rc == TDM_OK)
        *n = tdm_topk_drain(&top, hits);
    else if (matched)
        *matched = 0;
    tdm_topk_free(&top);
    tdm_scorer_free(&s);
    return rc;
}
