/* The host path (drive/search_host.h): a query of few postings answered on
 * the host, chosen by the planner (TANDEM_HOST_MAX_POSTINGS, the tuning
 * row's host_max_postings). On every device of the engine, a handle whose
 * engine sends every query to the host (TANDEM_HOST_MAX_POSTINGS = 2^62)
 * against one whose engine never does (0) and against the float oracle
 * (harness/oracle.h), bit for bit: random indexes of several codecs (1 to
 * 20,000 documents), random queries with repeats, unknown terms and
 * weights, every algorithm (auto too), k = 1, 10, 100 and 1,000, BM25 at
 * the index's parameters and others, impact scores on purpose and on an
 * impact index; edge cases (a one-posting list, k above the matches, AND
 * with an unknown term and with no document in common, AND-then-OR either
 * way, empty queries; dense lists that fill the evaluator's windows, ties,
 * k about its top k's modes). Host answers say so: variant TDM_VARIANT_HOST, no
 * launch, no byte, the device asked. The rule: at a threshold between,
 * queries at or under it go to the host and those above to the device,
 * a request naming a variant or ranges never to the host; unset, the
 * row's value; in a batch, the small queries on the host and the rest on
 * the device, every answer the one-by-one answer; a query the rule sends
 * to the host prepared with nothing made for a device. MaxScore's pruning
 * at any size (tdm_search_host_maxscore): OR's and the oracle's keys on
 * four codecs and impact ties, while it skips documents; WAND and BMW
 * pruning with it on long queries at small k, ranked OR never, and at k
 * 100 from fewer postings than k 1,000 needs (not in proportion to k); its
 * tight top k (a threshold close to the k-th key) keeps the plain one's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drive/search_host.h"
#include "drive/search_host_dec.h"
#include "drive/search_host_score.h"
#include "drive/search_host_topk.h"
#include "plan/search_prepare.h"
#include "engine/engine.h"
#include "index/index_priv.h"
#include "harness/oracle.h"
#include "index/writer.h"
#include "randcoll.h"
#include "runtime/tune_table.h"
#include "searchfix.h"
#include "testutil.h"

#define HOST_ALL "4611686018427387904"

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND,     TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
#define NALGOS (sizeof algos / sizeof *algos)
static const uint32_t ks[] = {1, 10, 100, 1000};
#define NKS (sizeof ks / sizeof *ks)

/* An engine opened with TANDEM_HOST_MAX_POSTINGS = v (NULL: unset). */
static tdm_engine *engine_with(const char *v)
{
    if (v)
        setenv("TANDEM_HOST_MAX_POSTINGS", v, 1);
    else
        unsetenv("TANDEM_HOST_MAX_POSTINGS");
    tdm_engine *e = tdm_test_engine();
    unsetenv("TANDEM_HOST_MAX_POSTINGS");
    return e;
}

typedef struct fixture {
    tdm_engine *host, *dev; /* every query on the host; none */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->host = engine_with(HOST_ALL);
    f->dev = engine_with("0");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tdm_engine_close(f->host);
    tdm_engine_close(f->dev);
    free(f);
    return 0;
}

/* One index searched through both engines. */
typedef struct both {
    tdm_index *ix;
    const tdm_ireader *ir;
    tdm_search *host, *dev;
    tdm_oracle *or;
    int ndev;
} both;

static void both_open(const fixture *f, tdm_index *ix, both *b)
{
    b->ix = ix;
    b->ir = tdm_index_ireader(ix);
    b->ndev = tdm_engine_device_count(f->host);
    if (tdm_search_open(f->host, ix, &b->host) != TDM_OK ||
        tdm_search_open(f->dev, ix, &b->dev) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(b->ir, &b->or, &err), TDM_OK);
}

static void both_close(both *b)
{
    tdm_oracle_close(b->or);
    tdm_search_close(b->host);
    tdm_search_close(b->dev);
    tdm_index_close(b->ix);
}

static tdm_index *write_open(randcoll *c, const char *dir, const char *codec, int own_bm25,
                             int impact)
{
    tdm_iwriter_options o = searchfix_writer(codec, own_bm25, impact);
    return randcoll_index_with(c, dir, "h.tdm", &o);
}

/* The float oracle's answer for st under o (AND-then-OR as the engine
 * decides it: AND's where AND matched k documents). */
static size_t oracle_answer(both *b, const tdm_search_term *st, size_t n,
                            const tdm_search_options *o, tdm_hit *hits)
{
    int match = searchfix_match(b->or, b->ir, st, n, o);
    return searchfix_oracle(b->or, b->ir, st, n, o, match, TDM_ORACLE_FLOAT, hits, NULL);
}

static tdm_search_result *search(tdm_search *s, const tdm_search_term *st, size_t n,
                                 const tdm_search_options *o, const char *what)
{
    tdm_search_result *r = NULL;
    if (tdm_search_terms(s, st, n, o, &r) != TDM_OK)
        fail_msg("%s: search: %s", what, tdm_last_error());
    return r;
}

