/* The scheduler (host/sched, docs/SCHED.md) on several lanes: PoCL opened
 * as two CPU devices (POCL_DEVICES="pthread pthread", set here unless the
 * environment sets it), the second called a GPU through the lane-kinds test
 * switch so that every queue, batches and the GPU policies run. Every
 * policy, many threads at once and every injected fault must give exactly
 * the answers of the path without lanes (tdm_search_terms_plain: the
 * planner's device in the caller's thread, itself tested against the oracle
 * by test_search), each query answered once, and statistics that account
 * for every query. Also the cost model's fit and file, calibration, the
 * policy names and the settings' errors. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "index/writer.h"
#include "drive/search.h"
#include "drive/search_testing.h"
#include "randcoll.h"
#include "sched/model.h"
#include "testutil.h"

typedef randcoll_fixture fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    randcoll_fixture_open(f, 21, tdm_test_small() ? 300 : 4000, 40,
                          tdm_test_tmpdir("sched"), "s.tdm", NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    randcoll_fixture_close(*state);
    free(*state);
    return 0;
}

/* An engine on the CPU devices with the scheduling options given. */
static tdm_engine *engine(const char *kinds, const char *faults, unsigned threshold,
                          long window_us, int calibrate, const char *cache_dir)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    /* the two PoCL devices the lanes' cases are written for, whatever
     * else the machine has (an H200 beside them made three lanes) */
    o.devices = "cpu";
    o.lane_kinds = kinds;
    o.fault_inject = faults ? faults : "";
    o.load_threshold = threshold;
    o.batch_window_us = window_us;
    o.calibrate = calibrate;
    o.cache_dir = cache_dir;
    return tdm_test_engine_with(&o);
}

static int two_lanes(tdm_engine *e)
{
    if (tdm_test_two_devices(e))
        return 1;
    skip();
    return 0;
}

/* A random query of 1 .. 6 terms (repeats and unknown terms among them). */
static size_t random_terms(tdm_rng *r, const randcoll *c, tdm_search_term *st)
{
    size_t n = tdm_rng_range(r, 1, 6);
    for (size_t i = 0; i < n; i++) {
        st[i].term = tdm_rng_range(r, 0, 15) == 0 ? "no-such-term"
                                                  : c->terms[tdm_rng_range(r, 0, (uint32_t)c->nlists - 1)];
        st[i].id = 0;
        st[i].weight = 1.0 + tdm_rng_range(r, 0, 3);
    }
    return n;
}

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND, TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};

static void options(tdm_search_options *o, uint32_t q, int policy)
{
    tdm_search_options_init(o);
    o->algorithm = algos[q % (sizeof algos / sizeof *algos)];
    o->k = q % 3 == 0 ? 1 : q % 3 == 1 ? 10 : 100;
    o->policy = policy;
}

/* res equals the plain path's answer for the same query. */
static void same_as_plain(tdm_search *s, const tdm_search_term *st, size_t n,
                          const tdm_search_options *o, const tdm_search_result *res)
{
    tdm_search_options p = *o;
    p.policy = TDM_POLICY_DEFAULT;
    tdm_search_result *want;
    if (tdm_search_terms_plain(s, st, n, &p, &want) != TDM_OK)
        fail_msg("plain path: %s", tdm_last_error());
    assert_int_equal(res->n, want->n);
    for (size_t i = 0; i < want->n; i++) {
        assert_int_equal(res->hits[i].docid, want->hits[i].docid);
        assert_memory_equal(&res->hits[i].score, &want->hits[i].score, sizeof(float));
    }
    assert_int_equal(res->algorithm, want->algorithm);
    tdm_search_result_free(want);
}

static void assert_accounted(tdm_search *s, tdm_sched_stats *st)
{
    tdm_sched_stats_init(st);
    assert_int_equal(tdm_search_stats(s, st), TDM_OK);
    assert_int_equal(st->in_flight, 0);
    assert_int_equal(st->submitted, st->answered + st->failed);
    uint64_t by_lanes = 0;
    for (int i = 0; i < st->nlanes; i++)
        by_lanes += st->lanes[i].queries;
    /* every answer came from exactly one lane, or from the caller (empty queries, direct) */
    assert_true(by_lanes <= st->answered);
}

/* ---- policies */

