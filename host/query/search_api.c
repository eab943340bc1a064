/* The public search API (tandem.h, tdm_search_*): a handle binding an index
 * to an engine, and exact top-k searches on its devices. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include "index/index_priv.h"
#include "query/oracle.h"
#include "bounds.h"
#include "search.h"
#include "search_seed.h"
#include "tandem.h"

_Static_assert((int)TDM_SCORE_BM25 == (int)TDM_SCORING_BM25 &&
                   (int)TDM_SCORE_IMPACT == (int)TDM_SCORING_IMPACT,
               "public and internal scoring kinds agree");
_Static_assert(TDM_SEARCH_K_MAX == TDM_TOPK_MAX && TDM_SEARCH_MAX_TERMS == TDM_QUERY_MAX_TERMS,
               "public and internal limits agree");

static const char *const algo_names[] = {"auto", "or", "and", "and_or", "wand", "bmw", "maxscore"};

TDM_API const char *tdm_algorithm_name(int a)
{
    return a >= 0 && a < (int)(sizeof algo_names / sizeof *algo_names) ? algo_names[a] : NULL;
}

TDM_API int tdm_algorithm_parse(const char *name, int *algorithm)
{
    tdm_api_enter();
    if (!name || !algorithm)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_algorithm_parse: %s is NULL",
                            !name ? "name" : "algorithm");
    for (int a = 0; a < (int)(sizeof algo_names / sizeof *algo_names); a++)
        if (strcasecmp(name, algo_names[a]) == 0) {
            *algorithm = a;
            return TDM_OK;
        }
    if (strcasecmp(name, "and-or") == 0 || strcasecmp(name, "andor") == 0) {
        *algorithm = TDM_ALGO_AND_OR;
        return TDM_OK;
    }
    if (strcasecmp(name, "block-max-wand") == 0) {
        *algorithm = TDM_ALGO_BMW;
        return TDM_OK;
    }
    return tdm_api_fail(TDM_ERR_INVALID_ARG,
                        "algorithm '%.100s': expected auto, or, and, and_or, wand, bmw or maxscore",
                        name);
}

TDM_API void tdm_search_options_init(tdm_search_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->algorithm = TDM_ALGO_AUTO;
    o->k = 10;
    o->scoring = TDM_SCORE_BM25;
    o->k1 = TDM_BM25_K1_DEFAULT;
    o->b = TDM_BM25_B_DEFAULT;
    o->device = -1;
    o->ranges = 0;
    o->variant = TDM_VARIANT_AUTO;
}

/* ---- open / close */

static int open_devices(tdm_search *s, tdm_err *err)
{
    s->ndev = tdm_engine_device_count(s->engine);
    s->dev = calloc(s->ndev > 0 ? (size_t)s->ndev : 1, sizeof *s->dev);
    if (!s->dev)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->ndev; i++) {
        tdm_sdev *sd = &s->dev[i];
        sd->d = tdm_engine_device(s->engine, i);
        sd->index = i;
        const char *ext = sd->d->info.extensions;
        sd->fp64 = ext && strstr(ext, "cl_khr_fp64") != NULL;
        int rc = tdm_resident_upload(s->r, sd->d, &sd->res, err);
        if (rc)
            return rc;
    }
    return TDM_OK;
}

void tdm_search_close_plain(tdm_search *s)
{
    tdm_api_enter();
    if (!s)
        return;
    for (int i = 0; s->dev && i < s->ndev; i++) {
        tdm_search_pool_free(&s->dev[i]);
        tdm_search_bpool_free(&s->dev[i]);
        tdm_resident_release(&s->dev[i].res);
    }
    free(s->dev);
    tdm_tokpool_free(s->tok);
    free(s->tok_error);
    tdm_bcache_close(s->bcache);
    free(s);
}

/* The bounds cache's budget: TANDEM_BOUNDS_CACHE_MB, else 64 MiB. 0: no
 * cache, the device recomputes the bounds on every call (tests compare).
 * The engine's devices share its settings: the first one's are the engine's. */
static size_t bcache_bytes(tdm_engine *engine)
{
    const tdm_tuning *t = tdm_settings_tuning(tdm_engine_device(engine, 0)->settings);
    return t->bounds_cache_set ? t->bounds_cache_mb << 20 : TDM_BCACHE_DEFAULT_BYTES;
}

