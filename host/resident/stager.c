/* Pinned, double-buffered staging of uploads (stager.h). */
#include "stager.h"

#include "common/strutil.h"
#include "runtime/tune_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK ((uint64_t)1 << 20) /* bytes a staging buffer holds: making the pinned buffers is the cost (H200: ~0.7 ms a MB, serialized), not the copies per chunk */
#define WORKERS 4u                 /* threads (and 2 buffers each) at most */
#define WORKERS_MAX TDM_SETTINGS_STAGING_WORKERS_MAX /* TANDEM_STAGING's limit */
#define SLOTS 2u

typedef struct worker {
    struct tdm_stager *s;
    unsigned id;
    pthread_t th;
    int started;
} worker;

struct tdm_stager {
    tdm_device *d;
    cl_command_queue q;     /* the stager's own: a command on d->xfer that
                               waits for `ready` must not hold up the copies */
    tdm_stage_copy *copies;
    size_t n;
    uint64_t chunk, nchunks;
    unsigned nworkers;
    worker w[WORKERS_MAX];
    cl_event ready;         /* the user event (the stager's own reference) */
    atomic_uint live;       /* workers not yet done */
    atomic_int failed;
    pthread_mutex_t mu;     /* guards err and stats */
    tdm_err err;
    tdm_stager_stats stats;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tdm_stager_wanted(const tdm_device *d)
{
    cl_bool unified = CL_TRUE;
    /* the tuning table's (runtime/tune_table.h): GPUs. Oclgrind calls
     * itself a GPU without unified memory, but its runtime is not
     * thread-safe: the workers' concurrent maps and copies corrupted its
     * heap (the kernel tests under it crashed at random); its row says no. */
    if (!tdm_tune_row_of(&d->info)->staging)
        return 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) !=
        CL_SUCCESS)
        return 0;
    return !unified;
}

/* Records the first failure. */
static void fail(struct tdm_stager *s, cl_int rc, const char *what)
{
    pthread_mutex_lock(&s->mu);
    if (!atomic_load(&s->failed)) {
        tdm_cl_fail(&s->err, rc, what);
        tdm_err_append(&s->err, " (pinned staging of an upload to %s)", s->d->info.name);
    }
    atomic_store(&s->failed, 1);
    pthread_mutex_unlock(&s->mu);
}

/* Chunk k of the copies: its copy, offset and size. */
static void chunk_at(const struct tdm_stager *s, uint64_t k, size_t *copy, uint64_t *off,
                     uint64_t *bytes)
{
    size_t c = 0;
    for (;; c++) {
        uint64_t nk = (s->copies[c].bytes + s->chunk - 1) / s->chunk;
        if (k < nk)
            break;
        k -= nk;
    }
    *copy = c;
    *off = k * s->chunk;
    *bytes = s->copies[c].bytes - *off < s->chunk ? s->copies[c].bytes - *off : s->chunk;
}

/* Worker: chunks id, id + nworkers, ... through its two buffers. */
static void *run(void *arg)
{
    worker *w = arg;
    struct tdm_stager *s = w->s;
    cl_mem buf[SLOTS] = {NULL};
    void *host[SLOTS] = {NULL};
    cl_event ev[SLOTS] = {NULL};
    cl_int rc = CL_SUCCESS;
    double t0 = now(), setup = 0, copy = 0, wait = 0;
    for (unsigned k = 0; rc == CL_SUCCESS && k < SLOTS; k++) {
        buf[k] = clCreateBuffer(s->d->ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY,
                                (size_t)s->chunk, NULL, &rc);
        if (rc == CL_SUCCESS)
            host[k] = clEnqueueMapBuffer(s->q, buf[k], CL_TRUE, CL_MAP_WRITE, 0,
                                         (size_t)s->chunk, 0, NULL, NULL, &rc);
    }
    if (rc != CL_SUCCESS)
        fail(s, rc, "a staging buffer");
    setup = now() - t0;
    unsigned slot = 0;
    for (uint64_t k = w->id; rc == CL_SUCCESS && !atomic_load(&s->failed) && k < s->nchunks;
         k += s->nworkers, slot = (slot + 1) % SLOTS) {
        size_t c;
        uint64_t off, bytes;
        chunk_at(s, k, &c, &off, &bytes);
        double t1 = now();
        if (ev[slot]) { /* the buffer's last copy has read it */
            rc = clWaitForEvents(1, &ev[slot]);
            clReleaseEvent(ev[slot]);
            ev[slot] = NULL;
            if (rc != CL_SUCCESS) {
                fail(s, rc, "a staged copy");
                break;
            }
        }
        double t2 = now();
        wait += t2 - t1;
        memcpy(host[slot], (const char *)s->copies[c].src + off, (size_t)bytes);
        copy += now() - t2;
        rc = clEnqueueWriteBuffer(s->q, s->copies[c].dst, CL_FALSE, (size_t)off,
                                  (size_t)bytes, host[slot], 0, NULL, &ev[slot]);
        if (rc == CL_SUCCESS)
            rc = clFlush(s->q);
        if (rc != CL_SUCCESS)
            fail(s, rc, "clEnqueueWriteBuffer");
    }
    for (unsigned k = 0; k < SLOTS; k++) {
        if (ev[k]) {
            if (clWaitForEvents(1, &ev[k]) != CL_SUCCESS)
                fail(s, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "a staged copy");
            clReleaseEvent(ev[k]);
        }
        if (host[k]) {
            cl_event u = NULL;
            if (clEnqueueUnmapMemObject(s->q, buf[k], host[k], 0, NULL, &u) == CL_SUCCESS) {
                clWaitForEvents(1, &u);
                clReleaseEvent(u);
            }
        }
        if (buf[k])
            clReleaseMemObject(buf[k]);
    }
    pthread_mutex_lock(&s->mu);
    s->stats.setup_s = setup > s->stats.setup_s ? setup : s->stats.setup_s;
    s->stats.copy_s += copy;
    s->stats.wait_s += wait;
    pthread_mutex_unlock(&s->mu);
    if (atomic_fetch_sub(&s->live, 1) == 1) /* the last worker out */
        clSetUserEventStatus(s->ready, atomic_load(&s->failed) ? -1 : CL_COMPLETE);
    return NULL;
}

