/* The search handle's cache of recomputed block bounds (query/bounds.h,
 * bounds_cache.c), used for BM25 parameters other than those the index stored
 * its bounds for and for impact scores: every cached bound is bit for bit what
 * tdm_score_block_bounds computes; a second call with the same term, scoring
 * and weight hits, other parameters or weights miss; the byte budget holds
 * (least recently used entries go; an entry above the budget is never kept);
 * many threads on one cache; and through a search handle, every algorithm on
 * every device returns the float oracle's answer with non-default k1/b and
 * impact scoring, from the cache on later calls, from one thread or many,
 * the same answers as a handle without the cache (the device recomputes). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_priv.h"
#include "query/bounds.h"
#include "harness/oracle.h"
#include "drive/search.h"
#include "drive/search_run.h"
#include "drive/search_testing.h"
#include "randcoll.h"
#include "testutil.h"

static const tdm_score_params params[] = {
    {TDM_SCORING_BM25, 0.9, 0.4}, {TDM_SCORING_BM25, 2.0, 1.0}, {TDM_SCORING_BM25, 1.2, 0.0},
    {TDM_SCORING_IMPACT, 0, 0},   {TDM_SCORING_BM25, 1.2, 0.75},
};
#define NPARAMS (sizeof params / sizeof *params)

static const int algos[] = {TDM_ALGO_OR,  TDM_ALGO_AND,      TDM_ALGO_AND_OR, TDM_ALGO_WAND,
                            TDM_ALGO_BMW, TDM_ALGO_MAXSCORE, TDM_ALGO_AUTO};
#define NALGOS (sizeof algos / sizeof *algos)

typedef struct fixture {
    randcoll c;
    tdm_index *ix;
    const tdm_ireader *ir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    randcoll_init(&f->c, 5, tdm_test_small() ? 3000 : 20000, 24);
    f->ix = randcoll_index(&f->c, tdm_test_tmpdir("bcache"), "r.tdm", "bp128");
    f->ir = tdm_index_ireader(f->ix);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tdm_index_close(f->ix);
    randcoll_free(&f->c);
    free(f);
    return 0;
}

/* A finished query of terms a and b (b may be NULL) with weights. */
static void make_query(const fixture *f, tdm_query *q, const char *a, double wa, const char *b,
                       double wb)
{
    tdm_err err = {0};
    tdm_query_reset(q);
    assert_int_equal(tdm_query_add_term(q, f->ir, a, strlen(a), wa, &err), TDM_OK);
    if (b)
        assert_int_equal(tdm_query_add_term(q, f->ir, b, strlen(b), wb, &err), TDM_OK);
    tdm_query_finish(q);
}

/* Term t's bounds from the cache equal a recomputation's, bit for bit. */
static void check_bounds(const fixture *f, tdm_bcache *bc, const tdm_query *q,
                         const tdm_score_params *p, size_t t)
{
    tdm_scorer s;
    tdm_err err = {0};
    tdm_ilist l;
    assert_int_equal(tdm_scorer_init(&s, f->ir, q, p, &err), TDM_OK);
    assert_int_equal(tdm_ireader_list(f->ir, q->terms[t].id, &l, &err), TDM_OK);
    float *want = malloc(l.nblocks * sizeof *want), *got = malloc(l.nblocks * sizeof *got), mx;
    assert_int_equal(tdm_score_block_bounds(f->ir, q, &s, t, want, &mx, &err), TDM_OK);
    assert_int_equal(tdm_bcache_bounds(bc, f->ir, q, &s, t, got, &err), TDM_OK);
    assert_memory_equal(got, want, l.nblocks * sizeof *got);
    free(want);
    free(got);
    tdm_scorer_free(&s);
}