/* Hits of a and b the same: documents, order, score bits. */
static void same_hits(const tdm_search_result *a, const tdm_search_result *b, const char *what)
{
    if (a->n != b->n)
        fail_msg("%s: host %zu hits, device %zu", what, a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        if (a->hits[i].docid != b->hits[i].docid ||
            memcmp(&a->hits[i].score, &b->hits[i].score, sizeof(float)) != 0)
            fail_msg("%s: rank %zu: host doc %u score %.9g, device doc %u score %.9g", what, i,
                     a->hits[i].docid, a->hits[i].score, b->hits[i].docid, b->hits[i].score);
}

/* st under o through both handles and the oracle; the host's answer says
 * it ran on the host (where the query has terms). Returns its hits. */
static size_t check(both *b, const tdm_search_term *st, size_t n, const tdm_search_options *o,
                    const char *what)
{
    tdm_search_result *h = search(b->host, st, n, o, what);
    tdm_search_result *d = search(b->dev, st, n, o, what);
    same_hits(h, d, what);
    tdm_hit *w = malloc(o->k * sizeof *w);
    size_t nw = oracle_answer(b, st, n, o, w);
    searchfix_same_oracle(h, w, nw, b->ir, what);
    assert_int_equal(h->terms, d->terms);
    assert_int_equal(h->unknown, d->unknown);
    if (h->terms) {
        if (h->variant != TDM_VARIANT_HOST || h->launches || h->bytes_up || h->bytes_down)
            fail_msg("%s: variant %d, %u launches, %llu + %llu bytes: not the host's", what,
                     h->variant, h->launches, (unsigned long long)h->bytes_up,
                     (unsigned long long)h->bytes_down);
        assert_int_equal(h->algorithm, d->algorithm);
        assert_int_equal(h->device, d->device);
        assert_int_equal(h->batch, 1);
        assert_true(d->variant != TDM_VARIANT_HOST && d->launches > 0);
    }
    free(w);
    tdm_search_result_free(h);
    tdm_search_result_free(d);
    return nw;
}

/* A random query of 1..maxt terms: repeats (one in 5), unknown terms,
 * weights. */
static size_t random_terms(tdm_rng *r, const randcoll *c, tdm_search_term *st, size_t maxt,
                           int weighted)
{
    return searchfix_terms(r, c, st, maxt, weighted, 5);
}

/* Every algorithm and k of `queries` random queries on every device. */
static void run_queries(both *b, const randcoll *c, tdm_rng *r, int queries, size_t maxt,
                        int impact, const char *tag)
{
    tdm_search_term st[32];
    for (int qi = 0; qi < queries; qi++) {
        size_t n = random_terms(r, c, st, maxt, qi % 3 == 1);
        tdm_search_options o;
        tdm_search_options_init(&o);
        int pk = qi % 4;
        if (impact) {
            o.scoring = pk == 1 ? TDM_SCORE_IMPACT : TDM_SCORE_AUTO;
        } else if (pk == 1) {
            o.k1 = 0.9;
            o.b = 0.4;
        } else if (pk == 2) {
            o.scoring = TDM_SCORE_IMPACT; /* frequencies as impacts, on purpose */
        } else if (pk == 3) {
            o.k1 = 2.0;
            o.b = 1.0;
        }
        for (int d = 0; d < b->ndev; d++)
            for (size_t a = 0; a < NALGOS; a++)
                for (size_t ki = 0; ki < NKS; ki++) {
                    o.device = d;
                    o.algorithm = algos[a];
                    o.k = ks[ki];
                    char what[200];
                    snprintf(what, sizeof what, "%s query %d (%zu terms) dev %d %s k %u "
                             "scoring %d k1 %g b %g", tag, qi, n, d,
                             tdm_algorithm_name(o.algorithm), o.k, o.scoring, o.k1, o.b);
                    check(b, st, n, &o, what);
                }
    }
}

static void random_indexes(void **state)
{
    fixture *f = *state;
    static const char *codecs[] = {"bp128", "vbyte128", "pef", "rice"};
    int small = tdm_test_small();
    for (uint64_t seed = 1; seed <= 4; seed++) {
        uint32_t ndocs = seed == 1 ? 1 : seed == 2 ? 3 : seed == 3 ? 700 : (small ? 900 : 20000);
        randcoll c;
        randcoll_init(&c, seed, ndocs, 24);
        tdm_rng r;
        tdm_rng_seed(&r, seed * 17 + 3);
        both b;
        both_open(f, write_open(&c, tdm_test_tmpdir("host_rand"), codecs[seed - 1], seed == 3, 0),
                  &b);
        char tag[64];
        snprintf(tag, sizeof tag, "%s ndocs %u", codecs[seed - 1], ndocs);
        run_queries(&b, &c, &r, small ? 2 : 5, seed == 4 ? 12 : 6, 0, tag);
        both_close(&b);
        randcoll_free(&c);
    }
}

/* randcoll's frequencies made impacts (1..255, and about 2^24 whose float
 * conversion rounds). */
static void impact_indexes(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 77, tdm_test_small() ? 500 : 5000, 20);
    tdm_rng r;
    tdm_rng_seed(&r, 78);
    for (uint64_t i = 0; i < c.nlists; i++) {
        if (i % 3 == 2 && c.n[i] > 100)
            c.n[i] = 100;
        for (size_t j = 0; j < c.n[i]; j++)
            c.freqs[i][j] = i % 3 == 2 ? (1u << 24) - 8 + tdm_rng_range(&r, 0, 16)
                                       : tdm_rng_range(&r, 1, 255);
    }
    both b;
    both_open(f, write_open(&c, tdm_test_tmpdir("host_impact"), "bp128", 0, 1), &b);
    run_queries(&b, &c, &r, tdm_test_small() ? 2 : 4, 6, 1, "impact");
    /* BM25 on an impact index: the same refusal from both */
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.scoring = TDM_SCORE_BM25;
    tdm_search_term t = {c.terms[0], 0, 1.0};
    tdm_search_result *res = NULL;
    assert_int_equal(tdm_search_terms(b.host, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", tdm_last_error());
    assert_int_equal(tdm_search_terms(b.dev, &t, 1, &o, &res), TDM_ERR_INVALID_ARG);
    assert_string_equal(msg, tdm_last_error());
    both_close(&b);
    randcoll_free(&c);
}

/* Lists of known shapes: term 0 one posting (the last document), 1 every
 * document, 2 documents 0..9, 3 documents 10..19 (none in common with 2),
 * 4 every other document; tf 1..3, document lengths randcoll's (0 among
 * them). */
static void shaped(randcoll *c)
{
    static const uint32_t want_lists = 5;
    assert_true(c->nlists >= want_lists);
    for (uint64_t i = 0; i < want_lists; i++) {
        size_t n = 0;
        for (uint32_t d = 0; d < c->ndocs; d++) {
            int take = i == 0   ? d == c->ndocs - 1
                       : i == 1 ? 1
                       : i == 2 ? d < 10
                       : i == 3 ? d >= 10 && d < 20
                                : d % 2 == 0;
            if (take) {
                c->docids[i][n] = d;
                c->freqs[i][n++] = 1 + d % 3;
            }
        }
        c->n[i] = n;
    }
}

static void edge_cases(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 5, 300, 12);
    shaped(&c);
    both b;
    both_open(f, write_open(&c, tdm_test_tmpdir("host_edges"), "bp128", 0, 0), &b);
    const char *t0 = c.terms[0], *t1 = c.terms[1], *t2 = c.terms[2], *t3 = c.terms[3];
    const char *t4 = c.terms[4];
    struct {
        tdm_search_term st[4];
        size_t n;
        int algorithm;
        uint32_t k;
        size_t want; /* hits */
    } cases[] = {
        {{{t0, 0, 1}}, 1, TDM_ALGO_OR, 1, 1},                 /* one posting */
        {{{t0, 0, 1}}, 1, TDM_ALGO_AND, 10, 1},               /* k above the matches */
        {{{t0, 0, 1}}, 1, TDM_ALGO_MAXSCORE, 1000, 1},
        {{{t2, 0, 1}, {t3, 0, 1}}, 2, TDM_ALGO_AND, 10, 0},   /* nothing in common */
        {{{t2, 0, 1}, {t3, 0, 1}}, 2, TDM_ALGO_AND_OR, 10, 10}, /* AND empty: OR */
        {{{t2, 0, 1}, {t3, 0, 1}}, 2, TDM_ALGO_AND_OR, 30, 20},
        {{{t1, 0, 1}, {t4, 0, 1}}, 2, TDM_ALGO_AND_OR, 10, 10}, /* AND's k: AND's answer */
        {{{t1, 0, 1}, {t4, 0, 1}}, 2, TDM_ALGO_AND, 1000, 150},
        {{{t2, 0, 1}, {"no-such-term", 0, 1}}, 2, TDM_ALGO_AND, 10, 10}, /* unknown: dropped */
        {{{t4, 0, 1}, {t2, 0, 1}, {t4, 0, 2}}, 3, TDM_ALGO_OR, 100, 100}, /* repeats summed */
        {{{t4, 0, 3}, {t2, 0, 1}}, 2, TDM_ALGO_OR, 100, 100},  /* the same as weight 3 */
        {{{t1, 0, 1}, {t2, 0, 1}, {t3, 0, 1}, {t0, 0, 1}}, 4, TDM_ALGO_BMW, 1000, 300},
        {{{t1, 0, 1}, {t2, 0, 1}, {t3, 0, 1}, {t0, 0, 1}}, 4, TDM_ALGO_WAND, 1, 1},
        {{{"no-such-term", 0, 1}}, 1, TDM_ALGO_OR, 10, 0},    /* no known term */
        {{{0}}, 0, TDM_ALGO_AUTO, 10, 0},                      /* empty */
    };
    int ndev = tdm_engine_device_count(f->host);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int d = 0; d < ndev; d++) {
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.algorithm = cases[i].algorithm;
            o.k = cases[i].k;
            o.device = d;
            char what[64];
            snprintf(what, sizeof what, "edge case %zu dev %d", i, d);
            size_t got = check(&b, cases[i].st, cases[i].n, &o, what);
            if (got != cases[i].want)
                fail_msg("%s: %zu hits, want %zu", what, got, cases[i].want);
        }
    /* "t4 t2 t4" (weights 1 + 2) scores as "t4 x3, t2": the same bits */
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.k = 100;
    tdm_search_result *a = search(b.host, cases[9].st, 3, &o, "repeats");
    tdm_search_result *w = search(b.host, cases[10].st, 2, &o, "weight");
    same_hits(a, w, "repeated terms against their summed weight");
    tdm_search_result_free(a);
    tdm_search_result_free(w);
    both_close(&b);
    randcoll_free(&c);
}

