/* One query on every partition at once, merged into the whole index's
 * answer (partition_priv.h): the fan-out (a job on each partition's lane),
 * AND-then-OR decided on the whole, the whole index's view of a query
 * (its terms; on shard files their union), and the requests a partitioned
 * run refuses up front. */
#include <stdlib.h>
#include <string.h>

#include "drive/search.h"
#include "drive/search_run.h"
#include "partition_priv.h"
#include "sched_priv.h"

int tdm_part_fail(const tdm_search *s, int p, int rc, tdm_err *from, tdm_err *err)
{
    rc = tdm_err_set(err, rc, "partition %d (device %d): %s", p,
                     s->parts[p] ? s->parts[p]->device_base : p, tdm_err_msg(from));
    tdm_err_clear(from);
    return rc;
}

/* ---- the whole index's view of a query */

static int id_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* On shard files, the distinct terms of q that some shard holds: shard 0
 * lacks (`absent`) the terms without postings in it, which other shards
 * may hold; every shard has the whole lexicon, in the same order, so the
 * union of their ids is the whole index's known terms. */
static int union_terms(tdm_search *s, const tdm_search_query *q, size_t *nterms, tdm_err *err)
{
    uint64_t *ids = NULL;
    size_t n = 0, cap = 0;
    int rc = TDM_OK;
    for (int p = 0; rc == TDM_OK && p < s->nparts; p++) {
        tdm_query pq;
        tdm_query_init(&pq);
        rc = tdm_search_query_build(s->parts[p], q, &pq, err);
        if (rc == TDM_OK && n + pq.nterms > cap) {
            cap = 2 * (n + pq.nterms);
            uint64_t *g = realloc(ids, cap * sizeof *ids);
            if (!g)
                rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
            else
                ids = g;
        }
        for (size_t t = 0; rc == TDM_OK && t < pq.nterms; t++)
            ids[n++] = pq.terms[t].id;
        tdm_query_free(&pq);
    }
    if (rc == TDM_OK && n)
        qsort(ids, n, sizeof *ids, id_cmp);
    size_t d = 0;
    for (size_t i = 0; rc == TDM_OK && i < n; i++)
        d += i == 0 || ids[i] != ids[i - 1];
    free(ids);
    *nterms = d;
    return rc;
}

int tdm_part_whole_query(tdm_search *s, const tdm_search_query *q, size_t *nterms,
                         uint32_t *unknown, uint64_t *postings, tdm_err *err)
{
    tdm_query wq;
    tdm_query_init(&wq);
    int rc = tdm_search_query_build(s, q, &wq, err);
    *nterms = wq.nterms;
    *unknown = wq.unknown;
    for (size_t t = 0; postings && t < wq.nterms; t++)
        *postings += wq.terms[t].df;
    if (rc == TDM_OK && s->part->files && wq.absent)
        rc = union_terms(s, q, nterms, err);
    tdm_query_free(&wq);
    return rc;
}

/* ---- requests refused up front */

int tdm_part_excluded(const tdm_search *s, int policy)
{
    if (policy == TDM_POLICY_DEFAULT)
        policy = s->parts[0]->sched->policy;
    for (int p = 0; p < s->nparts; p++) {
        int gpu = s->parts[p]->sched->lanes[0].gpu;
        if ((policy == TDM_POLICY_CPU_ONLY && gpu) || (policy == TDM_POLICY_GPU_ONLY && !gpu))
            return p;
    }
    return -1;
}

/* A request's policy may not exclude a partition's lane: it is the only
 * one holding the partition's documents, so the call is refused up front,
 * saying why, rather than failing in a partition. */