static void hits_and_misses(void **state)
{
    fixture *f = *state;
    tdm_bcache *bc;
    tdm_err err = {0};
    assert_int_equal(tdm_bcache_open(TDM_BCACHE_DEFAULT_BYTES, &bc, &err), TDM_OK);
    tdm_query q;
    tdm_query_init(&q);
    tdm_bcache_stats st;
    uint64_t calls = 0;
    for (size_t p = 0; p < NPARAMS; p++)
        for (uint64_t l = 0; l < f->c.nlists; l++) {
            make_query(f, &q, f->c.terms[l], 1.0, NULL, 0);
            check_bounds(f, bc, &q, &params[p], 0);
            tdm_bcache_stats_get(bc, &st);
            assert_int_equal(st.misses, calls + 1); /* first use of (params, term): computed */
            check_bounds(f, bc, &q, &params[p], 0);
            tdm_bcache_stats_get(bc, &st);
            assert_int_equal(st.hits, calls + 1); /* second: from the cache */
            calls++;
        }
    assert_int_equal(st.entries, calls);
    assert_true(st.bytes <= st.max_bytes && st.evictions == 0);
    /* another weight is another float qw: a miss, and right */
    make_query(f, &q, f->c.terms[3], 2.5, f->c.terms[7], 1.0);
    size_t t3 = q.terms[0].id == 3 ? 0 : 1;
    check_bounds(f, bc, &q, &params[0], t3);
    tdm_bcache_stats_get(bc, &st);
    assert_int_equal(st.misses, calls + 1);
    check_bounds(f, bc, &q, &params[0], 1 - t3); /* weight 1, second term of two: a hit */
    tdm_bcache_stats_get(bc, &st);
    assert_int_equal(st.hits, calls + 1);
    tdm_query_free(&q);
    tdm_bcache_close(bc);
}

static void budget(void **state)
{
    fixture *f = *state;
    tdm_query q;
    tdm_query_init(&q);
    tdm_err err = {0};
    /* a budget of about three small entries: evictions, never over it */
    tdm_bcache *bc;
    assert_int_equal(tdm_bcache_open(3 * 1024, &bc, &err), TDM_OK);
    tdm_bcache_stats st;
    for (int round = 0; round < 2; round++)
        for (uint64_t l = 0; l < f->c.nlists; l++) {
            make_query(f, &q, f->c.terms[l], 1.0, NULL, 0);
            check_bounds(f, bc, &q, &params[1], 0);
            tdm_bcache_stats_get(bc, &st);
            assert_true(st.bytes <= st.max_bytes);
        }
    assert_true(st.evictions > 0);
    assert_true(st.entries >= 1);
    tdm_bcache_close(bc);
    /* a budget below any entry keeps nothing, and is still right */
    assert_int_equal(tdm_bcache_open(1, &bc, &err), TDM_OK);
    for (uint64_t l = 0; l < f->c.nlists; l++) {
        make_query(f, &q, f->c.terms[l], 1.0, NULL, 0);
        check_bounds(f, bc, &q, &params[0], 0);
        check_bounds(f, bc, &q, &params[0], 0);
    }
    tdm_bcache_stats_get(bc, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(st.hits, 0);
    tdm_query_free(&q);
    tdm_bcache_close(bc);
}

typedef struct cjob {
    const fixture *f;
    tdm_bcache *bc;
    uint64_t seed;
} cjob;

static void *cache_thread(void *arg)
{
    cjob *j = arg;
    tdm_rng r;
    tdm_rng_seed(&r, j->seed);
    tdm_query q;
    tdm_query_init(&q);
    for (int i = 0; i < 150; i++) {
        uint64_t l = tdm_rng_range(&r, 0, (uint32_t)j->f->c.nlists - 1);
        make_query(j->f, &q, j->f->c.terms[l], 1.0, NULL, 0);
        check_bounds(j->f, j->bc, &q, &params[tdm_rng_range(&r, 0, NPARAMS - 1)], 0);
    }
    tdm_query_free(&q);
    return NULL;
}

static void cache_threads(void **state)
{
    fixture *f = *state;
    tdm_err err = {0};
    for (int small = 0; small < 2; small++) { /* roomy, then evicting all the time */
        tdm_bcache *bc;
        assert_int_equal(tdm_bcache_open(small ? 4096 : TDM_BCACHE_DEFAULT_BYTES, &bc, &err),
                         TDM_OK);
        pthread_t th[6];
        cjob jobs[6];
        for (int i = 0; i < 6; i++) {
            jobs[i] = (cjob){f, bc, 100 + (uint64_t)i};
            assert_int_equal(pthread_create(&th[i], NULL, cache_thread, &jobs[i]), 0);
        }
        for (int i = 0; i < 6; i++)
            pthread_join(th[i], NULL);
        tdm_bcache_stats st;
        tdm_bcache_stats_get(bc, &st);
        assert_int_equal(st.hits + st.misses, 6 * 150);
        assert_true(st.bytes <= st.max_bytes);
        assert_true(st.entries <= f->c.nlists * NPARAMS);
        if (!small)
            assert_true(st.hits > 0);
        tdm_bcache_close(bc);
    }
}

/* ---- through a search handle */

/* The float oracle's top k for st[0..n) under o. */
static size_t oracle(const fixture *f, tdm_oracle *or, const tdm_search_term *st, size_t n,
                     const tdm_search_options *o, int match, tdm_hit *hits, uint64_t *matched)
{
    tdm_query q;
    tdm_query_init(&q);
    tdm_err err = {0};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tdm_query_add_term(&q, f->ir, st[i].term, strlen(st[i].term),
                                            st[i].weight, &err), TDM_OK);
    tdm_query_finish(&q);
    tdm_oracle_request req = {o->k, match, TDM_ORACLE_FLOAT,
                              {o->scoring == TDM_SCORE_IMPACT ? TDM_SCORING_IMPACT
                                                              : TDM_SCORING_BM25, o->k1, o->b}};
    size_t got = 0;
    if (tdm_oracle_search(or, &q, &req, hits, &got, matched, &err) != TDM_OK)
        fail_msg("oracle: %s", tdm_err_msg(&err));
    tdm_query_free(&q);
    return got;
}

