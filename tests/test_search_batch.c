/* tdm_search_batch against the same queries one by one (tdm_search_terms):
 * on every device of the engine, random indexes (several codecs, 1 to
 * 20,000 documents; under TANDEM_TEST_SMALL three small ones and one k per
 * algorithm) and random queries, every algorithm, k = 1, 10 and 1,000, BM25 at the index's parameters and others
 * and impact scores, batch sizes 1 to 200: each query's result must be the
 * lone query's exactly (the same documents in the same order, the same score
 * bits). A batch also holds queries that fail alone (too many terms, a zero
 * weight), empty queries and queries of only unknown terms, which must get
 * their own status and message without failing the others; and the request
 * errors that fail the whole batch. Batched queries must have shared their
 * launches (result.batch > 1) where two or more could. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/writer.h"
#include "randcoll.h"
#include "testutil.h"

static const char *codecs[] = {"bp128", "vbyte128", "pef", "pfor", "raw", "rice"};
#define NCODECS (sizeof codecs / sizeof *codecs)

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND,     TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
#define NALGOS (sizeof algos / sizeof *algos)

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

static const char *write_index(randcoll *c, const char *dir, const char *codec)
{
    tdm_coll_source src;
    randcoll_source(c, &src);
    tdm_iwriter_options o = {.codec = codec};
    tdm_err err = {0};
    char *path = path_in(dir, "b.tdm");
    if (tdm_collection_write(&src, path, &o, &err) != TDM_OK)
        fail_msg("write %s: %s", path, tdm_err_msg(&err));
    tdm_err_clear(&err);
    return path;
}

#define MAXT 24
#define HUGE_TERMS (TDM_SEARCH_MAX_TERMS + 1)

/* Query i of a batch: mostly random terms; some empty, some unknown only,
 * some failing (too many terms, a zero weight). */
static void make_query(tdm_rng *r, const randcoll *c, tdm_search_term *st, tdm_search_term *huge,
                       tdm_search_query *q)
{
    uint32_t kind = tdm_rng_range(r, 0, 19);
    q->text = NULL;
    q->terms = st;
    if (kind == 0) { /* empty */
        q->nterms = 0;
        return;
    }
    if (kind == 1) { /* too many terms: TDM_ERR_LIMIT */
        q->terms = huge;
        q->nterms = HUGE_TERMS;
        return;
    }
    size_t n = tdm_rng_range(r, 1, kind == 2 ? 3 : MAXT);
    for (size_t i = 0; i < n; i++) {
        if (kind == 3 || tdm_rng_range(r, 0, 12) == 0)
            st[i].term = "no-such-term";
        else if (i > 0 && tdm_rng_range(r, 0, 5) == 0)
            st[i].term = st[tdm_rng_range(r, 0, (uint32_t)i - 1)].term;
        else
            st[i].term = c->terms[tdm_rng_range(r, 0, (uint32_t)c->nlists - 1)];
        st[i].id = 0;
        st[i].weight = tdm_rng_range(r, 0, 3) ? 1.0 : tdm_rng_range(r, 1, 1000) / 64.0;
    }
    if (kind == 4)
        st[0].weight = 0.0; /* TDM_ERR_INVALID_ARG for this query alone */
    q->nterms = n;
}

/* The batch's result i against query i alone. */
static void compare(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                    const tdm_search_result *b, const char *what)
{
    tdm_search_result *one = NULL;
    int rc = tdm_search_terms(s, q->terms, q->nterms, o, &one);
    if (b->status != rc)
        fail_msg("%s: batch status %d, alone %d (%s)", what, b->status, rc,
                 rc ? tdm_last_error() : "");
    if (rc) {
        assert_non_null(b->error);
        assert_true(strlen(b->error) > 0);
        assert_int_equal(b->n, 0);
        return;
    }
    assert_null(b->error);
    if (b->n != one->n)
        fail_msg("%s: batch %zu hits, alone %zu", what, b->n, one->n);
    for (size_t i = 0; i < b->n; i++) {
        uint32_t sb, so;
        memcpy(&sb, &b->hits[i].score, 4);
        memcpy(&so, &one->hits[i].score, 4);
        if (b->hits[i].docid != one->hits[i].docid || sb != so)
            fail_msg("%s: rank %zu: batch doc %u score %.9g, alone doc %u score %.9g", what, i,
                     b->hits[i].docid, b->hits[i].score, one->hits[i].docid, one->hits[i].score);
        assert_string_equal(b->hits[i].name, one->hits[i].name);
    }
    assert_int_equal(b->terms, one->terms);
    assert_int_equal(b->unknown, one->unknown);
    assert_int_equal(b->algorithm, one->algorithm);
    assert_true(b->batch >= 1);
    tdm_search_result_free(one);
}

