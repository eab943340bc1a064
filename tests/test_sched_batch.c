/* tdm_search_batch through the lanes (host/sched/batch.c, docs/SCHED.md):
 * on two PoCL lanes (POCL_DEVICES="pthread pthread"), the second called a
 * GPU lane (TANDEM_LANE_KINDS), every policy and a pin: the results of a
 * batch call are exactly those of the same queries one by one
 * (tdm_search_terms), query errors included; hybrid splits the batch over
 * both lanes; whole calls of two senders go to both lanes; a lane failing
 * with a part of the batch hands it on; many threads at once; the
 * statistics account for every query. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/writer.h"
#include "randcoll.h"
#include "testutil.h"

typedef randcoll_fixture fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    randcoll_fixture_open(f, 33, tdm_test_small() ? 300 : 4000, 40,
                          tdm_test_tmpdir("sched_batch"), "b.tdm", NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    randcoll_fixture_close(*state);
    free(*state);
    return 0;
}

static tdm_engine *engine2(const char *kinds, const char *faults)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    /* the two PoCL devices the lanes' cases are written for, whatever
     * else the machine has (an H200 beside them made three lanes) */
    o.devices = "cpu";
    o.lane_kinds = kinds;
    o.fault_inject = faults ? faults : "";
    o.calibrate = 0;
    o.cache_mode = TDM_CACHE_OFF;
    return tdm_test_two_devices(tdm_test_engine_with(&o));
}

#define MAXQ 400 /* queries: 37, 53 make every 37th empty, every 53rd a bad weight */

/* The batch's results equal the one-by-one calls' (status, hits, scores). */
static void same_as_singles(tdm_search *s, const qset *qs, const tdm_search_options *o,
                            tdm_search_result **res)
{
    for (size_t i = 0; i < qs->n; i++) {
        tdm_search_result *one = NULL;
        int rc = tdm_search_terms(s, qs->q[i].terms, qs->q[i].nterms, o, &one);
        if (rc != res[i]->status)
            fail_msg("query %zu: batch status %d, alone %d (%s)", i, res[i]->status, rc,
                     rc ? tdm_last_error() : "");
        if (rc)
            continue;
        assert_int_equal(res[i]->n, one->n);
        for (size_t h = 0; h < one->n; h++) {
            assert_int_equal(res[i]->hits[h].docid, one->hits[h].docid);
            assert_memory_equal(&res[i]->hits[h].score, &one->hits[h].score, sizeof(float));
        }
        tdm_search_result_free(one);
    }
}

static void free_all(tdm_search_result **res, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tdm_search_result_free(res[i]);
}

/* Hybrid's split gives each query to the lane its model predicts would
 * finish it first. Both lanes take part of the batch where their models are
 * still the same priors (nothing observed yet: on any two lanes), and where
 * the lanes are alike (one implementation: two PoCL devices). Lanes of two
 * implementations need not both take part once observed: beside PoCL,
 * llvmpipe (the rusticl stage) was seen 300 times slower a query, and the
 * rule then rightly gave it none of a 40-query batch; but a cold PoCL, its
 * compiles counted, looked the slower in another run, so no side is
 * required then (every query answered once, and as alone, still is). */
static void split_checked(tdm_engine *e, const tdm_sched_stats *before, const uint64_t *took,
                          int policy, int algo)
{
    if (took[0] > 0 && took[1] > 0)
        return;
    tdm_device_info a, b;
    assert_int_equal(tdm_engine_device_info_get(e, before->lanes[0].device, &a), TDM_OK);
    assert_int_equal(tdm_engine_device_info_get(e, before->lanes[1].device, &b), TDM_OK);
    int priors = before->lanes[0].model_n == 0 && before->lanes[1].model_n == 0;
    if (priors || !strcmp(a.platform, b.platform))
        fail_msg("policy %d, algorithm %d: lanes took %llu (%s) and %llu (%s)%s", policy, algo,
                 (unsigned long long)took[0], a.name, (unsigned long long)took[1], b.name,
                 priors ? " with the same prior models" : "");
}

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR, TDM_ALGO_AND, TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};