/* The k-th scores (tdm_bcache_kth_*): a value back only for its whole key
 * (impact ignores c0, c1); the first of two puts kept; more keys than the
 * table holds, from 4 threads at once: every hit its own key's value. */
static float kth_value(uint64_t term, uint32_t k)
{
    return (float)(term * 3 + k) / 7.0f;
}

static void *kth_thread(void *arg)
{
    tdm_bcache *bc = arg;
    int *bad = calloc(1, sizeof *bad);
    for (uint64_t round = 0; round < 2; round++)
        for (uint64_t term = 0; term < 300000; term += 3) {
            float v;
            uint32_t k = 10 + (uint32_t)(term % 3);
            if (tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.3f, 0.001f, term, 2.5f, k, &v))
                *bad += v != kth_value(term, k);
            else
                tdm_bcache_kth_put(bc, TDM_SCORING_BM25, 0.3f, 0.001f, term, 2.5f, k,
                                   kth_value(term, k));
        }
    return bad;
}

static void kth_values(void **state)
{
    (void)state;
    tdm_bcache *bc;
    tdm_err err = {0};
    assert_int_equal(tdm_bcache_open(TDM_BCACHE_DEFAULT_BYTES, &bc, &err), TDM_OK);
    float v = 0;
    assert_false(tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.3f, 0.001f, 7, 2.5f, 10, &v));
    tdm_bcache_kth_put(bc, TDM_SCORING_BM25, 0.3f, 0.001f, 7, 2.5f, 10, 4.25f);
    tdm_bcache_kth_put(bc, TDM_SCORING_BM25, 0.3f, 0.001f, 7, 2.5f, 10, 9.0f); /* kept: first */
    assert_true(tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.3f, 0.001f, 7, 2.5f, 10, &v));
    assert_true(v == 4.25f);
    assert_false(tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.31f, 0.001f, 7, 2.5f, 10, &v));
    assert_false(tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.3f, 0.002f, 7, 2.5f, 10, &v));
    assert_false(tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.3f, 0.001f, 8, 2.5f, 10, &v));
    assert_false(tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.3f, 0.001f, 7, 2.0f, 10, &v));
    assert_false(tdm_bcache_kth_get(bc, TDM_SCORING_BM25, 0.3f, 0.001f, 7, 2.5f, 1000, &v));
    assert_false(tdm_bcache_kth_get(bc, TDM_SCORING_IMPACT, 0.3f, 0.001f, 7, 2.5f, 10, &v));
    tdm_bcache_kth_put(bc, TDM_SCORING_IMPACT, 0.3f, 0.001f, 7, 2.5f, 10, 1.5f);
    assert_true(tdm_bcache_kth_get(bc, TDM_SCORING_IMPACT, 0, 0, 7, 2.5f, 10, &v));
    assert_true(v == 1.5f);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, kth_thread, bc), 0);
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(th[i], &bad);
        assert_int_equal(*(int *)bad, 0);
        free(bad);
    }
    tdm_bcache_stats st;
    tdm_bcache_stats_get(bc, &st); /* the bounds' counts: none of the k-th scores */
    assert_int_equal(st.hits + st.misses + st.entries, 0);
    tdm_bcache_close(bc);
}

