/* Many queries in flight (qrun.h): a pool of sender threads over a ring of
 * answer slots, delivered in query order by the calling thread. */
#include "qrun.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct slot {
    tdm_search_result *r; /* owned */
    char *own;            /* an error message we copied (owned), or NULL */
    const char *error;
    int status;
    double seconds, t_done;
    uint32_t calls_batch;
    int ready;
} slot;

/* What one sender needs besides the job: its buffers for a batch call. */
typedef struct sender {
    tdm_search_query *q;
    tdm_search_result **res;
} sender;

static void slot_clear(slot *s)
{
    tdm_search_result_free(s->r);
    free(s->own);
    memset(s, 0, sizeof *s);
}

/* The failure of a call, copied from this thread's detail. */
static void slot_fail(slot *s, int rc)
{
    s->status = rc;
    s->own = strdup(tdm_last_error());
    s->error = s->own ? s->own : "out of memory";
}

static int one(const tdm_qr_job *j, const tdm_qr_query *q, tdm_search_result **r)
{
    if (q->text)
        return tdm_search_text(j->s, q->text, j->opts, r);
    return tdm_search_terms(j->s, q->terms, q->nterms, j->opts, r);
}

static void send_single(const tdm_qr_job *j, slot *s, size_t i)
{
    double t0 = tdm_cli_now();
    int rc = one(j, &j->q[i], &s->r);
    s->t_done = tdm_cli_now();
    s->seconds = s->t_done - t0;
    s->calls_batch = 1;
    if (rc != TDM_OK)
        slot_fail(s, rc);
}

/* One tdm_search_batch call for queries [a, a + c); slots s[0..c). */
static void send_batch(const tdm_qr_job *j, sender *w, slot **s, size_t a, size_t c)
{
    for (size_t i = 0; i < c; i++)
        w->q[i] = (tdm_search_query){j->q[a + i].text, j->q[a + i].terms, j->q[a + i].nterms};
    double t0 = tdm_cli_now();
    int rc = tdm_search_batch(j->s, w->q, c, j->opts, w->res);
    double t1 = tdm_cli_now();
    for (size_t i = 0; i < c; i++) {
        s[i]->seconds = t1 - t0;
        s[i]->t_done = t1;
        s[i]->calls_batch = (uint32_t)c;
        if (rc != TDM_OK) { /* the whole call failed: every query says why */
            slot_fail(s[i], rc);
            continue;
        }
        s[i]->r = w->res[i];
        s[i]->status = w->res[i]->status;
        s[i]->error = w->res[i]->error;
        if (s[i]->status != TDM_OK && !s[i]->error)
            s[i]->error = "failed";
    }
}

/* Queries [a, a + c) into their slots. */
static void send_chunk(const tdm_qr_job *j, sender *w, slot **s, size_t a, size_t c)
{
    if (j->batch > 0) {
        send_batch(j, w, s, a, c);
        return;
    }
    for (size_t i = 0; i < c; i++)
        send_single(j, s[i], a + i);
}

static int deliver(const tdm_qr_job *j, size_t i, slot *s)
{
    tdm_qr_answer a = {s->status == TDM_OK ? s->r : NULL, s->status, s->error, s->seconds,
                       s->t_done, s->calls_batch};
    int stop = j->sink(j->ctx, i, &a);
    slot_clear(s);
    return stop;
}

static int sender_init(sender *w, size_t chunk)
{
    memset(w, 0, sizeof *w);
    w->res = calloc(chunk, sizeof *w->res);
    w->q = calloc(chunk, sizeof *w->q);
    return w->res && w->q ? 0 : -1;
}

static void sender_free(sender *w)
{
    free(w->q);
    free(w->res);
}

/* ---- one thread: the caller sends and delivers */

static int run_inline(const tdm_qr_job *j, size_t chunk, size_t *delivered)
{
    sender w = {0};
    slot *s = calloc(chunk, sizeof *s);
    slot **sp = calloc(chunk, sizeof *sp);
    if (!s || !sp || sender_init(&w, chunk)) { /* sender_free takes a zeroed sender */
        free(s);
        free(sp);
        sender_free(&w);
        return -1;
    }
    for (size_t i = 0; i < chunk; i++)
        sp[i] = &s[i];
    int stop = 0;
    for (size_t a = 0; a < j->n && !stop; a += chunk) {
        size_t c = j->n - a < chunk ? j->n - a : chunk;
        send_chunk(j, &w, sp, a, c);
        for (size_t i = 0; i < c; i++) {
            if (!stop) {
                stop = deliver(j, a + i, &s[i]);
                ++*delivered;
            } else {
                slot_clear(&s[i]);
            }
        }
    }
    sender_free(&w);
    free(s);
    free(sp);
    return 0;
}

