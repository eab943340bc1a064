/* The search handle without lanes, and the runs of prepared queries
 * (search_run.h): each planned for its device and batch, seeded, run in
 * device batches (search_batch.c) and answered. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "index/index_priv.h"
#include "query/bounds.h"
#include "search.h"
#include "search_host.h"
#include "search_run.h"
#include "plan/search_hseed.h"
#include "search_testing.h"
#include "tandem.h"

/* ---- the handle */

/* The index resident on the engine's devices: every one (only < 0), or
 * engine device `only` alone (a partition's: its device 0, device_base
 * `only`). */
static int open_devices(tdm_search *s, int only, tdm_err *err)
{
    s->ndev = only < 0 ? tdm_engine_device_count(s->engine) : 1;
    s->device_base = only < 0 ? 0 : only;
    s->dev = calloc(s->ndev > 0 ? (size_t)s->ndev : 1, sizeof *s->dev);
    if (!s->dev)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (int i = 0; i < s->ndev; i++) {
        tdm_sdev *sd = &s->dev[i];
        sd->index = i; /* the handle's devices: a partition's one is its 0 */
        sd->d = tdm_engine_device(s->engine, s->device_base + i);
        const char *ext = sd->d->info.extensions;
        sd->fp64 = ext && strstr(ext, "cl_khr_fp64") != NULL;
        int rc = tdm_resident_upload(s->r, sd->d, &sd->res, err);
        if (rc)
            return rc;
    }
    return TDM_OK;
}

