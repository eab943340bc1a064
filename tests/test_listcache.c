/* The list cache (resident/listcache.h): an index larger than the device
 * memory allowed it. At the resident level, a scripted sequence of
 * acquires whose hits, misses, evictions, admissions and bytes are known
 * exactly, decodes through the cache equal to the reference, a job on a
 * list not held refused, unholds on an event, and the errors (a list or a
 * call larger than the cache, a list out of range). Through the search
 * API, on random indexes with a budget a fraction of the index: every
 * algorithm gives the full residency's answers bit for bit (and so the
 * oracle's: test_search), lists are admitted and evicted, queries whose
 * lists exceed the cache are refused naming the sizes, and many threads
 * at once on a cache too small for all of them get the same answers. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "resident/decode_jobs.h"
#include "index/format.h"
#include "index/index_priv.h"
#include "resident/listcache.h"
#include "resident/resident.h"
#include "randcoll.h"
#include "residx.h"
#include "runtime/runtime.h"
#include "testutil.h"

static tdm_engine *E;

static int setup(void **state)
{
    (void)state;
    E = tdm_test_engine();
    return E ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tdm_engine_close(E);
    return 0;
}

/* ---- resident level */

static uint32_t span_of(const tdm_ireader *r, uint32_t l)
{
    uint64_t sz;
    const tdm_idx_list *L = tdm_ireader_section(r, TDM_SEC_LISTS, &sz);
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t end = l + 1 < in->nterms ? L[l + 1].words : in->arena_words;
    return (uint32_t)(end - L[l].words);
}

/* Bytes of everything but the arena: the budget of a cache of c words is
 * this plus 4c. */
static uint64_t small_of(const tdm_ireader *r)
{
    uint64_t arena;
    tdm_ireader_section(r, TDM_SEC_ARENA, &arena);
    return tdm_resident_bytes_needed(r) - (arena < 4 ? 4 : arena);
}

static tdm_listcache_hold *hold1(const tdm_resident *res, uint32_t l)
{
    tdm_err err = {0};
    cl_event ev = NULL;
    tdm_listcache_hold *h = NULL;
    if (tdm_resident_acquire(res, &l, 1, &ev, &h, NULL, &err) != TDM_OK)
        fail_msg("acquire %u: %s", l, tdm_err_msg(&err));
    assert_non_null(h);
    if (ev)
        clReleaseEvent(ev);
    return h;
}

static void stats_are(const tdm_resident *res, uint64_t hits, uint64_t misses, uint64_t evictions,
                      uint64_t streamed, uint64_t moved, uint64_t hit_bytes, uint64_t used)
{
    tdm_listcache_stats st;
    tdm_err err = {0};
    assert_int_equal(tdm_resident_cache_stats(res, &st, &err), TDM_OK);
    assert_int_equal(st.hits, hits);
    assert_int_equal(st.misses, misses);
    assert_int_equal(st.evictions, evictions);
    assert_int_equal(st.streamed, streamed);
    assert_int_equal(st.bytes_moved, moved * 4);
    assert_int_equal(st.bytes_hit, hit_bytes * 4);
    assert_int_equal(st.used_bytes, used * 4);
}

/* Decodes lists[0..n) (held) and compares with the reference; with
 * `unheld` a job on that list (not held) must be refused. */
