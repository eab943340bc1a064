/* A lane (sched_priv.h): its worker, one run of one query or a batch on its
 * device, and what happens after: answers to their callers, observations to
 * the cost model, failed runs handed to other lanes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drive/and_step.h"
#include "sched_priv.h"

#define RECHECK_S 0.002 /* an idle lane's next look at other lanes' queues */

int tdm_lane_warm(slane *l, int alg)
{
    uint32_t bit = 1u << (alg & 31);
    int warm = (l->warm & bit) != 0;
    l->warm |= bit;
    return warm;
}

/* The injected fault of this run, if any (lock held): the watchdog's
 * kinds count every run on the device, the others the lane's runs. */
static int fault_now(slane *l)
{
    unsigned long run = ++l->runs;
    int wd = tdm_watchdog_fault(l);
    if (wd || l->fault.kind == TDM_FAULT_HANG || l->fault.kind == TDM_FAULT_STALL)
        return wd;
    return l->fault.kind && run == l->fault.at ? l->fault.kind : TDM_FAULT_NONE;
}

/* A failure of the device: the lane is dead (common/error.h). */
static int lane_fatal(int rc)
{
    return tdm_err_reach(rc) == TDM_REACH_DEVICE;
}

/* A failure of this run (device memory, a bug of tandem's on these
 * queries): another lane, or this one again, may succeed. */
static int passing(int rc)
{
    int r = tdm_err_reach(rc);
    return r == TDM_REACH_RUN || r == TDM_REACH_BUG;
}

/* After a run that failed as a whole with rc (lock held). */
static void run_failed(slane *l, sjob **jobs, int n, int rc, const tdm_err *e, double now)
{
    struct tdm_sched *sc = l->sc;
    char msg[TDM_LANE_MSG];
    snprintf(msg, sizeof msg, "lane %d (%s): %s", l->index, sc->s->dev[l->index].d->info.name,
             tdm_err_msg(e));
    if (rc == TDM_ERR_UNSUPPORTED && n == 1 && jobs[0]->as && sc->nl > 1) {
        tdm_sjob_hand_over(sc, l, jobs[0], rc, msg, now); /* this device cannot: another may */
        return;
    }
    if (!passing(rc) && !lane_fatal(rc)) { /* host trouble: no lane does better */
        for (int i = 0; i < n; i++) {
            jobs[i]->rc = tdm_err_set(&jobs[i]->err, rc, "%s", tdm_err_msg(e));
            tdm_sjob_complete(sc, jobs[i]);
        }
        return;
    }
    l->st.faults++;
    if (lane_fatal(rc))
        tdm_lane_fail(l, msg, now);
    for (int i = 0; i < n; i++)
        tdm_sjob_hand_over(sc, l, jobs[i], rc, msg, now);
}

/* A batch part's results (lock held): handed over whole when this device
 * cannot run one of them (as its queries one by one would be), else kept. */
static void part_answered(slane *l, sjob *j, tdm_search_result **results, double now)
{
    struct tdm_sched *sc = l->sc;
    int unsupported = -1;
    for (uint32_t x = 0; x < j->nq && sc->nl > 1; x++)
        if (results[x]->status == TDM_ERR_UNSUPPORTED)
            unsupported = (int)x;
    if (unsupported >= 0) {
        char msg[TDM_LANE_MSG];
        snprintf(msg, sizeof msg, "%s",
                 results[unsupported]->error ? results[unsupported]->error : "unsupported");
        for (uint32_t x = 0; x < j->nq; x++)
            tdm_search_result_release(results[x]);
        tdm_sjob_hand_over(sc, l, j, TDM_ERR_UNSUPPORTED, msg, now);
        return;
    }
    for (uint32_t x = 0; x < j->nq; x++)
        j->bres[x] = results[x];
    j->rc = TDM_OK;
    l->st.queries += j->nq;
    tdm_sjob_complete(sc, j);
}

/* After a run that answered (lock held): jobs[i]'s results follow those of
 * jobs[0 .. i) in results[] (nq each). */
