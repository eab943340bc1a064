/* A lane's failure and the calls it ends (sched_priv.h): a failed run's
 * query handed to another lane, a dead lane's queue handed over, a job's
 * call completed, the load mode kept up to date. Apart from lane.c so that
 * the watchdog (watchdog.c), which fails lanes too, and the lane's worker
 * (lane.c), which arms the watchdog, do not call each other. */
#include <stdio.h>

#include "drive/and_step.h"
#include "sched_priv.h"

#define RETRIES 3 /* runs of a query on a lane that failed it but lives on */

void tdm_sched_update_mode(struct tdm_sched *sc)
{
    int any = 0; /* a live batch lane */
    for (int i = 0; i < sc->nl; i++)
        any |= sc->lanes[i].alive && sc->lanes[i].batch;
    uint64_t load = sc->st.in_flight;
    int mode = sc->mode;
    if (mode == TDM_LOAD_SINGLE && any && load >= sc->threshold)
        mode = TDM_LOAD_BATCH;
    else if (mode == TDM_LOAD_BATCH && (!any || load < (sc->threshold + 1) / 2))
        mode = TDM_LOAD_SINGLE; /* hysteresis: back at half the threshold */
    if (mode != sc->mode) {
        sc->mode = mode;
        sc->st.mode_switches++;
    }
}

/* The job's call returns (lock held). */
void tdm_sjob_complete(struct tdm_sched *sc, sjob *j)
{
    j->done = 1;
    sc->st.in_flight -= tdm_sjob_nq(j);
    if (j->as)
        sc->st.carried_bytes += j->as->carried;
    if (tdm_sched_now() > j->deadline)
        sc->st.deadline_misses += tdm_sjob_nq(j);
    if (j->rc == TDM_OK)
        sc->st.answered += tdm_sjob_nq(j);
    else
        sc->st.failed += tdm_sjob_nq(j);
    tdm_sched_update_mode(sc);
    pthread_cond_signal(&j->cv);
}

/* Hands j, which lane l could not answer (error rc, message msg), to
 * another lane; ends it with that error when none is left (lock held). */
static void place_again(struct tdm_sched *sc, sjob *j, int rc, const char *msg, double now)
{
    int lane = tdm_place(sc, j, now, 0);
    if (lane == -2 && j->handovers <= RETRIES) {
        /* every live lane failed it, by a passing fault (device memory: a
         * fatal one kills the lane): they may try again */
        for (int i = 0; i < sc->nl; i++)
            if (sc->lanes[i].alive)
                j->tried &= ~(1u << i);
        lane = tdm_place(sc, j, now, 0);
    }
    if (lane == -2) {
        j->rc = tdm_err_set(&j->err, rc,
                            "%s (no other lane could take the query: every lane failed it)", msg);
        tdm_sjob_complete(sc, j);
    }
}

/* Hands j, which lane l could not answer (error rc, message msg), to
 * another lane; ends it with that error when none is left (lock held). */
void tdm_sjob_hand_over(struct tdm_sched *sc, slane *l, sjob *j, int rc, const char *msg,
                      double now)
{
    j->tried |= 1u << l->index;
    j->handovers++;
    sc->st.handovers++;
    place_again(sc, j, rc, msg, now);
}

/* Whether some live lane may take j from the shared queue. */
static int has_taker(const struct tdm_sched *sc, const sjob *j)
{
    for (int i = 0; i < sc->nl; i++)
        if (sc->lanes[i].alive && !(j->tried & (1u << i)))
            return 1;
    return 0;
}

void tdm_lane_fail(slane *l, const char *msg, double now)
{
    struct tdm_sched *sc = l->sc;
    if (!l->alive)
        return;
    l->alive = 0;
    l->st.alive = 0;
    snprintf(l->fail_msg, sizeof l->fail_msg, "%s", msg);
    while (l->q.head) {
        sjob *j = l->q.head;
        tdm_squeue_remove(&l->q, j, j->pred[l->index]);
        tdm_sjob_hand_over(sc, l, j, TDM_ERR_NO_DEVICE, msg, now);
    }
    /* shared-queue queries that only l could still take (the others failed
     * them) go elsewhere, or end */
    for (sjob *j = sc->either.head, *next; j; j = next) {
        next = j->next;
        if (has_taker(sc, j))
            continue;
        tdm_squeue_remove(&sc->either, j, j->pred[j->pref]);
        j->handovers++;
        sc->st.handovers++;
        place_again(sc, j, TDM_ERR_NO_DEVICE, msg, now);
        next = sc->either.head; /* it may be queued again (with a taker now): rescan */
    }
    tdm_sched_update_mode(sc);
    for (int i = 0; i < sc->nl; i++)
        pthread_cond_broadcast(&sc->lanes[i].cv);
}
