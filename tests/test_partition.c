/* A partitioned search handle (host/sched/partition.c, docs/PARTITION.md)
 * on several PoCL devices (POCL_DEVICES="pthread pthread", and a second
 * run with three): the index split by docid range, a shard resident on
 * each device, every query on all of them at once. Single queries and
 * batches answer exactly as the whole index on one device, bit for bit,
 * for every algorithm, k and BM25 parameters (unknown terms, repeats,
 * weights, empty and bad queries included), also from several threads; a
 * memory budget (TANDEM_DEVICE_MEMORY) below the index partitions it by
 * itself on an engine of GPU lanes whose shards fit (TANDEM_LANE_KINDS),
 * never with a CPU lane or a shard too large (the list cache then); a
 * policy excluding a partition's only lane is refused up front; a
 * partition whose device fails (TANDEM_FAULT_INJECT) gives an error
 * naming it or the right answer, never a partial one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_priv.h"
#include "drive/search.h"
#include "partfix.h"
#include "randcoll.h"
#include "resident/resident.h"
#include "testutil.h"

typedef randcoll_fixture fixture; /* plain: the whole index, one device */

static int setup(void **state) { return partfix_setup(state, 91, "partition", "p.tdm"); }

/* The engine over every PoCL device, partitioned (NULL: fewer than two). */
static tdm_engine *engine_parts(int partition, const char *faults, uint64_t memory)
{
    return tdm_test_two_devices(partfix_engine("cpu", partition, faults, memory));
}

#define MAXQ 120

/* Every query alone through both handles: the same answer or the same error. */
static size_t check_singles(tdm_search *parts, tdm_search *whole, const qset *qs)
{
    size_t hits = 0;
    for (size_t i = 0; i < qs->n; i++)
        for (size_t a = 0; a < PARTFIX_NALGOS; a++) {
            tdm_search_options o;
            partfix_options_for(&o, i, a);
            tdm_search_result *p, *w;
            if (partfix_pair(parts, whole, &qs->q[i], i, &o, "partitioned", PARTFIX_ALGO, &p,
                             &w) == TDM_OK)
                hits += p->n;
            tdm_search_result_free(p);
            tdm_search_result_free(w);
        }
    return hits;
}

static void singles(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_parts(TDM_PARTITION_ON, NULL, 0);
    tdm_search *s = partfix_search(e, f->ix);
    assert_int_equal(s->nparts, tdm_engine_device_count(e));
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 5, tdm_test_small() ? 20 : MAXQ, 29, 41);
    size_t hits = check_singles(s, f->whole, qs);
    print_message("%zu queries x %zu algorithms on %d partitions: %zu hits the same\n", qs->n,
                  PARTFIX_NALGOS, s->nparts, hits);
    assert_true(hits > 0);
    partfix_no_pin(s, &qs->q[1]);
    tdm_sched_stats st = partfix_stats(s);
    assert_int_equal(st.nlanes, s->nparts);
    assert_true(st.answered > 0);
    free(qs);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* Every algorithm as one batch call: each result the whole index's. */
static void batches(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_parts(TDM_PARTITION_ON, NULL, 0);
    tdm_search *s = partfix_search(e, f->ix);
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 6, tdm_test_small() ? 30 : MAXQ, 29, 41);
    size_t hits = 0;
    for (size_t a = 0; a < PARTFIX_NALGOS; a++)
        for (size_t ki = 0; ki < 4; ki += 1 + (a % 2)) {
            tdm_search_options o;
            partfix_request(&o, a, partfix_ks[ki]);
            hits += partfix_batch(s, f->whole, qs, &o, "partitioned", PARTFIX_ALGO);
        }
    print_message("batches of %zu: %zu hits the same\n", qs->n, hits);
    free(qs);
    tdm_search_close(s);
    tdm_engine_close(e);
}

typedef struct tjob {
    tdm_search *parts, *whole;
    qset *qs;
    size_t hits;
} tjob;

