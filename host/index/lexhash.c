/* The lexicon's hash (reader_priv.h, tdm_ir_lexhash_*): a term's position
 * in about two cache misses instead of a binary search's ~20 over a large
 * lexicon. A query's terms are looked up cold (the kernels or other threads
 * evict the lexicon between queries): on the 1M collection (1.09M terms)
 * the search cost ~1.7 us a term there, the query's largest host step.
 *
 * Open addressing with linear probes, a slot a term: the upper 32 bits of
 * the term's XXH3 hash (a tag, so a probe rarely reads a term that is not
 * the one asked) and its position + 1 (0: empty). Slots at least 1.5 x the
 * terms, a power of two: 16 MiB for 1M terms. Made at the first lookup (or
 * tdm_ireader_index_terms) by one thread; the others search the sorted terms
 * meanwhile. The file is not changed: the table is a cache.
 *
 * The table holds positions only, so readers whose lexicons are the same
 * bytes (the shards made from one index: shard.c copies its terms) share
 * one (tdm_ireader_share_lexicon): a reference each, freed with the last
 * reader; whichever reader asks first makes it from its own terms, each
 * compares a probe's term with its own. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "index_testing.h"
#include "reader_priv.h"

/* Fewer terms: the binary search is cache-resident and short enough. */
#define LEXHASH_MIN_TERMS 4096u

enum { LH_NONE, LH_BUILDING, LH_READY, LH_NO };

struct tdm_lexhash {
    int refs;        /* readers holding it (atomic) */
    int state;       /* atomic: LH_*; slots and mask are published by LH_READY */
    uint64_t mask;
    uint64_t *slots;
};

/* Tables made in this process (atomic), for the tests. */
static uint64_t builds;

uint64_t tdm_ir_lexhash_builds(void)
{
    return __atomic_load_n(&builds, __ATOMIC_RELAXED);
}

const void *tdm_ir_lexhash_id(const tdm_ireader *r)
{
    return r->lexhash;
}

static uint64_t slot_of(uint64_t h, uint64_t index)
{
    return (h & 0xffffffff00000000ull) | (index + 1);
}

static int build(const tdm_ireader *r, uint64_t **out, uint64_t *mask_out)
{
    uint64_t n = r->info.nterms, size = 1;
    while (size < n + n / 2)
        size <<= 1;
    uint64_t *t = calloc(size, sizeof *t);
    if (!t)
        return 0;
    uint64_t mask = size - 1;
    const uint32_t *o = r->termoffs;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = XXH3_64bits(r->terms + o[i], o[i + 1] - o[i]);
        uint64_t s = h & mask;
        while (t[s])
            s = (s + 1) & mask;
        t[s] = slot_of(h, i);
    }
    *out = t;
    *mask_out = mask;
    __atomic_add_fetch(&builds, 1, __ATOMIC_RELAXED);
    return 1;
}

int tdm_ir_lexhash_new(tdm_ireader *r)
{
    r->lexhash = calloc(1, sizeof *r->lexhash);
    if (r->lexhash)
        r->lexhash->refs = 1;
    return r->lexhash != NULL;
}

void tdm_ir_lexhash_make(const tdm_ireader *r)
{
    tdm_lexhash *lh = r->lexhash; /* the table is a cache, not the file */
    int none = LH_NONE;
    if (!__atomic_compare_exchange_n(&lh->state, &none, LH_BUILDING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; /* made, being made, or not to be made */
    uint64_t *t = NULL, mask = 0;
    if (r->info.nterms < LEXHASH_MIN_TERMS || r->info.nterms >= UINT32_MAX ||
        !build(r, &t, &mask)) {
        __atomic_store_n(&lh->state, LH_NO, __ATOMIC_RELEASE);
        return;
    }
    lh->slots = t;
    lh->mask = mask;
    __atomic_store_n(&lh->state, LH_READY, __ATOMIC_RELEASE);
}

int tdm_ir_lexhash_find(const tdm_ireader *r, const char *term, size_t len, uint64_t *index)
{
    const tdm_lexhash *lh = r->lexhash;
    int st = __atomic_load_n(&lh->state, __ATOMIC_ACQUIRE);
    if (st == LH_NONE) {
        tdm_ir_lexhash_make(r);
        st = __atomic_load_n(&lh->state, __ATOMIC_ACQUIRE);
    }
    if (st != LH_READY)
        return -1;
    uint64_t h = XXH3_64bits(term, len), mask = lh->mask;
    uint64_t tag = h & 0xffffffff00000000ull;
    const uint32_t *o = r->termoffs;
    for (uint64_t s = h & mask;; s = (s + 1) & mask) {
        uint64_t v = lh->slots[s];
        if (!v)
            return 0;
        if ((v & 0xffffffff00000000ull) != tag)
            continue;
        uint64_t i = (v & 0xffffffffull) - 1;
        if (o[i + 1] - o[i] == len && memcmp(r->terms + o[i], term, len) == 0) {
            *index = i;
            return 1;
        }
    }
}

/* The same terms in the same order: the same bytes in both term sections
 * (each checked at its reader's open: offsets spanning the terms, terms
 * increasing). */
static int same_lexicon(const tdm_ireader *a, const tdm_ireader *b)
{
    const tdm_idx_section_entry *x = a->sec, *y = b->sec;
    return a->info.nterms == b->info.nterms &&
           x[TDM_SEC_TERM_OFFS].size == y[TDM_SEC_TERM_OFFS].size &&
           x[TDM_SEC_TERMS].size == y[TDM_SEC_TERMS].size &&
           (a->termoffs == b->termoffs ||
            memcmp(a->termoffs, b->termoffs, x[TDM_SEC_TERM_OFFS].size) == 0) &&
           (a->terms == b->terms || memcmp(a->terms, b->terms, x[TDM_SEC_TERMS].size) == 0);
}

int tdm_ireader_share_lexicon(tdm_ireader *r, const tdm_ireader *from)
{
    if (r->lexhash == from->lexhash)
        return 1;
    if (!same_lexicon(r, from))
        return 0;
    tdm_lexhash *lh = from->lexhash;
    __atomic_add_fetch(&lh->refs, 1, __ATOMIC_RELAXED);
    tdm_ir_lexhash_free(r);
    r->lexhash = lh;
    return 1;
}

void tdm_ir_lexhash_free(tdm_ireader *r)
{
    tdm_lexhash *lh = r->lexhash;
    r->lexhash = NULL;
    if (!lh || __atomic_sub_fetch(&lh->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    free(lh->slots);
    free(lh);
}
