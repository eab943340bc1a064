/* Search on the devices (tdm_search_*) against the oracle (harness/oracle.h):
 * random indexes of every codec, 1 to 100k documents (small under
 * TANDEM_TEST_SMALL); random queries of 1 to 64 terms with repeats, unknown
 * terms and weights; uniform, clustered and one-posting lists; k = 1, 10,
 * 1000 and above the matches; BM25 with the index's parameters (default and
 * not) and others, and impact scores; every algorithm on every
 * device of the engine, with the planner's ranges and with odd range counts.
 * Each result must be the float oracle's list exactly (same documents, same
 * order, the same float bits) and within 1e-5 relative of the double
 * oracle's scores. Also: the request errors, text queries through the
 * index's stemmer, and many threads on one handle. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_priv.h"
#include "index/writer.h"
#include "harness/oracle.h"
#include "drive/search.h"
#include "drive/search_testing.h"
#include "engine/engine.h"
#include "plan/plan_testing.h"
#include "plan/search_hseed.h"
#include "plan/sprep.h"
#include "query/bounds.h"
#include "forge.h"
#include "randcoll.h"
#include "residx.h"
#include "searchfix.h"
#include "testutil.h"

static const char *codecs[] = {"bp128", "bp256", "vbyte128", "vbyte1024", "pef",
                               "pfor",  "raw",   "rice",     "newpfd64",  "newpfd128"};
#define NCODECS (sizeof codecs / sizeof *codecs)

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND,     TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
#define NALGOS (sizeof algos / sizeof *algos)

/* Writes c; with `own_bm25` the stored bounds are for k1 0.9, b 0.4 (the
 * requests that use them then take the stored path with other values). */
static const char *write_index_bm25(randcoll *c, const char *dir, const char *codec,
                                    const char *name, int own_bm25)
{
    tdm_iwriter_options o = searchfix_writer(codec, own_bm25, 0);
    return randcoll_write(c, dir, name, &o);
}

static const char *write_index(randcoll *c, const char *dir, const char *codec, const char *name)
{
    return write_index_bm25(c, dir, codec, name, 0);
}

/* A random bp128 index (seed, ndocs, nterms: randcoll_init's) written as
 * name in the test folder tag and opened, *ir its reader and *or its
 * oracle. */
