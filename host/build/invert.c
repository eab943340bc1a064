/* The builder's in-memory postings: an open-addressing hash table of terms,
 * each with a growing (docid, tf) array. */
#include "invert.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "tandem.h"

typedef struct entry {
    uint64_t hash;
    uint32_t off, len;   /* term bytes in the arena */
    uint32_t *post;      /* [2 * cap]: docid, tf pairs */
    uint32_t n, cap;
} entry;

struct tdm_inverter {
    uint32_t *slots;     /* entry index + 1, 0 = empty */
    size_t nslots;
    entry *e;
    size_t n, cap;
    char *arena;
    size_t alen, acap;
    size_t post_bytes;
};

int tdm_inverter_new(tdm_inverter **out, tdm_err *err)
{
    tdm_inverter *inv = calloc(1, sizeof *inv);
    if (inv) {
        inv->nslots = 1 << 16;
        inv->slots = calloc(inv->nslots, sizeof *inv->slots);
    }
    if (!inv || !inv->slots) {
        free(inv);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    *out = inv;
    return TDM_OK;
}

static void clear(tdm_inverter *inv)
{
    for (size_t i = 0; i < inv->n; i++)
        free(inv->e[i].post);
    inv->n = 0;
    inv->alen = 0;
    inv->post_bytes = 0;
    memset(inv->slots, 0, inv->nslots * sizeof *inv->slots);
}

void tdm_inverter_free(tdm_inverter *inv)
{
    if (!inv)
        return;
    clear(inv);
    free(inv->slots);
    free(inv->e);
    free(inv->arena);
    free(inv);
}

size_t tdm_inverter_bytes(const tdm_inverter *inv)
{
    return inv->nslots * sizeof *inv->slots + inv->cap * sizeof *inv->e + inv->acap +
           inv->post_bytes;
}

size_t tdm_inverter_terms(const tdm_inverter *inv) { return inv->n; }

static int rehash(tdm_inverter *inv)
{
    size_t ns = inv->nslots * 2;
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < inv->n; i++) {
        size_t k = inv->e[i].hash & (ns - 1);
        while (s[k])
            k = (k + 1) & (ns - 1);
        s[k] = (uint32_t)i + 1;
    }
    free(inv->slots);
    inv->slots = s;
    inv->nslots = ns;
    return 0;
}

static entry *insert(tdm_inverter *inv, const char *term, size_t len, uint64_t h, size_t slot)
{
    if (inv->n == inv->cap) {
        size_t cap = inv->cap ? inv->cap * 2 : 4096;
        entry *e = realloc(inv->e, cap * sizeof *e);
        if (!e)
            return NULL;
        inv->e = e;
        inv->cap = cap;
    }
    if (inv->alen + len > inv->acap) {
        size_t cap = inv->acap ? inv->acap : 1 << 16;
        while (cap < inv->alen + len)
            cap *= 2;
        char *a = realloc(inv->arena, cap);
        if (!a)
            return NULL;
        inv->arena = a;
        inv->acap = cap;
    }
    memcpy(inv->arena + inv->alen, term, len);
    entry *e = &inv->e[inv->n];
    *e = (entry){h, (uint32_t)inv->alen, (uint32_t)len, NULL, 0, 0};
    inv->alen += len;
    inv->slots[slot] = (uint32_t)++inv->n;
    if (inv->n * 2 > inv->nslots && rehash(inv))
        return NULL;
    return &inv->e[inv->n - 1];
}

static entry *lookup(tdm_inverter *inv, const char *term, size_t len)
{
    uint64_t h = XXH3_64bits(term, len);
    size_t k = h & (inv->nslots - 1);
    for (; inv->slots[k]; k = (k + 1) & (inv->nslots - 1)) {
        entry *e = &inv->e[inv->slots[k] - 1];
        if (e->hash == h && e->len == len && memcmp(inv->arena + e->off, term, len) == 0)
            return e;
    }
    return insert(inv, term, len, h, k);
}

int tdm_inverter_add(tdm_inverter *inv, const char *term, size_t len, uint32_t doc)
{
    return tdm_inverter_add_n(inv, term, len, doc, 1);
}

int tdm_inverter_add_n(tdm_inverter *inv, const char *term, size_t len, uint32_t doc,
                       uint32_t count)
{
    entry *e = lookup(inv, term, len);
    if (!e)
        return TDM_ERR_NOMEM;
    if (e->n && e->post[2 * (e->n - 1)] == doc) {
        if (e->post[2 * (e->n - 1) + 1] > UINT32_MAX - count)
            return TDM_ERR_LIMIT;
        e->post[2 * (e->n - 1) + 1] += count;
        return TDM_OK;
    }
    if (e->n == e->cap) {
        uint32_t cap = e->cap ? e->cap * 2 : 1;
        uint32_t *p = realloc(e->post, (size_t)cap * 8);
        if (!p)
            return TDM_ERR_NOMEM;
        inv->post_bytes += (size_t)(cap - e->cap) * 8;
        e->post = p;
        e->cap = cap;
    }
    e->post[2 * e->n] = doc;
    e->post[2 * e->n + 1] = count;
    e->n++;
    return TDM_OK;
}

static _Thread_local const tdm_inverter *sort_inv; /* qsort has no context argument */

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = &sort_inv->e[*(const uint32_t *)a], *y = &sort_inv->e[*(const uint32_t *)b];
    int c = memcmp(sort_inv->arena + x->off, sort_inv->arena + y->off,
                   x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

int tdm_inverter_drain(tdm_inverter *inv, tdm_invert_fn fn, void *user)
{
    uint32_t *order = malloc((inv->n ? inv->n : 1) * sizeof *order);
    if (!order)
        return TDM_ERR_NOMEM;
    for (size_t i = 0; i < inv->n; i++)
        order[i] = (uint32_t)i;
    sort_inv = inv;
    qsort(order, inv->n, sizeof *order, cmp_entry);
    sort_inv = NULL;
    int rc = 0;
    for (size_t i = 0; !rc && i < inv->n; i++) {
        entry *e = &inv->e[order[i]];
        /* Split the pairs in place: docids to the front half, tfs behind. */
        uint32_t *tmp = malloc((size_t)e->n * 4 + 4);
        if (!tmp) {
            rc = TDM_ERR_NOMEM;
            break;
        }
        for (uint32_t k = 0; k < e->n; k++) {
            tmp[k] = e->post[2 * k + 1];
            e->post[k] = e->post[2 * k];
        }
        memcpy(e->post + e->n, tmp, (size_t)e->n * 4);
        free(tmp);
        rc = fn(user, inv->arena + e->off, e->len, e->post, e->post + e->n, e->n);
    }
    free(order);
    clear(inv);
    return rc;
}