/* TANDEM_STAGING=THREADS[,CHUNK_MB] (measurements; checked at engine
 * open): else WORKERS, CHUNK. */
static void staging(const tdm_device *d, unsigned *workers, uint64_t *chunk)
{
    const tdm_tuning *t = tdm_settings_tuning(d->settings);
    *workers = t->staging_workers ? t->staging_workers : WORKERS;
    *chunk = t->staging_chunk_mb ? (uint64_t)t->staging_chunk_mb << 20 : CHUNK;
}

int tdm_stager_start(tdm_device *d, const tdm_stage_copy *copies, size_t n, cl_event *ready,
                     tdm_stager **out, tdm_err *err)
{
    *ready = NULL;
    *out = NULL;
    unsigned want = 0;
    uint64_t want_chunk = 0;
    staging(d, &want, &want_chunk);
    struct tdm_stager *s = calloc(1, sizeof *s);
    if (!s || !(s->copies = malloc((n ? n : 1) * sizeof *copies))) {
        free(s);
        return tdm_err_set(err, TDM_ERR_NOMEM, "pinned staging: out of memory");
    }
    memcpy(s->copies, copies, n * sizeof *copies);
    s->n = n;
    s->d = d;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += copies[i].bytes;
    s->chunk = total < want_chunk ? (total ? total : 4) : want_chunk;
    for (size_t i = 0; i < n; i++)
        s->nchunks += (copies[i].bytes + s->chunk - 1) / s->chunk;
    s->nworkers = s->nchunks < want ? (unsigned)(s->nchunks ? s->nchunks : 1) : want;
    s->stats.workers = s->nworkers;
    s->stats.chunk = s->chunk;
    pthread_mutex_init(&s->mu, NULL);
    atomic_init(&s->failed, 0);
    atomic_init(&s->live, s->nworkers);
    cl_int rc = CL_SUCCESS;
    int st = tdm_queue_create(d, &s->q, err);
    if (st == TDM_OK)
        s->ready = clCreateUserEvent(d->ctx, &rc);
    if (st != TDM_OK || rc != CL_SUCCESS) {
        if (s->q)
            clReleaseCommandQueue(s->q);
        pthread_mutex_destroy(&s->mu);
        free(s->copies);
        free(s);
        return st != TDM_OK ? st : tdm_cl_fail(err, rc, "clCreateUserEvent (pinned staging)");
    }
    for (unsigned i = 0; i < s->nworkers; i++) {
        s->w[i] = (worker){.s = s, .id = i};
        s->w[i].started = pthread_create(&s->w[i].th, NULL, run, &s->w[i]) == 0;
        if (!s->w[i].started) { /* its chunks are not copied: the upload fails */
            fail(s, CL_OUT_OF_HOST_MEMORY, "a staging thread");
            if (atomic_fetch_sub(&s->live, 1) == 1)
                clSetUserEventStatus(s->ready, -1);
        }
    }
    clRetainEvent(s->ready);
    *ready = s->ready;
    *out = s;
    return TDM_OK;
}

void tdm_stager_stats_get(tdm_stager *s, tdm_stager_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}

int tdm_stager_finish(tdm_stager *s, tdm_err *err)
{
    if (!s)
        return TDM_OK;
    for (unsigned i = 0; i < s->nworkers; i++)
        if (s->w[i].started)
            pthread_join(s->w[i].th, NULL);
    int st = TDM_OK;
    if (atomic_load(&s->failed)) {
        st = s->err.code ? s->err.code : TDM_ERR_OPENCL;
        if (err)
            tdm_err_set(err, st, "%s", tdm_err_msg(&s->err));
    }
    tdm_err_clear(&s->err);
    clReleaseEvent(s->ready);
    clReleaseCommandQueue(s->q);
    pthread_mutex_destroy(&s->mu);
    free(s->copies);
    free(s);
    return st;
}