static void run_answered(slane *l, sjob **jobs, int n, tdm_search_result **results, double dt,
                         double now)
{
    struct tdm_sched *sc = l->sc;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        sjob *j = jobs[i];
        tdm_search_result **rp = results + total;
        total += tdm_sjob_nq(j);
        if (j->bres) {
            part_answered(l, j, rp, now);
            continue;
        }
        tdm_search_result *r = rp[0];
        if (r->status == TDM_ERR_UNSUPPORTED && sc->nl > 1) { /* this device cannot: another may */
            char msg[TDM_LANE_MSG];
            snprintf(msg, sizeof msg, "%s", r->error ? r->error : "unsupported");
            tdm_search_result_release(r);
            tdm_sjob_hand_over(sc, l, j, TDM_ERR_UNSUPPORTED, msg, now);
            continue;
        }
        j->res = r;
        j->rc = TDM_OK; /* the query's own error, if any, is r->status */
        l->st.queries++;
        /* a step-by-step query is observed only when it ran whole here */
        int whole = !j->as || (j->migrations == 0 && j->handovers == 0);
        if (n == 1 && tdm_sjob_nq(j) == 1 && whole && r->status == TDM_OK && r->device >= 0 &&
            tdm_lane_warm(l, r->algorithm)) {
            double rel = fabs(j->pred[l->index] - dt) / (dt > 1e-9 ? dt : 1e-9);
            l->err_sum += rel;
            l->st.pred_n++;
            tdm_model_observe(&l->model, r->algorithm, &j->f, dt);
        }
        tdm_sjob_complete(sc, j);
    }
    if (total > 1) {
        l->st.batches++;
        sc->st.batches++;
        sc->st.batched += (uint64_t)total;
    }
}

/* After a segment of a step-by-step query that moved its rest to lane `to`
 * (lock held). */
static void run_moved(slane *l, sjob *j, int to, double now)
{
    struct tdm_sched *sc = l->sc;
    if (tdm_migrate_move(sc, j, l->index, to, now) == 0)
        return;
    j->rc = tdm_err_set(&j->err, TDM_ERR_NO_DEVICE,
                        "search: the rest of the query had no live lane to go to");
    tdm_sjob_complete(sc, j);
}

/* Whether any query waits in a queue (lock held). */
static int work_waiting(const struct tdm_sched *sc)
{
    if (sc->either.n)
        return 1;
    for (int i = 0; i < sc->nl; i++)
        if (sc->lanes[i].q.n)
            return 1;
    return 0;
}

/* After a run the watchdog abandoned (lock held on entry; released when
 * it returns 1): its answers and jobs are not its own any more; it frees
 * what its callers left to it. 0: the run counts. */
static int late_return(slane *l, tdm_watch *w, int rc, int moved, tdm_search_result **results,
                       size_t nqt)
{
    struct tdm_sched *sc = l->sc;
    struct tdm_astep *as;
    void (*fns[TDM_SCHED_BATCH_MAX])(void *);
    void *args[TDM_SCHED_BATCH_MAX];
    int nfn;
    if (!tdm_watchdog_returned(w, &as, fns, args, &nfn))
        return 0;
    pthread_mutex_unlock(&sc->mu);
    (void)moved; /* a stepped job's pending intermediate is in as */
    for (size_t i = 0; rc == TDM_OK && results && i < nqt; i++)
        tdm_search_result_release(results[i]);
    if (as) {
        tdm_astep_free(as);
        free(as);
    }
    for (int i = 0; i < nfn; i++)
        fns[i](args[i]);
    return 1;
}

int tdm_lane_run(slane *l, int k, sjob **jobs, int n, int caller)
{
    struct tdm_sched *sc = l->sc;
    size_t nqt = 0; /* queries in the run: a batch part carries many */
    for (int i = 0; i < n; i++)
        nqt += tdm_sjob_nq(jobs[i]);
    tdm_sbq **its = malloc(nqt * sizeof *its);
    tdm_search_result **results = calloc(nqt, sizeof *results);
    double t0 = tdm_sched_now();
    pthread_mutex_lock(&sc->mu);
    int fault = fault_now(l);
    double pred = 0;
    for (int i = 0, p = 0; its && results && i < n; i++) {
        if (!jobs[i]->as || jobs[i]->started == 0) /* a moved query started before */
            jobs[i]->started = t0;
        jobs[i]->mode = nqt > 1 ? TDM_LOAD_BATCH : sc->mode;
        for (uint32_t x = 0; x < tdm_sjob_nq(jobs[i]); x++, p++)
            its[p] = jobs[i]->items[x];
        pred += jobs[i]->pred[l->index];
    }
    l->run_end[k] = t0 + pred;
    tdm_watch w = {0};
    double bound = its && results ? tdm_watchdog_arm(l, &w, jobs, n, its, nqt, 0, caller, pred, t0) : 0;
    if (l->active++ == 0)
        l->active_t0 = t0;
    pthread_mutex_unlock(&sc->mu);
    if (fault == TDM_FAULT_HANG || fault == TDM_FAULT_STALL)
        tdm_watchdog_fault_block(fault, bound > 0 ? bound : 1.0); /* a driver call stuck */

    tdm_err e = {0};
    int rc, moved = -1;
    if (!its || !results)
        rc = tdm_err_set(&e, TDM_ERR_NOMEM, "out of memory for a run of %zu queries", nqt);
    else if (fault == TDM_FAULT_BUILD)
        rc = tdm_err_set(&e, TDM_ERR_BUILD, "kernel build failed (injected by TANDEM_FAULT_INJECT)");
    else if (fault == TDM_FAULT_OOM)
        rc = tdm_err_set(&e, TDM_ERR_DEVICE_MEMORY,
                         "device out of memory (injected by TANDEM_FAULT_INJECT)");
    else if (n == 1 && jobs[0]->as) /* ranked AND step by step (migrate.c) */
        rc = tdm_migrate_run(l, jobs[0], &moved, &results[0], &e);
    else
        rc = tdm_search_run_prepared(sc->s, its, nqt, l->index, results, &e);
    if (rc == TDM_OK && fault == TDM_FAULT_LOST) { /* the device went away with the answers */
        for (size_t i = 0; i < nqt; i++)
            tdm_search_result_release(results[i]);
        moved = -1; /* nor does a moved query's intermediate count */
        rc = tdm_err_set(&e, TDM_ERR_OPENCL,
                         "device lost mid-query (injected by TANDEM_FAULT_INJECT)");
    }
    double now = tdm_sched_now();

    pthread_mutex_lock(&sc->mu);
    l->st.busy_seconds += now - t0;
    if (--l->active == 0)
        l->st.active_seconds += now - l->active_t0;
    if (late_return(l, &w, rc, moved, results, nqt)) {
        tdm_err_clear(&e);
        free(its);
        free(results);
        return 1;
    }
    if (rc)
        run_failed(l, jobs, n, rc, &e, now);
    else if (moved >= 0)
        run_moved(l, jobs[0], moved, now);
    else
        run_answered(l, jobs, n, results, now - t0, now);
    tdm_lane_release(l, k);
    if (work_waiting(sc)) /* else waking the worker only costs the next query time */
        pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&sc->mu);
    tdm_err_clear(&e);
    free(its);
    free(results);
    return 0;
}

