/* A random in-memory collection behind a tdm_coll_source, for the import and
 * export tests (test_ciff, test_pisa): documents with odd names, terms with
 * UTF-8 and prefix relations, lists holding docid 0, the last docid, every
 * document, and a single posting; and the helpers both tests share. The
 * search tests (test_sched*, test_watchdog, test_partition, test_shard_open)
 * take their fixture, random queries and result comparison from here too.
 * Header-only: static functions (inline where some includer leaves one
 * unused). */
#ifndef TDM_TEST_RANDCOLL_H
#define TDM_TEST_RANDCOLL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/collection.h"
#include "index/reader.h"
#include "testutil.h"

typedef struct randcoll {
    uint32_t ndocs;
    uint32_t *doclens;
    char **names;
    uint64_t nlists;
    char **terms;               /* sorted, distinct */
    uint32_t **docids, **freqs;
    size_t *n;
} randcoll;

static int randcoll_strcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int randcoll_list(void *self, uint64_t i, tdm_coll_list *out, tdm_err *err)
{
    (void)err;
    randcoll *c = self;
    out->term = c->terms[i];
    out->term_len = strlen(c->terms[i]);
    out->docids = c->docids[i];
    out->freqs = c->freqs[i];
    out->n = c->n[i];
    return TDM_OK;
}

static void randcoll_make_terms(randcoll *c, tdm_rng *r, uint64_t want)
{
    static const char *fixed[] = {"a", "ab", "abc", "caf\xc3\xa9", "zz9", "0"};
    size_t nf = sizeof fixed / sizeof *fixed;
    c->terms = calloc(want + nf, sizeof *c->terms);
    size_t k = 0;
    for (; k < nf; k++)
        c->terms[k] = strdup(fixed[k]);
    for (; k < want + nf; k++) {
        size_t len = tdm_rng_range(r, 1, 12);
        c->terms[k] = malloc(len + 1);
        for (size_t j = 0; j < len; j++)
            c->terms[k][j] = (char)('a' + tdm_rng_range(r, 0, 25));
        c->terms[k][len] = 0;
    }
    qsort(c->terms, k, sizeof *c->terms, randcoll_strcmp);
    size_t w = 0; /* drop duplicates */
    for (size_t j = 0; j < k; j++) {
        if (w && !strcmp(c->terms[w - 1], c->terms[j]))
            free(c->terms[j]);
        else
            c->terms[w++] = c->terms[j];
    }
    c->nlists = w;
}

static void randcoll_make_list(randcoll *c, tdm_rng *r, uint64_t i)
{
    uint32_t *d = malloc(c->ndocs * sizeof *d), *f = malloc(c->ndocs * sizeof *f);
    size_t n = 0;
    uint32_t mode = (uint32_t)(i % 5), p = tdm_rng_range(r, 1, 100);
    for (uint32_t doc = 0; doc < c->ndocs; doc++) {
        int take = mode == 0 ? 1 : mode == 1 ? doc == c->ndocs - 1 || doc == 0
                                             : tdm_rng_range(r, 1, 100) <= p;
        if (take) {
            d[n] = doc;
            f[n++] = tdm_rng_range(r, 0, 9) ? tdm_rng_range(r, 1, 5) : tdm_rng_range(r, 1, 70000);
        }
    }
    if (n == 0) { /* a single posting somewhere */
        d[0] = tdm_rng_range(r, 0, c->ndocs - 1);
        f[n++] = 1;
    }
    c->docids[i] = d;
    c->freqs[i] = f;
    c->n[i] = n;
}

