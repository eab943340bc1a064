/* The measures (eval.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "eval_priv.h"
#include "tandem.h"

/* [*lo, *hi) of the judgments of qid (the qrels are sorted by qid). */
static void judged_range(const tdm_qrels *q, const char *qid, size_t *lo, size_t *hi)
{
    size_t a = 0, b = q->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (strcmp(q->j[m].qid, qid) < 0)
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    while (a < q->n && !strcmp(q->j[a].qid, qid))
        a++;
    *hi = a;
}

/* The level of docno among judgments [lo, hi) (sorted by docno); 0 if unjudged. */
static int level_of(const tdm_qrels *q, size_t lo, size_t hi, const char *docno)
{
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        int c = strcmp(q->j[m].docno, docno);
        if (c == 0)
            return q->j[m].level;
        if (c < 0)
            lo = m + 1;
        else
            hi = m;
    }
    return 0;
}

static double gain(int level, int mode)
{
    if (level <= 0)
        return 0;
    return mode == TDM_EVAL_GAIN_EXP ? ldexp(1.0, level) - 1.0 : (double)level;
}

static int desc_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The ideal DCG@10 from every judged document's gain. */
static double ideal_dcg10(const tdm_qrels *q, size_t lo, size_t hi, int mode, int *nomem)
{
    size_t n = hi - lo;
    double *g = malloc((n ? n : 1) * sizeof *g), dcg = 0;
    if (!g) {
        *nomem = 1;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        g[i] = gain(q->j[lo + i].level, mode);
    qsort(g, n, sizeof *g, desc_double);
    for (size_t i = 0; i < n && i < 10; i++)
        dcg += g[i] / log2((double)i + 2);
    free(g);
    return dcg;
}

/* The measures of one query: run entries [a, b), judgments [lo, hi). */
static int eval_query(const tdm_qrels *q, size_t lo, size_t hi, const tdm_run *r, size_t a,
                      size_t b, int mode, tdm_eval_metrics *m)
{
    memset(m, 0, sizeof *m);
    for (size_t i = lo; i < hi; i++)
        m->relevant += q->j[i].level >= 1;
    double ap = 0, dcg = 0;
    uint64_t rel10 = 0, rel1000 = 0;
    for (size_t i = a; i < b; i++) {
        uint64_t rank = i - a + 1;
        int lv = level_of(q, lo, hi, r->e[i].docno);
        if (rank <= 10)
            dcg += gain(lv, mode) / log2((double)rank + 1);
        if (lv < 1)
            continue;
        m->rel_retrieved++;
        ap += (double)m->rel_retrieved / (double)rank;
        rel10 += rank <= 10;
        rel1000 += rank <= 1000;
        if (m->mrr10 == 0 && rank <= 10)
            m->mrr10 = 1.0 / (double)rank;
    }
    int nomem = 0;
    double idcg = ideal_dcg10(q, lo, hi, mode, &nomem);
    m->retrieved = b - a;
    m->map = m->relevant ? ap / (double)m->relevant : 0;
    m->p10 = rel10 / 10.0;
    m->recall1000 = m->relevant ? (double)rel1000 / (double)m->relevant : 0;
    m->ndcg10 = idcg > 0 ? dcg / idcg : 0;
    return nomem ? TDM_ERR_NOMEM : TDM_OK;
}

static int run_has(const tdm_run *r, const char *qid)
{
    size_t a = 0, b = r->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        int c = strcmp(r->e[m].qid, qid);
        if (c == 0)
            return 1;
        if (c < 0)
            a = m + 1;
        else
            b = m;
    }
    return 0;
}

static int push_query(tdm_eval_result *out, size_t *cap, const char *qid,
                      const tdm_eval_metrics *m)
{
    tdm_eval_query *p = tdm_array_grow(out->queries, cap, out->nqueries + 1, sizeof *p);
    if (!p)
        return TDM_ERR_NOMEM;
    out->queries = p;
    out->queries[out->nqueries++] = (tdm_eval_query){qid, *m};
    return TDM_OK;
}

