/* A query prepared once (search_run.h): its options checked, the query
 * built (tokenized or looked up), its lists prepared (search_prep.c) and
 * planned (search_plan.c). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/workers.h"
#include "search_prepare.h"
#include "search_prof.h"
#include "tandem.h"

_Static_assert((int)TDM_SCORE_BM25 == (int)TDM_SCORING_BM25 &&
                   (int)TDM_SCORE_IMPACT == (int)TDM_SCORING_IMPACT,
               "public and internal scoring kinds agree");
_Static_assert(TDM_SEARCH_MAX_TERMS == TDM_QUERY_MAX_TERMS, "public and internal limits agree");

/* ---- options */

void tdm_search_options_defaults(tdm_search_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->algorithm = TDM_ALGO_AUTO;
    o->k = 10;
    o->scoring = TDM_SCORE_AUTO;
    o->k1 = TDM_BM25_K1_DEFAULT;
    o->b = TDM_BM25_B_DEFAULT;
    o->device = -1;
    o->ranges = 0;
    o->variant = TDM_VARIANT_AUTO;
}

int tdm_search_options_check(const tdm_search_options *in, tdm_search_options *o, tdm_err *err)
{
    tdm_search_options_defaults(o);
    if (in) {
        if (in->struct_size < offsetof(tdm_search_options, k) + sizeof in->k ||
            in->struct_size > sizeof *o)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "search options: struct_size %zu is not that of a "
                               "tdm_search_options (%zu): initialise it with "
                               "tdm_search_options_init",
                               in->struct_size, sizeof *o);
        memcpy(o, in, in->struct_size);
        o->struct_size = sizeof *o;
    }
    if (o->algorithm < TDM_ALGO_AUTO || o->algorithm > TDM_ALGO_MAXSCORE)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: algorithm = %d is unknown",
                           o->algorithm);
    if (o->k < 1 || o->k > TDM_SEARCH_K_MAX)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: k = %u: must be 1 .. %d",
                           o->k, TDM_SEARCH_K_MAX);
    if (o->scoring != TDM_SCORE_BM25 && o->scoring != TDM_SCORE_IMPACT &&
        o->scoring != TDM_SCORE_AUTO)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "search options: scoring = %d is none of BM25, impact, auto",
                           o->scoring);
    if (o->variant < TDM_VARIANT_AUTO || o->variant > TDM_VARIANT_COMPRESSED)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: variant = %d is unknown",
                           o->variant);
    if (o->device < -1)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: device = %d", o->device);
    /* Checked here for every caller, whatever the scoring (impact ignores
     * them): a huge k1 made every score inf or NaN, and no hits. */
    if (!(o->k1 >= 0 && o->k1 <= TDM_BM25_K1_MAX))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: k1 = %g: must lie in "
                           "[0, %g]", o->k1, TDM_BM25_K1_MAX);
    if (!(o->b >= 0 && o->b <= 1))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: b = %g: must lie in "
                           "[0, 1]", o->b);
    return TDM_OK;
}

/* ---- one query */

static int add_terms(tdm_search *s, const tdm_search_query *rq, tdm_query *q, tdm_err *err)
{
    if (rq->text) {
        if (!s->tok)
            return tdm_err_set(err, TDM_ERR_UNSUPPORTED, "text query: %s",
                               s->tok_error ? s->tok_error : "the index's stemmer is unavailable");
        tdm_tokenizer *t = tdm_tokpool_get(s->tok, err);
        if (!t)
            return err->code ? err->code : TDM_ERR_NOMEM;
        int rc = tdm_query_add_text(q, s->r, t, rq->text, strlen(rq->text), 1.0, err);
        tdm_tokpool_put(s->tok, t);
        return rc;
    }
    if (!rq->terms && rq->nterms)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search query: terms is NULL with %zu terms",
                           rq->nterms);
    for (size_t i = 0; i < rq->nterms; i++) {
        const tdm_search_term *st = &rq->terms[i];
        int rc = st->term ? tdm_query_add_term(q, s->r, st->term, strlen(st->term), st->weight, err)
                          : tdm_query_add_id(q, s->r, st->id, st->weight, err);
        if (rc)
            return rc;
    }
    return TDM_OK;
}

