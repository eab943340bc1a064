/* A batch call's queries that run alone (drive/search_alone.c), several at
 * once on host threads: on every device of the engine, with one thread
 * and with four (TANDEM_BATCH_ALONE_THREADS), batch calls of OR, WAND, BMW,
 * MaxScore, AND-then-OR and auto at k = 10 and 1,000 whose queries run
 * alone (k above the row's batch_max_k; OR of TANDEM_BATCH_OR_ALONE_TERMS
 * terms or more) beside queries in device batches: every answer the lone
 * query's (tdm_search_terms) and the float oracle's bit for bit, and
 * result.batch 1 exactly where the query ran alone. Every query on the
 * device (TANDEM_HOST_MAX_POSTINGS = 0). A fault injected into the runs of
 * the queries of one length (tdm_search_alone_fail_force): a query's own
 * error (TDM_ERR_CORRUPT) is that query's status and message, the others
 * answered; one that ends the call (host memory; the device) fails the
 * call with every result NULL, never a partial answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drive/search_testing.h"
#include "harness/oracle.h"
#include "index/index_priv.h"
#include "randcoll.h"
#include "searchfix.h"
#include "testutil.h"

#define NQ 48
#define MAXT 10
#define OR_ALONE 6 /* TANDEM_BATCH_OR_ALONE_TERMS of the test's engines */

typedef struct fixture {
    tdm_engine *eng[2]; /* one thread, four */
    randcoll c;
    tdm_index *ix;
    const tdm_ireader *ir;
    tdm_oracle *or;
    tdm_search_term st[NQ][MAXT + 1];
    tdm_search_query q[NQ];
    uint32_t known[NQ]; /* distinct known terms of query i (the prepared query's nt) */
    size_t nq;
} fixture;

static tdm_engine *engine_threads(const char *threads)
{
    char v[16];
    snprintf(v, sizeof v, "%d", OR_ALONE);
    setenv("TANDEM_HOST_MAX_POSTINGS", "0", 1); /* every query's runs on the device */
    setenv("TANDEM_BATCH_OR_ALONE_TERMS", v, 1);
    setenv("TANDEM_BATCH_ALONE_THREADS", threads, 1);
    if (tdm_test_small()) /* Oclgrind: a call of lone queries at k 1,000 takes seconds */
        setenv("TANDEM_RUN_TIMEOUT_MS", "off", 1);
    tdm_engine *e = tdm_test_engine();
    unsetenv("TANDEM_RUN_TIMEOUT_MS");
    unsetenv("TANDEM_HOST_MAX_POSTINGS");
    unsetenv("TANDEM_BATCH_OR_ALONE_TERMS");
    unsetenv("TANDEM_BATCH_ALONE_THREADS");
    return e;
}

/* Query i: 1 + i % MAXT distinct known terms (a fixed length for the
 * faults), weights of 1 or not; every 12th with an unknown term too, every
 * 16th empty. */
static void make_queries(fixture *f)
{
    tdm_rng r;
    tdm_rng_seed(&r, 29);
    f->nq = tdm_test_small() ? 12 : NQ;
    for (size_t i = 0; i < f->nq; i++) {
        size_t n = i % 16 == 15 ? 0 : 1 + i % MAXT;
        for (size_t t = 0; t < n; t++) {
            const char *term;
            int again;
            do { /* distinct: the prepared query's nt is n */
                term = f->c.terms[tdm_rng_range(&r, 0, (uint32_t)f->c.nlists - 1)];
                again = 0;
                for (size_t u = 0; u < t; u++)
                    again |= f->st[i][u].term == term;
            } while (again);
            double w = i % 3 ? 1.0 : tdm_rng_range(&r, 1, 1000) / 64.0;
            f->st[i][t] = (tdm_search_term){term, 0, w};
        }
        f->known[i] = (uint32_t)n;
        if (i % 12 == 11)
            f->st[i][n++] = (tdm_search_term){"no-such-term", 0, 1.0};
        f->q[i] = (tdm_search_query){NULL, f->st[i], n};
    }
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->eng[0] = engine_threads("1");
    f->eng[1] = engine_threads("4");
    randcoll_init(&f->c, 7, tdm_test_small() ? 800 : 6000, 40);
    f->ix = randcoll_index(&f->c, tdm_test_tmpdir("search_alone"), "a.tdm", NULL);
    f->ir = tdm_index_ireader(f->ix);
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(f->ir, &f->or, &err), TDM_OK);
    make_queries(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tdm_oracle_close(f->or);
    tdm_index_close(f->ix);
    randcoll_free(&f->c);
    tdm_engine_close(f->eng[0]);
    tdm_engine_close(f->eng[1]);
    free(f);
    return 0;
}

