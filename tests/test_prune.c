/* Pruning with a shared threshold (cl/search_range.cl, cl/search_seed.cl):
 *  - the seed kernels on every device against tdm_search_seed_ref, on random
 *    term tables (empty lists, clamped bounds, impact and BM25, k from 1 to
 *    past every list);
 *  - the range kernel as C (prune_sim.h) against the oracle with and without
 *    the seed and the shared threshold, many range counts and waves;
 *  - WAND, BMW and MaxScore on every device with ranges short enough that the
 *    planner seeds them, against the oracle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "index/index_priv.h"
#include "index/writer.h"
#include "prune_sim.h"
#include "harness/oracle.h"
#include "drive/search.h"
#include "drive/search_seed.h"
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

/* ---- the seed kernels against the reference */

typedef struct seed_case {
    uint32_t nt, npost, ndocs, kind, k;
    float c0, c1;
    uint32_t *terms, *docs, *freqs, *doclens;
} seed_case;

static void seed_case_make(tdm_rng *r, seed_case *c)
{
    int small = tdm_test_small();
    c->nt = tdm_rng_range(r, 1, small ? 6 : 40);
    c->ndocs = tdm_rng_range(r, 1, small ? 2000 : 100000);
    c->kind = tdm_rng_range(r, 0, 1);
    c->c0 = tdm_rng_range(r, 1, 300) / 100.0f;
    c->c1 = tdm_rng_range(r, 0, 100) / 1000.0f;
    static const uint32_t ks[] = {1, 2, 10, 100, 1000};
    c->k = tdm_rng_range(r, 0, 5) == 5 ? tdm_rng_range(r, 1, 20000) : ks[tdm_rng_range(r, 0, 4)];
    c->terms = calloc((size_t)c->nt * TDM_SEARCH_TW, 4);
    uint32_t *df = malloc(c->nt * 4);
    c->npost = 0;
    for (uint32_t t = 0; t < c->nt; t++) {
        uint32_t shape = tdm_rng_range(r, 0, 4);
        df[t] = shape == 0 ? 0 : shape == 1 ? tdm_rng_range(r, 1, 3)
                                            : tdm_rng_range(r, 1, c->ndocs);
        c->npost += df[t];
    }
    c->docs = malloc((c->npost ? c->npost : 1) * 4);
    c->freqs = malloc((c->npost ? c->npost : 1) * 4);
    c->doclens = malloc(c->ndocs * 4);
    for (uint32_t d = 0; d < c->ndocs; d++)
        c->doclens[d] = tdm_rng_range(r, 1, 2000);
    uint32_t pos = 0;
    for (uint32_t t = 0; t < c->nt; t++) {
        uint32_t *w = c->terms + t * TDM_SEARCH_TW;
        w[0] = pos;
        w[1] = df[t];
        w[4] = tdm_f2u(tdm_rng_range(r, 1, 5000) / 97.0f);
        float best = 0;
        for (uint32_t i = 0; i < df[t]; i++) {
            c->docs[pos + i] = tdm_rng_range(r, 0, c->ndocs - 1);
            c->freqs[pos + i] = tdm_rng_range(r, 0, 3) ? tdm_rng_range(r, 1, 4)
                                                        : tdm_rng_range(r, 1, 60);
            float qw, f = (float)c->freqs[pos + i];
            memcpy(&qw, &w[4], 4);
            float s = c->kind ? qw * f
                              : (qw * f) / (f + (c->c0 + c->c1 * (float)c->doclens[c->docs[pos + i]]));
            best = s > best ? s : best;
        }
        /* the bound: the largest score (exact), above it, or below it (a
           clamp the kernel must survive), or 0 */
        uint32_t how = tdm_rng_range(r, 0, 4);
        w[5] = how <= 1 ? tdm_f2u(best) : how == 2 ? tdm_f2u(best * 3.5f)
                                     : how == 3 ? tdm_f2u(best * 0.7f) : 0;
        pos += df[t];
    }
    free(df);
}

