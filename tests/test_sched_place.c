/* The scheduler's placement rules (host/sched/place.c) on made-up lanes and
 * predictions, without a device: earliest predicted finish, the hybrid
 * policy's three queues, the caller running a query on an idle lane, pins,
 * the kind policies, deadline promotion, work stealing (and when it does
 * not pay), batches in batch mode, batch calls' parts (work left, stolen
 * unless pinned, twin lanes predicted alike), and hand-overs that skip
 * failed lanes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_priv.h"
#include "testutil.h"

typedef struct world {
    struct tdm_sched sc;
    slane lanes[3];
    struct tdm_search s;
    tdm_sdev dev[3];
    tdm_device d[3];
} world;

/* Lanes 0 (CPU) and 1 (GPU), and lane 2 (CPU) when n = 3; all idle. */
static world *make(int n)
{
    world *w = calloc(1, sizeof *w);
    w->s.dev = w->dev;
    w->s.ndev = n;
    w->sc.s = &w->s;
    w->sc.lanes = w->lanes;
    w->sc.nl = n;
    w->sc.threshold = 4;
    w->sc.batch_max = 8;
    pthread_mutex_init(&w->sc.mu, NULL);
    for (int i = 0; i < n; i++) {
        w->dev[i].d = &w->d[i];
        w->d[i].info.compute_units = 1;
        w->d[i].wg_size = 1; /* batch cost cap: 128 postings */
        slane *l = &w->lanes[i];
        l->sc = &w->sc;
        l->index = i;
        l->gpu = l->batch = i == 1;
        l->alive = 1;
        l->slots = 1;
        pthread_cond_init(&l->cv, NULL);
    }
    return w;
}

static void destroy(world *w)
{
    for (int i = 0; i < w->sc.nl; i++)
        pthread_cond_destroy(&w->lanes[i].cv);
    pthread_mutex_destroy(&w->sc.mu);
    free(w);
}

/* A job of `policy` with predicted times p0, p1 (and p2) ms, arrived at t. */
static sjob job(int policy, double p0, double p1, double p2, double t)
{
    sjob j;
    memset(&j, 0, sizeof j);
    j.policy = policy;
    j.pin = -1;
    j.where = -2;
    j.pred[0] = p0 * 1e-3;
    j.pred[1] = p1 * 1e-3;
    j.pred[2] = p2 * 1e-3;
    j.arrive = t;
    j.deadline = t + 0.5;
    j.f.los = 10;
    return j;
}

static void idle_lane_runs_in_caller(void **state)
{
    (void)state;
    world *w = make(2);
    sjob a = job(TDM_POLICY_HYBRID, 5, 1, 0, 0);
    assert_int_equal(tdm_place(&w->sc, &a, 0, 1), 1); /* the GPU finishes first */
    assert_int_equal(w->lanes[1].running, 1);
    /* lane 1 now busy for 1 ms: a GPU-suited query still queues for it
     * (1 + 1 < 5), a CPU-suited one runs on the idle CPU lane */
    sjob b = job(TDM_POLICY_HYBRID, 5, 1, 0, 0);
    assert_int_equal(tdm_place(&w->sc, &b, 0, 1), -1);
    assert_int_equal(b.where, 1);
    assert_int_equal(b.cls, CLASS_GPU);
    sjob c = job(TDM_POLICY_HYBRID, 1, 5, 0, 0);
    assert_int_equal(tdm_place(&w->sc, &c, 0, 1), 0);
    /* both busy: a query that suits either goes to the shared queue */
    sjob d = job(TDM_POLICY_HYBRID, 2, 2, 0, 0);
    assert_int_equal(tdm_place(&w->sc, &d, 0, 1), -1);
    assert_int_equal(d.where, -1);
    assert_int_equal(d.cls, CLASS_EITHER);
    destroy(w);
}