void tdm_search_handle_close(tdm_search *s)
{
    if (!s)
        return;
    for (int i = 0; s->dev && i < s->ndev; i++) {
        tdm_search_pool_free(&s->dev[i]);
        tdm_search_bpool_free(&s->dev[i]);
        tdm_resident_release(&s->dev[i].res);
    }
    free(s->dev);
    for (int i = 0; s->parts && i < s->nparts; i++)
        tdm_search_handle_close(s->parts[i]);
    free(s->parts);
    tdm_tokpool_free(s->tok);
    free(s->tok_error);
    tdm_bcache_close(s->bcache);
    tdm_ireader_close((tdm_ireader *)s->owned_r);
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

/* The handle on reader r, resident on every device (only < 0), on engine
 * device `only`, or on none (only = -2: a partitioned handle's own). */
static int handle_open(tdm_engine *engine, const tdm_ireader *r, int only, tdm_search **out,
                       tdm_err *err)
{
    *out = NULL;
    tdm_search *s = calloc(1, sizeof *s);
    if (!s)
        return tdm_err_set(err, TDM_ERR_NOMEM, "tdm_search_open: out of memory");
    s->engine = engine;
    s->r = r;
    const tdm_ireader_info *info = tdm_ireader_info_get(s->r);
    tdm_err e = {0};
    int rc = TDM_OK;
    if (info->ndocs >= UINT32_MAX)
        rc = tdm_err_set(err, TDM_ERR_LIMIT, "%s: %llu documents (search handles at most %u)",
                         tdm_ireader_path(s->r), (unsigned long long)info->ndocs, UINT32_MAX - 1);
    s->ndocs = (uint32_t)info->ndocs;
    /* the lexicon's hash now, not in the first query's lookup */
    if (rc == TDM_OK)
        tdm_ireader_index_terms(s->r);
    if (rc == TDM_OK && tdm_tokpool_open(s->r, &s->tok, &e) != TDM_OK) {
        /* only text queries need the stemmer: they fail with this message */
        s->tok = NULL;
        size_t len = strlen(tdm_err_msg(&e)) + 1;
        s->tok_error = malloc(len);
        if (s->tok_error)
            memcpy(s->tok_error, tdm_err_msg(&e), len);
    }
    tdm_err_clear(&e);
    size_t cache_bytes = bcache_bytes(engine);
    if (rc == TDM_OK && cache_bytes)
        rc = tdm_bcache_open(cache_bytes, &s->bcache, err);
    if (rc == TDM_OK && only != -2)
        rc = open_devices(s, only, err);
    if (rc) {
        tdm_search_handle_close(s);
        return rc;
    }
    *out = s;
    return TDM_OK;
}

int tdm_search_handle_open(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                           tdm_err *err)
{
    return handle_open(engine, tdm_index_ireader(index), -1, out, err);
}

int tdm_search_handle_open_bare(tdm_engine *engine, const tdm_index *index, tdm_search **out,
                                tdm_err *err)
{
    return handle_open(engine, tdm_index_ireader(index), -2, out, err);
}

int tdm_search_handle_open_part(tdm_engine *engine, tdm_ireader *r, int device,
                                tdm_search **out, tdm_err *err)
{
    int rc = handle_open(engine, r, device, out, err);
    if (rc == TDM_OK)
        (*out)->owned_r = r;
    else
        tdm_ireader_close(r);
    return rc;
}

/* ---- results */

void tdm_search_result_release(tdm_search_result *r)
{
    if (!r)
        return;
    free(r->hits);
    free((char *)r->error);
    free(r);
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

/* A query's result from its item (its own error as status and message). */
static int finish_one(tdm_search *s, tdm_sbq *it, tdm_search_result *res, tdm_err *err)
{
    const tdm_search_options *o = &it->o;
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
    if (!it->run && !it->pl.host)
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

/* ---- runs */

typedef struct run_work {
    tdm_search *s;
    tdm_sbq *const *items;
    int device, batched;
} run_work;

/* Whether item it's prepared plan is not the one for a run on `device`
 * (-1: its own) in a batch (batched) or alone. */
static int plan_again(const tdm_search *s, const tdm_sbq *it, int device, int batched)
{
    return (device >= 0 && s->dev[it->pl.dev].index != device) || batched != it->pl_batched;
}

/* Item i made ready for this run: its outcome back to its preparation's,
 * planned for the run's device and batch where that differs, seeded from
 * the host where the plan says (search_seed.h). */
static void ready_one(void *ctx, size_t i)
{
    run_work *w = ctx;
    tdm_search *s = w->s;
    tdm_sbq *it = w->items[i];
    uint64_t *keys = it->so.keys;
    it->so = (tdm_sout){.keys = keys};
    it->batch = 0;
    it->rc = it->prc;
    if (it->prc == TDM_OK && it->pl.host) { /* the planner's host path: here, on this thread */
        tdm_err_clear(&it->err);
        tdm_search_host_item(s->r, it);
        return;
    }
    if (it->prc || !it->run)
        return; /* its preparation's answer, every time */
    tdm_err_clear(&it->err);
    double tp = tdm_sprof_on() ? tdm_sprof_now() : 0;
    int rc = TDM_OK;
    if (plan_again(s, it, w->device, w->batched)) {
        const tdm_search_options *o = &it->o;
        rc = tdm_search_plan(s, &it->p, o->algorithm, w->device >= 0 ? w->device : o->device,
                             o->variant, o->ranges, o->k, w->batched, &it->pl, &it->err);
        it->pl_batched = w->batched;
    }
    if (rc == TDM_OK && it->pl.host) { /* planned again on a device whose row says host */
        tdm_search_host_item(s->r, it);
        return;
    }
    it->salg = it->pl.salg;
    /* the block bounds the preparation left (tdm_sprep_build_defer), here
       on the call's threads, where they go up from the host (else the
       device makes them from the stored ones: tdm_splan.bounds) */
    if (rc == TDM_OK && tdm_search_reads_blocks(&it->p, it->salg) &&
        it->pl.bounds == TDM_SBOUNDS_HOST)
        rc = tdm_sprep_bounds_fill(&it->p, &it->err);
    /* the seed of the shared threshold from the host (the compressed
       variant's, and a GPU batch's: it has no seed pass), from 0 again on
       every run (word 7 of term 0: search_seed.h) */
    if (rc == TDM_OK) {
        it->p.terms[TDM_TW_SHARED] = 0;
        rc = tdm_search_hseed_plan(&it->p, s->r, s->bcache, &it->pl, it->salg, it->k, &it->err);
    }
    it->rc = rc;
    if (tp > 0) {
        tdm_sprof pf = {.on = 1, .salg = it->salg, .k = it->k, .t0 = tp};
        tdm_sprof_host(&pf, "run: plan, host seed", tp);
    }
}

/* Planning and the host seed cost host time a query: a big batch's on
 * several threads (tdm_search_parallel_pool). */
#define READY_PER_THREAD 32u

/* The results (hits, names: a few cache misses a hit) made on several
 * threads for a big call; the first query's error in order fails it. */
#define RESULTS_PER_THREAD 256u

typedef struct finish_work {
    tdm_search *s;
    tdm_sbq *const *items;
    tdm_search_result **results;
    pthread_mutex_t mu;
    size_t bad;  /* the first query that failed, or n */
    int rc;
    tdm_err *err;
} finish_work;

static void finish_some(void *ctx, size_t i)
{
    finish_work *w = ctx;
    tdm_err e = {0};
    int rc = (w->results[i] = calloc(1, sizeof *w->results[i]))
                 ? finish_one(w->s, w->items[i], w->results[i], &e)
                 : tdm_err_set(&e, TDM_ERR_NOMEM, "out of memory");
    if (rc) {
        pthread_mutex_lock(&w->mu);
        if (i < w->bad) {
            w->bad = i;
            w->rc = rc;
            tdm_err_clear(w->err);
            tdm_err_copy(w->err, &e);
        }
        pthread_mutex_unlock(&w->mu);
    }
    tdm_err_clear(&e);
}

static int finish_all(tdm_search *s, tdm_sbq *const *items, size_t n,
                      tdm_search_result **results, tdm_err *err)
{
    finish_work w = {s, items, results, PTHREAD_MUTEX_INITIALIZER, n, TDM_OK, err};
    tdm_search_parallel_pool(n, RESULTS_PER_THREAD, finish_some, &w);
    pthread_mutex_destroy(&w.mu);
    return w.rc;
}

int tdm_search_run_prepared(tdm_search *s, tdm_sbq *const *items, size_t n, int device,
                            tdm_search_result **results, tdm_err *err)
{
    double t0 = now_s();
    for (size_t i = 0; i < n; i++)
        results[i] = NULL;
    int rc = TDM_OK;
    if (device >= s->ndev)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "device = %d: the engine has devices 0 .. %d",
                           device, s->ndev - 1);
    /* TANDEM_SEARCH_PROFILE: a batch call's phases ("call: ...", rows of
       its first query's algorithm and k) */
    tdm_sprof pf = {.on = n > 1 && tdm_sprof_on()};
    double tp = pf.t0 = pf.on ? tdm_sprof_now() : 0;
    run_work w = {s, items, device, n > 1};
    tdm_search_parallel_pool(n, READY_PER_THREAD, ready_one, &w);
    pf.salg = n ? items[0]->salg : -1;
    pf.k = n ? items[0]->k : 0;
    if (pf.on) {
        tdm_sprof_host(&pf, "call: plan, host seed (all threads)", tp);
        tp = tdm_sprof_now();
    }
    for (size_t i = 0; i < n; i++) {
        if (tdm_search_prep_fatal(items[i]->rc)) {
            rc = tdm_err_copy(err, &items[i]->err);
            break;
        }
    }
    if (rc == TDM_OK)
        rc = tdm_search_dev_batches(s, items, n, err);
    if (pf.on) {
        tdm_sprof_host(&pf, "call: device batches", tp);
        tp = tdm_sprof_now();
    }
    if (rc == TDM_OK)
        rc = finish_all(s, items, n, results, err);
    double dt = now_s() - t0;
    for (size_t i = 0; i < n; i++) {
        if (rc && results[i]) {
            tdm_search_result_release(results[i]);
            results[i] = NULL;
        } else if (results[i]) {
            results[i]->seconds = dt;
        }
    }
    if (pf.on)
        tdm_sprof_host(&pf, "call: results", tp);
    return rc;
}

/* ---- the path without lanes, for the tests (search_testing.h) */

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
    tdm_err e = {0};
    tdm_search_options o;
    tdm_search_query rq = {NULL, terms, n};
    tdm_sbq it, *one = &it;
    int rc = tdm_search_options_check(opts, &o, &e);
    if (rc)
        return tdm_api_fail_err(&e, rc);
    tdm_search_prepare(s, &rq, &o, &it);
    tdm_search_result *res = NULL;
    rc = tdm_search_run_prepared(s, &one, 1, -1, &res, &e);
    tdm_sbq_free(&it);
    if (rc == TDM_OK && res->status) {
        rc = tdm_err_set(&e, res->status, "%s", res->error);
        tdm_search_result_release(res);
    }
    if (rc)
        return tdm_api_fail_err(&e, rc);
    *out = res;
    return TDM_OK;
}
