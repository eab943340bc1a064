/* `tandem bench queries`: the oracle pass. Every query once through the
 * exhaustive host evaluator (harness/oracle.h) at the largest k asked for
 * (a smaller k's answer is the prefix: the order is total), each call
 * timed, and the exact float answers kept for the devices' check. With
 * several threads each runs its own oracle on every threads-th query (the
 * latency of one call is still one thread's). Queries an --oracle-cache file
 * holds are not run again. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench_queries.h"
#include "harness/oracle.h"
#include "harness/oracle_threads.h"
#include "tandem.h"

int tdm_bq_answers_check(const tdm_bq_answers *and_ans, const tdm_bq_answers *or_ans,
                         const tdm_search_result *r, size_t q, uint32_t k, char *why, size_t cap)
{
    const tdm_bq_answers *a = or_ans;
    if (r->algorithm == TDM_ALGO_AND)
        a = and_ans;
    else if (r->algorithm == TDM_ALGO_AND_OR && and_ans->matched && and_ans->matched[q] >= k)
        a = and_ans;
    if (!a->n) {
        snprintf(why, cap, "%s ran, for which the oracle was not asked",
                 tdm_algorithm_name(r->algorithm));
        return 1;
    }
    size_t want = a->n[q] < k ? a->n[q] : k;
    if (r->n != want) {
        snprintf(why, cap, "%zu hits, the oracle has %zu", r->n, want);
        return 1;
    }
    for (size_t i = 0; i < want; i++) {
        uint32_t d = a->doc[q * a->k + i];
        float s = a->score[q * a->k + i];
        if (r->hits[i].docid != d || r->hits[i].score != s) {
            snprintf(why, cap, "rank %zu: doc %u score %.9g, the oracle's doc %u score %.9g",
                     i + 1, r->hits[i].docid, r->hits[i].score, d, s);
            return 1;
        }
    }
    return 0;
}

void tdm_bq_answers_free(tdm_bq_answers *a)
{
    free(a->n);
    free(a->doc);
    free(a->score);
    free(a->matched);
    memset(a, 0, sizeof *a);
}

/* One timed query's answer into the job's slots (on its thread). */
typedef struct keep {
    const tdm_bq_oracle_job *job;
    tdm_bq_answers *ans;
} keep;

static void keep_one(void *ctx, size_t q, const tdm_hit *hits, size_t n, uint64_t matched,
                     double seconds)
{
    const keep *kp = ctx;
    tdm_bq_answers *a = kp->ans;
    kp->job->us[q] = seconds * 1e6;
    a->n[q] = (uint32_t)n;
    a->matched[q] = matched;
    for (size_t i = 0; i < n; i++) {
        a->doc[q * a->k + i] = hits[i].docid;
        a->score[q * a->k + i] = (float)hits[i].score; /* a float widened: exact */
    }
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

/* All threads over queries [first, nq) (harness/oracle_threads.h). */
static int run_all(const tdm_bq_oracle_job *j, size_t first, tdm_bq_answers *ans)
{
    keep kp = {j, ans};
    tdm_oracle_pass p = {j->r, j->q, first, j->nq,
                         {j->k, j->match, TDM_ORACLE_FLOAT, j->sp},
                         j->threads, j->warmup, keep_one, &kp};
    tdm_err err = {0};
    int rc = tdm_oracle_run_threads(&p, &err);
    if (rc != TDM_OK)
        fprintf(stderr, "tandem bench queries: oracle: %s\n", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : -1;
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

long tdm_bq_oracle_run(const tdm_bq_oracle_job *j, tdm_bq_set *set, tdm_bq_answers *ans)
{
    memset(ans, 0, sizeof *ans);
    if (alloc_answers(ans, j->k, j->nq)) {
        tdm_bq_answers_free(ans);
        fprintf(stderr, "tandem bench queries: out of memory for the oracle's answers\n");
        return -1;
    }
    const char *name = j->match == TDM_MATCH_AND ? "oracle-and" : "oracle-or";
    tdm_bq_series *r = tdm_bq_add(set, j->nq);
    tdm_bq_oracle_job jj = *j;
    if (r && !jj.us) /* the caller does not keep them: the series' array will do */
        jj.us = r->us;
    j = &jj;
    if (!r) {
        fprintf(stderr, "tandem bench queries: out of memory\n");
        return -1;
    }
    long cached = j->cache ? tdm_bq_cache_get(j->cache, j->match, j->qhash, j->nq, ans, j->us)
                           : 0;
    if (cached < 0)
        return -1;
    snprintf(r->algorithm, sizeof r->algorithm, "%s", name);
    r->algo = -1;
    r->color = j->match == TDM_MATCH_AND ? -2 : -1;
    r->k = j->k;
    r->device = -1;
    if (cached == 0)
        snprintf(r->device_name, sizeof r->device_name, "host, %u thread%s", j->threads,
                 j->threads == 1 ? "" : "s");
    else
        snprintf(r->device_name, sizeof r->device_name, "host, %ld%s cached", cached,
                 (size_t)cached == j->nq ? " (all)" : "");
    r->n = j->nq;
    r->threads = j->threads;
    r->cdf = 1;
    if ((size_t)cached < j->nq) {
        fprintf(stderr, "oracle (%s) at k = %u on %zu queries ...\n", name + 7, r->k,
                j->nq - (size_t)cached);
        if (run_all(j, (size_t)cached, ans))
            return -1;
    }
    if (r->us != j->us)
        memcpy(r->us, j->us, j->nq * sizeof *r->us);
    r->qps = throughput(j, r->us);
    tdm_bq_stats(r);
    return (long)(j->nq - (size_t)cached);
}
