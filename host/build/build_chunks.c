/* The builder's threaded first phase: chunks of documents, inverted by
 * workers into run files, delivered in docid order (build_chunks.h). */
#include "build_chunks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "invert.h"
#include "runs.h"
#include "tandem.h"
#include "text/tokenize.h"
#include "vector.h"

enum { FREE, FILLING, READY, BUSY, DONE };

typedef struct doc {
    size_t name, text, len;    /* offsets into the chunk's bytes; text length */
    uint32_t doclen;
} doc;

typedef struct chunk {
    int state;
    uint64_t seq;
    uint32_t doc0;
    char *bytes;
    size_t blen, bcap;
    doc *docs;
    size_t ndocs, dcap;
    char **runs;
    size_t nruns, rcap;
    int rc;
    tdm_err err;
} chunk;

typedef struct worker {
    struct tdm_chunker *c;
    tdm_tokenizer *tok;
    tdm_inverter *inv;
    uint32_t doc, doclen;
    pthread_t tid;
    int started;
} worker;

struct tdm_chunker {
    tdm_chunker_config cfg;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    int stop;
    chunk *chunks;             /* threads + 1 */
    size_t nchunks;
    chunk *cur;                /* being filled; NULL before the first document */
    uint64_t next_seq, next_deliver;
    uint32_t next_doc;
    int full;                  /* more than 2^32-1 documents */
    worker *w;
};

/* ---- workers */

static int on_token(void *user, const char *term, size_t len)
{
    worker *w = user;
    if (tdm_inverter_add(w->inv, term, len, w->doc) != TDM_OK)
        return TDM_ERR_NOMEM;
    w->doclen++;
    return 0;
}

static int to_run(void *user, const char *term, size_t len, const uint32_t *docids,
                  const uint32_t *freqs, size_t n)
{
    void **ctx = user;
    return tdm_run_add(ctx[0], term, len, docids, freqs, n, ctx[1]);
}

static int add_path(chunk *k, char *path)
{
    if (k->nruns == k->rcap) {
        size_t cap = k->rcap ? 2 * k->rcap : 4;
        char **r = realloc(k->runs, cap * sizeof *r);
        if (!r)
            return -1;
        k->runs = r;
        k->rcap = cap;
    }
    k->runs[k->nruns++] = path;
    return 0;
}

static int shrink(worker *w, chunk *k);

/* The worker's postings as the chunk's next run file. */
static int write_run(worker *w, chunk *k)
{
    tdm_chunker *c = w->c;
    pthread_mutex_lock(&c->lock);
    char *path = c->cfg.new_run(c->cfg.user);
    pthread_mutex_unlock(&c->lock);
    if (!path || add_path(k, path)) {
        if (path) {
            tdm_cleanup_remove(path);
            free(path);
        }
        return tdm_err_set(&k->err, TDM_ERR_NOMEM, "out of memory");
    }
    tdm_runwriter *rw;
    int rc = tdm_run_create(path, &rw, &k->err);
    if (rc)
        return rc;
    void *ctx[2] = {rw, &k->err};
    rc = tdm_inverter_drain(w->inv, to_run, ctx);
    int rc2 = tdm_run_close(rw, &k->err);
    if (rc == TDM_ERR_NOMEM)
        tdm_err_set(&k->err, rc, "out of memory writing %s", path);
    return rc ? rc : rc2 ? rc2 : shrink(w, k);
}

static int process(worker *w, chunk *k)
{
    for (size_t i = 0; i < k->ndocs; i++) {
        doc *d = &k->docs[i];
        w->doc = k->doc0 + (uint32_t)i;
        w->doclen = 0;
        int rc = w->c->cfg.vector ? tdm_vector_invert(w->inv, k->bytes + d->text, d->len,
                                                      w->doc, &w->doclen)
                 : tdm_tokenize(w->tok, k->bytes + d->text, d->len, on_token, w)
                     ? TDM_ERR_NOMEM : TDM_OK;
        if (rc)
            return tdm_err_set(&k->err, rc, rc == TDM_ERR_LIMIT
                               ? "document %u: its impacts add up past 2^32 - 1"
                               : "out of memory inverting document %u", w->doc);
        d->doclen = w->doclen;
        if (tdm_inverter_bytes(w->inv) > w->c->cfg.worker_budget) {
            int rc = write_run(w, k);
            if (rc)
                return rc;
        }
    }
    return tdm_inverter_terms(w->inv) ? write_run(w, k) : TDM_OK;
}

/* A drained inverter keeps its table and arrays; where they alone take half
 * the budget, it starts afresh, or every document would make a run. */
static int shrink(worker *w, chunk *k)
{
    if (tdm_inverter_bytes(w->inv) <= w->c->cfg.worker_budget / 2)
        return TDM_OK;
    tdm_inverter_free(w->inv);
    w->inv = NULL;
    return tdm_inverter_new(&w->inv, &k->err);
}