static void *thread_run(void *arg)
{
    tjob *j = arg;
    j->hits = check_singles(j->parts, j->whole, j->qs);
    return NULL;
}

/* Four threads at once on one partitioned handle (jobs meet in the lanes). */
static void threads(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_parts(TDM_PARTITION_ON, NULL, 0);
    tdm_search *s = partfix_search(e, f->ix);
    enum { NT = 4 };
    pthread_t th[NT];
    tjob jobs[NT];
    for (int t = 0; t < NT; t++) {
        jobs[t] = (tjob){s, f->whole, malloc(sizeof(qset)), 0};
        randcoll_queries(jobs[t].qs, &f->c, 100 + t, tdm_test_small() ? 6 : 25, 29, 0);
        pthread_create(&th[t], NULL, thread_run, &jobs[t]);
    }
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        assert_true(jobs[t].hits > 0);
        free(jobs[t].qs);
    }
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* A budget below the whole index partitions it by itself (auto); every
 * shard then fits and is held whole; a budget above it does not. */
/* The engine over every PoCL device with the lane kinds `kinds` ("gpu":
 * every device a GPU lane; "cpu,gpu": the first a CPU lane, the others
 * GPU lanes; NULL: the devices' own, CPUs here), partitioning `partition`,
 * a budget of `memory` bytes (NULL: fewer than two devices). */
static tdm_engine *engine_kinds(const char *kinds, int partition, uint64_t memory)
{
    char spec[64] = "";
    tdm_engine *e = engine_parts(TDM_PARTITION_OFF, NULL, 0); /* the device count */
    if (!e)
        return NULL;
    int n = tdm_engine_device_count(e);
    tdm_engine_close(e);
    for (int i = 0; kinds && i < n; i++)
        snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%s", i ? "," : "",
                 !strcmp(kinds, "gpu") || i ? "gpu" : "cpu");
    tdm_engine_options o;
    partfix_options(&o, "cpu", partition);
    o.fault_inject = "";
    o.lane_kinds = kinds ? spec : "";
    o.device_memory = memory;
    return tdm_test_engine_with(&o);
}

/* Whether the handle on e holds its index partitioned, and whether each of
 * its devices keeps a list cache (all or none, as wanted). */
static int opened_parts(tdm_engine *e, const tdm_index *ix, int cached)
{
    tdm_search *s = NULL;
    assert_int_equal(tdm_search_open(e, ix, &s), TDM_OK);
    assert_int_equal(tdm_search_wait_ready(s), TDM_OK); /* whole or each partition's */
    int parts = s->nparts;
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        tdm_list_cache_stats cs;
        assert_int_equal(tdm_search_cache_stats(s, d, &cs), TDM_OK);
        if (cs.cached != cached)
            fail_msg("device %d: cached %d, want %d (partitioned: %d)", d, cs.cached, cached,
                     parts);
    }
    tdm_search_close(s);
    return parts;
}

/* auto partitions an engine of GPUs (two or more) when the index does not
 * fit one of them and a shard fits each (docs/PARTITION.md): answers the
 * whole index's, no list cache. */
static void auto_gpus(void **state)
{
    fixture *f = *state;
    uint64_t need = tdm_resident_bytes_needed(tdm_index_ireader(f->ix));
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)(need * 3 / 4));
    setenv("TANDEM_DEVICE_MEMORY", v, 1); /* the budget by the setting */
    tdm_engine *e = engine_kinds("gpu", TDM_PARTITION_DEFAULT, 0);
    unsetenv("TANDEM_DEVICE_MEMORY");
    tdm_search *s = partfix_search(e, f->ix);
    assert_int_equal(s->nparts, tdm_engine_device_count(e));
    for (int p = 0; p < s->nparts; p++) {
        tdm_list_cache_stats cs;
        assert_int_equal(tdm_search_cache_stats(s, p, &cs), TDM_OK);
        assert_int_equal(cs.cached, 0); /* its shard fits: no list cache */
    }
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 8, tdm_test_small() ? 5 : 20, 29, 0);
    assert_true(check_singles(s, f->whole, qs) > 0);
    tdm_search_close(s);
    tdm_engine_close(e);
    free(qs);
    /* room for the whole index: one handle on every device, as before */
    e = engine_kinds("gpu", TDM_PARTITION_DEFAULT, need * 2);
    assert_int_equal(opened_parts(e, f->ix, 0), 0);
    tdm_engine_close(e);
    /* off: never, whatever the budget (the list cache then) */
    e = engine_kinds("gpu", TDM_PARTITION_OFF, need * 3 / 4);
    assert_int_equal(opened_parts(e, f->ix, 1), 0);
    tdm_engine_close(e);
}