static void decode_check(const residx *x, const tdm_resident *res, const uint32_t *lists, size_t n,
                         cl_event ready, int64_t unheld, tdm_listcache_hold *h)
{
    tdm_err err = {0};
    tdm_device *d = res->dev;
    tdm_decode_req req[8];
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        req[nr++] = (tdm_decode_req){lists[i], 0, TDM_DECODE_TO_END};
    if (unheld >= 0)
        req[nr++] = (tdm_decode_req){(uint32_t)unheld, 0, TDM_DECODE_TO_END};
    tdm_decode_batch b;
    assert_int_equal(tdm_decode_batch_build(x->r, req, nr, &b, &err), TDM_OK);
    cl_mem bufs[TDM_CODEC_COUNT], od = NULL, of = NULL, st = NULL;
    assert_int_equal(tdm_decode_batch_upload(res, &b, bufs, &err), TDM_OK);
    size_t np = b.npostings ? b.npostings : 1;
    assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, np * 4, NULL, &od, &err), TDM_OK);
    assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, np * 4, NULL, &of, &err), TDM_OK);
    assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, 4, NULL, &st, &err), TDM_OK);
    uint32_t zero = 0, *hd = calloc(np, 4), *hf = calloc(np, 4);
    assert_int_equal(tdm_upload(d, st, 0, 4, &zero, 0, NULL, NULL, &err), TDM_OK);
    cl_event done = NULL;
    assert_int_equal(tdm_decode_batch_enqueue(res, NULL, &b, bufs, od, of, st, ready ? 1 : 0,
                                              ready ? &ready : NULL, &done, &err), TDM_OK);
    /* pins dropped when the decode is done (a completion callback; Oclgrind
       calls none for a command it has not run yet, so there after it ran) */
    int oclgrind = getenv("TANDEM_TEST_OCLGRIND") != NULL;
    if (!oclgrind)
        tdm_resident_unhold(res, h, done);
    assert_int_equal(tdm_download(d, od, 0, np * 4, hd, 1, &done, NULL, &err), TDM_OK);
    assert_int_equal(tdm_download(d, of, 0, np * 4, hf, 1, &done, NULL, &err), TDM_OK);
    int want = unheld >= 0 ? TDM_ERR_INVALID_ARG : TDM_OK;
    assert_int_equal(tdm_decode_jobs_status(res, st, 1, &done, &err), want);
    for (size_t i = 0; i < n; i++) {
        uint32_t l = lists[i];
        uint64_t sz;
        uint32_t df = ((const tdm_idx_list *)tdm_ireader_section(x->r, TDM_SEC_LISTS, &sz))[l].df;
        if (memcmp(hd + b.out[i], x->docs[l], (size_t)df * 4) ||
            memcmp(hf + b.out[i], x->freqs[l], (size_t)df * 4))
            fail_msg("list %u decoded through the cache on %s differs", l, d->info.name);
    }
    if (oclgrind)
        tdm_resident_unhold(res, h, done);
    clReleaseEvent(done);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (bufs[c])
            clReleaseMemObject(bufs[c]);
    clReleaseMemObject(od);
    clReleaseMemObject(of);
    clReleaseMemObject(st);
    free(hd);
    free(hf);
    tdm_decode_batch_free(&b);
    tdm_err_clear(&err);
}

/* A: the largest list, B and D smaller, D <= A; a cache of A + B + D - 1
 * words. Then: A (miss), A (hit), B (miss: A, B in the cache), D (no room:
 * A, least recently used, is evicted; D fits A's place; D's benefit 1 x D
 * is below A's 2 x A, so D is streamed, first to go), A (no room: D goes,
 * not B), B (hit). */
