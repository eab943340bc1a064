/* What the tests of a handle over several partitions share (test_partition,
 * test_split, test_shard_open): engines over the PoCL devices, the request
 * grid (every algorithm, k 1 to 1,000), and the comparison of each answer
 * with the whole index's on one device, bit for bit, or of each status with
 * its status. Header-only: static inline functions. */
#ifndef TDM_TEST_PARTFIX_H
#define TDM_TEST_PARTFIX_H

#include <stdlib.h>

#include "drive/search.h"
#include "randcoll.h"
#include "testutil.h"

/* Engine options on `devices` with the partitioning `partition`: no
 * calibration, no kernel cache (the rest as the environment sets them). */
static inline void partfix_options(tdm_engine_options *o, const char *devices, int partition)
{
    tdm_engine_options_init(o);
    o->devices = devices;
    o->partition = partition;
    o->calibrate = 0;
    o->cache_mode = TDM_CACHE_OFF;
}

/* The engine on `devices`, partitioning `partition`, with the faults
 * `faults` (NULL: none, whatever TANDEM_FAULT_INJECT says) and a budget of
 * `memory` bytes a device (0: TANDEM_DEVICE_MEMORY's, or none). */
static inline tdm_engine *partfix_engine(const char *devices, int partition, const char *faults,
                                         uint64_t memory)
{
    tdm_engine_options o;
    partfix_options(&o, devices, partition);
    o.fault_inject = faults ? faults : "";
    o.device_memory = memory;
    return tdm_test_engine_with(&o);
}

/* The fixture of test_partition and test_split: a random collection
 * (seed; 6,000 documents, 600 small, 50 terms) written to `name` in a
 * fresh directory `tag`, and a handle on it on device 0 alone. */
static inline int partfix_setup(void **state, uint64_t seed, const char *tag, const char *name)
{
    randcoll_fixture *f = calloc(1, sizeof *f);
    randcoll_fixture_open(f, seed, tdm_test_small() ? 600 : 6000, 50, tdm_test_tmpdir(tag), name,
                          partfix_engine("0", TDM_PARTITION_OFF, NULL, 0));
    *state = f;
    return 0;
}

static inline int partfix_teardown(void **state)
{
    randcoll_fixture_close(*state);
    free(*state);
    return 0;
}

/* A handle on ix through e, which must open; skips the test where e is
 * NULL (tdm_test_two_devices found fewer than two devices). */
static inline tdm_search *partfix_search(tdm_engine *e, const tdm_index *ix)
{
    if (!e)
        skip();
    tdm_search *s = NULL;
    assert_int_equal(tdm_search_open(e, ix, &s), TDM_OK);
    return s;
}

static inline tdm_sched_stats partfix_stats(tdm_search *s)
{
    tdm_sched_stats st;
    tdm_sched_stats_init(&st);
    assert_int_equal(tdm_search_stats(s, &st), TDM_OK);
    return st;
}

static const int partfix_algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND,     TDM_ALGO_AND_OR,
                                    TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
#define PARTFIX_NALGOS (sizeof partfix_algos / sizeof *partfix_algos)
static const uint32_t partfix_ks[] = {1, 10, 100, 1000};

/* Default options with algorithm a of partfix_algos and k. */
static inline void partfix_request(tdm_search_options *o, size_t a, uint32_t k)
{
    tdm_search_options_init(o);
    o->algorithm = partfix_algos[a];
    o->k = k;
}

/* Query q's request with algorithm a: k cycling, and every ninth query
 * other BM25 parameters (a shard's bounds then recomputed). */
static inline void partfix_options_for(tdm_search_options *o, size_t q, size_t a)
{
    partfix_request(o, a, partfix_ks[(q + a) % 4]);
    if (q % 9 == 4) {
        o->k1 = 0.8;
        o->b = 0.3;
    }
}

/* What partfix_same checks beside randcoll_same_result. */
enum {
    PARTFIX_ALGO = 1,     /* the same algorithm where the request named one */
    PARTFIX_ALGO_ANY = 2, /* the same algorithm, auto's choice too */
    PARTFIX_WHOLE = 4,    /* a answered whole, on no partition */
};

