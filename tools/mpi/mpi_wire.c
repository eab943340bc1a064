/* tandem-mpi's messages: rank 0 sends each rank one message a step and
 * receives one back, point to point, polling with a deadline so that it
 * can name the ranks that did not answer (a collective could not), and
 * abort the job rather than wait for ever. The other ranks wait for rank 0
 * without a deadline: if it dies, mpirun ends them. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cleanup.h"
#include "tmpi.h"

enum { TAG_DOWN = 11, TAG_UP = 12 };

static double now(void)
{
    return MPI_Wtime();
}

static void nap(void)
{
    struct timespec ts = {0, 50000}; /* 50 us: a batch costs milliseconds */
    nanosleep(&ts, NULL);
}

void (*tmpi_before_abort)(void);

void tmpi_abort(tmpi_ctx *c, int code)
{
    if (tmpi_before_abort)
        tmpi_before_abort();
    fflush(stdout);
    fflush(stderr);
    tdm_cleanup_unlink_all(); /* an unfinished RUN's temporary file */
    MPI_Abort(MPI_COMM_WORLD, code);
    (void)c;
    exit(code); /* not reached */
}

static int mpi_fail(tmpi_ctx *c, int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    s[len < (int)sizeof s ? len : (int)sizeof s - 1] = 0;
    tmpi_fail(c, "MPI %s failed on rank %d: %s", what, c->rank, s);
    return -1;
}

/* Names the ranks whose flag is 0 in a message after `what`. */
static void name_missing(tmpi_ctx *c, const char *what, const unsigned char *done)
{
    char list[512] = "";
    size_t at = 0;
    int count = 0;
    for (int r = 1; r < c->size; r++) {
        if (done[r])
            continue;
        if (count++ < 16 && at < sizeof list - 32)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%d", at ? ", " : "", r);
    }
    tmpi_fail(c, "rank%s %s%s %s within %.0f s (%s); stopping every rank",
              count == 1 ? "" : "s", list, count > 16 ? ", ..." : "", what, c->o->timeout_s,
              strcmp(c->o->mode, "serve") ? "--timeout" : "--rank-timeout");
}