int tdm_search_query_build(tdm_search *s, const tdm_search_query *rq, tdm_query *q, tdm_err *err)
{
    int rc = add_terms(s, rq, q, err);
    if (rc == TDM_OK)
        tdm_query_finish(q);
    return rc;
}

/* Errors of a query's preparation that fail a whole call rather than that
 * query (common/error.h): a bug met preparing one query is that query's. */
int tdm_search_prep_fatal(int prc)
{
    return tdm_err_reach(prc) >= TDM_REACH_HOST;
}

/* On a shard, a query term of the whole index without postings here
 * (query.h, `absent`): no document of the shard matches AND, so AND has no
 * terms left to run, and AND-then-OR's AND matches nothing: OR. The other
 * algorithms rank the terms the shard holds, which score exactly as in the
 * whole index. */
static void absent_terms(tdm_sbq *it)
{
    if (it->o.algorithm == TDM_ALGO_AND)
        it->q.nterms = 0;
    else if (it->o.algorithm == TDM_ALGO_AND_OR)
        it->o.algorithm = TDM_ALGO_OR;
}

/* The planner's host rule (tdm_search_plan_host), asked as soon as the
 * query's lists' lengths are known (the lexicon's, in q): where it says
 * host, it->pl is the whole plan and *host is set; the query's run answers
 * it on the host (drive/search_host.h), which reads the query and its
 * options alone, so no decode job, block bound, term table or AND
 * selection table is made for it (about half a host query's preparation
 * on PoCL at 200k documents). batched: the query is one of a batch call's
 * several, where the row may say host for more (batch_host: on a CPU, a
 * device preparation thrown away at the run). A query without terms or
 * documents is no one's: neither host nor device. */
static int host_rule(tdm_search *s, tdm_sbq *it, int batched, int *host)
{
    *host = 0;
    if (!it->q.nterms || !s->ndocs)
        return TDM_OK;
    uint64_t npost = 0;
    for (size_t t = 0; t < it->q.nterms; t++)
        npost += it->q.terms[t].df;
    const tdm_search_options *o = &it->o;
    tdm_splan pl;
    int rc = tdm_search_plan_host(s, (uint32_t)it->q.nterms, npost, o->algorithm, o->device,
                                  o->variant, o->ranges, o->k, batched, &pl, &it->err);
    if (rc == TDM_OK && pl.host) {
        it->pl = pl;
        *host = 1;
    }
    return rc;
}

/* tdm_search_prepare, for a batch call's query when batched. */
static int prepare(tdm_search *s, const tdm_search_query *rq, const tdm_search_options *o,
                   int batched, tdm_sbq *it)
{
    /* profiled (search_prof.h): each step of a preparation, series "?"
       (with the preparation's own steps in search_prep.c) */
    tdm_sprof pf = {.on = tdm_sprof_on(), .salg = -1};
    double tp = pf.on ? (pf.t0 = tdm_sprof_now()) : 0;
    memset(it, 0, sizeof *it);
    it->o = *o;
    it->k = o->k;
    tdm_query_init(&it->q);
    int rc = tdm_search_query_build(s, rq, &it->q, &it->err);
    tdm_sprof_host(&pf, "prep: query (tokenize, lexicon)", tp);
    if (rc == TDM_OK && it->q.absent)
        absent_terms(it);
    int host = 0; /* the planner's host path: nothing to prepare for a device */
    if (rc == TDM_OK) {
        it->pl.alg = tdm_search_auto_alg(it->o.algorithm, it->q.nterms);
        tp = pf.on ? tdm_sprof_now() : 0;
        rc = host_rule(s, it, batched, &host);
        tdm_sprof_host(&pf, "prep: host rule", tp);
    } else {
        tdm_query_reset(&it->q); /* what the scheduler reads: an empty query */
    }
    if (rc == TDM_OK && !host) {
        tdm_score_params sp = tdm_score_params_for(s->r, o->scoring, o->k1, o->b);
        /* the stored block bounds wait for a run that reads them */
        rc = tdm_sprep_build_defer(&it->p, s->r, &it->q, &sp, s->bcache, &it->err);
        it->prepped = rc == TDM_OK;
    }
    tp = pf.on ? tdm_sprof_now() : 0;
    if (rc == TDM_OK && !host && it->q.nterms && s->ndocs) {
        /* planned alone for its pin or the planner's device: where it runs
           on another, or in a batch, the run plans it again */
        rc = tdm_search_plan(s, &it->p, it->o.algorithm, o->device, o->variant, o->ranges, o->k,
                             0, &it->pl, &it->err);
        it->run = rc == TDM_OK && !it->pl.host; /* the host's: answered at its run */
    }
    if (it->run && !(it->so.keys = malloc((size_t)o->k * sizeof *it->so.keys))) {
        rc = tdm_err_set(&it->err, TDM_ERR_NOMEM, "out of memory");
        it->run = 0;
    }
    it->prc = it->rc = rc;
    tdm_sprof_host(&pf, "prep: plan, keys", tp);
    tdm_sprof_host(&pf, "prepare (query, sprep, plan)", pf.t0);
    return rc;
}