/* Lists of 6,000 documents shaped for the evaluator's edges: term 0 every
 * document (a window of accumulators touched whole), 1 every third, 2 every
 * seventh, 3 one posting, 4 documents 4,090..4,200 (across a window's
 * edge), tf 1..3 (impact scoring: ties by the thousand). */
static void dense(randcoll *c)
{
    for (uint64_t i = 0; i < 5; i++) {
        size_t n = 0;
        for (uint32_t d = 0; d < c->ndocs; d++) {
            int take = i == 0   ? 1
                       : i == 1 ? d % 3 == 0
                       : i == 2 ? d % 7 == 0
                       : i == 3 ? d == 4095
                                : d >= 4090 && d <= 4200;
            if (take) {
                c->docids[i][n] = d;
                c->freqs[i][n++] = 1 + (d / 5) % 3;
            }
        }
        c->n[i] = n;
    }
}

/* Dense lists through every algorithm at k about the top k's modes (its
 * heap to 64, its buffer above, cut many times at k = 10 and 100), k above
 * the matches, BM25 and impact scores (ties broken by docid). */
static void dense_windows(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 11, 6000, 12);
    dense(&c);
    both b;
    both_open(f, write_open(&c, tdm_test_tmpdir("host_dense"), "bp128", 0, 0), &b);
    const char *t[5];
    for (int i = 0; i < 5; i++)
        t[i] = c.terms[i];
    struct {
        tdm_search_term st[3];
        size_t n;
    } qs[] = {
        {{{t[0], 0, 1}, {t[1], 0, 1}}, 2},
        {{{t[0], 0, 1}, {t[1], 0, 1}, {t[2], 0, 2}}, 3},
        {{{t[1], 0, 1}, {t[2], 0, 1}, {t[4], 0, 1}}, 3},
        {{{t[0], 0, 1}}, 1},
        {{{t[3], 0, 1}, {t[4], 0, 1}}, 2},
        {{{t[2], 0, 1}, {t[3], 0, 1}}, 2},
    };
    static const int alg[] = {TDM_ALGO_OR, TDM_ALGO_AND, TDM_ALGO_AND_OR, TDM_ALGO_MAXSCORE};
    static const uint32_t kk[] = {1, 10, 64, 65, 100, 1000, 2500, 10000};
    for (size_t q = 0; q < sizeof qs / sizeof *qs; q++)
        for (size_t a = 0; a < sizeof alg / sizeof *alg; a++)
            for (size_t ki = 0; ki < sizeof kk / sizeof *kk; ki++)
                for (int impact = 0; impact < 2; impact++) {
                    tdm_search_options o;
                    tdm_search_options_init(&o);
                    o.algorithm = alg[a];
                    o.k = kk[ki];
                    o.scoring = impact ? TDM_SCORE_IMPACT : TDM_SCORE_AUTO;
                    char what[96];
                    snprintf(what, sizeof what, "dense query %zu %s k %u %s", q,
                             tdm_algorithm_name(o.algorithm), o.k, impact ? "impact" : "bm25");
                    check(&b, qs[q].st, qs[q].n, &o, what);
                }
    both_close(&b);
    randcoll_free(&c);
}

/* A query prepared on s (tdm_search_prepare) for device d: the host's
 * (host set) is planned for the host with nothing made for a device (no
 * lists prepared, no keys), a device's query has both. */
static void prepared_lean(tdm_search *s, const tdm_search_term *st, size_t n, int d, int host)
{
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.device = d;
    tdm_search_options oc;
    tdm_err err = {0};
    assert_int_equal(tdm_search_options_check(&o, &oc, &err), TDM_OK);
    tdm_sbq it;
    tdm_search_query rq = {NULL, st, n};
    assert_int_equal(tdm_search_prepare(s, &rq, &oc, &it), TDM_OK);
    assert_int_equal(it.pl.host, host);
    assert_int_equal(it.run, !host);
    assert_int_equal(it.prepped, !host);
    assert_int_equal(it.p.nt, host ? 0 : n);
    assert_int_equal(it.so.keys == NULL, host);
    if (host)
        assert_int_equal(it.pl.variant, TDM_VARIANT_HOST);
    tdm_sbq_free(&it);
}

/* The planner's rule at a threshold of 20 postings: at or under it the
 * host, above it the device; a request's variant or ranges, the device;
 * unset, the row's threshold (a one-posting query goes to the host unless
 * the row's is 0). And the library's evaluator called directly. */
static void the_rule(void **state)
{
    (void)state;
    randcoll c;
    randcoll_init(&c, 6, 300, 12);
    shaped(&c);
    tdm_index *ix = write_open(&c, tdm_test_tmpdir("host_rule"), "bp128", 0, 0);
    tdm_engine *mid = engine_with("20"), *unset = engine_with(NULL);
    tdm_search *s, *u;
    assert_int_equal(tdm_search_open(mid, ix, &s), TDM_OK);
    assert_int_equal(tdm_search_open(unset, ix, &u), TDM_OK);
    tdm_search_term t2[] = {{c.terms[2], 0, 1}, {c.terms[3], 0, 1}}; /* 20 postings */
    tdm_search_term t21[] = {{c.terms[2], 0, 1}, {c.terms[3], 0, 1}, {c.terms[0], 0, 1}};
    tdm_search_term one[] = {{c.terms[0], 0, 1}};
    for (int d = 0; d < tdm_engine_device_count(mid); d++) {
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.device = d;
        tdm_search_result *r = search(s, t2, 2, &o, "20 postings");
        assert_int_equal(r->variant, TDM_VARIANT_HOST);
        assert_int_equal(r->device, d);
        tdm_search_result_free(r);
        r = search(s, t21, 3, &o, "21 postings");
        assert_true(r->variant != TDM_VARIANT_HOST && r->launches > 0);
        tdm_search_result_free(r);
        o.variant = TDM_VARIANT_ITEM;
        r = search(s, one, 1, &o, "a variant asked for");
        assert_int_equal(r->variant, TDM_VARIANT_ITEM);
        tdm_search_result_free(r);
        o.variant = TDM_VARIANT_AUTO;
        o.ranges = 3;
        r = search(s, one, 1, &o, "ranges asked for");
        assert_true(r->variant != TDM_VARIANT_HOST);
        tdm_search_result_free(r);
        o.ranges = 0;
        r = search(u, one, 1, &o, "the row's threshold");
        const tdm_tune_row *row = tdm_tune_row_of(&tdm_engine_device(unset, d)->info);
        assert_int_equal(r->variant == TDM_VARIANT_HOST,
                         row->host_max_postings[r->algorithm] >= 1);
        tdm_search_result_free(r);
        prepared_lean(s, t2, 2, d, 1);
        prepared_lean(s, t21, 3, d, 0);
    }
    /* the evaluator alone: AND-then-OR's OR pass, total = OR's matches */
    tdm_query q;
    tdm_query_init(&q);
    tdm_err err = {0};
    const tdm_ireader *ir = tdm_index_ireader(ix);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(tdm_query_add_term(&q, ir, t2[i].term, strlen(t2[i].term), 1, &err), 0);
    tdm_query_finish(&q);
    uint64_t keys[30];
    tdm_sout out = {.keys = keys};
    tdm_score_params sp = tdm_score_params_default();
    assert_int_equal(tdm_search_host(ir, &q, &sp, TDM_ALGO_AND_OR, 30, &out, &err), TDM_OK);
    assert_int_equal(out.n, 20);
    assert_int_equal(out.total, 20);
    assert_int_equal(out.launches, 0);
    for (uint32_t i = 1; i < out.n; i++)
        assert_true(keys[i - 1] > keys[i]);
    assert_int_equal(tdm_search_host(ir, &q, &sp, TDM_ALGO_AND, 30, &out, &err), TDM_OK);
    assert_int_equal(out.n, 0);
    tdm_query_free(&q);
    tdm_search_close(s);
    tdm_search_close(u);
    tdm_engine_close(mid);
    tdm_engine_close(unset);
    tdm_index_close(ix);
    randcoll_free(&c);
}