int tdm_search_open_plain(tdm_engine *engine, const tdm_index *index, tdm_search **out)
{
    tdm_api_enter();
    if (!out)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_open: out is NULL");
    *out = NULL;
    if (!engine || !index)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_open: %s is NULL",
                            !engine ? "engine" : "index");
    tdm_search *s = calloc(1, sizeof *s);
    if (!s)
        return tdm_api_fail(TDM_ERR_NOMEM, "tdm_search_open: out of memory");
    s->engine = engine;
    s->r = tdm_index_ireader(index);
    const tdm_ireader_info *info = tdm_ireader_info_get(s->r);
    tdm_err e = {0};
    int rc = TDM_OK;
    if (info->ndocs >= UINT32_MAX)
        rc = tdm_err_set(&e, TDM_ERR_LIMIT, "%s: %llu documents (search handles at most %u)",
                         tdm_ireader_path(s->r), (unsigned long long)info->ndocs, UINT32_MAX - 1);
    s->ndocs = (uint32_t)info->ndocs;
    if (rc == TDM_OK && tdm_tokpool_open(s->r, &s->tok, &e) != TDM_OK) {
        /* only text queries need the stemmer: they fail with this message */
        s->tok = NULL;
        size_t len = strlen(tdm_err_msg(&e)) + 1;
        s->tok_error = malloc(len);
        if (s->tok_error)
            memcpy(s->tok_error, tdm_err_msg(&e), len);
        tdm_err_clear(&e);
    }
    size_t cache_bytes = bcache_bytes(engine);
    if (rc == TDM_OK && cache_bytes)
        rc = tdm_bcache_open(cache_bytes, &s->bcache, &e);
    if (rc == TDM_OK)
        rc = open_devices(s, &e);
    if (rc) {
        tdm_search_close_plain(s);
        return tdm_api_fail_err(&e, rc);
    }
    *out = s;
    return TDM_OK;
}

/* ---- requests */

static int check_options(const tdm_search_options *in, tdm_search_options *o, tdm_err *err)
{
    tdm_search_options_init(o);
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
    if (!tdm_algorithm_name(o->algorithm))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: algorithm = %d is unknown",
                           o->algorithm);
    if (o->k < 1 || o->k > TDM_SEARCH_K_MAX)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "search options: k = %u: must be 1 .. %d",
                           o->k, TDM_SEARCH_K_MAX);
    if (o->scoring != TDM_SCORE_BM25 && o->scoring != TDM_SCORE_IMPACT)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "search options: scoring = %d is neither BM25 nor impact", o->scoring);
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fill_hits(const tdm_search *s, const tdm_sout *so, tdm_search_result *res, tdm_err *err)
{
    res->hits = calloc(so->n ? so->n : 1, sizeof *res->hits);
    if (!res->hits)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for %u hits", so->n);
    for (uint32_t i = 0; i < so->n; i++) {
        uint64_t key = so->keys[i];
        uint32_t bits = (uint32_t)(key >> 32);
        tdm_search_hit *h = &res->hits[i];
        h->docid = 0xffffffffu - (uint32_t)key;
        memcpy(&h->score, &bits, sizeof h->score);
        h->name = tdm_ireader_docname(s->r, h->docid);
        if (h->docid >= s->ndocs)
            return tdm_err_set(err, TDM_ERR_INTERNAL, "search: docid %u out of range", h->docid);
    }
    res->n = so->n;
    return TDM_OK;
}

static int build_query(tdm_search *s, const tdm_search_query *rq, tdm_query *q, tdm_err *err)
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

/* Errors of a query's preparation that fail a whole batch rather than that
 * query (common/error.h): a bug met preparing one query is that query's. */
static int batch_fatal(int rc)
{
    return tdm_err_reach(rc) >= TDM_REACH_HOST;
}

/* Tokenizes, prepares and plans query i into it->q; the query's own
 * failures stay in it->rc / it->err. */
