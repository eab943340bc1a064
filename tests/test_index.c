/* Index writer and reader round trips, the builder on real and synthetic
 * collections, and the public tdm_index_* API. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "codec/codec.h"
#include "index/bm25.h"
#include "index/reader.h"
#include "index/writer.h"
#include "testutil.h"

#define NDOCS 5000

typedef struct list {
    char term[24];
    uint32_t *docids, *freqs;
    size_t n;
} list;

/* Random lists of lengths 1 .. ~NDOCS over NDOCS documents, terms sorted. */
static list *make_lists(size_t nlists, uint32_t *doclens, uint64_t seed)
{
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    for (uint32_t d = 0; d < NDOCS; d++)
        doclens[d] = tdm_rng_range(&r, 1, 400);
    list *l = calloc(nlists, sizeof *l);
    for (size_t i = 0; i < nlists; i++) {
        snprintf(l[i].term, sizeof l[i].term, "t%05zu", i);
        uint32_t every = i % 3 == 0 ? 1 : tdm_rng_range(&r, 1, 200);
        l[i].docids = malloc(NDOCS * 4);
        l[i].freqs = malloc(NDOCS * 4);
        for (uint32_t d = tdm_rng_range(&r, 0, 50); d < NDOCS; d += tdm_rng_range(&r, 1, every)) {
            l[i].docids[l[i].n] = d;
            l[i].freqs[l[i].n++] = i % 7 == 0 ? 1 : tdm_rng_range(&r, 1, 30);
        }
        if (l[i].n == 0)
            l[i].docids[l[i].n] = 3, l[i].freqs[l[i].n++] = 2;
    }
    return l;
}

static void free_lists(list *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].docids);
        free(l[i].freqs);
    }
    free(l);
}

/* List i gets codecs[i % ncodecs] when ncodecs > 0, else `codec`. */
static void write_index_codecs(const char *path, const char *codec, const char *const *codecs,
                               size_t ncodecs, list *l, size_t n, const uint32_t *doclens)
{
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    const char *stops[] = {"the", "a"};
    tdm_iwriter_options o = {.codec = codec, .stemmer = "english", .stopwords = stops,
                             .nstopwords = 2};
    int rc = tdm_iwriter_open(path, &o, &w, &err);
    for (uint32_t d = 0; rc == TDM_OK && d < NDOCS; d++) {
        char name[32];
        snprintf(name, sizeof name, "doc-%u", d);
        rc = tdm_iwriter_add_doc(w, doclens[d], name, &err);
    }
    for (size_t i = 0; rc == TDM_OK && i < n; i++) {
        if (ncodecs)
            rc = tdm_iwriter_set_codec(w, codecs[i % ncodecs], &err);
        if (rc == TDM_OK)
            rc = tdm_iwriter_add_list(w, l[i].term, strlen(l[i].term), l[i].docids,
                                      l[i].freqs, l[i].n, &err);
    }
    if (rc == TDM_OK)
        rc = tdm_iwriter_finish(w, &err);
    tdm_iwriter_free(w);
    if (rc)
        fail_msg("writing %s with %s: %s", path, codec, tdm_err_msg(&err));
}

static void write_index(const char *path, const char *codec, list *l, size_t n,
                        const uint32_t *doclens)
{
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    const char *stops[] = {"the", "a"};
    tdm_iwriter_options o = {.codec = codec, .stemmer = "english", .stopwords = stops,
                             .nstopwords = 2};
    int rc = tdm_iwriter_open(path, &o, &w, &err);
    for (uint32_t d = 0; rc == TDM_OK && d < NDOCS; d++) {
        char name[32];
        snprintf(name, sizeof name, "doc-%u", d);
        rc = tdm_iwriter_add_doc(w, doclens[d], name, &err);
    }
    for (size_t i = 0; rc == TDM_OK && i < n; i++)
        rc = tdm_iwriter_add_list(w, l[i].term, strlen(l[i].term), l[i].docids, l[i].freqs,
                                  l[i].n, &err);
    if (rc == TDM_OK)
        rc = tdm_iwriter_finish(w, &err);
    tdm_iwriter_free(w);
    if (rc)
        fail_msg("writing %s with %s: %s", path, codec, tdm_err_msg(&err));
}

/* Block metadata against the postings: bases and last docids where the
 * blocks start and end (none stored for one block), every bound at or above
 * every score of its block and at most the list's, and each quantized bound
 * the smallest that is (one step lower would be below the block's best). */