static void scripted(void **state)
{
    (void)state;
    const char *names[2] = {"bp128", "vbyte128"};
    residx x;
    residx_make(&x, "lc-script", names, 2, 10, 3000, 31);
    const uint32_t A = 7, B = 3, D = 4; /* 3000, 129 and 256 postings */
    uint32_t a = span_of(x.r, A), b = span_of(x.r, B), dd = span_of(x.r, D);
    assert_true(dd <= a && b <= a);
    uint64_t cap = (uint64_t)a + b + dd - 1;
    tdm_err err = {0};
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        tdm_resident_opts o = {TDM_RESIDENT_AUTO, small_of(x.r) + cap * 4, -1};
        assert_int_equal(tdm_resident_upload_opts(x.r, d, &o, &res, &err), TDM_OK);
        assert_non_null(res.cache);
        assert_int_equal(res.arena_words, cap);
        tdm_resident_unhold(&res, hold1(&res, A), NULL);
        stats_are(&res, 0, 1, 0, 0, a, 0, a);
        tdm_resident_unhold(&res, hold1(&res, A), NULL);
        stats_are(&res, 1, 1, 0, 0, a, a, a);
        tdm_resident_unhold(&res, hold1(&res, B), NULL);
        stats_are(&res, 1, 2, 0, 0, a + b, a, a + b);
        tdm_resident_unhold(&res, hold1(&res, D), NULL);
        stats_are(&res, 1, 3, 1, 1, a + b + dd, a, b + dd);
        tdm_resident_unhold(&res, hold1(&res, A), NULL);
        stats_are(&res, 1, 4, 2, 1, 2 * a + b + dd, a, a + b);
        tdm_resident_unhold(&res, hold1(&res, B), NULL);
        stats_are(&res, 2, 4, 2, 1, 2 * a + b + dd, a + b, a + b);
        tdm_listcache_stats st;
        assert_int_equal(tdm_resident_cache_stats(&res, &st, &err), TDM_OK);
        assert_int_equal(st.lists, 2);
        assert_int_equal(st.bytes_evicted, (uint64_t)(a + dd) * 4);
        assert_int_equal(st.capacity_bytes, cap * 4);
        /* decodes through the cache: A and B held, D not (refused) */
        uint32_t ab[2] = {A, B};
        cl_event ev = NULL;
        tdm_listcache_hold *h = NULL;
        uint64_t moved = 0;
        assert_int_equal(tdm_resident_acquire(&res, ab, 2, &ev, &h, &moved, &err), TDM_OK);
        assert_int_equal(moved, 0);
        decode_check(&x, &res, ab, 2, ev, D, h);
        if (ev)
            clReleaseEvent(ev);
        /* B and D together (B repeated): A goes once the callback unpinned it */
        uint32_t bdb[3] = {B, D, B};
        assert_int_equal(tdm_resident_acquire(&res, bdb, 3, &ev, &h, &moved, &err), TDM_OK);
        assert_int_equal(moved, (uint64_t)dd * 4);
        decode_check(&x, &res, bdb, 2, ev, -1, h);
        if (ev)
            clReleaseEvent(ev);
        tdm_resident_release(&res);
    }
    tdm_err_clear(&err);
    residx_free(&x);
}

/* A list larger than the cache, lists together larger than it, a list out
 * of range: refused with the sizes named; FULL mode has no statistics. */
static void refused(void **state)
{
    (void)state;
    const char *names[1] = {"pef"};
    residx x;
    residx_make(&x, "lc-refused", names, 1, 10, 6000, 32);
    const uint32_t A = 7, B = 6, C = 5;
    uint32_t a = span_of(x.r, A), b = span_of(x.r, B), c = span_of(x.r, C);
    assert_true(b + c < a);
    uint64_t cap = (uint64_t)b + c + 1;
    tdm_err err = {0};
    tdm_device *d = tdm_engine_device(E, 0);
    tdm_resident res;
    tdm_resident_opts o = {TDM_RESIDENT_CACHED, small_of(x.r) + cap * 4, 0};
    assert_int_equal(tdm_resident_upload_opts(x.r, d, &o, &res, &err), TDM_OK);
    cl_event ev = NULL;
    tdm_listcache_hold *h = NULL;
    uint32_t l = A;
    assert_int_equal(tdm_resident_acquire(&res, &l, 1, &ev, &h, NULL, &err),
                     TDM_ERR_DEVICE_MEMORY);
    char want[64];
    snprintf(want, sizeof want, "%" PRIu64, (uint64_t)a * 4);
    assert_non_null(strstr(tdm_err_msg(&err), want));
    snprintf(want, sizeof want, "%" PRIu64, cap * 4);
    assert_non_null(strstr(tdm_err_msg(&err), want));
    assert_null(h);
    assert_null(ev);
    uint32_t many[3] = {B, C, 9}; /* 9: 7 postings */
    uint64_t total = (uint64_t)b + c + span_of(x.r, 9);
    if (total > cap) {
        assert_int_equal(tdm_resident_acquire(&res, many, 3, &ev, &h, NULL, &err),
                         TDM_ERR_DEVICE_MEMORY);
        assert_non_null(strstr(tdm_err_msg(&err), "lists of one call"));
    }
    l = (uint32_t)x.nlists;
    assert_int_equal(tdm_resident_acquire(&res, &l, 1, &ev, &h, NULL, &err), TDM_ERR_INVALID_ARG);
    /* what fits still works; nothing was counted for the refused calls */
    tdm_resident_unhold(&res, hold1(&res, B), NULL);
    stats_are(&res, 0, 1, 0, 0, b, 0, b);
    tdm_resident_release(&res);
    /* FULL: acquire only checks the ids; no statistics */
    assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
    l = A;
    assert_int_equal(tdm_resident_acquire(&res, &l, 1, &ev, &h, NULL, &err), TDM_OK);
    assert_null(h);
    assert_null(ev);
    tdm_resident_unhold(&res, h, NULL);
    l = (uint32_t)x.nlists;
    assert_int_equal(tdm_resident_acquire(&res, &l, 1, &ev, &h, NULL, &err), TDM_ERR_INVALID_ARG);
    tdm_listcache_stats st;
    assert_int_equal(tdm_resident_cache_stats(&res, &st, &err), TDM_ERR_INVALID_ARG);
    tdm_resident_release(&res);
    tdm_err_clear(&err);
    residx_free(&x);
}

