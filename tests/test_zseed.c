/* The compressed variant's host seed of the shared threshold
 * (drive/search_seed.h, tdm_search_hseed):
 *  - against a plain-C reference (every list decoded whole, its scores
 *    sorted: the largest k-th score over the terms) and the oracle, on random
 *    indexes of every codec, queries with repeated terms and weights, BM25 at
 *    the index's parameters (stored bounds) and others (the cache's exact
 *    bounds), impact scores, k = 1, 10, 1000 and past the matches: never
 *    above the oracle's k-th score, equal to the reference wherever the cap
 *    cannot bind, the same bits from the cache and without it;
 *  - on every device, the range kernel started from G = the seed returns the
 *    oracle's top k, and from one ulp above it does not for one-term queries
 *    (their k-th document scores exactly the seed): so a kernel comparing G
 *    non-strictly (which acts as G one ulp higher) fails here;
 *  - WAND, BMW and MaxScore through the API, alone and in batches, with the
 *    seed forced on (TANDEM_ZR_SEED=1), against the oracle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "index/index_priv.h"
#include "index/writer.h"
#include "query/bounds.h"
#include "harness/oracle.h"
#include "drive/search.h"
#include "drive/search_run.h"
#include "drive/search_seed.h"
#include "plan/search_hseed.h"
#include "randcoll.h"
#include "testutil.h"

static int setup(void **state)
{
    *state = tdm_test_engine();
    return 0;
}

static int teardown(void **state)
{
    tdm_engine_close(*state);
    return 0;
}

/* With `ties`, every frequency is 1 or 2: scores tie by the hundred. */
static tdm_index *random_index(uint64_t seed, uint32_t ndocs, const char *codec, randcoll *c,
                               int ties)
{
    randcoll_init(c, seed, ndocs, 30);
    for (uint64_t i = 0; ties && i < c->nlists; i++)
        for (size_t j = 0; j < c->n[i]; j++)
            c->freqs[i][j] = 1 + (uint32_t)((c->docids[i][j] * 2654435761u) >> 31);
    tdm_coll_source src;
    randcoll_source(c, &src);
    tdm_iwriter_options o = {.codec = codec};
    tdm_err err = {0};
    char *path = path_in(tdm_test_tmpdir("zseed"), "z.tdm");
    if (tdm_collection_write(&src, path, &o, &err) != TDM_OK)
        fail_msg("write (%s): %s", codec, tdm_err_msg(&err));
    tdm_index *ix;
    if (tdm_index_open(path, &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    return ix;
}

/* 1 to maxn terms, repeats allowed (a repeat sums its weights), weights 1 or
 * random; the same terms into st[] for the API. */
static uint32_t random_query(tdm_rng *r, const randcoll *c, const tdm_ireader *ir, tdm_query *q,
                             uint32_t maxn, tdm_search_term *st)
{
    tdm_query_reset(q);
    uint32_t n = tdm_rng_range(r, 1, maxn);
    tdm_err err = {0};
    for (uint32_t i = 0; i < n; i++) {
        const char *t = c->terms[tdm_rng_range(r, 0, (uint32_t)c->nlists - 1)];
        if (i && tdm_rng_range(r, 0, 3) == 0)
            t = st[0].term; /* a repeated term */
        double w = tdm_rng_range(r, 0, 2) ? 1.0 : tdm_rng_range(r, 1, 400) / 64.0;
        st[i] = (tdm_search_term){t, 0, w};
        assert_int_equal(tdm_query_add_term(q, ir, t, strlen(t), w, &err), TDM_OK);
    }
    tdm_query_finish(q);
    return n;
}

static tdm_score_params pick_params(uint32_t x)
{
    tdm_score_params sp = tdm_score_params_default();
    if (x % 3 == 1)
        sp.kind = TDM_SCORING_IMPACT;
    else if (x % 3 == 2) {
        sp.k1 = 0.9;
        sp.b = 0.4;
    }
    return sp;
}

static int desc_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The reference: the largest over q's terms of the k-th best float score of
 * the whole list (0: no term has k postings). *capfree: no list of k
 * postings or more has more blocks than the seed may decode
 * (2 (k / B + 1) + 16, search_hseed.c), so the seed must equal it. */
static float ref_seed(const tdm_ireader *ir, const tdm_query *q, const tdm_score_params *sp,
                      uint32_t k, int *capfree)
{
    tdm_scorer sc;
    tdm_err err = {0};
    assert_int_equal(tdm_scorer_init(&sc, ir, q, sp, &err), TDM_OK);
    const uint32_t *dl = tdm_ireader_doclens(ir);
    float g = 0;
    *capfree = 1;
    for (size_t t = 0; t < q->nterms; t++) {
        tdm_ilist l;
        assert_int_equal(tdm_ireader_list(ir, q->terms[t].id, &l, &err), TDM_OK);
        if (l.df < k)
            continue;
        if (l.nblocks > 2 * (k / l.docs.block_size + 1) + 16)
            *capfree = 0;
        uint32_t *d = malloc(l.df * 4ull), *f = malloc(l.df * 4ull);
        float *s = malloc(l.df * 4ull);
        assert_int_equal(tdm_ireader_decode(ir, q->terms[t].id, d, f, &err), TDM_OK);
        for (uint32_t i = 0; i < l.df; i++)
            s[i] = tdm_score_f(&sc, t, f[i], dl[d[i]]);
        qsort(s, l.df, sizeof *s, desc_f);
        g = s[k - 1] > g ? s[k - 1] : g;
        free(d);
        free(f);
        free(s);
    }
    tdm_scorer_free(&sc);
    return g;
}

/* The oracle's float top k as keys (score bits << 32 | ~docid). */
static uint32_t oracle_keys(tdm_oracle *or, const tdm_query *q, uint32_t k,
                            const tdm_score_params *sp, uint64_t *keys)
{
    tdm_oracle_request req = {k, TDM_MATCH_OR, TDM_ORACLE_FLOAT, *sp};
    tdm_hit *h = malloc(k * sizeof *h);
    size_t got = 0;
    tdm_err err = {0};
    if (tdm_oracle_search(or, q, &req, h, &got, NULL, &err) != TDM_OK)
        fail_msg("oracle: %s", tdm_err_msg(&err));
    for (size_t i = 0; i < got; i++)
        keys[i] = (uint64_t)tdm_f2u((float)h[i].score) << 32 | (uint32_t)~h[i].docid;
    free(h);
    return (uint32_t)got;
}

static uint32_t pick_k(tdm_rng *r, uint32_t ndocs)
{
    static const uint32_t ks[] = {1, 10, 1000};
    uint32_t x = tdm_rng_range(r, 0, 3);
    if (x < 3)
        return ks[x];
    return ndocs + 1 < 10000 ? ndocs + 1 : 10000; /* past every list */
}

/* ---- the seed against the reference and the oracle, every codec */

static void seed_vs_ref(void **state)
{
    (void)state;
    int small = tdm_test_small();
    size_t ncodec;
    const tdm_codec_ops *const *all = tdm_codec_all(&ncodec);
    uint64_t *keys = malloc(10000 * 8);
    uint32_t seeded = 0, exact = 0;
    for (size_t ci = 0; ci < ncodec; ci++) {
        uint32_t ndocs = small ? 300 + 200 * (uint32_t)ci : 2000 + 1500 * (uint32_t)(ci % 4);
        randcoll c;
        tdm_index *ix = random_index(100 + ci, ndocs, all[ci]->name, &c, ci % 2);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_oracle *or;
        tdm_bcache *bc;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        assert_int_equal(tdm_bcache_open(1 << 20, &bc, &err), TDM_OK);
        tdm_rng r;
        tdm_rng_seed(&r, 31 + ci);
        tdm_query q;
        tdm_query_init(&q);
        tdm_search_term st[8];
        for (uint32_t qi = 0; qi < (small ? 8u : 30u); qi++) {
            random_query(&r, &c, ir, &q, qi % 4 ? 6 : 1, st);
            tdm_score_params sp = pick_params(qi);
            uint32_t k = pick_k(&r, ndocs);
            tdm_sprep p;
            assert_int_equal(tdm_sprep_build_cached(&p, ir, &q, &sp, bc, &err), TDM_OK);
            uint32_t g0, g1, g2;
            assert_int_equal(tdm_search_hseed(&p, ir, bc, k, &g0, &err), TDM_OK);
            assert_int_equal(tdm_search_hseed(&p, ir, bc, k, &g1, &err), TDM_OK); /* cached */
            assert_int_equal(tdm_search_hseed(&p, ir, NULL, k, &g2, &err), TDM_OK);
            if (g0 != g1 || g0 != g2)
                fail_msg("%s query %u k %u: seed %08x, cached %08x, uncached %08x",
                         all[ci]->name, qi, k, g0, g1, g2);
            int capfree;
            uint32_t want = tdm_f2u(ref_seed(ir, &q, &sp, k, &capfree));
            if (g0 > want || (capfree && g0 != want))
                fail_msg("%s query %u k %u kind %d: seed %08x, reference %08x (cap %s)",
                         all[ci]->name, qi, k, sp.kind, g0, want, capfree ? "free" : "binds");
            uint32_t n = oracle_keys(or, &q, k, &sp, keys);
            if (g0 && (n < k || g0 > (uint32_t)(keys[k - 1] >> 32)))
                fail_msg("%s query %u k %u: seed %08x above the oracle's k-th (%u hits)",
                         all[ci]->name, qi, k, g0, n);
            seeded += g0 != 0;
            exact += g0 != 0 && n >= k && g0 == (uint32_t)(keys[k - 1] >> 32);
            tdm_sprep_free(&p);
        }
        tdm_query_free(&q);
        tdm_bcache_close(bc);
        tdm_oracle_close(or);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
    free(keys);
    print_message("seeded %u queries; %u of them at exactly the oracle's k-th score\n", seeded,
                  exact);
    assert_true(seeded > 0 && exact > 0);
}

/* ---- the range kernel from the seed and from one ulp above, every device */

static void device_run(tdm_search *s, tdm_sprep *p, const tdm_splan *pl, int salg, uint32_t k,
                       uint32_t g, uint64_t *keys, uint32_t *n)
{
    tdm_sout so = {0};
    so.keys = keys;
    tdm_err err = {0};
    p->terms[TDM_TW_SHARED] = g;
    if (tdm_search_dev_run(&s->dev[pl->dev], p, s->ndocs, pl, salg, k, &so, &err) != TDM_OK)
        fail_msg("device run: %s", tdm_err_msg(&err));
    *n = so.n;
}

static void strict_on_devices(void **state)
{
    tdm_engine *eng = *state;
    int small = tdm_test_small();
    static const int algos[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    static const int salgs[] = {TDM_SALG_WAND, TDM_SALG_BMW, TDM_SALG_MAXSCORE};
    static const char *codecs[] = {"bp128", "vbyte1024", "pef"};
    uint32_t broken = 0, ran = 0;
    int zc[16];
    assert_true(tdm_engine_device_count(eng) <= 16);
    for (int d = 0; d < tdm_engine_device_count(eng); d++)
        zc[d] = tdm_test_zcur(eng, d, "strict_on_devices");
    for (uint64_t ci = 0; ci < 3; ci++) {
        uint32_t ndocs = small ? 600 : 5000;
        randcoll c;
        tdm_index *ix = random_index(200 + ci, ndocs, codecs[ci], &c, ci != 1);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_search *s;
        assert_int_equal(tdm_search_handle_open(eng, ix, &s, &(tdm_err){0}), TDM_OK);
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        tdm_rng r;
        tdm_rng_seed(&r, 57 + ci);
        tdm_query q;
        tdm_query_init(&q);
        tdm_search_term st[8];
        uint64_t *want = malloc(10000 * 8), *got = malloc(10000 * 8);
        for (uint32_t qi = 0; qi < (small ? 4u : 16u); qi++) {
            random_query(&r, &c, ir, &q, qi % 2 ? 3 : 1, st);
            tdm_score_params sp = pick_params(qi / 2);
            static const uint32_t ks[] = {1, 10, 100, 1000};
            uint32_t k = ks[tdm_rng_range(&r, 0, 3)];
            tdm_sprep p;
            assert_int_equal(tdm_sprep_build_cached(&p, ir, &q, &sp, s->bcache, &err), TDM_OK);
            uint32_t g;
            assert_int_equal(tdm_search_hseed(&p, ir, s->bcache, k, &g, &err), TDM_OK);
            int capfree, exact = g == tdm_f2u(ref_seed(ir, &q, &sp, k, &capfree));
            uint32_t nw = oracle_keys(or, &q, k, &sp, want);
            for (int d = 0; g && d < tdm_engine_device_count(eng); d++) {
                if (!zc[d]) /* the seed is the compressed variant's alone */
                    continue;
                ran++;
                size_t a = qi % 3;
                tdm_splan pl;
                uint32_t ranges = tdm_rng_range(&r, 1, 40);
                if (tdm_search_plan(s, &p, algos[a], d, TDM_VARIANT_COMPRESSED, ranges, k, 0,
                                    &pl, &err) != TDM_OK)
                    fail_msg("plan: %s", tdm_err_msg(&err));
                assert_int_equal(pl.variant, TDM_VARIANT_COMPRESSED);
                for (uint32_t g2 = 0; g2 <= 1; g2++) {
                    uint32_t ng;
                    device_run(s, &p, &pl, salgs[a], k, g2 ? g : 0, got, &ng);
                    if (ng != nw || memcmp(got, want, (size_t)nw * 8))
                        fail_msg("query %u dev %d alg %d k %u ranges %u G %08x: %u hits, oracle "
                                 "%u", qi, d, algos[a], k, ranges, g2 ? g : 0, ng, nw);
                }
                /* one ulp above the seed: a one-term query's k-th document,
                   which scores the seed exactly, must be lost */
                uint32_t ng;
                device_run(s, &p, &pl, salgs[a], k, g + 1, got, &ng);
                int differs = ng != nw || memcmp(got, want, (size_t)nw * 8);
                if (q.nterms == 1 && exact && !differs)
                    fail_msg("query %u dev %d alg %d k %u: G one ulp above the seed %08x still "
                             "gave the oracle's answer", qi, d, algos[a], k, g);
                broken += differs;
            }
            tdm_sprep_free(&p);
        }
        free(want);
        free(got);
        tdm_query_free(&q);
        tdm_oracle_close(or);
        tdm_search_handle_close(s);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
    if (!ran)
        skip(); /* no device runs the compressed variant */
    print_message("G one ulp above the seed broke %u runs\n", broken);
    assert_true(broken > 0);
}

/* ---- through the API, alone and in batches, every device */

/* zc: device d runs the compressed variant (else a decoded one must answer). */
static void check_result(const tdm_search_result *res, const uint64_t *want, uint32_t nw,
                         const char *what, uint32_t qi, int d, int algo, uint32_t k, int zc)
{
    if (res->status != TDM_OK)
        fail_msg("%s query %u dev %d alg %d k %u: %s", what, qi, d, algo, k, res->error);
    if (res->n != nw || (res->variant == TDM_VARIANT_COMPRESSED) != zc)
        fail_msg("%s query %u dev %d alg %d k %u: %zu hits (variant %d), oracle %u", what, qi, d,
                 algo, k, res->n, res->variant, nw);
    for (size_t i = 0; i < nw; i++) {
        uint64_t key = (uint64_t)tdm_f2u(res->hits[i].score) << 32 | (uint32_t)~res->hits[i].docid;
        if (key != want[i])
            fail_msg("%s query %u dev %d alg %d k %u rank %zu: %016llx vs oracle %016llx", what,
                     qi, d, algo, k, i, (unsigned long long)key, (unsigned long long)want[i]);
    }
}

#define NQ 6

static void api_seeded(void **state)
{
    tdm_engine *eng = *state;
    int small = tdm_test_small();
    static const int algos[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    static const char *codecs[] = {"bp256", "rice"};
    int zc[16];
    assert_true(tdm_engine_device_count(eng) <= 16);
    for (int d = 0; d < tdm_engine_device_count(eng); d++)
        zc[d] = tdm_test_zcur(eng, d, "api_seeded");
    for (uint64_t ci = 0; ci < 2; ci++) {
        uint32_t ndocs = small ? 500 : 8000;
        randcoll c;
        tdm_index *ix = random_index(300 + ci, ndocs, codecs[ci], &c, ci == 1);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_search *s;
        assert_int_equal(tdm_search_open(eng, ix, &s), TDM_OK);
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        tdm_rng r;
        tdm_rng_seed(&r, 71 + ci);
        tdm_query q;
        tdm_query_init(&q);
        tdm_search_term st[NQ][8];
        tdm_search_query bq[NQ];
        uint64_t *want[NQ];
        uint32_t nw[NQ];
        for (uint32_t round = 0; round < (small ? 2u : 6u); round++) {
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.k = pick_k(&r, ndocs);
            tdm_score_params sp = pick_params(round);
            o.scoring = sp.kind == TDM_SCORING_IMPACT ? TDM_SCORE_IMPACT : TDM_SCORE_BM25;
            o.k1 = sp.k1;
            o.b = sp.b;
            o.variant = TDM_VARIANT_COMPRESSED;
            for (uint32_t i = 0; i < NQ; i++) {
                bq[i] = (tdm_search_query){NULL, st[i], random_query(&r, &c, ir, &q, 8, st[i])};
                want[i] = malloc((size_t)o.k * 8);
                nw[i] = oracle_keys(or, &q, o.k, &sp, want[i]);
            }
            for (int d = 0; d < tdm_engine_device_count(eng); d++)
                for (size_t a = 0; a < 3; a++) {
                    o.device = d;
                    o.algorithm = algos[a];
                    for (uint32_t i = 0; i < NQ; i++) {
                        tdm_search_result *res = NULL;
                        if (tdm_search_terms(s, bq[i].terms, bq[i].nterms, &o, &res) != TDM_OK)
                            fail_msg("search: %s", tdm_last_error());
                        check_result(res, want[i], nw[i], "alone", round * NQ + i, d,
                                     algos[a], o.k, zc[d]);
                        tdm_search_result_free(res);
                    }
                    tdm_search_result *res[NQ];
                    if (tdm_search_batch(s, bq, NQ, &o, res) != TDM_OK)
                        fail_msg("batch: %s", tdm_last_error());
                    for (uint32_t i = 0; i < NQ; i++) {
                        check_result(res[i], want[i], nw[i], "batch", round * NQ + i, d,
                                     algos[a], o.k, zc[d]);
                        tdm_search_result_free(res[i]);
                    }
                }
            for (uint32_t i = 0; i < NQ; i++)
                free(want[i]);
        }
        tdm_query_free(&q);
        tdm_oracle_close(or);
        tdm_search_close(s);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
}

int main(void)
{
    (void)assert_same_index;
    setenv("TANDEM_ZR_SEED", "1", 1); /* the API test: seeded at every k */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_vs_ref),
        cmocka_unit_test(strict_on_devices),
        cmocka_unit_test(api_seeded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