/* ---- several threads over a ring of slots */

typedef struct pool {
    const tdm_qr_job *j;
    slot *ring;           /* [window]; query i in ring[i % window] */
    size_t chunk, window;
    pthread_mutex_t mu;
    pthread_cond_t space, ready;
    size_t claim;         /* next query to send */
    size_t consumed;      /* queries delivered */
    int stop;
} pool;

typedef struct worker {
    pool *p;
    sender w;
    slot **sp;            /* [chunk] */
} worker;

static void *work(void *arg)
{
    worker *k = arg;
    pool *p = k->p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        size_t c = 0;
        while (!p->stop && p->claim < p->j->n) {
            c = p->j->n - p->claim < p->chunk ? p->j->n - p->claim : p->chunk;
            if (p->claim + c <= p->consumed + p->window)
                break;
            pthread_cond_wait(&p->space, &p->mu);
        }
        if (p->stop || p->claim >= p->j->n)
            break;
        size_t a = p->claim;
        p->claim += c;
        pthread_mutex_unlock(&p->mu);
        for (size_t i = 0; i < c; i++)
            k->sp[i] = &p->ring[(a + i) % p->window];
        send_chunk(p->j, &k->w, k->sp, a, c);
        pthread_mutex_lock(&p->mu);
        for (size_t i = 0; i < c; i++)
            k->sp[i]->ready = 1;
        pthread_cond_broadcast(&p->ready);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The caller's side: each answer in order as it is ready. */
static void consume(pool *p, size_t *delivered)
{
    for (size_t i = 0; i < p->j->n; i++) {
        slot *s = &p->ring[i % p->window];
        pthread_mutex_lock(&p->mu);
        while (!s->ready)
            pthread_cond_wait(&p->ready, &p->mu);
        pthread_mutex_unlock(&p->mu);
        int stop = deliver(p->j, i, s); /* clears the slot */
        ++*delivered;
        pthread_mutex_lock(&p->mu);
        p->consumed = i + 1;
        p->stop |= stop;
        pthread_cond_broadcast(&p->space);
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return;
    }
}

static int run_pool(const tdm_qr_job *j, const char *cmd, size_t chunk, size_t *delivered)
{
    unsigned nt = j->threads;
    pool p = {j, NULL, chunk, chunk * nt * 2, PTHREAD_MUTEX_INITIALIZER,
              PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    p.ring = calloc(p.window, sizeof *p.ring);
    worker *k = calloc(nt, sizeof *k);
    pthread_t *th = calloc(nt, sizeof *th);
    unsigned started = 0;
    int rc = p.ring && k && th ? 0 : -1;
    for (unsigned t = 0; rc == 0 && t < nt; t++) {
        k[t].p = &p;
        if (sender_init(&k[t].w, chunk) || !(k[t].sp = calloc(chunk, sizeof *k[t].sp)) ||
            pthread_create(&th[t], NULL, work, &k[t]) != 0) {
            rc = -1;
            break;
        }
        started++;
    }
    if (rc == 0) {
        consume(&p, delivered);
    } else {
        pthread_mutex_lock(&p.mu);
        p.stop = 1;
        pthread_cond_broadcast(&p.space);
        pthread_mutex_unlock(&p.mu);
        fprintf(stderr, "tandem %s: cannot start %u sender threads\n", cmd, nt);
    }
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    for (size_t i = 0; p.ring && i < p.window; i++) /* answers sent but not delivered */
        slot_clear(&p.ring[i]);
    for (unsigned t = 0; k && t < nt; t++) {
        sender_free(&k[t].w);
        free(k[t].sp);
    }
    free(k);
    free(th);
    free(p.ring);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.space);
    pthread_cond_destroy(&p.ready);
    return rc;
}

int tdm_qr_run(const tdm_qr_job *j, const char *cmd, size_t *delivered)
{
    size_t dummy = 0;
    if (!delivered)
        delivered = &dummy;
    *delivered = 0;
    size_t chunk = j->batch > 0 ? j->batch : 1;
    if (j->n == 0)
        return 0;
    if (chunk > j->n)
        chunk = j->n;
    int rc = j->threads <= 1 ? run_inline(j, chunk, delivered)
                             : run_pool(j, cmd, chunk, delivered);
    if (rc && j->threads <= 1)
        fprintf(stderr, "tandem %s: out of memory\n", cmd);
    return rc;
}