/* A batch at a threshold between: its small queries on the host, the rest
 * on the device (sharing launches), every answer the one-by-one answer of
 * the engine that never takes the host path. */
/* A host answer honours the request's policy and pin as a lane's would: on
 * an engine without a GPU, gpu-only is TDM_ERR_NO_DEVICE whatever the
 * query's size, cpu-only says a CPU device, a pin says the pinned one. */
static void policies(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 8, 200, 12);
    tdm_index *ix = write_open(&c, tdm_test_tmpdir("host_policies"), "bp128", 0, 0);
    tdm_search *s;
    assert_int_equal(tdm_search_open(f->host, ix, &s), TDM_OK);
    tdm_search_term one[] = {{c.terms[0], 0, 1}};
    int gpus = 0, nd = tdm_engine_device_count(f->host);
    for (int d = 0; d < nd; d++) {
        tdm_device_info di;
        assert_int_equal(tdm_engine_device_info_get(f->host, d, &di), TDM_OK);
        gpus += di.type == TDM_DEVICE_GPU;
    }
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.policy = TDM_POLICY_GPU_ONLY;
    tdm_search_result *r = NULL;
    int rc = tdm_search_terms(s, one, 1, &o, &r);
    if (!gpus) {
        assert_int_equal(rc, TDM_ERR_NO_DEVICE);
        assert_null(r);
    } else {
        assert_int_equal(rc, TDM_OK);
        tdm_search_result_free(r);
    }
    o.policy = TDM_POLICY_CPU_ONLY;
    r = search(s, one, 1, &o, "cpu-only");
    assert_int_equal(r->variant, TDM_VARIANT_HOST);
    tdm_device_info di;
    assert_int_equal(tdm_engine_device_info_get(f->host, r->device, &di), TDM_OK);
    assert_int_equal(di.type, TDM_DEVICE_CPU);
    tdm_search_result_free(r);
    tdm_search_options_init(&o);
    o.device = nd - 1;
    r = search(s, one, 1, &o, "pinned");
    assert_int_equal(r->variant, TDM_VARIANT_HOST);
    assert_int_equal(r->device, nd - 1);
    tdm_search_result_free(r);
    tdm_search_close(s);
    tdm_index_close(ix);
    randcoll_free(&c);
}

static void batches(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 8, 2000, 30);
    tdm_index *ix = write_open(&c, tdm_test_tmpdir("host_batch"), "bp128", 0, 0);
    tdm_engine *mid = engine_with("400");
    tdm_search *s, *d;
    assert_int_equal(tdm_search_open(mid, ix, &s), TDM_OK);
    assert_int_equal(tdm_search_open(f->dev, ix, &d), TDM_OK);
    enum { NQ = 60 };
    tdm_search_term st[NQ][6];
    tdm_search_query qs[NQ];
    tdm_rng r;
    tdm_rng_seed(&r, 9);
    for (int i = 0; i < NQ; i++) {
        qs[i] = (tdm_search_query){NULL, st[i], random_terms(&r, &c, st[i], 6, i % 2)};
        if (i % 5 == 0)
            qs[i].nterms = 0;
    }
    for (size_t a = 0; a < NALGOS; a++) {
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.algorithm = algos[a];
        o.k = a % 2 ? 10 : 100;
        tdm_search_result *res[NQ];
        if (tdm_search_batch(s, qs, NQ, &o, res) != TDM_OK)
            fail_msg("batch: %s", tdm_last_error());
        int host = 0, dev = 0;
        for (int i = 0; i < NQ; i++) {
            char what[64];
            snprintf(what, sizeof what, "%s batch query %d", tdm_algorithm_name(o.algorithm), i);
            tdm_search_result *one = search(d, qs[i].terms, qs[i].nterms, &o, what);
            same_hits(res[i], one, what);
            host += res[i]->terms && res[i]->variant == TDM_VARIANT_HOST;
            dev += res[i]->terms && res[i]->variant != TDM_VARIANT_HOST;
            if (res[i]->variant == TDM_VARIANT_HOST)
                assert_true(res[i]->launches == 0 && res[i]->batch == 1);
            tdm_search_result_free(one);
            tdm_search_result_free(res[i]);
        }
        if (!host || !dev)
            fail_msg("%s: %d queries on the host, %d on the device: want both",
                     tdm_algorithm_name(o.algorithm), host, dev);
    }
    tdm_search_close(s);
    tdm_search_close(d);
    tdm_engine_close(mid);
    tdm_index_close(ix);
    randcoll_free(&c);
}

/* A batch call on a CPU device answers on the host (the row's batch_host,
 * planner's rule: tune_table.h) every query, MaxScore at small k too,
 * however many postings its lists hold (to the row's 2^20); the answers are
 * the device's. */
/* A batch call's n queries prepared together (tdm_search_prepare_all) on
 * device d, whose row answers a batch's OR queries on the host: each is
 * planned for the host with nothing made for a device; prepared alone, the
 * same query gets its lists prepared unless the single rule says host. */
static void prepared_as_batch(tdm_search *s, const tdm_search_query *qs, size_t n, int d)
{
    tdm_search_options o, oc;
    tdm_search_options_init(&o);
    o.algorithm = TDM_ALGO_OR;
    o.device = d;
    tdm_err err = {0};
    assert_int_equal(tdm_search_options_check(&o, &oc, &err), TDM_OK);
    tdm_sbq *items = calloc(n, sizeof *items);
    assert_non_null(items);
    tdm_search_prepare_all(s, qs, &oc, n, items);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(items[i].prc, TDM_OK);
        assert_true(items[i].pl.host && !items[i].prepped && !items[i].run);
        tdm_sbq_free(&items[i]);
    }
    tdm_search_prepare_all(s, qs, &oc, 1, items);
    assert_int_equal(items[0].prepped, !items[0].pl.host);
    tdm_sbq_free(&items[0]);
    free(items);
}