/* The ready chunk of the lowest sequence number, or NULL. */
static chunk *next_ready(tdm_chunker *c)
{
    chunk *best = NULL;
    for (size_t i = 0; i < c->nchunks; i++)
        if (c->chunks[i].state == READY && (!best || c->chunks[i].seq < best->seq))
            best = &c->chunks[i];
    return best;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    tdm_chunker *c = w->c;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        chunk *k;
        while (!c->stop && !(k = next_ready(c)))
            pthread_cond_wait(&c->work, &c->lock);
        if (c->stop)
            break;
        k->state = BUSY;
        pthread_mutex_unlock(&c->lock);
        int rc = process(w, k);
        pthread_mutex_lock(&c->lock);
        k->rc = rc;
        k->state = DONE;
        pthread_cond_broadcast(&c->done);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* ---- the caller's side */

static void drop_runs(chunk *k)
{
    for (size_t i = 0; i < k->nruns; i++) {
        unlink(k->runs[i]);
        tdm_cleanup_remove(k->runs[i]);
        free(k->runs[i]);
    }
    k->nruns = 0;
}

/* Hands a done chunk's documents and runs to the caller; frees its slot. */
static int deliver(tdm_chunker *c, chunk *k, tdm_err *err)
{
    int rc = k->rc;
    if (rc)
        tdm_err_copy(err, &k->err);
    for (size_t i = 0; rc == TDM_OK && i < k->ndocs; i++)
        rc = c->cfg.on_doc(c->cfg.user, k->docs[i].doclen, k->bytes + k->docs[i].name, err);
    size_t i = 0;
    for (; rc == TDM_OK && i < k->nruns; i++) { /* the caller's now, even on failure */
        char *path = k->runs[i];
        k->runs[i] = NULL;
        rc = c->cfg.on_run(c->cfg.user, path, err);
    }
    for (size_t j = i; j < k->nruns; j++) { /* not delivered after a failure */
        unlink(k->runs[j]);
        tdm_cleanup_remove(k->runs[j]);
        free(k->runs[j]);
    }
    k->nruns = 0;
    k->blen = k->ndocs = 0;
    k->rc = 0;
    tdm_err_clear(&k->err);
    pthread_mutex_lock(&c->lock);   /* workers scan the states */
    k->state = FREE;
    pthread_mutex_unlock(&c->lock);
    c->next_deliver++;
    return rc;
}

/* Delivers done chunks in order; with `wait`, blocks until the next one is
 * done (if any is out). */
static int deliver_ready(tdm_chunker *c, int wait, tdm_err *err)
{
    for (;;) {
        chunk *k = NULL;
        int done = 0;
        pthread_mutex_lock(&c->lock);
        for (;;) {
            k = NULL;
            for (size_t i = 0; i < c->nchunks; i++)
                if (c->chunks[i].seq == c->next_deliver &&
                    (c->chunks[i].state == DONE || c->chunks[i].state == READY ||
                     c->chunks[i].state == BUSY))
                    k = &c->chunks[i];
            done = k && k->state == DONE;
            if (!k || done || !wait)
                break;
            pthread_cond_wait(&c->done, &c->lock);
        }
        pthread_mutex_unlock(&c->lock);
        if (!done)
            return TDM_OK;
        int rc = deliver(c, k, err);
        if (rc)
            return rc;
        wait = 0;
    }
}

static void dispatch(tdm_chunker *c)
{
    pthread_mutex_lock(&c->lock);
    c->cur->state = READY;
    pthread_cond_signal(&c->work);
    pthread_mutex_unlock(&c->lock);
    c->cur = NULL;
}

/* A free chunk to fill, delivering (and waiting) as needed. */
static int take_free(tdm_chunker *c, tdm_err *err)
{
    for (;;) {
        int rc = deliver_ready(c, 0, err);
        if (rc)
            return rc;
        pthread_mutex_lock(&c->lock);   /* workers scan the states */
        for (size_t i = 0; i < c->nchunks && !c->cur; i++)
            if (c->chunks[i].state == FREE) {
                c->cur = &c->chunks[i];
                c->cur->state = FILLING;
                c->cur->seq = c->next_seq++;
                c->cur->doc0 = c->next_doc;
            }
        pthread_mutex_unlock(&c->lock);
        if (c->cur)
            return TDM_OK;
        rc = deliver_ready(c, 1, err);
        if (rc)
            return rc;
    }
}

/* Appends to the chunk's bytes; growth stops at the chunk size (plus the
 * document that passes it), not at the next power of two. */
static int put_bytes(chunk *k, const char *p, size_t n, int nul, size_t limit)
{
    size_t need = k->blen + n + 1;
    if (need > k->bcap) {
        size_t cap = k->bcap ? 2 * k->bcap : 1 << 16;
        if (cap > limit)
            cap = limit;
        if (cap < need)
            cap = need;
        char *q = realloc(k->bytes, cap);
        if (!q)
            return -1;
        k->bytes = q;
        k->bcap = cap;
    }
    memcpy(k->bytes + k->blen, p, n);
    k->blen += n;
    if (nul)
        k->bytes[k->blen++] = '\0';
    return 0;
}

int tdm_chunker_add(tdm_chunker *c, const char *name, const char *text, size_t len,
                    tdm_err *err)
{
    if (c->full)
        return tdm_err_set(err, TDM_ERR_LIMIT, "more than 2^32-1 documents");
    if (c->cur && c->cur->ndocs && c->cur->blen + len > c->cfg.chunk_bytes)
        dispatch(c);
    int rc = c->cur ? TDM_OK : take_free(c, err);
    if (rc)
        return rc;
    chunk *k = c->cur;
    if (k->ndocs == k->dcap) {
        size_t cap = k->dcap ? 2 * k->dcap : 1024;
        doc *d = realloc(k->docs, cap * sizeof *d);
        if (!d)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        k->docs = d;
        k->dcap = cap;
    }
    doc *d = &k->docs[k->ndocs];
    d->name = k->blen;
    if (put_bytes(k, name, strlen(name), 1, c->cfg.chunk_bytes))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    d->text = k->blen;
    d->len = len;
    if (put_bytes(k, text, len, 0, c->cfg.chunk_bytes))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    k->ndocs++;
    if (++c->next_doc == UINT32_MAX)
        c->full = 1;
    return TDM_OK;
}

int tdm_chunker_finish(tdm_chunker *c, tdm_err *err)
{
    if (c->cur && c->cur->seq == 0) { /* everything in one chunk: no runs */
        chunk *k = c->cur;
        int rc = TDM_OK;
        for (size_t i = 0; rc == TDM_OK && i < k->ndocs; i++)
            rc = c->cfg.direct(c->cfg.user, k->bytes + k->docs[i].name, k->bytes + k->docs[i].text,
                               k->docs[i].len, err);
        pthread_mutex_lock(&c->lock);
        k->state = FREE;
        pthread_mutex_unlock(&c->lock);
        c->cur = NULL;
        return rc;
    }
    if (c->cur)
        dispatch(c);
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int out = 0;
        for (size_t i = 0; i < c->nchunks; i++)
            out |= c->chunks[i].state != FREE;
        pthread_mutex_unlock(&c->lock);
        if (!out)
            return TDM_OK;
        int rc = deliver_ready(c, 1, err);
        if (rc)
            return rc;
    }
}