/* Whether query i runs alone under o on the test's engines. */
static int runs_alone(const fixture *f, size_t i, const tdm_search_options *o)
{
    int a = o->algorithm == TDM_ALGO_AUTO ? (f->known[i] <= 1 ? TDM_ALGO_OR : TDM_ALGO_MAXSCORE)
                                          : o->algorithm;
    if (a == TDM_ALGO_AND || a == TDM_ALGO_AND_OR)
        return 0;
    return o->k > 128 || (a == TDM_ALGO_OR && f->known[i] >= OR_ALONE);
}

/* Result b of query i against the query alone and the oracle, bit for bit. */
static void check_one(fixture *f, tdm_search *s, size_t i, const tdm_search_options *o,
                      const tdm_search_result *b, const char *what)
{
    const tdm_search_query *q = &f->q[i];
    tdm_search_result *one = NULL;
    int rc = tdm_search_terms(s, q->terms, q->nterms, o, &one);
    if (rc != b->status)
        fail_msg("%s query %zu: batch status %d, alone %d", what, i, b->status, rc);
    if (rc) { /* a device that cannot (BM25 without exact division): both say so */
        assert_non_null(b->error);
        assert_int_equal(b->n, 0);
        return;
    }
    if (b->n != one->n)
        fail_msg("%s query %zu: batch %zu hits, alone %zu", what, i, b->n, one->n);
    for (size_t h = 0; h < b->n; h++) {
        uint32_t sb, so;
        memcpy(&sb, &b->hits[h].score, 4);
        memcpy(&so, &one->hits[h].score, 4);
        if (b->hits[h].docid != one->hits[h].docid || sb != so)
            fail_msg("%s query %zu rank %zu: batch doc %u %.9g, alone doc %u %.9g", what, i, h,
                     b->hits[h].docid, b->hits[h].score, one->hits[h].docid,
                     one->hits[h].score);
    }
    tdm_search_result_free(one);
    tdm_hit *w = malloc(o->k * sizeof *w);
    int match = searchfix_match(f->or, f->ir, q->terms, q->nterms, o);
    size_t nw = searchfix_oracle(f->or, f->ir, q->terms, q->nterms, o, match, TDM_ORACLE_FLOAT,
                                 w, NULL);
    searchfix_same_oracle(b, w, nw, f->ir, what);
    free(w);
    /* alone exactly where the rules say (AND-then-OR's passes aside) */
    if (f->known[i] && o->algorithm != TDM_ALGO_AND_OR &&
        (b->batch == 1) != runs_alone(f, i, o))
        fail_msg("%s query %zu (%u terms): batch %u", what, i, f->known[i], b->batch);
}

/* One batch call of f's queries under o, every answer checked; returns the
 * results (the caller frees them). */
static tdm_search_result **batch_call(fixture *f, tdm_search *s, const tdm_search_options *o)
{
    tdm_search_result **res = calloc(f->nq, sizeof *res);
    if (tdm_search_batch(s, f->q, f->nq, o, res) != TDM_OK)
        fail_msg("batch: %s", tdm_last_error());
    return res;
}

static void results_free(tdm_search_result **res, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tdm_search_result_free(res[i]);
    free(res);
}

/* Alone and batched queries in one call, every algorithm, k 10 and 1,000,
 * one thread and four: the lone answers and the oracle's. Under
 * TANDEM_TEST_SMALL (Oclgrind, which runs one thread whatever the setting)
 * four threads only, and no WAND or auto. */