static void seed_case_free(seed_case *c)
{
    free(c->terms);
    free(c->docs);
    free(c->freqs);
    free(c->doclens);
}

static cl_mem upload(tdm_device *d, const void *src, size_t bytes)
{
    cl_mem m = NULL;
    tdm_err err = {0};
    if (bytes < 4)
        bytes = 4;
    if (tdm_buffer_create(d, CL_MEM_READ_WRITE, bytes, NULL, &m, &err) != TDM_OK ||
        (src && tdm_upload(d, m, 0, bytes, src, 0, NULL, NULL, &err) != TDM_OK))
        fail_msg("buffer: %s", tdm_err_msg(&err));
    return m;
}

static void seed_device_vs_ref(void **state)
{
    tdm_engine *eng = *state;
    tdm_rng r;
    tdm_rng_seed(&r, 1313);
    int cases = tdm_test_small() ? 6 : 60;
    for (int i = 0; i < cases; i++) {
        seed_case c;
        seed_case_make(&r, &c);
        uint32_t want;
        assert_int_equal(tdm_search_seed_ref(c.terms, c.nt, c.docs, c.freqs, c.doclens, c.kind,
                                             c.c0, c.c1, c.k, &want),
                         TDM_OK);
        for (int dv = 0; dv < tdm_engine_device_count(eng); dv++) {
            tdm_device *d = tdm_engine_device(eng, dv);
            cl_mem mt = upload(d, c.terms, (size_t)c.nt * TDM_SEARCH_TW * 4);
            cl_mem md = upload(d, c.docs, (size_t)c.npost * 4);
            cl_mem mf = upload(d, c.freqs, (size_t)c.npost * 4);
            cl_mem ml = upload(d, c.doclens, (size_t)c.ndocs * 4);
            cl_mem mh = upload(d, NULL, tdm_search_seed_bytes(c.nt));
            tdm_err err = {0};
            cl_event done = NULL;
            uint32_t launches = 0, got[TDM_SEARCH_TW];
            /* twice: the second run trusts the first to have left the
               histogram zeroed (hist_zero, as a search's kept buffer does);
               a histogram left dirty would count twice and raise the seed */
            for (int run = 0; run < 2; run++) {
                if (tdm_search_seed_enqueue(d, NULL, md, mf, mt, ml, c.ndocs, mh, run, c.nt,
                                            c.npost, c.kind, c.c0, c.c1, c.k, NULL, &done,
                                            &launches, &err) != TDM_OK ||
                    tdm_download(d, mt, 0, sizeof got, got, 1, &done, NULL, &err) != TDM_OK)
                    fail_msg("seed: %s", tdm_err_msg(&err));
                clReleaseEvent(done);
                if (got[7] != want)
                    fail_msg("case %d device %d run %d (nt %u npost %u k %u kind %u): seed %08x, "
                             "reference %08x", i, dv, run, c.nt, c.npost, c.k, c.kind, got[7],
                             want);
            }
            launches /= 2;
            assert_int_equal(launches, c.npost ? 2 : 1);
            cl_mem ms[] = {mt, md, mf, ml, mh};
            for (size_t j = 0; j < 5; j++)
                clReleaseMemObject(ms[j]);
        }
        seed_case_free(&c);
    }
}

/* The reference's own edge cases: a bucket edge is a lower bound of the
 * k-th score, within 2^-7 of it, and 0 when no list holds k postings. */