/* a, the answer of query q under o on the handle `what` names, is b, the
 * whole index's, bit for bit (randcoll_same_result), and `checks`. */
static inline void partfix_same(const tdm_search_result *a, const tdm_search_result *b, size_t q,
                                const tdm_search_options *o, const char *what, int checks)
{
    randcoll_same_result(a, b, q, o->algorithm, o->k, what);
    if ((checks & PARTFIX_ALGO_ANY) || ((checks & PARTFIX_ALGO) && o->algorithm != TDM_ALGO_AUTO))
        assert_int_equal(a->algorithm, b->algorithm);
    if (checks & PARTFIX_WHOLE)
        assert_int_equal(a->partitions, 0);
}

/* Query q (number i) under o through s and through the whole index's
 * handle: the same status, and where it is TDM_OK the same answer
 * (partfix_same). Returns the status; *p and *w are the caller's to free. */
static inline int partfix_pair(tdm_search *s, tdm_search *whole, const tdm_search_query *q,
                               size_t i, const tdm_search_options *o, const char *what,
                               int checks, tdm_search_result **p, tdm_search_result **w)
{
    *p = *w = NULL;
    int rp = tdm_search_terms(s, q->terms, q->nterms, o, p);
    int rw = tdm_search_terms(whole, q->terms, q->nterms, o, w);
    if (rp != rw)
        fail_msg("query %zu: %s %d, whole %d (%s)", i, what, rp, rw, tdm_last_error());
    if (rp == TDM_OK)
        partfix_same(*p, *w, i, o, what, checks);
    return rp;
}

/* Query q (number i) under o through s, where injected faults may fail
 * it, and through the whole index's handle, which must answer: s's answer,
 * where it gives one, is the whole's (partfix_same). Returns s's status,
 * its error message in msg ("" on TDM_OK); *p is the caller's to free. */
static inline int partfix_faulty(tdm_search *s, tdm_search *whole, const tdm_search_query *q,
                                 size_t i, const tdm_search_options *o, const char *what,
                                 int checks, char *msg, size_t cap, tdm_search_result **p)
{
    tdm_search_result *w = NULL;
    *p = NULL;
    int rp = tdm_search_terms(s, q->terms, q->nterms, o, p);
    snprintf(msg, cap, "%s", rp ? tdm_last_error() : ""); /* before the whole's call */
    assert_int_equal(tdm_search_terms(whole, q->terms, q->nterms, o, &w), TDM_OK);
    if (rp == TDM_OK)
        partfix_same(*p, w, i, o, what, checks);
    tdm_search_result_free(w);
    return rp;
}

/* qs as one batch under o through s, which must take it: each query's
 * status the whole index's one by one and, where TDM_OK, its answer
 * (partfix_same). Returns the hits compared. */
static inline size_t partfix_batch(tdm_search *s, tdm_search *whole, const qset *qs,
                                   const tdm_search_options *o, const char *what, int checks)
{
    tdm_search_result *res[RANDCOLL_MAXQ];
    size_t hits = 0;
    if (tdm_search_batch(s, qs->q, qs->n, o, res) != TDM_OK)
        fail_msg("batch %s: %s", tdm_algorithm_name(o->algorithm), tdm_last_error());
    for (size_t i = 0; i < qs->n; i++) {
        tdm_search_result *w = NULL;
        int rw = tdm_search_terms(whole, qs->q[i].terms, qs->q[i].nterms, o, &w);
        if (rw != res[i]->status)
            fail_msg("query %zu: batch status %d, whole %d", i, res[i]->status, rw);
        if (rw == TDM_OK) {
            partfix_same(res[i], w, i, o, what, checks);
            hits += w->n;
        }
        tdm_search_result_free(w);
        tdm_search_result_free(res[i]);
    }
    return hits;
}

/* Every partition runs every query: a request pinned to a device is
 * refused. */
static inline void partfix_no_pin(tdm_search *s, const tdm_search_query *q)
{
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.device = 0;
    tdm_search_result *r = NULL;
    assert_int_equal(tdm_search_terms(s, q->terms, q->nterms, &o, &r), TDM_ERR_INVALID_ARG);
}

#endif
