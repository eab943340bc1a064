/* A split search handle (TANDEM_PARTITION=split, host/sched/partition.c,
 * docs/PARTITION.md) on several PoCL devices (POCL_DEVICES="pthread
 * pthread", and a second run with three): the whole index on every device
 * with a lane each and a shard on each beside it. Long single queries run
 * on every partition at once, the rest and every batch whole on one lane;
 * either way every answer is the whole index's on one device, bit for bit,
 * for every algorithm and k. The threshold (TANDEM_SPLIT_MIN_POSTINGS)
 * forced both ways and set between queries; pins, the direct policy and a
 * policy excluding a partition's lane run whole; batches whole; a memory
 * budget holding the whole index but not a shard beside it refused at
 * open; a partition whose device fails (TANDEM_FAULT_INJECT) sends the
 * query whole (the right answer), or, with no lane left, an error: never
 * a partial answer; several threads at once; the settings' bad values. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_priv.h"
#include "drive/search.h"
#include "partfix.h"
#include "plan/search_prepare.h"
#include "randcoll.h"
#include "resident/resident.h"
#include "testutil.h"

typedef randcoll_fixture fixture; /* plain: the whole index, one device */

#define NEVER "4611686018427387904" /* 2^62: no query splits */

/* The split engine over every PoCL device with the threshold `min`
 * (TANDEM_SPLIT_MIN_POSTINGS; NULL: the tuning table's), NULL with fewer
 * than two devices. */
static tdm_engine *engine_split(const char *min, const char *faults, uint64_t memory)
{
    if (min)
        setenv("TANDEM_SPLIT_MIN_POSTINGS", min, 1);
    tdm_engine *e = partfix_engine("cpu", TDM_PARTITION_SPLIT, faults, memory);
    unsetenv("TANDEM_SPLIT_MIN_POSTINGS");
    return tdm_test_two_devices(e);
}

static int setup(void **state) { return partfix_setup(state, 93, "split", "s.tdm"); }

#define MAXQ 120

/* The sum of q's lists' lengths in the whole index (what the split
 * decision reads); 0 for a query the index cannot build. */
static uint64_t postings_of(tdm_search *whole, const tdm_search_query *q)
{
    tdm_query wq;
    tdm_query_init(&wq);
    tdm_err e = {0};
    uint64_t sum = 0;
    if (tdm_search_query_build(whole, q, &wq, &e) == TDM_OK)
        for (size_t t = 0; t < wq.nterms; t++)
            sum += wq.terms[t].df;
    tdm_err_clear(&e);
    tdm_query_free(&wq);
    return sum;
}

/* What check_singles saw. */
typedef struct tally {
    size_t hits, split, whole;
} tally;

/* Every query alone through both handles: the same answer or the same
 * error; a query splits exactly when its postings reach `min` (0: never
 * checked). */
static tally check_singles(tdm_search *s, tdm_search *whole, const qset *qs, uint64_t min)
{
    tally t = {0, 0, 0};
    for (size_t i = 0; i < qs->n; i++) {
        uint64_t post = postings_of(whole, &qs->q[i]);
        for (size_t a = 0; a < PARTFIX_NALGOS; a++) {
            tdm_search_options o;
            partfix_options_for(&o, i, a);
            tdm_search_result *p, *w;
            if (partfix_pair(s, whole, &qs->q[i], i, &o, "split handle", PARTFIX_ALGO, &p, &w) ==
                TDM_OK) {
                t.hits += p->n;
                t.split += p->partitions > 0;
                t.whole += p->partitions == 0;
                if (min && (p->partitions > 0) != (post >= min))
                    fail_msg("query %zu: %llu postings, threshold %llu: ran on %u partitions",
                             i, (unsigned long long)post, (unsigned long long)min,
                             p->partitions);
                if (p->partitions == 0)
                    assert_true(p->device >= 0 || p->n == 0);
            }
            tdm_search_result_free(p);
            tdm_search_result_free(w);
        }
    }
    return t;
}