static void batches_on_the_host(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 12, 30000, 8);
    tdm_index *ix = write_open(&c, tdm_test_tmpdir("host_batch_rule"), "bp128", 0, 0);
    tdm_engine *rules = engine_with(NULL);
    tdm_search *s, *d;
    assert_int_equal(tdm_search_open(rules, ix, &s), TDM_OK);
    assert_int_equal(tdm_search_open(f->dev, ix, &d), TDM_OK);
    enum { NQ = 10 };
    tdm_search_term st[NQ][3];
    tdm_search_query qs[NQ];
    uint64_t npost[NQ];
    tdm_rng r;
    tdm_rng_seed(&r, 13);
    for (int i = 0; i < NQ; i++) {
        npost[i] = 0;
        for (int t = 0; t < 3; t++) {
            uint32_t x = tdm_rng_range(&r, 0, (uint32_t)c.nlists - 1);
            st[i][t] = (tdm_search_term){c.terms[x], 0, 1 + (float)t};
            npost[i] += c.n[x]; /* a repeat counts twice: an upper bound */
        }
        qs[i] = (tdm_search_query){NULL, st[i], 3};
    }
    for (int dv = 0; dv < tdm_engine_device_count(rules); dv++) {
        const tdm_device_info *info = &tdm_engine_device(rules, dv)->info;
        const tdm_tune_row *row = tdm_tune_row_of(info);
        if (!row->batch_host)
            continue;
        for (size_t a = 0; a < NALGOS; a++)
            for (uint32_t k = 10; k <= 1000; k += 990) {
                tdm_search_options o;
                tdm_search_options_init(&o);
                o.algorithm = algos[a];
                o.k = k;
                o.device = dv;
                tdm_search_result *res[NQ];
                if (tdm_search_batch(s, qs, NQ, &o, res) != TDM_OK)
                    fail_msg("batch: %s", tdm_last_error());
                for (int i = 0; i < NQ; i++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s k %u dev %d batch query %d (%llu postings)",
                             tdm_algorithm_name(o.algorithm), k, dv, i,
                             (unsigned long long)npost[i]);
                    tdm_search_result *one = search(d, qs[i].terms, qs[i].nterms, &o, what);
                    same_hits(res[i], one, what);
                    assert_true(npost[i] <= row->batch_host_max_postings);
                    if (res[i]->variant != TDM_VARIANT_HOST)
                        fail_msg("%s: not on the host", what);
                    tdm_search_result_free(one);
                    tdm_search_result_free(res[i]);
                }
            }
        prepared_as_batch(s, qs, NQ, dv);
    }
    tdm_search_close(s);
    tdm_search_close(d);
    tdm_engine_close(rules);
    tdm_index_close(ix);
    randcoll_free(&c);
}

/* ---- MaxScore's pruning (drive/search_host_ms.h), the evaluator called
 * directly: its answer is OR's on the host (no pruning) and the float
 * oracle's, key for key, while it skips documents (fewer pushed than OR's
 * matches) */

/* The host's answer to q for alg (MaxScore at any size) at k into keys
 * (room for k): its count; the documents it pushed in *total. */
static uint32_t host_keys(const tdm_ireader *ir, const tdm_query *q, const tdm_score_params *sp,
                          int alg, uint32_t k, uint64_t *keys, uint32_t *total)
{
    tdm_sout out = {.keys = keys};
    tdm_err err = {0};
    int rc = alg == TDM_ALGO_MAXSCORE ? tdm_search_host_maxscore(ir, q, sp, k, &out, &err)
                                      : tdm_search_host(ir, q, sp, alg, k, &out, &err);
    if (rc != TDM_OK)
        fail_msg("host %s: %s", tdm_algorithm_name(alg), tdm_err_msg(&err));
    *total = out.total;
    return out.n;
}

/* MaxScore's keys for st at k are OR's and the oracle's; returns whether
 * MaxScore pushed fewer documents than OR matched (it pruned). */
static int ms_same(both *b, const tdm_search_term *st, size_t n, const tdm_search_options *o,
                   const char *what)
{
    tdm_query q;
    searchfix_query(&q, b->ir, st, n, what);
    int impact = o->scoring == TDM_SCORE_IMPACT ||
                 (o->scoring == TDM_SCORE_AUTO && tdm_ireader_info_get(b->ir)->impact);
    tdm_score_params sp = {impact ? TDM_SCORING_IMPACT : TDM_SCORING_BM25, o->k1, o->b};
    uint64_t *ms = malloc(o->k * sizeof *ms), *or = malloc(o->k * sizeof *or);
    uint32_t tms = 0, tor = 0;
    uint32_t nms = q.nterms ? host_keys(b->ir, &q, &sp, TDM_ALGO_MAXSCORE, o->k, ms, &tms) : 0;
    uint32_t nor = q.nterms ? host_keys(b->ir, &q, &sp, TDM_ALGO_OR, o->k, or, &tor) : 0;
    if (nms != nor)
        fail_msg("%s: MaxScore %u hits, OR %u", what, nms, nor);
    for (uint32_t i = 0; i < nms; i++)
        if (ms[i] != or[i])
            fail_msg("%s: rank %u: MaxScore doc %u score %.9g, OR doc %u score %.9g", what, i,
                     ~(uint32_t)ms[i], tdm_u2f((uint32_t)(ms[i] >> 32)), ~(uint32_t)or[i],
                     tdm_u2f((uint32_t)(or[i] >> 32)));
    tdm_hit *w = malloc(o->k * sizeof *w);
    size_t nw = searchfix_oracle(b->or, b->ir, st, n, o, TDM_MATCH_OR, TDM_ORACLE_FLOAT, w, NULL);
    if (nw != nms)
        fail_msg("%s: MaxScore %u hits, the oracle %zu", what, nms, nw);
    for (size_t i = 0; i < nw; i++)
        if (~(uint32_t)ms[i] != w[i].docid ||
            (double)tdm_u2f((uint32_t)(ms[i] >> 32)) != w[i].score)
            fail_msg("%s: rank %zu: MaxScore doc %u, the oracle's %u", what, i,
                     ~(uint32_t)ms[i], w[i].docid);
    if (nms < o->k && tms != tor) /* fewer matches than k: nothing may be skipped */
        fail_msg("%s: %u pushed of %u matches below k", what, tms, tor);
    free(w);
    free(ms);
    free(or);
    tdm_query_free(&q);
    return tms < tor;
}

/* Random queries on c's index b at k = 1, 10, 100, 1,000 and 10,000 (past
 * every match: c has fewer documents), BM25 (the stored bounds' parameters
 * and others) or impact scores; fails unless MaxScore pruned somewhere. */
static void ms_queries(both *b, const randcoll *c, tdm_rng *r, int queries, int impact,
                       const char *tag)
{
    static const uint32_t kk[] = {1, 10, 100, 1000, 10000};
    tdm_search_term st[16];
    int pruned = 0;
    for (int qi = 0; qi < queries; qi++) {
        size_t n = searchfix_terms(r, c, st, 8, qi % 2, 4);
        tdm_search_options o;
        tdm_search_options_init(&o);
        if (qi % 5 == 4 && !impact) { /* the stored bounds do not apply: OR's path */
            o.k1 = 2.0;
            o.b = 1.0;
        }
        for (size_t ki = 0; ki < sizeof kk / sizeof *kk; ki++) {
            o.k = kk[ki];
            char what[160];
            snprintf(what, sizeof what, "%s MaxScore query %d (%zu terms) k %u k1 %g", tag, qi,
                     n, o.k, o.k1);
            pruned += ms_same(b, st, n, &o, what);
        }
    }
    if (!pruned)
        fail_msg("%s: MaxScore pruned nothing: the test tests nothing", tag);
}