/* auto leaves the list cache where partitioning would not help or not be
 * safe: a CPU device in the engine (a mixed engine, or CPUs only), or a
 * shard too large for a device's budget. */
static void auto_not(void **state)
{
    fixture *f = *state;
    const tdm_ireader *r = tdm_index_ireader(f->ix);
    uint64_t need = tdm_resident_bytes_needed(r);
    tdm_engine *e = engine_kinds("cpu,gpu", TDM_PARTITION_DEFAULT, need * 3 / 4);
    if (!e)
        skip();
    assert_int_equal(opened_parts(e, f->ix, 1), 0);
    tdm_engine_close(e);
    e = engine_kinds(NULL, TDM_PARTITION_DEFAULT, need * 3 / 4); /* PoCL: CPU devices */
    assert_int_equal(opened_parts(e, f->ix, 1), 0);
    tdm_engine_close(e);
    /* GPUs, a budget below any shard's share of the lists (but room for
       the small sections and a cache) */
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t small = need - in->section_size[0];
    e = engine_kinds("gpu", TDM_PARTITION_DEFAULT, small + in->section_size[0] / 8);
    assert_int_equal(opened_parts(e, f->ix, 1), 0);
    tdm_engine_close(e);
}

/* A policy that excludes a partition's only lane is refused up front,
 * saying so (single queries and batches, the request's or the engine's
 * policy); the others run. TANDEM_PARTITION=on forces a mixed engine. */
static void policies(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_kinds("cpu,gpu", TDM_PARTITION_ON, 0);
    tdm_search *s = partfix_search(e, f->ix);
    assert_int_equal(s->nparts, tdm_engine_device_count(e));
    tdm_search_term t = {f->c.terms[0], 0, 1.0};
    tdm_search_query q = {NULL, &t, 1};
    tdm_search_options o;
    tdm_search_options_init(&o);
    static const struct {
        int policy, rc;
        const char *part;
    } cases[] = {{TDM_POLICY_GPU_ONLY, TDM_ERR_INVALID_ARG,
                  "partition 0's only lane, device 0, is a CPU lane"},
                 {TDM_POLICY_CPU_ONLY, TDM_ERR_INVALID_ARG,
                  "partition 1's only lane, device 1, is a GPU lane"},
                 {TDM_POLICY_HYBRID, TDM_OK, NULL},
                 {TDM_POLICY_BEST, TDM_OK, NULL},
                 {TDM_POLICY_DIRECT, TDM_OK, NULL}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        o.policy = cases[c].policy;
        tdm_search_result *r = NULL, *rs[1] = {NULL};
        assert_int_equal(tdm_search_terms(s, &t, 1, &o, &r), cases[c].rc);
        if (cases[c].part) {
            assert_non_null(strstr(tdm_last_error(), cases[c].part));
            assert_non_null(strstr(tdm_last_error(), "partitioned"));
        }
        tdm_search_result_free(r);
        assert_int_equal(tdm_search_batch(s, &q, 1, &o, rs), cases[c].rc);
        if (cases[c].part)
            assert_non_null(strstr(tdm_last_error(), cases[c].part));
        tdm_search_result_free(rs[0]);
    }
    tdm_search_close(s);
    tdm_engine_close(e);
    /* the engine's policy, for requests that leave it to the engine */
    setenv("TANDEM_POLICY", "gpu-only", 1);
    e = engine_kinds("cpu,gpu", TDM_PARTITION_ON, 0);
    unsetenv("TANDEM_POLICY");
    s = partfix_search(e, f->ix);
    tdm_search_options_init(&o);
    tdm_search_result *r = NULL;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &r), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "policy gpu-only"));
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* Faults on a partition's device: each call gives the whole index's answer
 * or an error naming the partition, never a partial answer; a dead lane's
 * partition fails every later query, an out-of-memory run is run again. */