static void kinds_pins_and_best(void **state)
{
    (void)state;
    world *w = make(3);
    tdm_lane_claim(&w->lanes[0], 0, 1.0); /* a second of work ahead */
    sjob a = job(TDM_POLICY_CPU_ONLY, 1, 0.1, 3, 0);
    assert_int_equal(tdm_place(&w->sc, &a, 0, 1), 2); /* the other CPU lane, never the GPU */
    sjob b = job(TDM_POLICY_GPU_ONLY, 0.1, 9, 0.1, 0);
    assert_int_equal(tdm_place(&w->sc, &b, 0, 1), 1);
    sjob c = job(TDM_POLICY_BEST, 1, 5, 5, 0); /* fastest lane whatever its queue */
    assert_int_equal(tdm_place(&w->sc, &c, 0, 1), -1);
    assert_int_equal(c.where, 0);
    sjob d = job(TDM_POLICY_HYBRID, 1, 5, 5, 0);
    d.pin = 0;
    assert_int_equal(tdm_place(&w->sc, &d, 0, 0), -1);
    assert_int_equal(d.where, 0);
    /* neither c (best) nor d (pinned) is stolen by an idle lane */
    tdm_lane_release(&w->lanes[1], 0);
    tdm_lane_release(&w->lanes[2], 0);
    sjob *got[4];
    assert_int_equal(tdm_place_pick(&w->sc, &w->lanes[2], got, 4, 0), 0);
    /* the GPU lane has failed: a gpu-only query goes to the lane that
     * finishes it first (lane 0 has a second of work) */
    w->lanes[1].alive = 0;
    sjob e = job(TDM_POLICY_GPU_ONLY, 1, 1, 1, 0);
    assert_int_equal(tdm_place(&w->sc, &e, 0, 1), 2); /* any live lane: its kind has failed */
    destroy(w);
}

static void stealing_and_promotion(void **state)
{
    (void)state;
    world *w = make(2);
    slane *cpu = &w->lanes[0], *gpu = &w->lanes[1];
    tdm_lane_claim(gpu, 0, 0.100); /* 100 ms left */
    sjob a = job(TDM_POLICY_HYBRID, 50, 1, 0, 0);
    tdm_squeue_push(&gpu->q, &a, 1, a.pred[1]);
    sjob *got[4];
    /* the CPU finishes a in 50 ms, the GPU could start it in 100: steal */
    assert_int_equal(tdm_place_pick(&w->sc, cpu, got, 4, 0), 1);
    assert_ptr_equal(got[0], &a);
    assert_int_equal(w->sc.st.stolen, 1);
    assert_int_equal(gpu->q.n, 0);
    /* 500 ms on the CPU: not worth it */
    sjob b = job(TDM_POLICY_HYBRID, 500, 1, 0, 0);
    tdm_squeue_push(&gpu->q, &b, 1, b.pred[1]);
    assert_int_equal(tdm_place_pick(&w->sc, cpu, got, 4, 0), 0);
    tdm_squeue_remove(&gpu->q, &b, b.pred[1]);
    /* promotion: an old shared query preferring the CPU before the CPU's own newer one */
    sjob own = job(TDM_POLICY_HYBRID, 1, 1, 0, 0.30);
    sjob old = job(TDM_POLICY_HYBRID, 1, 1, 0, 0.0);
    old.pref = 0;
    tdm_squeue_push(&cpu->q, &own, 0, own.pred[0]);
    tdm_squeue_push(&w->sc.either, &old, -1, old.pred[0]);
    assert_int_equal(tdm_place_pick(&w->sc, cpu, got, 1, 0.1), 1); /* not urgent yet */
    assert_ptr_equal(got[0], &own);
    tdm_squeue_push(&cpu->q, &own, 0, own.pred[0]);
    assert_int_equal(tdm_place_pick(&w->sc, cpu, got, 1, 0.31), 1); /* past half its deadline */
    assert_ptr_equal(got[0], &old);
    assert_int_equal(w->sc.st.promoted, 1);
    assert_int_equal(tdm_place_pick(&w->sc, cpu, got, 1, 0.31), 1);
    assert_ptr_equal(got[0], &own);
    destroy(w);
}

static void batches_and_handover(void **state)
{
    (void)state;
    world *w = make(2);
    slane *gpu = &w->lanes[1];
    tdm_lane_claim(gpu, 0, 1.0);
    sjob j[6];
    for (int i = 0; i < 6; i++) {
        j[i] = job(TDM_POLICY_GPU_ONLY, 9, 1, 0, i * 1e-3);
        j[i].f.los = 50;
        assert_int_equal(tdm_place(&w->sc, &j[i], 0, 1), -1);
    }
    tdm_lane_release(gpu, 0);
    sjob *got[8];
    /* single mode: one at a time */
    assert_int_equal(tdm_place_pick(&w->sc, gpu, got, 8, 0), 1);
    assert_ptr_equal(got[0], &j[0]);
    /* batch mode: until the shortest lists reach 128 postings (3 x 50) */
    w->sc.mode = TDM_LOAD_BATCH;
    assert_int_equal(tdm_place_pick(&w->sc, gpu, got, 8, 0), 3);
    assert_ptr_equal(got[0], &j[1]);
    assert_ptr_equal(got[2], &j[3]);
    /* a handed-over query never returns to the lane that failed it, and goes
     * ahead of the queue it joins */
    sjob h = job(TDM_POLICY_GPU_ONLY, 9, 1, 0, 0);
    h.tried = 1u << 1;
    h.handovers = 1;
    tdm_lane_claim(&w->lanes[0], 0, 1.0);
    assert_int_equal(tdm_place(&w->sc, &h, 0, 0), -1);
    assert_int_equal(h.where, 0);
    assert_ptr_equal(w->lanes[0].q.head, &h);
    sjob none = job(TDM_POLICY_HYBRID, 1, 1, 0, 0);
    none.tried = 3;
    assert_int_equal(tdm_place(&w->sc, &none, 0, 1), -2);
    destroy(w);
}

