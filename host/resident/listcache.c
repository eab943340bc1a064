/* The list cache of a resident index (listcache.h): residency table, first
 * fit placement, LRU eviction by bytes, admission by benefit, pins. */
#include "listcache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/format.h"

/* A resident list's place, in the offset order. */
typedef struct span_at {
    uint32_t off, words;
    int32_t entry;
} span_at;

typedef struct entry {
    uint32_t list, off, words, pins;
    int32_t prev, next;  /* LRU chain (head: evicted first); free chain in `next` */
    uint64_t seq;        /* order of its upload */
    cl_event ready;      /* its descriptor's write (retained) */
} entry;

struct tdm_listcache_hold {
    tdm_listcache *c;
    uint32_t *lists;     /* pinned, distinct */
    size_t n;
    cl_uint4 *desc;      /* what this hold's descriptor writes read */
    size_t ndesc, capdesc;
    cl_event last;       /* this hold's last upload */
    struct tdm_listcache_hold *next_done;
};

struct tdm_listcache {
    tdm_device *d;
    const tdm_ireader *r;
    cl_command_queue q;          /* the cache's own in-order queue: its copies
                                    never wait behind another call's download
                                    (which waits for that call's kernels) */
    cl_mem arena, dlists;
    uint32_t cap;                /* words */
    const tdm_idx_list *idx;     /* the file's descriptors */
    const uint32_t *src;         /* the file's arena */
    uint64_t nlists, src_words;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int32_t *slot;               /* [nlists]: entry, -1 when not in the cache */
    uint32_t *freq;              /* [nlists]: acquires that named the list */
    entry *e;
    uint32_t ne, ecap;
    int32_t efree, head, tail;
    span_at *byoff;              /* resident entries by offset (contiguous:
                                    the hole search reads only this) */
    uint32_t nres;
    uint64_t used, pins, seq;
    tdm_listcache_stats st;
    _Atomic(tdm_listcache_hold *) done; /* unholds whose events completed */
    atomic_int callbacks;        /* unholds waiting for their events */
};

static const cl_uint4 zero_desc; /* what an evicted list's descriptor becomes */

/* A non-blocking copy to the device on the cache's queue. */
static int put(tdm_listcache *c, cl_mem dst, size_t off, size_t bytes, const void *src,
               cl_event *ev, tdm_err *err)
{
    cl_int rc = clEnqueueWriteBuffer(c->q, dst, CL_FALSE, off, bytes, src, 0, NULL, ev);
    if (rc == CL_SUCCESS)
        return TDM_OK;
    tdm_cl_fail(err, rc, "clEnqueueWriteBuffer");
    tdm_err_append(err, " (list cache: %zu bytes to %s)", bytes, c->d->info.name);
    return err->code;
}

/* Words of list l in the file's arena (its span). */
static uint32_t span(const tdm_listcache *c, uint32_t l)
{
    uint64_t end = l + 1 < c->nlists ? c->idx[l + 1].words : c->src_words;
    return (uint32_t)(end - c->idx[l].words);
}

/* ---- the LRU chain and the offset order */

static void lru_unlink(tdm_listcache *c, int32_t i)
{
    entry *x = &c->e[i];
    if (x->prev >= 0)
        c->e[x->prev].next = x->next;
    else
        c->head = x->next;
    if (x->next >= 0)
        c->e[x->next].prev = x->prev;
    else
        c->tail = x->prev;
    x->prev = x->next = -1;
}

static void lru_push(tdm_listcache *c, int32_t i, int at_tail)
{
    entry *x = &c->e[i];
    if (at_tail) {
        x->prev = c->tail;
        x->next = -1;
        if (c->tail >= 0)
            c->e[c->tail].next = i;
        else
            c->head = i;
        c->tail = i;
    } else {
        x->next = c->head;
        x->prev = -1;
        if (c->head >= 0)
            c->e[c->head].prev = i;
        else
            c->tail = i;
        c->head = i;
    }
}