static void faults(void **state)
{
    fixture *f = *state;
    static const char *specs[] = {"1:lost@2", "1:build@1", "0:oom@1,1:oom@2", "0:lost@3"};
    qset *qs = malloc(sizeof *qs);
    randcoll_queries(qs, &f->c, 9, 12, 29, 0);
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        tdm_engine *e = engine_parts(TDM_PARTITION_ON, specs[k], 0);
        tdm_search *s = partfix_search(e, f->ix);
        size_t ok = 0, failed = 0;
        for (size_t i = 0; i < qs->n; i++) {
            if (!qs->q[i].nterms)
                continue;
            tdm_search_options o;
            partfix_options_for(&o, i, 1 + i % 6);
            tdm_search_result *p;
            char msg[512];
            if (partfix_faulty(s, f->whole, &qs->q[i], i, &o, "partitioned", PARTFIX_ALGO, msg,
                               sizeof msg, &p) == TDM_OK) {
                ok++;
            } else {
                if (!strstr(msg, "partition 1") && !strstr(msg, "partition 0"))
                    fail_msg("%s: query %zu failed without naming the partition: %s", specs[k],
                             i, msg);
                failed++;
            }
            tdm_search_result_free(p);
        }
        /* a batch after the faults: whole answers or a failed call */
        tdm_search_options o;
        tdm_search_options_init(&o);
        tdm_search_result *res[MAXQ];
        if (tdm_search_batch(s, qs->q, qs->n, &o, res) == TDM_OK) {
            for (size_t i = 0; i < qs->n; i++) {
                tdm_search_result *w = NULL;
                assert_int_equal(tdm_search_terms(f->whole, qs->q[i].terms, qs->q[i].nterms,
                                                  &o, &w), TDM_OK);
                partfix_same(res[i], w, i, &o, "partitioned", PARTFIX_ALGO);
                tdm_search_result_free(w);
                tdm_search_result_free(res[i]);
            }
        } else if (!strstr(tdm_last_error(), "partition ")) {
            fail_msg("%s: batch failed without naming the partition: %s", specs[k],
                     tdm_last_error());
        }
        print_message("%s: %zu answered exactly, %zu failed\n", specs[k], ok, failed);
        if (strstr(specs[k], "oom"))
            assert_int_equal(failed, 0); /* run again: answered */
        else
            assert_true(failed > 0);   /* the partition's lane is dead */
        tdm_search_close(s);
        tdm_engine_close(e);
    }
    free(qs);
}

/* The setting's values: a bad one fails the open naming the variable. */
static void setting(void **state)
{
    (void)state;
    setenv("TANDEM_PARTITION", "sideways", 1);
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "cpu";
    tdm_engine *e = NULL;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_PARTITION"));
    unsetenv("TANDEM_PARTITION");
    o.partition = 9;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(setting),
        cmocka_unit_test(singles),
        cmocka_unit_test(batches),
        cmocka_unit_test(threads),
        cmocka_unit_test(auto_gpus),
        cmocka_unit_test(auto_not),
        cmocka_unit_test(policies),
        cmocka_unit_test(faults),
    };
    return tdm_test_run_group("partition", tests, sizeof tests / sizeof *tests, setup,
                              partfix_teardown);
}
