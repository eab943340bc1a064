/* A split's shard files opened together in one process
 * (tdm_index_open_shards, tdm_index_open_split; host/index/index_api.c and
 * host/sched/partition.c's tdm_part_open_shards, docs/PARTITION.md): the
 * index answers as the unsharded one (stats, df and cf, postings, names,
 * lengths, verify), and a search handle on it, its shards spread over the
 * engine's devices (three shards on one device, and on two PoCL devices:
 * POCL_DEVICES="pthread pthread"), answers every query and batch exactly as
 * the whole index, bit for bit, for every algorithm and k. Shards of two
 * splits, a shard missing or given twice, a plain index: TDM_ERR_FORMAT,
 * naming the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_priv.h"
#include "index/shard.h"
#include "partfix.h"
#include "randcoll.h"
#include "testutil.h"

#define NS 3
#define MAXQ 60

typedef struct fixture {
    randcoll_fixture w; /* the whole index, on one device */
    char dir[1024], prefix[1024], other[1024]; /* NS shards; a second split of 2 */
} fixture;

static tdm_engine *engine_on(const char *devices)
{
    tdm_engine_options o;
    partfix_options(&o, devices, TDM_PARTITION_OFF);
    return tdm_test_engine_with(&o);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *dir = tdm_test_tmpdir("shard_open"); /* emptied at each call: kept */
    snprintf(f->dir, sizeof f->dir, "%s", dir);
    randcoll_fixture_open(&f->w, 77, tdm_test_small() ? 600 : 3000, 40, dir, "w.tdm",
                          engine_on("0"));
    snprintf(f->prefix, sizeof f->prefix, "%s/s", dir);
    snprintf(f->other, sizeof f->other, "%s/o", dir);
    tdm_err err = {0};
    if (tdm_shard_write(tdm_index_ireader(f->w.ix), NS, f->prefix, 2, &err) != TDM_OK ||
        tdm_shard_write(tdm_index_ireader(f->w.ix), 2, f->other, 2, &err) != TDM_OK)
        fail_msg("tdm_shard_write: %s", tdm_err_msg(&err));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    randcoll_fixture_close(&f->w);
    free(f);
    return 0;
}

static void shard_path(char *out, size_t cap, const char *prefix, unsigned i)
{
    if (snprintf(out, cap, "%s.%u", prefix, i) >= (int)cap)
        fail_msg("path too long");
}

/* The index calls answer as the whole index's. */
static void same_index(const tdm_index *w, const tdm_index *s, const randcoll *c)
{
    tdm_index_stats a, b;
    assert_int_equal(tdm_index_stats_get(w, &a), TDM_OK);
    assert_int_equal(tdm_index_stats_get(s, &b), TDM_OK);
    assert_int_equal(a.documents, b.documents);
    assert_int_equal(a.terms, b.terms);
    assert_int_equal(a.postings, b.postings);
    assert_int_equal(a.total_doclen, b.total_doclen);
    assert_true(a.avg_doclen == b.avg_doclen);
    assert_true(b.file_bytes > 0);
    size_t cap = c->ndocs;
    uint32_t *d1 = malloc(cap * 4), *f1 = malloc(cap * 4), *d2 = malloc(cap * 4),
             *f2 = malloc(cap * 4);
    for (uint64_t t = 0; t < c->nlists; t++) {
        uint32_t df1, df2;
        uint64_t cf1, cf2;
        assert_int_equal(tdm_index_term_get(w, c->terms[t], &df1, &cf1), TDM_OK);
        assert_int_equal(tdm_index_term_get(s, c->terms[t], &df2, &cf2), TDM_OK);
        assert_int_equal(df1, df2);
        assert_int_equal(cf1, cf2);
        size_t n1, n2;
        assert_int_equal(tdm_index_postings_get(w, c->terms[t], d1, f1, cap, &n1), TDM_OK);
        assert_int_equal(tdm_index_postings_get(s, c->terms[t], d2, f2, cap, &n2), TDM_OK);
        assert_int_equal(n1, n2);
        assert_memory_equal(d1, d2, n1 * 4);
        assert_memory_equal(f1, f2, n1 * 4);
    }
    assert_int_equal(tdm_index_term_get(s, "no-such-term", NULL, NULL), TDM_ERR_NOT_FOUND);
    for (uint32_t d = 0; d < c->ndocs; d++) {
        assert_string_equal(tdm_index_docname(w, d), tdm_index_docname(s, d));
        uint32_t l1, l2;
        assert_int_equal(tdm_index_doclen_get(w, d, &l1), TDM_OK);
        assert_int_equal(tdm_index_doclen_get(s, d, &l2), TDM_OK);
        assert_int_equal(l1, l2);
    }
    assert_null(tdm_index_docname(s, c->ndocs));
    assert_int_equal(tdm_index_verify(s), TDM_OK);
    free(d1), free(f1), free(d2), free(f2);
}