static void policy_names(void **state)
{
    (void)state;
    for (int p = TDM_POLICY_DEFAULT; p <= TDM_POLICY_DIRECT; p++) {
        int back = -1;
        assert_int_equal(tdm_policy_parse(tdm_policy_name(p), &back), TDM_OK);
        assert_int_equal(back, p);
    }
    int p;
    assert_int_equal(tdm_policy_parse("GPU", &p), TDM_OK);
    assert_int_equal(p, TDM_POLICY_GPU_ONLY);
    assert_int_equal(tdm_policy_parse("best-device", &p), TDM_OK);
    assert_int_equal(p, TDM_POLICY_BEST);
    assert_int_equal(tdm_policy_parse("fastest", &p), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "fastest"));
    assert_null(tdm_policy_name(99));
}

static void every_policy(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine("cpu,gpu", NULL, 0, -1, 0, NULL);
    if (!two_lanes(e))
        return;
    tdm_search *s;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    tdm_rng r;
    tdm_rng_seed(&r, 5);
    int nq = tdm_test_small() ? 6 : 40;
    static const int pols[] = {TDM_POLICY_DEFAULT, TDM_POLICY_CPU_ONLY, TDM_POLICY_GPU_ONLY,
                               TDM_POLICY_BEST, TDM_POLICY_HYBRID, TDM_POLICY_DIRECT};
    for (size_t pi = 0; pi < sizeof pols / sizeof *pols; pi++)
        for (int q = 0; q < nq; q++) {
            tdm_search_term st[8];
            size_t n = random_terms(&r, &f->c, st);
            tdm_search_options o;
            options(&o, (uint32_t)q, pols[pi]);
            if (q % 5 == 4)
                o.device = q % 2; /* pinned */
            tdm_search_result *res;
            if (tdm_search_terms(s, st, n, &o, &res) != TDM_OK)
                fail_msg("policy %s: %s", tdm_policy_name(pols[pi]), tdm_last_error());
            same_as_plain(s, st, n, &o, res);
            assert_int_equal(res->policy, pols[pi] ? pols[pi] : TDM_POLICY_HYBRID);
            if (res->device >= 0 && o.device < 0 && pols[pi] == TDM_POLICY_CPU_ONLY)
                assert_int_equal(res->device, 0);
            if (res->device >= 0 && o.device < 0 && pols[pi] == TDM_POLICY_GPU_ONLY)
                assert_int_equal(res->device, 1);
            if (res->device >= 0 && o.device >= 0)
                assert_int_equal(res->device, o.device);
            tdm_search_result_free(res);
        }
    /* text goes through the lanes too */
    tdm_search_result *res;
    assert_int_equal(tdm_search_text(s, f->c.terms[7], NULL, &res), TDM_OK);
    tdm_search_result_free(res);
    tdm_sched_stats st;
    assert_accounted(s, &st);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.nlanes, tdm_engine_device_count(e));
    assert_true(st.lanes[0].queries > 0 && st.lanes[1].queries > 0);
    assert_true(st.pred_n > 0 && isfinite(st.pred_error));
    /* a deadline no query can meet is counted as missed */
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.deadline_ms = 1e-6;
    tdm_search_term one = {f->c.terms[5], 0, 1.0};
    assert_int_equal(tdm_search_terms(s, &one, 1, &o, &res), TDM_OK);
    tdm_search_result_free(res);
    uint64_t missed = st.deadline_misses;
    assert_accounted(s, &st);
    assert_true(st.deadline_misses == missed + 1);
    /* request errors */
    tdm_search_options_init(&o);
    o.policy = 42;
    assert_int_equal(tdm_search_text(s, "x", &o, &res), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "policy"));
    o.policy = 0;
    o.deadline_ms = -1;
    assert_int_equal(tdm_search_text(s, "x", &o, &res), TDM_ERR_INVALID_ARG);
    tdm_sched_stats bad;
    tdm_sched_stats_init(&bad);
    bad.struct_size = 3;
    assert_int_equal(tdm_search_stats(s, &bad), TDM_ERR_INVALID_ARG);
    tdm_search_close(s);
    tdm_engine_close(e);
}

