/* `tandem-mpi bench queries`: every query through the shards, a batch at a
 * time, for each algorithm asked for; each batch's round trip timed (every
 * query of a batch waited that long: its latency), throughput over the
 * whole pass, rank 0's merge time and the bytes rank 0 sent and received
 * per query; and every answer checked against the exact oracle on the
 * unsharded index (harness/oracle.h, float scores bit for bit), run on
 * --oracle-threads threads (harness/oracle_threads.h). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "harness/oracle.h"
#include "harness/oracle_threads.h"
#include "index/reader.h"
#include "index/tokpool.h"
#include "query/query.h"
#include "query/score.h"
#include "tmpi.h"

#define MISMATCHES_SHOWN 10

/* The oracle's top k of every query, for one match mode. */
typedef struct oans {
    uint32_t *n;
    uint64_t *matched;
    tdm_hit *hits; /* [nq * k] */
} oans;

typedef struct bench {
    tmpi_ctx *c;
    const tdm_qfile *qf;
    const tmpi_query *q;
    size_t nq;
    uint32_t k;
    tdm_ireader *r;
    tdm_query *tq;        /* [nq] the queries on the whole index */
    oans ans[2];          /* by enum tdm_match; n NULL until computed */
    double *lat;          /* [nq] */
    uint64_t mismatches;
} bench;

typedef struct oracle_ctx {
    const bench *b;
    oans *a;
} oracle_ctx;