/* ---- through the search API */

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND,     TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
#define NALGOS (sizeof algos / sizeof *algos)

typedef struct coll {
    randcoll c;
    tdm_index *ix;
    const tdm_ireader *ir;
    uint32_t maxspan;
} coll;

static void coll_make(coll *k, const char *codec, uint64_t seed, uint32_t ndocs, uint64_t nterms)
{
    randcoll_init(&k->c, seed, ndocs, nterms);
    tdm_coll_source src;
    randcoll_source(&k->c, &src);
    tdm_iwriter_options o = {.codec = codec};
    tdm_err err = {0};
    char *path = path_in(tdm_test_tmpdir("lc-search"), codec);
    if (tdm_collection_write(&src, path, &o, &err) != TDM_OK)
        fail_msg("write %s: %s", path, tdm_err_msg(&err));
    if (tdm_index_open(path, &k->ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    k->ir = tdm_index_ireader(k->ix);
    k->maxspan = 0;
    for (uint64_t l = 0; l < k->c.nlists; l++)
        if (span_of(k->ir, (uint32_t)l) > k->maxspan)
            k->maxspan = span_of(k->ir, (uint32_t)l);
}

static void coll_free(coll *k)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    tdm_index_close(k->ix);
    randcoll_free(&k->c);
}

static tdm_engine *engine_with(uint64_t budget)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.device_memory = budget;
    tdm_engine *e = NULL;
    if (tdm_engine_open(&o, &e) != TDM_OK)
        fail_msg("engine: %s", tdm_last_error());
    return e;
}

/* A query of n terms by id whose lists total at most `room` words. */
static size_t make_query(tdm_rng *r, const coll *k, tdm_search_term *st, size_t maxt,
                         uint64_t room)
{
    size_t n = tdm_rng_range(r, 1, (uint32_t)maxt), m = 0;
    uint64_t used = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t l = tdm_rng_range(r, 0, (uint32_t)k->c.nlists - 1);
        if (used + span_of(k->ir, l) > room)
            continue;
        used += span_of(k->ir, l);
        st[m++] = (tdm_search_term){.term = NULL, .id = l, .weight = 1.0};
    }
    if (m == 0)
        st[m++] = (tdm_search_term){.term = NULL, .id = 0, .weight = 1.0};
    return m;
}

