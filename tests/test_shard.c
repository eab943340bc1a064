/* Shards by docid range (index/shard.h, docs/PARTITION.md): an index split
 * into 2 and 3 shards (two codecs, one with list-wide parameters); every
 * shard verifies (bounds from the whole index's statistics, docids in its
 * range) and says what it is; every shard's answers merged (score
 * descending, docid ascending, top k; AND-then-OR decided on the shards'
 * AND matches together) equal the whole index's for every algorithm, k and
 * BM25 parameters, bit for bit, text of absent terms included; the split's
 * boundaries; shards opened together must be one split, each once, in
 * order; damaged and forged shards are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "index/format.h"
#include "index/index_priv.h"
#include "index/shard.h"
#include "index/writer.h"
#include "plan/sprep.h"
#include "randcoll.h"
#include "testutil.h"

typedef struct fixture {
    randcoll c;
    const char *dir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    randcoll_init(&f->c, 71, tdm_test_small() ? 600 : 5000, 60);
    f->dir = tdm_test_tmpdir("shard");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    randcoll_free(&f->c);
    free(f);
    return 0;
}

static tdm_engine *engine1(void)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "cpu";
    o.calibrate = 0;
    o.cache_mode = TDM_CACHE_OFF;
    return tdm_test_engine_with(&o);
}

#define MAXS 3
#define MAXT 5

typedef struct split {
    uint32_t n;
    tdm_index *ix[MAXS];
    tdm_search *s[MAXS];
} split;

static void split_open(split *sp, const tdm_index *whole, const char *prefix, uint32_t n,
                       tdm_engine *e)
{
    tdm_err err = {0};
    sp->n = n;
    if (tdm_shard_write(tdm_index_ireader(whole), n, prefix, 2, &err) != TDM_OK)
        fail_msg("tdm_shard_write: %s", tdm_err_msg(&err));
    const tdm_ireader *rs[MAXS];
    for (uint32_t i = 0; i < n; i++) {
        char path[1024];
        if (snprintf(path, sizeof path, "%s.%u", prefix, i) >= (int)sizeof path)
            fail_msg("shard path too long: %s.%u", prefix, i);
        if (tdm_index_open(path, &sp->ix[i]) != TDM_OK)
            fail_msg("%s: %s", path, tdm_last_error());
        rs[i] = tdm_index_ireader(sp->ix[i]);
        const tdm_ireader_info *in = tdm_ireader_info_get(rs[i]);
        assert_true(in->shard);
        assert_int_equal(in->shard_index, i);
        assert_int_equal(in->nshards, n);
        if (tdm_ireader_verify(rs[i], &err) != TDM_OK)
            fail_msg("verify %s: %s", path, tdm_err_msg(&err));
        if (e && tdm_search_open(e, sp->ix[i], &sp->s[i]) != TDM_OK)
            fail_msg("tdm_search_open %s: %s", path, tdm_last_error());
    }
    assert_int_equal(tdm_shard_set_check(rs, n, &err), TDM_OK);
}

static void split_close(split *sp)
{
    for (uint32_t i = 0; i < sp->n; i++) {
        tdm_search_close(sp->s[i]);
        tdm_index_close(sp->ix[i]);
    }
}

static int hit_cmp(const void *a, const void *b)
{
    const tdm_search_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->docid > y->docid) - (x->docid < y->docid);
}

/* The shards' answers to one algorithm, merged: the top k of all. */
static size_t merged(split *sp, const tdm_search_term *t, size_t nt, tdm_search_options *o,
                     tdm_search_hit *out)
{
    size_t n = 0;
    for (uint32_t i = 0; i < sp->n; i++) {
        tdm_search_result *r = NULL;
        if (tdm_search_terms(sp->s[i], t, nt, o, &r) != TDM_OK)
            fail_msg("shard %u: %s", i, tdm_last_error());
        memcpy(out + n, r->hits, r->n * sizeof *out);
        n += r->n;
        tdm_search_result_free(r);
    }
    qsort(out, n, sizeof *out, hit_cmp);
    return n;
}

/* What the whole index answers, from the shards: AND-then-OR is AND when the
 * shards' AND matches reach k together (each shard returns min(k, its
 * matches)), else OR. */