static void prepare_one(tdm_search *s, const tdm_search_query *rq, const tdm_search_options *o,
                        int batched, tdm_sbq *it)
{
    tdm_query_init(&it->q);
    int rc = build_query(s, rq, &it->q, &it->err);
    if (rc == TDM_OK) {
        tdm_query_finish(&it->q);
        tdm_score_params sp = {o->scoring == TDM_SCORE_IMPACT ? TDM_SCORING_IMPACT
                                                             : TDM_SCORING_BM25,
                               o->k1, o->b};
        rc = tdm_sprep_build_cached(&it->p, s->r, &it->q, &sp, s->bcache, &it->err);
        it->prepped = rc == TDM_OK;
    }
    if (rc == TDM_OK && it->q.nterms && s->ndocs)
        rc = tdm_search_plan(s, &it->p, o->algorithm, o->device, o->variant, o->ranges, o->k,
                             batched, &it->pl, &it->err);
    if (rc == TDM_OK && it->q.nterms && s->ndocs) {
        static const int map[] = {
            [TDM_ALGO_OR] = TDM_SALG_OR,     [TDM_ALGO_AND] = TDM_SALG_AND,
            [TDM_ALGO_AND_OR] = TDM_SALG_AND_OR, [TDM_ALGO_WAND] = TDM_SALG_WAND,
            [TDM_ALGO_BMW] = TDM_SALG_BMW,   [TDM_ALGO_MAXSCORE] = TDM_SALG_MAXSCORE,
        };
        it->salg = map[it->pl.alg];
        it->k = o->k;
        it->run = 1;
        if (!(it->so.keys = malloc((size_t)o->k * sizeof *it->so.keys)))
            rc = tdm_err_set(&it->err, TDM_ERR_NOMEM, "out of memory");
        else /* the seed of the shared threshold from the host: the compressed
                variant's, and a GPU batch's (it has no seed pass) */
            rc = tdm_search_hseed_plan(&it->p, s->r, s->bcache, &it->pl, it->salg, it->k,
                                       batched, &it->err);
    }
    it->rc = rc;
}

static void item_free(tdm_sbq *it)
{
    if (it->prepped)
        tdm_sprep_free(&it->p);
    tdm_query_free(&it->q);
    free(it->so.keys);
    tdm_err_clear(&it->err);
}

/* Query i's result from its item (its own error as status and message). */
static int finish_one(tdm_search *s, const tdm_search_options *o, tdm_sbq *it,
                      tdm_search_result *res, tdm_err *err)
{
    res->terms = (uint32_t)it->q.nterms;
    res->unknown = it->q.unknown;
    res->device = -1;
    res->algorithm = o->algorithm == TDM_ALGO_AUTO ? TDM_ALGO_OR : o->algorithm;
    res->batch = 1;
    res->status = it->rc;
    if (it->rc) {
        const char *m = tdm_err_msg(&it->err);
        size_t len = strlen(m) + 1;
        char *copy = malloc(len);
        if (!copy)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        memcpy(copy, m, len);
        res->error = copy;
        res->hits = calloc(1, sizeof *res->hits);
        return res->hits ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    if (!it->run)
        return fill_hits(s, &(tdm_sout){0}, res, err);
    res->device = s->dev[it->pl.dev].index;
    res->algorithm = it->pl.alg;
    res->ranges = it->pl.ranges;
    res->variant = it->pl.variant;
    res->launches = it->so.launches;
    res->bytes_up = it->so.bytes_up;
    res->bytes_down = it->so.bytes_down;
    res->batch = it->batch;
    return fill_hits(s, &it->so, res, err);
}

int tdm_search_options_check(const tdm_search_options *in, tdm_search_options *o, tdm_err *err)
{
    return check_options(in, o, err);
}

int tdm_search_query_build(tdm_search *s, const tdm_search_query *rq, tdm_query *q, tdm_err *err)
{
    int rc = build_query(s, rq, q, err);
    if (rc == TDM_OK)
        tdm_query_finish(q);
    return rc;
}

/* Preparing a query costs tens of microseconds of host time (tokenizer,
 * lexicon, every block's bound): a big batch prepares its queries on several
 * threads, or the host, not the device, bounds its throughput. */
#define PREP_PER_THREAD 32u
#define PREP_THREADS_MAX 16

typedef struct prep_work {
    tdm_search *s;
    const tdm_search_query *queries;
    const tdm_search_options *opts;
    tdm_sbq *items;
    size_t n, next; /* next: taken atomically */
} prep_work;

static void *prep_some(void *arg)
{
    prep_work *w = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
        if (i >= w->n)
            return NULL;
        double tp = tdm_sprof_on() ? tdm_sprof_now() : 0;
        prepare_one(w->s, &w->queries[i], &w->opts[i], w->n > 1, &w->items[i]);
        if (tp > 0) {
            tdm_sprof pf = {.on = 1, .salg = w->items[i].salg, .k = w->opts[i].k, .t0 = tp};
            tdm_sprof_host(&pf, "prepare (query, sprep, plan)", tp);
        }
    }
}

