/* The search-time watchdog (host/sched/watchdog.c, docs/SCHED.md "Faults"):
 * a lane whose run stops answering mid-search (the fault kinds hang and
 * stall of TANDEM_FAULT_INJECT, engine option fault_inject) is abandoned
 * within run_timeout_ms, whether a lane's worker or the caller's own thread
 * (the fast path on an idle lane, taken with the watchdog on) runs it: on
 * two PoCL lanes the query is answered by the other lane, exactly the
 * plain path's answer (itself the oracle's, by test_search), and work
 * queued on the stuck lane goes to the other while the caller waits for
 * its device; a batch's part on the hung lane is prepared again and
 * answered by the other lane; a direct-policy run and a calibration
 * sample at open are watched too (the open returns, the lane dead); on
 * one lane a query or a batch fails with
 * TDM_ERR_TIMEOUT naming the device;
 * closing the handle and the engine returns in bounded time; a stalled run
 * that returns late has its answers dropped and frees what its caller left
 * to it (ASan); auto's limit of a batch's run grows with its queries
 * (tdm_watchdog_limit, on a made-up lane). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drive/search_testing.h"
#include "sched/sched_priv.h"
#include "randcoll.h"
#include "testutil.h"

#define LIMIT_MS 500 /* the runs' time limit in these tests */
#define SLACK_S 30.0 /* a loaded machine's allowance on top */