/* Threshold 1: every query with a posting on every partition. */
static void forced_split(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_split("1", NULL, 0);
    tdm_search *s = partfix_search(e, f->ix);
    int n = tdm_engine_device_count(e);
    assert_int_equal(s->nparts, n);
    assert_int_equal(s->ndev, n); /* and the whole index on every device */
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 5, tdm_test_small() ? 20 : MAXQ, 29, 41);
    tally t = check_singles(s, f->whole, qs, 1);
    print_message("threshold 1, %d devices: %zu split, %zu whole (no posting), %zu hits the "
                  "same\n", n, t.split, t.whole, t.hits);
    assert_true(t.split > 0 && t.hits > 0);
    tdm_sched_stats st = partfix_stats(s);
    assert_int_equal(st.split, t.split);
    assert_int_equal(st.split_fallbacks, 0);
    assert_int_equal(st.nlanes, 2 * n); /* the whole index's lanes, then the partitions' */
    free(qs);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* Threshold 2^62: every query whole on one lane. */
static void forced_whole(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_split(NEVER, NULL, 0);
    tdm_search *s = partfix_search(e, f->ix);
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 6, tdm_test_small() ? 20 : MAXQ, 29, 41);
    tally t = check_singles(s, f->whole, qs, 0);
    print_message("threshold 2^62: %zu whole, %zu hits the same\n", t.whole, t.hits);
    assert_int_equal(t.split, 0);
    assert_true(t.whole > 0 && t.hits > 0);
    assert_int_equal(partfix_stats(s).split, 0);
    free(qs);
    tdm_search_close(s);
    tdm_engine_close(e);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The queries' median postings: about half split, half not. */
static uint64_t median_postings(tdm_search *whole, const qset *qs)
{
    uint64_t v[MAXQ];
    size_t m = 0;
    for (size_t i = 0; i < qs->n; i++) {
        uint64_t p = postings_of(whole, &qs->q[i]);
        if (p)
            v[m++] = p;
    }
    qsort(v, m, sizeof *v, cmp_u64);
    return m ? v[m / 2] : 1;
}

/* A threshold between the queries: each splits exactly when its lists
 * reach it, and the tuning table's row where none is set. */
static void threshold(void **state)
{
    fixture *f = *state;
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 7, tdm_test_small() ? 20 : 60, 29, 0);
    uint64_t mid = median_postings(f->whole, qs);
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)mid);
    tdm_engine *e = engine_split(v, NULL, 0);
    if (!e) {
        free(qs);
        skip();
    }
    tdm_search *s = partfix_search(e, f->ix);
    tally t = check_singles(s, f->whole, qs, mid);
    print_message("threshold %llu postings: %zu split, %zu whole\n", (unsigned long long)mid,
                  t.split, t.whole);
    assert_true(t.split > 0 && t.whole > 0);
    tdm_search_close(s);
    tdm_engine_close(e);
    /* unset: the row's (PoCL: a CPU's, far above these queries' lists) */
    e = engine_split(NULL, NULL, 0);
    s = partfix_search(e, f->ix);
    t = check_singles(s, f->whole, qs, 0);
    assert_int_equal(t.split, 0);
    tdm_search_close(s);
    tdm_engine_close(e);
    free(qs);
}

/* A pin, the direct policy and a policy that excludes a partition's lane
 * run whole on the lanes, even above the threshold; batches run whole. */