static void alone_beside_batches(void **state)
{
    fixture *f = *state;
    static const int algos[] = {TDM_ALGO_OR,       TDM_ALGO_WAND,    TDM_ALGO_BMW,
                                TDM_ALGO_MAXSCORE, TDM_ALGO_AND_OR, TDM_ALGO_AUTO};
    static const uint32_t ks[] = {10, 1000};
    int small = tdm_test_small();
    for (int e = small; e < 2; e++) {
        tdm_search *s;
        assert_int_equal(tdm_search_open(f->eng[e], f->ix, &s), TDM_OK);
        int nd = tdm_engine_device_count(f->eng[e]);
        for (int d = 0; d < nd; d++)
            for (size_t a = 0; a < sizeof algos / sizeof *algos; a++)
                for (size_t ki = 0; ki < 2; ki++) {
                    if (small && (algos[a] == TDM_ALGO_WAND || algos[a] == TDM_ALGO_AUTO))
                        continue;
                    tdm_search_options o;
                    tdm_search_options_init(&o);
                    o.device = d;
                    o.algorithm = algos[a];
                    o.k = ks[ki];
                    char what[96];
                    snprintf(what, sizeof what, "threads %d dev %d %s k %u", e ? 4 : 1, d,
                             tdm_algorithm_name(o.algorithm), o.k);
                    tdm_search_result **res = batch_call(f, s, &o);
                    for (size_t i = 0; i < f->nq; i++)
                        check_one(f, s, i, &o, res[i], what);
                    results_free(res, f->nq);
                }
        tdm_search_close(s);
    }
}

/* An injected error of its own in the lone runs of the queries of `bad`
 * terms: theirs, with its message; the others answered as alone (checked
 * with the fault off: a lone query runs alone too). */
static void own_fault(fixture *f, tdm_search *s, const tdm_search_options *o, uint32_t bad,
                      const char *what)
{
    tdm_search_alone_fail_force(bad, TDM_ERR_CORRUPT);
    tdm_search_result **res = batch_call(f, s, o);
    tdm_search_alone_fail_force(0, 0);
    size_t failed = 0, expect = 0;
    for (size_t i = 0; i < f->nq; i++) {
        if (f->known[i] == bad && runs_alone(f, i, o)) {
            expect++;
            if (res[i]->status != TDM_ERR_CORRUPT)
                fail_msg("%s: query %zu: status %d", what, i, res[i]->status);
            assert_non_null(res[i]->error);
            assert_non_null(strstr(res[i]->error, "injected fault"));
            assert_int_equal(res[i]->n, 0);
            failed++;
        } else {
            check_one(f, s, i, o, res[i], what);
        }
    }
    assert_int_equal(failed, expect);
    results_free(res, f->nq);
}

/* An injected error that ends the call: the call fails, every result NULL. */
static void call_fault(fixture *f, tdm_search *s, const tdm_search_options *o, uint32_t bad,
                       int code)
{
    tdm_search_alone_fail_force(bad, code);
    tdm_search_result **res = calloc(f->nq, sizeof *res);
    int rc = tdm_search_batch(s, f->q, f->nq, o, res);
    tdm_search_alone_fail_force(0, 0);
    assert_int_not_equal(rc, TDM_OK);
    if (code == TDM_ERR_NOMEM) { /* host trouble: no lane does better, the error is its own */
        assert_int_equal(rc, TDM_ERR_NOMEM);
        assert_non_null(strstr(tdm_last_error(), "injected fault"));
    }
    for (size_t i = 0; i < f->nq; i++)
        assert_null(res[i]);
    free(res);
}

static void faults(void **state)
{
    fixture *f = *state;
    int nd = tdm_engine_device_count(f->eng[1]);
    for (int d = 0; d < nd; d++) {
        tdm_search *s;
        assert_int_equal(tdm_search_open(f->eng[1], f->ix, &s), TDM_OK);
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.device = d;
        o.algorithm = TDM_ALGO_MAXSCORE;
        o.k = 1000;
        own_fault(f, s, &o, 7, "maxscore k 1000, 7-term queries failed");
        o.algorithm = TDM_ALGO_BMW;
        own_fault(f, s, &o, 1, "bmw k 1000, 1-term queries failed");
        o.algorithm = TDM_ALGO_OR;
        o.k = 10;
        own_fault(f, s, &o, 8, "or k 10, 8-term (alone) queries failed");
        own_fault(f, s, &o, 3, "or k 10, 3-term (batched) queries untouched");
        o.algorithm = TDM_ALGO_WAND;
        o.k = 1000;
        call_fault(f, s, &o, 5, TDM_ERR_NOMEM);
        /* the handle still answers */
        tdm_search_result **res = batch_call(f, s, &o);
        for (size_t i = 0; i < f->nq; i++)
            check_one(f, s, i, &o, res[i], "wand k 1000 after a failed call");
        results_free(res, f->nq);
        /* the device's error last: its lane is dead after it */
        call_fault(f, s, &o, 4, TDM_ERR_OPENCL);
        tdm_search_close(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alone_beside_batches),
        cmocka_unit_test(faults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
