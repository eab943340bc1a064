/* The search-time watchdog (sched_priv.h, docs/SCHED.md "Faults"): a lane's
 * run that has not returned within its limit is abandoned. A hung OpenCL
 * call cannot be cancelled, so the run's thread stays where it is; the
 * watchdog marks the lane dead (its queue handed on), ends the run's jobs
 * with TDM_ERR_TIMEOUT naming the device, and leaves the run's memory to
 * it: the callers run such a job again with a freshly prepared query on
 * another lane (sched.c) and leave the old one (its prepared query, which
 * the stuck run may still read and write) to be freed when that run
 * returns, if ever. Close waits for every worker but those stuck. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drive/and_step.h"
#include "sched_priv.h"

#define FLOOR_S 10.0    /* auto: the least limit of a run */
#define TIMES_PRED 100.0 /* auto: the limit in predicted times of the run */
#define COLD_S 60.0     /* more for a lane's first run of an algorithm (kernel compiles) */
#define PERIOD_S 0.25   /* the watchdog's longest sleep */
#define CLOSE_GRACE_S 1.0 /* close's wait for stuck runs that may yet return */

/* Whether every job's algorithm ran on lane l before (lock held). */
static int warm(const slane *l, sjob **jobs, int n)
{
    for (int i = 0; i < n; i++)
        if (!(l->warm & (1u << (jobs[i]->alg & 31))))
            return 0;
    return 1;
}

double tdm_watchdog_arm(slane *l, int k, sjob **jobs, int n, double pred, double t0)
{
    const struct tdm_sched *sc = l->sc;
    double bound = 0;
    if (sc->timeout_ms > 0)
        bound = (double)sc->timeout_ms * 1e-3;
    else if (sc->timeout_ms == 0)
        bound = TIMES_PRED * pred > FLOOR_S ? TIMES_PRED * pred : FLOOR_S;
    if (bound > 0 && !warm(l, jobs, n))
        bound += COLD_S;
    l->run_bound[k] = bound;
    l->run_limit[k] = bound > 0 ? t0 + bound : 0;
    l->run_jobs[k] = jobs;
    l->run_n[k] = n;
    return bound;
}

/* Gives up lane l's run in slot k (lock held). */
static void abandon(slane *l, int k, double now)
{
    struct tdm_sched *sc = l->sc;
    char msg[384];
    snprintf(msg, sizeof msg,
             "lane %d (%s): a run did not finish within %.0f ms (engine option run_timeout_ms, "
             "TANDEM_RUN_TIMEOUT_MS): the device stopped answering and is abandoned",
             l->index, sc->s->dev[l->index].d->info.name, l->run_bound[k] * 1e3);
    fprintf(stderr, "tandem: warning: %s\n", msg);
    l->abandoned[k] = 1;
    l->run_limit[k] = 0;
    sc->hung_runs++;
    l->st.faults++;
    /* its queue may never drain: the engine's close must not release it */
    sc->s->dev[l->index].d->hung = 1;
    tdm_lane_fail(l, msg, now); /* its queue (never run) goes to the other lanes */
    sjob **jobs = l->run_jobs[k];
    for (int i = 0; i < l->run_n[k]; i++) {
        sjob *j = jobs[i];
        j->hung++;
        if (j->as) { /* the stuck run may still step it: the caller starts afresh */
            l->orphan_as[k] = j->as;
            j->as = NULL;
        }
        tdm_err_clear(&j->err);
        j->rc = tdm_err_set(&j->err, TDM_ERR_TIMEOUT, "%s", msg);
        j->timed_out = 1;
        j->done = 1;
        sc->st.in_flight -= tdm_sjob_nq(j);
        sc->st.handovers += tdm_sjob_nq(j); /* run again, or counted failed, by its caller */
        pthread_cond_signal(&j->cv);
    }
    tdm_sched_update_mode(sc);
}

int tdm_watchdog_returned(slane *l, int k, sjob **jobs, int n, struct tdm_astep **as,
                          void (**fns)(void *), void **args, int *nfn)
{
    struct tdm_sched *sc = l->sc;
    *nfn = 0;
    *as = NULL;
    l->run_limit[k] = 0;
    l->run_jobs[k] = NULL;
    if (!l->abandoned[k])
        return 0;
    l->abandoned[k] = 0;
    sc->hung_runs--;
    *as = l->orphan_as[k];
    l->orphan_as[k] = NULL;
    for (int i = 0; i < n; i++) {
        sjob *j = jobs[i];
        if (--j->hung == 0 && j->orphan_fn) { /* its caller left it to us */
            fns[*nfn] = j->orphan_fn;
            args[(*nfn)++] = j->orphan_arg;
        }
    }
    pthread_cond_broadcast(&sc->wd_cv);
    return 1;
}

static struct timespec real_in(double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = (long long)ts.tv_nsec + (long long)(seconds * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    return ts;
}

/* Abandons every run past its limit; returns the seconds to the next
 * limit, at most PERIOD_S (lock held). */
static double sweep(struct tdm_sched *sc)
{
    double now = tdm_sched_now(), next = PERIOD_S;
    for (int i = 0; i < sc->nl; i++) {
        slane *l = &sc->lanes[i];
        for (int k = 0; k < l->slots; k++) {
            if (!l->run_limit[k] || l->abandoned[k])
                continue;
            if (now >= l->run_limit[k])
                abandon(l, k, now);
            else if (l->run_limit[k] - now < next)
                next = l->run_limit[k] - now;
        }
    }
    return next > 0.001 ? next : 0.001;
}

static void *watch(void *arg)
{
    struct tdm_sched *sc = arg;
    pthread_mutex_lock(&sc->mu);
    while (!sc->stop) {
        struct timespec ts = real_in(sweep(sc));
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

/* Workers of every lane not yet returned (lock held). */
static int workers_left(const struct tdm_sched *sc)
{
    int left = 0;
    for (int i = 0; i < sc->nl; i++)
        for (int k = 0; k < sc->lanes[i].started; k++)
            left += !(sc->lanes[i].exited & (1u << k));
    return left;
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
        struct timespec ts = real_in(PERIOD_S);
        pthread_cond_timedwait(&sc->wd_cv, &sc->mu, &ts);
    }
    int stuck = sc->hung_runs > 0;
    pthread_mutex_unlock(&sc->mu);
    if (sc->wd_started)
        pthread_join(sc->wd, NULL);
    for (int i = 0; i < sc->nl; i++) {
        slane *l = &sc->lanes[i];
        for (int k = 0; k < l->started; k++) {
            /* with none stuck every worker is on its way out; with one
             * stuck, sc stays for it, and a late one may still be leaving */
            pthread_mutex_lock(&sc->mu);
            int gone = !stuck || ((l->exited >> k) & 1);
            pthread_mutex_unlock(&sc->mu);
            if (gone)
                pthread_join(l->th[k], NULL);
            else
                pthread_detach(l->th[k]); /* stuck in the device: never joined */
        }
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