static tdm_index *oracle_index(randcoll *c, uint64_t seed, uint32_t ndocs, uint64_t nterms,
                               const char *tag, const char *name, const tdm_ireader **ir,
                               tdm_oracle **or)
{
    randcoll_init(c, seed, ndocs, nterms);
    tdm_index *ix;
    if (tdm_index_open(write_index(c, tdm_test_tmpdir(tag), "bp128", name), &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    *ir = tdm_index_ireader(ix);
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(*ir, or, &err), TDM_OK);
    return ix;
}

/* Skewed lists beside randcoll's uniform ones: every third list becomes
 * bursts of consecutive docids (clustered, as crawl-ordered collections
 * have them), so that some docid ranges hold most postings and others none. */
static void cluster_lists(randcoll *c, tdm_rng *r)
{
    for (uint64_t i = 2; i < c->nlists; i += 3) {
        size_t n = 0;
        uint32_t nb = tdm_rng_range(r, 1, 6);
        for (uint32_t b = 0; b < nb; b++) {
            uint32_t start = tdm_rng_range(r, 0, c->ndocs - 1);
            uint32_t len = tdm_rng_range(r, 1, c->ndocs / 8 + 1);
            if (n && start <= c->docids[i][n - 1])
                start = c->docids[i][n - 1] + 1;
            for (uint32_t d = start; d < c->ndocs && d < start + len; d++) {
                c->docids[i][n] = d;
                c->freqs[i][n++] = tdm_rng_range(r, 1, 40);
            }
        }
        if (n == 0) {
            c->docids[i][0] = 0;
            c->freqs[i][n++] = 1;
        }
        c->n[i] = n;
    }
}

typedef struct fixture {
    tdm_engine *eng;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->eng = tdm_test_engine();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tdm_engine_close(f->eng);
    free(f);
    return 0;
}

/* When > 0, the variant every search of check_search must report; when < 0,
 * the variant none may report (-COMPRESSED on a device that never runs it). */
static int expect_variant;

/* Searches and compares with the oracle; returns the hits found, and adds
 * the search's bytes up and launches to *up and *launches (if not NULL). */
static size_t check_search_costs(tdm_search *s, tdm_oracle *or, const tdm_ireader *ir,
                                 const tdm_search_term *st, size_t n,
                                 const tdm_search_options *o, const char *what, uint64_t *up,
                                 uint64_t *launches)
{
    tdm_search_result *res = NULL;
    if (tdm_search_terms(s, st, n, o, &res) != TDM_OK)
        fail_msg("%s: search: %s", what, tdm_last_error());
    if (up)
        *up += res->bytes_up;
    if (launches)
        *launches += res->launches;
    int match = searchfix_match(or, ir, st, n, o);
    tdm_hit *wf = malloc(o->k * sizeof *wf), *wd = malloc(o->k * sizeof *wd);
    size_t nf = searchfix_oracle(or, ir, st, n, o, match, TDM_ORACLE_FLOAT, wf, NULL);
    size_t nd = searchfix_oracle(or, ir, st, n, o, match, TDM_ORACLE_DOUBLE, wd, NULL);
    searchfix_same_oracle(res, wf, nf, ir, what);
    assert_int_equal(nd, nf);
    /* the float order may differ from double's on near-ties: compare by docid */
    for (size_t i = 0; i < nf; i++) {
        double want = -1;
        for (size_t j = 0; j < nd; j++)
            if (wd[j].docid == wf[i].docid)
                want = wd[j].score;
        if (want >= 0 && fabs(wf[i].score - want) > 1e-5 * want)
            fail_msg("%s: float %.9g vs double %.17g", what, wf[i].score, want);
    }
    assert_true(res->algorithm != TDM_ALGO_AUTO);
    if (expect_variant > 0 && res->variant != expect_variant)
        fail_msg("%s: variant %d ran, not %d", what, res->variant, expect_variant);
    if (expect_variant < 0 && res->variant == -expect_variant)
        fail_msg("%s: variant %d ran where it never should", what, res->variant);
    free(wf);
    free(wd);
    tdm_search_result_free(res);
    return nf;
}

static size_t check_search(tdm_search *s, tdm_oracle *or, const tdm_ireader *ir,
                           const tdm_search_term *st, size_t n, const tdm_search_options *o,
                           const char *what)
{
    return check_search_costs(s, or, ir, st, n, o, what, NULL, NULL);
}

/* A random query of 1..maxt terms: repeats (one in 6), unknown terms,
 * weights. */
static size_t random_terms(tdm_rng *r, const randcoll *c, tdm_search_term *st, size_t maxt,
                           int weighted)
{
    return searchfix_terms(r, c, st, maxt, weighted, 6);
}

/* The preparation of a search (tdm_sprep_build_defer: the stored block
 * bounds left for later) makes, once its bounds are made, the very term
 * table and bounds the plain build makes, bit for bit. */
static void deferred_same(const tdm_ireader *ir, const tdm_search_term *st, size_t n,
                          const tdm_score_params *sp, const char *what)
{
    tdm_query q;
    searchfix_query(&q, ir, st, n, what);
    tdm_err err = {0};
    tdm_sprep a, b;
    assert_int_equal(tdm_sprep_build(&a, ir, &q, sp, &err), TDM_OK);
    assert_int_equal(tdm_sprep_build_defer(&b, ir, &q, sp, NULL, &err), TDM_OK);
    assert_int_equal(a.nt, b.nt);
    assert_int_equal(a.nbmax, b.nbmax);
    assert_int_equal(a.term_bounds, b.term_bounds);
    assert_true(!b.bsrc || b.term_bounds);
    if (memcmp(a.terms, b.terms, (size_t)a.nt * TDM_SEARCH_TW * 4) != 0)
        fail_msg("%s: deferred bounds: another term table", what);
    /* the host seed's view: a term's bounds made alone, the same seed */
    float *one = malloc((a.nbmax ? a.nbmax : 1) * sizeof *one);
    for (uint32_t t = 0; !a.device_bounds && t < a.nt; t++) {
        const uint32_t *w = a.terms + (size_t)t * TDM_SEARCH_TW;
        uint32_t nb = (w[TDM_TW_DF] + w[TDM_TW_BSIZE] - 1) / w[TDM_TW_BSIZE];
        if (memcmp(tdm_sprep_term_bounds(&b, t, one), a.bmax + w[TDM_TW_BMAX], nb * 4) != 0)
            fail_msg("%s: deferred bounds: term %u's alone differ", what, t);
    }
    free(one);
    /* and with a cache of k-th scores (no floor: each term's whole value
       kept), cold then warm, the seed without one */
    tdm_bcache *bc;
    assert_int_equal(tdm_bcache_open(TDM_BCACHE_DEFAULT_BYTES, &bc, &err), TDM_OK);
    for (uint32_t k = 1; k <= 1000; k *= 10) {
        uint32_t ga, gb, gc, gw;
        assert_int_equal(tdm_search_hseed(&a, ir, NULL, k, &ga, &err), TDM_OK);
        assert_int_equal(tdm_search_hseed(&b, ir, NULL, k, &gb, &err), TDM_OK);
        assert_int_equal(tdm_search_hseed(&b, ir, bc, k, &gc, &err), TDM_OK);
        assert_int_equal(tdm_search_hseed(&b, ir, bc, k, &gw, &err), TDM_OK);
        assert_int_equal(ga, gb);
        assert_int_equal(ga, gc);
        assert_int_equal(ga, gw);
    }
    tdm_bcache_close(bc);
    assert_int_equal(tdm_sprep_bounds_fill(&b, &err), TDM_OK);
    assert_null(b.bsrc);
    assert_int_equal(tdm_sprep_bounds_fill(&b, &err), TDM_OK); /* nothing the second time */
    if (!a.device_bounds && a.nbmax && memcmp(a.bmax, b.bmax, a.nbmax * 4) != 0)
        fail_msg("%s: deferred bounds: other block bounds", what);
    tdm_sprep_free(&a);
    tdm_sprep_free(&b);
    tdm_query_free(&q);
}

static void run_collection(tdm_engine *eng, uint64_t seed, uint32_t ndocs, uint64_t nterms,
                           const char *codec, int queries, size_t maxt)
{
    static const uint32_t ks[] = {1, 10, 1000, 10};
    const char *dir = tdm_test_tmpdir("search_rand");
    randcoll c;
    randcoll_init(&c, seed, ndocs, nterms);
    tdm_rng r;
    tdm_rng_seed(&r, seed * 31 + 7);
    if (seed % 2 == 0)
        cluster_lists(&c, &r);
    tdm_index *ix;
    if (tdm_index_open(write_index_bm25(&c, dir, codec, "r.tdm", seed % 3 == 0), &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    const tdm_ireader *ir = tdm_index_ireader(ix);
    tdm_search *s;
    if (tdm_search_open(eng, ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    tdm_oracle *or;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
    tdm_search_term st[64];
    int ndev = tdm_engine_device_count(eng);
    for (int qi = 0; qi < queries; qi++) {
        size_t n = random_terms(&r, &c, st, qi % 4 == 3 ? maxt : 6, qi % 3 == 1);
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.k = qi % 5 == 4 ? ndocs + 5 : ks[qi % 4];
        if (o.k > TDM_SEARCH_K_MAX)
            o.k = TDM_SEARCH_K_MAX;
        int pk = qi % 4;
        if (pk == 1) {
            o.k1 = 0.9;
            o.b = 0.4;
        } else if (pk == 2) {
            o.scoring = TDM_SCORE_IMPACT;
        } else if (pk == 3 && qi % 8 == 7) {
            o.k1 = 2.0;
            o.b = 1.0;
        }
        tdm_score_params sp = tdm_score_params_for(ir, o.scoring, o.k1, o.b);
        deferred_same(ir, st, n, &sp, "deferred bounds");
        for (int d = 0; d < ndev; d++)
            for (size_t a = 0; a < NALGOS; a++) {
                o.device = d;
                o.algorithm = algos[a];
                o.ranges = qi % 3 == 2 ? tdm_rng_range(&r, 1, qi % 6 == 5 ? 3000 : 40) : 0;
                o.variant = (int)((qi + a) % 4); /* auto, item, group, compressed */
                /* the compressed variant's scratch in both layouts on every device */
                int zl = (int)((qi / 4 + a + d) % 2);
                tdm_search_zr_layout_force(zl);
                char what[256];
                snprintf(what, sizeof what, "%s ndocs %u seed %llu query %d (%zu terms) k %u "
                         "%s dev %d ranges %u variant %d layout %d scoring %d k1 %g b %g", codec,
                         ndocs, (unsigned long long)seed, qi, n, o.k,
                         tdm_algorithm_name(o.algorithm), d, o.ranges, o.variant, zl, o.scoring,
                         o.k1, o.b);
                check_search(s, or, ir, st, n, &o, what);
                tdm_search_zr_layout_force(-1);
            }
    }
    tdm_oracle_close(or);
    tdm_search_close(s);
    tdm_index_close(ix);
    randcoll_free(&c);
}

static void random_small_indexes(void **state)
{
    fixture *f = *state;
    int small = tdm_test_small();
    for (uint64_t seed = 1; seed <= NCODECS; seed++) {
        uint32_t ndocs = seed == 1 ? 1 : seed == 2 ? 3 : (uint32_t)(small ? 60 + 10 * seed : 300 * seed);
        run_collection(f->eng, seed, ndocs, 30, codecs[seed - 1], small ? 3 : 12, small ? 12 : 64);
    }
}

static void random_large_indexes(void **state)
{
    fixture *f = *state;
    if (tdm_test_small()) {
        skip();
        return;
    }
    run_collection(f->eng, 101, 20000, 60, "bp128", 10, 64);
    run_collection(f->eng, 102, 100000, 40, "pef", 6, 32);
    run_collection(f->eng, 104, 60000, 40, "vbyte128", 6, 16);
}

/* The single query's select stages and merge (drive/search_dev.c) at three
 * values of TANDEM_MERGE_DIRECT_KEYS (read at engine open): 1 (select
 * stages wherever a query has more than 8 ranges), 9,000 (at k = 1,000
 * the merge takes 9 slices, more than a stage's 8: a second stage of 15
 * slices a group after the first's 128) and 2^24 (never a stage), with
 * the kernels' radix select (TANDEM_MERGE_FILTER=off), their filter (on)
 * and the device's rule (unset), the small kernels at k <= 16
 * (TANDEM_MERGE_SMALL=on), not (off: the filter or the radix select at
 * small k) and the rule, the first select stage in the range kernel's
 * launch (TANDEM_RANGE_SELECT=on: groups of 64 ranges on a CPU too, then
 * a second stage at k = 1,000 and 9,000, the merge directly at 2^24) or
 * not (off), for k
 * around the kernels' edges and range counts up to 3,000, on every device:
 * each answer the oracle's, and fewer launches where the merge takes the
 * candidates directly. */
static void merge_direct_keys(void **state)
{
    (void)state;
    int small = tdm_test_small();
    static const char *vals[] = {"1", "9000", "16777216"}, *filters[] = {"off", "on", NULL};
    static const char *smalls[] = {"on", "off", NULL}, *rsels[] = {"off", "on", "on"};
    static const uint32_t ks[] = {1, 10, 16, 17, 1000};
    static const uint32_t ranges[] = {0, 9, 40, 1100, 3000};
    static const int al[] = {TDM_ALGO_OR, TDM_ALGO_AND, TDM_ALGO_MAXSCORE};
    randcoll c;
    const tdm_ireader *ir;
    tdm_oracle *or;
    tdm_index *ix = oracle_index(&c, 211, small ? 2000 : 12000, 12, "merge_direct", "m.tdm", &ir,
                                 &or);
    /* launches of each query at the first and last value, by device */
    uint32_t fewer = 0;
    for (size_t v = 0; v < sizeof vals / sizeof *vals; v++) {
        setenv("TANDEM_MERGE_DIRECT_KEYS", vals[v], 1);
        if (filters[v])
            setenv("TANDEM_MERGE_FILTER", filters[v], 1);
        else
            unsetenv("TANDEM_MERGE_FILTER");
        if (smalls[v])
            setenv("TANDEM_MERGE_SMALL", smalls[v], 1);
        else
            unsetenv("TANDEM_MERGE_SMALL");
        setenv("TANDEM_RANGE_SELECT", rsels[v], 1);
        tdm_engine *eng = tdm_test_engine();
        tdm_search *s;
        if (tdm_search_open(eng, ix, &s) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        tdm_rng r;
        tdm_rng_seed(&r, 77); /* the same queries at every value */
        for (int qi = 0; qi < (small ? 4 : 12); qi++) {
            tdm_search_term st[16];
            size_t n = random_terms(&r, &c, st, 4, 0);
            for (int d = 0; d < tdm_engine_device_count(eng); d++)
                for (size_t a = 0; a < sizeof al / sizeof *al; a++) {
                    tdm_search_options o;
                    tdm_search_options_init(&o);
                    o.device = d;
                    o.algorithm = al[a];
                    o.k = ks[(qi + a) % 5];
                    o.ranges = ranges[((size_t)qi + 2 * a) % 5];
                    /* the compressed variant too (its _sel kernel) */
                    o.variant = qi % 3 == 2 ? TDM_VARIANT_COMPRESSED : TDM_VARIANT_ITEM;
                    char what[200];
                    snprintf(what, sizeof what, "TANDEM_MERGE_DIRECT_KEYS=%s FILTER=%s SMALL=%s "
                             "RANGE_SELECT=%s query %d k %u %s dev %d ranges %u variant %d",
                             vals[v], filters[v] ? filters[v] : "-",
                             smalls[v] ? smalls[v] : "-", rsels[v], qi, o.k,
                             tdm_algorithm_name(o.algorithm), d, o.ranges, o.variant);
                    check_search(s, or, ir, st, n, &o, what);
                }
        }
        /* the fused kernels ran exactly where TANDEM_RANGE_SELECT=on */
        for (int d = 0; d < tdm_engine_device_count(eng); d++) {
            tdm_device *dev = tdm_engine_device(eng, d);
            size_t nr = tdm_kcache_count(dev, "tdm_search_range_sel");
            size_t nz = tdm_kcache_count(dev, "tdm_search_zrange_sel");
            int on = strcmp(rsels[v], "on") == 0;
            /* no compressed kernels on rusticl (no_zcur): a decoded variant ran */
            int zc = tdm_test_zcur(eng, d, "merge_direct_keys (TANDEM_RANGE_SELECT)");
            if (on ? !nr || (zc && !nz) : nr || nz)
                fail_msg("TANDEM_RANGE_SELECT=%s dev %d: range_sel %zu, zrange_sel %zu kernels "
                         "pooled", rsels[v], d, nr, nz);
        }
        /* a query of 3,000 ranges at k = 10: select stages at 1, none at 2^24 */
        tdm_search_term one = {.term = c.terms[0], .weight = 1.0f};
        for (int d = 0; d < tdm_engine_device_count(eng); d++) {
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.device = d;
            o.algorithm = TDM_ALGO_OR;
            o.ranges = 3000;
            o.variant = TDM_VARIANT_ITEM;
            tdm_search_result *res = NULL;
            if (tdm_search_terms(s, &one, 1, &o, &res) != TDM_OK)
                fail_msg("search: %s", tdm_last_error());
            if (v == 0)
                fewer += res->launches;
            else if (v == 2)
                fewer -= res->launches;
            tdm_search_result_free(res);
        }
        tdm_search_close(s);
        tdm_engine_close(eng);
    }
    unsetenv("TANDEM_MERGE_DIRECT_KEYS");
    unsetenv("TANDEM_MERGE_FILTER");
    unsetenv("TANDEM_MERGE_SMALL");
    unsetenv("TANDEM_RANGE_SELECT");
    if ((int32_t)fewer <= 0)
        fail_msg("TANDEM_MERGE_DIRECT_KEYS=16777216 launched no fewer kernels than =1");
    tdm_oracle_close(or);
    tdm_index_close(ix);
    randcoll_free(&c);
}

/* Ranked AND on the decoded variant with its block selection
 * (TANDEM_AND_SELECT=on, the rule) and with every block of its lists
 * decoded (off), on every device: each answer the oracle's, the selection's
 * kernel run exactly where it is on. */
static void and_select_switch(void **state)
{
    (void)state;
    int small = tdm_test_small();
    static const char *vals[] = {"off", "on"};
    static const uint32_t ks[] = {1, 10, 100};
    randcoll c;
    const tdm_ireader *ir;
    tdm_oracle *or;
    tdm_index *ix = oracle_index(&c, 307, small ? 2000 : 12000, 10, "and_select", "a.tdm", &ir,
                                 &or);
    setenv("TANDEM_HOST_MAX_POSTINGS", "0", 1); /* every query on a device */
    for (size_t v = 0; v < 2; v++) {
        setenv("TANDEM_AND_SELECT", vals[v], 1);
        tdm_engine *eng = tdm_test_engine();
        tdm_search *s;
        if (tdm_search_open(eng, ix, &s) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        tdm_rng r;
        tdm_rng_seed(&r, 91);
        for (int qi = 0; qi < (small ? 6 : 16); qi++) {
            tdm_search_term st[16];
            size_t n = random_terms(&r, &c, st, 4, qi % 2);
            for (int d = 0; d < tdm_engine_device_count(eng); d++) {
                tdm_search_options o;
                tdm_search_options_init(&o);
                o.device = d;
                o.algorithm = TDM_ALGO_AND;
                o.k = ks[qi % 3];
                o.variant = TDM_VARIANT_ITEM;
                char what[120];
                snprintf(what, sizeof what, "TANDEM_AND_SELECT=%s query %d k %u dev %d", vals[v],
                         qi, o.k, d);
                check_search(s, or, ir, st, n, &o, what);
            }
        }
        for (int d = 0; d < tdm_engine_device_count(eng); d++) {
            size_t ns = tdm_kcache_count(tdm_engine_device(eng, d), "tdm_and_select");
            if (v == 0 ? ns != 0 : ns == 0)
                fail_msg("TANDEM_AND_SELECT=%s dev %d: tdm_and_select pooled %zu times", vals[v],
                         d, ns);
        }
        tdm_search_close(s);
        tdm_engine_close(eng);
    }
    unsetenv("TANDEM_AND_SELECT");
    unsetenv("TANDEM_HOST_MAX_POSTINGS");
    tdm_oracle_close(or);
    tdm_index_close(ix);
    randcoll_free(&c);
}

/* ---- errors and edge cases */

static tdm_index *small_index(const char *tag, randcoll *c)
{
    randcoll_init(c, 9, 200, 20);
    tdm_index *ix;
    if (tdm_index_open(write_index(c, tdm_test_tmpdir(tag), NULL, "e.tdm"), &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    return ix;
}

static void request_errors(void **state)
{
    fixture *f = *state;
    randcoll c;
    tdm_index *ix = small_index("search_err", &c);
    tdm_search *s;
    assert_int_equal(tdm_search_open(f->eng, ix, &s), TDM_OK);
    /* the uploads tdm_search_open started, waited for (twice: done is done) */
    assert_int_equal(tdm_search_wait_ready(NULL), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "tdm_search_wait_ready"));
    assert_int_equal(tdm_search_wait_ready(s), TDM_OK);
    assert_int_equal(tdm_search_wait_ready(s), TDM_OK);
    tdm_search_result *res = NULL;
    tdm_search_options o;
    tdm_search_term t = {c.terms[3], 0, 1.0};

    tdm_search_options_init(&o);
    o.k = 0;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_null(res);
    assert_non_null(strstr(tdm_last_error(), "k = 0"));
    o.k = TDM_SEARCH_K_MAX + 1;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "k = 10001"));
    o.k = TDM_SEARCH_K_MAX;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_OK);
    assert_string_equal(tdm_last_error(), "");
    tdm_search_result_free(res);

    tdm_search_options_init(&o);
    o.variant = TDM_VARIANT_COMPRESSED + 1;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "variant"));
    tdm_search_options_init(&o);
    o.algorithm = 42;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "algorithm"));
    tdm_search_options_init(&o);
    o.device = tdm_engine_device_count(f->eng);
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "device"));
    tdm_search_options_init(&o);
    o.b = 1.5;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "b = 1.5"));
    /* Issue 27 item 5: a k1 that made every score inf or NaN (no hits, no
     * error), and weights past a float's range or below its normal range,
     * are refused whatever the scoring (tandem.h's bounds). */
    static const double bad_k1[] = {1e308, TDM_BM25_K1_MAX * 1.01, -0.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_k1 / sizeof *bad_k1; i++)
        for (int scoring = TDM_SCORE_BM25; scoring <= TDM_SCORE_IMPACT; scoring++) {
            tdm_search_options_init(&o);
            o.k1 = bad_k1[i];
            o.scoring = scoring;
            assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
            assert_non_null(strstr(tdm_last_error(), "k1 = "));
            assert_int_equal(tdm_search_text(s, c.terms[3], &o, &res), TDM_ERR_INVALID_ARG);
        }
    static const double bad_w[] = {3e38, TDM_WEIGHT_MAX * 1.01, 1e-39, TDM_WEIGHT_MIN / 2, NAN,
                                   INFINITY, 0};
    for (size_t i = 0; i < sizeof bad_w / sizeof *bad_w; i++) {
        tdm_search_term w = {c.terms[3], 0, bad_w[i]};
        assert_int_equal(tdm_search_terms(s, &w, 1, NULL, &res), TDM_ERR_INVALID_ARG);
        assert_non_null(strstr(tdm_last_error(), "weight"));
    }
    /* At the bounds, the largest k1 and a weight given the most times sum
     * to finite scores, under both scorings. */
    static tdm_search_term heavy[TDM_SEARCH_MAX_TERMS];
    for (size_t i = 0; i < TDM_SEARCH_MAX_TERMS; i++)
        heavy[i] = (tdm_search_term){c.terms[i % 2 ? 3 : 5], 0,
                                     i < 2 ? TDM_WEIGHT_MIN : TDM_WEIGHT_MAX};
    for (int scoring = TDM_SCORE_BM25; scoring <= TDM_SCORE_IMPACT; scoring++) {
        tdm_search_options_init(&o);
        o.k1 = TDM_BM25_K1_MAX;
        o.scoring = scoring;
        assert_int_equal(tdm_search_terms(s, heavy, TDM_SEARCH_MAX_TERMS, &o, &res), TDM_OK);
        assert_true(res->n > 0);
        for (size_t i = 0; i < res->n; i++)
            assert_true(isfinite(res->hits[i].score) && res->hits[i].score > 0);
        tdm_search_result_free(res);
    }
    tdm_search_options_init(&o);
    o.struct_size = 0;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "struct_size"));
    t.weight = -1;
    assert_int_equal(tdm_search_terms(s, &t, 1, NULL, &res), TDM_ERR_INVALID_ARG);
    t.weight = 1;

    /* more than 1024 terms (repeats count) */
    tdm_search_term *many = malloc(1025 * sizeof *many);
    for (size_t i = 0; i < 1025; i++)
        many[i] = (tdm_search_term){c.terms[i % c.nlists], 0, 1.0};
    assert_int_equal(tdm_search_terms(s, many, 1025, NULL, &res), TDM_ERR_LIMIT);
    assert_null(res);
    assert_int_equal(tdm_search_terms(s, many, 1024, NULL, &res), TDM_OK);
    assert_true(res->n > 0);
    tdm_search_result_free(res);
    free(many);

    /* empty and unknown-only queries: no results, no error */
    assert_int_equal(tdm_search_terms(s, NULL, 0, NULL, &res), TDM_OK);
    assert_int_equal(res->n, 0);
    assert_int_equal(res->device, -1);
    tdm_search_result_free(res);
    assert_int_equal(tdm_search_text(s, "", NULL, &res), TDM_OK);
    assert_int_equal(res->n, 0);
    tdm_search_result_free(res);
    assert_int_equal(tdm_search_text(s, "  ,;  ", NULL, &res), TDM_OK);
    assert_int_equal(res->n, 0);
    tdm_search_result_free(res);
    tdm_search_term unk[2] = {{"no-such-term", 0, 1.0}, {"zzzzzzzzzzzzzzzzzzzzz", 0, 2.0}};
    assert_int_equal(tdm_search_terms(s, unk, 2, NULL, &res), TDM_OK);
    assert_int_equal(res->n, 0);
    assert_int_equal(res->unknown, 2);
    tdm_search_result_free(res);
    /* by id; an id past the lexicon is an error */
    tdm_search_term byid = {NULL, 3, 1.0};
    assert_int_equal(tdm_search_terms(s, &byid, 1, NULL, &res), TDM_OK);
    assert_true(res->n > 0);
    tdm_search_result_free(res);
    byid.id = c.nlists + 10;
    assert_int_equal(tdm_search_terms(s, &byid, 1, NULL, &res), TDM_ERR_INVALID_ARG);

    /* NULL arguments */
    assert_int_equal(tdm_search_terms(NULL, &t, 1, NULL, &res), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_text(s, NULL, NULL, &res), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_text(s, "x", NULL, NULL), TDM_ERR_INVALID_ARG);
    tdm_search *s2 = (tdm_search *)&c;
    assert_int_equal(tdm_search_open(NULL, ix, &s2), TDM_ERR_INVALID_ARG);
    assert_null(s2);
    assert_int_equal(tdm_search_open(f->eng, NULL, &s2), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_open(f->eng, ix, NULL), TDM_ERR_INVALID_ARG);
    int a = -1;
    assert_int_equal(tdm_algorithm_parse("BMW", &a), TDM_OK);
    assert_int_equal(a, TDM_ALGO_BMW);
    assert_int_equal(tdm_algorithm_parse("and-or", &a), TDM_OK);
    assert_int_equal(a, TDM_ALGO_AND_OR);
    assert_int_equal(tdm_algorithm_parse("fast", &a), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "fast"));
    assert_string_equal(tdm_algorithm_name(TDM_ALGO_MAXSCORE), "maxscore");
    assert_null(tdm_algorithm_name(99));
    tdm_search_close(NULL);
    tdm_search_result_free(NULL);

    tdm_search_close(s);
    tdm_index_close(ix);
    randcoll_free(&c);
}