static int qid_cmp(const void *a, const void *b)
{
    return strcmp(((const tdm_eval_query *)a)->qid, ((const tdm_eval_query *)b)->qid);
}

/* Missing queries: judged, not in the run; with `complete`, zeros. */
static int add_missing(const tdm_qrels *q, const tdm_run *r, int complete,
                       tdm_eval_result *out, size_t *cap)
{
    for (size_t i = 0; i < q->n;) {
        size_t lo, hi;
        judged_range(q, q->j[i].qid, &lo, &hi);
        if (!run_has(r, q->j[i].qid)) {
            out->missing++;
            tdm_eval_metrics m = {0};
            for (size_t k = lo; k < hi; k++)
                m.relevant += q->j[k].level >= 1;
            if (complete && push_query(out, cap, q->j[i].qid, &m))
                return TDM_ERR_NOMEM;
        }
        i = hi;
    }
    return TDM_OK;
}

static void average(tdm_eval_result *out)
{
    tdm_eval_metrics *s = &out->mean;
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < out->nqueries; i++) {
        const tdm_eval_metrics *m = &out->queries[i].m;
        s->map += m->map;
        s->p10 += m->p10;
        s->ndcg10 += m->ndcg10;
        s->recall1000 += m->recall1000;
        s->mrr10 += m->mrr10;
        s->retrieved += m->retrieved;
        s->relevant += m->relevant;
        s->rel_retrieved += m->rel_retrieved;
    }
    if (out->nqueries) {
        double n = (double)out->nqueries;
        s->map /= n;
        s->p10 /= n;
        s->ndcg10 /= n;
        s->recall1000 /= n;
        s->mrr10 /= n;
    }
}

int tdm_eval(const tdm_qrels *qrels, const tdm_run *run, const tdm_eval_options *opts,
             tdm_eval_result *out, tdm_err *err)
{
    tdm_eval_options o = opts ? *opts : (tdm_eval_options){0};
    memset(out, 0, sizeof *out);
    if (o.gain != TDM_EVAL_GAIN_LINEAR && o.gain != TDM_EVAL_GAIN_EXP)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "gain mode %d", o.gain);
    size_t cap = 0;
    int rc = TDM_OK;
    for (size_t a = 0; a < run->n && rc == TDM_OK;) {
        size_t b = a, lo, hi;
        while (b < run->n && !strcmp(run->e[b].qid, run->e[a].qid))
            b++;
        judged_range(qrels, run->e[a].qid, &lo, &hi);
        if (lo == hi) {
            out->unjudged++;
        } else {
            tdm_eval_metrics m;
            rc = eval_query(qrels, lo, hi, run, a, b, o.gain, &m);
            if (rc == TDM_OK)
                rc = push_query(out, &cap, run->e[a].qid, &m);
        }
        a = b;
    }
    if (rc == TDM_OK)
        rc = add_missing(qrels, run, o.complete, out, &cap);
    if (rc != TDM_OK) {
        tdm_eval_result_free(out);
        return tdm_err_set(err, rc, "out of memory");
    }
    qsort(out->queries, out->nqueries, sizeof *out->queries, qid_cmp);
    average(out);
    return TDM_OK;
}

void tdm_eval_result_free(tdm_eval_result *r)
{
    free(r->queries);
    memset(r, 0, sizeof *r);
}

/* For eval_measure.c (eval_priv.h). */
void tdm_eval_judged_range(const tdm_qrels *q, const char *qid, size_t *lo, size_t *hi)
{
    judged_range(q, qid, lo, hi);
}

int tdm_eval_level_of(const tdm_qrels *q, size_t lo, size_t hi, const char *docno)
{
    return level_of(q, lo, hi, docno);
}

double tdm_eval_gain(int level, int mode)
{
    return gain(level, mode);
}