/* Where offset `off` is, or would go, in byoff. */
static uint32_t byoff_find(const tdm_listcache *c, uint32_t off)
{
    uint32_t lo = 0, hi = c->nres;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (c->byoff[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void byoff_insert(tdm_listcache *c, int32_t i)
{
    uint32_t at = byoff_find(c, c->e[i].off);
    memmove(c->byoff + at + 1, c->byoff + at, (c->nres - at) * sizeof *c->byoff);
    c->byoff[at] = (span_at){c->e[i].off, c->e[i].words, i};
    c->nres++;
}

static void byoff_remove(tdm_listcache *c, int32_t i)
{
    uint32_t at = byoff_find(c, c->e[i].off);
    while (at < c->nres && c->byoff[at].entry != i) /* lists of 0 words share offsets */
        at++;
    if (at == c->nres)
        return;
    memmove(c->byoff + at, c->byoff + at + 1, (c->nres - at - 1) * sizeof *c->byoff);
    c->nres--;
}

/* First hole of at least `words`: its offset, or -1. */
static int64_t find_hole(const tdm_listcache *c, uint32_t words)
{
    uint64_t at = 0;
    for (uint32_t k = 0; k < c->nres; k++) {
        const span_at *x = &c->byoff[k];
        if (x->off - at >= words)
            return (int64_t)at;
        at = (uint64_t)x->off + x->words;
    }
    return c->cap - at >= words ? (int64_t)at : -1;
}

/* ---- entries */

static int32_t entry_new(tdm_listcache *c)
{
    if (c->efree >= 0) {
        int32_t i = c->efree;
        c->efree = c->e[i].next;
        return i;
    }
    if (c->ne == c->ecap) {
        uint32_t n = c->ecap ? c->ecap * 2 : 64;
        entry *e = realloc(c->e, (size_t)n * sizeof *e);
        if (!e)
            return -1;
        c->e = e;
        c->ecap = n;
    }
    return (int32_t)c->ne++;
}

/* Removes entry i from the cache: its descriptor on the device becomes
 * zeros (queued before any later upload into its space). */
static void evict(tdm_listcache *c, int32_t i)
{
    entry *x = &c->e[i];
    cl_event ev = NULL;
    tdm_err err = {0};
    /* if this write fails the list's descriptor still points at its old
       place: nothing names it while it is out (callers acquire first) */
    if (put(c, c->dlists, (size_t)x->list * 16, 16, &zero_desc, &ev, &err) == TDM_OK)
        clReleaseEvent(ev);
    tdm_err_clear(&err);
    if (x->ready)
        clReleaseEvent(x->ready);
    x->ready = NULL;
    lru_unlink(c, i);
    byoff_remove(c, i);
    c->slot[x->list] = -1;
    c->used -= x->words;
    c->st.evictions++;
    c->st.bytes_evicted += (uint64_t)x->words * 4;
    x->next = c->efree;
    c->efree = i;
}

/* A place for `words`, evicting unpinned lists from the LRU end while no
 * hole is large enough; *displaced gets their benefit. -1: none (the rest
 * is pinned). */
static int64_t place(tdm_listcache *c, uint32_t words, double *displaced)
{
    *displaced = 0;
    for (;;) {
        if (c->cap - c->used >= words) {
            int64_t off = find_hole(c, words);
            if (off >= 0)
                return off;
        }
        int32_t v = c->head;
        while (v >= 0 && c->e[v].pins)
            v = c->e[v].next;
        if (v < 0)
            return -1;
        *displaced += (double)c->freq[c->e[v].list] * c->e[v].words;
        evict(c, v);
    }
}

static void evict_unpinned(tdm_listcache *c)
{
    for (int32_t v = c->head; v >= 0;) {
        int32_t next = c->e[v].next;
        if (!c->e[v].pins)
            evict(c, v);
        v = next;
    }
}

/* ---- holds */

static void hold_free(tdm_listcache_hold *h)
{
    if (!h)
        return;
    if (h->last)
        clReleaseEvent(h->last);
    free(h->lists);
    free(h->desc);
    free(h);
}

/* Unpins h's lists (lock held). */
static void unpin(tdm_listcache *c, const uint32_t *lists, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int32_t s = c->slot[lists[i]];
        if (s >= 0 && c->e[s].pins) {
            c->e[s].pins--;
            c->pins--;
        }
    }
}

/* Unpins the holds whose events completed (lock held). */
static void drain(tdm_listcache *c)
{
    tdm_listcache_hold *h = atomic_exchange(&c->done, NULL);
    int any = h != NULL;
    while (h) {
        tdm_listcache_hold *next = h->next_done;
        unpin(c, h->lists, h->n);
        hold_free(h);
        h = next;
    }
    if (any)
        pthread_cond_broadcast(&c->cv);
}

/* Uploads list l into [off, off + words) and writes its descriptor;
 * entry i gets the descriptor write's event. */
static int upload_list(tdm_listcache *c, tdm_listcache_hold *h, int32_t i, tdm_err *err)
{
    entry *x = &c->e[i];
    const tdm_idx_list *L = &c->idx[x->list];
    cl_event e1 = NULL, e2 = NULL;
    int st = TDM_OK;
    if (x->words)
        st = put(c, c->arena, (size_t)x->off * 4, (size_t)x->words * 4, c->src + L->words, &e1,
                 err);
    if (e1)
        clReleaseEvent(e1); /* the queue is in order: the descriptor comes after */
    if (st != TDM_OK)
        return st;
    cl_uint4 *dsc = &h->desc[h->ndesc++];
    dsc->s[0] = x->off;
    dsc->s[1] = L->df;
    dsc->s[2] = L->ext;
    dsc->s[3] = x->words;
    st = put(c, c->dlists, (size_t)x->list * 16, 16, dsc, &e2, err);
    if (st != TDM_OK)
        return st;
    x->ready = e2;
    x->seq = ++c->seq;
    clRetainEvent(e2);
    if (h->last)
        clReleaseEvent(h->last);
    h->last = e2;
    c->st.bytes_moved += (uint64_t)x->words * 4;
    return TDM_OK;
}

/* Brings list l in (lock held): placed, uploaded, pinned. 0: no room now. */
static int bring_in(tdm_listcache *c, tdm_listcache_hold *h, uint32_t l, int *placed,
                    tdm_err *err)
{
    uint32_t words = span(c, l);
    double displaced;
    int64_t off = place(c, words, &displaced);
    *placed = off >= 0;
    if (off < 0)
        return TDM_OK;
    int32_t i = entry_new(c);
    if (i < 0)
        return tdm_err_set(err, TDM_ERR_NOMEM, "list cache: out of memory for an entry");
    c->e[i] = (entry){.list = l, .off = (uint32_t)off, .words = words, .pins = 1,
                      .prev = -1, .next = -1};
    int admit = (double)c->freq[l] * words >= displaced;
    lru_push(c, i, admit);
    c->st.streamed += !admit;
    byoff_insert(c, i);
    c->slot[l] = i;
    c->used += words;
    c->pins++;
    int st = upload_list(c, h, i, err);
    if (st != TDM_OK) {
        c->e[i].pins--;
        c->pins--;
        evict(c, i);
    }
    return st;
}

/* ---- create / free */

int tdm_listcache_create(tdm_resident *res, uint64_t bytes, tdm_err *err)
{
    uint64_t sz;
    tdm_listcache *c = calloc(1, sizeof *c);
    if (!c)
        return tdm_err_set(err, TDM_ERR_NOMEM, "list cache: out of memory");
    const tdm_ireader_info *in = tdm_ireader_info_get(res->r);
    c->d = res->dev;
    c->r = res->r;
    c->nlists = in->nterms;
    c->idx = tdm_ireader_section(res->r, TDM_SEC_LISTS, &sz);
    c->src = tdm_ireader_section(res->r, TDM_SEC_ARENA, &sz);
    c->src_words = in->arena_words;
    c->cap = (uint32_t)(bytes / 4 > UINT32_MAX ? UINT32_MAX : bytes / 4);
    c->efree = c->head = c->tail = -1;
    c->slot = malloc((c->nlists ? c->nlists : 1) * sizeof *c->slot);
    c->freq = calloc(c->nlists ? c->nlists : 1, sizeof *c->freq);
    c->byoff = malloc((c->nlists ? c->nlists : 1) * sizeof *c->byoff);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    atomic_init(&c->done, NULL);
    atomic_init(&c->callbacks, 0);
    res->cache = c;
    if (!c->slot || !c->freq || !c->byoff)
        return tdm_err_set(err, TDM_ERR_NOMEM, "list cache: tables for %llu lists",
                           (unsigned long long)c->nlists);
    memset(c->slot, 0xff, (c->nlists ? c->nlists : 1) * sizeof *c->slot);
    c->st.capacity_bytes = (uint64_t)c->cap * 4;
    size_t dbytes = c->nlists ? (size_t)c->nlists * 16 : 16;
    int st = tdm_queue_create(res->dev, &c->q, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(res->dev, CL_MEM_READ_WRITE, (size_t)c->cap * 4, NULL, &res->arena,
                               err);
    if (st == TDM_OK)
        st = tdm_buffer_create(res->dev, CL_MEM_READ_WRITE, dbytes, NULL, &res->lists, err);
    if (st != TDM_OK) {
        tdm_err_append(err, " (list cache of %s)", tdm_ireader_path(res->r));
        return st;
    }
    c->arena = res->arena;
    c->dlists = res->lists;
    res->bytes += (uint64_t)c->cap * 4 + dbytes;
    res->arena_words = c->cap;
    res->spans = 1;
    /* every descriptor zero (no list in the cache) before anything reads
       them: waited for here (a memset of 16 bytes a list) */
    static const cl_uint zero = 0;
    cl_event fill = NULL;
    cl_int rc = clEnqueueFillBuffer(c->q, res->lists, &zero, sizeof zero, 0, dbytes, 0, NULL,
                                    &fill);
    if (rc == CL_SUCCESS) {
        rc = clWaitForEvents(1, &fill);
        clReleaseEvent(fill);
    }
    if (rc != CL_SUCCESS)
        return tdm_cl_fail(err, rc, "clEnqueueFillBuffer (list cache descriptors)");
    return TDM_OK;
}

void tdm_listcache_free(tdm_listcache *c)
{
    if (!c)
        return;
    struct timespec ms = {0, 1000000};
    while (atomic_load(&c->callbacks) > 0)
        nanosleep(&ms, NULL);
    if (c->q) {
        clFinish(c->q);
        clReleaseCommandQueue(c->q);
    }
    pthread_mutex_lock(&c->mu);
    drain(c);
    pthread_mutex_unlock(&c->mu);
    for (uint32_t k = 0; k < c->nres; k++)
        if (c->e[c->byoff[k].entry].ready)
            clReleaseEvent(c->e[c->byoff[k].entry].ready);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->slot);
    free(c->freq);
    free(c->byoff);
    free(c->e);
    free(c);
}

/* ---- acquire */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct lists of the call, checked, largest first. */
static int distinct(tdm_listcache *c, const uint32_t *lists, size_t n, tdm_listcache_hold *h,
                    tdm_err *err)
{
    h->lists = malloc((n ? n : 1) * sizeof *h->lists);
    h->desc = malloc((n ? 2 * n : 1) * sizeof *h->desc);
    h->capdesc = 2 * n;
    if (!h->lists || !h->desc)
        return tdm_err_set(err, TDM_ERR_NOMEM, "list cache: a call of %zu lists", n);
    /* keyed largest span first (fewer holes left behind), then by id */
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    if (!key)
        return tdm_err_set(err, TDM_ERR_NOMEM, "list cache: a call of %zu lists", n);
    for (size_t i = 0; i < n; i++) {
        if (lists[i] >= c->nlists) {
            free(key);
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s: list %u out of range (%llu lists)",
                               tdm_ireader_path(c->r), lists[i], (unsigned long long)c->nlists);
        }
        /* no byte of a list goes to the device before its checksum matched
         * (the reader remembers the answer: hashed once, not per call) */
        int st = tdm_ireader_check_list(c->r, lists[i], err);
        if (st != TDM_OK) {
            free(key);
            return st;
        }
        key[i] = (uint64_t)(UINT32_MAX - span(c, lists[i])) << 32 | lists[i];
    }
    qsort(key, n, sizeof *key, cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || key[m - 1] != key[i])
            key[m++] = key[i];
    for (size_t i = 0; i < m; i++)
        h->lists[i] = (uint32_t)key[i];
    free(key);
    h->n = m;
    uint64_t total = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t w = span(c, h->lists[i]);
        if (w > c->cap)
            return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                               "%s: list %u needs %llu bytes of device memory; the list cache "
                               "on %s holds %llu (raise device_memory / TANDEM_DEVICE_MEMORY)",
                               tdm_ireader_path(c->r), h->lists[i], (unsigned long long)w * 4,
                               c->d->info.name, (unsigned long long)c->cap * 4);
        total += w;
    }
    if (total > c->cap)
        return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                           "%s: the %zu lists of one call need %llu bytes of device memory; "
                           "the list cache on %s holds %llu (raise device_memory / "
                           "TANDEM_DEVICE_MEMORY)",
                           tdm_ireader_path(c->r), m, (unsigned long long)total * 4,
                           c->d->info.name, (unsigned long long)c->cap * 4);
    return TDM_OK;
}

