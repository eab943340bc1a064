/* The search handle's cache of recomputed block bounds and of the
 * compressed variant's per-term seed values (bounds.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "tandem.h"

#define NBUCKETS 1024u

typedef struct bentry {
    struct bentry *hnext;         /* hash chain */
    struct bentry *prev, *next;   /* use order, most recent first */
    int kind;
    double k1, b;
    uint64_t term;
    uint32_t qw;                  /* the term's float weight qw[t], as bits */
    uint32_t k;                   /* 0: block bounds; else a k-th score (bounds[0]),
                                     k1 and b then the formula's c0 and c1 */
    uint32_t nblocks;
    float bounds[];
} bentry;

struct tdm_bcache {
    pthread_mutex_t mu;
    bentry *bucket[NBUCKETS];
    bentry *head, *tail;
    size_t bytes, max_bytes, entries;
    uint64_t hits, misses, evictions;
};

int tdm_bcache_open(size_t max_bytes, tdm_bcache **out, tdm_err *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&(*out)->mu, NULL) != 0) {
        free(*out);
        *out = NULL;
        return tdm_err_set(err, TDM_ERR_NOMEM, "bounds cache: cannot make a mutex");
    }
    (*out)->max_bytes = max_bytes;
    return TDM_OK;
}

void tdm_bcache_close(tdm_bcache *c)
{
    if (!c)
        return;
    for (bentry *e = c->head, *n; e; e = n) {
        n = e->next;
        free(e);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static size_t entry_bytes(uint32_t nblocks)
{
    return sizeof(bentry) + (size_t)nblocks * sizeof(float);
}

static size_t hash(int kind, double k1, double b, uint64_t term, uint32_t qw, uint32_t k)
{
    uint64_t x[3];
    memcpy(&x[0], &k1, 8);
    memcpy(&x[1], &b, 8);
    x[2] = term * 0x9E3779B97F4A7C15ull ^ qw ^ (uint64_t)kind << 40 ^ (uint64_t)k << 42;
    uint64_t h = x[2] ^ x[0] * 0xBF58476D1CE4E5B9ull ^ x[1] * 0x94D049BB133111EBull;
    h ^= h >> 31;
    return (size_t)(h % NBUCKETS);
}

static int same(const bentry *e, int kind, double k1, double b, uint64_t term, uint32_t qw,
                uint32_t k)
{
    return e->kind == kind && e->k1 == k1 && e->b == b && e->term == term && e->qw == qw &&
           e->k == k;
}

static void unlink_use(tdm_bcache *c, bentry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(tdm_bcache *c, bentry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (!c->tail)
        c->tail = e;
}

/* Under the lock: the entry for the key, moved to the front; NULL if none. */
static bentry *find(tdm_bcache *c, size_t h, int kind, double k1, double b, uint64_t term,
                    uint32_t qw, uint32_t k)
{
    for (bentry *e = c->bucket[h]; e; e = e->hnext)
        if (same(e, kind, k1, b, term, qw, k)) {
            unlink_use(c, e);
            push_front(c, e);
            return e;
        }
    return NULL;
}

/* Under the lock: drops the least recently used entry. */
static void evict_one(tdm_bcache *c)
{
    bentry *e = c->tail;
    size_t h = hash(e->kind, e->k1, e->b, e->term, e->qw, e->k);
    bentry **p = &c->bucket[h];
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    unlink_use(c, e);
    c->bytes -= entry_bytes(e->nblocks);
    c->entries--;
    c->evictions++;
    free(e);
}

/* Under the lock: keeps e (not in the cache yet), evicting what it must;
 * frees it instead when it is too large for the cache or a thread that
 * computed the same key got there first. */
static void insert(tdm_bcache *c, size_t h, bentry *e)
{
    size_t need = entry_bytes(e->nblocks);
    if (need > c->max_bytes || find(c, h, e->kind, e->k1, e->b, e->term, e->qw, e->k)) {
        free(e);
        return;
    }
    while (c->bytes + need > c->max_bytes)
        evict_one(c);
    e->hnext = c->bucket[h];
    c->bucket[h] = e;
    push_front(c, e);
    c->bytes += need;
    c->entries++;
}

int tdm_bcache_bounds(tdm_bcache *c, const tdm_ireader *r, const tdm_query *q,
                      const tdm_scorer *s, size_t t, float *bounds, tdm_err *err)
{
    tdm_ilist l;
    int rc = tdm_ireader_list(r, q->terms[t].id, &l, err);
    if (rc)
        return rc;
    int kind = s->kind;
    double k1 = kind == TDM_SCORING_IMPACT ? 0 : s->k1, b = kind == TDM_SCORING_IMPACT ? 0 : s->b;
    uint64_t term = q->terms[t].id;
    uint32_t qw = tdm_f2u(s->qw[t]);
    size_t h = hash(kind, k1, b, term, qw, 0);
    pthread_mutex_lock(&c->mu);
    bentry *e = find(c, h, kind, k1, b, term, qw, 0);
    if (e && e->nblocks == l.nblocks) {
        memcpy(bounds, e->bounds, (size_t)l.nblocks * sizeof *bounds);
        c->hits++;
        pthread_mutex_unlock(&c->mu);
        return TDM_OK;
    }
    c->misses++;
    pthread_mutex_unlock(&c->mu);
    /* computed outside the lock: O(postings of the list) */
    float list_max;
    rc = tdm_score_block_bounds(r, q, s, t, bounds, &list_max, err);
    if (rc)
        return rc;
    e = malloc(entry_bytes(l.nblocks));
    if (!e) /* the bounds are right; only the cache goes without them */
        return TDM_OK;
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->k1 = k1;
    e->b = b;
    e->term = term;
    e->qw = qw;
    e->nblocks = l.nblocks;
    memcpy(e->bounds, bounds, (size_t)l.nblocks * sizeof *bounds);
    pthread_mutex_lock(&c->mu);
    insert(c, h, e);
    pthread_mutex_unlock(&c->mu);
    return TDM_OK;
}

/* A k-th score entry's key: (kind, c0, c1) for BM25, (kind) for impact. */
static void kth_key(int kind, float *c0, float *c1)
{
    if (kind == TDM_SCORING_IMPACT)
        *c0 = *c1 = 0;
}

int tdm_bcache_kth_get(tdm_bcache *c, int kind, float c0, float c1, uint64_t term, float qw,
                       uint32_t k, float *v)
{
    kth_key(kind, &c0, &c1);
    size_t h = hash(kind, c0, c1, term, tdm_f2u(qw), k);
    pthread_mutex_lock(&c->mu);
    bentry *e = find(c, h, kind, c0, c1, term, tdm_f2u(qw), k);
    if (e) /* not counted in hits and misses: those are the bounds' */
        *v = e->bounds[0];
    pthread_mutex_unlock(&c->mu);
    return e != NULL;
}

void tdm_bcache_kth_put(tdm_bcache *c, int kind, float c0, float c1, uint64_t term, float qw,
                        uint32_t k, float v)
{
    kth_key(kind, &c0, &c1);
    bentry *e = malloc(entry_bytes(1));
    if (!e) /* only the cache goes without it */
        return;
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->k1 = c0;
    e->b = c1;
    e->term = term;
    e->qw = tdm_f2u(qw);
    e->k = k;
    e->nblocks = 1;
    e->bounds[0] = v;
    size_t h = hash(kind, c0, c1, term, e->qw, k);
    pthread_mutex_lock(&c->mu);
    insert(c, h, e);
    pthread_mutex_unlock(&c->mu);
}

void tdm_bcache_stats_get(tdm_bcache *c, tdm_bcache_stats *st)
{
    pthread_mutex_lock(&c->mu);
    *st = (tdm_bcache_stats){c->hits, c->misses, c->evictions, c->entries, c->bytes,
                             c->max_bytes};
    pthread_mutex_unlock(&c->mu);
}