/* Prepares items[0..n) on the calling thread and, for big batches, helpers. */
static void prep_all(prep_work *w)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = w->n / PREP_PER_THREAD;
    if (cpus > 0 && nt > (size_t)cpus)
        nt = (size_t)cpus;
    if (nt > PREP_THREADS_MAX)
        nt = PREP_THREADS_MAX;
    pthread_t th[PREP_THREADS_MAX];
    size_t started = 0;
    for (size_t t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, prep_some, w) == 0)
            started++;
    prep_some(w);
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

int tdm_search_run_batch(tdm_search *s, const tdm_search_query *queries,
                         const tdm_search_options *opts, size_t n, tdm_search_result **results,
                         tdm_err *err)
{
    double t0 = now_s();
    for (size_t i = 0; i < n; i++)
        results[i] = NULL;
    tdm_sbq *items = calloc(n ? n : 1, sizeof *items);
    if (!items)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search batch: out of memory for %zu queries", n);
    int rc = TDM_OK;
    /* TANDEM_SEARCH_PROFILE: a batch call's phases ("call: ...", rows of
       its first query's algorithm and k) */
    tdm_sprof pf = {.on = n > 1 && tdm_sprof_on()};
    double tp = pf.t0 = pf.on ? tdm_sprof_now() : 0;
    prep_work w = {s, queries, opts, items, n, 0};
    prep_all(&w);
    pf.salg = items[0].salg;
    pf.k = opts[0].k;
    if (pf.on) {
        tdm_sprof_host(&pf, "call: prepare (all threads)", tp);
        tp = tdm_sprof_now();
    }
    for (size_t i = 0; i < n; i++) {
        if (batch_fatal(items[i].rc)) {
            rc = tdm_err_copy(err, &items[i].err);
            break;
        }
    }
    if (rc == TDM_OK)
        rc = tdm_search_dev_batches(s, items, n, err);
    if (pf.on) {
        tdm_sprof_host(&pf, "call: device batches", tp);
        tp = tdm_sprof_now();
    }
    for (size_t i = 0; rc == TDM_OK && i < n; i++) {
        if (!(results[i] = calloc(1, sizeof *results[i])))
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        else
            rc = finish_one(s, &opts[i], &items[i], results[i], err);
    }
    double dt = now_s() - t0;
    for (size_t i = 0; i < n; i++) {
        item_free(&items[i]);
        if (rc && results[i]) {
            tdm_search_result_free(results[i]);
            results[i] = NULL;
        } else if (results[i]) {
            results[i]->seconds = dt;
        }
    }
    free(items);
    if (pf.on)
        tdm_sprof_host(&pf, "call: results, frees", tp);
    return rc;
}

static int search(tdm_search *s, const tdm_search_query *rq, const tdm_search_options *opts,
                  tdm_search_result **out)
{
    tdm_err e = {0};
    tdm_search_options o;
    int rc = check_options(opts, &o, &e);
    tdm_search_result *res = NULL;
    if (rc == TDM_OK)
        rc = tdm_search_run_batch(s, rq, &o, 1, &res, &e);
    if (rc == TDM_OK && res->status) {
        rc = tdm_err_set(&e, res->status, "%s", res->error);
        tdm_search_result_free(res);
    }
    if (rc)
        return tdm_api_fail_err(&e, rc);
    *out = res;
    return TDM_OK;
}

int tdm_search_terms_plain(tdm_search *s, const tdm_search_term *terms, size_t n,
                           const tdm_search_options *opts, tdm_search_result **out)
{
    tdm_api_enter();
    if (!out)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_terms: out is NULL");
    *out = NULL;
    if (!s || (!terms && n))
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_terms: %s is NULL",
                            !s ? "search handle" : "terms");
    tdm_search_query rq = {NULL, terms, n};
    return search(s, &rq, opts, out);
}

/* tdm_search_batch goes through the lanes: host/sched/sched_api.c. */

TDM_API void tdm_search_result_free(tdm_search_result *r)
{
    tdm_api_enter();
    if (!r)
        return;
    free(r->hits);
    free((char *)r->error);
    free(r);
}
