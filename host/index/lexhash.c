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
 * meanwhile. The file is not changed: the table is a cache. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "reader_priv.h"

/* Fewer terms: the binary search is cache-resident and short enough. */
#define LEXHASH_MIN_TERMS 4096u

enum { LH_NONE, LH_BUILDING, LH_READY, LH_NO };

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
    return 1;
}

void tdm_ir_lexhash_make(const tdm_ireader *r)
{
    tdm_ireader *w = (tdm_ireader *)r; /* the table is a cache, not the file */
    int none = LH_NONE;
    if (!__atomic_compare_exchange_n(&w->lexhash_state, &none, LH_BUILDING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; /* made, being made, or not to be made */
    uint64_t *t = NULL, mask = 0;
    if (r->info.nterms < LEXHASH_MIN_TERMS || r->info.nterms >= UINT32_MAX ||
        !build(r, &t, &mask)) {
        __atomic_store_n(&w->lexhash_state, LH_NO, __ATOMIC_RELEASE);
        return;
    }
    w->lexhash = t;
    w->lexhash_mask = mask;
    __atomic_store_n(&w->lexhash_state, LH_READY, __ATOMIC_RELEASE);
}

int tdm_ir_lexhash_find(const tdm_ireader *r, const char *term, size_t len, uint64_t *index)
{
    int st = __atomic_load_n(&r->lexhash_state, __ATOMIC_ACQUIRE);
    if (st == LH_NONE) {
        tdm_ir_lexhash_make(r);
        st = __atomic_load_n(&r->lexhash_state, __ATOMIC_ACQUIRE);
    }
    if (st != LH_READY)
        return -1;
    uint64_t h = XXH3_64bits(term, len), mask = r->lexhash_mask;
    uint64_t tag = h & 0xffffffff00000000ull;
    const uint32_t *o = r->termoffs;
    for (uint64_t s = h & mask;; s = (s + 1) & mask) {
        uint64_t v = r->lexhash[s];
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

void tdm_ir_lexhash_free(tdm_ireader *r)
{
    free(r->lexhash);
    r->lexhash = NULL;
}
