/* Job queues (sched_priv.h): doubly linked FIFOs with their predicted backlog. */
#include "sched_priv.h"

void tdm_squeue_push(squeue *q, sjob *j, int where, double pred)
{
    j->next = NULL;
    j->prev = q->tail;
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    q->n++;
    q->backlog += pred;
    j->where = where;
}

void tdm_squeue_push_front(squeue *q, sjob *j, int where, double pred)
{
    j->prev = NULL;
    j->next = q->head;
    if (q->head)
        q->head->prev = j;
    else
        q->tail = j;
    q->head = j;
    q->n++;
    q->backlog += pred;
    j->where = where;
}

void tdm_squeue_remove(squeue *q, sjob *j, double pred)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        q->head = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        q->tail = j->prev;
    j->prev = j->next = NULL;
    j->where = -2;
    q->n--;
    q->backlog -= pred;
    if (q->n == 0 || q->backlog < 0)
        q->backlog = 0; /* rounding */
}

squeue *tdm_squeue_of(struct tdm_sched *sc, int where)
{
    return where == -1 ? &sc->either : &sc->lanes[where].q;
}