static void randcoll_init(randcoll *c, uint64_t seed, uint32_t ndocs, uint64_t nterms)
{
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    memset(c, 0, sizeof *c);
    c->ndocs = ndocs;
    c->doclens = malloc(ndocs * sizeof *c->doclens);
    c->names = malloc(ndocs * sizeof *c->names);
    for (uint32_t d = 0; d < ndocs; d++) {
        char name[64];
        snprintf(name, sizeof name, d % 7 ? "doc-%u" : "clueweb12 %u\tx/\xc3\xa9", d);
        c->names[d] = strdup(name);
        c->doclens[d] = d % 11 ? tdm_rng_range(&r, 1, 2000) : 0;
    }
    randcoll_make_terms(c, &r, nterms);
    c->docids = calloc(c->nlists, sizeof *c->docids);
    c->freqs = calloc(c->nlists, sizeof *c->freqs);
    c->n = calloc(c->nlists, sizeof *c->n);
    for (uint64_t i = 0; i < c->nlists; i++)
        randcoll_make_list(c, &r, i);
}

static void randcoll_source(randcoll *c, tdm_coll_source *src)
{
    memset(src, 0, sizeof *src);
    src->ndocs = c->ndocs;
    src->doclens = c->doclens;
    src->docnames = (const char *const *)c->names;
    src->nlists = c->nlists;
    src->list = randcoll_list;
    src->self = c;
}

static void randcoll_free(randcoll *c)
{
    for (uint32_t d = 0; d < c->ndocs; d++)
        free(c->names[d]);
    for (uint64_t i = 0; i < c->nlists; i++) {
        free(c->terms[i]);
        free(c->docids[i]);
        free(c->freqs[i]);
    }
    free(c->doclens);
    free(c->names);
    free(c->terms);
    free(c->docids);
    free(c->freqs);
    free(c->n);
}

/* Helpers both round-trip tests use. */

