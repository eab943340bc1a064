/* The search-time watchdog (sched_priv.h, docs/SCHED.md "Faults"): a lane's
 * run that has not returned within its limit is abandoned. A hung OpenCL
 * call cannot be cancelled, so the run's thread stays where it is; the
 * watchdog marks the lane dead (its queue handed on), ends the run's jobs
 * with TDM_ERR_TIMEOUT naming the device, and leaves the run's memory to
 * it: the callers run such a job again with a freshly prepared query on
 * another lane (sched.c) and leave the old one (its prepared query, which
 * the stuck run may still read and write) to be freed when that run
 * returns, if ever. A caller's own thread running its query on an idle
 * lane (sched.c's fast path) is watched the same way: it is the stuck
 * thread then, so it waits for its device, and holds the scheduler
 * (hung_runs) until it leaves. Close waits for every worker but those
 * stuck. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drive/and_step.h"
#include "sched_priv.h"

#define FLOOR_S 10.0    /* auto: the least limit of a run (of its first query) */
#define TIMES_PRED 100.0 /* auto: the limit in predicted times of the run */
#define COLD_S 60.0     /* more for a lane's first run of an algorithm (kernel compiles) */
#define PERIOD_S 0.25   /* the watchdog's longest sleep */
#define CLOSE_GRACE_S 1.0 /* close's wait for stuck runs that may yet return */

int tdm_watchdog_fault(slane *l)
{
    unsigned long run = ++l->dev_runs;
    int kind = l->fault.kind;
    return (kind == TDM_FAULT_HANG || kind == TDM_FAULT_STALL) && run == l->fault.at
               ? kind
               : TDM_FAULT_NONE;
}

/* Auto's least limit of a run of items[0 .. nq): FLOOR_S for its first
 * query, and TIMES_PRED x the lane model's prior for each further one. The
 * fits learn from lone runs only (a batch's run is never observed), so a
 * batch of queries shaped unlike those may be predicted far too short:
 * 500 44-term SPLADE WAND queries (calibration's have 1 to 3 terms) were
 * predicted at most 0.2 ms each, taking 34 ms each on an H200, so their
 * run had auto's 10 s and a healthy GPU was abandoned. The prior
 * (tdm_model_prior) follows the postings the queries read, which no fit
 * lowers; a query with no device work (a failed preparation, a host
 * answer) adds nothing. */
static double floor_of(const slane *l, tdm_sbq *const *items, size_t nq)
{
    double s = 0;
    int first = 1;
    for (size_t i = 0; items && i < nq; i++) {
        const tdm_sbq *it = items[i];
        if (it->prc || !it->run)
            continue;
        if (first) {
            first = 0;
            continue;
        }
        tdm_qfeat f;
        tdm_qfeat_from(&it->q, it->k, &f);
        s += tdm_model_prior(&l->model, &f);
    }
    return FLOOR_S + TIMES_PRED * s;
}

double tdm_watchdog_limit(const slane *l, tdm_sbq *const *items, size_t nq, uint32_t algs,
                          double pred)
{
    const struct tdm_sched *sc = l->sc;
    double bound = 0;
    if (sc->timeout_ms > 0) /* exact: a run's, whatever its queries */
        bound = (double)sc->timeout_ms * 1e-3;
    else if (sc->timeout_ms == 0) {
        double least = floor_of(l, items, nq);
        bound = TIMES_PRED * pred > least ? TIMES_PRED * pred : least;
    }
    if (bound > 0 && (l->warm & algs) != algs) /* a first run of an algorithm compiles */
        bound += COLD_S;
    return bound;
}

