/* The exact merge of partitions' answers (host/sched/partition_merge.c),
 * without a device: tdm_hits_merge, which the partitioned and split
 * handles and tandem-mpi's ranks share, against a sort of every list's
 * hits (score descending, docid ascending) over random lists with many
 * equal scores, empty lists and k below, at and above the total; and
 * tdm_part_merge's result: those hits, the partitions' work added up,
 * waits the longest, the first partition's device. */
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "sched/partition.h"
#include "sched/partition_priv.h"
#include "drive/search_run.h"
#include "testutil.h"

enum { MAXL = 7, MAXN = 60 };

static int order(const void *a, const void *b)
{
    const tdm_search_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return (x->docid > y->docid) - (x->docid < y->docid);
}

/* m lists of random lengths (some empty) over disjoint docids (list l
 * holds docids = l mod m), few distinct scores (ties), each sorted best
 * first; every hit named for its list. all[] receives them all. */
static size_t make_lists(tdm_rng *g, size_t m, tdm_search_hit lists[][MAXN], size_t *ns,
                         tdm_search_hit *all)
{
    static const char *names[MAXL] = {"l0", "l1", "l2", "l3", "l4", "l5", "l6"};
    size_t total = 0;
    for (size_t l = 0; l < m; l++) {
        ns[l] = tdm_rng_below(g, 4) == 0 ? 0 : tdm_rng_below(g, MAXN + 1);
        for (size_t h = 0; h < ns[l]; h++) {
            lists[l][h].docid = (uint32_t)(l + m * (h * 3 + tdm_rng_below(g, 3)));
            lists[l][h].score = (float)tdm_rng_below(g, 8) / 4.0f;
            lists[l][h].name = names[l];
        }
        qsort(lists[l], ns[l], sizeof lists[l][0], order);
        memcpy(all + total, lists[l], ns[l] * sizeof *all);
        total += ns[l];
    }
    qsort(all, total, sizeof *all, order);
    return total;
}

static void hits_merge_matches_sort(void **state)
{
    (void)state;
    static tdm_search_hit lists[MAXL][MAXN], all[MAXL * MAXN], out[MAXL * MAXN + 8];
    tdm_rng g;
    tdm_rng_seed(&g, 31);
    for (int round = 0; round < 400; round++) {
        size_t m = 1 + tdm_rng_below(&g, MAXL), ns[MAXL], at[MAXL];
        size_t total = make_lists(&g, m, lists, ns, all);
        const tdm_search_hit *lp[MAXL];
        for (size_t l = 0; l < m; l++)
            lp[l] = lists[l];
        size_t ks[] = {0, 1, 10, total ? total - 1 : 0, total, total + 5};
        for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
            size_t k = ks[i], want = k < total ? k : total;
            memset(out, 0, sizeof out);
            assert_int_equal(tdm_hits_merge(lp, ns, m, k, at, out), want);
            for (size_t h = 0; h < want; h++) {
                assert_int_equal(out[h].docid, all[h].docid);
                assert_true(out[h].score == all[h].score);
                assert_string_equal(out[h].name, all[h].name); /* its list's */
            }
            assert_null(out[want].name); /* nothing past min(k, total) */
        }
    }
    /* no lists */
    size_t at[1];
    assert_int_equal(tdm_hits_merge(NULL, NULL, 0, 10, at, out), 0);
}

static tdm_search_result *answer(const tdm_search_hit *hits, size_t n, int launches, double queue)
{
    tdm_search_result *r = calloc(1, sizeof *r);
    r->hits = calloc(n ? n : 1, sizeof *r->hits);
    if (n)
        memcpy(r->hits, hits, n * sizeof *hits);
    r->n = n;
    r->launches = (uint32_t)launches;
    r->bytes_up = 100u * (uint64_t)launches;
    r->queue_seconds = queue;
    r->batch = (uint32_t)launches;
    return r;
}

static void part_merge_result(void **state)
{
    (void)state;
    struct tdm_search parts[3], s, *pp[3] = {&parts[0], &parts[1], &parts[2]};
    memset(parts, 0, sizeof parts);
    memset(&s, 0, sizeof s);
    for (int p = 0; p < 3; p++)
        parts[p].device_base = 4 + p;
    s.parts = pp;
    s.nparts = 3;
    tdm_search_hit a[] = {{2, 3.0f, "a"}, {8, 1.0f, "a"}};
    tdm_search_hit b[] = {{1, 3.0f, "b"}, {5, 2.0f, "b"}, {7, 1.0f, "b"}};
    tdm_search_result *res[3] = {answer(a, 2, 1, 0.5), answer(b, 3, 2, 0.25),
                                 answer(NULL, 0, 4, 0)};
    tdm_search_result *r = NULL;
    tdm_err e = {0};
    assert_int_equal(tdm_part_merge(&s, res, 4, &r, &e), TDM_OK);
    assert_int_equal(r->n, 4);
    uint32_t want[] = {1, 2, 5, 7}; /* 3.0 by docid, then 2.0, then 1.0 by docid */
    for (int h = 0; h < 4; h++)
        assert_int_equal(r->hits[h].docid, want[h]);
    assert_string_equal(r->hits[0].name, "b");
    assert_int_equal(r->partitions, 3);
    assert_int_equal(r->device, 4);
    assert_int_equal(r->first_device, -1);
    assert_int_equal(r->launches, 7);
    assert_int_equal(r->bytes_up, 700);
    assert_int_equal(r->batch, 4);
    assert_true(r->queue_seconds == 0.5);
    tdm_search_result_release(r);
    tdm_part_results_free(res, 3);
    for (int p = 0; p < 3; p++)
        assert_null(res[p]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hits_merge_matches_sort),
        cmocka_unit_test(part_merge_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