typedef randcoll_fixture fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    randcoll_fixture_open(f, 27, 300, 30, tdm_test_tmpdir("watchdog"), "w.tdm", NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    randcoll_fixture_close(*state);
    free(*state);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* An engine on `devices` with the faults, the limit LIMIT_MS, `slots` a
 * lane (0: the default) and a load threshold (0: the default; 1: batch
 * mode from the first query, so a lane's worker runs every query). */
static tdm_engine *engine_with(const char *devices, const char *faults, unsigned slots,
                               unsigned threshold)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = devices;
    o.fault_inject = faults;
    o.run_timeout_ms = LIMIT_MS;
    o.calibrate = 0;
    o.cache_dir = NULL;
    o.lane_slots = slots;
    o.load_threshold = threshold;
    return tdm_test_engine_with(&o);
}

static tdm_engine *engine(const char *devices, const char *faults)
{
    return engine_with(devices, faults, 0, 0);
}

/* e with two lanes, else closed and the test skipped. */
static tdm_engine *two_lanes(tdm_engine *e)
{
    if (tdm_engine_device_count(e) < 2) {
        tdm_engine_close(e);
        print_message("one device: set POCL_DEVICES=\"pthread pthread\"\n");
        skip();
    }
    return e;
}

static tdm_search *open_search(fixture *f, tdm_engine *e)
{
    tdm_search *s = NULL;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("tdm_search_open: %s", tdm_last_error());
    return s;
}

static void stats(tdm_search *s, tdm_sched_stats *ss)
{
    tdm_sched_stats_init(ss);
    assert_int_equal(tdm_search_stats(s, ss), TDM_OK);
}

/* The query: two of the collection's terms, OR, top 10, on `device`. */
static size_t query(const fixture *f, tdm_search_term *st, tdm_search_options *o, int device)
{
    tdm_search_options_init(o);
    o->algorithm = TDM_ALGO_OR;
    o->k = 10;
    o->device = device;
    for (size_t i = 0; i < 2; i++) {
        st[i].term = f->c.terms[i * 3];
        st[i].id = 0;
        st[i].weight = 1;
    }
    return 2;
}

/* res equals the plain path's answer (the caller's thread, on lane 0). */
static void same_as_plain(tdm_search *s, const tdm_search_term *st, size_t n,
                          const tdm_search_options *o, const tdm_search_result *res)
{
    tdm_search_options p = *o;
    p.device = 0;
    p.policy = TDM_POLICY_DEFAULT;
    tdm_search_result *want;
    if (tdm_search_terms_plain(s, st, n, &p, &want) != TDM_OK)
        fail_msg("plain path: %s", tdm_last_error());
    assert_true(want->n > 0);
    assert_int_equal(res->n, want->n);
    for (size_t i = 0; i < want->n; i++) {
        assert_int_equal(res->hits[i].docid, want->hits[i].docid);
        assert_memory_equal(&res->hits[i].score, &want->hits[i].score, sizeof(float));
    }
    tdm_search_result_free(want);
}

/* Warms lane `dev` (its first run of OR compiles: a longer limit). */
static void warm(fixture *f, tdm_search *s, int dev)
{
    tdm_search_term st[2];
    tdm_search_options o;
    size_t n = query(f, st, &o, dev);
    tdm_search_result *r = NULL;
    if (tdm_search_terms(s, st, n, &o, &r) != TDM_OK)
        fail_msg("warm-up on lane %d: %s", dev, tdm_last_error());
    assert_int_equal(r->device, dev);
    tdm_search_result_free(r);
}

/* Closes s and e, each within the bound; a stalled run (stall: its run
 * returns late) first gets the time to return, its answer dropped and its
 * memory freed. */
static void close_bounded(tdm_search *s, tdm_engine *e, int stalled)
{
    if (stalled) {
        struct timespec nap = {1, 500000000};
        nanosleep(&nap, NULL);
    }
    double t0 = now_s();
    tdm_search_close(s);
    double t1 = now_s();
    tdm_engine_close(e);
    double t2 = now_s();
    print_message("close: search %.2f s, engine %.2f s\n", t1 - t0, t2 - t1);
    assert_true(t1 - t0 < 10.0);
    assert_true(t2 - t1 < 10.0);
}

/* Lane 1 hangs (or stalls) on its second run, a query pinned there: the
 * query is answered by lane 0, the same answer; lane 1 is dead, the others
 * answer. caller: the caller's thread runs it (the fast path, watched);
 * else a lane's worker (batch mode from the first query). A stalled
 * caller returns after twice the limit, a worker's caller at the limit. */
static void reroute(void **state, const char *faults, int caller)
{
    fixture *f = *state;
    tdm_engine *e = two_lanes(engine_with("cpu", faults, 0, caller ? 0 : 1));
    tdm_search *s = open_search(f, e);
    warm(f, s, 0);
    warm(f, s, 1);
    tdm_sched_stats ss;
    stats(s, &ss);
    uint64_t direct0 = ss.direct;
    tdm_search_term st[2];
    tdm_search_options o;
    size_t n = query(f, st, &o, 1);
    tdm_search_result *r = NULL;
    double t0 = now_s();
    int rc = tdm_search_terms(s, st, n, &o, &r);
    double dt = now_s() - t0;
    if (rc != TDM_OK)
        fail_msg("the hung lane's query: %s", tdm_last_error());
    print_message("answered in %.2f s by lane %d (limit %d ms)\n", dt, r->device, LIMIT_MS);
    assert_true(dt >= LIMIT_MS * 1e-3 * (caller ? 2 : 1) * 0.9);
    assert_true(dt < LIMIT_MS * 1e-3 * (caller ? 2 : 1) + SLACK_S);
    assert_int_equal(r->device, 0);
    assert_true(r->handovers >= 1);
    same_as_plain(s, st, n, &o, r);
    tdm_search_result_free(r);
    stats(s, &ss);
    /* the caller's thread ran it (then its answer came from lane 0's
       worker), or never */
    if (caller)
        assert_int_equal(ss.direct, direct0 + 1);
    else
        assert_int_equal(ss.direct, 0);
    assert_int_equal(ss.lanes[1].alive, 0);
    assert_int_equal(ss.lanes[0].alive, 1);
    assert_true(ss.lanes[1].faults >= 1);
    assert_int_equal(ss.in_flight, 0);
    assert_int_equal(ss.submitted, ss.answered + ss.failed);
    /* the engine goes on, on lane 0; a batch too */
    for (int i = 0; i < 3; i++) {
        if (tdm_search_terms(s, st, n, &o, &r) != TDM_OK)
            fail_msg("after the hang: %s", tdm_last_error());
        assert_int_equal(r->device, 0);
        same_as_plain(s, st, n, &o, r);
        tdm_search_result_free(r);
    }
    tdm_search_query qs[2] = {{NULL, st, n}, {NULL, st, 1}};
    tdm_search_result *rs[2];
    assert_int_equal(tdm_search_batch(s, qs, 2, &o, rs), TDM_OK);
    same_as_plain(s, st, n, &o, rs[0]);
    tdm_search_result_free(rs[0]);
    tdm_search_result_free(rs[1]);
    close_bounded(s, e, strstr(faults, "stall") && !caller);
}

static void test_hang_rerouted(void **state)
{
    reroute(state, "1:hang@2", 0);
}

static void test_stall_rerouted(void **state)
{
    reroute(state, "1:stall@2", 0);
}

static void test_stall_caller_rerouted(void **state)
{
    reroute(state, "1:stall@2", 1);
}

/* With the watchdog on, a query on an idle lane runs in the caller's own
 * thread (the fast path: the scheduler's counter `direct`), watched, and
 * answers as the plain path. */
static void test_fast_path_watched(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine("0", "");
    tdm_search *s = open_search(f, e);
    tdm_search_term st[2];
    tdm_search_options o;
    size_t n = query(f, st, &o, -1);
    for (int i = 0; i < 4; i++) {
        tdm_search_result *r = NULL;
        if (tdm_search_terms(s, st, n, &o, &r) != TDM_OK)
            fail_msg("query %d: %s", i, tdm_last_error());
        same_as_plain(s, st, n, &o, r);
        assert_int_equal(r->handovers, 0);
        tdm_search_result_free(r);
    }
    tdm_sched_stats ss;
    stats(s, &ss);
    assert_int_equal(ss.submitted, 4);
    assert_int_equal(ss.direct, 4);
    assert_int_equal(ss.answered, 4);
    assert_int_equal(ss.lanes[0].faults, 0);
    close_bounded(s, e, 0);
}

typedef struct caller_arg {
    tdm_search *s;
    const tdm_search_term *st;
    size_t n;
    tdm_search_options o;
} caller_arg;

/* A caller that never comes back (its device hangs in its own thread). */
static void *stuck_caller(void *arg)
{
    caller_arg *a = arg;
    tdm_search_result *r = NULL;
    tdm_search_terms(a->s, a->st, a->n, &a->o, &r);
    fail_msg("a hung caller returned");
    return NULL;
}

/* Lane 1 (one slot) hangs in a caller's own thread: that caller waits for
 * its device (for good), while the watchdog fails lane 1 within the
 * limit and a query queued behind it there is answered by lane 0, the same
 * answer; close is bounded, the stuck caller left behind. */
static void test_hang_caller(void **state)
{
    fixture *f = *state;
    tdm_engine *e = two_lanes(engine_with("cpu", "1:hang@2", 1, 0));
    tdm_search *s = open_search(f, e);
    warm(f, s, 0);
    warm(f, s, 1);
    tdm_sched_stats ss;
    stats(s, &ss);
    uint64_t direct0 = ss.direct;
    static tdm_search_term st[2];
    static caller_arg a;
    a.s = s;
    a.st = st;
    a.n = query(f, st, &a.o, 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stuck_caller, &a), 0);
    pthread_detach(th);
    double t0 = now_s();
    do { /* until its run took lane 1's slot in its own thread */
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
        stats(s, &ss);
    } while (ss.direct == direct0 && now_s() - t0 < SLACK_S);
    assert_int_equal(ss.direct, direct0 + 1);
    tdm_search_result *r = NULL;
    if (tdm_search_terms(s, st, a.n, &a.o, &r) != TDM_OK) /* queued behind it on lane 1 */
        fail_msg("the query behind the hung caller: %s", tdm_last_error());
    double dt = now_s() - t0;
    print_message("answered in %.2f s by lane %d behind a hung caller\n", dt, r->device);
    assert_true(dt < LIMIT_MS * 1e-3 + SLACK_S);
    assert_int_equal(r->device, 0);
    assert_true(r->handovers >= 1);
    same_as_plain(s, st, a.n, &a.o, r);
    tdm_search_result_free(r);
    stats(s, &ss);
    assert_int_equal(ss.lanes[1].alive, 0);
    assert_true(ss.lanes[1].faults >= 1);
    close_bounded(s, e, 0);
}