double tdm_watchdog_arm(slane *l, tdm_watch *w, sjob **jobs, int n, tdm_sbq *const *items,
                        size_t nq, uint32_t algs, int caller, double pred, double t0)
{
    struct tdm_sched *sc = l->sc;
    memset(w, 0, sizeof *w);
    w->l = l;
    w->jobs = jobs;
    w->n = n;
    w->caller = caller;
    for (int i = 0; i < n; i++) { /* a batch part: each query's own (batch.c's alg is one) */
        const sjob *j = jobs[i];
        for (uint32_t x = 0; j->bres && x < j->nq; x++)
            algs |= 1u << (tdm_sched_expected_alg(j->items[x]) & 31);
        algs |= j->bres ? 0 : 1u << (j->alg & 31);
    }
    double bound = tdm_watchdog_limit(l, items, nq, algs, pred);
    w->bound = bound;
    if (bound <= 0)
        return 0;
    w->limit = t0 + bound;
    w->next = sc->watched;
    if (sc->watched)
        sc->watched->prev = w;
    sc->watched = w;
    return bound;
}

static void unlink_watch(struct tdm_sched *sc, tdm_watch *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        sc->watched = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

/* Gives up the run w (lock held): it stays in the list, marked. */
static void abandon(tdm_watch *w, double now)
{
    slane *l = w->l;
    struct tdm_sched *sc = l->sc;
    snprintf(w->msg, sizeof w->msg,
             "lane %d (%s): a run did not finish within %.0f ms (engine option run_timeout_ms, "
             "TANDEM_RUN_TIMEOUT_MS): the device stopped answering and is abandoned",
             l->index, sc->s->dev[l->index].d->info.name, w->bound * 1e3);
    fprintf(stderr, "tandem: warning: %s\n", w->msg);
    w->abandoned = 1;
    sc->hung_runs++;
    l->st.faults++;
    /* its queue may never drain: the engine's close must not release it */
    sc->s->dev[l->index].d->hung = 1;
    tdm_lane_fail(l, w->msg, now); /* its queue (never run) goes to the other lanes */
    for (int i = 0; i < w->n; i++) {
        sjob *j = w->jobs[i];
        j->hung++;
        if (j->as) { /* the stuck run may still step it: the caller starts afresh */
            w->orphan_as = j->as;
            j->as = NULL;
        }
        tdm_err_clear(&j->err);
        j->rc = tdm_err_set(&j->err, TDM_ERR_TIMEOUT, "%s", w->msg);
        j->timed_out = 1;
        j->done = 1;
        sc->st.in_flight -= tdm_sjob_nq(j);
        sc->st.handovers += tdm_sjob_nq(j); /* run again, or counted failed, by its caller */
        pthread_cond_signal(&j->cv);
    }
    tdm_sched_update_mode(sc);
    pthread_cond_broadcast(&sc->wd_cv); /* an open waiting for a calibration sample */
}

int tdm_watchdog_returned(tdm_watch *w, struct tdm_astep **as, void (**fns)(void *), void **args,
                          int *nfn)
{
    struct tdm_sched *sc = w->l->sc;
    *nfn = 0;
    *as = NULL;
    if (w->limit > 0)
        unlink_watch(sc, w);
    w->limit = 0;
    if (!w->abandoned)
        return 0;
    if (!w->caller) /* a caller holds sc until it leaves (tdm_watchdog_leave) */
        sc->hung_runs--;
    *as = w->orphan_as;
    w->orphan_as = NULL;
    for (int i = 0; i < w->n; i++) {
        sjob *j = w->jobs[i];
        if (--j->hung == 0 && j->orphan_fn) { /* its caller left it to us */
            fns[*nfn] = j->orphan_fn;
            args[(*nfn)++] = j->orphan_arg;
        }
    }
    pthread_cond_broadcast(&sc->wd_cv);
    return 1;
}

void tdm_watchdog_leave(struct tdm_sched *sc, int runs)
{
    pthread_mutex_lock(&sc->mu);
    sc->hung_runs -= runs;
    pthread_cond_broadcast(&sc->wd_cv);
    pthread_mutex_unlock(&sc->mu);
}

/* Abandons every run past its limit; returns the seconds to the next
 * limit, at most PERIOD_S (lock held). */
static double sweep(struct tdm_sched *sc)
{
    double now = tdm_sched_now(), next = PERIOD_S;
    for (tdm_watch *w = sc->watched; w; w = w->next) {
        if (w->abandoned)
            continue;
        if (now >= w->limit)
            abandon(w, now);
        else if (w->limit - now < next)
            next = w->limit - now;
    }
    return next > 0.001 ? next : 0.001;
}

static void *watch(void *arg)
{
    struct tdm_sched *sc = arg;
    pthread_mutex_lock(&sc->mu);
    while (!sc->stop) {
        struct timespec ts = tdm_sched_deadline_in(sweep(sc));
        pthread_cond_timedwait(&sc->wd_cv, &sc->mu, &ts);
    }
    pthread_mutex_unlock(&sc->mu);
    return NULL;
}

int tdm_watchdog_start(struct tdm_sched *sc, tdm_err *err)
{
    if (!tdm_watchdog_on(sc))
        return TDM_OK;
    if (pthread_create(&sc->wd, NULL, watch, sc) != 0)
        return tdm_err_set(err, TDM_ERR_NOMEM, "search: cannot start the run watchdog");
    sc->wd_started = 1;
    return TDM_OK;
}

/* Workers of every lane and calibration threads not yet returned (lock held). */
static int workers_left(const struct tdm_sched *sc)
{
    int left = 0;
    for (int i = 0; i < sc->nl; i++) {
        for (int k = 0; k < sc->lanes[i].started; k++)
            left += !(sc->lanes[i].exited & (1u << k));
        left += ((sc->cal_started & ~sc->cal_exited) >> i) & 1;
    }
    return left;
}

/* Joins thread th if it returned (or none is stuck), else leaves it. */
static void join_or_leave(pthread_t th, int returned, int stuck)
{
    if (!stuck || returned)
        pthread_join(th, NULL);
    else
        pthread_detach(th); /* stuck in the device: never joined */
}

int tdm_watchdog_stop(struct tdm_sched *sc)
{
    pthread_mutex_lock(&sc->mu);
    sc->stop = 1;
    for (int i = 0; i < sc->nl; i++)
        pthread_cond_broadcast(&sc->lanes[i].cv);
    pthread_cond_broadcast(&sc->wd_cv);
    /* every worker returns but those stuck in an abandoned run; those get
     * a grace to return late */
    double grace_end = 0;
    while (workers_left(sc) > 0) {
        double now = tdm_sched_now();
        if (workers_left(sc) <= sc->hung_runs) {
            if (grace_end == 0)
                grace_end = now + CLOSE_GRACE_S;
            else if (now >= grace_end)
                break;
        }
        struct timespec ts = tdm_sched_deadline_in(PERIOD_S);
        pthread_cond_timedwait(&sc->wd_cv, &sc->mu, &ts);
    }
    int stuck = sc->hung_runs > 0;
    pthread_mutex_unlock(&sc->mu);
    if (sc->wd_started)
        pthread_join(sc->wd, NULL);
    /* with none stuck every worker is on its way out; with one stuck, sc
     * stays for it, and a late one may still be leaving */
    for (int i = 0; i < sc->nl; i++) {
        slane *l = &sc->lanes[i];
        for (int k = 0; k < l->started; k++) {
            pthread_mutex_lock(&sc->mu);
            int gone = (l->exited >> k) & 1;
            pthread_mutex_unlock(&sc->mu);
            join_or_leave(l->th[k], gone, stuck);
        }
        pthread_mutex_lock(&sc->mu);
        int cal = (sc->cal_started >> i) & 1, gone = (sc->cal_exited >> i) & 1;
        pthread_mutex_unlock(&sc->mu);
        if (cal)
            join_or_leave(sc->cal_th[i], gone, stuck);
    }
    return stuck;
}

void tdm_watchdog_fault_block(int kind, double bound)
{
    double end = tdm_sched_now() + (kind == TDM_FAULT_STALL ? 2 * bound : 1e9);
    for (;;) {
        double left = end - tdm_sched_now();
        if (left <= 0)
            return;
        struct timespec nap = {0, 0};
        if (left > 1)
            nap.tv_sec = 1;
        else
            nap.tv_nsec = (long)(left * 1e9);
        nanosleep(&nap, NULL);
    }
}