static void check_blocks(const tdm_ireader *r, const tdm_ilist *l, const list *want,
                         const uint32_t *doclens)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    assert_int_equal(l->nblocks == 1, l->block_last == NULL);
    assert_int_equal(l->nblocks == 1, l->block_maxq == NULL);
    double lmax = 0;
    for (uint32_t b = 0; b < l->nblocks; b++) {
        size_t s = (size_t)b * l->docs.block_size, e = s + tdm_encoded_block_len(&l->docs, b);
        assert_int_equal(l->docs.bases[b], s ? want->docids[s - 1] : 0);
        if (l->block_last)
            assert_int_equal(l->block_last[b], want->docids[e - 1]);
        double bmax = 0, bound = tdm_ilist_block_max(l, b);
        for (size_t k = s; k < e; k++) {
            double sc = tdm_bm25(in->k1, in->b, in->ndocs, l->df, want->freqs[k],
                                 doclens[want->docids[k]], in->avg_doclen);
            bmax = sc > bmax ? sc : bmax;
        }
        assert_true(bmax <= bound);
        assert_true(bound <= l->max_score);
        if (l->block_maxq && l->block_maxq[b])
            assert_true((double)tdm_idx_block_bound(l->max_score, l->block_maxq[b] - 1) < bmax);
        lmax = bmax > lmax ? bmax : lmax;
    }
    assert_true(lmax <= l->max_score);
    assert_true(l->max_score <= nextafterf((float)lmax, INFINITY));
}

static void check_list(const tdm_ireader *r, const list *want, const uint32_t *doclens)
{
    tdm_err err = {0};
    uint64_t i;
    assert_int_equal(tdm_ireader_find(r, want->term, strlen(want->term), &i), TDM_OK);
    tdm_ilist l;
    if (tdm_ireader_list(r, i, &l, &err))
        fail_msg("%s", tdm_err_msg(&err));
    assert_int_equal(l.df, want->n);
    uint32_t nb, entry;
    float ms;
    assert_int_equal(tdm_ireader_list_meta(r, i, &nb, &entry, &ms), TDM_OK);
    assert_int_equal(nb, l.nblocks);
    assert_int_equal(entry, l.nblocks > 1 ? l.first_entry : 0);
    assert_memory_equal(&ms, &l.max_score, sizeof ms);
    assert_int_equal(tdm_ireader_list_meta(r, tdm_ireader_info_get(r)->nterms, &nb, &entry, &ms),
                     TDM_ERR_INVALID_ARG);
    assert_int_equal(l.docs.borrowed, 1);
    assert_int_equal(l.freqs.borrowed, 1);
    uint32_t *d = malloc(want->n * 4), *f = malloc(want->n * 4);
    assert_int_equal(tdm_ireader_decode(r, i, d, f, &err), TDM_OK);
    assert_memory_equal(d, want->docids, want->n * 4);
    assert_memory_equal(f, want->freqs, want->n * 4);
    /* The borrowed views decode on their own too (tf - 1 for freqs). */
    assert_int_equal(tdm_codec_decode(&l.docs, d, &err), TDM_OK);
    assert_memory_equal(d, want->docids, want->n * 4);
    check_blocks(r, &l, want, doclens);
    tdm_encoded_free(&l.docs);   /* harmless on a borrowed view */
    free(d);
    free(f);
}

static void roundtrip(const char *codec)
{
    uint32_t doclens[NDOCS];
    size_t n = tdm_test_small() ? 30 : 120;
    list *l = make_lists(n, doclens, 42);
    char path[1100];
    snprintf(path, sizeof path, "%s/rt-%s.idx", tdm_test_tmpdir("index"), codec);
    write_index(path, codec, l, n, doclens);
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    if (tdm_ireader_open(path, &r, &err))
        fail_msg("%s", tdm_err_msg(&err));
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    assert_int_equal(in->ndocs, NDOCS);
    assert_int_equal(in->nterms, n);
    assert_string_equal(in->codec, codec);
    assert_string_equal(in->stemmer, "english");
    assert_int_equal(in->nstopwords, 2);
    assert_string_equal(tdm_ireader_stopword(r, 1), "a");
    assert_string_equal(tdm_ireader_docname(r, 17), "doc-17");
    assert_null(tdm_ireader_docname(r, NDOCS));
    assert_memory_equal(tdm_ireader_doclens(r), doclens, sizeof doclens);
    for (size_t i = 0; i < n; i++)
        check_list(r, &l[i], doclens);
    uint64_t idx;
    assert_int_equal(tdm_ireader_find(r, "t", 1, &idx), TDM_ERR_NOT_FOUND);
    assert_int_equal(tdm_ireader_find(r, "t99999", 6, &idx), TDM_ERR_NOT_FOUND);
    size_t tl;
    assert_memory_equal(tdm_ireader_term(r, 3, &tl, NULL, NULL), "t00003", 6);
    assert_null(tdm_ireader_term(r, n, &tl, NULL, NULL));
    if (tdm_ireader_verify(r, &err))
        fail_msg("verify: %s", tdm_err_msg(&err));
    tdm_ireader_close(r);
    free_lists(l, n);
}

