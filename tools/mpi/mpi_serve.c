/* `mpirun -np R tandem-mpi serve PREFIX --listen ADDR:PORT` (docs/MPI.md):
 * `tandem serve`'s HTTP API (tools/serve_*.c, unchanged) on rank 0 over
 * every shard. The server's connection threads hand their queries to this
 * file's backend (serve.h's tdm_serve_backend), which queues them for rank
 * 0's main thread: MPI is called from that thread only
 * (MPI_THREAD_FUNNELED). The main thread takes whatever is queued, runs each
 * request as one round of every rank (tmpi_search_o, AND-then-OR decided on
 * the whole) and wakes its thread; the other ranks answer rounds as for
 * run and bench (tmpi_serve_rounds).
 *
 * Faults: a rank that fails a round answers that request 503 naming the
 * rank and shard (the job goes on); a rank that stops answering past
 * --timeout fails every request waiting with 503, then the job ends
 * (tmpi_abort); nothing waits for ever. SIGINT or SIGTERM on rank 0 stops
 * taking requests (503), answers those in flight (up to --drain seconds),
 * then stops every rank. */
#ifdef TANDEM_HAVE_MICROHTTPD
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "serve.h"
#include "tmpi.h"

/* One request waiting for a round. */
typedef struct job {
    const tdm_search_query *qs;
    size_t n;
    tdm_search_options o;
    tdm_search_result **out;
    int rc, done;
    char err[1024];
    struct job *next;
} job;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    job *head, **tail;
    job *running;    /* taken by the main thread, not yet answered */
    int closed;      /* no more rounds: a job fails at once with `why` */
    char why[1024];
    tdm_serve *sv;
    tmpi_terms *terms; /* the answers' term counts (mpi_terms.c) */
} Q = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
       .done = PTHREAD_COND_INITIALIZER};

/* Answers j with an error (Q.lock held). */
static void fail_job(job *j, int rc, const char *why)
{
    j->rc = rc;
    snprintf(j->err, sizeof j->err, "%s", why);
    j->done = 1;
}

/* ---- the backend, in the connection threads */

static int mpi_batch(void *ctx, const tdm_search_query *qs, size_t n, const tdm_search_options *o,
                     tdm_search_result **out, char *err, size_t errlen)
{
    (void)ctx;
    if (o->device >= 0) {
        snprintf(err, errlen, "device = %d: every rank searches its shards on its own devices "
                              "(tandem-mpi serve)", o->device);
        return TDM_ERR_INVALID_ARG;
    }
    job j = {.qs = qs, .n = n, .o = *o, .out = out};
    pthread_mutex_lock(&Q.lock);
    if (Q.closed) {
        fail_job(&j, TDM_ERR_NO_DEVICE, Q.why);
    } else {
        *Q.tail = &j;
        Q.tail = &j.next;
        pthread_cond_signal(&Q.work);
    }
    while (!j.done)
        pthread_cond_wait(&Q.done, &Q.lock);
    pthread_mutex_unlock(&Q.lock);
    if (j.rc != TDM_OK)
        snprintf(err, errlen, "%s", j.err);
    return j.rc;
}

static void mpi_release(void *ctx, tdm_search_result *r)
{
    (void)ctx;
    if (!r)
        return;
    for (size_t h = 0; r->hits && h < r->n; h++)
        free((char *)r->hits[h].name);
    free(r->hits);
    free((char *)r->error);
    free(r);
}

static int mpi_search(void *ctx, const tdm_search_query *q, const tdm_search_options *o,
                      tdm_search_result **out, char *err, size_t errlen)
{
    tdm_search_result *r[1] = {NULL};
    int rc = mpi_batch(ctx, q, 1, o, r, err, errlen);
    if (rc == TDM_OK && r[0]->status != TDM_OK) {
        rc = r[0]->status;
        snprintf(err, errlen, "%s", r[0]->error ? r[0]->error : "search failed");
        mpi_release(ctx, r[0]);
        r[0] = NULL;
    }
    *out = r[0];
    return rc;
}

/* ---- the rounds, in rank 0's main thread */