static size_t merged_answer(split *sp, const tdm_search_term *t, size_t nt,
                            const tdm_search_options *o, tdm_search_hit *out)
{
    tdm_search_options so = *o;
    if (o->algorithm != TDM_ALGO_AND_OR) {
        size_t n = merged(sp, t, nt, &so, out);
        return n < o->k ? n : o->k;
    }
    so.algorithm = TDM_ALGO_AND;
    size_t n = merged(sp, t, nt, &so, out);
    if (n >= o->k)
        return o->k;
    so.algorithm = TDM_ALGO_OR;
    n = merged(sp, t, nt, &so, out);
    return n < o->k ? n : o->k;
}

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR, TDM_ALGO_AND, TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};

static void same_answers(tdm_search *whole, split *sp, const randcoll *c, uint64_t seed,
                         size_t nq)
{
    tdm_rng rng;
    tdm_rng_seed(&rng, seed);
    static const uint32_t ks[] = {1, 7, 10, 100, 1000};
    tdm_search_hit *hits = malloc(MAXS * 1000 * sizeof *hits);
    size_t checked = 0;
    for (size_t q = 0; q < nq; q++) {
        tdm_search_term t[MAXT];
        size_t nt = tdm_rng_range(&rng, 1, MAXT);
        for (size_t k = 0; k < nt; k++)
            t[k] = (tdm_search_term){c->terms[tdm_rng_range(&rng, 0, (uint32_t)c->nlists - 1)],
                                     0, 1.0 + tdm_rng_range(&rng, 0, 2)};
        for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.algorithm = algos[a];
            o.k = ks[(q + a) % 5];
            if (q % 7 == 3) { /* other BM25 parameters: bounds recomputed */
                o.k1 = 0.9;
                o.b = 0.4;
            }
            tdm_search_result *w = NULL;
            if (tdm_search_terms(whole, t, nt, &o, &w) != TDM_OK)
                fail_msg("whole: %s", tdm_last_error());
            size_t n = merged_answer(sp, t, nt, &o, hits);
            if (n != w->n)
                fail_msg("query %zu, %s, k %u: %zu hits merged, %zu whole", q,
                         tdm_algorithm_name(algos[a]), o.k, n, w->n);
            for (size_t h = 0; h < n; h++) {
                if (hits[h].docid != w->hits[h].docid ||
                    memcmp(&hits[h].score, &w->hits[h].score, sizeof(float)))
                    fail_msg("query %zu, %s, k %u, hit %zu: merged %u %.9g, whole %u %.9g", q,
                             tdm_algorithm_name(algos[a]), o.k, h, hits[h].docid,
                             hits[h].score, w->hits[h].docid, w->hits[h].score);
                assert_string_equal(hits[h].name, w->hits[h].name);
            }
            checked += n;
            tdm_search_result_free(w);
        }
    }
    assert_true(checked > 0);
    print_message("%zu queries x %zu algorithms on %u shards: %zu hits the same\n", nq,
                  sizeof algos / sizeof *algos, sp->n, checked);
    free(hits);
}

static void merged_equal_whole(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine1();
    static const char *codecs[] = {NULL, "pfor"};
    for (size_t ci = 0; ci < 2; ci++) {
        char name[64], prefix[1024];
        snprintf(name, sizeof name, "whole%zu.tdm", ci);
        tdm_index *whole = randcoll_index(&f->c, f->dir, name, codecs[ci]);
        tdm_search *ws = NULL;
        assert_int_equal(tdm_search_open(e, whole, &ws), TDM_OK);
        for (uint32_t n = 2; n <= 3; n++) {
            snprintf(prefix, sizeof prefix, "%s/c%zu-s%u", f->dir, ci, n);
            split sp = {0};
            split_open(&sp, whole, prefix, n, e);
            same_answers(ws, &sp, &f->c, 1000 + n + 10 * ci, tdm_test_small() ? 15 : 60);
            split_close(&sp);
        }
        tdm_search_close(ws);
        tdm_index_close(whole);
    }
    tdm_engine_close(e);
}

/* An impact index split: each shard's bounds come from the source blocks
 * (the largest byte of those its postings came from: shard.c), verify as
 * impact bounds, and are the ones the search takes (the stored ones, not
 * recomputed); merged answers equal the whole's, every algorithm and k. */