static int check_policy(const tdm_search *s, int policy, tdm_err *err)
{
    int p = tdm_part_excluded(s, policy);
    if (p < 0)
        return TDM_OK;
    if (policy == TDM_POLICY_DEFAULT)
        policy = s->parts[0]->sched->policy;
    int gpu = s->parts[p]->sched->lanes[0].gpu;
    return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                       "policy %s: the search handle is partitioned (every query runs "
                       "on every partition; docs/PARTITION.md) and partition %d's only "
                       "lane, device %d, is a %s lane: use hybrid, best or direct, or "
                       "TANDEM_PARTITION=off",
                       tdm_policy_name(policy), p, s->parts[p]->device_base,
                       gpu ? "GPU" : "CPU");
}

int tdm_part_check(const tdm_search *s, int device, int policy, tdm_err *err)
{
    if (device >= 0)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "device = %d: a partitioned search handle "
                           "runs every query on every partition's device", device);
    return check_policy(s, policy, err);
}

/* ---- one query on every partition */

/* q with o on every partition at once: one job on each partition's lane,
 * the last run in the caller's thread (when its lane is free). Every
 * res[p] is set, or the first failing partition's error is returned. */
static int fan_out(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                   tdm_search_result **res, tdm_err *err)
{
    int n = s->nparts, bad = -1, rc = TDM_OK;
    tdm_sched_call *calls[TDM_SCHED_MAX_LANES] = {0};
    tdm_err e[TDM_SCHED_MAX_LANES];
    int rcs[TDM_SCHED_MAX_LANES] = {0};
    memset(e, 0, sizeof e);
    for (int p = 0; p < n - 1 && bad < 0; p++)
        if ((rcs[p] = tdm_sched_begin(s->parts[p]->sched, q, o, &calls[p], &e[p])))
            bad = p;
    if (bad < 0)
        rcs[n - 1] = tdm_sched_search(s->parts[n - 1]->sched, q, o, &res[n - 1], &e[n - 1]);
    for (int p = 0; p < n - 1; p++)
        if (calls[p])
            rcs[p] = tdm_sched_end(calls[p], &res[p], &e[p]);
    for (int p = 0; p < n; p++)
        if (rcs[p] && rc == TDM_OK)
            rc = tdm_part_fail(s, p, rcs[p], &e[p], err);
    for (int p = 0; p < n; p++)
        tdm_err_clear(&e[p]);
    if (rc)
        tdm_part_results_free(res, (size_t)n);
    return rc;
}

static size_t hits_of(tdm_search_result *const *res, int n)
{
    size_t t = 0;
    for (int p = 0; p < n; p++)
        t += res[p]->n;
    return t;
}

int tdm_part_run(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                 size_t nterms, uint32_t unknown, double t0, tdm_search_result **out,
                 tdm_err *err)
{
    int alg = tdm_search_auto_alg(o->algorithm, nterms), ran = alg;
    tdm_search_result *res[TDM_SCHED_MAX_LANES] = {0}, *r = NULL;
    tdm_search_options po = *o;
    po.algorithm = alg == TDM_ALGO_AND_OR ? TDM_ALGO_AND : alg;
    int rc = fan_out(s, q, &po, res, err);
    if (rc == TDM_OK && alg == TDM_ALGO_AND_OR) {
        /* AND-then-OR: AND when the partitions' AND matches reach k
           together (each answers min(k, its matches)), else OR */
        if (hits_of(res, s->nparts) < o->k) {
            tdm_part_results_free(res, (size_t)s->nparts);
            po.algorithm = TDM_ALGO_OR;
            rc = fan_out(s, q, &po, res, err);
        }
    }
    if (rc == TDM_OK && (rc = tdm_part_merge(s, res, o->k, &r, err)) == TDM_OK) {
        r->algorithm = ran;
        r->terms = (uint32_t)nterms;
        r->unknown = unknown;
        r->seconds = tdm_sched_now() - t0;
        *out = r;
        __atomic_add_fetch(&s->part->nsplit, 1, __ATOMIC_RELAXED);
    }
    tdm_part_results_free(res, (size_t)s->nparts); /* NULL after a failed fan-out */
    return rc;
}