/* One pass over the call's lists (lock held): *all = 1 when every one is
 * pinned, else the pins of this pass are dropped. up[i]: list i was
 * uploaded by this call. */
static int pass(tdm_listcache *c, tdm_listcache_hold *h, unsigned char *up, int *all,
                tdm_err *err)
{
    size_t i = 0;
    int st = TDM_OK, placed = 1;
    for (; st == TDM_OK && placed && i < h->n; i++) {
        uint32_t l = h->lists[i];
        int32_t s = c->slot[l];
        if (s >= 0) {
            c->e[s].pins++;
            c->pins++;
            lru_unlink(c, s);
            lru_push(c, s, 1);
            continue;
        }
        st = bring_in(c, h, l, &placed, err);
        if (st == TDM_OK && placed)
            up[i] = 1;
    }
    *all = st == TDM_OK && placed;
    if (!*all) /* list i - 1 failed: nothing of it is pinned */
        unpin(c, h->lists, i - 1);
    return st;
}

/* Before a new pass may reuse h->desc, the writes that read it are done. */
static void reset_desc(tdm_listcache_hold *h)
{
    if (h->last)
        clWaitForEvents(1, &h->last);
    h->ndesc = 0;
}

static int acquire_locked(tdm_listcache *c, tdm_listcache_hold *h, unsigned char *up,
                          tdm_err *err)
{
    for (size_t i = 0; i < h->n; i++)
        c->freq[h->lists[i]]++;
    int all = 0, waited = 0, st;
    for (;;) {
        drain(c);
        st = pass(c, h, up, &all, err);
        if (st != TDM_OK || all)
            break;
        reset_desc(h);
        if (c->pins) { /* others' lists hold the room: wait for them */
            waited = 1;
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_nsec += 2000000;
            if (t.tv_nsec >= 1000000000) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&c->cv, &c->mu, &t); /* callbacks signal unlocked */
        } else {
            c->st.replaced++;
            evict_unpinned(c);
        }
    }
    c->st.waits += waited;
    for (size_t i = 0; st == TDM_OK && i < h->n; i++) {
        uint32_t w = span(c, h->lists[i]);
        if (up[i]) {
            c->st.misses++;
        } else {
            c->st.hits++;
            c->st.bytes_hit += (uint64_t)w * 4;
        }
    }
    return st;
}