static void gpu_only_without_gpu(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine("cpu,cpu", NULL, 0, -1, 0, NULL);
    if (!two_lanes(e))
        return;
    tdm_search *s;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.policy = TDM_POLICY_GPU_ONLY;
    tdm_search_term st = {f->c.terms[3], 0, 1.0};
    tdm_search_result *res;
    assert_int_equal(tdm_search_terms(s, &st, 1, &o, &res), TDM_ERR_NO_DEVICE);
    assert_non_null(strstr(tdm_last_error(), "gpu-only"));
    tdm_sched_stats ss;
    assert_accounted(s, &ss);
    assert_int_equal(ss.failed, 1);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* ---- many threads, batches, faults */

typedef struct tjob {
    tdm_search *s;
    const randcoll *c;
    uint64_t seed;
    int nq;
    int policy;
    int pin;            /* device the queries ask for, or -1 */
    int failed;
    char msg[256];
} tjob;

static void *thread_main(void *arg)
{
    tjob *j = arg;
    tdm_rng r;
    tdm_rng_seed(&r, j->seed);
    for (int q = 0; q < j->nq && !j->failed; q++) {
        tdm_search_term st[8];
        size_t n = random_terms(&r, j->c, st);
        tdm_search_options o;
        options(&o, (uint32_t)q, j->policy);
        o.device = j->pin;
        tdm_search_result *res, *want;
        tdm_search_options p = o;
        p.policy = TDM_POLICY_DEFAULT;
        if (tdm_search_terms(j->s, st, n, &o, &res) != TDM_OK) {
            snprintf(j->msg, sizeof j->msg, "search: %s", tdm_last_error());
            j->failed = 1;
        } else if (tdm_search_terms_plain(j->s, st, n, &p, &want) != TDM_OK) {
            snprintf(j->msg, sizeof j->msg, "plain: %s", tdm_last_error());
            j->failed = 1;
            tdm_search_result_free(res);
        } else {
            int same = res->n == want->n;
            for (size_t i = 0; same && i < res->n; i++)
                same = res->hits[i].docid == want->hits[i].docid &&
                       !memcmp(&res->hits[i].score, &want->hits[i].score, sizeof(float));
            if (!same) {
                snprintf(j->msg, sizeof j->msg, "query %d: answer differs from the plain path", q);
                j->failed = 1;
            }
            tdm_search_result_free(res);
            tdm_search_result_free(want);
        }
    }
    return NULL;
}

/* nt threads of nq queries each on s; fails on any error or difference. */
static void run_threads_pinned(tdm_search *s, const randcoll *c, int nt, int nq, int policy,
                               int pin)
{
    tjob jobs[16];
    pthread_t th[16];
    assert_true(nt <= 16);
    for (int i = 0; i < nt; i++) {
        jobs[i] = (tjob){s, c, 100 + (uint64_t)i, nq, policy, pin, 0, ""};
        assert_int_equal(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
    }
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < nt; i++)
        if (jobs[i].failed)
            fail_msg("thread %d: %s", i, jobs[i].msg);
}

static void run_threads(tdm_search *s, const randcoll *c, int nt, int nq, int policy)
{
    run_threads_pinned(s, c, nt, nq, policy, -1);
}

static void many_threads_batches(void **state)
{
    fixture *f = *state;
    /* threshold 2 and a wide window: the GPU lane takes batches */
    tdm_engine *e = engine("cpu,gpu", NULL, 2, 5000, 0, NULL);
    if (!two_lanes(e))
        return;
    tdm_search *s;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    int nt = 8, nq = tdm_test_small() ? 4 : 30;
    run_threads(s, &f->c, nt, nq, TDM_POLICY_HYBRID);
    run_threads(s, &f->c, nt, nq, TDM_POLICY_GPU_ONLY);
    tdm_sched_stats st;
    assert_accounted(s, &st);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.submitted, (uint64_t)(2 * nt * nq));
    assert_true(st.mode_switches >= 1);
    assert_true(st.batches >= 1);
    assert_true(st.batched >= 2 * st.batches);
    assert_true(st.window_wait > 0);
    assert_true(fabs(st.batch_window - 0.005) < 1e-9);
    assert_int_equal(st.load_threshold, 2);
    print_message("batches %llu (%llu queries), switches %llu, stolen %llu, promoted %llu, "
                  "direct %llu, prediction error %.2f over %llu\n",
                  (unsigned long long)st.batches, (unsigned long long)st.batched,
                  (unsigned long long)st.mode_switches, (unsigned long long)st.stolen,
                  (unsigned long long)st.promoted, (unsigned long long)st.direct, st.pred_error,
                  (unsigned long long)st.pred_n);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* An engine without a GPU lane batches on its CPU lanes under load. */
static void cpu_engine_batches(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine("cpu,cpu", NULL, 2, 5000, 0, NULL);
    if (!two_lanes(e))
        return;
    tdm_search *s;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    run_threads(s, &f->c, 6, tdm_test_small() ? 4 : 12, TDM_POLICY_HYBRID);
    tdm_sched_stats st;
    assert_accounted(s, &st);
    assert_int_equal(st.failed, 0);
    assert_true(st.batches >= 1);
    assert_int_equal(st.lanes[0].gpu + st.lanes[1].gpu, 0);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* One fault spec: threads of hybrid queries, all answered as the plain path. */
static void fault_case(fixture *f, const char *spec, int lane_dies, int lane)
{
    tdm_engine *e = engine("cpu,gpu", spec, 3, 1000, 0, NULL);
    if (!two_lanes(e))
        return;
    tdm_search *s;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    int nt = 6, nq = tdm_test_small() ? 4 : 15;
    run_threads(s, &f->c, nt, nq, TDM_POLICY_HYBRID);
    /* and pinned to the faulty lane, one thread */
    run_threads(s, &f->c, 1, nq, TDM_POLICY_BEST);
    /* and a few pinned to the faulty lane: its fault fires whatever the
     * models chose above (once dead, pinned queries go elsewhere) */
    run_threads_pinned(s, &f->c, 1, 4, TDM_POLICY_HYBRID, lane);
    tdm_sched_stats st;
    assert_accounted(s, &st);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.submitted, (uint64_t)((nt + 1) * nq + 4));
    assert_true(st.lanes[lane].faults >= 1);
    assert_true(st.handovers >= 1);
    assert_int_equal(st.lanes[lane].alive, !lane_dies);
    tdm_search_close(s);
    tdm_engine_close(e);
}

static void faults_each_kind(void **state)
{
    fixture *f = *state;
    fault_case(f, "0:build", 1, 0);
    fault_case(f, "1:build", 1, 1);
    fault_case(f, "1:oom@2", 0, 1);
    fault_case(f, "0:oom", 0, 0);
    fault_case(f, "1:lost@3", 1, 1);
    fault_case(f, "0:lost@2,1:oom@4", 1, 0);
}

static void every_lane_fails(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine("cpu,gpu", "0:build,1:lost", 3, 1000, 0, NULL);
    if (!two_lanes(e))
        return;
    tdm_search *s;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    tdm_search_term st = {f->c.terms[2], 0, 1.0};
    tdm_search_result *res;
    int failures = 0;
    for (int q = 0; q < 6; q++) {
        int rc = tdm_search_terms(s, &st, 1, NULL, &res);
        if (rc == TDM_OK)
            tdm_search_result_free(res);
        else
            failures++;
    }
    assert_true(failures >= 5); /* after both lanes died nothing can answer */
    tdm_sched_stats ss;
    assert_accounted(s, &ss);
    assert_int_equal(ss.failed, (uint64_t)failures);
    assert_int_equal(ss.lanes[0].alive, 0);
    assert_int_equal(ss.lanes[1].alive, 0);
    tdm_search_close(s);
    tdm_engine_close(e);
}

static void bad_settings(void **state)
{
    fixture *f = *state;
    static const char *bad[] = {"0", "0:melt", "9:oom", "0:oom@0", "x:oom", "0:oom@"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tdm_engine *e = engine(NULL, bad[i], 0, -1, 0, NULL);
        tdm_search *s = NULL;
        assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_ERR_INVALID_ARG);
        assert_null(s);
        assert_non_null(strstr(tdm_last_error(), "TANDEM_FAULT_INJECT"));
        tdm_engine_close(e);
    }
    tdm_engine *e = engine("cpu,tpu", NULL, 0, -1, 0, NULL);
    tdm_search *s = NULL;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_LANE_KINDS"));
    tdm_engine_close(e);
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.batch_window_us = 5000000;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "batch_window_us"));
    tdm_engine_options_init(&o);
    o.policy = 17;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_OK);
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "policy"));
    tdm_engine_close(e);
}