static void slots(void **state)
{
    (void)state;
    world *w = make(2);
    slane *cpu = &w->lanes[0];
    cpu->slots = 2;
    w->lanes[1].alive = 0;
    sjob a = job(TDM_POLICY_HYBRID, 4, 1, 0, 0), b = a, c = a;
    assert_int_equal(tdm_place(&w->sc, &a, 0, 1), 0); /* two runs at once */
    assert_int_equal(tdm_place(&w->sc, &b, 0, 1), 0);
    assert_int_equal(a.slot + b.slot, 1);
    assert_int_equal(tdm_lane_free_slot(cpu), -1);
    assert_true(fabs(tdm_lane_rest(cpu, 0) - 0.004) < 1e-12);
    assert_int_equal(tdm_place(&w->sc, &c, 0, 1), -1); /* the third waits */
    tdm_lane_release(cpu, b.slot);
    assert_int_equal(tdm_lane_free_slot(cpu), b.slot);
    assert_true(tdm_lane_rest(cpu, 0) == 0);
    destroy(w);
}

/* Batch calls' parts (batch.c): a lane's work left counts every run going
 * (its backlog is 0 while a slot is free), and a part queued on its lane
 * is stolen by an idle lane that finishes it first, unless pinned. */
static void batch_parts(void **state)
{
    (void)state;
    world *w = make(3);
    slane *c0 = &w->lanes[0], *c2 = &w->lanes[2];
    c0->slots = 2;
    tdm_lane_claim(c0, 0, 0.8); /* a part going, 0.8 s left; a slot free */
    assert_true(tdm_place_backlog(&w->sc, c0, 0) == 0);
    assert_true(fabs(tdm_place_work_left(c0, 0) - 0.4) < 1e-12);
    assert_true(fabs(tdm_place_work_left(c0, 0.5) - 0.15) < 1e-12);
    /* past its predicted end: still a little, so that an idle lane wins */
    assert_true(tdm_place_work_left(c0, 1.0) > 0 && tdm_place_work_left(c0, 1.0) < 1e-5);
    assert_true(tdm_place_work_left(c2, 0) == 0);
    tdm_lane_claim(c0, 1, 0.6); /* both slots taken */
    sjob a = job(TDM_POLICY_CPU_ONLY, 300, 1, 300, 0), b = a;
    a.nq = b.nq = 40;
    b.pin = 0; /* the request's pin */
    tdm_place_on(&w->sc, &a, 0);
    tdm_place_on(&w->sc, &b, 0);
    assert_int_equal(a.where, 0);
    assert_int_equal(c0->q.n, 2);
    assert_true(fabs(tdm_place_work_left(c0, 0) - (0.8 + 0.6 + 0.6) / 2) < 1e-12);
    sjob *got[4];
    /* lane 2, idle, finishes a in 0.3 s; lane 0 could start it in 0.6 */
    assert_int_equal(tdm_place_pick(&w->sc, c2, got, 4, 0), 1);
    assert_ptr_equal(got[0], &a);
    assert_int_equal(c2->st.stolen, 1);
    /* the pinned one stays, and the GPU lane (cpu-only) takes nothing */
    assert_int_equal(tdm_place_pick(&w->sc, c2, got, 4, 0), 0);
    assert_int_equal(tdm_place_pick(&w->sc, &w->lanes[1], got, 4, 0), 0);
    assert_ptr_equal(c0->q.head, &b);
    destroy(w);
}

/* Twin lanes (one kind, one model of device) are predicted alike for
 * batch parts: their models' mean, whatever each fit has seen. */