/* The latest upload among h's lists (they are in order on the queue). */
static cl_event latest(const tdm_listcache *c, const tdm_listcache_hold *h)
{
    cl_event ev = NULL;
    uint64_t best = 0;
    for (size_t i = 0; i < h->n; i++) {
        const entry *x = &c->e[c->slot[h->lists[i]]];
        if (x->ready && x->seq >= best) {
            best = x->seq;
            ev = x->ready;
        }
    }
    if (ev)
        clRetainEvent(ev);
    return ev;
}

static int check_ids(const tdm_resident *res, const uint32_t *lists, size_t n, tdm_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (lists[i] >= res->nlists)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s: list %u out of range (%u lists)",
                               tdm_ireader_path(res->r), lists[i], res->nlists);
    return TDM_OK;
}

int tdm_resident_acquire(const tdm_resident *res, const uint32_t *lists, size_t n,
                         cl_event *ready, tdm_listcache_hold **hold, uint64_t *moved,
                         tdm_err *err)
{
    *ready = NULL;
    *hold = NULL;
    if (n && !lists)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "list cache: %zu lists, no array", n);
    tdm_listcache *c = res->cache;
    if (!c)
        return check_ids(res, lists, n, err);
    tdm_listcache_hold *h = calloc(1, sizeof *h);
    unsigned char *up = calloc(n ? n : 1, 1);
    int st = h && up ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "list cache: out of memory");
    if (st == TDM_OK) {
        h->c = c;
        st = distinct(c, lists, n, h, err);
    }
    if (st == TDM_OK) {
        pthread_mutex_lock(&c->mu);
        uint64_t before = c->st.bytes_moved;
        st = acquire_locked(c, h, up, err);
        if (moved)
            *moved += c->st.bytes_moved - before;
        if (st == TDM_OK)
            *ready = latest(c, h);
        clFlush(c->q); /* commands of other queues wait for these */
        pthread_mutex_unlock(&c->mu);
    }
    free(up);
    if (st != TDM_OK) {
        if (h && h->last)
            clWaitForEvents(1, &h->last); /* writes that read h->desc */
        hold_free(h);
        return st;
    }
    *hold = h;
    return TDM_OK;
}