/* One lane that stalls in the caller's thread: the caller waits for its
 * device, then gets TDM_ERR_TIMEOUT naming it (no lane left to run it
 * again); later queries fail at once (no lane); close is bounded. */
static void test_stall_one_lane(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine("0", "0:stall@2");
    assert_int_equal(tdm_engine_device_count(e), 1);
    tdm_device_info info;
    assert_int_equal(tdm_engine_device_info_get(e, 0, &info), TDM_OK);
    char name[256];
    snprintf(name, sizeof name, "%s", info.name);
    tdm_search *s = open_search(f, e);
    warm(f, s, 0);
    tdm_search_term st[2];
    tdm_search_options o;
    size_t n = query(f, st, &o, -1);
    tdm_search_result *r = NULL;
    double t0 = now_s();
    int rc = tdm_search_terms(s, st, n, &o, &r);
    double dt = now_s() - t0;
    print_message("failed in %.2f s: %s\n", dt, tdm_last_error());
    assert_int_equal(rc, TDM_ERR_TIMEOUT);
    assert_null(r);
    assert_true(dt >= 2 * LIMIT_MS * 1e-3 * 0.9);
    assert_true(dt < 2 * LIMIT_MS * 1e-3 + SLACK_S);
    assert_non_null(strstr(tdm_last_error(), name));
    assert_non_null(strstr(tdm_last_error(), "run_timeout_ms"));
    t0 = now_s();
    rc = tdm_search_terms(s, st, n, &o, &r);
    assert_int_equal(rc, TDM_ERR_NO_DEVICE);
    assert_true(now_s() - t0 < 5.0);
    tdm_sched_stats ss;
    stats(s, &ss);
    assert_int_equal(ss.in_flight, 0);
    assert_int_equal(ss.submitted, ss.answered + ss.failed);
    assert_int_equal(ss.failed, 2);
    close_bounded(s, e, 0);
}

