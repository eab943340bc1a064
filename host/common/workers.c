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

unsigned tdm_ncpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (unsigned)n;
}