int tdm_chunker_open(const tdm_chunker_config *cfg, tdm_chunker **out, tdm_err *err)
{
    *out = NULL;
    tdm_chunker *c = calloc(1, sizeof *c);
    if (!c)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    c->cfg = *cfg;
    if (c->cfg.threads < 1)
        c->cfg.threads = 1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->done, NULL);
    c->nchunks = c->cfg.threads + 1;
    c->chunks = calloc(c->nchunks, sizeof *c->chunks);
    c->w = calloc(c->cfg.threads, sizeof *c->w);
    *out = c;
    if (!c->chunks || !c->w)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (unsigned i = 0; i < c->cfg.threads; i++) {
        worker *w = &c->w[i];
        w->c = c;
        int rc = tdm_tokenizer_open(cfg->stemmer, cfg->stopwords, cfg->nstopwords, &w->tok, err);
        if (!rc)
            rc = tdm_inverter_new(&w->inv, err);
        if (rc)
            return rc;
        if (pthread_create(&w->tid, NULL, worker_main, w) != 0)
            return tdm_err_set(err, TDM_ERR_NOMEM, "cannot start build thread %u of %u", i + 1,
                               c->cfg.threads);
        w->started = 1;
    }
    return TDM_OK;
}

void tdm_chunker_free(tdm_chunker *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->stop = 1;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->lock);
    for (unsigned i = 0; c->w && i < c->cfg.threads; i++) {
        if (c->w[i].started)
            pthread_join(c->w[i].tid, NULL);
        tdm_tokenizer_free(c->w[i].tok);
        tdm_inverter_free(c->w[i].inv);
    }
    for (size_t i = 0; c->chunks && i < c->nchunks; i++) {
        chunk *k = &c->chunks[i];
        drop_runs(k);
        free(k->runs);
        free(k->bytes);
        free(k->docs);
        tdm_err_clear(&k->err);
    }
    pthread_cond_destroy(&c->work);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->lock);
    free(c->chunks);
    free(c->w);
    free(c);
}