#define NB 6 /* queries of the batches */

/* Batch query i: two of the collection's terms. */
static void batch_queries(const fixture *f, tdm_search_term (*st)[2], tdm_search_query *qs)
{
    for (int i = 0; i < NB; i++) {
        for (int t = 0; t < 2; t++) {
            st[i][t].term = f->c.terms[i + 7 * t]; /* of the 30 */
            st[i][t].id = 0;
            st[i][t].weight = 1;
        }
        qs[i] = (tdm_search_query){NULL, st[i], 2};
    }
}

/* A batch pinned to lane 1, which hangs (or stalls) in its run (a lane's
 * worker runs every batch part): the part is prepared again and answered
 * by lane 0, every answer the plain path's; lane 1 is dead. */
static void batch_reroute(void **state, const char *faults)
{
    fixture *f = *state;
    tdm_engine *e = two_lanes(engine("cpu", faults));
    tdm_search *s = open_search(f, e);
    warm(f, s, 0);
    warm(f, s, 1);
    tdm_search_term st[NB][2];
    tdm_search_query qs[NB];
    batch_queries(f, st, qs);
    tdm_search_options o;
    tdm_search_term one[2];
    query(f, one, &o, 1);
    tdm_search_result *rs[NB];
    double t0 = now_s();
    if (tdm_search_batch(s, qs, NB, &o, rs) != TDM_OK)
        fail_msg("the hung lane's batch: %s", tdm_last_error());
    double dt = now_s() - t0;
    print_message("batch answered in %.2f s by lane %d (limit %d ms)\n", dt, rs[0]->device,
                  LIMIT_MS);
    assert_true(dt >= LIMIT_MS * 1e-3 * 0.9);
    assert_true(dt < LIMIT_MS * 1e-3 + SLACK_S);
    for (int i = 0; i < NB; i++) {
        assert_int_equal(rs[i]->device, 0);
        assert_int_equal(rs[i]->handovers, 1);
        same_as_plain(s, st[i], 2, &o, rs[i]);
        tdm_search_result_free(rs[i]);
    }
    tdm_sched_stats ss;
    stats(s, &ss);
    assert_int_equal(ss.lanes[1].alive, 0);
    assert_true(ss.lanes[1].faults >= 1);
    assert_int_equal(ss.in_flight, 0);
    assert_int_equal(ss.submitted, ss.answered + ss.failed);
    assert_int_equal(ss.failed, 0);
    /* a batch after it, split by the hybrid policy: lane 0 alone */
    o.device = -1;
    assert_int_equal(tdm_search_batch(s, qs, NB, &o, rs), TDM_OK);
    for (int i = 0; i < NB; i++) {
        assert_int_equal(rs[i]->device, 0);
        same_as_plain(s, st[i], 2, &o, rs[i]);
        tdm_search_result_free(rs[i]);
    }
    close_bounded(s, e, strstr(faults, "stall") != NULL);
}