static void whole_requests(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_split("1", NULL, 0);
    tdm_search *s = partfix_search(e, f->ix);
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 8, tdm_test_small() ? 12 : 40, 29, 0);
    int n = tdm_engine_device_count(e);
    for (size_t i = 0; i < qs->n; i++) {
        if (!postings_of(f->whole, &qs->q[i]))
            continue;
        for (int c = 0; c < 4; c++) {
            tdm_search_options o;
            partfix_options_for(&o, i, 1 + i % 6);
            if (c < 2)
                o.device = (int)(i + (size_t)c) % n; /* a pin */
            else
                o.policy = c == 2 ? TDM_POLICY_DIRECT : TDM_POLICY_GPU_ONLY;
            tdm_search_result *p = NULL, *w = NULL;
            int rp = tdm_search_terms(s, qs->q[i].terms, qs->q[i].nterms, &o, &p);
            tdm_search_options ow = o;
            ow.device = -1;
            ow.policy = TDM_POLICY_DEFAULT;
            assert_int_equal(tdm_search_terms(f->whole, qs->q[i].terms, qs->q[i].nterms, &ow,
                                              &w), TDM_OK);
            if (c == 3) { /* gpu-only on CPU lanes: no lane of the kind, as unsplit */
                assert_int_equal(rp, TDM_ERR_NO_DEVICE);
            } else {
                assert_int_equal(rp, TDM_OK);
                partfix_same(p, w, i, &o, "split handle, whole", PARTFIX_WHOLE);
                if (c < 2)
                    assert_int_equal(p->device, o.device);
            }
            tdm_search_result_free(p);
            tdm_search_result_free(w);
        }
    }
    /* batches: whole on the lanes, each answer the whole index's */
    for (size_t a = 0; a < PARTFIX_NALGOS; a++) {
        tdm_search_options o;
        partfix_request(&o, a, partfix_ks[a % 4]);
        partfix_batch(s, f->whole, qs, &o, "split handle's batch", PARTFIX_WHOLE);
    }
    assert_int_equal(partfix_stats(s).split, 0);
    free(qs);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* The whole index and a shard must fit each device together: a budget
 * holding the whole index alone is refused at open, saying what to use;
 * one holding both opens with neither in a list cache. */
static void memory(void **state)
{
    fixture *f = *state;
    uint64_t need = tdm_resident_bytes_needed(tdm_index_ireader(f->ix));
    tdm_engine *e = engine_split("1", NULL, need + need / 16);
    if (!e)
        skip();
    tdm_search *s = NULL;
    assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_ERR_DEVICE_MEMORY);
    assert_null(s);
    assert_non_null(strstr(tdm_last_error(), "partition split"));
    assert_non_null(strstr(tdm_last_error(), "do not fit"));
    tdm_engine_close(e);
    e = engine_split("1", NULL, need * 2 + 4096);
    s = partfix_search(e, f->ix);
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        tdm_list_cache_stats cs;
        assert_int_equal(tdm_search_cache_stats(s, d, &cs), TDM_OK);
        assert_int_equal(cs.cached, 0);
        assert_int_equal(s->parts[d]->dev[0].res.cache == NULL, 1);
        assert_int_equal(s->dev[d].res.cache == NULL, 1);
    }
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 10, tdm_test_small() ? 5 : 15, 29, 0);
    assert_true(check_singles(s, f->whole, qs, 1).split > 0);
    free(qs);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* A partition whose device fails: the split query runs whole on the
 * lanes (the right answer) and, once the partition's lane is dead, every
 * later query does; with every lane dead, errors. Never a partial answer. */
static void faults(void **state)
{
    fixture *f = *state;
    char all[64] = ""; /* every device lost at its lanes' first runs */
    tdm_engine *e = engine_split(NULL, NULL, 0);
    if (!e)
        skip();
    for (int d = 0; d < tdm_engine_device_count(e); d++)
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%d:lost@1", d ? "," : "", d);
    tdm_engine_close(e);
    const struct {
        const char *spec;
        int fallbacks; /* at least one split query sent whole */
        int errors;    /* some calls fail (no lane left) */
    } cases[] = {{"1:lost@2", 1, 0}, {"0:build@1", 1, 0}, {"1:oom@1", 0, 0}, {all, 1, 1}};
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 9, 12, 29, 0);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        e = engine_split("1", cases[c].spec, 0);
        tdm_search *s = partfix_search(e, f->ix);
        size_t ok = 0, failed = 0, split = 0;
        for (size_t i = 0; i < qs->n; i++) {
            if (!postings_of(f->whole, &qs->q[i]))
                continue;
            tdm_search_options o;
            partfix_options_for(&o, i, 1 + i % 6);
            tdm_search_result *p;
            char msg[512];
            if (partfix_faulty(s, f->whole, &qs->q[i], i, &o, cases[c].spec, 0, msg, sizeof msg,
                               &p) == TDM_OK) {
                split += p->partitions > 0;
                ok++;
            } else {
                assert_null(p);
                failed++;
            }
            tdm_search_result_free(p);
        }
        tdm_sched_stats st = partfix_stats(s);
        print_message("%s: %zu answered exactly (%zu split), %zu failed, %llu sent whole\n",
                      cases[c].spec, ok, split, failed,
                      (unsigned long long)st.split_fallbacks);
        assert_int_equal(st.split, split);
        if (cases[c].fallbacks)
            assert_true(st.split_fallbacks >= 1);
        else
            assert_int_equal(st.split_fallbacks, 0);
        if (cases[c].errors)
            assert_true(failed > 0);
        else
            assert_int_equal(failed, 0);
        tdm_search_close(s);
        tdm_engine_close(e);
    }
    free(qs);
}