static void impact_merged_equal_whole(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine1();
    tdm_coll_source src;
    randcoll_source(&f->c, &src);
    tdm_iwriter_options wo = {.codec = "bp128", .impact = 1, .quant = TDM_QUANT_INTEGER};
    tdm_err err = {0};
    char *path = path_in(f->dir, "impact.tdm");
    if (tdm_collection_write(&src, path, &wo, &err) != TDM_OK)
        fail_msg("write %s: %s", path, tdm_err_msg(&err));
    tdm_index *whole = NULL;
    assert_int_equal(tdm_index_open(path, &whole), TDM_OK);
    assert_true(tdm_ireader_info_get(tdm_index_ireader(whole))->impact);
    tdm_search *ws = NULL;
    assert_int_equal(tdm_search_open(e, whole, &ws), TDM_OK);
    for (uint32_t n = 2; n <= 3; n++) {
        char prefix[1024];
        snprintf(prefix, sizeof prefix, "%s/impact-s%u", f->dir, n);
        split sp = {0};
        split_open(&sp, whole, prefix, n, e);
        for (uint32_t i = 0; i < n; i++) { /* the stored bounds apply on a shard */
            const tdm_ireader *r = tdm_index_ireader(sp.ix[i]);
            assert_true(tdm_ireader_info_get(r)->impact);
            tdm_query q;
            tdm_query_init(&q);
            for (uint64_t t = 0; t < 8 && t < f->c.nlists; t++)
                assert_int_equal(tdm_query_add_id(&q, r, t, 1.5, &err), TDM_OK);
            tdm_query_finish(&q);
            tdm_score_params sp_imp = {TDM_SCORING_IMPACT, 0, 0};
            tdm_sprep p;
            assert_int_equal(tdm_sprep_build(&p, r, &q, &sp_imp, &err), TDM_OK);
            assert_false(p.device_bounds);
            assert_true(p.term_bounds);
            tdm_sprep_free(&p);
            tdm_query_free(&q);
        }
        same_answers(ws, &sp, &f->c, 2000 + n, tdm_test_small() ? 15 : 60);
        split_close(&sp);
    }
    tdm_search_close(ws);
    tdm_index_close(whole);
    tdm_engine_close(e);
}

/* Boundaries: non-empty ranges covering the documents, about equal length. */
static void bounds(void **state)
{
    fixture *f = *state;
    tdm_index *whole = randcoll_index(&f->c, f->dir, "b.tdm", NULL);
    const tdm_ireader *r = tdm_index_ireader(whole);
    uint32_t nd = (uint32_t)tdm_ireader_info_get(r)->ndocs, b[9];
    tdm_err err = {0};
    for (uint32_t n = 1; n <= 8; n++) {
        assert_int_equal(tdm_shard_bounds(r, n, b, &err), TDM_OK);
        assert_int_equal(b[0], 0);
        assert_int_equal(b[n], nd);
        for (uint32_t i = 0; i < n; i++)
            assert_true(b[i] < b[i + 1]);
        assert_true(tdm_shard_split_id(r, n, b) != 0);
    }
    assert_int_equal(tdm_shard_bounds(r, 0, b, &err), TDM_ERR_INVALID_ARG);
    tdm_err_clear(&err);
    tdm_index_close(whole);
}

/* Re-checksums a shard image after a forged change (16 sections). */
static void reseal(unsigned char *p, size_t size)
{
    tdm_idx_header *h = (void *)p;
    tdm_idx_section_entry *sec = (void *)(p + sizeof *h);
    for (unsigned id = 0; id < TDM_SEC_SHARD_COUNT; id++)
        sec[id].checksum = XXH64(p + sec[id].offset, sec[id].size, 0);
    (void)size;
    h->checksum = 0;
    h->checksum = XXH64(p, sizeof *h + TDM_SEC_SHARD_COUNT * sizeof *sec, 0);
}

static int open_image(const void *p, size_t size, tdm_err *err)
{
    tdm_ireader *r = NULL;
    int rc = tdm_ireader_open_mem(p, size, "forged", &r, err);
    if (rc == TDM_OK)
        rc = tdm_ireader_verify(r, err);
    tdm_ireader_close(r);
    return rc;
}