static void test_batch_hang_rerouted(void **state)
{
    batch_reroute(state, "1:hang@2");
}

static void test_batch_stall_rerouted(void **state)
{
    batch_reroute(state, "1:stall@2");
}

/* A batch on the only lane, which hangs: TDM_ERR_TIMEOUT naming the
 * device (no lane left to run it again), every result NULL. */
static void test_batch_hang_one_lane(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine("0", "0:hang@2");
    tdm_device_info info;
    assert_int_equal(tdm_engine_device_info_get(e, 0, &info), TDM_OK);
    tdm_search *s = open_search(f, e);
    warm(f, s, 0);
    tdm_search_term st[NB][2];
    tdm_search_query qs[NB];
    batch_queries(f, st, qs);
    tdm_search_options o;
    tdm_search_term one[2];
    query(f, one, &o, -1);
    tdm_search_result *rs[NB];
    assert_int_equal(tdm_search_batch(s, qs, NB, &o, rs), TDM_ERR_TIMEOUT);
    print_message("batch failed: %s\n", tdm_last_error());
    assert_non_null(strstr(tdm_last_error(), info.name));
    for (int i = 0; i < NB; i++)
        assert_null(rs[i]);
    tdm_sched_stats ss;
    stats(s, &ss);
    assert_int_equal(ss.in_flight, 0);
    assert_int_equal(ss.submitted, ss.answered + ss.failed);
    close_bounded(s, e, 0);
}

/* A query of the direct policy pinned to lane 1 (its device), which
 * stalls in the caller's thread: watched, lane 1 fails at the limit; the
 * caller returns after twice the limit and runs it again on lane 0, the
 * plain path's answer; later direct queries for device 1 run on lane 0. */
