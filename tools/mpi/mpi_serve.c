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
 * /health and /metrics ask the main thread for a probe of every rank's
 * shards (mpi_probe.c), run between two requests' rounds, and wait for it
 * at most TMPI_STATUS_WAIT_S (mpi_health.c, mpi_metrics.c say what they
 * answer when it is not done by then).
 *
 * Faults: a rank that fails a round answers that request 503 naming the
 * rank and shard (the job goes on); a rank that stops answering a round
 * or a probe past --rank-timeout fails every request waiting with 503,
 * then the job ends (tmpi_abort); nothing waits for ever. SIGINT or SIGTERM
 * on rank 0 stops taking requests (503), answers those in flight (up to
 * --drain seconds), then stops every rank. */
#ifdef TANDEM_HAVE_MICROHTTPD
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
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
    pthread_cond_t work, done, probed;
    job *head, **tail;
    job *running;    /* taken by the main thread, not yet answered */
    int closed;      /* no more rounds: a job fails at once with `why` */
    char why[1024];
    tdm_serve *sv;
    tmpi_terms *terms; /* the answers' term counts (mpi_terms.c) */
    /* probes for /health and /metrics */
    int probe_want;  /* 1: a probe asked for, 2: with the shards' counters */
    uint64_t probes, stat_probes; /* ended (with counters) */
    tmpi_snap *last, *last_stats;
    char *probe_error; /* the latest probe's failure, NULL after one that ended */
    int phase;       /* TMPI_IDLE, TMPI_ROUND, TMPI_PROBING */
    double phase_at;
    tmpi_counters cnt; /* the broker's, as of its last round or probe */
} Q = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
       .done = PTHREAD_COND_INITIALIZER, .probed = PTHREAD_COND_INITIALIZER};

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

/* What the main thread does now (Q.lock held). */
static void set_phase(int phase)
{
    Q.phase = phase;
    Q.phase_at = tdm_cli_now();
}

/* The broker's counters, for /metrics (Q.lock held). */
static void publish(const tmpi_ctx *c)
{
    Q.cnt.round_queries = c->round_queries;
    Q.cnt.bytes_out = c->bytes_out;
    Q.cnt.bytes_in = c->bytes_in;
    Q.cnt.round_s = c->round_s;
    Q.cnt.merge_s = c->merge_s;
    Q.cnt.rounds = c->rounds; /* rank 0 answers every round with its own shards */
}

/* One request as one round of every rank (two for AND-then-OR). */
static void run_job(tmpi_ctx *c, job *j)
{
    pthread_mutex_lock(&Q.lock);
    set_phase(TMPI_ROUND);
    pthread_mutex_unlock(&Q.lock);
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
    set_phase(TMPI_IDLE);
    Q.cnt.requests++;
    Q.cnt.request_failures += rc != TDM_OK;
    publish(c);
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
    pthread_cond_broadcast(&Q.probed);
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

/* Takes what is queued (waiting up to 20 ms for some, or a probe asked). */
static job *take(void)
{
    pthread_mutex_lock(&Q.lock);
    if (!Q.head && !Q.probe_want) {
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

/* ---- probes, between rounds in the main thread */

/* Runs the probe asked for, if one is. */
static void probe_if_asked(tmpi_ctx *c)
{
    pthread_mutex_lock(&Q.lock);
    int want = Q.probe_want;
    Q.probe_want = 0;
    if (want)
        set_phase(TMPI_PROBING);
    pthread_mutex_unlock(&Q.lock);
    if (!want)
        return;
    tmpi_snap *s = NULL; /* a rank that never answers ends the job in there */
    int rc = tmpi_probe(c, want & 2, &s);
    pthread_mutex_lock(&Q.lock);
    set_phase(TMPI_IDLE);
    free(Q.probe_error);
    Q.probe_error = rc ? strdup(tmpi_last_error()) : NULL;
    if (s && (want & 2)) {
        tmpi_snap_unref(Q.last_stats);
        Q.last_stats = tmpi_snap_ref(s);
    }
    if (s) {
        tmpi_snap_unref(Q.last);
        Q.last = s;
    }
    Q.probes++;
    Q.stat_probes += (want & 2) != 0;
    Q.cnt.probes++;
    publish(c);
    pthread_cond_broadcast(&Q.probed);
    pthread_mutex_unlock(&Q.lock);
}

void tmpi_serve_view(int stats, double wait_s, tmpi_view *v)
{
    memset(v, 0, sizeof *v);
    pthread_mutex_lock(&Q.lock);
    const uint64_t *seq = stats ? &Q.stat_probes : &Q.probes;
    uint64_t seq0 = *seq;
    if (wait_s > 0 && !Q.closed) {
        Q.probe_want |= stats ? 2 : 1;
        pthread_cond_signal(&Q.work);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double t = (double)until.tv_sec + until.tv_nsec * 1e-9 + wait_s;
        until.tv_sec = (time_t)t;
        until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
        while (!Q.closed && *seq == seq0 &&
               pthread_cond_timedwait(&Q.probed, &Q.lock, &until) != ETIMEDOUT)
            ;
    }
    v->fresh = *seq != seq0;
    v->last = tmpi_snap_ref(Q.last);
    v->last_stats = tmpi_snap_ref(Q.last_stats);
    v->probe_error = Q.probe_error ? strdup(Q.probe_error) : NULL;
    v->phase = Q.phase;
    v->phase_s = tdm_cli_now() - Q.phase_at;
    v->closed = Q.closed;
    snprintf(v->why, sizeof v->why, "%s", Q.why);
    v->cnt = Q.cnt;
    pthread_mutex_unlock(&Q.lock);
}

void tmpi_view_free(tmpi_view *v)
{
    tmpi_snap_unref(v->last);
    tmpi_snap_unref(v->last_stats);
    free(v->probe_error);
    memset(v, 0, sizeof *v);
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
            probe_if_asked(c); /* /health waits at most one request's round */
            run_job(c, j);
        }
        probe_if_asked(c);
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
    sv.s = NULL; /* /health and /metrics cover every rank's shards: the hooks */
    sv.be = (tdm_serve_backend){.ctx = c, .search = mpi_search, .batch = mpi_batch,
                                .release = mpi_release, .health = tmpi_health,
                                .shards = tmpi_metrics_shards, .metrics = tmpi_metrics_text};
    tmpi_before_abort = before_abort;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = tdm_serve_listen(&sv, "mpi", &o->serve, o->prefix);
    if (rc == 0) {
        pthread_mutex_lock(&Q.lock); /* /health's first answer without waiting for one */
        Q.probe_want = 3;
        pthread_mutex_unlock(&Q.lock);
        probe_if_asked(c);
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
    pthread_mutex_lock(&Q.lock);
    tmpi_snap_unref(Q.last);
    tmpi_snap_unref(Q.last_stats);
    free(Q.probe_error);
    Q.last = Q.last_stats = NULL;
    Q.probe_error = NULL;
    pthread_mutex_unlock(&Q.lock);
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