/* ---- the cost model */

static void model_fit(void **state)
{
    (void)state;
    tdm_model m;
    tdm_model_init(&m, 0);
    tdm_rng r;
    tdm_rng_seed(&r, 3);
    /* time = 0.2 ms + 3 ms per million postings + 1 ms per UBOC unit */
    for (int i = 0; i < 400; i++) {
        tdm_qfeat f = {{0}, 0};
        f.x[0] = 1;
        for (int k = 1; k < TDM_MODEL_NF; k++)
            f.x[k] = tdm_rng_range(&r, 0, 1000) / 100.0;
        tdm_model_observe(&m, TDM_ALGO_AND, &f, (0.2 + 3 * f.x[3] + 1 * f.x[6]) * 1e-3);
    }
    tdm_qfeat f = {{1, 2, 3, 4, 0.5, 0.01, 2}, 0};
    double want = (0.2 + 3 * 4 + 2) * 1e-3;
    assert_true(fabs(tdm_model_predict(&m, TDM_ALGO_AND, &f) - want) < 0.02 * want);
    /* an algorithm never seen: the pooled fit */
    assert_true(fabs(tdm_model_predict(&m, TDM_ALGO_BMW, &f) - want) < 0.02 * want);
    /* file round trip */
    char path[512];
    assert_true(tdm_model_path(tdm_test_tmpdir("sched_model"), "p", "d", "1", "v", 0, path,
                               sizeof path));
    tdm_err err = {0};
    assert_int_equal(tdm_model_save(&m, path, &err), TDM_OK);
    tdm_model back;
    tdm_model_init(&back, 0);
    assert_int_equal(tdm_model_load(&back, path), 1);
    assert_int_equal(back.observed, 400);
    assert_true(fabs(tdm_model_predict(&back, TDM_ALGO_AND, &f) -
                     tdm_model_predict(&m, TDM_ALGO_AND, &f)) < 1e-9);
    /* a damaged file is no model */
    tdm_test_write(tdm_test_tmpdir("sched_model"), "bad.model", "tandem-sched-model 1\nfit 0 x\n");
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.model", tdm_test_tmpdir("sched_model"));
    assert_int_equal(tdm_model_load(&back, bad), 0);
    /* a prediction is never <= 0 */
    tdm_qfeat z = {{1, 0, 0, 0, 0, 0, 0}, 0};
    assert_true(tdm_model_predict(&back, TDM_ALGO_OR, &z) > 0);
}