static void test_direct_stall(void **state)
{
    fixture *f = *state;
    tdm_engine *e = two_lanes(engine("cpu", "1:stall@2"));
    tdm_search *s = open_search(f, e);
    warm(f, s, 1);
    tdm_search_term st[2];
    tdm_search_options o;
    size_t n = query(f, st, &o, 1);
    o.policy = TDM_POLICY_DIRECT;
    tdm_search_result *r = NULL;
    double t0 = now_s();
    if (tdm_search_terms(s, st, n, &o, &r) != TDM_OK)
        fail_msg("the stalled direct query: %s", tdm_last_error());
    double dt = now_s() - t0;
    print_message("direct answered in %.2f s by lane %d\n", dt, r->device);
    assert_true(dt >= 2 * LIMIT_MS * 1e-3 * 0.9);
    assert_true(dt < 2 * LIMIT_MS * 1e-3 + SLACK_S);
    assert_int_equal(r->device, 0);
    assert_int_equal(r->handovers, 1);
    assert_int_equal(r->policy, TDM_POLICY_DIRECT);
    same_as_plain(s, st, n, &o, r);
    tdm_search_result_free(r);
    tdm_sched_stats ss;
    stats(s, &ss);
    assert_int_equal(ss.lanes[1].alive, 0);
    assert_true(ss.lanes[1].faults >= 1);
    t0 = now_s();
    if (tdm_search_terms(s, st, n, &o, &r) != TDM_OK)
        fail_msg("direct after the stall: %s", tdm_last_error());
    assert_true(now_s() - t0 < 5.0);
    assert_int_equal(r->device, 0);
    same_as_plain(s, st, n, &o, r);
    tdm_search_result_free(r);
    stats(s, &ss);
    assert_int_equal(ss.submitted, ss.answered + ss.failed);
    assert_int_equal(ss.failed, 0);
    close_bounded(s, e, 0);
}

/* The same, hanging for good: that caller waits for its device; lane 1
 * fails at the limit all the same and the handle goes on on lane 0. */
static void test_direct_hang(void **state)
{
    fixture *f = *state;
    tdm_engine *e = two_lanes(engine("cpu", "1:hang@2"));
    tdm_search *s = open_search(f, e);
    warm(f, s, 1);
    static tdm_search_term st[2];
    static caller_arg a;
    a.s = s;
    a.st = st;
    a.n = query(f, st, &a.o, 1);
    a.o.policy = TDM_POLICY_DIRECT;
    pthread_t th;
    double t0 = now_s();
    assert_int_equal(pthread_create(&th, NULL, stuck_caller, &a), 0);
    pthread_detach(th);
    tdm_sched_stats ss;
    do {
        struct timespec nap = {0, 10000000};
        nanosleep(&nap, NULL);
        stats(s, &ss);
    } while (ss.lanes[1].alive && now_s() - t0 < SLACK_S);
    print_message("lane 1 failed after %.2f s\n", now_s() - t0);
    assert_int_equal(ss.lanes[1].alive, 0);
    assert_true(now_s() - t0 >= LIMIT_MS * 1e-3 * 0.9);
    tdm_search_result *r = NULL;
    if (tdm_search_terms(s, st, a.n, &a.o, &r) != TDM_OK)
        fail_msg("direct after the hang: %s", tdm_last_error());
    assert_int_equal(r->device, 0);
    same_as_plain(s, st, a.n, &a.o, r);
    tdm_search_result_free(r);
    close_bounded(s, e, 0);
}

/* An engine that calibrates `n` samples a lane at open (no stored model:
 * its own cache directory, emptied of models). */
static tdm_engine *engine_calibrating(const char *faults, int n)
{
    const char *dir = tdm_test_tmpdir("watchdog_cal");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -f %s/sched-*.model", dir);
    assert_int_equal(system(cmd), 0);
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "cpu";
    o.fault_inject = faults;
    o.run_timeout_ms = LIMIT_MS;
    o.calibrate = n;
    o.cache_dir = dir;
    return two_lanes(tdm_test_engine_with(&o));
}

/* A calibration sample that hangs (stalls) on lane 1: the open returns at
 * the limit with lane 1 dead, lane 0 calibrated; queries answer on lane 0;
 * close is bounded (a stalled sample's thread returns first and is
 * joined: its memory freed, ASan). */
