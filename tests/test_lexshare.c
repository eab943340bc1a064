/* The lexicon's hash shared by the shards of one index (index/lexhash.c,
 * tdm_ireader_share_lexicon): shards made in memory (tdm_shard_open_mem)
 * and a split's files opened together (tdm_index_open_split) use one table,
 * made once (index_testing.h counts them) by whichever reader asks first,
 * here by several threads at once through different shards, every term at
 * its position through each; the table outlives the whole index's reader
 * while a shard holds it. A shard file opened alone (tandem-mpi's) and a
 * reader of another lexicon, even of the same size, keep their own. A
 * partitioned and a split handle on two PoCL devices make one table for
 * the whole index and its shards, and answer as the whole index on one
 * device. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drive/search.h"
#include "index/index_priv.h"
#include "index/index_testing.h"
#include "index/shard.h"
#include "partfix.h"
#include "randcoll.h"
#include "testutil.h"

#define NSHARDS 3
#define NTHREADS (NSHARDS + 1)

typedef struct fixture {
    randcoll c;
    const char *dir;
    char path[1024];
} fixture;

/* 5,000 random terms (the hash is made from 4,096) over 300 documents. */
static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    randcoll_init(&f->c, 31, 300, 5000);
    assert_true(f->c.nlists >= 4096);
    f->dir = tdm_test_tmpdir("lexshare");
    snprintf(f->path, sizeof f->path, "%s", randcoll_write(&f->c, f->dir, "l.tdm", NULL));
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

static tdm_ireader *open_reader(const char *path)
{
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    if (tdm_ireader_open(path, &r, &err) != TDM_OK)
        fail_msg("%s: %s", path, tdm_err_msg(&err));
    return r;
}

/* Shards 0 .. n-1 of r made in memory. */
static void make_shards(const tdm_ireader *r, tdm_ireader **sr, uint32_t n)
{
    uint32_t bounds[NSHARDS + 1];
    tdm_err err = {0};
    if (tdm_shard_bounds(r, n, bounds, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    for (uint32_t i = 0; i < n; i++)
        if (tdm_shard_open_mem(r, n, bounds, i, 2, &sr[i], &err) != TDM_OK)
            fail_msg("shard %u: %s", i, tdm_err_msg(&err));
}

typedef struct lookups {
    const tdm_ireader *r;
    const randcoll *c;
    pthread_barrier_t *go;
    int bad;
} lookups;

/* Every term of c through r at its position (c's terms are sorted as the
 * index's); an unknown term and a term's prefix that is none not found. */
static void *find_all(void *arg)
{
    lookups *w = arg;
    if (w->go)
        pthread_barrier_wait(w->go);
    uint64_t idx;
    for (uint64_t i = 0; i < w->c->nlists; i++) {
        const char *t = w->c->terms[i];
        if (tdm_ireader_find(w->r, t, strlen(t), &idx) != TDM_OK || idx != i)
            w->bad++;
        char more[32];
        snprintf(more, sizeof more, "%s~", t);
        if (tdm_ireader_find(w->r, more, strlen(more), &idx) != TDM_ERR_NOT_FOUND)
            w->bad++;
    }
    if (tdm_ireader_find(w->r, "no-such-term", 12, &idx) != TDM_ERR_NOT_FOUND)
        w->bad++;
    return NULL;
}

static void check_lookups(const tdm_ireader *r, const randcoll *c)
{
    lookups w = {r, c, NULL, 0};
    find_all(&w);
    assert_int_equal(w.bad, 0);
}

/* Every reader of rs[0 .. n) first asked by its own thread, all at once. */
static void lookups_at_once(const tdm_ireader *const *rs, int n, const randcoll *c)
{
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, (unsigned)n);
    lookups w[NTHREADS];
    pthread_t th[NTHREADS];
    for (int t = 0; t < n; t++) {
        w[t] = (lookups){rs[t], c, &go, 0};
        assert_int_equal(pthread_create(&th[t], NULL, find_all, &w[t]), 0);
    }
    for (int t = 0; t < n; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(w[t].bad, 0);
    }
    pthread_barrier_destroy(&go);
}

/* Shards made in memory share the whole index's table: one made, by the
 * threads' race (round 0: only the shards ask; round 1: the whole too),
 * every term found through each; the whole's reader closed first (round
 * 0) or last (round 1), the table freed with the last (ASan checks). */
static void mem_shards(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 2; round++) {
        tdm_ireader *r = open_reader(f->path), *sr[NSHARDS];
        make_shards(r, sr, NSHARDS);
        const tdm_ireader *rs[NTHREADS];
        for (int i = 0; i < NSHARDS; i++) {
            assert_ptr_equal(tdm_ir_lexhash_id(sr[i]), tdm_ir_lexhash_id(r));
            rs[i] = sr[i];
        }
        rs[NSHARDS] = r;
        uint64_t made = tdm_ir_lexhash_builds();
        lookups_at_once(rs, round ? NTHREADS : NSHARDS, &f->c);
        assert_int_equal(tdm_ir_lexhash_builds() - made, 1);
        if (round == 0) {
            tdm_ireader_close(r);
            for (int i = 0; i < NSHARDS; i++) {
                check_lookups(sr[i], &f->c);
                tdm_ireader_close(sr[i]);
            }
        } else {
            for (int i = 0; i < NSHARDS; i++)
                tdm_ireader_close(sr[i]);
            check_lookups(r, &f->c);
            tdm_ireader_close(r);
        }
        assert_int_equal(tdm_ir_lexhash_builds() - made, 1);
    }
}

/* A split's files opened together share shard 0's table; a shard file
 * opened alone (as tandem-mpi's ranks do) keeps its own. */