static void seed_ref_edges(void **state)
{
    (void)state;
    uint32_t terms[2 * TDM_SEARCH_TW] = {0}, docs[4] = {0, 1, 2, 3}, freqs[4] = {1, 2, 3, 4};
    uint32_t dl[4] = {1, 1, 1, 1}, g = 1;
    terms[TDM_TW_DF] = 3; /* term 0: postings 0..2, impact, qw 1.5 */
    terms[TDM_TW_QW] = tdm_f2u(1.5f);
    terms[TDM_TW_BOUND] = tdm_f2u(4.5f);
    terms[TDM_SEARCH_TW + TDM_TW_POS] = 3;
    terms[TDM_SEARCH_TW + TDM_TW_DF] = 1; /* term 1: one posting, freq 4 */
    terms[TDM_SEARCH_TW + TDM_TW_QW] = tdm_f2u(1.0f);
    terms[TDM_SEARCH_TW + TDM_TW_BOUND] = tdm_f2u(4.0f);
    assert_int_equal(tdm_search_seed_ref(terms, 2, docs, freqs, dl, 1, 0, 0, 4, &g), TDM_OK);
    assert_int_equal(g, 0); /* no list of 4 */
    assert_int_equal(tdm_search_seed_ref(terms, 2, docs, freqs, dl, 1, 0, 0, 2, &g), TDM_OK);
    assert_int_equal(g, tdm_f2u(3.0f)); /* 2nd best of {1.5, 3, 4.5}: 3 exactly (low bits 0) */
    assert_int_equal(tdm_search_seed_ref(terms, 2, docs, freqs, dl, 1, 0, 0, 1, &g), TDM_OK);
    assert_int_equal(g, tdm_f2u(4.5f));
    terms[5] = tdm_f2u(4.5f * 512); /* k-th score 2^9 below the bound: not counted */
    assert_int_equal(tdm_search_seed_ref(terms, 2, docs, freqs, dl, 1, 0, 0, 2, &g), TDM_OK);
    assert_int_equal(g, 0);
    terms[5] = tdm_f2u(1.0f); /* a bound below the scores: clamped to the bound */
    assert_int_equal(tdm_search_seed_ref(terms, 2, docs, freqs, dl, 1, 0, 0, 2, &g), TDM_OK);
    assert_int_equal(g, tdm_f2u(1.0f));
    terms[4] = tdm_f2u(1.1f); /* 3.3 rounds down to its top 16 bits */
    terms[5] = tdm_f2u(10.0f);
    assert_int_equal(tdm_search_seed_ref(terms, 2, docs, freqs, dl, 1, 0, 0, 2, &g), TDM_OK);
    assert_true(g == (tdm_f2u(1.1f * 2) >> 16) << 16);
}

/* ---- exactness: the C model and the devices against the oracle */

/* With `ties`, every frequency is 1 or 2: impact scores then tie by the
 * thousand, at the k-th score too (the shared threshold's strict test). */