static void calibration(void **state, const char *faults)
{
    fixture *f = *state;
    /* runs 1 .. 3 warm up (one query of each size), 4 .. 7 the samples:
       the 5th is a sample, of an algorithm run before (the limit alone) */
    tdm_engine *e = engine_calibrating(faults, 4);
    tdm_search *s = NULL;
    double t0 = now_s();
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("tdm_search_open: %s", tdm_last_error());
    double dt = now_s() - t0;
    print_message("open in %.2f s\n", dt);
    assert_true(dt < LIMIT_MS * 1e-3 + SLACK_S);
    tdm_sched_stats ss;
    stats(s, &ss);
    assert_int_equal(ss.lanes[0].alive, 1);
    assert_int_equal(ss.lanes[1].alive, 0);
    assert_true(ss.lanes[1].faults >= 1);
    assert_int_equal(ss.lanes[0].model_n, 4);
    assert_int_equal(ss.submitted, 0);
    tdm_search_term st[2];
    tdm_search_options o;
    size_t n = query(f, st, &o, -1);
    for (int i = 0; i < 2; i++) {
        tdm_search_result *r = NULL;
        o.device = i; /* a pin to the dead lane goes to lane 0 */
        if (tdm_search_terms(s, st, n, &o, &r) != TDM_OK)
            fail_msg("after calibration: %s", tdm_last_error());
        assert_int_equal(r->device, 0);
        same_as_plain(s, st, n, &o, r);
        tdm_search_result_free(r);
    }
    close_bounded(s, e, strstr(faults, "stall") != NULL);
}

static void test_calibration_hang(void **state)
{
    calibration(state, "1:hang@5");
}

static void test_calibration_stall(void **state)
{
    calibration(state, "1:stall@5");
}

/* A made-up GPU lane for the limit rule alone (no device): its model
 * the prior only, every algorithm run before (no compile allowance). */
static void limit_lane(struct tdm_sched *sc, slane *l, long timeout_ms)
{
    memset(sc, 0, sizeof *sc);
    memset(l, 0, sizeof *l);
    sc->timeout_ms = timeout_ms;
    l->sc = sc;
    l->gpu = 1;
    tdm_model_init(&l->model, 1);
    l->warm = ~0u;
}

#define LIMIT_TERMS 44 /* a SPLADE++ query's distinct terms */

/* nq prepared WAND queries of LIMIT_TERMS lists of 1M postings each (the
 * shape of a SPLADE query on 8.8M documents), items[i] -> its[i]. */
static void limit_queries(tdm_sbq *its, tdm_sbq **items, tdm_qterm *terms, size_t nq)
{
    for (size_t t = 0; t < LIMIT_TERMS; t++)
        terms[t] = (tdm_qterm){t, 1.0, 1, 1000000};
    for (size_t i = 0; i < nq; i++) {
        memset(&its[i], 0, sizeof its[i]);
        its[i].q.terms = terms;
        its[i].q.nterms = LIMIT_TERMS;
        its[i].q.finished = 1;
        its[i].pl.alg = TDM_ALGO_WAND;
        its[i].run = 1;
        its[i].k = 10;
        items[i] = &its[i];
    }
}

/* Auto's limit of a batch's run covers its queries: the lanes' fits learn
 * from lone runs only, so a batch of 500 SPLADE-shaped WAND queries (34 ms
 * each alone on an H200) could be predicted at the model's 10 us floor
 * each, and the old rule (100 x prediction, at least 10 s) gave the run
 * 10 s: a healthy device abandoned. The limit now grows with the queries
 * (100 x the prior of each past the first: 0.4 ms + 0.2 ms per million
 * postings on a GPU), a lone query's stays 10 s, a large prediction still
 * rules, and run_timeout_ms stays exact for a batch's run. */