int tdm_resident_acquire_batch(const tdm_resident *res, const tdm_decode_batch *b,
                               cl_event *ready, tdm_listcache_hold **hold, uint64_t *moved,
                               tdm_err *err)
{
    size_t n = 0;
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        n += b->njobs[c];
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids) {
        *ready = NULL;
        *hold = NULL;
        return tdm_err_set(err, TDM_ERR_NOMEM, "list cache: a batch of %zu jobs", n);
    }
    size_t k = 0;
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        for (uint32_t j = 0; j < b->njobs[c]; j++)
            if (b->jobs[c][j].block_begin < b->jobs[c][j].block_end)
                ids[k++] = b->jobs[c][j].list;
    int st = tdm_resident_acquire(res, ids, k, ready, hold, moved, err);
    free(ids);
    return st;
}

/* ---- unhold */

static void CL_CALLBACK on_done(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    (void)status; /* failed commands read nothing any more either */
    tdm_listcache_hold *h = arg;
    tdm_listcache *c = h->c;
    h->next_done = atomic_load(&c->done);
    while (!atomic_compare_exchange_weak(&c->done, &h->next_done, h))
        ;
    pthread_cond_broadcast(&c->cv);
    atomic_fetch_sub(&c->callbacks, 1);
}

void tdm_resident_unhold(const tdm_resident *res, tdm_listcache_hold *h, cl_event done)
{
    (void)res;
    if (!h)
        return;
    tdm_listcache *c = h->c;
    cl_int status = CL_COMPLETE;
    if (done && clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                               NULL) == CL_SUCCESS && status <= CL_COMPLETE)
        done = NULL; /* done already (or failed): some platforms (Oclgrind) never call back */
    if (done) {
        atomic_fetch_add(&c->callbacks, 1);
        tdm_event_flush(done); /* else a strict driver may never run it, nor call back */
        if (clSetEventCallback(done, CL_COMPLETE, on_done, h) == CL_SUCCESS)
            return;
        atomic_fetch_sub(&c->callbacks, 1);
        clWaitForEvents(1, &done);
    }
    if (h->last)
        clWaitForEvents(1, &h->last);
    pthread_mutex_lock(&c->mu);
    unpin(c, h->lists, h->n);
    drain(c);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    hold_free(h);
}

int tdm_resident_cache_stats(const tdm_resident *res, tdm_listcache_stats *out, tdm_err *err)
{
    memset(out, 0, sizeof *out);
    tdm_listcache *c = res ? res->cache : NULL;
    if (!c)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "list cache statistics: the index is "
                           "wholly resident (no cache)");
    pthread_mutex_lock(&c->mu);
    drain(c);
    *out = c->st;
    out->used_bytes = c->used * 4;
    out->lists = c->nres;
    pthread_mutex_unlock(&c->mu);
    return TDM_OK;
}