int tmpi_recv(tmpi_ctx *c, char **buf, size_t *n)
{
    MPI_Status st;
    int cnt = 0;
    *buf = NULL;
    int rc = MPI_Probe(0, TAG_DOWN, MPI_COMM_WORLD, &st);
    if (rc == MPI_SUCCESS)
        rc = MPI_Get_count(&st, MPI_BYTE, &cnt);
    if (rc == MPI_SUCCESS && !(*buf = malloc(cnt ? (size_t)cnt : 1)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Recv(*buf, cnt, MPI_BYTE, 0, TAG_DOWN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    *n = (size_t)cnt;
    if (rc == MPI_SUCCESS)
        return 0;
    free(*buf);
    *buf = NULL;
    return mpi_fail(c, rc, "receive");
}

int tmpi_bcast(tmpi_ctx *c, const void *buf, size_t n, double timeout_s)
{
    if (c->size == 1)
        return 0;
    MPI_Request *rq = calloc((size_t)c->size, sizeof *rq);
    unsigned char *done = calloc((size_t)c->size, 1);
    int rc = rq && done ? MPI_SUCCESS : MPI_ERR_NO_MEM, left = c->size - 1;
    for (int r = 1; rc == MPI_SUCCESS && r < c->size; r++)
        rc = MPI_Isend((void *)buf, (int)n, MPI_BYTE, r, TAG_DOWN, MPI_COMM_WORLD, &rq[r]);
    double end = now() + timeout_s;
    while (rc == MPI_SUCCESS && left > 0) {
        for (int r = 1; rc == MPI_SUCCESS && r < c->size; r++) {
            int flag = 0;
            if (!done[r] && (rc = MPI_Test(&rq[r], &flag, MPI_STATUS_IGNORE)) == MPI_SUCCESS &&
                flag) {
                done[r] = 1;
                left--;
            }
        }
        if (rc == MPI_SUCCESS && left > 0 && now() > end) {
            name_missing(c, "did not take the next message", done);
            tmpi_abort(c, 1);
        }
        if (left > 0)
            nap();
    }
    if (rc == MPI_SUCCESS)
        c->bytes_out += n * (size_t)(c->size - 1);
    free(rq);
    free(done);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(c, rc, "send");
}

void tmpi_expect_all(tmpi_ctx *c)
{
    for (int r = 1; r < c->size && r < TMPI_MAX_SHARDS; r++)
        atomic_store(&c->waiting[r], 1);
}

/* No rank is waited for any more (the exchange is over). */
static void expect_none(tmpi_ctx *c)
{
    for (int r = 1; r < c->size && r < TMPI_MAX_SHARDS; r++)
        atomic_store(&c->waiting[r], 0);
}

int tmpi_gather(tmpi_ctx *c, const void *buf, size_t len, double timeout_s, char **all,
                size_t *lens, size_t *offs)
{
    if (c->rank != 0) {
        int rc = MPI_Send(buf, (int)len, MPI_BYTE, 0, TAG_UP, MPI_COMM_WORLD);
        return rc == MPI_SUCCESS ? 0 : mpi_fail(c, rc, "send");
    }
    char **part = calloc((size_t)c->size, sizeof *part);
    unsigned char *done = calloc((size_t)c->size, 1);
    int rc = part && done ? MPI_SUCCESS : MPI_ERR_NO_MEM, left = c->size - 1;
    lens[0] = len;
    double end = now() + timeout_s;
    while (rc == MPI_SUCCESS && left > 0) {
        for (int r = 1; rc == MPI_SUCCESS && r < c->size; r++) {
            int flag = 0, cnt = 0;
            MPI_Status st;
            if (done[r] || (rc = MPI_Iprobe(r, TAG_UP, MPI_COMM_WORLD, &flag, &st)) ||
                !flag)
                continue;
            if ((rc = MPI_Get_count(&st, MPI_BYTE, &cnt)) != MPI_SUCCESS)
                break;
            if (!(part[r] = malloc(cnt ? (size_t)cnt : 1))) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            rc = MPI_Recv(part[r], cnt, MPI_BYTE, r, TAG_UP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            lens[r] = (size_t)cnt;
            done[r] = 1;
            atomic_store(&c->waiting[r], 0);
            left--;
        }
        if (rc == MPI_SUCCESS && left > 0 && now() > end) {
            name_missing(c, "did not answer", done);
            tmpi_abort(c, 1);
        }
        if (left > 0)
            nap();
    }
    expect_none(c);
    size_t total = 0;
    for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++) {
        offs[r] = total;
        total += lens[r];
    }
    *all = rc == MPI_SUCCESS ? malloc(total ? total : 1) : NULL;
    if (rc == MPI_SUCCESS && !*all)
        rc = MPI_ERR_NO_MEM;
    for (int r = 0; rc == MPI_SUCCESS && r < c->size; r++)
        memcpy(*all + offs[r], r ? part[r] : buf, lens[r]);
    if (rc == MPI_SUCCESS)
        c->bytes_in += total - len;
    for (int r = 0; part && r < c->size; r++)
        free(part[r]);
    free(part);
    free(done);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(c, rc, "receive");
}

/* ---- packing */

void tmpi_put(tmpi_buf *b, const void *v, size_t n)
{
    if (b->nomem)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->nomem = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n) /* v may be NULL for nothing (an empty list) */
        memcpy(b->p + b->n, v, n);
    b->n += n;
}

void tmpi_put_u32(tmpi_buf *b, uint32_t v)
{
    tmpi_put(b, &v, sizeof v);
}

void tmpi_put_str(tmpi_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    tmpi_put_u32(b, (uint32_t)n);
    tmpi_put(b, s ? s : "", n);
}

void tmpi_get(tmpi_rd *r, void *v, size_t n)
{
    if (r->bad || n > r->n - r->at) {
        r->bad = 1;
        memset(v, 0, n);
        return;
    }
    memcpy(v, r->p + r->at, n);
    r->at += n;
}

uint32_t tmpi_get_u32(tmpi_rd *r)
{
    uint32_t v;
    tmpi_get(r, &v, sizeof v);
    return v;
}

char *tmpi_get_str(tmpi_rd *r)
{
    uint32_t n = tmpi_get_u32(r);
    if (r->bad || n > r->n - r->at) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, r->p + r->at, n);
    s[n] = 0;
    r->at += n;
    return s;
}