static void check(const fixture *f, tdm_search *s, tdm_oracle *or, const tdm_search_term *st,
                  size_t n, const tdm_search_options *o, const char *what)
{
    tdm_search_result *res = NULL;
    if (tdm_search_terms_plain(s, st, n, o, &res) != TDM_OK)
        fail_msg("%s: %s", what, tdm_last_error());
    tdm_hit *want = malloc(o->k * sizeof *want);
    uint64_t matched = 0;
    int ran = o->algorithm == TDM_ALGO_AUTO ? res->algorithm : o->algorithm;
    int match = ran == TDM_ALGO_AND ? TDM_MATCH_AND : TDM_MATCH_OR;
    if (ran == TDM_ALGO_AND_OR) {
        oracle(f, or, st, n, o, TDM_MATCH_AND, want, &matched);
        match = matched >= o->k ? TDM_MATCH_AND : TDM_MATCH_OR;
    }
    size_t nw = oracle(f, or, st, n, o, match, want, NULL);
    if (res->n != nw)
        fail_msg("%s: %zu hits, the oracle has %zu", what, res->n, nw);
    for (size_t i = 0; i < nw; i++)
        if (res->hits[i].docid != want[i].docid || (double)res->hits[i].score != want[i].score)
            fail_msg("%s: rank %zu: doc %u score %.9g, oracle doc %u score %.9g", what, i,
                     res->hits[i].docid, res->hits[i].score, want[i].docid, want[i].score);
    free(want);
    tdm_search_result_free(res);
}

static void random_query(const fixture *f, tdm_rng *r, tdm_search_term *st, size_t *n)
{
    *n = tdm_rng_range(r, 1, 4);
    for (size_t i = 0; i < *n; i++)
        st[i] = (tdm_search_term){f->c.terms[tdm_rng_range(r, 0, (uint32_t)f->c.nlists - 1)], 0,
                                  tdm_rng_range(r, 0, 3) ? 1.0 : 1.75};
}