typedef struct tjob {
    tdm_search *s, *whole;
    qset *qs;
    uint64_t min;
    tally t;
} tjob;

static void *thread_run(void *arg)
{
    tjob *j = arg;
    j->t = check_singles(j->s, j->whole, j->qs, j->min);
    return NULL;
}

/* Four threads at once: split and whole queries meet on the devices. */
static void threads(void **state)
{
    fixture *f = *state;
    enum { NT = 4 };
    tjob jobs[NT];
    for (int t = 0; t < NT; t++) {
        jobs[t] = (tjob){NULL, f->whole, malloc(sizeof(qset)), 0, {0, 0, 0}};
        randcoll_queries(jobs[t].qs, &f->c, 100 + t, tdm_test_small() ? 6 : 20, 29, 0);
    }
    uint64_t mid = median_postings(f->whole, jobs[0].qs);
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)mid);
    tdm_engine *e = engine_split(v, NULL, 0);
    tdm_search *s = NULL;
    if (e)
        assert_int_equal(tdm_search_open(e, f->ix, &s), TDM_OK);
    pthread_t th[NT];
    for (int t = 0; e && t < NT; t++) {
        jobs[t].s = s;
        jobs[t].min = mid;
        pthread_create(&th[t], NULL, thread_run, &jobs[t]);
    }
    size_t split = 0;
    for (int t = 0; e && t < NT; t++) {
        pthread_join(th[t], NULL);
        assert_true(jobs[t].t.hits > 0);
        split += jobs[t].t.split;
    }
    for (int t = 0; t < NT; t++)
        free(jobs[t].qs);
    if (!e)
        skip();
    assert_true(split > 0);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* The settings: split accepted, the threshold's bad values refused
 * naming the variable. */
static void setting(void **state)
{
    (void)state;
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "cpu";
    o.calibrate = 0;
    tdm_engine *e = NULL;
    setenv("TANDEM_PARTITION", "split", 1);
    assert_int_equal(tdm_engine_open(&o, &e), TDM_OK);
    tdm_engine_close(e);
    setenv("TANDEM_PARTITION", "splitting", 1);
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "expected auto, on, off or split"));
    unsetenv("TANDEM_PARTITION");
    static const char *bad[] = {"0", "-1", "x", "4611686018427387905", "1e6"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("TANDEM_SPLIT_MIN_POSTINGS", bad[i], 1);
        assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
        assert_non_null(strstr(tdm_last_error(), "TANDEM_SPLIT_MIN_POSTINGS"));
    }
    unsetenv("TANDEM_SPLIT_MIN_POSTINGS");
    o.partition = TDM_PARTITION_SPLIT + 1;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(setting),
        cmocka_unit_test(forced_split),
        cmocka_unit_test(forced_whole),
        cmocka_unit_test(threshold),
        cmocka_unit_test(whole_requests),
        cmocka_unit_test(memory),
        cmocka_unit_test(faults),
        cmocka_unit_test(threads),
    };
    return tdm_test_run_group("split", tests, sizeof tests / sizeof *tests, setup,
                              partfix_teardown);
}