/* Mixed, missing, repeated and plain shards; damaged and forged ones. */
static void refused(void **state)
{
    fixture *f = *state;
    char p2[1024], p3[1024];
    tdm_index *whole = randcoll_index(&f->c, f->dir, "m.tdm", NULL);
    snprintf(p2, sizeof p2, "%s/m2", f->dir);
    snprintf(p3, sizeof p3, "%s/m3", f->dir);
    split a = {0}, b = {0};
    split_open(&a, whole, p2, 2, NULL);
    split_open(&b, whole, p3, 3, NULL);
    tdm_err err = {0};
    const tdm_ireader *rs[3] = {tdm_index_ireader(b.ix[0]), tdm_index_ireader(a.ix[1]),
                                tdm_index_ireader(b.ix[2])};
    assert_int_equal(tdm_shard_set_check(rs, 3, &err), TDM_ERR_FORMAT); /* two splits */
    assert_non_null(strstr(tdm_err_msg(&err), "two splits"));
    tdm_err_clear(&err);
    rs[0] = tdm_index_ireader(b.ix[0]);
    assert_int_equal(tdm_shard_set_check(rs, 2, &err), TDM_ERR_FORMAT); /* one missing */
    tdm_err_clear(&err);
    rs[1] = tdm_index_ireader(b.ix[0]);
    assert_int_equal(tdm_shard_set_check(rs, 3, &err), TDM_ERR_FORMAT); /* repeated */
    tdm_err_clear(&err);
    rs[0] = tdm_index_ireader(whole);
    assert_int_equal(tdm_shard_set_check(rs, 1, &err), TDM_ERR_FORMAT); /* plain */
    tdm_err_clear(&err);
    /* a shard of a shard */
    uint32_t bb[3];
    assert_int_equal(tdm_shard_bounds(tdm_index_ireader(a.ix[0]), 2, bb, &err),
                     TDM_ERR_INVALID_ARG);
    tdm_err_clear(&err);

    void *img;
    size_t size;
    uint32_t bd[3];
    const tdm_ireader *wr = tdm_index_ireader(whole);
    assert_int_equal(tdm_shard_bounds(wr, 2, bd, &err), TDM_OK);
    assert_int_equal(tdm_shard_make(wr, 2, bd, 1, 1, &img, &size, &err), TDM_OK);
    assert_int_equal(open_image(img, size, &err), TDM_OK);
    unsigned char *p = malloc(size);
    tdm_idx_section_entry *sec = (void *)(p + sizeof(tdm_idx_header));
    /* a flipped byte of the shard record: its checksum */
    memcpy(p, img, size);
    p[sec[TDM_SEC_SHARD].offset + 17] ^= 1;
    assert_int_equal(open_image(p, size, &err), TDM_ERR_CORRUPT);
    tdm_err_clear(&err);
    /* forged: an empty range, a shard past the count, a whole df below the
       shard's, reserved words; a plain reader's count of sections */
    static const struct { unsigned sec; size_t at; uint32_t v; } forge[] = {
        {TDM_SEC_SHARD, 16, 0xffffffffu}, {TDM_SEC_SHARD, 8, 9},
        {TDM_SEC_TERM_GDF, 0, 0},        {TDM_SEC_SHARD, 40, 1}};
    for (size_t k = 0; k < sizeof forge / sizeof *forge; k++) {
        memcpy(p, img, size);
        memcpy(p + sec[forge[k].sec].offset + forge[k].at, &forge[k].v, 4);
        reseal(p, size);
        assert_int_equal(open_image(p, size, &err), TDM_ERR_FORMAT);
        tdm_err_clear(&err);
    }
    /* a posting outside the range: moved into another shard's documents by
       forging the range (verify finds it) */
    memcpy(p, img, size);
    uint32_t lo = bd[1] + (bd[2] - bd[1]) / 2;
    memcpy(p + sec[TDM_SEC_SHARD].offset + 16, &lo, 4);
    reseal(p, size);
    assert_int_equal(open_image(p, size, &err), TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "outside the shard"));
    tdm_err_clear(&err);
    free(p);
    free(img);
    split_close(&a);
    split_close(&b);
    tdm_index_close(whole);
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bounds),
        cmocka_unit_test(refused),
        cmocka_unit_test(merged_equal_whole),
        cmocka_unit_test(impact_merged_equal_whole),
    };
    return tdm_test_run_group("shard", tests, sizeof tests / sizeof *tests, setup, teardown);
}