static void index_calls(void **state)
{
    fixture *f = *state;
    tdm_index *s = NULL;
    assert_int_equal(tdm_index_open_split(f->prefix, &s), TDM_OK);
    same_index(f->w.ix, s, &f->w.c);
    tdm_index_close(s);
    /* the paths in any order (a shell's glob sorts .10 before .2) */
    char p[NS][1024];
    const char *paths[NS];
    for (unsigned i = 0; i < NS; i++) {
        shard_path(p[i], sizeof p[i], f->prefix, NS - 1 - i);
        paths[i] = p[i];
    }
    assert_int_equal(tdm_index_open_shards(paths, NS, &s), TDM_OK);
    same_index(f->w.ix, s, &f->w.c);
    tdm_index_close(s);
}

/* Sets that are not one split: refused, naming the file. */
static void bad_sets(void **state)
{
    fixture *f = *state;
    char a0[1024], a1[1024], a2[1024], b1[1024], whole[1100];
    shard_path(a0, sizeof a0, f->prefix, 0);
    shard_path(a1, sizeof a1, f->prefix, 1);
    shard_path(a2, sizeof a2, f->prefix, 2);
    shard_path(b1, sizeof b1, f->other, 1);
    snprintf(whole, sizeof whole, "%s/w.tdm", f->dir);
    tdm_index *s = NULL;
    const char *mixed[] = {a0, b1, a2};
    assert_int_equal(tdm_index_open_shards(mixed, 3, &s), TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_last_error(), "two splits"));
    assert_null(s);
    const char *missing[] = {a0, a2};
    assert_int_equal(tdm_index_open_shards(missing, 2, &s), TDM_ERR_FORMAT);
    const char *twice[] = {a0, a1, a1};
    assert_int_equal(tdm_index_open_shards(twice, 3, &s), TDM_ERR_FORMAT);
    const char *plain[] = {whole};
    assert_int_equal(tdm_index_open_shards(plain, 1, &s), TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_last_error(), "not a shard"));
    char wprefix[1100];
    snprintf(wprefix, sizeof wprefix, "%s/nothing-here", f->dir);
    assert_int_not_equal(tdm_index_open_split(wprefix, &s), TDM_OK);
    assert_non_null(strstr(tdm_last_error(), "nothing-here.0"));
    assert_int_equal(tdm_index_open_shards(mixed, 0, &s), TDM_ERR_INVALID_ARG);
    assert_null(s);
}

/* Every query alone and every algorithm as one batch on the split opened
 * on `devices`: the whole index's answers. */
static void search_on(fixture *f, const char *devices)
{
    tdm_engine *e = engine_on(devices);
    tdm_index *ix = NULL;
    assert_int_equal(tdm_index_open_split(f->prefix, &ix), TDM_OK);
    tdm_search *s = NULL;
    if (tdm_search_open(e, ix, &s) != TDM_OK)
        fail_msg("tdm_search_open on the shards: %s", tdm_last_error());
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->w.c, 9, tdm_test_small() ? 20 : MAXQ, 29, 0);
    size_t hits = 0;
    for (size_t i = 0; i < qs->n; i++)
        for (size_t a = 0; a < PARTFIX_NALGOS; a++) {
            tdm_search_options o;
            partfix_request(&o, a, partfix_ks[(i + a) % 4]);
            tdm_search_result *p, *w;
            if (partfix_pair(s, f->w.whole, &qs->q[i], i, &o, "on the shards",
                             PARTFIX_ALGO_ANY, &p, &w) == TDM_OK)
                hits += p->n;
            tdm_search_result_free(p);
            tdm_search_result_free(w);
        }
    for (size_t a = 0; a < PARTFIX_NALGOS; a++) {
        tdm_search_options o;
        partfix_request(&o, a, partfix_ks[a % 4]);
        hits += partfix_batch(s, f->w.whole, qs, &o, "on the shards", PARTFIX_ALGO_ANY);
    }
    partfix_no_pin(s, &qs->q[1]); /* every shard runs every query */
    assert_int_equal(partfix_stats(s).nlanes, NS);
    print_message("%d device(s), %d shards: %zu queries, %zu hits the same\n",
                  tdm_engine_device_count(e), NS, qs->n, hits);
    assert_true(hits > 0);
    free(qs);
    tdm_search_close(s);
    tdm_index_close(ix);
    tdm_engine_close(e);
}

/* Three shards on one device: three handles and lanes there. */
static void one_device(void **state) { search_on(*state, "0"); }

/* Three shards over every PoCL device (two: one holds two shards). */
static void all_devices(void **state) { search_on(*state, "cpu"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(index_calls),
        cmocka_unit_test(bad_sets),
        cmocka_unit_test(one_device),
        cmocka_unit_test(all_devices),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
