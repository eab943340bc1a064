/* A batch on every partition at once (partition_priv.h,
 * tdm_part_batch_run): a thread each calls its partition's
 * tdm_sched_batch_search, whose lane runs it as device batches; the
 * results merge query by query; AND-then-OR runs AND over the batch, then
 * OR over the queries whose partitions' AND matches fall short of k. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drive/search.h"
#include "drive/search_run.h"
#include "partition_priv.h"
#include "sched_priv.h"

typedef struct bwork {
    tdm_search *s;
    const tdm_search_query *qs;
    size_t nq;
    tdm_search_options o;
    tdm_search_result **res;  /* [nparts * nq] partition p's at p * nq */
    int rc[TDM_SCHED_MAX_LANES];
    tdm_err e[TDM_SCHED_MAX_LANES];
} bwork;

static void batch_one(void *ctx, size_t p)
{
    bwork *w = ctx;
    w->rc[p] = tdm_sched_batch_search(w->s->parts[p]->sched, w->qs, w->nq, &w->o,
                                      w->res + p * w->nq, &w->e[p]);
}

/* The batch qs[0 .. nq) with o on every partition at once (a thread
 * each); w->res filled, or the first failing partition's error. */
static int batch_fan_out(bwork *w, tdm_err *err)
{
    int n = w->s->nparts, rc = TDM_OK;
    memset(w->rc, 0, sizeof w->rc);
    memset(w->e, 0, sizeof w->e);
    tdm_search_parallel((size_t)n, 1, batch_one, w);
    for (int p = 0; p < n; p++)
        if (w->rc[p] && rc == TDM_OK)
            rc = tdm_part_fail(w->s, p, w->rc[p], &w->e[p], err);
    for (int p = 0; p < n; p++)
        tdm_err_clear(&w->e[p]);
    if (rc)
        tdm_part_results_free(w->res, (size_t)n * w->nq);
    return rc;
}

/* A result carrying partition p's error for its query, named. */
static tdm_search_result *failed_one(const tdm_search *s, int p, const tdm_search_result *pr,
                                     int *rc, tdm_err *err)
{
    tdm_search_result *r = calloc(1, sizeof *r);
    if (!r) {
        *rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    char msg[1024];
    snprintf(msg, sizeof msg, "partition %d (device %d): %s", p, s->parts[p]->device_base,
             pr->error ? pr->error : "search failed");
    r->status = pr->status;
    r->error = strdup(msg);
    r->hits = calloc(1, sizeof *r->hits);
    r->device = -1;
    return r;
}

/* Query i's merged result from the partitions' (its own error if any
 * partition failed it, named). */
static tdm_search_result *merge_one(tdm_search *s, tdm_search_result **res, size_t nq, size_t i,
                                    uint32_t k, int *rc, tdm_err *err)
{
    tdm_search_result *pr[TDM_SCHED_MAX_LANES], *r = NULL;
    for (int p = 0; p < s->nparts; p++)
        pr[p] = res[(size_t)p * nq + i];
    for (int p = 0; p < s->nparts; p++)
        if (pr[p]->status)
            return failed_one(s, p, pr[p], rc, err);
    tdm_err e = {0};
    if ((*rc = tdm_part_merge(s, pr, k, &r, &e)) != TDM_OK) {
        tdm_err_copy(err, &e);
        tdm_err_clear(&e);
        return NULL;
    }
    r->algorithm = pr[0]->algorithm;
    r->terms = pr[0]->terms;
    r->unknown = pr[0]->unknown;
    return r;
}

/* The queries AND-then-OR must run again as OR (the partitions' AND
 * matches below k together): their indexes into idx, how many. */
static size_t short_of_k(const bwork *w, size_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < w->nq; i++) {
        size_t hits = 0;
        int ok = 1;
        for (int p = 0; p < w->s->nparts; p++) {
            const tdm_search_result *r = w->res[(size_t)p * w->nq + i];
            ok &= r->status == TDM_OK;
            hits += r->n;
        }
        if (ok && hits < w->o.k)
            idx[m++] = i;
    }
    return m;
}

