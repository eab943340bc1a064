/* tdm_par_for: a counter shared by a few short-lived threads. */
#include "workers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct par {
    tdm_par_fn fn;
    void *ctx;
    size_t n;
    atomic_size_t next;
} par;

typedef struct par_thread {
    par *p;
    unsigned worker;
} par_thread;

static void drain(par *p, unsigned worker)
{
    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;)
        p->fn(p->ctx, i, worker);
}

static void *par_main(void *arg)
{
    par_thread *t = arg;
    drain(t->p, t->worker);
    return NULL;
}

void tdm_par_for(unsigned threads, size_t n, tdm_par_fn fn, void *ctx)
{
    par p = {fn, ctx, n, 0};
    if (threads > n)
        threads = n ? (unsigned)n : 1;
    pthread_t *tid = threads > 1 ? malloc((threads - 1) * sizeof *tid) : NULL;
    par_thread *arg = threads > 1 ? malloc((threads - 1) * sizeof *arg) : NULL;
    unsigned started = 0;
    for (unsigned w = 1; tid && arg && w < threads; w++) {
        arg[started] = (par_thread){&p, w};
        if (pthread_create(&tid[started], NULL, par_main, &arg[started]) != 0)
            break; /* the others share its items */
        started++;
    }
    drain(&p, 0);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    free(arg);
}

/* Read once a process: glibc's sysconf opens and reads
 * /sys/devices/system/cpu/online on every call (5 us on the 2-core build
 * VM), and a search call asks twice (tdm_search_parallel): 10 of the 13 us
 * a one-term query took on the host path there. */
unsigned tdm_ncpus(void)
{
    static unsigned cached; /* 0: not read yet; a race reads it twice, alike */
    unsigned v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v)
        return v;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    v = n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
    __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    return v;
}

/* ---- tdm_pool_for: helpers kept between calls */

typedef struct pjob {
    tdm_par_fn fn;
    void *ctx;
    size_t n;
    atomic_size_t next;
    unsigned want;   /* helpers still wanted (pool lock) */
    unsigned joined; /* helpers that took it: their worker numbers (pool lock) */
    unsigned active; /* helpers still draining it (pool lock) */
    struct pjob *next_job;
} pjob;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_work = PTHREAD_COND_INITIALIZER; /* a job wants helpers */
static pthread_cond_t pool_done = PTHREAD_COND_INITIALIZER; /* a helper left a job */
static pjob *pool_queue;   /* jobs that want helpers, oldest first */
static unsigned pool_helpers, pool_busy, pool_wanted; /* made; draining; wanted by the queue */

static void pjob_drain(pjob *j, unsigned worker)
{
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        j->fn(j->ctx, i, worker);
}

/* Pool lock held: j out of the queue (no helper joins it any more). */
static void pjob_unqueue(pjob *j)
{
    for (pjob **p = &pool_queue; *p; p = &(*p)->next_job)
        if (*p == j) {
            *p = j->next_job;
            return;
        }
}

static void *pool_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool_mu);
    for (;;) {
        while (!pool_queue)
            pthread_cond_wait(&pool_work, &pool_mu);
        pjob *j = pool_queue;
        unsigned worker = ++j->joined;
        j->active++;
        pool_busy++;
        pool_wanted--;
        if (--j->want == 0)
            pjob_unqueue(j);
        pthread_mutex_unlock(&pool_mu);
        pjob_drain(j, worker);
        pthread_mutex_lock(&pool_mu);
        pool_busy--;
        if (--j->active == 0)
            pthread_cond_broadcast(&pool_done);
    }
    return NULL;
}

/* Pool lock held: a helper for each one draining and each one the queued
 * jobs want (calls from several threads at once each get theirs), within
 * TDM_POOL_MAX, as far as threads can be made. */
static void pool_grow(void)
{
    unsigned want = pool_busy + pool_wanted;
    want = want < TDM_POOL_MAX ? want : TDM_POOL_MAX;
    while (pool_helpers < want) {
        pthread_t t;
        pthread_attr_t a;
        if (pthread_attr_init(&a) != 0)
            return;
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &a, pool_main, NULL);
        pthread_attr_destroy(&a);
        if (rc != 0)
            return; /* the caller and the helpers there are take its share */
        pool_helpers++;
    }
}

void tdm_pool_for(unsigned threads, size_t n, tdm_par_fn fn, void *ctx)
{
    if (threads > n)
        threads = n ? (unsigned)n : 1;
    if (threads > TDM_POOL_MAX)
        threads = TDM_POOL_MAX;
    pjob j = {fn, ctx, n, 0, threads - 1, 0, 0, NULL};
    if (threads > 1) {
        pthread_mutex_lock(&pool_mu);
        pool_wanted += threads - 1;
        pool_grow();
        pjob **tail = &pool_queue;
        while (*tail)
            tail = &(*tail)->next_job;
        *tail = &j;
        for (unsigned h = 1; h < threads; h++)
            pthread_cond_signal(&pool_work);
        pthread_mutex_unlock(&pool_mu);
    }
    pjob_drain(&j, 0);
    if (threads > 1) {
        pthread_mutex_lock(&pool_mu);
        if (j.want) { /* helpers that have not come are not needed */
            pjob_unqueue(&j);
            pool_wanted -= j.want;
        }
        while (j.active)
            pthread_cond_wait(&pool_done, &pool_mu);
        pthread_mutex_unlock(&pool_mu);
    }
}