/* Every codec in the registry, whatever other engineers have added. */
static void test_roundtrip_codecs(void **state)
{
    (void)state;
    size_t nc;
    const tdm_codec_ops *const *all = tdm_codec_all(&nc);
    for (size_t c = 0; c < nc; c++)
        roundtrip(all[c]->name);
}

static void test_writer_rejects(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/rej.idx", tdm_test_tmpdir("index"));
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    tdm_iwriter_options bad = {.codec = "no-such-codec"};
    assert_int_equal(tdm_iwriter_open(path, &bad, &w, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_open(path, NULL, &w, &err), TDM_OK);
    uint32_t lens[4] = {1, 2, 3, 4};
    assert_int_equal(tdm_iwriter_set_docs(w, 4, lens, NULL, &err), TDM_OK);
    uint32_t d_dup[] = {1, 1}, d_down[] = {2, 1}, d_big[] = {0, 4}, d_ok[] = {0, 3};
    uint32_t f_ok[] = {1, 1}, f_zero[] = {1, 0};
    assert_int_equal(tdm_iwriter_add_list(w, "b", 1, d_dup, f_ok, 2, &err), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_err_msg(&err), "not increasing"));
    assert_int_equal(tdm_iwriter_add_list(w, "b", 1, d_down, f_ok, 2, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_add_list(w, "b", 1, d_big, f_ok, 2, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_add_list(w, "b", 1, d_ok, f_zero, 2, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_add_list(w, "", 0, d_ok, f_ok, 2, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_add_list(w, "b", 1, d_ok, f_ok, 0, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_add_list(w, "b", 1, d_ok, f_ok, 2, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "b", 1, d_ok, f_ok, 2, &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_add_list(w, "a", 1, d_ok, f_ok, 2, &err), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_err_msg(&err), "sort after"));
    assert_int_equal(tdm_iwriter_add_doc(w, 1, "late", &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_add_list(w, "ba", 2, d_ok, f_ok, 2, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    /* An unfinished writer leaves no file behind. */
    char other[1200];
    snprintf(other, sizeof other, "%s.unfinished", path);
    assert_int_equal(tdm_iwriter_open(other, NULL, &w, &err), TDM_OK);
    tdm_iwriter_free(w);
    assert_int_not_equal(access(other, F_OK), 0);
    tdm_index *ix;
    assert_int_equal(tdm_index_open(path, &ix), TDM_OK);
    assert_int_equal(tdm_index_verify(ix), TDM_OK);
    assert_string_equal(tdm_index_docname(ix, 2), "2");
    tdm_index_close(ix);
    tdm_err_clear(&err);
}

static void build_smart(const char *rel, uint64_t want_docs, const char *word)
{
    const char *in = tdm_test_data(rel);
    if (access(in, R_OK) != 0) {
        print_message("skipped: %s is missing\n", in);
        return;
    }
    char out[1100];
    snprintf(out, sizeof out, "%s/smart.idx", tdm_test_tmpdir("index"));
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    if (tdm_index_build(&in, 1, out, &o) != TDM_OK)
        fail_msg("build %s: %s", in, tdm_last_error());
    tdm_index *ix;
    if (tdm_index_open(out, &ix) != TDM_OK)
        fail_msg("%s", tdm_last_error());
    tdm_index_stats st;
    assert_int_equal(tdm_index_stats_get(ix, &st), TDM_OK);
    assert_int_equal(st.documents, want_docs);
    assert_string_equal(st.stemmer, "english");
    assert_string_equal(st.codec, "bp128"); /* the default */
    assert_true(st.terms > 1000);
    assert_string_equal(tdm_index_docname(ix, 0), "1");
    char term[129];
    assert_int_equal(tdm_index_normalize(ix, word, term, sizeof term), TDM_OK);
    uint32_t df;
    uint64_t cf;
    assert_int_equal(tdm_index_term_get(ix, term, &df, &cf), TDM_OK);
    size_t n;
    assert_int_equal(tdm_index_postings_get(ix, term, NULL, NULL, 0, &n), TDM_ERR_LIMIT);
    assert_int_equal(n, df);
    uint32_t *d = malloc(n * 8);
    assert_int_equal(tdm_index_postings_get(ix, term, d, d + n, n, &n), TDM_OK);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += d[n + i];
    assert_int_equal(sum, cf);
    free(d);
    assert_int_equal(tdm_index_term_get(ix, "zzzznotaterm", &df, &cf), TDM_ERR_NOT_FOUND);
    assert_int_equal(tdm_index_verify(ix), TDM_OK);
    tdm_index_close(ix);
}

static void test_cranfield(void **state)
{
    (void)state;
    build_smart("cranfield/cran.all.1400", 1400, "Boundary");
}

static void test_cacm(void **state)
{
    (void)state;
    build_smart("cacm/cacm.all", 3204, "computers");
}

/* Writes a synthetic lines collection with a skewed vocabulary. */
static void write_collection(const char *path, uint32_t ndocs)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    tdm_rng r;
    tdm_rng_seed(&r, 9);
    for (uint32_t d = 0; d < ndocs; d++) {
        fprintf(f, "D%u\t", d);
        uint32_t len = tdm_rng_range(&r, 0, 60);
        for (uint32_t k = 0; k < len; k++) {
            uint32_t a = tdm_rng_range(&r, 1, 3000), t = a * a / 3000 / 3;
            fprintf(f, "w%u ", t);
        }
        fputc('\n', f);
    }
    fclose(f);
}

static void same_index(const char *a, const char *b)
{
    tdm_ireader *x, *y;
    tdm_err err = {0};
    assert_int_equal(tdm_ireader_open(a, &x, &err), TDM_OK);
    assert_int_equal(tdm_ireader_open(b, &y, &err), TDM_OK);
    const tdm_ireader_info *ix = tdm_ireader_info_get(x), *iy = tdm_ireader_info_get(y);
    assert_int_equal(ix->ndocs, iy->ndocs);
    assert_int_equal(ix->nterms, iy->nterms);
    assert_int_equal(ix->npostings, iy->npostings);
    assert_memory_equal(tdm_ireader_doclens(x), tdm_ireader_doclens(y), ix->ndocs * 4);
    uint32_t *bx = malloc(ix->ndocs * 8), *by = malloc(ix->ndocs * 8);
    for (uint64_t i = 0; i < ix->nterms; i++) {
        size_t lx, ly;
        uint32_t df;
        const char *tx = tdm_ireader_term(x, i, &lx, &df, NULL);
        const char *ty = tdm_ireader_term(y, i, &ly, NULL, NULL);
        assert_int_equal(lx, ly);
        assert_memory_equal(tx, ty, lx);
        assert_int_equal(tdm_ireader_decode(x, i, bx, bx + df, &err), TDM_OK);
        assert_int_equal(tdm_ireader_decode(y, i, by, by + df, &err), TDM_OK);
        assert_memory_equal(bx, by, df * 4);
        assert_memory_equal(bx + df, by + df, df * 4);
    }
    free(bx);
    free(by);
    tdm_ireader_close(x);
    tdm_ireader_close(y);
}

static int progress_calls;
static int count_progress(void *user, const tdm_index_build_progress *p)
{
    (void)user;
    progress_calls += p->phase == 2;
    return 0;
}

/* A budget small enough to force many runs gives the same index as one run. */
static void test_runs_merge(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("index-runs");
    char in[1100], one[1100], many[1100];
    snprintf(in, sizeof in, "%s/coll.txt", dir);
    snprintf(one, sizeof one, "%s/one.idx", dir);
    snprintf(many, sizeof many, "%s/many.idx", dir);
    write_collection(in, tdm_test_small() ? 5000 : 40000);
    const char *inputs[] = {in};
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.stemmer = "none";
    o.progress = count_progress;
    assert_int_equal(tdm_index_build(inputs, 1, one, &o), TDM_OK);
    o.memory_mb = 1;
    assert_int_equal(tdm_index_build(inputs, 1, many, &o), TDM_OK);
    assert_int_equal(progress_calls, 2);
    same_index(one, many);
    /* Run files are gone. */
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q run", dir);
    assert_int_not_equal(system(cmd), 0);
}

/* One open index shared by threads: every thread decodes every list and
 * gets the same checksum of the postings as a single thread does. */
typedef struct shared {
    tdm_index *ix;
    const char *const *terms;
    size_t nterms;
    uint64_t sum;
} shared;

static void *sum_postings(void *arg)
{
    shared *s = arg;
    uint32_t *buf = malloc(2 * 20000 * 4);
    char term[129];
    s->sum = 0;
    for (size_t i = 0; i < s->nterms; i++) {
        size_t n = 0;
        if (tdm_index_normalize(s->ix, s->terms[i], term, sizeof term) != TDM_OK ||
            tdm_index_postings_get(s->ix, term, buf, buf + 20000, 20000, &n) != TDM_OK)
            continue;
        for (size_t k = 0; k < n; k++)
            s->sum = s->sum * 31 + buf[k] * 7 + buf[20000 + k];
    }
    free(buf);
    return NULL;
}

static void test_shared_by_threads(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("index-threads");
    char in[1100], out[1100];
    snprintf(in, sizeof in, "%s/coll.txt", dir);
    snprintf(out, sizeof out, "%s/t.idx", dir);
    write_collection(in, 3000);
    const char *inputs[] = {in};
    assert_int_equal(tdm_index_build(inputs, 1, out, NULL), TDM_OK);
    tdm_index *ix;
    assert_int_equal(tdm_index_open(out, &ix), TDM_OK);
    static const char *const words[] = {"w0", "w1", "w2", "w5", "w10", "w33", "w100", "w200",
                                        "w299", "missing", "W3", "w7"};
    shared one = {ix, words, sizeof words / sizeof *words, 0}, many[4];
    sum_postings(&one);
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        many[t] = one;
        assert_int_equal(pthread_create(&th[t], NULL, sum_postings, &many[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        assert_true(many[t].sum == one.sum);
    }
    tdm_index_close(ix);
}

/* The lexicon's hash (index/lexhash.c), made at the first lookup of a
 * reader of 4,096 terms or more, here by 4 threads at once on a fresh
 * reader: every term at its position, through the hash or (while another
 * thread makes it) the binary search; none of the near misses found. */
#define LEX_TERMS 6000

static int term_order(const void *a, const void *b)
{
    return strcmp(((const list *)a)->term, ((const list *)b)->term);
}

typedef struct lex_work {
    tdm_ireader *r;
    const list *l;
    int bad;
} lex_work;

static void *lex_find_all(void *arg)
{
    lex_work *w = arg;
    uint64_t idx;
    for (size_t i = 0; i < LEX_TERMS; i++) {
        const char *t = w->l[i].term;
        size_t n = strlen(t);
        if (tdm_ireader_find(w->r, t, n, &idx) != TDM_OK || idx != i)
            w->bad++;
        /* a prefix, an extension, a changed last byte: none is a term */
        if (tdm_ireader_find(w->r, t, n - 1, &idx) == TDM_OK && strlen(w->l[idx].term) != n - 1)
            w->bad++;
        char more[32];
        snprintf(more, sizeof more, "%s~", t);
        if (tdm_ireader_find(w->r, more, strlen(more), &idx) != TDM_ERR_NOT_FOUND)
            w->bad++;
    }
    if (tdm_ireader_find(w->r, "", 0, &idx) != TDM_ERR_NOT_FOUND)
        w->bad++;
    return NULL;
}

static void test_lexicon_hash(void **state)
{
    (void)state;
    uint32_t doclens[NDOCS];
    for (uint32_t d = 0; d < NDOCS; d++)
        doclens[d] = 10;
    list *l = calloc(LEX_TERMS, sizeof *l);
    static const uint32_t one = 1;
    for (size_t i = 0; i < LEX_TERMS; i++) {
        /* lengths 2 to 12, every first letter */
        snprintf(l[i].term, sizeof l[i].term, "%c%.*zu", 'a' + (int)(i % 26), (int)(1 + i % 11),
                 i * 7919);
        l[i].docids = malloc(4);
        l[i].freqs = malloc(4);
        l[i].docids[0] = (uint32_t)(i % NDOCS);
        l[i].freqs[0] = one;
        l[i].n = 1;
    }
    qsort(l, LEX_TERMS, sizeof *l, term_order);
    char path[1100];
    snprintf(path, sizeof path, "%s/lex.idx", tdm_test_tmpdir("index-lex"));
    write_index(path, "bp128", l, LEX_TERMS, doclens);
    for (int round = 0; round < 3; round++) {
        tdm_ireader *r = NULL;
        tdm_err err = {0};
        if (tdm_ireader_open(path, &r, &err))
            fail_msg("%s", tdm_err_msg(&err));
        lex_work w[4];
        pthread_t th[4];
        for (int t = 0; t < 4; t++) {
            w[t] = (lex_work){r, l, 0};
            assert_int_equal(pthread_create(&th[t], NULL, lex_find_all, &w[t]), 0);
        }
        for (int t = 0; t < 4; t++) {
            pthread_join(th[t], NULL);
            assert_int_equal(w[t].bad, 0);
        }
        tdm_ireader_close(r);
    }
    free_lists(l, LEX_TERMS);
}

/* Several inputs of different formats (one gzip) make one collection, in
 * input order, each format guessed; stopwords and the stemmer apply. */
static void test_mixed_inputs(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("index-mixed");
    char a[1100], b[1100], c[1100], stop[1100], out[1100];
    snprintf(a, sizeof a, "%s/a.jsonl.gz", dir);
    snprintf(b, sizeof b, "%s/b.trec", dir);
    snprintf(c, sizeof c, "%s/c.tsv", dir);
    snprintf(stop, sizeof stop, "%s/stop.txt", dir);
    snprintf(out, sizeof out, "%s/m.idx", dir);
    gzFile gz = gzopen(a, "wb");
    gzputs(gz, "{\"id\": \"j1\", \"contents\": \"Running the flows\"}\n"
               "{\"id\": \"j2\", \"contents\": \"flow\"}\n");
    gzclose(gz);
    FILE *f = fopen(b, "w");
    fputs("<DOC>\n<DOCNO>t1</DOCNO>\n<TEXT>the flowing water</TEXT>\n</DOC>\n", f);
    fclose(f);
    f = fopen(c, "w");
    fputs("l1\tThe end\n", f);
    fclose(f);
    f = fopen(stop, "w");
    fputs("the\n", f);
    fclose(f);
    const char *inputs[] = {a, b, c};
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.stopwords = stop;
    o.codec = "raw";
    if (tdm_index_build(inputs, 3, out, &o) != TDM_OK)
        fail_msg("%s", tdm_last_error());
    tdm_index *ix;
    assert_int_equal(tdm_index_open(out, &ix), TDM_OK);
    const char *names[] = {"j1", "j2", "t1", "l1"};
    uint32_t lens[] = {2, 1, 2, 1};
    for (uint32_t d = 0; d < 4; d++) {
        assert_string_equal(tdm_index_docname(ix, d), names[d]);
        uint32_t len = 99;
        assert_int_equal(tdm_index_doclen_get(ix, d, &len), TDM_OK);
        assert_int_equal(len, lens[d]);
    }
    assert_null(tdm_index_docname(ix, 4));
    uint32_t len = 99;
    assert_int_equal(tdm_index_doclen_get(ix, 4, &len), TDM_ERR_NOT_FOUND);
    assert_int_equal(len, 99);
    uint32_t docs[4], tfs[4];
    size_t n;
    assert_int_equal(tdm_index_postings_get(ix, "flow", docs, tfs, 4, &n), TDM_OK);
    assert_int_equal(n, 3);
    assert_int_equal(docs[0], 0);
    assert_int_equal(docs[1], 1);
    assert_int_equal(docs[2], 2);
    assert_int_equal(tdm_index_term_get(ix, "the", NULL, NULL), TDM_ERR_NOT_FOUND);
    char term[129];
    assert_int_equal(tdm_index_normalize(ix, "The", term, sizeof term), TDM_ERR_NOT_FOUND);
    assert_int_equal(tdm_index_normalize(ix, "FLOWING", term, sizeof term), TDM_OK);
    assert_string_equal(term, "flow");
    assert_int_equal(tdm_index_normalize(ix, "FLOWING", term, 3), TDM_ERR_LIMIT);
    tdm_index_stats st;
    assert_int_equal(tdm_index_stats_get(ix, &st), TDM_OK);
    assert_int_equal(st.stopwords, 1);
    assert_int_equal(st.documents, 4);
    tdm_index_close(ix);
}

/* The CLI end to end: tandem build, stats (with --verify) and lookup. */
static void cli_stats(const char *rel, const char *want)
{
    const char *cli = getenv("TANDEM_CLI");
    char in[1100];
    snprintf(in, sizeof in, "%s", tdm_test_data(rel));
    if (!cli || access(in, R_OK) != 0) {
        print_message("skipped: no TANDEM_CLI or %s is missing\n", in);
        return;
    }
    const char *dir = tdm_test_tmpdir("index-cli");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' build --quiet -o '%s/c.idx' '%s' && '%s' stats --verify "
             "'%s/c.idx' > '%s/stats.txt' && '%s' lookup '%s/c.idx' Flows > '%s/lookup.txt'",
             cli, dir, in, cli, dir, dir, cli, dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -q '^documents *%s$' '%s/stats.txt' && grep -q '^verify *ok' "
             "'%s/stats.txt' && grep -q '^term flow$' '%s/lookup.txt'", want, dir, dir, dir);
    assert_int_equal(system(cmd), 0);
}

static void test_cli(void **state)
{
    (void)state;
    cli_stats("cranfield/cran.all.1400", "1400");
    cli_stats("cacm/cacm.all", "3204");
}

/* What format 2 cannot hold is refused with TDM_ERR_LIMIT, before anything
 * of the list is written; an unknown codec for the next lists likewise. */
static void test_writer_limits(void **state)
{
    (void)state;
    char path[1100];
    snprintf(path, sizeof path, "%s/limits.idx", tdm_test_tmpdir("index"));
    tdm_err err = {0};
    tdm_iwriter *w = NULL;
    assert_int_equal(tdm_iwriter_open(path, NULL, &w, &err), TDM_OK);
    uint32_t lens[3] = {1, 2, 3}, docs[] = {0, 2}, big[] = {0x80000000u, 0x80000000u};
    uint32_t ones[] = {1, 1};
    assert_int_equal(tdm_iwriter_set_docs(w, 3, lens, NULL, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "a", 1, docs, big, 2, &err), TDM_ERR_LIMIT);
    assert_non_null(strstr(tdm_err_msg(&err), "collection frequency"));
    assert_int_equal(tdm_iwriter_set_codec(w, "nope", &err), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_iwriter_set_codec(w, "pfor", &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "a", 1, docs, ones, 2, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    tdm_ireader *r = NULL;
    assert_int_equal(tdm_ireader_open(path, &r, &err), TDM_OK);
    tdm_ilist l;
    assert_int_equal(tdm_ireader_list(r, 0, &l, &err), TDM_OK);
    assert_int_equal(l.docs.codec, TDM_CODEC_PFOR);
    assert_string_equal(tdm_ireader_info_get(r)->codec, "bp128");   /* as opened */
    assert_int_equal(tdm_ireader_verify(r, &err), TDM_OK);
    tdm_ireader_close(r);
    tdm_err_clear(&err);
}

static void test_build_errors(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("index-err");
    char out[1100];
    snprintf(out, sizeof out, "%s/x.idx", dir);
    const char *missing[] = {"/nonexistent/input.txt"};
    assert_int_equal(tdm_index_build(missing, 1, out, NULL), TDM_ERR_NOT_FOUND);
    assert_non_null(strstr(tdm_last_error(), "/nonexistent/input.txt"));
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.stemmer = "klingon";
    const char *in[] = {tdm_test_data("cacm/cacm.all")};
    assert_int_equal(tdm_index_build(in, 1, out, &o), TDM_ERR_INVALID_ARG);
    tdm_index_build_options c;
    tdm_index_build_options_init(&c);
    c.codec = "nope";
    assert_int_equal(tdm_index_build(in, 1, out, &c), TDM_ERR_INVALID_ARG);
    assert_int_not_equal(access(out, F_OK), 0);
    tdm_index *ix;
    assert_int_equal(tdm_index_open(out, &ix), TDM_ERR_NOT_FOUND);
    assert_null(ix);
}

/* The quantized block bound is never below the score it bounds, and is the
 * smallest byte that is not: random maxima over 80 binades, scores anywhere
 * in [0, max] including 0, max, and every bound value and its neighbours. */
static void test_quantize_bounds(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 77);
    int rounds = tdm_test_small() ? 20000 : 200000;
    for (int k = 0; k < rounds; k++) {
        float max = ldexpf(1.0f + tdm_rng_u32(&r) / 4294967296.0f,
                           (int)tdm_rng_range(&r, 0, 80) - 40);
        double score;
        switch (k % 5) {
        case 0: score = max * (tdm_rng_u32(&r) / 4294967295.0); break;
        case 1: score = k % 2 ? max : 0; break;
        case 2: score = tdm_idx_block_bound(max, (uint8_t)tdm_rng_range(&r, 0, 255)); break;
        case 3: score = nextafter(tdm_idx_block_bound(max, (uint8_t)tdm_rng_range(&r, 0, 255)),
                                  INFINITY); break;
        default: score = nextafter(tdm_idx_block_bound(max, (uint8_t)tdm_rng_range(&r, 0, 255)),
                                   0); break;
        }
        if (score > max)
            score = max;
        uint8_t q = tdm_idx_quantize_bound(max, score);
        if (!((double)tdm_idx_block_bound(max, q) >= score))
            fail_msg("max %a score %a: q %u bounds %a", max, score, q,
                     tdm_idx_block_bound(max, q));
        if (q && (double)tdm_idx_block_bound(max, (uint8_t)(q - 1)) >= score)
            fail_msg("max %a score %a: q %u is not the smallest", max, score, q);
    }
    assert_true(tdm_idx_block_bound(3.25f, 255) == 3.25f);
}

/* Lists of lengths around one, two and three blocks (and single postings
 * at the first and last docid, a dense list, a huge tf) with every codec,
 * then all of them again in one index with the codec changing per list. */
static list *edge_lists(uint32_t bs, size_t *n)
{
    static const int64_t lens[] = {1, 2, -1, 0, 1, 0, 1, 0, 1};
    static const uint32_t mult[] = {0, 0, 1, 1, 1, 2, 2, 3, 3};
    size_t k = sizeof lens / sizeof *lens, m = k + 3;
    list *l = calloc(m, sizeof *l);
    for (size_t i = 0; i < m; i++) {
        snprintf(l[i].term, sizeof l[i].term, "e%02zu", i);
        l[i].docids = malloc(NDOCS * 4);
        l[i].freqs = malloc(NDOCS * 4);
        size_t len = i < k ? (size_t)(mult[i] * (int64_t)bs + lens[i]) : 1;
        if (len > NDOCS / 2 - 2)   /* docids below NDOCS at a stride of 2 */
            len = NDOCS / 2 - 2;
        for (size_t j = 0; j < len; j++) {
            l[i].docids[j] = (uint32_t)(j * (i % 2 ? 2 : 1) + (i % 3));
            l[i].freqs[j] = (uint32_t)(1 + (j * 7 + i) % (i % 4 ? 3 : 40));
        }
        l[i].n = len;
    }
    l[k].docids[0] = 0, l[k].freqs[0] = 1;                       /* docid 0 alone */
    l[k + 1].docids[0] = NDOCS - 1, l[k + 1].freqs[0] = 1u << 30; /* last docid, huge tf */
    l[k + 2].n = NDOCS;                                           /* every document */
    for (uint32_t d = 0; d < NDOCS; d++)
        l[k + 2].docids[d] = d, l[k + 2].freqs[d] = 1 + d % 2;
    *n = m;
    return l;
}

static void check_index(const char *path, list *l, size_t n, const uint32_t *doclens,
                        const char *const *codecs, size_t ncodecs)
{
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    if (tdm_ireader_open(path, &r, &err))
        fail_msg("%s", tdm_err_msg(&err));
    for (size_t i = 0; i < n; i++) {
        check_list(r, &l[i], doclens);
        tdm_ilist v;
        assert_int_equal(tdm_ireader_list(r, i, &v, &err), TDM_OK);
        if (ncodecs)
            assert_string_equal(tdm_codec_by_id(v.docs.codec)->name, codecs[i % ncodecs]);
    }
    if (tdm_ireader_verify(r, &err))
        fail_msg("verify %s: %s", path, tdm_err_msg(&err));
    tdm_ireader_close(r);
}

static void test_block_edges(void **state)
{
    (void)state;
    size_t nc;
    const tdm_codec_ops *const *all = tdm_codec_all(&nc);
    uint32_t doclens[NDOCS];
    for (uint32_t d = 0; d < NDOCS; d++)
        doclens[d] = 1 + d % 300;
    const char *names[TDM_CODEC_COUNT + 1];
    char path[1100];
    for (size_t c = 0; c < nc; c++) {
        names[c] = all[c]->name;
        size_t n;
        list *l = edge_lists(all[c]->block_size, &n);
        snprintf(path, sizeof path, "%s/edge-%s.idx", tdm_test_tmpdir("index"), all[c]->name);
        write_index(path, all[c]->name, l, n, doclens);
        check_index(path, l, n, doclens, NULL, 0);
        free_lists(l, n);
    }
    /* Mixed: block sizes of 128, whatever codec each list gets. */
    size_t n;
    list *l = edge_lists(128, &n);
    snprintf(path, sizeof path, "%s/edge-mixed.idx", tdm_test_tmpdir("index"));
    write_index_codecs(path, "bp128", names, nc, l, n, doclens);
    check_index(path, l, n, doclens, names, nc);
    free_lists(l, n);
}

/* No lists (and no documents): a valid, empty index. */
static void test_empty_index(void **state)
{
    (void)state;
    for (int docs = 0; docs < 2; docs++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/empty%d.idx", tdm_test_tmpdir("index"), docs);
        tdm_err err = {0};
        tdm_iwriter *w = NULL;
        assert_int_equal(tdm_iwriter_open(path, NULL, &w, &err), TDM_OK);
        if (docs)
            assert_int_equal(tdm_iwriter_add_doc(w, 3, "only", &err), TDM_OK);
        assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
        tdm_iwriter_free(w);
        tdm_ireader *r = NULL;
        if (tdm_ireader_open(path, &r, &err))
            fail_msg("%s", tdm_err_msg(&err));
        assert_int_equal(tdm_ireader_info_get(r)->nterms, 0);
        assert_int_equal(tdm_ireader_info_get(r)->ndocs, docs);
        uint64_t i;
        assert_int_equal(tdm_ireader_find(r, "a", 1, &i), TDM_ERR_NOT_FOUND);
        assert_int_equal(tdm_ireader_verify(r, &err), TDM_OK);
        tdm_ireader_close(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_codecs), cmocka_unit_test(test_writer_rejects),
        cmocka_unit_test(test_cranfield),        cmocka_unit_test(test_cacm),
        cmocka_unit_test(test_runs_merge),       cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_cli),              cmocka_unit_test(test_shared_by_threads),
        cmocka_unit_test(test_mixed_inputs),     cmocka_unit_test(test_lexicon_hash),
        cmocka_unit_test(test_quantize_bounds),  cmocka_unit_test(test_block_edges),
        cmocka_unit_test(test_empty_index),      cmocka_unit_test(test_writer_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