/* Lane in batch mode with room left: waits up to the window for more
 * queries (lock held; returns the new count). */
static int fill_window(slane *l, sjob **jobs, int n, int max)
{
    struct tdm_sched *sc = l->sc;
    double start = tdm_sched_now(), until = start + sc->window;
    struct timespec ts = tdm_sched_deadline_in(sc->window);
    while (n < max && !sc->stop && l->alive && tdm_sched_now() < until) {
        if (pthread_cond_timedwait(&l->cv, &sc->mu, &ts) != 0)
            break;
        n += tdm_place_pick(sc, l, jobs + n, max - n, tdm_sched_now());
    }
    n += tdm_place_pick(sc, l, jobs + n, max - n, tdm_sched_now());
    sc->st.window_wait += tdm_sched_now() - start;
    return n;
}

static void *worker(void *arg)
{
    slane *l = arg;
    struct tdm_sched *sc = l->sc;
    int max = (int)sc->batch_max;
    sjob *jobs[TDM_SCHED_BATCH_MAX];
    pthread_mutex_lock(&sc->mu);
    while (!sc->stop && l->alive) {
        int k = tdm_lane_free_slot(l);
        int n = k < 0 ? 0 : tdm_place_pick(sc, l, jobs, max, tdm_sched_now());
        if (n == 0 && k >= 0 && work_waiting(sc)) {
            /* queries wait elsewhere but stealing does not pay yet: look
             * again soon (the other lane's run may outlast its prediction) */
            struct timespec ts = tdm_sched_deadline_in(RECHECK_S);
            pthread_cond_timedwait(&l->cv, &sc->mu, &ts);
            continue;
        }
        if (n == 0) {
            pthread_cond_wait(&l->cv, &sc->mu);
            continue;
        }
        tdm_lane_claim(l, k, tdm_sched_now() + sc->window);
        if (l->batch && sc->mode == TDM_LOAD_BATCH && sc->window > 0 && n < max)
            n = fill_window(l, jobs, n, max);
        pthread_mutex_unlock(&sc->mu);
        tdm_lane_run(l, k, jobs, n, 0);
        pthread_mutex_lock(&sc->mu);
    }
    for (int i = 0; i < l->started; i++) /* close joins only those that returned */
        if (pthread_equal(l->th[i], pthread_self()))
            l->exited |= 1u << i;
    pthread_cond_broadcast(&sc->wd_cv);
    pthread_mutex_unlock(&sc->mu);
    return NULL;
}

int tdm_lane_start(slane *l, tdm_err *err)
{
    /* under the lock: a worker of a lane already dead (its calibration
     * abandoned) returns at once, and must find itself in th[] and
     * started to mark its exit */
    int rc = TDM_OK;
    pthread_mutex_lock(&l->sc->mu);
    for (int k = 0; k < l->slots && rc == TDM_OK; k++) {
        if (pthread_create(&l->th[k], NULL, worker, l) != 0)
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "search: cannot start a worker of lane %d",
                             l->index);
        else
            l->started++;
    }
    pthread_mutex_unlock(&l->sc->mu);
    return rc;
}