static void twin_predictions(void **state)
{
    (void)state;
    world *w = make(3);
    for (int i = 0; i < 3; i++) {
        snprintf(w->d[i].info.platform, sizeof w->d[i].info.platform, "P");
        snprintf(w->d[i].info.name, sizeof w->d[i].info.name, "D");
        tdm_model_init(&w->lanes[i].model, w->lanes[i].gpu);
    }
    int grp[3];
    tdm_place_twins(&w->sc, grp);
    assert_int_equal(grp[0], 0);
    assert_int_equal(grp[1], 1); /* the GPU lane: another kind */
    assert_int_equal(grp[2], 0);
    uint64_t lens[2] = {1000, 5000};
    tdm_qfeat f;
    tdm_qfeat_from_lens(lens, 2, 10, &f);
    double p[3], alone[3];
    for (int i = 0; i < 3; i++)
        alone[i] = tdm_model_predict(&w->lanes[i].model, TDM_ALGO_AND, &f);
    tdm_place_predict_twins(&w->sc, grp, TDM_ALGO_AND, &f, p);
    assert_true(p[0] == alone[0] && p[2] == alone[2] && p[1] == alone[1]); /* same priors */
    for (int r = 0; r < 40; r++) /* lane 0's fit sees 5 ms runs */
        tdm_model_observe(&w->lanes[0].model, TDM_ALGO_AND, &f, 5e-3);
    double fit = tdm_model_predict(&w->lanes[0].model, TDM_ALGO_AND, &f);
    assert_true(fabs(fit - 5e-3) < 1e-3);
    tdm_place_predict_twins(&w->sc, grp, TDM_ALGO_AND, &f, p);
    assert_true(fabs(p[0] - (fit + alone[2]) / 2) < 1e-12);
    assert_true(p[2] == p[0]);
    assert_true(p[1] == alone[1]);
    /* another device name: no twin any more */
    snprintf(w->d[2].info.name, sizeof w->d[2].info.name, "E");
    tdm_place_twins(&w->sc, grp);
    assert_int_equal(grp[2], 2);
    tdm_place_predict_twins(&w->sc, grp, TDM_ALGO_AND, &f, p);
    assert_true(p[0] == fit && p[2] == alone[2]);
    destroy(w);
}

/* A dying lane leaves nothing stranded: its queue and the shared queries
 * only it could still take go to the lanes that live (even one that failed
 * them by a passing fault), or end with an error when none lives. */
static void dying_lane(void **state)
{
    (void)state;
    world *w = make(2);
    tdm_lane_claim(&w->lanes[1], 0, 1.0);
    sjob own = job(TDM_POLICY_HYBRID, 1, 1, 0, 0);
    tdm_squeue_push(&w->lanes[0].q, &own, 0, own.pred[0]);
    sjob shared = job(TDM_POLICY_HYBRID, 1, 1, 0, 0);
    shared.tried = 1u << 1; /* lane 1 ran out of device memory on it */
    shared.handovers = 1;
    shared.pref = 0;
    tdm_squeue_push(&w->sc.either, &shared, -1, shared.pred[0]);
    w->sc.st.in_flight = 2;
    tdm_lane_fail(&w->lanes[0], "lane 0: lost", 0);
    assert_int_equal(w->lanes[0].alive, 0);
    assert_int_equal(w->lanes[0].q.n, 0);
    /* one kind of lane left: both in the shared queue, lane 1 may take both */
    assert_int_equal(w->sc.either.n, 2);
    assert_int_equal(own.where, -1);
    assert_int_equal(shared.where, -1);
    assert_int_equal(shared.tried, 0);
    assert_int_equal(w->sc.st.handovers, 2);
    /* the last lane dies: both end, with the fault's message */
    tdm_lane_fail(&w->lanes[1], "lane 1: lost", 0);
    assert_true(own.done && shared.done);
    assert_int_equal(own.rc, TDM_ERR_NO_DEVICE);
    assert_non_null(strstr(tdm_err_msg(&own.err), "lane 1: lost"));
    assert_int_equal(w->sc.st.failed, 2);
    assert_int_equal(w->sc.st.in_flight, 0);
    tdm_err_clear(&own.err);
    tdm_err_clear(&shared.err);
    destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_lane_runs_in_caller),
        cmocka_unit_test(kinds_pins_and_best),
        cmocka_unit_test(stealing_and_promotion),
        cmocka_unit_test(batches_and_handover),
        cmocka_unit_test(slots),
        cmocka_unit_test(batch_parts),
        cmocka_unit_test(twin_predictions),
        cmocka_unit_test(dying_lane),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
