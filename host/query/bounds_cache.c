/* The search handle's cache of recomputed block bounds and of the host
 * seed's per-term k-th scores (bounds.h). */
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
    uint32_t nblocks;
    float bounds[];
} bentry;

/* The k-th scores: a table of their own, two slots a set, each set under
 * one of KTH_LOCKS locks (its number's), so that the threads that seed a
 * batch's queries at once (a lookup a term a query) do not queue on the
 * bounds' one lock and use order. A full set drops its older slot. */
typedef struct kslot {
    uint64_t term;
    uint32_t c0, c1, qw, k; /* the key's floats as bits */
    float v;
    uint8_t kind, used, recent;
} kslot;

#define KTH_LOCKS 64u
#define KTH_WAYS 2u /* a slot's partner: w ^ 1 */
#define KTH_MAX_BYTES ((size_t)4 << 20)

struct tdm_bcache {
    pthread_mutex_t mu;
    bentry *bucket[NBUCKETS];
    bentry *head, *tail;
    size_t bytes, max_bytes, entries;
    uint64_t hits, misses, evictions;
    kslot *kth;            /* [nsets * KTH_WAYS] */
    size_t nsets;          /* a power of two */
    pthread_mutex_t kmu[KTH_LOCKS];
};

/* The k-th scores' sets: a 16th of the budget in slots, within
 * KTH_MAX_BYTES, a power of two, at least a set a lock. */
static size_t kth_sets(size_t max_bytes)
{
    size_t want = (max_bytes / 16 < KTH_MAX_BYTES ? max_bytes / 16 : KTH_MAX_BYTES) /
                  (KTH_WAYS * sizeof(kslot)), n = KTH_LOCKS;
    while (n * 2 <= want)
        n *= 2;
    return n;
}

int tdm_bcache_open(size_t max_bytes, tdm_bcache **out, tdm_err *err)
{
    tdm_bcache *c = *out = calloc(1, sizeof **out);
    if (!c)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    c->nsets = kth_sets(max_bytes);
    /* written now, not calloc'ed: its pages' first writes would each fault
       (and flush every core's TLB) inside the first batches' seeds */
    c->kth = malloc(c->nsets * KTH_WAYS * sizeof *c->kth);
    if (c->kth)
        memset(c->kth, 0, c->nsets * KTH_WAYS * sizeof *c->kth);
    unsigned locks = 0;
    int ok = c->kth && pthread_mutex_init(&c->mu, NULL) == 0;
    while (ok && locks < KTH_LOCKS && pthread_mutex_init(&c->kmu[locks], NULL) == 0)
        locks++;
    if (!ok || locks < KTH_LOCKS) {
        while (locks > 0)
            pthread_mutex_destroy(&c->kmu[--locks]);
        if (ok)
            pthread_mutex_destroy(&c->mu);
        free(c->kth);
        free(c);
        *out = NULL;
        return tdm_err_set(err, TDM_ERR_NOMEM, "bounds cache: out of memory or mutexes");
    }
    c->max_bytes = max_bytes;
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
    for (unsigned i = 0; i < KTH_LOCKS; i++)
        pthread_mutex_destroy(&c->kmu[i]);
    free(c->kth);
    free(c);
}

static size_t entry_bytes(uint32_t nblocks)
{
    return sizeof(bentry) + (size_t)nblocks * sizeof(float);
}

static size_t hash(int kind, double k1, double b, uint64_t term, uint32_t qw)
{
    uint64_t x[3];
    memcpy(&x[0], &k1, 8);
    memcpy(&x[1], &b, 8);
    x[2] = term * 0x9E3779B97F4A7C15ull ^ qw ^ (uint64_t)kind << 40;
    uint64_t h = x[2] ^ x[0] * 0xBF58476D1CE4E5B9ull ^ x[1] * 0x94D049BB133111EBull;
    h ^= h >> 31;
    return (size_t)(h % NBUCKETS);
}