static void run_collection(tdm_engine *eng, uint64_t seed, uint32_t ndocs, const char *codec,
                           const size_t *sizes, size_t nsizes, int small, uint64_t *shared)
{
    static const uint32_t ks[] = {1, 10, 1000};
    const char *dir = tdm_test_tmpdir("search_batch");
    randcoll c;
    randcoll_init(&c, seed, ndocs, 40);
    tdm_rng r;
    tdm_rng_seed(&r, seed * 131 + 5);
    tdm_index *ix;
    if (tdm_index_open(write_index(&c, dir, codec), &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    tdm_search *s;
    if (tdm_search_open(eng, ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    size_t most = 0;
    for (size_t i = 0; i < nsizes; i++)
        most = sizes[i] > most ? sizes[i] : most;
    tdm_search_term *st = calloc(most * MAXT, sizeof *st);
    tdm_search_term *huge = calloc(HUGE_TERMS, sizeof *huge);
    tdm_search_query *qs = calloc(most, sizeof *qs);
    tdm_search_result **res = calloc(most, sizeof *res);
    for (size_t i = 0; i < HUGE_TERMS; i++)
        huge[i] = (tdm_search_term){c.terms[i % c.nlists], 0, 1.0};
    int ndev = tdm_engine_device_count(eng);
    for (int d = 0; d < ndev; d++)
        for (size_t a = 0; a < NALGOS; a++)
            for (size_t ki = small ? (a + seed) % 3 : 0; ki < 3; ki += small ? 3 : 1) {
                size_t n = sizes[(a + ki + (size_t)d) % nsizes];
                for (size_t i = 0; i < n; i++)
                    make_query(&r, &c, st + i * MAXT, huge, &qs[i]);
                tdm_search_options o;
                tdm_search_options_init(&o);
                o.device = d;
                o.algorithm = algos[a];
                o.k = ks[ki];
                uint32_t sc = tdm_rng_range(&r, 0, 3);
                if (sc == 1) {
                    o.k1 = 0.9;
                    o.b = 0.4;
                } else if (sc == 2) {
                    o.scoring = TDM_SCORE_IMPACT;
                }
                if (tdm_search_batch(s, qs, n, &o, res) != TDM_OK)
                    fail_msg("batch of %zu: %s", n, tdm_last_error());
                for (size_t i = 0; i < n; i++) {
                    char what[200];
                    snprintf(what, sizeof what, "%s ndocs %u seed %llu dev %d %s k %u scoring "
                             "%u batch %zu query %zu (%zu terms)", codec, ndocs,
                             (unsigned long long)seed, d, tdm_algorithm_name(o.algorithm), o.k,
                             sc, n, i, qs[i].nterms);
                    assert_non_null(res[i]);
                    compare(s, &qs[i], &o, res[i], what);
                    *shared += res[i]->batch > 1;
                    tdm_search_result_free(res[i]);
                }
            }
    free(st);
    free(huge);
    free(qs);
    free(res);
    tdm_search_close(s);
    tdm_index_close(ix);
    randcoll_free(&c);
}

static void batches_match_lone_queries(void **state)
{
    fixture *f = *state;
    int small = tdm_test_small();
    static const size_t sizes[] = {1, 2, 7, 33, 200};
    static const size_t small_sizes[] = {1, 3, 6};
    uint64_t shared = 0;
    /* small (Oclgrind): three indexes, one k per algorithm */
    for (uint64_t seed = 1; seed <= (small ? 3 : NCODECS); seed++) {
        uint32_t ndocs = seed == 1 ? 1 : (uint32_t)(small ? 40 * seed : 3000 * seed * seed / 2);
        if (small)
            run_collection(f->eng, seed, ndocs, codecs[seed - 1], small_sizes, 3, 1, &shared);
        else
            run_collection(f->eng, seed, ndocs, codecs[seed - 1], sizes, 5, 0, &shared);
    }
    if (shared == 0)
        fail_msg("no query of any batch shared its launches");
}

static void batch_errors(void **state)
{
    fixture *f = *state;
    const char *dir = tdm_test_tmpdir("search_batch_err");
    randcoll c;
    randcoll_init(&c, 99, 50, 10);
    tdm_index *ix;
    if (tdm_index_open(write_index(&c, dir, "bp128"), &ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    tdm_search *s;
    assert_int_equal(tdm_search_open(f->eng, ix, &s), TDM_OK);
    tdm_search_term t = {c.terms[0], 0, 1.0};
    tdm_search_query q[2] = {{NULL, &t, 1}, {NULL, &t, 1}};
    tdm_search_result *res[2] = {(void *)1, (void *)1};
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.k = 0; /* bad options fail the batch: every result NULL */
    assert_int_equal(tdm_search_batch(s, q, 2, &o, res), TDM_ERR_INVALID_ARG);
    assert_null(res[0]);
    assert_null(res[1]);
    assert_non_null(strstr(tdm_last_error(), "k = 0"));
    o.k = 10;
    assert_int_equal(tdm_search_batch(s, NULL, 2, &o, res), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_batch(NULL, q, 2, &o, res), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_batch(s, q, 2, &o, NULL), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_batch(s, q, 0, &o, res), TDM_OK);
    /* terms NULL with nterms > 0: that query's own error */
    q[1].terms = NULL;
    assert_int_equal(tdm_search_batch(s, q, 2, &o, res), TDM_OK);
    assert_int_equal(res[0]->status, TDM_OK);
    assert_true(res[0]->n > 0);
    assert_int_equal(res[1]->status, TDM_ERR_INVALID_ARG);
    assert_non_null(res[1]->error);
    tdm_search_result_free(res[0]);
    tdm_search_result_free(res[1]);
    /* a lone query's result: status OK, no error, batch 1 */
    tdm_search_result *one = NULL;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &one), TDM_OK);
    assert_int_equal(one->status, TDM_OK);
    assert_null(one->error);
    assert_int_equal(one->batch, 1);
    tdm_search_result_free(one);
    tdm_search_close(s);
    tdm_index_close(ix);
    randcoll_free(&c);
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batch_errors),
        cmocka_unit_test(batches_match_lone_queries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