/* AND-then-OR's second pass: the queries short of k as OR, their merged
 * results in place of the AND's. */
static int or_pass(bwork *w, tdm_search_result **results, tdm_err *err)
{
    size_t *idx = malloc((w->nq ? w->nq : 1) * sizeof *idx);
    if (!idx)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    size_t m = short_of_k(w, idx), n = (size_t)w->s->nparts;
    int rc = TDM_OK;
    tdm_search_query *sub = m ? malloc(m * sizeof *sub) : NULL;
    bwork *v = m ? malloc(sizeof *v) : NULL;
    if (m && (!sub || !v || !(v->res = calloc(n * m, sizeof *v->res))))
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (m && rc == TDM_OK) {
        for (size_t j = 0; j < m; j++)
            sub[j] = w->qs[idx[j]];
        v->s = w->s;
        v->qs = sub;
        v->nq = m;
        v->o = w->o;
        v->o.algorithm = TDM_ALGO_OR;
        rc = batch_fan_out(v, err);
        for (size_t j = 0; rc == TDM_OK && j < m; j++) {
            tdm_search_result *r = merge_one(w->s, v->res, m, j, w->o.k, &rc, err);
            if (r) {
                r->algorithm = TDM_ALGO_AND_OR;
                tdm_search_result_release(results[idx[j]]);
                results[idx[j]] = r;
            }
        }
        tdm_part_results_free(v->res, n * m);
    }
    if (v)
        free(v->res);
    free(v);
    free(sub);
    free(idx);
    return rc;
}

/* results[0 .. nq) as the whole index says: its terms and unknown counts
 * (a shard counts only those it holds), AND-then-OR and AUTO's algorithm,
 * the call's time from t0. */
static void whole_view(tdm_search *s, const tdm_search_query *queries, size_t nq,
                       const tdm_search_options *o, double t0, tdm_search_result **results)
{
    for (size_t i = 0; i < nq; i++) {
        size_t nterms;
        uint32_t unknown;
        tdm_err e = {0};
        if (o->algorithm == TDM_ALGO_AND_OR && results[i]->status == TDM_OK)
            results[i]->algorithm = TDM_ALGO_AND_OR;
        if (tdm_part_whole_query(s, &queries[i], &nterms, &unknown, NULL, &e) == TDM_OK) {
            results[i]->terms = (uint32_t)nterms;
            results[i]->unknown = unknown;
            if (o->algorithm == TDM_ALGO_AUTO && results[i]->status == TDM_OK)
                results[i]->algorithm = tdm_search_auto_alg(TDM_ALGO_AUTO, nterms);
        }
        tdm_err_clear(&e);
        results[i]->seconds = tdm_sched_now() - t0;
    }
}

int tdm_part_batch_run(tdm_search *s, const tdm_search_query *queries, size_t nq,
                       const tdm_search_options *o, tdm_search_result **results, tdm_err *err)
{
    double t0 = tdm_sched_now();
    size_t n = (size_t)s->nparts;
    bwork w = {.s = s, .qs = queries, .nq = nq, .o = *o};
    w.res = calloc(n * (nq ? nq : 1), sizeof *w.res);
    if (!w.res)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (o->algorithm == TDM_ALGO_AND_OR)
        w.o.algorithm = TDM_ALGO_AND;
    int rc = batch_fan_out(&w, err);
    for (size_t i = 0; rc == TDM_OK && i < nq; i++)
        results[i] = merge_one(s, w.res, nq, i, o->k, &rc, err);
    if (rc == TDM_OK && o->algorithm == TDM_ALGO_AND_OR)
        rc = or_pass(&w, results, err);
    if (rc == TDM_OK)
        whole_view(s, queries, nq, o, t0, results);
    tdm_part_results_free(w.res, n * nq);
    if (rc)
        tdm_part_results_free(results, nq);
    free(w.res);
    return rc;
}