static void maxscore_prunes(void **state)
{
    fixture *f = *state;
    static const char *codecs[] = {"bp128", "vbyte128", "pef", "rice"};
    int small = tdm_test_small();
    for (int ci = 0; ci < 5; ci++) {
        int impact = ci == 4;
        randcoll c;
        randcoll_init(&c, 40 + ci, small ? 3000 : 8000, 40);
        tdm_rng r;
        tdm_rng_seed(&r, 90 + ci);
        if (impact) /* impacts 1..3: ties by the thousand */
            for (uint64_t i = 0; i < c.nlists; i++)
                for (size_t j = 0; j < c.n[i]; j++)
                    c.freqs[i][j] = tdm_rng_range(&r, 1, 3);
        both b;
        both_open(f, write_open(&c, tdm_test_tmpdir("host_ms"), impact ? "bp128" : codecs[ci],
                                0, impact), &b);
        char tag[64];
        snprintf(tag, sizeof tag, "%s%s", impact ? "impact " : "", impact ? "bp128" : codecs[ci]);
        ms_queries(&b, &c, &r, small ? 10 : 40, impact, tag);
        both_close(&b);
        randcoll_free(&c);
    }
}

/* WAND and BMW on the host prune with MaxScore's evaluator past its
 * threshold (search_host.c, want_ms), MaxScore too, through the host path's
 * own rule (tdm_search_host): OR's keys and the oracle's, while they skip
 * documents on long queries at small k; ranked OR never skips one. */
static void pruning_algorithms(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 77, 20000, 20);
    both b;
    both_open(f, write_open(&c, tdm_test_tmpdir("host_prune"), "bp128", 0, 0), &b);
    static const int alg[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    static const uint32_t kk[] = {1, 2, 5};
    int pruned[3] = {0};
    tdm_rng r;
    tdm_rng_seed(&r, 78);
    tdm_score_params sp = tdm_score_params_default();
    for (int qi = 0; qi < 12; qi++) {
        tdm_search_term st[6];
        size_t n = 3 + qi % 4;
        for (size_t t = 0; t < n; t++)
            st[t] = (tdm_search_term){c.terms[tdm_rng_range(&r, 0, (uint32_t)c.nlists - 1)], 0,
                                      1 + (float)(t % 2)};
        tdm_query q;
        searchfix_query(&q, b.ir, st, n, "pruning query");
        for (size_t ki = 0; ki < sizeof kk / sizeof *kk; ki++) {
            uint32_t k = kk[ki], tor = 0, tal = 0;
            uint64_t or[5], keys[5];
            tdm_sout out = {.keys = or};
            tdm_err err = {0};
            assert_int_equal(tdm_search_host(b.ir, &q, &sp, TDM_ALGO_OR, k, &out, &err), TDM_OK);
            uint32_t nor = out.n;
            tor = out.total;
            for (size_t a = 0; a < 3; a++) {
                out = (tdm_sout){.keys = keys};
                assert_int_equal(tdm_search_host(b.ir, &q, &sp, alg[a], k, &out, &err), TDM_OK);
                tal = out.total;
                char what[96];
                snprintf(what, sizeof what, "%s query %d (%zu terms) k %u",
                         tdm_algorithm_name(alg[a]), qi, n, k);
                if (out.n != nor || memcmp(keys, or, nor * sizeof *keys))
                    fail_msg("%s: not OR's keys", what);
                pruned[a] += tal < tor;
            }
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.k = k;
            tdm_hit w[5];
            size_t nw = searchfix_oracle(b.or, b.ir, st, n, &o, TDM_MATCH_OR, TDM_ORACLE_FLOAT, w,
                                         NULL);
            assert_int_equal(nw, nor);
            for (size_t i = 0; i < nw; i++)
                assert_int_equal(~(uint32_t)or[i], w[i].docid);
        }
        tdm_query_free(&q);
    }
    for (size_t a = 0; a < 3; a++)
        if (!pruned[a])
            fail_msg("%s on the host pruned no query", tdm_algorithm_name(alg[a]));
    both_close(&b);
    randcoll_free(&c);
}

/* The top k MaxScore's evaluator prunes by (tdm_htopk_init_tight: a heap,
 * past TDM_HTOPK_TIGHT_HEAP_MAX a cut every TDM_HTOPK_TIGHT_SLACK keys)
 * keeps what the plain one keeps, its threshold the k-th largest key
 * (a heap) or at most TDM_HTOPK_TIGHT_SLACK keys short of it, in the
 * memory tdm_htopk_words(k) asks. */
static void top_k_tight(void **state)
{
    (void)state;
    static const uint32_t kk[] = {1, 64, 65, 100, 256, 257, 1000, 5000};
    enum { N = 20000 };
    uint64_t *keys = malloc(N * sizeof *keys), *sorted = malloc(N * sizeof *sorted);
    assert_non_null(keys);
    assert_non_null(sorted);
    tdm_rng r;
    tdm_rng_seed(&r, 29);
    for (uint32_t i = 0; i < N; i++) /* distinct: the docid part */
        keys[i] = (uint64_t)tdm_rng_range(&r, 0, 5000) << 32 | (uint32_t)~i;
    for (size_t ki = 0; ki < sizeof kk / sizeof *kk; ki++) {
        uint32_t k = kk[ki];
        size_t words = tdm_htopk_words(k);
        uint64_t *ma = malloc(words * sizeof *ma), *mb = malloc(words * sizeof *mb);
        uint64_t *oa = malloc(k * sizeof *oa), *ob = malloc(k * sizeof *ob);
        assert_non_null(ma);
        assert_non_null(mb);
        assert_non_null(oa);
        assert_non_null(ob);
        tdm_htopk a, b;
        tdm_htopk_init(&a, k, ma);
        tdm_htopk_init_tight(&b, k, mb);
        for (uint32_t i = 0; i < N; i++) {
            tdm_htopk_push(&a, keys[i]);
            tdm_htopk_push(&b, keys[i]);
            sorted[i] = keys[i];
            /* the pushed keys above the threshold: k, or fewer than the
               slack more */
            if (i % 997 == 0 && b.full) {
                uint32_t above = 0;
                for (uint32_t j = 0; j <= i; j++)
                    above += sorted[j] >= b.thr;
                if (k <= TDM_HTOPK_TIGHT_HEAP_MAX)
                    assert_int_equal(above, k);
                else
                    assert_true(above >= k && above < k + TDM_HTOPK_TIGHT_SLACK);
            }
        }
        uint32_t na = tdm_htopk_finish(&a, oa), nb = tdm_htopk_finish(&b, ob);
        assert_int_equal(na, k);
        assert_int_equal(nb, k);
        assert_memory_equal(oa, ob, k * sizeof *oa);
        assert_int_equal(a.matched, b.matched);
        free(ma);
        free(mb);
        free(oa);
        free(ob);
    }
    free(keys);
    free(sorted);
}

/* Term 0 every document, term 1 every second, term 2 every seventh, term 3
 * every fiftieth, frequencies rising with the term (the rarer, the higher:
 * MaxScore finds the top k in the rare lists and passes the common ones);
 * the other terms one posting each (a small index). */
static void large_k_shape(randcoll *c)
{
    static const uint32_t every[] = {1, 2, 7, 50};
    for (uint64_t i = 0; i < c->nlists; i++) {
        size_t n = 0;
        uint32_t step = i < 4 ? every[i] : c->ndocs;
        for (uint32_t d = 0; d < c->ndocs; d += step) {
            c->docids[i][n] = d;
            c->freqs[i][n++] = 1 + (uint32_t)i * 2 + d % (3 + (uint32_t)i);
        }
        c->n[i] = n;
    }
}

/* At large k the pruning algorithms take MaxScore's evaluator from
 * MS_POSTINGS_SQRT_K sqrt(k) postings (search_host.c, want_ms), below the
 * linear rule's MS_POSTINGS_PER_K k: the four terms (about 250,000
 * postings) at k 100 (from 200,000; linearly 500,000) skip documents, at
 * k 1,000 (from 632,456) none; every answer OR's keys and the oracle's. */