static void same_hits(const tdm_search_result *a, const tdm_search_result *b, const char *what)
{
    if (a->n != b->n)
        fail_msg("%s: %zu hits cached, %zu resident", what, a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        if (a->hits[i].docid != b->hits[i].docid ||
            memcmp(&a->hits[i].score, &b->hits[i].score, sizeof a->hits[i].score))
            fail_msg("%s: rank %zu: doc %u %.9g cached, doc %u %.9g resident", what, i,
                     a->hits[i].docid, a->hits[i].score, b->hits[i].docid, b->hits[i].score);
}

static tdm_search_result *run(tdm_search *s, const tdm_search_term *st, size_t n, int algo,
                              uint32_t k, int dev, const char *what)
{
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.algorithm = algo;
    o.k = k;
    o.device = dev;
    tdm_search_result *res = NULL;
    if (tdm_search_terms(s, st, n, &o, &res) != TDM_OK)
        fail_msg("%s: %s", what, tdm_last_error());
    return res;
}

/* Every algorithm, cached against wholly resident, on a cache of a
 * fraction of the arena: lists come and go. */
static void search_every_algorithm(void **state)
{
    (void)state;
    static const char *codecs[] = {"bp128", "pfor", "vbyte1024"};
    int small = tdm_test_small();
    for (size_t ci = 0; ci < (small ? 1u : 3u); ci++) {
        coll k;
        coll_make(&k, codecs[ci], 40 + ci, small ? 600 : 5000, small ? 60 : 400);
        uint64_t arena;
        tdm_ireader_section(k.ir, TDM_SEC_ARENA, &arena);
        uint64_t cap = arena / 4 / 5; /* a fifth of the lists' words */
        if (cap < 2ull * k.maxspan)
            cap = 2ull * k.maxspan;
        if (cap < 1024)
            cap = 1024;
        assert_true(cap * 4 < arena);
        tdm_engine *ec = engine_with(small_of(k.ir) + cap * 4);
        tdm_search *sc, *sf;
        if (tdm_search_open(ec, k.ix, &sc) != TDM_OK || tdm_search_open(E, k.ix, &sf) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        tdm_rng r;
        tdm_rng_seed(&r, 77 + ci);
        tdm_search_term st[16];
        static const uint32_t ks[] = {1, 10, 1000};
        int ndev = tdm_engine_device_count(ec), nq = small ? 6 : 40;
        for (int qi = 0; qi < nq; qi++) {
            size_t n = make_query(&r, &k, st, 8, cap);
            for (int dv = 0; dv < ndev; dv++)
                for (size_t a = 0; a < NALGOS; a++) {
                    char what[160];
                    snprintf(what, sizeof what, "%s query %d (%zu terms) %s dev %d", codecs[ci],
                             qi, n, tdm_algorithm_name(algos[a]), dv);
                    tdm_search_result *rf = run(sf, st, n, algos[a], ks[qi % 3], dv, what);
                    tdm_search_result *rc = run(sc, st, n, algos[a], ks[qi % 3], dv, what);
                    same_hits(rc, rf, what);
                    tdm_search_result_free(rc);
                    tdm_search_result_free(rf);
                }
        }
        for (int dv = 0; dv < ndev; dv++) {
            tdm_list_cache_stats cs, fs;
            assert_int_equal(tdm_search_cache_stats(sc, dv, &cs), TDM_OK);
            assert_int_equal(tdm_search_cache_stats(sf, dv, &fs), TDM_OK);
            assert_int_equal(cs.cached, 1);
            assert_int_equal(fs.cached, 0);
            assert_int_equal(cs.capacity_bytes, cap * 4);
            assert_true(cs.misses > 0 && cs.hits > 0);
            assert_true(cs.evictions > 0); /* a fifth of the index: lists were evicted */
            assert_true(cs.used_bytes <= cs.capacity_bytes);
            print_message("# %s dev %d: cache %" PRIu64 " of %" PRIu64 " bytes, hit rate %.2f, "
                          "%" PRIu64 " bytes moved, %" PRIu64 " evictions, %" PRIu64
                          " streamed\n", codecs[ci], dv, cs.capacity_bytes, (uint64_t)arena,
                          (double)cs.hits / (double)(cs.hits + cs.misses), cs.bytes_moved,
                          cs.evictions, cs.streamed);
        }
        assert_int_equal(tdm_search_cache_stats(sc, 99, &(tdm_list_cache_stats){0}),
                         TDM_ERR_INVALID_ARG);
        tdm_search_close(sc);
        tdm_search_close(sf);
        tdm_engine_close(ec);
        coll_free(&k);
    }
}

/* A query whose one list, or whose lists together, exceed the cache:
 * TDM_ERR_DEVICE_MEMORY naming the sizes; the handle still answers. */
static void search_too_large(void **state)
{
    (void)state;
    coll k;
    coll_make(&k, "bp256", 50, tdm_test_small() ? 800 : 3000, 40);
    uint32_t big = 0;
    for (uint32_t l = 0; l < k.c.nlists; l++)
        if (span_of(k.ir, l) == k.maxspan)
            big = l;
    uint64_t cap = k.maxspan - 1;
    if (cap < 64) { /* below the least cache (256 bytes) */
        coll_free(&k);
        skip();
    }
    tdm_engine *ec = engine_with(small_of(k.ir) + cap * 4);
    tdm_search *sc;
    if (tdm_search_open(ec, k.ix, &sc) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    tdm_search_term st = {.term = NULL, .id = big, .weight = 1.0};
    tdm_search_result *res = NULL;
    assert_int_equal(tdm_search_terms(sc, &st, 1, NULL, &res), TDM_ERR_DEVICE_MEMORY);
    assert_null(res);
    char want[64];
    snprintf(want, sizeof want, "%" PRIu64, (uint64_t)k.maxspan * 4);
    assert_non_null(strstr(tdm_last_error(), want));
    assert_non_null(strstr(tdm_last_error(), "TANDEM_DEVICE_MEMORY"));
    /* a small list still answers */
    uint32_t little = big == 0 ? 1 : 0;
    st.id = little;
    assert_int_equal(tdm_search_terms(sc, &st, 1, NULL, &res), TDM_OK);
    tdm_search_result_free(res);
    tdm_search_close(sc);
    tdm_engine_close(ec);
    coll_free(&k);
}

/* Threads on one handle, a cache that holds few queries' lists at once:
 * the answers those of the wholly resident index. */
typedef struct job {
    tdm_search *s;
    const coll *k;
    tdm_search_term (*q)[8];
    size_t *n;
    tdm_search_result **want;
    int nq, first;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int i = 0; i < j->nq; i++) {
        int qi = (j->first + i) % j->nq;
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.algorithm = algos[qi % NALGOS]; /* the reference's */
        tdm_search_result *res = NULL;
        if (tdm_search_terms(j->s, j->q[qi], j->n[qi], &o, &res) != TDM_OK)
            fail_msg("thread query %d: %s", qi, tdm_last_error());
        same_hits(res, j->want[qi], "threads");
        tdm_search_result_free(res);
    }
    return NULL;
}

static void search_threads(void **state)
{
    (void)state;
    if (getenv("TANDEM_TEST_OCLGRIND"))
        skip(); /* Oclgrind runs one kernel at a time */
    coll k;
    coll_make(&k, "bp128", 60, 4000, 200);
    uint64_t cap = 3ull * k.maxspan > 2048 ? 3ull * k.maxspan : 2048;
    tdm_engine *ec = engine_with(small_of(k.ir) + cap * 4);
    tdm_search *sc, *sf;
    if (tdm_search_open(ec, k.ix, &sc) != TDM_OK || tdm_search_open(E, k.ix, &sf) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    enum { NQ = 48, NT = 6 };
    static tdm_search_term q[NQ][8];
    size_t n[NQ];
    tdm_search_result *want[NQ];
    tdm_rng r;
    tdm_rng_seed(&r, 61);
    tdm_search_options o;
    tdm_search_options_init(&o);
    for (int i = 0; i < NQ; i++) {
        n[i] = make_query(&r, &k, q[i], 8, cap);
        o.algorithm = algos[i % NALGOS];
        if (tdm_search_terms(sf, q[i], n[i], &o, &want[i]) != TDM_OK)
            fail_msg("resident query %d: %s", i, tdm_last_error());
    }
    pthread_t th[NT];
    job jobs[NT];
    for (int t = 0; t < NT; t++) {
        jobs[t] = (job){sc, &k, q, n, want, NQ, t * 7};
        assert_int_equal(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    /* and once more, one by one */
    for (int i = 0; i < NQ; i++) {
        o.algorithm = algos[i % NALGOS];
        tdm_search_result *res = NULL;
        assert_int_equal(tdm_search_terms(sc, q[i], n[i], &o, &res), TDM_OK);
        same_hits(res, want[i], "after the threads");
        tdm_search_result_free(res);
        tdm_search_result_free(want[i]);
    }
    tdm_list_cache_stats cs;
    assert_int_equal(tdm_search_cache_stats(sc, 0, &cs), TDM_OK);
    assert_true(cs.evictions > 0);
    assert_int_equal(cs.hits + cs.misses > 0, 1);
    tdm_search_close(sc);
    tdm_search_close(sf);
    tdm_engine_close(ec);
    coll_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scripted),
        cmocka_unit_test(refused),
        cmocka_unit_test(search_every_algorithm),
        cmocka_unit_test(search_too_large),
        cmocka_unit_test(search_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