static void model_calibrated_and_kept(void **state)
{
    fixture *f = *state;
    const char *dir = tdm_test_tmpdir("sched_cal");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -f %s/sched-*.model", dir);
    assert_int_equal(system(cmd), 0);
    tdm_engine *e = engine("cpu,gpu", NULL, 0, -1, 6, dir);
    if (!two_lanes(e))
        return;
    tdm_search *s;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    tdm_sched_stats st;
    assert_accounted(s, &st);
    assert_int_equal(st.submitted, 0); /* calibration is not a query of the caller's */
    for (int i = 0; i < 2; i++)
        assert_int_equal(st.lanes[i].model_n, 6);
    tdm_search_close(s);
    /* kept: the next open loads it and does not calibrate */
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    assert_accounted(s, &st);
    for (int i = 0; i < 2; i++)
        assert_int_equal(st.lanes[i].model_n, 6);
    tdm_search_close(s);
    tdm_engine_close(e);
}

int main(void)
{
    tdm_test_pocl_devices();
    setenv("POCL_DEVICES", "pthread pthread", 0); /* two CPU devices, two lanes */
    (void)assert_same_index;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(policy_names),
        cmocka_unit_test(model_fit),
        cmocka_unit_test(every_policy),
        cmocka_unit_test(gpu_only_without_gpu),
        cmocka_unit_test(many_threads_batches),
        cmocka_unit_test(cpu_engine_batches),
        cmocka_unit_test(faults_each_kind),
        cmocka_unit_test(every_lane_fails),
        cmocka_unit_test(bad_settings),
        cmocka_unit_test(model_calibrated_and_kept),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
