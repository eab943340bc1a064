/* `tandem bench queries`: the oracle pass. Every query at every k through the
 * exhaustive host evaluator (query/oracle.h), each call timed, and the exact
 * float answers kept for the devices' check. With several threads each runs
 * its own oracle on every threads-th query (the latency of one call is still
 * one thread's). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench_queries.h"
#include "query/oracle.h"
#include "tandem.h"

void tdm_bq_answers_free(tdm_bq_answers *a)
{
    free(a->n);
    free(a->doc);
    free(a->score);
    free(a->matched);
    memset(a, 0, sizeof *a);
}

typedef struct worker {
    const tdm_bq_oracle_job *job;
    unsigned id;
    uint32_t k;
    double *us;           /* [nq] */
    tdm_bq_answers *keep; /* the largest k: store; else NULL */
    const tdm_bq_answers *ref; /* a smaller k: check against the prefix */
    tdm_hit *hits;        /* [k] */
    uint64_t bad;         /* prefix check failures */
    tdm_err err;
    int rc;
} worker;

static int compare_prefix(const tdm_bq_answers *a, size_t q, const tdm_hit *h, size_t n,
                          uint32_t k)
{
    size_t want = a->n[q] < k ? a->n[q] : k;
    if (n != want)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (h[i].docid != a->doc[q * a->k + i] || h[i].score != (double)a->score[q * a->k + i])
            return 1;
    return 0;
}

static int one(worker *w, tdm_oracle *o, size_t q, int timed)
{
    const tdm_bq_oracle_job *j = w->job;
    tdm_oracle_request req = {w->k, j->match, TDM_ORACLE_FLOAT,
                              {TDM_SCORING_BM25, TDM_BM25_K1_DEFAULT, TDM_BM25_B_DEFAULT}};
    size_t n = 0;
    uint64_t matched = 0;
    double t0 = tdm_cli_now();
    int rc = tdm_oracle_search(o, &j->q[q], &req, w->hits, &n, &matched, &w->err);
    double t1 = tdm_cli_now();
    if (rc != TDM_OK || !timed)
        return rc;
    w->us[q] = (t1 - t0) * 1e6;
    if (w->keep) {
        tdm_bq_answers *a = w->keep;
        a->n[q] = (uint32_t)n;
        a->matched[q] = matched;
        for (size_t i = 0; i < n; i++) {
            a->doc[q * a->k + i] = w->hits[i].docid;
            a->score[q * a->k + i] = (float)w->hits[i].score; /* a float widened: exact */
        }
    } else if (compare_prefix(w->ref, q, w->hits, n, w->k)) {
        w->bad++;
    }
    return TDM_OK;
}

static void *work(void *arg)
{
    worker *w = arg;
    const tdm_bq_oracle_job *j = w->job;
    tdm_oracle *o = NULL;
    w->rc = tdm_oracle_open(j->r, &o, &w->err);
    /* warm-up: the first call allocates the accumulators */
    size_t step = j->threads, done = 0;
    for (size_t q = w->id; w->rc == TDM_OK && q < j->nq && done < j->warmup; q += step, done++)
        w->rc = one(w, o, q, 0);
    for (size_t q = w->id; w->rc == TDM_OK && q < j->nq; q += step)
        w->rc = one(w, o, q, 1);
    tdm_oracle_close(o);
    return NULL;
}

static int alloc_answers(tdm_bq_answers *a, uint32_t k, size_t nq)
{
    a->k = k;
    a->n = calloc(nq ? nq : 1, sizeof *a->n);
    a->matched = calloc(nq ? nq : 1, sizeof *a->matched);
    a->doc = malloc((nq ? nq : 1) * k * sizeof *a->doc);
    a->score = malloc((nq ? nq : 1) * k * sizeof *a->score);
    return a->n && a->matched && a->doc && a->score ? 0 : -1;
}

/* All threads over the queries at one k. */
static int run_k(const tdm_bq_oracle_job *j, uint32_t k, double *us, tdm_bq_answers *keep,
                 const tdm_bq_answers *ref)
{
    unsigned nt = j->threads;
    worker *w = calloc(nt, sizeof *w);
    pthread_t *th = calloc(nt, sizeof *th);
    int rc = w && th ? 0 : -1;
    unsigned started = 0;
    for (unsigned t = 0; rc == 0 && t < nt; t++) {
        w[t] = (worker){j, t, k, us, keep, ref, malloc(k * sizeof(tdm_hit)), 0, {0}, 0};
        if (!w[t].hits || pthread_create(&th[t], NULL, work, &w[t]) != 0) {
            free(w[t].hits);
            rc = -1;
            break;
        }
        started++;
    }
    if (rc)
        fprintf(stderr, "tandem bench queries: cannot start the oracle's threads\n");
    for (unsigned t = 0; t < started; t++) {
        pthread_join(th[t], NULL);
        if (w[t].rc != TDM_OK && rc == 0) {
            fprintf(stderr, "tandem bench queries: oracle: %s\n", tdm_err_msg(&w[t].err));
            rc = -1;
        }
        if (w[t].bad && rc == 0) {
            fprintf(stderr, "tandem bench queries: the oracle's top %u is not the prefix of "
                            "its top %u for %llu queries\n", k, ref->k,
                    (unsigned long long)w[t].bad);
            rc = -1;
        }
        free(w[t].hits);
        tdm_err_clear(&w[t].err);
    }
    free(w);
    free(th);
    return rc;
}

/* Queries per second of the threads together: every query over the time of
 * the busiest thread's timed calls (its warm-up left out). */
static double throughput(const tdm_bq_oracle_job *j, const double *us)
{
    double busiest = 0;
    for (size_t t = 0; t < j->threads; t++) {
        double sum = 0;
        for (size_t q = t; q < j->nq; q += j->threads)
            sum += us[q];
        busiest = sum > busiest ? sum : busiest;
    }
    return busiest > 0 ? (double)j->nq / (busiest * 1e-6) : 0;
}

int tdm_bq_oracle_run(const tdm_bq_oracle_job *j, tdm_bq_set *set, tdm_bq_answers *ans)
{
    memset(ans, 0, sizeof *ans);
    if (alloc_answers(ans, j->ks[j->nk - 1], j->nq)) {
        tdm_bq_answers_free(ans);
        fprintf(stderr, "tandem bench queries: out of memory for the oracle's answers\n");
        return -1;
    }
    const char *name = j->match == TDM_MATCH_AND ? "oracle-and" : "oracle-or";
    for (size_t i = j->nk; i-- > 0;) {
        tdm_bq_series *r = tdm_bq_add(set, j->nq);
        if (!r) {
            fprintf(stderr, "tandem bench queries: out of memory\n");
            return -1;
        }
        snprintf(r->algorithm, sizeof r->algorithm, "%s", name);
        r->algo = -1;
        r->color = j->match == TDM_MATCH_AND ? -2 : -1;
        r->k = j->ks[i];
        r->device = -1;
        snprintf(r->device_name, sizeof r->device_name, "host, %u thread%s", j->threads,
                 j->threads == 1 ? "" : "s");
        r->n = j->nq;
        r->threads = j->threads;
        r->cdf = 1;
        fprintf(stderr, "oracle (%s) at k = %u ...\n", name + 7, r->k);
        if (run_k(j, r->k, r->us, i + 1 == j->nk ? ans : NULL, ans))
            return -1;
        r->qps = throughput(j, r->us);
        tdm_bq_stats(r);
    }
    return 0;
}