static tdm_index *random_index(uint64_t seed, uint32_t ndocs, const char *codec, randcoll *c,
                               int own_bm25, int ties)
{
    randcoll_init(c, seed, ndocs, 40);
    for (uint64_t i = 0; ties && i < c->nlists; i++)
        for (size_t j = 0; j < c->n[i]; j++)
            c->freqs[i][j] = 1 + (uint32_t)((c->docids[i][j] * 2654435761u) >> 31);
    tdm_coll_source src;
    randcoll_source(c, &src);
    tdm_iwriter_options o = {.codec = codec};
    if (own_bm25) {
        o.k1 = 0.9;
        o.b = 0.4;
        o.bm25_as_given = 1;
    }
    tdm_err err = {0};
    char *path = path_in(tdm_test_tmpdir("prune"), "p.tdm");
    if (tdm_collection_write(&src, path, &o, &err) != TDM_OK)
        fail_msg("write: %s", tdm_err_msg(&err));
    tdm_index *ix;
    if (tdm_index_open(path, &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    return ix;
}

static void random_query(tdm_rng *r, const randcoll *c, const tdm_ireader *ir, tdm_query *q,
                         uint32_t maxn)
{
    tdm_query_reset(q);
    uint32_t n = tdm_rng_range(r, 1, maxn);
    tdm_err err = {0};
    for (uint32_t i = 0; i < n; i++) {
        const char *t = c->terms[tdm_rng_range(r, 0, (uint32_t)c->nlists - 1)];
        double w = tdm_rng_range(r, 0, 2) ? 1.0 : tdm_rng_range(r, 1, 400) / 64.0;
        assert_int_equal(tdm_query_add_term(q, ir, t, strlen(t), w, &err), TDM_OK);
    }
    tdm_query_finish(q);
}

static void oracle_keys(tdm_oracle *or, const tdm_query *q, uint32_t k,
                        const tdm_score_params *sp, uint64_t *keys, uint32_t *n)
{
    tdm_oracle_request req = {k, TDM_MATCH_OR, TDM_ORACLE_FLOAT, *sp};
    tdm_hit *h = malloc(k * sizeof *h);
    size_t got = 0;
    tdm_err err = {0};
    if (tdm_oracle_search(or, q, &req, h, &got, NULL, &err) != TDM_OK)
        fail_msg("oracle: %s", tdm_err_msg(&err));
    for (size_t i = 0; i < got; i++)
        keys[i] = (uint64_t)tdm_f2u((float)h[i].score) << 32 | (uint32_t)~h[i].docid;
    *n = (uint32_t)got;
    free(h);
}

static tdm_score_params pick_params(tdm_rng *r)
{
    tdm_score_params sp = tdm_score_params_default();
    uint32_t x = tdm_rng_range(r, 0, 3);
    if (x == 1)
        sp.kind = TDM_SCORING_IMPACT;
    else if (x == 2) {
        sp.k1 = 0.9;
        sp.b = 0.4;
    }
    return sp;
}

static void sim_vs_oracle(void **state)
{
    (void)state;
    int small = tdm_test_small();
    static const int salgs[] = {TDM_SALG_WAND, TDM_SALG_BMW, TDM_SALG_MAXSCORE, TDM_SALG_OR};
    static const char *codecs[] = {"bp128", "pef", "vbyte128"};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        uint32_t ndocs = small ? 400 * (uint32_t)seed : 6000 * (uint32_t)seed;
        randcoll c;
        tdm_index *ix = random_index(seed, ndocs, codecs[seed - 1], &c, seed == 2, seed == 3);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        tdm_rng r;
        tdm_rng_seed(&r, seed * 77);
        tdm_query q;
        tdm_query_init(&q);
        uint64_t *got = malloc(10005 * 8), *want = malloc(10005 * 8);
        for (int qi = 0; qi < (small ? 6 : 40); qi++) {
            /* ties: single terms, whose k-th score is the seed's edge */
            random_query(&r, &c, ir, &q, seed == 3 && qi % 3 ? 1 : 8);
            tdm_score_params sp = pick_params(&r);
            if (seed == 3 && qi % 2)
                sp.kind = TDM_SCORING_IMPACT;
            static const uint32_t ks[] = {1, 10, 1000, 10000};
            prune_opts o = {salgs[qi % 4], ks[tdm_rng_range(&r, 0, 3)], 0, 0, 0, 1};
            o.ranges = tdm_rng_range(&r, 0, 2) ? tdm_rng_range(&r, 1, 64)
                                               : tdm_rng_range(&r, 1, ndocs);
            uint32_t nw = 0, ng = 0;
            oracle_keys(or, &q, o.k, &sp, want, &nw);
            for (int mode = 0; mode < 6; mode++) { /* seed none, device, host; shared */
                o.seed = mode % 3;
                o.share = mode / 3;
                o.wave = tdm_rng_range(&r, 1, 8);
                prune_counts pc = {0};
                if (prune_sim(ir, &q, &sp, &o, got, &ng, &pc, &err) != TDM_OK)
                    fail_msg("sim: %s", tdm_err_msg(&err));
                if (ng != nw || memcmp(got, want, (size_t)nw * 8) != 0)
                    fail_msg("seed %llu query %d alg %d k %u ranges %u mode %d: %u hits, oracle "
                             "%u (first %016llx vs %016llx)", (unsigned long long)seed, qi,
                             o.salg, o.k, o.ranges, mode, ng, nw,
                             (unsigned long long)(ng ? got[0] : 0),
                             (unsigned long long)(nw ? want[0] : 0));
            }
        }
        free(got);
        free(want);
        tdm_query_free(&q);
        tdm_oracle_close(or);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
}

/* Short ranges (seeded by the planner) on every device, against the oracle. */
static void devices_seeded(void **state)
{
    tdm_engine *eng = *state;
    int small = tdm_test_small();
    static const int algos[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    for (uint64_t seed = 4; seed <= 5; seed++) {
        uint32_t ndocs = small ? 500 : 30000;
        randcoll c;
        tdm_index *ix = random_index(seed, ndocs, seed == 4 ? "bp128" : "rice", &c, 0, seed == 5);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_search *s;
        assert_int_equal(tdm_search_open(eng, ix, &s), TDM_OK);
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        tdm_rng r;
        tdm_rng_seed(&r, seed * 91);
        tdm_query q;
        tdm_query_init(&q);
        uint64_t *want = malloc(1000 * 8);
        for (int qi = 0; qi < (small ? 3 : 12); qi++) {
            tdm_search_term st[8];
            uint32_t nterm = tdm_rng_range(&r, 2, 8);
            for (uint32_t i = 0; i < nterm; i++)
                st[i] = (tdm_search_term){c.terms[tdm_rng_range(&r, 0, (uint32_t)c.nlists - 1)],
                                          0, 1.0};
            tdm_query_reset(&q);
            for (uint32_t i = 0; i < nterm; i++)
                assert_int_equal(tdm_query_add_term(&q, ir, st[i].term, strlen(st[i].term), 1.0,
                                                    &err), TDM_OK);
            tdm_query_finish(&q);
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.k = qi % 2 ? 1000 : 10;
            o.scoring = qi % 3 == 1 || seed == 5 ? TDM_SCORE_IMPACT : TDM_SCORE_BM25;
            o.ranges = o.k == 10 ? ndocs / 32 : ndocs / 64 + 1; /* rlen < 16 k: seeded */
            tdm_score_params sp = {o.scoring == TDM_SCORE_IMPACT ? TDM_SCORING_IMPACT
                                                                  : TDM_SCORING_BM25, o.k1, o.b};
            uint32_t nw = 0;
            oracle_keys(or, &q, o.k, &sp, want, &nw);
            for (int d = 0; d < tdm_engine_device_count(eng); d++)
                for (size_t a = 0; a < 3; a++) {
                    o.device = d;
                    o.algorithm = algos[a];
                    tdm_search_result *res = NULL;
                    if (tdm_search_terms(s, st, nterm, &o, &res) != TDM_OK)
                        fail_msg("search: %s", tdm_last_error());
                    if (res->n != nw)
                        fail_msg("query %d dev %d alg %d: %zu hits, oracle %u", qi, d, algos[a],
                                 res->n, nw);
                    for (size_t i = 0; i < nw; i++) {
                        uint64_t k = (uint64_t)tdm_f2u(res->hits[i].score) << 32 |
                                     (uint32_t)~res->hits[i].docid;
                        if (k != want[i])
                            fail_msg("query %d dev %d alg %d k %u rank %zu: %016llx vs oracle "
                                     "%016llx", qi, d, algos[a], o.k, i, (unsigned long long)k,
                                     (unsigned long long)want[i]);
                    }
                    tdm_search_result_free(res);
                }
        }
        free(want);
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_ref_edges),
        cmocka_unit_test(seed_device_vs_ref),
        cmocka_unit_test(sim_vs_oracle),
        cmocka_unit_test(devices_seeded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