static void file_shards(void **state)
{
    fixture *f = *state;
    tdm_ireader *r = open_reader(f->path);
    char prefix[1100];
    snprintf(prefix, sizeof prefix, "%s/split", f->dir);
    tdm_err err = {0};
    if (tdm_shard_write(r, NSHARDS, prefix, 2, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    tdm_ireader_close(r);
    tdm_index *ix = NULL;
    assert_int_equal(tdm_index_open_split(prefix, &ix), TDM_OK);
    tdm_ireader *const *rs = NULL;
    assert_int_equal(tdm_index_shards(ix, &rs), NSHARDS);
    for (int i = 1; i < NSHARDS; i++)
        assert_ptr_equal(tdm_ir_lexhash_id(rs[i]), tdm_ir_lexhash_id(rs[0]));
    uint64_t made = tdm_ir_lexhash_builds();
    lookups_at_once((const tdm_ireader *const *)rs, NSHARDS, &f->c);
    assert_int_equal(tdm_ir_lexhash_builds() - made, 1);

    char one[1200];
    snprintf(one, sizeof one, "%s.1", prefix);
    tdm_index *alone = NULL;
    assert_int_equal(tdm_index_open(one, &alone), TDM_OK);
    const tdm_ireader *ra = tdm_index_ireader(alone);
    assert_ptr_not_equal(tdm_ir_lexhash_id(ra), tdm_ir_lexhash_id(rs[1]));
    check_lookups(ra, &f->c);
    assert_int_equal(tdm_ir_lexhash_builds() - made, 2);
    tdm_index_close(alone);
    tdm_index_close(ix);
}

/* Another lexicon is never shared: other terms, and the same sizes with
 * one byte changed ("0", the first term, written as "1"). */
static void other_lexicon(void **state)
{
    fixture *f = *state;
    randcoll other;
    randcoll_init(&other, 32, 300, 5000);
    tdm_ireader *r = open_reader(f->path);
    tdm_ireader *o = open_reader(randcoll_write(&other, f->dir, "o.tdm", NULL));
    assert_string_equal(f->c.terms[0], "0");
    f->c.terms[0][0] = '1';
    tdm_ireader *b = open_reader(randcoll_write(&f->c, f->dir, "b.tdm", NULL));
    f->c.terms[0][0] = '0';
    assert_int_equal(tdm_ireader_share_lexicon(o, r), 0);
    assert_int_equal(tdm_ireader_share_lexicon(b, r), 0);
    assert_ptr_not_equal(tdm_ir_lexhash_id(o), tdm_ir_lexhash_id(r));
    assert_ptr_not_equal(tdm_ir_lexhash_id(b), tdm_ir_lexhash_id(r));
    check_lookups(r, &f->c);
    check_lookups(o, &other);
    uint64_t idx;
    assert_int_equal(tdm_ireader_find(b, "1", 1, &idx), TDM_OK);
    assert_int_equal(idx, 0);
    assert_int_equal(tdm_ireader_find(b, "0", 1, &idx), TDM_ERR_NOT_FOUND);
    assert_int_equal(tdm_ireader_find(r, "1", 1, &idx), TDM_ERR_NOT_FOUND);
    tdm_ireader_close(b);
    tdm_ireader_close(o);
    tdm_ireader_close(r);
    randcoll_free(&other);
}

/* A handle over partitions of a freshly opened index on two PoCL devices
 * (TDM_PARTITION_ON or _SPLIT): one table for the whole index and every
 * shard, and text queries answered as by the whole index on one device. */
static void handle_one_table(fixture *f, int partition)
{
    tdm_engine *e = tdm_test_two_devices(partfix_engine("cpu", partition, NULL, 0));
    if (!e)
        skip();
    tdm_engine *plain = partfix_engine("0", TDM_PARTITION_OFF, NULL, 0);
    tdm_index *ix = NULL, *wix = NULL;
    assert_int_equal(tdm_index_open(f->path, &ix), TDM_OK);
    assert_int_equal(tdm_index_open(f->path, &wix), TDM_OK);
    uint64_t made = tdm_ir_lexhash_builds();
    tdm_search *s = partfix_search(e, ix);
    assert_true(s->nparts >= 2);
    assert_int_equal(tdm_ir_lexhash_builds() - made, 1);
    for (int p = 0; p < s->nparts; p++)
        assert_ptr_equal(tdm_ir_lexhash_id(s->parts[p]->r), tdm_ir_lexhash_id(s->r));
    tdm_search *whole = partfix_search(plain, wix);
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 7, 40, 29, 0);
    for (size_t i = 0; i < qs->n; i++) {
        tdm_search_options o;
        partfix_options_for(&o, i, i % PARTFIX_NALGOS);
        tdm_search_result *p, *w;
        partfix_pair(s, whole, &qs->q[i], i, &o, "partitioned", PARTFIX_ALGO, &p, &w);
        tdm_search_result_free(p);
        tdm_search_result_free(w);
    }
    free(qs);
    tdm_search_close(whole);
    tdm_search_close(s);
    tdm_index_close(wix);
    tdm_index_close(ix);
    tdm_engine_close(plain);
    tdm_engine_close(e);
}

static void partitioned(void **state) { handle_one_table(*state, TDM_PARTITION_ON); }
static void split_handle(void **state) { handle_one_table(*state, TDM_PARTITION_SPLIT); }

int main(void)
{
    tdm_test_pocl_devices();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mem_shards),
        cmocka_unit_test(file_shards),
        cmocka_unit_test(other_lexicon),
        cmocka_unit_test(partitioned),
        cmocka_unit_test(split_handle),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