/* Text goes through the index's tokenizer: stemming, stopwords, case,
 * repeats weighing twice; the same as the oracle on the same query. */
static void text_queries(void **state)
{
    fixture *f = *state;
    const char *dir = tdm_test_tmpdir("search_text");
    char *path = path_in(dir, "t.tdm");
    static const char *const stops[] = {"the", "of"};
    tdm_iwriter_options wo = {.stemmer = "english", .stopwords = stops, .nstopwords = 2};
    tdm_iwriter *w;
    tdm_err err = {0};
    assert_int_equal(tdm_iwriter_open(path, &wo, &w, &err), TDM_OK);
    uint32_t lens[6] = {10, 20, 30, 5, 8, 100};
    assert_int_equal(tdm_iwriter_set_docs(w, 6, lens, NULL, &err), TDM_OK);
    uint32_t d1[] = {0, 2, 5}, f1[] = {1, 3, 1}, d2[] = {1, 2, 3}, f2[] = {2, 1, 4};
    assert_int_equal(tdm_iwriter_add_list(w, "run", 3, d1, f1, 3, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "walk", 4, d2, f2, 3, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    tdm_index *ix;
    assert_int_equal(tdm_index_open(path, &ix), TDM_OK);
    tdm_search *s;
    assert_int_equal(tdm_search_open(f->eng, ix, &s), TDM_OK);
    tdm_search_result *a, *b;
    assert_int_equal(tdm_search_text(s, "The RUNNING of walks, running!", NULL, &a), TDM_OK);
    tdm_search_term st[3] = {{"run", 0, 1}, {"walk", 0, 1}, {"run", 0, 1}};
    assert_int_equal(tdm_search_terms(s, st, 3, NULL, &b), TDM_OK);
    assert_int_equal(a->terms, 2);
    assert_int_equal(a->n, 5);
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->hits[i].docid, b->hits[i].docid);
        assert_true(a->hits[i].score == b->hits[i].score);
    }
    assert_int_equal(a->hits[0].docid, 2); /* both terms, run twice */
    assert_string_equal(a->hits[0].name, "2");
    tdm_search_result_free(a);
    tdm_search_result_free(b);
    tdm_search_close(s);
    tdm_index_close(ix);
    tdm_err_clear(&err);
}