static void policies(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine2("cpu,gpu", NULL);
    if (!e)
        skip();
    tdm_search *s;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    static qset qs;
    static tdm_search_result *res[MAXQ];
    const int pols[] = {TDM_POLICY_HYBRID, TDM_POLICY_BEST, TDM_POLICY_CPU_ONLY,
                        TDM_POLICY_GPU_ONLY, TDM_POLICY_DIRECT, TDM_POLICY_DEFAULT};
    size_t n = tdm_test_small() ? 40 : 160;
    for (size_t p = 0; p < sizeof pols / sizeof *pols; p++) {
        for (size_t a = 0; a < sizeof algos / sizeof *algos; a += p % 2 ? 2 : 1) {
            randcoll_queries(&qs, &f->c, 10 * p + a, n, 37, 53);
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.policy = pols[p];
            o.algorithm = algos[a];
            o.k = a % 3 == 0 ? 10 : a % 3 == 1 ? 1 : 100;
            tdm_sched_stats before, after;
            tdm_sched_stats_init(&before);
            tdm_sched_stats_init(&after);
            tdm_search_stats(s, &before);
            if (tdm_search_batch(s, qs.q, qs.n, &o, res) != TDM_OK)
                fail_msg("policy %d: %s", pols[p], tdm_last_error());
            tdm_search_stats(s, &after);
            uint64_t took[2];
            for (int l = 0; l < 2; l++)
                took[l] = after.lanes[l].queries - before.lanes[l].queries;
            if (pols[p] == TDM_POLICY_CPU_ONLY)
                assert_int_equal(took[1], 0);
            if (pols[p] == TDM_POLICY_GPU_ONLY)
                assert_int_equal(took[0], 0);
            if (pols[p] == TDM_POLICY_BEST)
                assert_true(took[0] == 0 || took[1] == 0); /* whole, to one lane */
            if (pols[p] == TDM_POLICY_DIRECT)
                assert_int_equal(took[0] + took[1], 0);
            else
                assert_int_equal(took[0] + took[1], qs.n); /* every query answered once */
            if (pols[p] == TDM_POLICY_HYBRID || pols[p] == TDM_POLICY_DEFAULT)
                split_checked(e, &before, took, pols[p], algos[a]);
            for (size_t i = 0; i < qs.n; i++)
                if (pols[p] != TDM_POLICY_DIRECT && pols[p] != TDM_POLICY_DEFAULT)
                    assert_int_equal(res[i]->policy, pols[p]);
            same_as_singles(s, &qs, &o, res);
            free_all(res, qs.n);
        }
    }
    /* pinned to lane 1, whatever the policy */
    randcoll_queries(&qs, &f->c, 99, n, 37, 53);
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.device = 1;
    assert_int_equal(tdm_search_batch(s, qs.q, qs.n, &o, res), TDM_OK);
    for (size_t i = 0; i < qs.n; i++)
        assert_true(res[i]->device == 1 || res[i]->device == -1);
    same_as_singles(s, &qs, &o, res);
    free_all(res, qs.n);
    /* empty batch; bad device */
    assert_int_equal(tdm_search_batch(s, qs.q, 0, &o, res), TDM_OK);
    o.device = 7;
    assert_int_equal(tdm_search_batch(s, qs.q, qs.n, &o, res), TDM_ERR_INVALID_ARG);
    for (size_t i = 0; i < qs.n; i++)
        assert_null(res[i]);
    tdm_sched_stats st;
    tdm_sched_stats_init(&st);
    tdm_search_stats(s, &st);
    assert_int_equal(st.submitted, st.answered + st.failed + st.in_flight);
    assert_int_equal(st.in_flight, 0);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* TANDEM_BATCH_MIN_PART: a batch of fewer than twice that many queries goes
 * whole to one lane, a larger one is split over both (alike lanes, the same
 * priors); the answers are the one-by-one calls' either way. */
static void min_part(void **state)
{
    fixture *f = *state;
    static qset qs;
    static tdm_search_result *res[MAXQ];
    const char *parts[] = {"40", "20"};
    for (int m = 0; m < 2; m++) {
        setenv("TANDEM_BATCH_MIN_PART", parts[m], 1); /* read at engine open */
        tdm_engine *e = engine2("cpu,cpu", NULL);
        unsetenv("TANDEM_BATCH_MIN_PART");
        if (!e)
            skip();
        tdm_search *s;
        if (tdm_search_open(e, f->ix, &s) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        randcoll_queries(&qs, &f->c, 7 + m, 40, 37, 53);
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.policy = TDM_POLICY_HYBRID;
        tdm_sched_stats before, after;
        tdm_sched_stats_init(&before);
        tdm_sched_stats_init(&after);
        tdm_search_stats(s, &before);
        assert_int_equal(tdm_search_batch(s, qs.q, qs.n, &o, res), TDM_OK);
        tdm_search_stats(s, &after);
        uint64_t took[2];
        for (int l = 0; l < 2; l++)
            took[l] = after.lanes[l].queries - before.lanes[l].queries;
        assert_int_equal(took[0] + took[1], qs.n);
        if (m == 0 && took[0] && took[1])
            fail_msg("min part 40, 40 queries: split %llu / %llu", (unsigned long long)took[0],
                     (unsigned long long)took[1]);
        if (m == 1 && (!took[0] || !took[1]))
            fail_msg("min part 20, 40 queries: whole (%llu / %llu)", (unsigned long long)took[0],
                     (unsigned long long)took[1]);
        same_as_singles(s, &qs, &o, res);
        free_all(res, qs.n);
        tdm_search_close(s);
        tdm_engine_close(e);
    }
}

/* A thread sending batch calls (sender, worker): its search, its seed, and
 * what went wrong. */
typedef struct warg {
    const fixture *f;
    tdm_search *s;
    int seed, bad;
    char msg[200];
} warg;

static void *sender(void *p)
{
    warg *a = p;
    qset *qs = malloc(sizeof *qs);
    tdm_search_result **res = calloc(MAXQ, sizeof *res);
    for (int call = 0; call < 20 && !a->bad; call++) {
        randcoll_queries(qs, &a->f->c, (uint64_t)a->seed * 1000 + call, 40, 37, 53);
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.policy = TDM_POLICY_CPU_ONLY;
        if (tdm_search_batch(a->s, qs->q, qs->n, &o, res) != TDM_OK) {
            a->bad = 1;
            snprintf(a->msg, sizeof a->msg, "call %d: %s", call, tdm_last_error());
        }
        if (!a->bad)
            free_all(res, qs->n);
    }
    free(res);
    free(qs);
    return NULL;
}

/* Two senders of whole calls (min part 40, calls of 40) on two lanes of
 * one kind, whose models are the same prior: a call placed while the
 * other's runs goes to the idle lane. Placed by the backlog (0 while one
 * of a lane's two slots is free), every call went to lane 0, its device
 * running both, lane 1 idle. */
static void two_senders(void **state)
{
    fixture *f = *state;
    setenv("TANDEM_BATCH_MIN_PART", "40", 1); /* read at engine open */
    tdm_engine *e = engine2("cpu,cpu", NULL);
    unsetenv("TANDEM_BATCH_MIN_PART");
    if (!e)
        skip();
    tdm_search *s;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    tdm_sched_stats before, after;
    tdm_sched_stats_init(&before);
    tdm_sched_stats_init(&after);
    tdm_search_stats(s, &before);
    pthread_t th[2];
    warg a[2];
    for (int t = 0; t < 2; t++) {
        a[t] = (warg){.f = f, .s = s, .seed = t + 1};
        pthread_create(&th[t], NULL, sender, &a[t]);
    }
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < 2; t++)
        if (a[t].bad)
            fail_msg("sender %d: %s", t, a[t].msg);
    tdm_search_stats(s, &after);
    uint64_t took[2];
    for (int l = 0; l < 2; l++)
        took[l] = after.lanes[l].queries - before.lanes[l].queries;
    if (!took[0] || !took[1])
        fail_msg("two senders' 40 calls: lanes took %llu / %llu queries",
                 (unsigned long long)took[0], (unsigned long long)took[1]);
    assert_int_equal(after.in_flight, 0);
    assert_int_equal(after.submitted, after.answered + after.failed);
    tdm_search_close(s);
    tdm_engine_close(e);
}

static void gpu_only_without_gpu(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine2("cpu,cpu", NULL);
    if (!e)
        skip();
    tdm_search *s;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    static qset qs;
    static tdm_search_result *res[MAXQ];
    randcoll_queries(&qs, &f->c, 5, 20, 37, 53);
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.policy = TDM_POLICY_GPU_ONLY;
    assert_int_equal(tdm_search_batch(s, qs.q, qs.n, &o, res), TDM_ERR_NO_DEVICE);
    assert_non_null(strstr(tdm_last_error(), "gpu-only"));
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* A lane failing with its part: the part goes to the other lane. */
static void faults(void **state)
{
    fixture *f = *state;
    const char *spec[] = {"1:lost@1", "0:oom@1", "1:build@2", "0:lost@2,1:oom@1"};
    static qset qs;
    static tdm_search_result *res[MAXQ];
    for (size_t k = 0; k < sizeof spec / sizeof *spec; k++) {
        tdm_engine *e = engine2("cpu,gpu", spec[k]);
        if (!e)
            skip();
        tdm_search *s;
        if (tdm_search_open(e, f->ix, &s) != TDM_OK)
            fail_msg("search open: %s", tdm_last_error());
        size_t n = tdm_test_small() ? 30 : 120;
        uint64_t sent = 0;
        for (int round = 0; round < 3; round++) {
            randcoll_queries(&qs, &f->c, 300 + k * 7 + round, n, 37, 53);
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.algorithm = algos[(k + round) % 7];
            if (tdm_search_batch(s, qs.q, qs.n, &o, res) != TDM_OK)
                fail_msg("%s: %s", spec[k], tdm_last_error());
            sent += qs.n;
            same_as_singles(s, &qs, &o, res);
            sent += qs.n; /* the singles */
            free_all(res, qs.n);
        }
        tdm_sched_stats st;
        tdm_sched_stats_init(&st);
        tdm_search_stats(s, &st);
        assert_true(st.handovers >= 1);
        assert_int_equal(st.submitted, st.answered + st.failed);
        assert_int_equal(st.in_flight, 0);
        /* the queries without terms are answered without a lane */
        assert_true(st.submitted <= sent);
        tdm_search_close(s);
        tdm_engine_close(e);
    }
}

static void *worker(void *p)
{
    warg *w = p;
    qset *qs = malloc(sizeof *qs);
    tdm_search_result **res = calloc(MAXQ, sizeof *res);
    for (int round = 0; round < 4 && !w->bad; round++) {
        randcoll_queries(qs, &w->f->c, (uint64_t)w->seed * 100 + round, 50, 37, 53);
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.algorithm = algos[(w->seed + round) % 7];
        if (tdm_search_batch(w->s, qs->q, qs->n, &o, res) != TDM_OK) {
            w->bad = 1;
            snprintf(w->msg, sizeof w->msg, "batch: %s", tdm_last_error());
            break;
        }
        for (size_t i = 0; i < qs->n && !w->bad; i++) {
            tdm_search_result *one = NULL;
            int rc = tdm_search_terms(w->s, qs->q[i].terms, qs->q[i].nterms, &o, &one);
            if (rc != res[i]->status || (!rc && one->n != res[i]->n))
                w->bad = 1;
            for (size_t h = 0; !rc && !w->bad && h < one->n; h++)
                if (one->hits[h].docid != res[i]->hits[h].docid ||
                    memcmp(&one->hits[h].score, &res[i]->hits[h].score, 4))
                    w->bad = 1;
            if (w->bad)
                snprintf(w->msg, sizeof w->msg, "round %d query %zu differs", round, i);
            tdm_search_result_free(one);
        }
        free_all(res, qs->n);
    }
    free(res);
    free(qs);
    return NULL;
}

static void threads(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine2("cpu,gpu", NULL);
    if (!e)
        skip();
    tdm_search *s;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    pthread_t th[4];
    warg w[4];
    for (int t = 0; t < 4; t++) {
        w[t] = (warg){.f = f, .s = s, .seed = t + 1};
        pthread_create(&th[t], NULL, worker, &w[t]);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++)
        if (w[t].bad)
            fail_msg("thread %d: %s", t, w[t].msg);
    tdm_sched_stats st;
    tdm_sched_stats_init(&st);
    tdm_search_stats(s, &st);
    assert_int_equal(st.submitted, st.answered + st.failed);
    assert_int_equal(st.in_flight, 0);
    tdm_search_close(s);
    tdm_engine_close(e);
}

int main(void)
{
    tdm_test_pocl_devices();
    (void)assert_same_index; /* randcoll.h's */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(policies, setup, teardown),
        cmocka_unit_test_setup_teardown(gpu_only_without_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(min_part, setup, teardown),
        cmocka_unit_test_setup_teardown(two_senders, setup, teardown),
        cmocka_unit_test_setup_teardown(faults, setup, teardown),
        cmocka_unit_test_setup_teardown(threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