static int build_queries(bench *b)
{
    tdm_err err = {0};
    tdm_tokpool *tp = NULL;
    int rc = tdm_tokpool_open(b->r, &tp, &err);
    b->tq = calloc(b->nq, sizeof *b->tq);
    if (!b->tq && rc == TDM_OK)
        rc = tdm_err_set(&err, TDM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; rc == TDM_OK && i < b->nq; i++) {
        const tdm_qf_query *fq = &b->qf->q[i];
        tdm_query *q = &b->tq[i];
        tdm_query_init(q);
        if (fq->text) {
            tdm_tokenizer *t = tdm_tokpool_get(tp, &err);
            rc = t ? tdm_query_add_text(q, b->r, t, fq->text, strlen(fq->text), 1.0, &err)
                   : (err.code ? err.code : TDM_ERR_NOMEM);
            if (t)
                tdm_tokpool_put(tp, t);
        } else {
            for (size_t j = 0; rc == TDM_OK && j < fq->nterms; j++)
                rc = tdm_query_add_term(q, b->r, fq->terms[j].term, strlen(fq->terms[j].term),
                                        fq->terms[j].weight, &err);
        }
        if (rc == TDM_OK)
            tdm_query_finish(q);
    }
    tdm_tokpool_free(tp);
    if (rc != TDM_OK)
        tmpi_fail(b->c, "%s: %s", b->c->o->oracle, tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : 1;
}

/* One query's oracle answer into a's slots (on the thread that ran it). */
static void keep_one(void *ctx, size_t q, const tdm_hit *hits, size_t n, uint64_t matched,
                     double seconds)
{
    const bench *b = ((const oracle_ctx *)ctx)->b;
    oans *a = ((const oracle_ctx *)ctx)->a;
    (void)seconds;
    memcpy(a->hits + q * b->k, hits, n * sizeof *hits);
    a->n[q] = (uint32_t)n;
    a->matched[q] = matched;
}

/* The oracle's answers in match mode m (once), on --oracle-threads
 * threads (each its own oracle over every threads-th query: the same
 * answers as one). */
static int oracle(bench *b, int m)
{
    oans *a = &b->ans[m];
    if (a->n)
        return 0;
    a->n = calloc(b->nq, sizeof *a->n);
    a->matched = calloc(b->nq, sizeof *a->matched);
    a->hits = calloc(b->nq * b->k, sizeof *a->hits);
    if (!a->n || !a->matched || !a->hits)
        return tmpi_fail(b->c, "out of memory for the oracle's answers");
    const tdm_search_options *so = &b->c->o->so;
    unsigned threads = (unsigned)b->c->o->oracle_threads;
    oracle_ctx ctx = {b, a};
    tdm_oracle_pass p = {b->r, b->tq, 0, b->nq,
                         {b->k, m, TDM_ORACLE_FLOAT,
                          tdm_score_params_for(b->r, so->scoring, so->k1, so->b)},
                         threads, 0, keep_one, &ctx};
    tdm_err err = {0};
    double t0 = tdm_cli_now();
    if (tdm_oracle_run_threads(&p, &err) != TDM_OK) {
        tmpi_fail(b->c, "oracle: %s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    fprintf(stderr, "oracle (%s) on %s: %zu queries in %.3f s on %u thread%s\n",
            m == TDM_MATCH_AND ? "and" : "or", b->c->o->oracle, b->nq, tdm_cli_now() - t0,
            threads, threads == 1 ? "" : "s");
    return 0;
}

/* 0 if a is the oracle's answer to query i under algorithm alg. */
static int check(bench *b, int alg, size_t i, const tmpi_answer *a)
{
    char why[256] = "";
    const oans *o = &b->ans[TDM_MATCH_OR];
    if (alg == TDM_ALGO_AND ||
        (alg == TDM_ALGO_AND_OR && b->ans[TDM_MATCH_AND].matched[i] >= b->k))
        o = &b->ans[TDM_MATCH_AND];
    if (a->status != TDM_OK)
        snprintf(why, sizeof why, "failed: %s", a->error ? a->error : "?");
    else if (a->n != o->n[i])
        snprintf(why, sizeof why, "%u hits, the oracle has %u", a->n, o->n[i]);
    for (uint32_t h = 0; !*why && h < a->n; h++) {
        const tdm_hit *x = &o->hits[i * b->k + h];
        if (a->hits[h].docid != x->docid || a->hits[h].score != (float)x->score)
            snprintf(why, sizeof why, "rank %u: doc %u score %.9g, the oracle's doc %u "
                     "score %.9g", h + 1, a->hits[h].docid, a->hits[h].score, x->docid,
                     x->score);
    }
    if (!*why)
        return 0;
    if (b->mismatches++ < MISMATCHES_SHOWN)
        fprintf(stderr, "tandem-mpi bench: %s, query '%s': %s\n", tdm_algorithm_name(alg),
                b->qf->q[i].id, why);
    return 1;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double pct(const double *s, size_t n, double p)
{
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return s[i < n ? i : n - 1];
}

/* One algorithm over every query: its row of the table. */
static int pass(bench *b, int alg)
{
    tmpi_ctx *c = b->c;
    size_t bs = (size_t)c->o->batch;
    if ((alg == TDM_ALGO_AND || alg == TDM_ALGO_AND_OR) && oracle(b, TDM_MATCH_AND))
        return 1;
    if (alg != TDM_ALGO_AND && oracle(b, TDM_MATCH_OR))
        return 1;
    tmpi_answer *a = calloc(bs, sizeof *a);
    if (!a)
        return tmpi_fail(c, "out of memory");
    /* warm-up: the first batch once, untimed (first launches, caches) */
    size_t m0 = b->nq < bs ? b->nq : bs;
    int rc = tmpi_search(c, b->q, m0, alg, a) ? 1 : 0;
    for (size_t i = 0; i < m0; i++)
        tmpi_answer_free(&a[i]);
    uint64_t out0 = c->bytes_out, in0 = c->bytes_in;
    double merge0 = c->merge_s, t0 = tdm_cli_now();
    for (size_t at = 0; rc == 0 && at < b->nq; at += bs) {
        size_t m = b->nq - at < bs ? b->nq - at : bs;
        double s = tdm_cli_now();
        if (tmpi_search(c, b->q + at, m, alg, a)) {
            rc = 1;
            break;
        }
        double el = tdm_cli_now() - s;
        for (size_t i = 0; i < m; i++) {
            b->lat[at + i] = el;
            check(b, alg, at + i, &a[i]);
            tmpi_answer_free(&a[i]);
        }
    }
    double el = tdm_cli_now() - t0;
    free(a);
    if (rc)
        return rc;
    qsort(b->lat, b->nq, sizeof *b->lat, cmp_double);
    double nq = (double)b->nq;
    printf("%-9s %7zu %6zu %6d %10.1f %9.3f %9.3f %9.3f %9.1f %10.0f %10.0f\n",
           tdm_algorithm_name(alg), b->nq, bs, c->size, el > 0 ? nq / el : 0,
           pct(b->lat, b->nq, 0.5) * 1e3, pct(b->lat, b->nq, 0.95) * 1e3,
           pct(b->lat, b->nq, 0.99) * 1e3, (c->merge_s - merge0) / nq * 1e6,
           (double)(c->bytes_out - out0) / nq, (double)(c->bytes_in - in0) / nq);
    fflush(stdout);
    return 0;
}

static int passes(bench *b)
{
    char list[256];
    snprintf(list, sizeof list, "%s", b->c->o->algorithms);
    printf("# %zu queries, k = %u, %u shards of %s on %d ranks; latency: a batch's round "
           "trip\n", b->nq, b->k, b->c->nshards, b->c->o->prefix, b->c->size);
    printf("%-9s %7s %6s %6s %10s %9s %9s %9s %9s %10s %10s\n", "algorithm", "queries",
           "batch", "ranks", "queries/s", "p50_ms", "p95_ms", "p99_ms", "merge_us",
           "bytes_out", "bytes_in");
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int alg;
        if (tdm_algorithm_parse(t, &alg) != TDM_OK)
            return tmpi_fail(b->c, "--algorithms: %s", tdm_last_error());
        if (pass(b, alg))
            return 1;
    }
    return 0;
}

int tmpi_bench(tmpi_ctx *c)
{
    bench b = {.c = c, .k = c->o->so.k};
    tmpi_query *q = NULL;
    tdm_qfile *qf = NULL;
    tdm_err err = {0};
    if (tdm_ireader_open(c->o->oracle, &b.r, &err) != TDM_OK) {
        tmpi_fail(c, "--oracle: %s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    int rc = tdm_ireader_info_get(b.r)->shard
                 ? tmpi_fail(c, "--oracle %s: a shard; give the unsharded index", c->o->oracle)
                 : tmpi_load_queries(c, &qf, &q, &b.nq);
    b.qf = qf;
    b.q = q;
    if (rc == 0 && !(b.lat = calloc(b.nq, sizeof *b.lat)))
        rc = tmpi_fail(c, "out of memory");
    if (rc == 0)
        rc = build_queries(&b);
    if (rc == 0)
        rc = passes(&b);
    if (rc == 0 && b.mismatches)
        rc = tmpi_fail(c, "%llu answers differ from the oracle's",
                       (unsigned long long)b.mismatches);
    else if (rc == 0)
        fprintf(stderr, "every answer is the oracle's\n");
    for (size_t i = 0; b.tq && i < b.nq; i++)
        tdm_query_free(&b.tq[i]);
    free(b.tq);
    for (int m = 0; m < 2; m++) {
        free(b.ans[m].n);
        free(b.ans[m].matched);
        free(b.ans[m].hits);
    }
    free(b.lat);
    tmpi_free_queries(qf, q, b.nq);
    tdm_ireader_close(b.r);
    return rc;
}