static void search_exact(void **state)
{
    fixture *f = *state;
    tdm_engine *eng = tdm_test_engine();
    tdm_search *s, *nocache;
    assert_int_equal(tdm_search_handle_open(eng, f->ix, &s, &(tdm_err){0}), TDM_OK);
    assert_non_null(s->bcache);
    setenv("TANDEM_BOUNDS_CACHE_MB", "0", 1); /* read at engine open */
    tdm_engine *eng0 = tdm_test_engine();
    unsetenv("TANDEM_BOUNDS_CACHE_MB");
    assert_int_equal(tdm_search_handle_open(eng0, f->ix, &nocache, &(tdm_err){0}), TDM_OK);
    assert_null(nocache->bcache); /* the device recomputes the bounds every call */
    tdm_oracle *or;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(f->ir, &or, &err), TDM_OK);
    tdm_rng r;
    tdm_rng_seed(&r, 77);
    int ndev = tdm_engine_device_count(eng);
    tdm_search_term st[4];
    size_t n;
    for (int qi = 0; qi < (tdm_test_small() ? 3 : 8); qi++) {
        random_query(f, &r, st, &n);
        tdm_search_options o;
        tdm_search_options_init(&o);
        const tdm_score_params *p = &params[qi % (NPARAMS - 1)]; /* never the index's own */
        o.scoring = p->kind == TDM_SCORING_IMPACT ? TDM_SCORE_IMPACT : TDM_SCORE_BM25;
        o.k1 = p->kind == TDM_SCORING_IMPACT ? o.k1 : p->k1;
        o.b = p->kind == TDM_SCORING_IMPACT ? o.b : p->b;
        o.k = qi % 2 ? 1000 : 10;
        for (int d = 0; d < ndev; d++)
            for (size_t a = 0; a < NALGOS; a++)
                for (int pass = 0; pass < 2; pass++) { /* pass 1: the bounds are cached */
                    o.device = d;
                    o.algorithm = algos[a];
                    char what[160];
                    snprintf(what, sizeof what, "query %d dev %d %s k %u k1 %g b %g scoring %d "
                             "pass %d", qi, d, tdm_algorithm_name(o.algorithm), o.k, o.k1, o.b,
                             o.scoring, pass);
                    tdm_bcache_stats st0, st1;
                    tdm_bcache_stats_get(s->bcache, &st0);
                    check(f, s, or, st, n, &o, what);
                    tdm_bcache_stats_get(s->bcache, &st1);
                    if (pass == 1 && st1.misses != st0.misses)
                        fail_msg("%s: the bounds were computed again", what);
                    check(f, nocache, or, st, n, &o, what);
                }
    }
    tdm_bcache_stats bs;
    tdm_bcache_stats_get(s->bcache, &bs);
    assert_true(bs.hits > 0 && bs.misses > 0);
    tdm_oracle_close(or);
    tdm_search_handle_close(nocache);
    tdm_search_handle_close(s);
    tdm_engine_close(eng0);
    tdm_engine_close(eng);
}

typedef struct sjob {
    const fixture *f;
    tdm_search *s;
    int ndev;
    uint64_t seed;
} sjob;

static void *search_thread(void *arg)
{
    sjob *j = arg;
    tdm_oracle *or;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(j->f->ir, &or, &err), TDM_OK);
    tdm_rng r;
    tdm_rng_seed(&r, j->seed);
    tdm_search_term st[4];
    size_t n;
    for (int i = 0; i < (tdm_test_small() ? 4 : 12); i++) {
        random_query(j->f, &r, st, &n);
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.k1 = 0.9;
        o.b = 0.4;
        o.k = 10;
        o.device = (int)tdm_rng_range(&r, 0, (uint32_t)j->ndev - 1);
        o.algorithm = algos[tdm_rng_range(&r, 0, NALGOS - 1)];
        check(j->f, j->s, or, st, n, &o, "threads");
    }
    tdm_oracle_close(or);
    return NULL;
}

static void search_threads(void **state)
{
    fixture *f = *state;
    if (getenv("TANDEM_TEST_OCLGRIND")) {
        skip(); /* Oclgrind simulates one kernel at a time */
        return;
    }
    tdm_engine *eng = tdm_test_engine();
    tdm_search *s;
    assert_int_equal(tdm_search_handle_open(eng, f->ix, &s, &(tdm_err){0}), TDM_OK);
    pthread_t th[4];
    sjob jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (sjob){f, s, tdm_engine_device_count(eng), 500 + (uint64_t)i};
        assert_int_equal(pthread_create(&th[i], NULL, search_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    tdm_bcache_stats st;
    tdm_bcache_stats_get(s->bcache, &st);
    assert_true(st.hits + st.misses > 0);
    tdm_search_handle_close(s);
    tdm_engine_close(eng);
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hits_and_misses), cmocka_unit_test(budget),
        cmocka_unit_test(cache_threads),   cmocka_unit_test(search_exact),
        cmocka_unit_test(search_threads),  cmocka_unit_test(kth_values),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