/* An answer as the server's result (its strings taken). */
static tdm_search_result *to_result(tmpi_answer *a, int alg)
{
    tdm_search_result *r = calloc(1, sizeof *r);
    if (!r || !(r->hits = calloc(a->n ? a->n : 1, sizeof *r->hits))) {
        free(r);
        return NULL;
    }
    r->status = a->status;
    r->error = a->error;
    a->error = NULL;
    r->n = a->n;
    for (uint32_t h = 0; h < a->n; h++) {
        r->hits[h] = a->hits[h];
        a->hits[h].name = NULL;
    }
    r->algorithm = alg;
    r->terms = a->terms; /* the largest of the shards' until tmpi_terms_whole */
    r->device = -1; /* no one device answered: every rank's did (docs/MPI.md) */
    r->first_device = -1;
    return r;
}

/* One request as one round of every rank (two for AND-then-OR). */
static void run_job(tmpi_ctx *c, job *j)
{
    tmpi_query *tq = calloc(j->n ? j->n : 1, sizeof *tq);
    tmpi_answer *a = calloc(j->n ? j->n : 1, sizeof *a);
    double t0 = tdm_cli_now();
    int rc = tq && a ? TDM_OK : TDM_ERR_NOMEM;
    for (size_t i = 0; rc == TDM_OK && i < j->n; i++)
        tq[i] = (tmpi_query){j->qs[i].text, (tdm_search_term *)j->qs[i].terms,
                             j->qs[i].nterms};
    if (rc == TDM_OK && tmpi_search_o(c, tq, j->n, &j->o, a))
        rc = TDM_ERR_NO_DEVICE; /* 503: a rank failed the round (named) */
    for (size_t i = 0; rc == TDM_OK && i < j->n; i++) {
        if (!(j->out[i] = to_result(&a[i], j->o.algorithm)))
            rc = TDM_ERR_NOMEM;
        else if (j->out[i]->status == TDM_OK)
            tmpi_terms_whole(Q.terms, &tq[i], j->out[i]);
    }
    for (size_t i = 0; rc == TDM_OK && i < j->n; i++)
        j->out[i]->seconds = tdm_cli_now() - t0;
    if (rc != TDM_OK)
        for (size_t i = 0; i < j->n; i++)
            mpi_release(NULL, j->out[i]), j->out[i] = NULL;
    for (size_t i = 0; a && i < j->n; i++)
        tmpi_answer_free(&a[i]);
    free(a);
    free(tq);
    pthread_mutex_lock(&Q.lock);
    j->rc = rc;
    if (rc != TDM_OK)
        snprintf(j->err, sizeof j->err, "%s",
                 rc == TDM_ERR_NOMEM ? "out of memory" : tmpi_last_error());
    j->done = 1;
    pthread_cond_broadcast(&Q.done);
    pthread_mutex_unlock(&Q.lock);
}

/* Every request waiting or running fails with `why`; later ones at once. */
static void close_queue(const char *why)
{
    pthread_mutex_lock(&Q.lock);
    Q.closed = 1;
    snprintf(Q.why, sizeof Q.why, "%s", why);
    for (job *j = Q.running; j; j = j->next)
        if (!j->done)
            fail_job(j, TDM_ERR_NO_DEVICE, why);
    for (job *j = Q.head; j; j = j->next)
        fail_job(j, TDM_ERR_NO_DEVICE, why);
    Q.head = NULL;
    Q.tail = &Q.head;
    pthread_cond_broadcast(&Q.done);
    pthread_mutex_unlock(&Q.lock);
}

/* Before the job is aborted (a rank did not answer in time): the requests
 * waiting get their 503 and a moment to be sent. */
static void before_abort(void)
{
    close_queue(tmpi_last_error());
    for (int i = 0; i < 40 && Q.sv; i++) {
        pthread_mutex_lock(&Q.sv->lock);
        unsigned busy = Q.sv->in_flight;
        pthread_mutex_unlock(&Q.sv->lock);
        if (!busy)
            break;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
}

/* Takes what is queued (waiting up to 20 ms for some). */
static job *take(void)
{
    pthread_mutex_lock(&Q.lock);
    if (!Q.head) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000;
        if (ts.tv_nsec >= 1000000000)
            ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&Q.work, &Q.lock, &ts);
    }
    job *j = Q.head;
    Q.running = j;
    Q.head = NULL;
    Q.tail = &Q.head;
    pthread_mutex_unlock(&Q.lock);
    return j;
}