int tdm_search_prepare(tdm_search *s, const tdm_search_query *rq, const tdm_search_options *o,
                       tdm_sbq *it)
{
    return prepare(s, rq, o, 0, it);
}

void tdm_sbq_free(tdm_sbq *it)
{
    tdm_sprof pf = {.on = tdm_sprof_on(), .salg = -1};
    double tp = pf.on ? (pf.t0 = tdm_sprof_now()) : 0;
    if (it->prepped)
        tdm_sprep_free(&it->p);
    tdm_query_free(&it->q);
    free(it->so.keys);
    tdm_err_clear(&it->err);
    memset(it, 0, sizeof *it);
    tdm_sprof_host(&pf, "free (query, sprep)", tp);
}

/* ---- many queries */

/* Threads of tdm_search_parallel at most. */
#define PAR_THREADS_MAX 16

typedef struct par_work {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
} par_work;

static void par_one(void *ctx, size_t i, unsigned worker)
{
    (void)worker;
    par_work *w = ctx;
    w->fn(w->ctx, i);
}

static size_t par_threads(size_t n, size_t per_thread)
{
    size_t nt = n / (per_thread ? per_thread : 1);
    unsigned cpus = tdm_ncpus();
    if (nt > cpus)
        nt = cpus;
    if (nt > PAR_THREADS_MAX)
        nt = PAR_THREADS_MAX;
    return nt ? nt : 1;
}

/* Threads made for the call: each of fn's calls may block for long (a
 * partition's device run) without taking a helper another call waits for. */
void tdm_search_parallel(size_t n, size_t per_thread, void (*fn)(void *ctx, size_t i), void *ctx)
{
    par_work w = {fn, ctx};
    tdm_par_for((unsigned)par_threads(n, per_thread), n, par_one, &w);
}

/* On the process's pool (common/workers.h): a batch call's three spreads
 * (preparation, plan and seed, results) no longer make and join up to 15
 * threads each. */
void tdm_search_parallel_pool(size_t n, size_t per_thread, void (*fn)(void *ctx, size_t i),
                              void *ctx)
{
    par_work w = {fn, ctx};
    tdm_pool_for((unsigned)par_threads(n, per_thread), n, par_one, &w);
}

/* Preparing a query costs tens of microseconds of host time (tokenizer,
 * lexicon, every block's bound): a big batch prepares its queries on
 * several threads, or the host, not the device, bounds its throughput. */
#define PREP_PER_THREAD 32u

typedef struct prep_work {
    tdm_search *s;
    const tdm_search_query *qs;
    const tdm_search_options *o;
    tdm_sbq *items;
    size_t n;
} prep_work;

static void prep_one(void *ctx, size_t i)
{
    prep_work *w = ctx;
    prepare(w->s, &w->qs[i], w->o, w->n > 1, &w->items[i]);
}

void tdm_search_prepare_all(tdm_search *s, const tdm_search_query *qs, const tdm_search_options *o,
                            size_t n, tdm_sbq *items)
{
    prep_work w = {s, qs, o, items, n};
    tdm_search_parallel_pool(n, PREP_PER_THREAD, prep_one, &w);
}