static void pruning_large_k(void **state)
{
    (void)state;
    randcoll c;
    randcoll_init(&c, 5, 150000, 4);
    assert_true(c.nlists >= 4);
    large_k_shape(&c);
    tdm_index *ix = write_open(&c, tdm_test_tmpdir("host_large_k"), "bp128", 0, 0);
    const tdm_ireader *ir = tdm_index_ireader(ix);
    tdm_oracle *or;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(ir, &or, &err), TDM_OK);
    tdm_search_term st[4];
    for (size_t t = 0; t < 4; t++)
        st[t] = (tdm_search_term){c.terms[t], 0, 1};
    tdm_query q;
    searchfix_query(&q, ir, st, 4, "large k query");
    static const int alg[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    static const uint32_t kk[] = {100, 1000};
    uint64_t *ork = malloc(1000 * sizeof *ork), *keys = malloc(1000 * sizeof *keys);
    tdm_hit *w = malloc(1000 * sizeof *w);
    assert_non_null(ork);
    assert_non_null(keys);
    assert_non_null(w);
    tdm_score_params sp = tdm_score_params_default();
    for (size_t ki = 0; ki < 2; ki++) {
        uint32_t k = kk[ki];
        tdm_sout out = {.keys = ork};
        assert_int_equal(tdm_search_host(ir, &q, &sp, TDM_ALGO_OR, k, &out, &err), TDM_OK);
        uint32_t nor = out.n, tor = out.total;
        assert_int_equal(tor, c.ndocs);
        for (size_t a = 0; a < 3; a++) {
            out = (tdm_sout){.keys = keys};
            assert_int_equal(tdm_search_host(ir, &q, &sp, alg[a], k, &out, &err), TDM_OK);
            if (out.n != nor || memcmp(keys, ork, nor * sizeof *keys))
                fail_msg("%s k %u: not OR's keys", tdm_algorithm_name(alg[a]), k);
            if ((out.total < tor) != (k == 100))
                fail_msg("%s k %u: %u of %u documents scored: MaxScore's evaluator %s",
                         tdm_algorithm_name(alg[a]), k, out.total, tor,
                         k == 100 ? "not taken" : "taken");
        }
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.k = k;
        size_t nw = searchfix_oracle(or, ir, st, 4, &o, TDM_MATCH_OR, TDM_ORACLE_FLOAT, w, NULL);
        assert_int_equal(nw, nor);
        for (size_t i = 0; i < nw; i++)
            assert_int_equal(~(uint32_t)ork[i], w[i].docid);
    }
    free(ork);
    free(keys);
    free(w);
    tdm_query_free(&q);
    tdm_oracle_close(or);
    tdm_index_close(ix);
    randcoll_free(&c);
}

/* Term 0 every document, frequency (or impact) 4 but 9 in documents
 * [1100, 1110), a middle block; term 1 every third document, 1..3. */
static void one_term_shape(randcoll *c)
{
    for (uint64_t i = 0; i < 2; i++) {
        size_t n = 0;
        for (uint32_t d = 0; d < c->ndocs; d++)
            if (i == 0 || d % 3 == 0) {
                c->docids[i][n] = d;
                c->freqs[i][n++] = i ? 1 + d % 3 : d >= 1100 && d < 1110 ? 9 : 4;
            }
        c->n[i] = n;
    }
}

/* The host's total for one term under alg at k (the documents it matched,
 * or scored where it prunes). */
static uint32_t one_total(both *b, const char *term, int impact, int alg, uint32_t k)
{
    tdm_search_term st = {term, 0, 1};
    tdm_query q;
    searchfix_query(&q, b->ir, &st, 1, "one term");
    tdm_score_params sp = tdm_score_params_default();
    sp.kind = impact ? TDM_SCORING_IMPACT : TDM_SCORING_BM25;
    uint64_t keys[16];
    uint32_t total = 0;
    host_keys(b->ir, &q, &sp, alg, k, keys, &total);
    tdm_query_free(&q);
    return total;
}

/* One-term queries go by their blocks' bounds (search_host_one.h): the
 * best block first, then the others in order, passed below the k-th score;
 * the impact index's ties (score 4 in every block but one) are won by the
 * smallest docids, in blocks before the best one. Every algorithm and k
 * around the ten best and past the list: the oracle's answer; AND's total
 * every document of the list, BMW's the one block it scored. */
static void one_term_blocks(void **state)
{
    fixture *f = *state;
    static const int alg[] = {TDM_ALGO_AND, TDM_ALGO_AND_OR, TDM_ALGO_MAXSCORE,
                              TDM_ALGO_BMW, TDM_ALGO_WAND, TDM_ALGO_OR};
    static const uint32_t kk[] = {1, 5, 10, 12, 64, 200, 5000};
    for (int impact = 0; impact < 2; impact++) {
        randcoll c;
        randcoll_init(&c, 21, 3000, 8);
        one_term_shape(&c);
        both b;
        both_open(f, write_open(&c, tdm_test_tmpdir("host_one"), "bp128", 0, impact), &b);
        for (int t = 0; t < 2; t++)
            for (size_t a = 0; a < sizeof alg / sizeof *alg; a++)
                for (size_t ki = 0; ki < sizeof kk / sizeof *kk; ki++)
                    for (int d = 0; d < b.ndev; d++) {
                        tdm_search_term st = {c.terms[t], 0, 1};
                        tdm_search_options o;
                        tdm_search_options_init(&o);
                        o.algorithm = alg[a];
                        o.k = kk[ki];
                        o.device = d;
                        char what[96];
                        snprintf(what, sizeof what, "%s one term %d %s k %u dev %d",
                                 impact ? "impact" : "bm25", t, tdm_algorithm_name(alg[a]),
                                 o.k, d);
                        size_t got = check(&b, &st, 1, &o, what);
                        assert_int_equal(got, o.k < c.n[t] ? o.k : c.n[t]);
                    }
        assert_int_equal(one_total(&b, c.terms[0], impact, TDM_ALGO_AND, 10), 3000);
        assert_int_equal(one_total(&b, c.terms[0], impact, TDM_ALGO_OR, 10), 3000);
        /* impacts: the ten 9s are the top 10, every other block's bound about 4 */
        uint32_t ms = one_total(&b, c.terms[0], impact, TDM_ALGO_BMW, 10);
        if (impact && ms > 128)
            fail_msg("BMW scored %u of 3000 documents of one term at k 10", ms);
        both_close(&b);
        randcoll_free(&c);
    }
}

/* AND's filter's edges (search_host_and.c): term 0 every document of
 * 6,000; 1 every 50th (47 blocks of one list read as one candidate block
 * each); 2 documents 4,000..4,300 (ends while the lead's candidates go on);
 * 3 every 7th below 200, then 5,999 (a jump over every block of the longer
 * lists); 4 documents 129..131; 5 one posting, 4,000; tf 1..3. */
static void and_shape(randcoll *c)
{
    for (uint64_t i = 0; i < 6; i++) {
        size_t n = 0;
        for (uint32_t d = 0; d < c->ndocs; d++) {
            int take = i == 0   ? 1
                       : i == 1 ? d % 50 == 0
                       : i == 2 ? d >= 4000 && d <= 4300
                       : i == 3 ? (d < 200 && d % 7 == 0) || d == 5999
                       : i == 4 ? d >= 129 && d <= 131
                                : d == 4000;
            if (take) {
                c->docids[i][n] = d;
                c->freqs[i][n++] = 1 + (d / 3) % 3;
            }
        }
        c->n[i] = n;
    }
}