/* An index recorded with a stemmer this library does not have: id and term
 * queries work, text queries say why they cannot. */
static void unknown_stemmer(void **state)
{
    fixture *f = *state;
    const char *dir = tdm_test_tmpdir("search_stem");
    char *path = path_in(dir, "s.tdm");
    tdm_iwriter_options wo = {.stemmer = "klingon"};
    tdm_iwriter *w;
    tdm_err err = {0};
    if (tdm_iwriter_open(path, &wo, &w, &err) != TDM_OK) {
        tdm_err_clear(&err);
        skip(); /* the writer refuses it: nothing to test */
        return;
    }
    uint32_t lens[2] = {3, 4}, d[] = {0, 1}, fr[] = {1, 2};
    assert_int_equal(tdm_iwriter_set_docs(w, 2, lens, NULL, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "qapla", 5, d, fr, 2, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    tdm_index *ix;
    assert_int_equal(tdm_index_open(path, &ix), TDM_OK);
    tdm_search *s;
    assert_int_equal(tdm_search_open(f->eng, ix, &s), TDM_OK);
    tdm_search_result *res = NULL;
    assert_int_equal(tdm_search_text(s, "qapla", NULL, &res), TDM_ERR_UNSUPPORTED);
    assert_non_null(strstr(tdm_last_error(), "klingon"));
    tdm_search_term t = {"qapla", 0, 1};
    assert_int_equal(tdm_search_terms(s, &t, 1, NULL, &res), TDM_OK);
    assert_int_equal(res->n, 2);
    assert_int_equal(res->hits[0].docid, 1);
    tdm_search_result_free(res);
    tdm_search_close(s);
    tdm_index_close(ix);
}

/* ---- many threads on one handle */

typedef struct tjob {
    tdm_search *s;
    const randcoll *c;
    uint64_t seed;
    int nq;
    uint32_t *docs;    /* nq * 10 */
    float *scores;
    size_t *n;
    int failed;
} tjob;

static void *thread_main(void *arg)
{
    tjob *j = arg;
    tdm_rng r;
    tdm_rng_seed(&r, j->seed);
    tdm_search_term st[64];
    for (int q = 0; q < j->nq; q++) {
        size_t n = random_terms(&r, j->c, st, 8, 0);
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.algorithm = algos[q % NALGOS];
        tdm_search_result *res;
        if (tdm_search_terms(j->s, st, n, &o, &res) != TDM_OK) {
            j->failed = 1;
            return NULL;
        }
        j->n[q] = res->n;
        for (size_t i = 0; i < res->n; i++) {
            j->docs[q * 10 + i] = res->hits[i].docid;
            j->scores[q * 10 + i] = res->hits[i].score;
        }
        tdm_search_result_free(res);
    }
    return NULL;
}

static void many_threads(void **state)
{
    fixture *f = *state;
    if (getenv("TANDEM_TEST_OCLGRIND")) {
        skip(); /* Oclgrind simulates one kernel at a time */
        return;
    }
    randcoll c;
    tdm_index *ix = small_index("search_thr", &c);
    tdm_search *s;
    assert_int_equal(tdm_search_open(f->eng, ix, &s), TDM_OK);
    enum { NT = 6 };
    int nq = tdm_test_small() ? 4 : 30;
    tjob one[NT], par[NT];
    pthread_t th[NT];
    for (int i = 0; i < NT; i++) {
        for (int pass = 0; pass < 2; pass++) {
            tjob *j = pass ? &par[i] : &one[i];
            *j = (tjob){s, &c, 1000 + i % 3, nq, calloc(nq * 10, 4), calloc(nq * 10, 4),
                        calloc(nq, sizeof(size_t)), 0};
        }
        thread_main(&one[i]);
        assert_false(one[i].failed);
    }
    for (int i = 0; i < NT; i++)
        assert_int_equal(pthread_create(&th[i], NULL, thread_main, &par[i]), 0);
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        assert_false(par[i].failed);
        assert_memory_equal(one[i].n, par[i].n, nq * sizeof(size_t));
        assert_memory_equal(one[i].docs, par[i].docs, nq * 10 * 4);
        assert_memory_equal(one[i].scores, par[i].scores, nq * 10 * 4);
        for (int pass = 0; pass < 2; pass++) {
            tjob *j = pass ? &par[i] : &one[i];
            free(j->docs);
            free(j->scores);
            free(j->n);
        }
    }
    tdm_search_close(s);
    tdm_index_close(ix);
    randcoll_free(&c);
}


/* ---- the compressed variant (cl/search_zrange.cl) at its edges */

/* Every codec with a device decoder, cycling per list (residx.h). */
static size_t dev_codecs(const char **names)
{
    size_t count, k = 0;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    for (size_t c = 0; c < count; c++)
        if (all[c]->dev)
            names[k++] = all[c]->name;
    return k;
}

/* Queries over lists of every awkward length for their codec's blocks (one
 * posting, a block less one, one block, one more, two blocks, every
 * document), codecs mixed in one index: every algorithm at k = 1, 10, 1000
 * and more than the matches, the compressed variant against the oracle bit
 * for bit and reporting itself, its scratch in both layouts (range-major
 * and interleaved, whatever the device); repeated and unknown terms. */
static void compressed_edges(void **state)
{
    fixture *f = *state;
    const char *names[TDM_CODEC_COUNT];
    size_t nc = dev_codecs(names);
    int small = tdm_test_small();
    residx x;
    uint32_t ndocs = small ? 700 : 3000;
    residx_make(&x, "search-zr", names, nc, 10 * nc, ndocs, 5);
    tdm_index *ix;
    if (tdm_index_open(x.path, &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    const tdm_ireader *ir = tdm_index_ireader(ix);
    tdm_search *s;
    assert_int_equal(tdm_search_open(f->eng, ix, &s), TDM_OK);
    tdm_oracle *or;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
    static const uint32_t ks[] = {1, 10, 1000};
    char terms[8][32];
    tdm_search_term st[8];
    tdm_rng r;
    tdm_rng_seed(&r, 77);
    int queries = small ? 6 : 40;
    int nd = tdm_engine_device_count(f->eng), zc[16];
    assert_true(nd <= 16);
    for (int d = 0; d < nd; d++)
        zc[d] = tdm_test_zcur(f->eng, d, "compressed_edges");
    for (int qi = 0; qi < queries; qi++) {
        size_t n = tdm_rng_range(&r, 1, qi < 10 ? 2 : 6);
        for (size_t i = 0; i < n; i++) {
            /* the first queries: one edge list alone, or with its neighbour */
            uint64_t l = qi < 10 ? (uint64_t)(qi * nc + i) % x.nlists
                                 : tdm_rng_range(&r, 0, (uint32_t)x.nlists - 1);
            snprintf(terms[i], sizeof terms[i], "t%06llu", (unsigned long long)l);
            st[i] = (tdm_search_term){terms[i], 0, 1.0};
            if (i > 0 && tdm_rng_range(&r, 0, 4) == 0)
                st[i] = st[i - 1]; /* repeated */
        }
        if (qi % 7 == 6 && n < 8)
            st[n++] = (tdm_search_term){"no-such-term", 0, 1.0};
        for (int d = 0; d < nd; d++)
            for (size_t a = 1; a < NALGOS; a++)
                for (size_t ki = 0; ki <= 3; ki++) {
                    expect_variant = zc[d] ? TDM_VARIANT_COMPRESSED : -TDM_VARIANT_COMPRESSED;
                    tdm_search_options o;
                    tdm_search_options_init(&o);
                    o.device = d;
                    o.algorithm = algos[a];
                    o.k = ki < 3 ? ks[ki] : ndocs + 5;
                    o.variant = TDM_VARIANT_COMPRESSED;
                    o.ranges = qi % 3 == 2 ? tdm_rng_range(&r, 1, 50) : 0;
                    if (qi % 4 == 3) { /* other BM25 parameters: cached exact bounds */
                        o.k1 = 0.9;
                        o.b = 0.3;
                    }
                    for (int zl = 0; zl <= zc[d]; zl++) { /* the layouts: zcur's only */
                        tdm_search_zr_layout_force(zl);
                        char what[160];
                        snprintf(what, sizeof what, "compressed query %d (%zu terms) %s k %u "
                                 "dev %d ranges %u layout %d", qi, n,
                                 tdm_algorithm_name(o.algorithm), o.k, d, o.ranges, zl);
                        check_search(s, or, ir, st, n, &o, what);
                    }
                    tdm_search_zr_layout_force(-1);
                }
    }
    expect_variant = 0;
    tdm_oracle_close(or);
    tdm_search_close(s);
    tdm_index_close(ix);
    residx_free(&x);
}

/* Replaces the u32 at index `at` of section `sec` of the index file at
 * `path` by v, in place; returns the value it held (the arena and block table
 * are not checksummed at open, FORMAT.md). */
static uint32_t patch_file(const char *path, unsigned sec, uint64_t at, uint32_t v)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    uint64_t off;
    uint32_t old;
    assert_int_equal(fseek(f, (long)sizeof(tdm_idx_header) + 32 * (long)sec + 8, SEEK_SET), 0);
    assert_int_equal(fread(&off, 8, 1, f), 1);
    assert_int_equal(fseek(f, (long)(off + 4 * at), SEEK_SET), 0);
    assert_int_equal(fread(&old, 4, 1, f), 1);
    assert_int_equal(fseek(f, (long)(off + 4 * at), SEEK_SET), 0);
    assert_int_equal(fwrite(&v, 4, 1, f), 1);
    fclose(f);
    assert_int_equal(forge_file(path), 0); /* past the checksums: the kernels' own checks */
    return old;
}

/* A damaged block of a list (its checksums forged) gives TDM_ERR_CORRUPT
 * whenever a cursor enters it (OR at k = every document enters every
 * block), and otherwise the undamaged index's answer: never a wrong one.
 * Every codec. */
static void compressed_corrupt(void **state)
{
    fixture *f = *state;
    const char *names[TDM_CODEC_COUNT];
    size_t nc = dev_codecs(names);
    int nd = tdm_engine_device_count(f->eng), zc[16];
    assert_true(nd <= 16);
    for (int d = 0; d < nd; d++)
        zc[d] = tdm_test_zcur(f->eng, d, "compressed_corrupt");
    for (size_t c = 0; c < nc; c++) {
        const tdm_codec_ops *ops = tdm_codec_by_name(names[c]);
        residx x;
        uint32_t ndocs = ops->block_size * 3;
        residx_make(&x, "search-zr-bad", names + c, 1, 5, ndocs, 9);
        /* list 4 has 2b postings: two blocks, block-table entries 0..2 */
        tdm_ilist l;
        tdm_err err = {0};
        assert_int_equal(tdm_ireader_list(x.r, 4, &l, &err), TDM_OK);
        assert_true(l.nblocks == 2);
        /* block 1's first docid payload word, which only a decoder sees */
        uint64_t sz;
        const uint32_t *bd = tdm_ireader_section(x.r, TDM_SEC_BLOCK_DOCS, &sz);
        const uint32_t *arena = tdm_ireader_section(x.r, TDM_SEC_ARENA, &sz);
        uint64_t w1 = l.arena_word + (ops->id == TDM_CODEC_PFOR ? 2 : 0) + bd[l.first_entry + 1];
        struct { unsigned sec; uint64_t at; uint32_t v; } dmg[] = {
            {TDM_SEC_BLOCK_DOCS, l.first_entry + 1, 0x7FFFFFFFu},
            {TDM_SEC_BLOCK_FREQS, l.first_entry + 2, 0x7FFFFFFFu},
            {TDM_SEC_BLOCK_DOCS, l.first_entry + 2, 1u},
            {TDM_SEC_ARENA, w1, arena[w1] ^ 0x5A5A5A5Au},
        };
        tdm_index *good;
        assert_int_equal(tdm_index_open(x.path, &good), TDM_OK);
        tdm_oracle *or;
        assert_int_equal(tdm_oracle_open(tdm_index_ireader(good), &or, &err), TDM_OK);
        residx y; /* the same index again, to damage (x stays open, mapped) */
        residx_make(&y, "search-zr-bad2", names + c, 1, 5, ndocs, 9);
        tdm_search_term st[2] = {{"t000004", 0, 1.0}, {"t000003", 0, 1.0}};
        for (size_t k = 0; k < sizeof dmg / sizeof *dmg; k++) {
            uint32_t was = patch_file(y.path, dmg[k].sec, dmg[k].at, dmg[k].v);
            tdm_index *ix;
            assert_int_equal(tdm_index_open(y.path, &ix), TDM_OK);
            tdm_search *s;
            assert_int_equal(tdm_search_open(f->eng, ix, &s), TDM_OK);
            for (int d = 0; d < nd; d++)
                for (size_t a = 1; a < NALGOS; a++) {
                    tdm_search_options o;
                    tdm_search_options_init(&o);
                    o.device = d;
                    o.algorithm = algos[a];
                    o.variant = TDM_VARIANT_COMPRESSED;
                    o.k = a == 1 ? ndocs : 3;
                    /* a decoded variant instead: a forged index is another
                     * index to it (test_index_mutants), any answer or
                     * CORRUPT, never a crash */
                    if (!zc[d]) {
                        tdm_search_result *res = NULL;
                        int rc = tdm_search_terms(s, st, 2, &o, &res);
                        if (rc != TDM_OK && rc != TDM_ERR_CORRUPT)
                            fail_msg("%s damage %zu dev %d: %d %s", names[c], k, d, rc,
                                     tdm_last_error());
                        if (rc == TDM_OK && res->variant == TDM_VARIANT_COMPRESSED)
                            fail_msg("%s damage %zu dev %d: compressed ran", names[c], k, d);
                        tdm_search_result_free(res);
                        continue;
                    }
                    int zl = (int)((a + k + (size_t)d) % 2); /* both layouts */
                    tdm_search_zr_layout_force(zl);
                    tdm_search_result *res = NULL;
                    int rc = tdm_search_terms(s, st, 2, &o, &res);
                    char what[160];
                    snprintf(what, sizeof what, "%s damage %zu %s dev %d layout %d", names[c], k,
                             tdm_algorithm_name(o.algorithm), d, zl);
                    if (rc == TDM_OK) { /* no cursor entered the block: the good answer */
                        if (a == 1)
                            fail_msg("%s: OR over every block was not refused", what);
                        tdm_search_result_free(res);
                        tdm_search *gs;
                        assert_int_equal(tdm_search_open(f->eng, good, &gs), TDM_OK);
                        check_search(gs, or, tdm_index_ireader(good), st, 2, &o, what);
                        tdm_search_close(gs);
                    } else if (rc != TDM_ERR_CORRUPT) { /* the host's check, or a cursor's */
                        fail_msg("%s: %d %s", what, rc, tdm_last_error());
                    }
                    tdm_search_zr_layout_force(-1);
                }
            tdm_search_close(s);
            tdm_index_close(ix);
            patch_file(y.path, dmg[k].sec, dmg[k].at, was);
        }
        residx_free(&y);
        tdm_oracle_close(or);
        tdm_index_close(good);
        residx_free(&x);
    }
}

/* ---- impact indexes (issue 30 item 3): pruning by the stored bounds */

/* randcoll's frequencies made impacts of learned sparse shapes, by list:
 * flat (90..110, SPLADE's), uniform 1..255, mostly small with rare large
 * ones (block bounds that vary), and impacts about 2^24 (a hundred
 * postings: cf stays in 32 bits), whose float conversion rounds. */
static void impact_lists(randcoll *c, tdm_rng *r)
{
    for (uint64_t i = 0; i < c->nlists; i++) {
        if (i % 4 == 3 && c->n[i] > 100)
            c->n[i] = 100;
        for (size_t j = 0; j < c->n[i]; j++) {
            uint32_t *f = &c->freqs[i][j];
            switch (i % 4) {
            case 0: *f = tdm_rng_range(r, 90, 110); break;
            case 1: *f = tdm_rng_range(r, 1, 255); break;
            case 2: *f = tdm_rng_range(r, 0, 30) ? tdm_rng_range(r, 1, 5) : tdm_rng_range(r, 200, 255); break;
            default: *f = (1u << 24) - 8 + tdm_rng_range(r, 0, 16); break;
            }
        }
    }
}

static tdm_index *impact_index(randcoll *c, const char *dir, const char *codec)
{
    tdm_iwriter_options o = searchfix_writer(codec, 0, 1);
    tdm_index *ix = randcoll_index_with(c, dir, "impact.tdm", &o);
    if (tdm_index_verify(ix) != TDM_OK)
        fail_msg("verify: %s", tdm_last_error());
    return ix;
}

/* The query of st prepared for impact scores takes the stored bounds, and
 * each block's is at or above the block's largest float score (the exact
 * maxima, tdm_score_block_bounds). */
static void stored_bounds_hold(const tdm_ireader *ir, const tdm_search_term *st, size_t n,
                               const char *what)
{
    tdm_query q;
    searchfix_query(&q, ir, st, n, what);
    tdm_err err = {0};
    tdm_score_params sp = {TDM_SCORING_IMPACT, 0, 0};
    tdm_sprep p;
    assert_int_equal(tdm_sprep_build(&p, ir, &q, &sp, &err), TDM_OK);
    if (q.nterms && (p.device_bounds || !p.term_bounds))
        fail_msg("%s: the stored bounds were not taken", what);
    tdm_scorer sc;
    assert_int_equal(tdm_scorer_init(&sc, ir, &q, &sp, &err), TDM_OK);
    size_t boff = 0;
    for (size_t t = 0; t < q.nterms; t++) {
        tdm_ilist l;
        assert_int_equal(tdm_ireader_list(ir, q.terms[t].id, &l, &err), TDM_OK);
        float *ex = malloc(l.nblocks * sizeof *ex), mx;
        assert_int_equal(tdm_score_block_bounds(ir, &q, &sc, t, ex, &mx, &err), TDM_OK);
        for (uint32_t b = 0; b < l.nblocks; b++)
            if (!(p.bmax[boff + b] >= ex[b]))
                fail_msg("%s: term %zu block %u: stored bound %.9g below the block's %.9g",
                         what, t, b, p.bmax[boff + b], ex[b]);
        boff += l.nblocks;
        free(ex);
    }
    tdm_scorer_free(&sc);
    tdm_sprep_free(&p);
    tdm_query_free(&q);
}

/* Every algorithm, k, variant and device on impact indexes (several
 * codecs; many query terms, flat and varied weights) answers the oracle's,
 * from the stored bounds: the handle's cache of recomputed bounds is never
 * asked. A batch of the same queries too (its bounds made on the device
 * from the stored ones). */
static void impact_indexes(void **state)
{
    fixture *f = *state;
    int small = tdm_test_small();
    static const uint32_t ks[] = {1, 10, 1000};
    static const char *icodecs[] = {"bp128", "pef", "vbyte128", "rice"};
    const char *dir = tdm_test_tmpdir("search_impact");
    for (size_t ci = 0; ci < (small ? 2u : 4u); ci++) {
        randcoll c;
        uint32_t ndocs = small ? 300 : 3000 + 4000 * (uint32_t)ci;
        randcoll_init(&c, 300 + ci, ndocs, 40);
        tdm_rng r;
        tdm_rng_seed(&r, 77 + ci);
        impact_lists(&c, &r);
        tdm_index *ix = impact_index(&c, dir, icodecs[ci]);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        assert_true(tdm_ireader_info_get(ir)->impact);
        tdm_search *s;
        if (tdm_search_open(f->eng, ix, &s) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        enum { NQ = 8 };
        tdm_search_term st[NQ][64];
        size_t nst[NQ];
        int nq = small ? 4 : NQ, ndev = tdm_engine_device_count(f->eng);
        for (int qi = 0; qi < nq; qi++) {
            nst[qi] = random_terms(&r, &c, st[qi], qi % 2 ? 64 : 24, 0);
            for (size_t i = 0; qi % 4 == 1 && i < nst[qi]; i++) /* flat weights */
                st[qi][i].weight = 1.0 + tdm_rng_range(&r, 0, 3) / 1024.0;
            for (size_t i = 0; qi % 4 == 3 && i < nst[qi]; i++)
                st[qi][i].weight = tdm_rng_range(&r, 1, 1000) / 64.0;
            char what[128];
            snprintf(what, sizeof what, "impact %s ndocs %u query %d", icodecs[ci], ndocs, qi);
            stored_bounds_hold(ir, st[qi], nst[qi], what);
            tdm_score_params isp = {TDM_SCORING_IMPACT, 0, 0};
            deferred_same(ir, st[qi], nst[qi], &isp, what);
        }
        tdm_search_options o;
        for (int qi = 0; qi < nq; qi++)
            for (int d = 0; d < ndev; d++)
                for (size_t a = 0; a < NALGOS; a++)
                    for (size_t ki = 0; ki < 4; ki++) {
                        if (small && (ki == 0 || ki == 2)) /* Oclgrind: k 10 and all */
                            continue;
                        tdm_search_options_init(&o);
                        /* the index's own scoring (auto), or impact by name */
                        o.scoring = qi % 2 ? TDM_SCORE_IMPACT : TDM_SCORE_AUTO;
                        o.k = ki < 3 ? ks[ki] : ndocs + 5;
                        o.k = o.k > TDM_SEARCH_K_MAX ? TDM_SEARCH_K_MAX : o.k;
                        o.device = d;
                        o.algorithm = algos[a];
                        o.variant = (int)((qi + a + ki) % 4);
                        char what[200];
                        snprintf(what, sizeof what, "impact %s ndocs %u query %d (%zu terms) "
                                 "k %u %s dev %d variant %d", icodecs[ci], ndocs, qi, nst[qi],
                                 o.k, tdm_algorithm_name(o.algorithm), d, o.variant);
                        check_search(s, or, ir, st[qi], nst[qi], &o, what);
                    }
        /* batches: every pruning algorithm and k on every device */
        tdm_search_query bq[NQ];
        for (int qi = 0; qi < nq; qi++)
            bq[qi] = (tdm_search_query){NULL, st[qi], nst[qi]};
        static const int pr[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
        for (int d = 0; d < ndev; d++)
            for (size_t a = 0; a < 3; a++)
                for (size_t ki = 0; ki < 3; ki++) {
                    tdm_search_options_init(&o);
                    o.device = d;
                    o.algorithm = pr[a];
                    o.k = ks[ki];
                    tdm_search_result *res[NQ];
                    if (tdm_search_batch(s, bq, (size_t)nq, &o, res) != TDM_OK)
                        fail_msg("impact batch: %s", tdm_last_error());
                    uint32_t shared = 0;
                    for (int qi = 0; qi < nq; qi++) {
                        tdm_hit *w = malloc(o.k * sizeof *w);
                        size_t nw = searchfix_oracle(or, ir, st[qi], nst[qi], &o, TDM_MATCH_OR,
                                                     TDM_ORACLE_FLOAT, w, NULL);
                        const tdm_search_result *rq = res[qi];
                        assert_int_equal(rq->status, TDM_OK);
                        shared = rq->batch > shared ? rq->batch : shared;
                        if (rq->n != nw)
                            fail_msg("impact batch %s k %u dev %d query %d: %zu hits, oracle %zu",
                                     tdm_algorithm_name(pr[a]), o.k, d, qi, rq->n, nw);
                        for (size_t i = 0; i < nw; i++)
                            if (rq->hits[i].docid != w[i].docid ||
                                (double)rq->hits[i].score != w[i].score)
                                fail_msg("impact batch %s k %u dev %d query %d rank %zu: doc %u "
                                         "%.9g, oracle doc %u %.9g", tdm_algorithm_name(pr[a]),
                                         o.k, d, qi, i, rq->hits[i].docid, rq->hits[i].score,
                                         w[i].docid, w[i].score);
                        free(w);
                        tdm_search_result_free(res[qi]);
                    }
                    if (o.k <= 10 && shared < 2) /* at k = 1000 the planner may run them alone */
                        fail_msg("impact batch %s k %u dev %d: no query shared its launches",
                                 tdm_algorithm_name(pr[a]), o.k, d);
                }
        tdm_bcache_stats bs;
        tdm_bcache_stats_get(s->bcache, &bs);
        if (bs.hits + bs.misses)
            fail_msg("impact %s: the bounds cache was asked (%llu hits, %llu misses): the "
                     "stored bounds were not taken", icodecs[ci], (unsigned long long)bs.hits,
                     (unsigned long long)bs.misses);
        tdm_oracle_close(or);
        tdm_search_close(s);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
}

/* The group kernel (cl/search_group.cl) where its loops turn over: queries
 * of more terms than one slab of spans (TDM_GROUP_SPANS, 256), with
 * repeats, weights and unknown terms, over ranges of several chunks
 * (TDM_SEARCH_CHUNK, 1,024 documents) and of one; OR and AND at k 1, 10
 * and 300 on every device, each answer the oracle's. On a BM25 index and
 * on an impact index with integer weights. */
static void group_many_terms(void **state)
{
    (void)state;
    int small = tdm_test_small();
    uint32_t ndocs = small ? 2600 : 5000;
    static const uint32_t ks[] = {1, 10, 300}, ranges[] = {1, 3, 0};
    static tdm_search_term st[700];
    for (int impact = 0; impact < 2; impact++) {
        randcoll c;
        randcoll_init(&c, 307 + (uint64_t)impact, ndocs, 400);
        tdm_rng r;
        tdm_rng_seed(&r, 91);
        if (impact)
            impact_lists(&c, &r);
        const char *dir = tdm_test_tmpdir(impact ? "group_terms_impact" : "group_terms");
        tdm_index *ix = impact ? impact_index(&c, dir, "bp128") : NULL;
        if (!impact &&
            tdm_index_open(write_index(&c, dir, "bp128", "g.tdm"), &ix) != TDM_OK)
            fail_msg("open: %s", tdm_last_error());
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        tdm_engine *eng = tdm_test_engine();
        tdm_search *s;
        if (tdm_search_open(eng, ix, &s) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        for (int qi = 0; qi < (small ? 3 : 6); qi++) {
            size_t n = qi % 2 ? searchfix_terms(&r, &c, st, 700, !impact, 9)
                              : random_terms(&r, &c, st, 8, 0);
            for (size_t i = 0; impact && i < n; i++) /* integer weights */
                st[i].weight = (float)tdm_rng_range(&r, 1, 9);
            for (int d = 0; d < tdm_engine_device_count(eng); d++)
                for (int a = 0; a < 2; a++) {
                    tdm_search_options o;
                    tdm_search_options_init(&o);
                    o.device = d;
                    o.algorithm = a ? TDM_ALGO_AND : TDM_ALGO_OR;
                    o.k = ks[(qi + a) % 3];
                    o.ranges = ranges[(qi + d) % 3];
                    o.variant = TDM_VARIANT_GROUP;
                    char what[160];
                    snprintf(what, sizeof what, "group %s query %d (%zu terms) k %u %s dev %d "
                             "ranges %u", impact ? "impact" : "bm25", qi, n, o.k,
                             tdm_algorithm_name(o.algorithm), d, o.ranges);
                    check_search(s, or, ir, st, n, &o, what);
                }
        }
        tdm_search_close(s);
        tdm_engine_close(eng);
        tdm_oracle_close(or);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
}

/* A BM25 index of skewed lists, or an impact index, of randcoll c (made
 * here from seed, ndocs and nterms; the caller frees c), into dir. */
static tdm_index *skewed_index(randcoll *c, int impact, uint64_t seed, uint32_t ndocs,
                               uint64_t nterms, const char *dir, const char *name)
{
    randcoll_init(c, seed, ndocs, nterms);
    tdm_rng r;
    tdm_rng_seed(&r, seed * 7 + 1);
    if (impact)
        impact_lists(c, &r);
    else
        cluster_lists(c, &r);
    tdm_index *ix = impact ? impact_index(c, dir, "bp128") : NULL;
    if (!impact && tdm_index_open(write_index(c, dir, "bp128", name), &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    return ix;
}

/* A batch call of n queries with options o, each answer the oracle's (OR's
 * matching: the pruning algorithms' and OR's); frees the results. */
static void batch_same_oracle(tdm_search *s, tdm_oracle *or, const tdm_ireader *ir,
                              const tdm_search_query *qs, size_t n, const tdm_search_options *o,
                              const char *what)
{
    tdm_search_result **res = calloc(n, sizeof *res);
    if (tdm_search_batch(s, qs, n, o, res) != TDM_OK)
        fail_msg("%s: batch: %s", what, tdm_last_error());
    tdm_hit *w = malloc(o->k * sizeof *w);
    for (size_t qi = 0; qi < n; qi++) {
        char at[160];
        snprintf(at, sizeof at, "%s, query %zu", what, qi);
        if (res[qi]->status != TDM_OK)
            fail_msg("%s: %s", at, res[qi]->error);
        size_t nw = searchfix_oracle(or, ir, qs[qi].terms, qs[qi].nterms, o, TDM_MATCH_OR,
                                     TDM_ORACLE_FLOAT, w, NULL);
        searchfix_same_oracle(res[qi], w, nw, ir, at);
        tdm_search_result_free(res[qi]);
    }
    free(w);
    free(res);
}

/* One query's block bounds made on the device from 16 bytes a term
 * (TANDEM_QUERY_BOUNDS=device: tdm_search_stored_bounds_batch) against
 * their upload from the host (host), read at engine open: WAND, BMW and
 * MaxScore at k 1, 10 and 1,000 in every variant, on a BM25 index and an
 * impact one, each answer the oracle's; for BMW the device's way sends fewer
 * bytes (the lists here have up to ~150 blocks) and launches one kernel
 * more, while WAND and MaxScore, which read no block bound, send and launch
 * the same both ways; and a batch call's lone queries (k above the row's
 * batch_max_k, no host path) the same way. */
static void query_bounds_on_device(void **state)
{
    (void)state;
    int small = tdm_test_small();
    static const int al[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    static const uint32_t ks[] = {1, 10, 1000};
    static const char *modes[] = {"host", "device"};
    const char *dir = tdm_test_tmpdir("query_bounds");
    setenv("TANDEM_BATCH_HOST", "off", 1);
    for (int impact = 0; impact < 2; impact++) {
        randcoll c;
        tdm_index *ix = skewed_index(&c, impact, 401 + impact, small ? 3000 : 20000, 24, dir,
                                     "qb.tdm");
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_rng r;
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        uint64_t up[2][3] = {{0}}, launches[2][3] = {{0}}; /* [mode][algorithm] */
        int fp64 = 1; /* every device has it */
        for (int m = 0; m < 2; m++) {
            setenv("TANDEM_QUERY_BOUNDS", modes[m], 1);
            tdm_engine *eng = tdm_test_engine();
            for (int d = 0; d < tdm_engine_device_count(eng); d++) {
                const char *ext = tdm_engine_device(eng, d)->info.extensions;
                fp64 = fp64 && ext && strstr(ext, "cl_khr_fp64");
            }
            tdm_search *s;
            if (tdm_search_open(eng, ix, &s) != TDM_OK)
                fail_msg("search open: %s", tdm_last_error());
            tdm_rng_seed(&r, 99); /* the same queries both ways */
            enum { NQ = 6 };
            tdm_search_term st[NQ][32];
            tdm_search_query qs[NQ];
            int nq = small ? 3 : NQ; /* Oclgrind */
            for (int qi = 0; qi < nq; qi++) {
                size_t n = random_terms(&r, &c, st[qi], qi % 2 ? 24 : 6, qi % 3 == 1);
                qs[qi] = (tdm_search_query){.terms = st[qi], .nterms = n};
                for (int d = 0; d < tdm_engine_device_count(eng); d++)
                    for (size_t a = 0; a < 3; a++) {
                        tdm_search_options o;
                        tdm_search_options_init(&o);
                        o.device = d;
                        o.algorithm = al[a];
                        o.k = ks[(qi + a) % 3];
                        o.variant = (int)((qi + a + d) % 4); /* auto, item, group, compressed */
                        if (impact)
                            o.scoring = TDM_SCORE_IMPACT;
                        char what[160];
                        snprintf(what, sizeof what, "TANDEM_QUERY_BOUNDS=%s %s query %d k %u "
                                 "%s dev %d variant %d", modes[m], impact ? "impact" : "bm25",
                                 qi, o.k, tdm_algorithm_name(o.algorithm), d, o.variant);
                        check_search_costs(s, or, ir, st[qi], n, &o, what, &up[m][a],
                                           &launches[m][a]);
                    }
            }
            /* a batch call's lone queries (k 1,000), each the oracle's */
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.algorithm = TDM_ALGO_MAXSCORE;
            o.k = 1000;
            if (impact)
                o.scoring = TDM_SCORE_IMPACT;
            char what[96];
            snprintf(what, sizeof what, "TANDEM_QUERY_BOUNDS=%s %s batch", modes[m],
                     impact ? "impact" : "bm25");
            batch_same_oracle(s, or, ir, qs, (size_t)nq, &o, what);
            tdm_search_close(s);
            tdm_engine_close(eng);
        }
        const char *ixn = impact ? "impact" : "bm25";
        for (int a = 0; a < 3; a += 2) /* WAND, MaxScore: no block bound either way */
            if (up[1][a] != up[0][a] || launches[1][a] != launches[0][a])
                fail_msg("%s %s: %llu bytes and %llu launches with the device's bounds, %llu "
                         "and %llu with the host's", ixn, tdm_algorithm_name(al[a]),
                         (unsigned long long)up[1][a], (unsigned long long)launches[1][a],
                         (unsigned long long)up[0][a], (unsigned long long)launches[0][a]);
        if (!fp64) /* rusticl's llvmpipe: the host's bounds both ways */
            printf("[ SKIPPED  ] query_bounds_on_device: a device without cl_khr_fp64 makes "
                   "no bounds: only the answers are checked\n");
        else if (up[1][1] >= up[0][1])
            fail_msg("%s bmw: the device's bounds sent %llu bytes, the host's %llu", ixn,
                     (unsigned long long)up[1][1], (unsigned long long)up[0][1]);
        else if (launches[1][1] <= launches[0][1])
            fail_msg("%s bmw: the device's bounds launched no more kernels (%llu, %llu)", ixn,
                     (unsigned long long)launches[1][1], (unsigned long long)launches[0][1]);
        tdm_oracle_close(or);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
    unsetenv("TANDEM_QUERY_BOUNDS");
    unsetenv("TANDEM_BATCH_HOST");
}

/* A batch call's lone OR queries on the group kernel with the host's seed
 * of the shared threshold (k >= 100, search_hseed.h): TANDEM_BATCH_HOST=off
 * and TANDEM_BATCH_OR_ALONE_TERMS=1 send them to the device alone, the
 * variant asked for is GROUP; every answer the oracle's, on a BM25 index
 * with skewed lists and on an impact index (ties), at k 100, 1000 and past
 * the matches. */
static void group_or_seeded(void **state)
{
    (void)state;
    int small = tdm_test_small();
    static const uint32_t ks[] = {100, 1000, 5000};
    setenv("TANDEM_BATCH_HOST", "off", 1);
    setenv("TANDEM_BATCH_OR_ALONE_TERMS", "1", 1);
    tdm_engine *eng = tdm_test_engine();
    const char *dir = tdm_test_tmpdir("group_or_seeded");
    for (int impact = 0; impact < 2; impact++) {
        randcoll c;
        tdm_index *ix = skewed_index(&c, impact, 501 + impact, small ? 2500 : 12000, 16, dir,
                                     "gs.tdm");
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_rng r;
        tdm_rng_seed(&r, 11);
        tdm_search *s;
        if (tdm_search_open(eng, ix, &s) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        tdm_oracle *or;
        tdm_err err = {0};
        assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
        enum { NQ = 4 };
        tdm_search_term st[NQ][16];
        tdm_search_query qs[NQ];
        for (int qi = 0; qi < NQ; qi++)
            qs[qi] = (tdm_search_query){.terms = st[qi],
                                        .nterms = random_terms(&r, &c, st[qi], 12, qi % 2)};
        for (int d = 0; d < tdm_engine_device_count(eng); d++)
            for (size_t ki = 0; ki < 3; ki++) {
                tdm_search_options o;
                tdm_search_options_init(&o);
                o.device = d;
                o.algorithm = TDM_ALGO_OR;
                o.variant = TDM_VARIANT_GROUP;
                o.k = ks[ki];
                char what[96];
                snprintf(what, sizeof what, "%s group OR k %u dev %d",
                         impact ? "impact" : "bm25", o.k, d);
                batch_same_oracle(s, or, ir, qs, NQ, &o, what);
            }
        tdm_oracle_close(or);
        tdm_search_close(s);
        tdm_index_close(ix);
        randcoll_free(&c);
    }
    tdm_engine_close(eng);
    unsetenv("TANDEM_BATCH_HOST");
    unsetenv("TANDEM_BATCH_OR_ALONE_TERMS");
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for the round-trip tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_errors),       cmocka_unit_test(text_queries),
        cmocka_unit_test(unknown_stemmer),      cmocka_unit_test(random_small_indexes),
        cmocka_unit_test(many_threads),         cmocka_unit_test(random_large_indexes),
        cmocka_unit_test(compressed_edges),     cmocka_unit_test(compressed_corrupt),
        cmocka_unit_test(impact_indexes),       cmocka_unit_test(merge_direct_keys),
        cmocka_unit_test(group_many_terms),     cmocka_unit_test(query_bounds_on_device),
        cmocka_unit_test(group_or_seeded),      cmocka_unit_test(and_select_switch),
    };
    /* every query on a device, as ctest's environment has it (a batch's
       sharing is checked, impact_indexes): also when run by hand */
    setenv("TANDEM_HOST_MAX_POSTINGS", "0", 0);
    if (getenv("TDM_TEST_FILTER")) /* e.g. impact_indexes */
        cmocka_set_test_filter(getenv("TDM_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}