static int same(const bentry *e, int kind, double k1, double b, uint64_t term, uint32_t qw)
{
    return e->kind == kind && e->k1 == k1 && e->b == b && e->term == term && e->qw == qw;
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
                    uint32_t qw)
{
    for (bentry *e = c->bucket[h]; e; e = e->hnext)
        if (same(e, kind, k1, b, term, qw)) {
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
    size_t h = hash(e->kind, e->k1, e->b, e->term, e->qw);
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
    if (need > c->max_bytes || find(c, h, e->kind, e->k1, e->b, e->term, e->qw)) {
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
    size_t h = hash(kind, k1, b, term, qw);
    pthread_mutex_lock(&c->mu);
    bentry *e = find(c, h, kind, k1, b, term, qw);
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
static kslot kth_key(int kind, float c0, float c1, uint64_t term, float qw, uint32_t k)
{
    if (kind == TDM_SCORING_IMPACT)
        c0 = c1 = 0;
    return (kslot){.term = term, .c0 = tdm_f2u(c0), .c1 = tdm_f2u(c1), .qw = tdm_f2u(qw), .k = k,
                   .kind = (uint8_t)kind, .used = 1};
}

static int kth_same(const kslot *a, const kslot *b)
{
    return a->used && a->term == b->term && a->qw == b->qw && a->k == b->k && a->kind == b->kind &&
           a->c0 == b->c0 && a->c1 == b->c1;
}

/* The key's set (its first slot). */
static size_t kth_set(const tdm_bcache *c, const kslot *x)
{
    uint64_t h = x->term * 0x9E3779B97F4A7C15ull ^ ((uint64_t)x->qw << 32 | x->k);
    h ^= ((uint64_t)x->c0 << 32 | x->c1) * 0xBF58476D1CE4E5B9ull ^ (uint64_t)x->kind << 56;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    return (size_t)(h & (c->nsets - 1));
}

int tdm_bcache_kth_get(tdm_bcache *c, int kind, float c0, float c1, uint64_t term, float qw,
                       uint32_t k, float *v)
{
    kslot x = kth_key(kind, c0, c1, term, qw, k);
    size_t set = kth_set(c, &x);
    kslot *s = c->kth + set * KTH_WAYS;
    int hit = 0;
    pthread_mutex_lock(&c->kmu[set % KTH_LOCKS]);
    for (unsigned w = 0; !hit && w < KTH_WAYS; w++)
        if (kth_same(&s[w], &x)) { /* not counted in hits and misses: those are the bounds' */
            *v = s[w].v;
            s[w].recent = 1;
            s[w ^ 1].recent = 0;
            hit = 1;
        }
    pthread_mutex_unlock(&c->kmu[set % KTH_LOCKS]);
    return hit;
}

void tdm_bcache_kth_put(tdm_bcache *c, int kind, float c0, float c1, uint64_t term, float qw,
                        uint32_t k, float v)
{
    kslot x = kth_key(kind, c0, c1, term, qw, k);
    x.v = v;
    x.recent = 1;
    size_t set = kth_set(c, &x);
    kslot *s = c->kth + set * KTH_WAYS;
    pthread_mutex_lock(&c->kmu[set % KTH_LOCKS]);
    /* a racing insert of the same key keeps the first; else an empty slot,
       else the one used less recently */
    if (!kth_same(&s[0], &x) && !kth_same(&s[1], &x)) {
        unsigned w = !s[0].used ? 0 : !s[1].used ? 1 : s[0].recent ? 1 : 0;
        s[w] = x;
        s[w ^ 1].recent = 0;
    }
    pthread_mutex_unlock(&c->kmu[set % KTH_LOCKS]);
}

void tdm_bcache_stats_get(tdm_bcache *c, tdm_bcache_stats *st)
{
    pthread_mutex_lock(&c->mu);
    *st = (tdm_bcache_stats){c->hits, c->misses, c->evictions, c->entries, c->bytes,
                             c->max_bytes};
    pthread_mutex_unlock(&c->mu);
}