/* Pairs and triples of and_shape's lists under AND and AND-then-OR, k
 * below, at and above their matches, BM25 and impact scores (ties by the
 * hundred): the oracle's answer and the device's. */
static void and_filters(void **state)
{
    fixture *f = *state;
    randcoll c;
    randcoll_init(&c, 13, 6000, 10);
    and_shape(&c);
    both b;
    both_open(f, write_open(&c, tdm_test_tmpdir("host_and"), "bp128", 0, 0), &b);
    static const int qs[][3] = {{0, 2, -1}, {1, 2, -1}, {0, 3, -1}, {0, 1, 2}, {0, 4, -1},
                                {3, 4, -1}, {1, 3, -1}, {2, 5, -1}, {0, 1, 5}, {3, 0, 1},
                                {4, 1, -1}};
    static const int alg[] = {TDM_ALGO_AND, TDM_ALGO_AND_OR};
    static const uint32_t kk[] = {1, 3, 10, 100, 1000};
    for (size_t q = 0; q < sizeof qs / sizeof *qs; q++)
        for (size_t a = 0; a < 2; a++)
            for (size_t ki = 0; ki < sizeof kk / sizeof *kk; ki++)
                for (int impact = 0; impact < 2; impact++) {
                    tdm_search_term st[3];
                    size_t n = 0;
                    for (size_t t = 0; t < 3 && qs[q][t] >= 0; t++)
                        st[n++] = (tdm_search_term){c.terms[qs[q][t]], 0, 1};
                    tdm_search_options o;
                    tdm_search_options_init(&o);
                    o.algorithm = alg[a];
                    o.k = kk[ki];
                    o.scoring = impact ? TDM_SCORE_IMPACT : TDM_SCORE_AUTO;
                    char what[96];
                    snprintf(what, sizeof what, "and query %zu %s k %u %s", q,
                             tdm_algorithm_name(o.algorithm), o.k, impact ? "impact" : "bm25");
                    check(&b, st, n, &o, what);
                }
    both_close(&b);
    randcoll_free(&c);
}

/* A frequency read alone (tdm_hlist_tf_at, bp's cheap get) is the
 * decoded block's at every position of every block, frequencies past 2^20
 * too; bp128 says it reads one cheaply, vbyte not. */
static void tf_at(void **state)
{
    (void)state;
    static const char *codecs[] = {"bp128", "bp256", "vbyte128"};
    for (size_t ci = 0; ci < 3; ci++) {
        randcoll c;
        randcoll_init(&c, 31, 3000, 6);
        tdm_rng r;
        tdm_rng_seed(&r, 32);
        for (uint64_t i = 0; i < c.nlists; i++)
            for (size_t j = 0; j < c.n[i]; j++)
                c.freqs[i][j] = i % 2 ? tdm_rng_range(&r, 1, (1u << 20) + (uint32_t)j * 999)
                                      : 1 + j % 5;
        tdm_index *ix = write_open(&c, tdm_test_tmpdir("host_tfat"), codecs[ci], 0, 0);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_err err = {0};
        uint32_t buf[256];
        for (uint64_t i = 0; i < c.nlists; i++) {
            uint64_t id;
            assert_int_equal(tdm_ireader_find(ir, c.terms[i], strlen(c.terms[i]), &id), TDM_OK);
            tdm_hlist h;
            assert_int_equal(tdm_hlist_open(&h, ir, id, &err), TDM_OK);
            assert_int_equal(tdm_hlist_tf_cheap(&h), ci < 2);
            for (uint32_t b = 0; b < h.l.nblocks; b++) {
                assert_int_equal(tdm_hlist_tfs(&h, b, buf, &err), TDM_OK);
                for (uint32_t p = 0; p < tdm_hlist_block_len(&h, b); p++) {
                    uint32_t tf = 0;
                    assert_int_equal(tdm_hlist_tf_at(&h, b, p, &tf, &err), TDM_OK);
                    assert_int_equal(tf, buf[p]);
                    assert_int_equal(tf, c.freqs[i][b * h.l.docs.block_size + p]);
                }
            }
        }
        tdm_index_close(ix);
        randcoll_free(&c);
    }
}

/* A block's scores at once (tdm_hscores, divisions four at a time) are
 * tdm_score_f's bit for bit: BM25 at several k1, b (document lengths 0 to
 * 2^32 - 1, frequencies 1 to 2^32 - 1) and impacts, odd n (the loop's
 * scalar tail). */
static void block_scores(void **state)
{
    fixture *f = *state;
    (void)f;
    randcoll c;
    randcoll_init(&c, 41, 500, 4);
    for (int impact = 0; impact < 2; impact++) {
        tdm_index *ix = write_open(&c, tdm_test_tmpdir("host_scores"), "bp128", 0, impact);
        const tdm_ireader *ir = tdm_index_ireader(ix);
        tdm_search_term st[2] = {{c.terms[0], 0, 1}, {c.terms[1], 0, 2.5f}};
        tdm_query q;
        searchfix_query(&q, ir, st, 2, "block scores");
        static const double kb[][2] = {{1.2, 0.75}, {0.9, 0.4}, {2.0, 1.0}, {1.2, 0.0}};
        tdm_rng r;
        tdm_rng_seed(&r, 42);
        for (size_t p = 0; p < 4; p++) {
            tdm_score_params sp = {impact ? TDM_SCORING_IMPACT : TDM_SCORING_BM25, kb[p][0],
                                   kb[p][1]};
            tdm_scorer sc;
            tdm_err err = {0};
            assert_int_equal(tdm_scorer_init(&sc, ir, &q, &sp, &err), TDM_OK);
            uint32_t tf[131], dl[131];
            float out[131];
            for (int round = 0; round < 50; round++) {
                uint32_t n = 1 + tdm_rng_range(&r, 0, 130);
                for (uint32_t i = 0; i < n; i++) {
                    int big = tdm_rng_range(&r, 0, 3) == 0;
                    tf[i] = big ? tdm_rng_range(&r, 1, UINT32_MAX) : tdm_rng_range(&r, 1, 40);
                    dl[i] = big ? tdm_rng_range(&r, 0, UINT32_MAX) : tdm_rng_range(&r, 0, 3000);
                }
                for (size_t t = 0; t < q.nterms; t++) {
                    tdm_hscores(&sc, t, tf, dl, n, out);
                    for (uint32_t i = 0; i < n; i++) {
                        float want = tdm_score_f(&sc, t, tf[i], impact ? 0 : dl[i]);
                        if (tdm_f2u(out[i]) != tdm_f2u(want))
                            fail_msg("term %zu tf %u dl %u: %.9g, tdm_score_f %.9g", t, tf[i],
                                     dl[i], out[i], want);
                    }
                }
            }
            tdm_scorer_free(&sc);
        }
        tdm_query_free(&q);
        tdm_index_close(ix);
    }
    randcoll_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edge_cases),
        cmocka_unit_test(dense_windows),
        cmocka_unit_test(one_term_blocks),
        cmocka_unit_test(and_filters),
        cmocka_unit_test(tf_at),
        cmocka_unit_test(block_scores),
        cmocka_unit_test(the_rule),
        cmocka_unit_test(batches),
        cmocka_unit_test(batches_on_the_host),
        cmocka_unit_test(policies),
        cmocka_unit_test(impact_indexes),
        cmocka_unit_test(random_indexes),
        cmocka_unit_test(maxscore_prunes),
        cmocka_unit_test(pruning_algorithms),
        cmocka_unit_test(pruning_large_k),
        cmocka_unit_test(top_k_tight),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