static void test_batch_limit(void **state)
{
    (void)state;
    enum { NQ = 500 };
    struct tdm_sched sc;
    slane l;
    tdm_qterm terms[LIMIT_TERMS];
    tdm_sbq *its = calloc(2 * NQ, sizeof *its);
    tdm_sbq **items = calloc(2 * NQ, sizeof *items);
    assert_non_null(its);
    assert_non_null(items);
    limit_queries(its, items, terms, 2 * NQ);
    uint32_t wand = 1u << TDM_ALGO_WAND;
    double tiny = 1e-5; /* the model's least prediction, a query */
    limit_lane(&sc, &l, 0);
    /* a lone query: as before, 100 x its prediction, at least 10 s */
    assert_true(tdm_watchdog_limit(&l, items, 1, wand, tiny) == 10.0);
    assert_true(tdm_watchdog_limit(&l, items, 1, wand, 0.5) == 50.0);
    /* the batch: 10 s + 499 x 100 x (0.4 ms + 0.2 ms x 44) = 469 s */
    double b500 = tdm_watchdog_limit(&l, items, NQ, wand, NQ * tiny);
    print_message("auto limit of %d queries predicted at %.3f s: %.1f s\n", NQ, NQ * tiny, b500);
    assert_true(fabs(b500 - (10.0 + (NQ - 1) * 100.0 * (0.4 + 0.2 * LIMIT_TERMS) * 1e-3)) < 1e-6);
    assert_true(b500 > NQ * 0.120); /* the queries' p99 alone, every one */
    double b1000 = tdm_watchdog_limit(&l, items, 2 * NQ, wand, 2 * NQ * tiny);
    assert_true(b1000 > 1.9 * b500); /* grows with the queries */
    /* a query with no device work (a failed preparation) adds nothing */
    its[1].prc = TDM_ERR_INVALID_ARG;
    assert_true(tdm_watchdog_limit(&l, items, 2, wand, 2 * tiny) == 10.0);
    its[1].prc = TDM_OK;
    /* a prediction above the floor still rules; a first run compiles */
    assert_true(tdm_watchdog_limit(&l, items, NQ, wand, 10.0) == 1000.0);
    l.warm = 0;
    assert_true(tdm_watchdog_limit(&l, items, NQ, wand, NQ * tiny) == b500 + 60.0);
    /* run_timeout_ms: exact, per run, a batch's too; off: none */
    limit_lane(&sc, &l, 10000);
    assert_true(tdm_watchdog_limit(&l, items, NQ, wand, NQ * tiny) == 10.0);
    limit_lane(&sc, &l, -1);
    assert_true(tdm_watchdog_limit(&l, items, NQ, wand, NQ * tiny) == 0.0);
    free(items);
    free(its);
}

/* The setting: the option's range, the variable's words. */
static void test_setting(void **state)
{
    (void)state;
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "0";
    o.run_timeout_ms = -2;
    tdm_engine *e = NULL;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "run_timeout_ms"));
    o.run_timeout_ms = 0;
    setenv("TANDEM_RUN_TIMEOUT_MS", "soon", 1);
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_RUN_TIMEOUT_MS=soon"));
    setenv("TANDEM_RUN_TIMEOUT_MS", "off", 1);
    assert_int_equal(tdm_engine_open(&o, &e), TDM_OK);
    tdm_engine_close(e);
    unsetenv("TANDEM_RUN_TIMEOUT_MS");
    o.fault_inject = "0:freeze";
    assert_int_equal(tdm_engine_open(&o, &e), TDM_OK);
    tdm_search *s = NULL;
    fixture *f = *state;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "hang or stall"));
    tdm_engine_close(e);
}

int main(void)
{
    setenv("POCL_DEVICES", "pthread pthread", 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_path_watched),
        cmocka_unit_test(test_hang_rerouted),
        cmocka_unit_test(test_stall_rerouted),
        cmocka_unit_test(test_stall_caller_rerouted),
        cmocka_unit_test(test_hang_caller),
        cmocka_unit_test(test_stall_one_lane),
        cmocka_unit_test(test_batch_hang_rerouted),
        cmocka_unit_test(test_batch_stall_rerouted),
        cmocka_unit_test(test_batch_hang_one_lane),
        cmocka_unit_test(test_direct_stall),
        cmocka_unit_test(test_direct_hang),
        cmocka_unit_test(test_calibration_hang),
        cmocka_unit_test(test_calibration_stall),
        cmocka_unit_test(test_setting),
        cmocka_unit_test(test_batch_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