static unsigned in_flight(tdm_serve *sv)
{
    pthread_mutex_lock(&sv->lock);
    unsigned n = sv->in_flight;
    pthread_mutex_unlock(&sv->lock);
    return n;
}

/* A SIGINT or SIGTERM that reached a thread of MPI's own, started by
 * MPI_Init before any mask was set (the others block both, and the main
 * loop takes them with sigtimedwait). */
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

/* Rounds until a signal, then the drain. */
static void loop(tmpi_ctx *c, tdm_serve *sv, const sigset_t *sigs, double drain)
{
    double stop_at = -1;
    for (;;) {
        for (job *j = take(), *next; j; j = next) {
            next = j->next; /* j is its thread's once done */
            run_job(c, j);
        }
        pthread_mutex_lock(&Q.lock);
        Q.running = NULL;
        pthread_mutex_unlock(&Q.lock);
        struct timespec zero = {0, 0};
        int sig = stop_at < 0 ? sigtimedwait(sigs, NULL, &zero) : -1;
        if (stop_at < 0 && sig <= 0 && got_signal)
            sig = got_signal;
        if (sig > 0) {
            atomic_store(&sv->stopping, 1);
            stop_at = tdm_cli_now() + drain;
            fprintf(stderr, "tandem-mpi serve: %s: stopping (waiting up to %.0f s for requests "
                            "in flight)\n", sig == SIGINT ? "SIGINT" : "SIGTERM", drain);
        }
        if (stop_at >= 0 && (in_flight(sv) == 0 || tdm_cli_now() > stop_at))
            break;
    }
}

int tmpi_serve(tmpi_ctx *c)
{
    const tmpi_opts *o = c->o;
    static tdm_serve sv;
    sv.lim = o->lim;
    sigset_t sigs;
    if (tdm_serve_init(&sv, "mpi", &o->serve, &o->so, &sigs))
        return 1;
    if (tmpi_terms_open(c, &Q.terms)) {
        tdm_serve_fini(&sv);
        return 1;
    }
    Q.tail = &Q.head;
    Q.sv = &sv;
    sv.e = c->engine;
    sv.s = c->nmine ? c->sh[0] : NULL; /* /health's lanes, /metrics: rank 0's first shard */
    sv.be = (tdm_serve_backend){.ctx = &sv, .search = mpi_search, .batch = mpi_batch,
                                .release = mpi_release};
    tmpi_before_abort = before_abort;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = tdm_serve_listen(&sv, "mpi", &o->serve, o->prefix);
    if (rc == 0) {
        sv.ready_at = tdm_cli_now();
        atomic_store(&sv.ready, 1);
        fprintf(stderr, "tandem-mpi serve: ready, %u shards on %d ranks; SIGINT or SIGTERM to "
                        "rank 0 (pid %ld) stops it\n", c->nshards, c->size, (long)getpid());
        loop(c, &sv, &sigs, (double)o->serve.drain);
        close_queue("the service is stopping");
        unsigned left = tdm_serve_http_stop(&sv, 1.0);
        if (left)
            rc = tmpi_fail(c, "%u request%s still in flight after --drain were cut off", left,
                           left == 1 ? "" : "s");
        else
            fprintf(stderr, "tandem-mpi serve: stopped\n");
    }
    tmpi_before_abort = NULL;
    tdm_serve_fini(&sv);
    tmpi_terms_close(Q.terms);
    Q.terms = NULL;
    return rc;
}
#else
#include "tmpi.h"

int tmpi_serve(tmpi_ctx *c)
{
    return tmpi_fail(c, "serve: built without libmicrohttpd (libmicrohttpd-dev), as 'tandem "
                        "serve' is");
}
#endif