/* dir/name in one of 16 rotating static buffers. */
static char *path_in(const char *dir, const char *name)
{
    static char buf[16][1024];
    static int k;
    char *p = buf[k++ % 16];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

static tdm_ireader *open_index(const char *path)
{
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    if (tdm_ireader_open(path, &r, &err) != TDM_OK)
        fail_msg("open %s: %s", path, tdm_err_msg(&err));
    tdm_err_clear(&err);
    return r;
}

/* The collection written with the writer's options o to dir/name; fails
 * the test on an error. Returns the path (path_in's buffer). */
static inline char *randcoll_write(randcoll *c, const char *dir, const char *name,
                                   const tdm_iwriter_options *o)
{
    tdm_coll_source src;
    randcoll_source(c, &src);
    tdm_err err = {0};
    char *path = path_in(dir, name);
    if (tdm_collection_write(&src, path, o, &err) != TDM_OK)
        fail_msg("write %s: %s", path, tdm_err_msg(&err));
    tdm_err_clear(&err);
    return path;
}

/* randcoll_write's file opened through the public API. */
static inline tdm_index *randcoll_index_with(randcoll *c, const char *dir, const char *name,
                                             const tdm_iwriter_options *o)
{
    char *path = randcoll_write(c, dir, name, o);
    tdm_index *ix = NULL;
    if (tdm_index_open(path, &ix) != TDM_OK)
        fail_msg("open %s: %s", path, tdm_last_error());
    return ix;
}

/* The collection written with codec (NULL: the default) and opened. */
static inline tdm_index *randcoll_index(randcoll *c, const char *dir, const char *name,
                                        const char *codec)
{
    tdm_iwriter_options o = {.codec = codec};
    return randcoll_index_with(c, dir, name, &o);
}

/* The two indexes hold the same collection (tdm_collection_compare). */
static inline void assert_same_index(const char *a, const char *b)
{
    tdm_err err = {0};
    tdm_ireader *ra = open_index(a), *rb = open_index(b);
    if (tdm_collection_compare(ra, rb, &err) != TDM_OK)
        fail_msg("%s vs %s: %s", a, b, tdm_err_msg(&err));
    tdm_ireader_close(ra);
    tdm_ireader_close(rb);
    tdm_err_clear(&err);
}

/* The search tests' fixture: a random collection, its index and, where a
 * test compares with the whole index on one device, that engine and a
 * search handle on it (else NULL). */
typedef struct randcoll_fixture {
    randcoll c;
    tdm_index *ix;
    tdm_engine *plain;
    tdm_search *whole;
} randcoll_fixture;

/* randcoll_init(seed, ndocs, nterms) written to dir/name and opened; with
 * `plain` (taken over: closed by randcoll_fixture_close), a handle on it. */
static inline void randcoll_fixture_open(randcoll_fixture *f, uint64_t seed, uint32_t ndocs,
                                         uint64_t nterms, const char *dir, const char *name,
                                         tdm_engine *plain)
{
    randcoll_init(&f->c, seed, ndocs, nterms);
    f->ix = randcoll_index(&f->c, dir, name, NULL);
    f->plain = plain;
    f->whole = NULL;
    if (plain && tdm_search_open(plain, f->ix, &f->whole) != TDM_OK)
        fail_msg("tdm_search_open: %s", tdm_last_error());
}

static inline void randcoll_fixture_close(randcoll_fixture *f)
{
    tdm_search_close(f->whole);
    tdm_engine_close(f->plain);
    tdm_index_close(f->ix);
    randcoll_free(&f->c);
}

#define RANDCOLL_MAXQ 400 /* queries a qset holds */
#define RANDCOLL_MAXT 6   /* terms a query has at most */

typedef struct qset {
    tdm_search_query q[RANDCOLL_MAXQ];
    tdm_search_term t[RANDCOLL_MAXQ][RANDCOLL_MAXT];
    size_t n;
} qset;

/* n random queries of 1 .. 6 of c's terms (unknown terms, repeats,
 * weights 1 .. 3); query i is empty where i % empty_every is 5 and, unless
 * bad_every is 0, has a bad weight (-1) where i % bad_every is 7. */
static inline void randcoll_queries(qset *s, const randcoll *c, uint64_t seed, size_t n,
                                    size_t empty_every, size_t bad_every)
{
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    if (n > RANDCOLL_MAXQ)
        fail_msg("%zu queries: a qset holds %d", n, RANDCOLL_MAXQ);
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        size_t nt = i % empty_every == 5 ? 0 : tdm_rng_range(&r, 1, RANDCOLL_MAXT);
        for (size_t k = 0; k < nt; k++) {
            s->t[i][k].term = tdm_rng_range(&r, 0, 12) == 0
                                  ? "no-such-term"
                                  : c->terms[tdm_rng_range(&r, 0, (uint32_t)c->nlists - 1)];
            s->t[i][k].id = 0;
            s->t[i][k].weight =
                bad_every && i % bad_every == 7 ? -1.0 : 1.0 + tdm_rng_range(&r, 0, 2);
        }
        s->q[i] = (tdm_search_query){NULL, s->t[i], nt};
    }
}

/* Result a (query q, algorithm algo, k; `what` names a's side in a
 * failure) is b, the whole index's, bit for bit: hits, scores, names and
 * the term counts. The algorithm is the caller's to compare (auto may
 * choose differently on a part of the index). */
static inline void randcoll_same_result(const tdm_search_result *a, const tdm_search_result *b,
                                        size_t q, int algo, uint32_t k, const char *what)
{
    if (a->n != b->n)
        fail_msg("query %zu, %s, k %u: %zu hits %s, %zu whole", q, tdm_algorithm_name(algo), k,
                 a->n, what, b->n);
    for (size_t h = 0; h < a->n; h++) {
        if (a->hits[h].docid != b->hits[h].docid ||
            memcmp(&a->hits[h].score, &b->hits[h].score, sizeof(float)))
            fail_msg("query %zu, %s, k %u, hit %zu: %s %u %.9g, whole %u %.9g", q,
                     tdm_algorithm_name(algo), k, h, what, a->hits[h].docid, a->hits[h].score,
                     b->hits[h].docid, b->hits[h].score);
        assert_string_equal(a->hits[h].name, b->hits[h].name);
    }
    assert_int_equal(a->terms, b->terms);
    assert_int_equal(a->unknown, b->unknown);
}

#endif
