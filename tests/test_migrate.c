/* Griffin's intra-query migration (host/sched/migrate.c, drive/and_step.h,
 * docs/SCHED.md):
 *  - the step kernels (cl/and_step.cl) on every device against their
 *    plain-C references on random and edge-case inputs, bit for bit;
 *  - ranked AND forced to move after every step between two PoCL lanes
 *    (POCL_DEVICES="pthread pthread") gives exactly the float oracle's top
 *    k, and the same as the AND run whole on one lane; from many threads;
 *  - the decision: tdm_migrate_choose on made-up lanes, and on cost models
 *    fitted to times where a CPU lane's cost follows Griffin's ratio;
 *  - a lane failing mid-query (TANDEM_FAULT_INJECT) hands the query on from
 *    its last committed intermediate: every query answered once, right. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "index/index_priv.h"
#include "index/writer.h"
#include "plan/and_select.h"
#include "drive/and_step.h"
#include "harness/oracle.h"
#include "randcoll.h"
#include "sched/sched_priv.h"
#include "testutil.h"

/* ---- the kernels against their references */

static cl_mem buf(tdm_device *d, const void *host, size_t bytes)
{
    tdm_err err = {0};
    cl_mem m = NULL;
    if (bytes < 4)
        bytes = 4;
    if (tdm_buffer_create(d, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                          (void *)host, &m, &err))
        fail_msg("buffer: %s", tdm_err_msg(&err));
    return m;
}

static void rd(tdm_device *d, cl_mem m, void *host, size_t bytes)
{
    if (bytes && clEnqueueReadBuffer(d->queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL))
        fail_msg("read");
}

static void run(tdm_device *d, const char *name, const tdm_karg *a, cl_uint na, size_t items)
{
    tdm_err err = {0};
    size_t wg = d->wg_size;
    if (tdm_kernel_launch(d, name, a, na, tdm_round_up(items ? items : 1, wg), wg, 0, NULL, NULL,
                          &err))
        fail_msg("%s: %s", name, tdm_err_msg(&err));
}

/* Sorted ascending distinct docids: n of them below nd. */
static void sorted(tdm_rng *g, uint32_t *d, uint32_t n, uint32_t nd)
{
    uint32_t k = 0;
    for (uint32_t x = 0; x < nd && k < n; x++)
        if (tdm_rng_u32(g) % (nd - x) < n - k)
            d[k++] = x;
}

/* One case on device d: a lead of m0 postings, a probe list of m1, nt
 * columns, `done` of them before the probe; candidates optionally shuffled. */
static void kernel_case(tdm_device *d, tdm_rng *g, uint32_t nd, uint32_t m0, uint32_t m1,
                        uint32_t nt, int kind)
{
    uint32_t *dl = malloc(nd * 4), *d0 = malloc((m0 + 1) * 4), *f0 = malloc((m0 + 1) * 4);
    uint32_t *d1 = malloc((m1 + 1) * 4), *f1 = malloc((m1 + 1) * 4);
    for (uint32_t i = 0; i < nd; i++)
        dl[i] = i % 9 ? tdm_rng_range(g, 1, 3000) : 0;
    sorted(g, d0, m0, nd);
    sorted(g, d1, m1, nd);
    for (uint32_t i = 0; i < m0; i++)
        f0[i] = tdm_rng_range(g, 1, 40);
    for (uint32_t i = 0; i < m1; i++)
        f1[i] = tdm_rng_range(g, 1, 40);
    float qw0 = 0.5f + (float)tdm_rng_range(g, 0, 1000) / 100.0f, qw1 = 1.75f;
    float c0 = 0.3f, c1 = 0.9f / 1000.0f * (float)tdm_rng_range(g, 1, 3);
    cl_uint k = (cl_uint)kind, m0u = m0, m1u = m1, ndu = (cl_uint)nd;
    /* lead */
    uint32_t *rc = malloc((m0 + 1) * 4), *gc = malloc((m0 + 1) * 4);
    size_t cb = ((size_t)m0 * nt + 1) * 4;
    float *rcol = calloc(1, cb), *gcol = calloc(1, cb);
    tdm_astep_ref_lead(d0, f0, m0, dl, qw0, kind, c0, c1, rc, rcol);
    /* the other columns: random scores, as earlier steps would have left */
    for (uint32_t j = 1; j + 1 < nt; j++)
        for (uint32_t i = 0; i < m0; i++)
            rcol[(size_t)j * m0 + i] = (float)tdm_rng_range(g, 0, 1 << 20) / 4096.0f;
    cl_mem bdl = buf(d, dl, nd * 4), bd0 = buf(d, d0, m0 * 4), bf0 = buf(d, f0, m0 * 4);
    cl_mem bc = buf(d, NULL, m0 * 4), bcol = buf(d, NULL, cb);
    tdm_karg la[] = {TDM_KARG_MEM(&bd0), TDM_KARG_MEM(&bf0), TDM_KARG_U32(&m0u),
                     TDM_KARG_MEM(&bdl), TDM_KARG_U32(&ndu), {sizeof qw0, &qw0},
                     TDM_KARG_U32(&k),   {sizeof c0, &c0},   {sizeof c1, &c1},
                     TDM_KARG_MEM(&bc),  TDM_KARG_MEM(&bcol)};
    run(d, "tdm_and_step_lead", la, 11, m0);
    rd(d, bc, gc, m0 * 4);
    rd(d, bcol, gcol, (size_t)m0 * 4);
    assert_memory_equal(gc, rc, (size_t)m0 * 4);
    assert_memory_equal(gcol, rcol, (size_t)m0 * 4);
    /* probe with done = nt - 1 columns (those of rcol), stride m0 */
    uint32_t done = nt - 1;
    clReleaseMemObject(bcol);
    bcol = buf(d, rcol, cb);
    cl_mem boc = buf(d, NULL, m0 * 4), bocol = buf(d, NULL, cb);
    cl_mem bd1 = buf(d, d1, m1 * 4), bf1 = buf(d, f1, m1 * 4);
    static const cl_uint zero = 0;
    cl_mem bn = buf(d, &zero, 4);
    cl_uint n = m0, stride = m0, dn = done, os = m0;
    tdm_karg pa[] = {TDM_KARG_MEM(&bc),   TDM_KARG_MEM(&bcol), TDM_KARG_U32(&n),
                     TDM_KARG_U32(&stride), TDM_KARG_U32(&dn), TDM_KARG_MEM(&bd1),
                     TDM_KARG_MEM(&bf1),  TDM_KARG_U32(&m1u),  TDM_KARG_MEM(&bdl),
                     TDM_KARG_U32(&ndu),  {sizeof qw1, &qw1},  TDM_KARG_U32(&k),
                     {sizeof c0, &c0},    {sizeof c1, &c1},    TDM_KARG_MEM(&boc),
                     TDM_KARG_MEM(&bocol), TDM_KARG_U32(&os),  TDM_KARG_MEM(&bn)};
    run(d, "tdm_and_step_probe", pa, 18, m0);
    uint32_t gn = 0;
    rd(d, bn, &gn, 4);
    uint32_t *roc = malloc((m0 + 1) * 4), *goc = malloc((m0 + 1) * 4);
    float *rocol = calloc(1, cb), *gocol = calloc(1, cb);
    uint32_t rn = tdm_astep_ref_probe(rc, rcol, m0, m0, done, d1, f1, m1, dl, qw1, kind, c0, c1,
                                      roc, rocol, m0);
    assert_int_equal(gn, rn);
    rd(d, boc, goc, m0 * 4);
    rd(d, bocol, gocol, cb - 4);
    /* the device's order is its atomics': match each survivor by docid */
    for (uint32_t i = 0; i < gn; i++) {
        uint32_t r = 0;
        while (r < rn && roc[r] != goc[i])
            r++;
        if (r == rn)
            fail_msg("survivor %u not in the reference", goc[i]);
        for (uint32_t j = 0; j <= done; j++)
            assert_memory_equal(&gocol[(size_t)j * m0 + i], &rocol[(size_t)j * m0 + r], 4);
    }
    /* final: the sum in a term order that is not the column order */
    uint32_t sum_col[8];
    for (uint32_t t = 0; t < nt; t++)
        sum_col[t] = (t * 3 + 1) % nt;
    for (uint32_t t = 0; t < nt; t++) /* a permutation */
        for (uint32_t u = 0; u < t; u++)
            if (sum_col[u] == sum_col[t])
                sum_col[t] = (sum_col[t] + 1) % nt, u = (uint32_t)-1;
    cl_mem bsc = buf(d, sum_col, nt * 4), bhs = buf(d, NULL, m0 * 4);
    cl_uint ntu = nt;
    float *rhs = malloc((m0 + 1) * 4), *ghs = malloc((m0 + 1) * 4);
    tdm_karg fa[] = {TDM_KARG_MEM(&bocol), TDM_KARG_U32(&gn), TDM_KARG_U32(&os),
                     TDM_KARG_U32(&ntu), TDM_KARG_MEM(&bsc), TDM_KARG_MEM(&bhs)};
    cl_uint gnu = gn;
    fa[1] = (tdm_karg)TDM_KARG_U32(&gnu);
    run(d, "tdm_and_step_final", fa, 6, gn);
    rd(d, bhs, ghs, (size_t)gn * 4);
    tdm_astep_ref_final(gocol, gn, m0, nt, sum_col, rhs);
    assert_memory_equal(ghs, rhs, (size_t)gn * 4);
    cl_mem all[] = {bdl, bd0, bf0, bc, bcol, boc, bocol, bd1, bf1, bn, bsc, bhs};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        clReleaseMemObject(all[i]);
    free(dl), free(d0), free(f0), free(d1), free(f1), free(rc), free(gc), free(rcol), free(gcol);
    free(roc), free(goc), free(rocol), free(gocol), free(rhs), free(ghs);
}

static void kernels_vs_reference(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng g;
    tdm_rng_seed(&g, 1601);
    int rounds = tdm_test_small() ? 4 : 24;
    for (int di = 0; di < tdm_engine_device_count(e); di++) {
        tdm_device *d = tdm_engine_device(e, di);
        /* edge cases: one candidate, none found, every one found, one group, more */
        const uint32_t cases[][4] = {{50, 1, 50, 2},  {50, 1, 1, 3},    {5000, 300, 4000, 2},
                                     {900, 900, 900, 4}, {900, 256, 255, 2}, {900, 257, 2, 5}};
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            for (int kind = 0; kind < 2; kind++)
                kernel_case(d, &g, cases[c][0], cases[c][1], cases[c][2], cases[c][3], kind);
        for (int r = 0; r < rounds; r++) {
            uint32_t nd = tdm_rng_range(&g, 1, 20000);
            kernel_case(d, &g, nd, tdm_rng_range(&g, 1, nd), tdm_rng_range(&g, 1, nd),
                        tdm_rng_range(&g, 2, 8), r % 2);
        }
    }
    tdm_engine_close(e);
}

/* ---- the decision */

static void choose_made_up(void **state)
{
    (void)state;
    tdm_mig_in in = {.nl = 3, .cur = 0, .ok = {1, 1, 1}, .rest = {1.0, 0.5, 0.9}};
    assert_int_equal(tdm_migrate_choose(&in), 1); /* 0.5 < 0.8 x 1.0 */
    in.rest[1] = 0.85;
    assert_int_equal(tdm_migrate_choose(&in), 0); /* within the margin: stay */
    in.rest[1] = 0.2;
    in.wait[1] = 0.7;                             /* its queue makes it late */
    assert_int_equal(tdm_migrate_choose(&in), 0);
    in.wait[1] = 0.1;
    in.move[1] = 0.6;                             /* so does carrying the intermediate */
    assert_int_equal(tdm_migrate_choose(&in), 0);
    in.move[1] = 0.1;
    assert_int_equal(tdm_migrate_choose(&in), 1);
    in.ok[1] = 0;                                 /* dead, failed it, or of another kind */
    assert_int_equal(tdm_migrate_choose(&in), 0);
    in.rest[2] = 0.1;
    assert_int_equal(tdm_migrate_choose(&in), 2);
    /* force: the next allowed lane, round robin, whatever the model */
    tdm_mig_in f = {.nl = 3, .cur = 2, .force = 1, .ok = {1, 1, 1}, .rest = {9, 9, 0}};
    assert_int_equal(tdm_migrate_choose(&f), 0);
    f.ok[0] = 0;
    assert_int_equal(tdm_migrate_choose(&f), 1);
    f.ok[1] = 0;
    assert_int_equal(tdm_migrate_choose(&f), 2); /* nowhere else: stay */
}

/* Models fitted to Griffin's shape of costs: a GPU lane pays for every
 * posting of the lists left (it decompresses and merges them whole) at a
 * high rate, a CPU lane for binary searches (UBOC) and its slower scan.
 * After a step that left few candidates against long lists (a ratio past
 * 128), the rest is predicted faster on the CPU lane and moves there; with
 * many candidates it stays on the GPU lane. */
static double gpu_time(const tdm_qfeat *f) { return 1e-4 + 2e-4 * f->x[3]; }
static double cpu_time(const tdm_qfeat *f) { return 2e-5 + 5e-3 * f->x[6] + 1e-3 * f->x[1]; }

static void choose_by_model(void **state)
{
    (void)state;
    tdm_model gm, cm;
    tdm_model_init(&gm, 1);
    tdm_model_init(&cm, 0);
    tdm_rng g;
    tdm_rng_seed(&g, 5);
    for (int i = 0; i < 400; i++) {
        uint64_t len[4];
        size_t n = tdm_rng_range(&g, 2, 4);
        for (size_t t = 0; t < n; t++)
            len[t] = tdm_rng_range(&g, 1, 2000000);
        tdm_qfeat f;
        tdm_qfeat_from_lens(len, n, 10, &f);
        tdm_model_observe(&gm, TDM_ALGO_AND, &f, gpu_time(&f));
        tdm_model_observe(&cm, TDM_ALGO_AND, &f, cpu_time(&f));
    }
    struct {
        uint64_t cand, next;
        int want; /* 0: stay on the GPU lane, 1: the CPU lane */
    } cases[] = {{1000, 1000000, 1}, {2000, 2000000, 1}, {800000, 1000000, 0},
                 {500000, 600000, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint64_t len[2] = {cases[c].cand, cases[c].next};
        tdm_qfeat f;
        tdm_qfeat_from_lens(len, 2, 10, &f);
        tdm_mig_in in = {.nl = 2, .cur = 0, .ok = {1, 1}};
        in.rest[0] = tdm_model_predict(&gm, TDM_ALGO_AND, &f);
        in.rest[1] = tdm_model_predict(&cm, TDM_ALGO_AND, &f);
        in.move[1] = 1e-5;
        int got = tdm_migrate_choose(&in);
        if (got != cases[c].want)
            fail_msg("candidates %llu, next list %llu (ratio %.0f): GPU %.3g s, CPU %.3g s: "
                     "chose lane %d", (unsigned long long)cases[c].cand,
                     (unsigned long long)cases[c].next,
                     (double)cases[c].next / (double)cases[c].cand, in.rest[0], in.rest[1], got);
    }
}

/* ---- through the lanes, against the oracle */

typedef struct fixture {
    randcoll c;
    tdm_index *ix;
    const tdm_ireader *ir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    randcoll_init(&f->c, 16, tdm_test_small() ? 400 : 6000, 40);
    /* a few long lists, so that several steps keep candidates */
    f->ix = randcoll_index(&f->c, tdm_test_tmpdir("migrate"), "m.tdm", NULL);
    f->ir = tdm_index_ireader(f->ix);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tdm_index_close(f->ix);
    randcoll_free(&f->c);
    free(f);
    return 0;
}

static tdm_engine *engine_kinds(const char *kinds, const char *faults, int migrate, int policy)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    /* the two PoCL devices the lanes' cases are written for, whatever
     * else the machine has (an H200 beside them made three lanes) */
    o.devices = "cpu";
    o.lane_kinds = kinds;
    o.fault_inject = faults ? faults : "";
    o.calibrate = 0;
    o.cache_mode = TDM_CACHE_OFF;
    o.migrate = migrate;
    o.policy = policy;
    tdm_engine *e = NULL;
    /* Oclgrind has no CPU device: take what there is (one device skips) */
    if (tdm_engine_open(&o, &e) != TDM_OK) {
        o.devices = NULL;
        if (tdm_engine_open(&o, &e) != TDM_OK)
            fail_msg("tdm_engine_open: %s", tdm_last_error());
    }
    if (tdm_engine_device_count(e) < 2) {
        tdm_engine_close(e);
        print_message("only one device: set POCL_DEVICES=\"pthread pthread\"\n");
        return NULL;
    }
    return e;
}

static tdm_engine *engine2(const char *faults, int migrate, int policy)
{
    return engine_kinds(NULL, faults, migrate, policy);
}

/* A random AND query of 2 .. 5 distinct terms, the frequent ones often. */
static size_t and_terms(tdm_rng *r, const randcoll *c, tdm_search_term *st)
{
    size_t n = tdm_rng_range(r, 2, 5);
    for (size_t i = 0; i < n; i++) {
        uint32_t t = tdm_rng_range(r, 0, 3) ? tdm_rng_range(r, 0, 7)
                                            : tdm_rng_range(r, 0, (uint32_t)c->nlists - 1);
        st[i].term = c->terms[t];
        st[i].id = 0;
        st[i].weight = 1.0 + tdm_rng_range(r, 0, 2);
    }
    return n;
}

/* The float oracle's AND top k equals res bit for bit. */
static void same_as_oracle(const fixture *f, tdm_oracle *or, const tdm_search_term *st, size_t n,
                           const tdm_search_options *o, const tdm_search_result *res)
{
    tdm_query q;
    tdm_query_init(&q);
    tdm_err err = {0};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tdm_query_add_term(&q, f->ir, st[i].term, strlen(st[i].term),
                                            st[i].weight, &err),
                         TDM_OK);
    tdm_query_finish(&q);
    tdm_oracle_request req = {o->k, TDM_MATCH_AND, TDM_ORACLE_FLOAT,
                              {TDM_SCORING_BM25, o->k1, o->b}};
    tdm_hit *hits = malloc(o->k * sizeof *hits);
    size_t got = 0;
    if (tdm_oracle_search(or, &q, &req, hits, &got, NULL, &err) != TDM_OK)
        fail_msg("oracle: %s", tdm_err_msg(&err));
    if (res->n != got)
        fail_msg("%zu hits, the oracle has %zu", res->n, got);
    for (size_t i = 0; i < got; i++) {
        float want = (float)hits[i].score;
        if (res->hits[i].docid != hits[i].docid ||
            memcmp(&res->hits[i].score, &want, sizeof want))
            fail_msg("rank %zu: doc %u score %.9g, oracle doc %u score %.9g", i,
                     res->hits[i].docid, res->hits[i].score, hits[i].docid, want);
    }
    free(hits);
    tdm_query_free(&q);
}

static void and_options(tdm_search_options *o, int qi, int migrate)
{
    tdm_search_options_init(o);
    o->algorithm = TDM_ALGO_AND;
    static const uint32_t ks[] = {1, 10, 100, 1000};
    o->k = ks[qi % 4];
    o->migrate = migrate;
    if (qi % 5 == 4) {
        o->k1 = 0.9;
        o->b = 0.4;
    }
}

static void forced_migration(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine2(NULL, TDM_MIGRATE_AUTO, TDM_POLICY_HYBRID);
    if (!e)
        skip();
    tdm_search *s;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    tdm_oracle *or;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(f->ir, &or, &err), TDM_OK);
    tdm_rng r;
    tdm_rng_seed(&r, 77);
    tdm_search_term st[8];
    uint64_t moves = 0, steps = 0;
    double t_forced = 0, t_whole = 0;
    int queries = tdm_test_small() ? 20 : 120;
    for (int qi = 0; qi < queries; qi++) {
        size_t n = and_terms(&r, &f->c, st);
        tdm_search_options o;
        and_options(&o, qi, TDM_MIGRATE_FORCE);
        o.policy = qi % 3 == 0 ? TDM_POLICY_BEST : TDM_POLICY_DEFAULT;
        if (qi % 7 == 6) /* AND-then-OR: its AND stage step by step */
            o.algorithm = TDM_ALGO_AND_OR;
        tdm_search_result *res, *whole;
        if (tdm_search_terms(s, st, n, &o, &res) != TDM_OK)
            fail_msg("query %d: %s", qi, tdm_last_error());
        if (o.algorithm == TDM_ALGO_AND)
            same_as_oracle(f, or, st, n, &o, res);
        assert_int_equal(res->algorithm, o.algorithm);
        o.migrate = TDM_MIGRATE_OFF; /* the AND kernel, whole on one lane */
        if (tdm_search_terms(s, st, n, &o, &whole) != TDM_OK)
            fail_msg("query %d whole: %s", qi, tdm_last_error());
        assert_int_equal(whole->steps, 0);
        t_forced += res->seconds;
        t_whole += whole->seconds;
        assert_int_equal(res->n, whole->n);
        for (size_t i = 0; i < res->n; i++) {
            assert_int_equal(res->hits[i].docid, whole->hits[i].docid);
            assert_memory_equal(&res->hits[i].score, &whole->hits[i].score, sizeof(float));
        }
        if (res->terms >= 2) {
            assert_true(res->steps >= 1 && res->steps <= res->terms);
            /* forced: a move after every step that left work */
            assert_int_equal(res->migrations, res->steps - 1);
            if (res->first_device != (int)((res->device + res->migrations) % 2))
                fail_msg("query %d: first lane %d, last %d, %u moves, %u steps", qi,
                         res->first_device, res->device, res->migrations, res->steps);
            if (res->migrations)
                assert_true(res->carried_bytes > 0);
        }
        moves += res->migrations;
        steps += res->steps;
        tdm_search_result_free(res);
        tdm_search_result_free(whole);
    }
    assert_true(moves > 0);
    tdm_sched_stats ss;
    tdm_sched_stats_init(&ss);
    assert_int_equal(tdm_search_stats(s, &ss), TDM_OK);
    assert_int_equal(ss.migrations, moves);
    assert_true(ss.stepped >= (uint64_t)queries / 2);
    assert_int_equal(ss.in_flight, 0);
    assert_int_equal(ss.failed, 0);
    print_message("forced: %d queries, %llu steps, %llu moves, %llu bytes carried; mean "
                  "%.0f us a query (the AND kernel whole: %.0f us)\n", queries,
                  (unsigned long long)steps, (unsigned long long)moves,
                  (unsigned long long)ss.carried_bytes, t_forced / queries * 1e6,
                  t_whole / queries * 1e6);
    tdm_oracle_close(or);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* Whether auto runs a query of these terms step by step: its longest list
 * at least TDM_SEL_RATIO times its shortest (migrate.c; unknown terms have
 * no list and make the AND empty). */
static int lengths_differ(const fixture *f, const tdm_search_term *st, size_t n)
{
    uint64_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t df = 0;
        int rc = tdm_index_term_get(f->ix, st[i].term, &df, NULL);
        assert_true(rc == TDM_OK || rc == TDM_ERR_NOT_FOUND);
        lo = df < lo ? df : lo;
        hi = df > hi ? df : hi;
    }
    return hi >= (lo ? lo : 1) * (uint64_t)TDM_SEL_RATIO;
}

/* Griffin's case: a GPU lane and a CPU lane (TANDEM_LANE_KINDS on PoCL),
 * hybrid, migration by the model: every ranked AND whose lists differ by
 * Griffin's ratio runs step by step, the others whole, each with the
 * oracle's answer; whatever moves the models chose are counted. */
static void auto_hybrid(void **state)
{
    fixture *f = *state;
    tdm_engine *e = engine_kinds("gpu,cpu", NULL, TDM_MIGRATE_DEFAULT, TDM_POLICY_DEFAULT);
    if (!e)
        skip();
    tdm_search *s;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    tdm_oracle *or;
    tdm_err err = {0};
    assert_int_equal(tdm_oracle_open(f->ir, &or, &err), TDM_OK);
    tdm_rng r;
    tdm_rng_seed(&r, 91);
    tdm_search_term st[8];
    int queries = tdm_test_small() ? 20 : 150, stepped = 0;
    uint64_t moves = 0, first_gpu = 0, last_cpu = 0;
    for (int qi = 0; qi < queries; qi++) {
        size_t n = and_terms(&r, &f->c, st);
        tdm_search_options o;
        and_options(&o, qi, TDM_MIGRATE_DEFAULT);
        tdm_search_result *res;
        if (tdm_search_terms(s, st, n, &o, &res) != TDM_OK)
            fail_msg("query %d: %s", qi, tdm_last_error());
        same_as_oracle(f, or, st, n, &o, res);
        assert_int_equal(res->policy, TDM_POLICY_HYBRID);
        if (res->terms >= 2)
            assert_int_equal(res->steps >= 1, lengths_differ(f, st, n));
        stepped += res->steps > 0;
        moves += res->migrations;
        first_gpu += res->steps && res->first_device == 0;
        last_cpu += res->steps && res->device == 1;
        tdm_search_result_free(res);
    }
    tdm_sched_stats ss;
    tdm_sched_stats_init(&ss);
    assert_int_equal(tdm_search_stats(s, &ss), TDM_OK);
    assert_int_equal(ss.stepped, (uint64_t)stepped);
    assert_int_equal(ss.migrations, moves);
    assert_true(stepped > 0);
    print_message("auto (lanes gpu,cpu): %d of %d queries stepped, %llu moves, first step on "
                  "the GPU lane %llu, last on the CPU lane %llu\n", stepped, queries,
                  (unsigned long long)moves, (unsigned long long)first_gpu,
                  (unsigned long long)last_cpu);
    tdm_oracle_close(or);
    tdm_search_close(s);
    tdm_engine_close(e);
}

/* ---- many threads, and faults mid-query */

typedef struct worker_arg {
    const fixture *f;
    tdm_search *s;
    int seed, queries, bad;
    char msg[256];
} worker_arg;

static void *worker(void *p)
{
    worker_arg *w = p;
    tdm_rng r;
    tdm_rng_seed(&r, (uint64_t)w->seed);
    tdm_oracle *or;
    tdm_err err = {0};
    if (tdm_oracle_open(w->f->ir, &or, &err) != TDM_OK)
        return NULL;
    tdm_search_term st[8];
    for (int qi = 0; qi < w->queries && !w->bad; qi++) {
        size_t n = and_terms(&r, &w->f->c, st);
        tdm_search_options o;
        and_options(&o, qi, TDM_MIGRATE_DEFAULT);
        tdm_search_result *res;
        if (tdm_search_terms(w->s, st, n, &o, &res) != TDM_OK) {
            w->bad = 1;
            snprintf(w->msg, sizeof w->msg, "query %d: %s", qi, tdm_last_error());
            break;
        }
        /* the oracle's answer (its check fails the test from this thread:
           compare here and report) */
        tdm_query q;
        tdm_query_init(&q);
        for (size_t i = 0; i < n; i++)
            tdm_query_add_term(&q, w->f->ir, st[i].term, strlen(st[i].term), st[i].weight, &err);
        tdm_query_finish(&q);
        tdm_oracle_request req = {o.k, TDM_MATCH_AND, TDM_ORACLE_FLOAT,
                                  {TDM_SCORING_BM25, o.k1, o.b}};
        tdm_hit *hits = malloc(o.k * sizeof *hits);
        size_t got = 0;
        tdm_oracle_search(or, &q, &req, hits, &got, NULL, &err);
        if (got != res->n)
            w->bad = 1;
        for (size_t i = 0; i < got && !w->bad; i++) {
            float want = (float)hits[i].score;
            if (res->hits[i].docid != hits[i].docid || memcmp(&res->hits[i].score, &want, 4))
                w->bad = 1;
        }
        if (w->bad)
            snprintf(w->msg, sizeof w->msg, "query %d: not the oracle's answer (%zu hits, %zu)",
                     qi, res->n, got);
        free(hits);
        tdm_query_free(&q);
        tdm_search_result_free(res);
    }
    tdm_oracle_close(or);
    return NULL;
}

/* threads x queries forced AND queries on an engine with `faults`. */
static void threads_with(const fixture *f, const char *faults, int threads, int queries,
                         tdm_sched_stats *ss)
{
    tdm_engine *e = engine2(faults, TDM_MIGRATE_FORCE, TDM_POLICY_HYBRID);
    if (!e)
        skip();
    tdm_search *s;
    if (tdm_search_open(e, f->ix, &s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
    pthread_t th[8];
    worker_arg wa[8];
    for (int t = 0; t < threads; t++) {
        wa[t] = (worker_arg){.f = f, .s = s, .seed = 100 + t, .queries = queries};
        pthread_create(&th[t], NULL, worker, &wa[t]);
    }
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < threads; t++)
        if (wa[t].bad)
            fail_msg("%s, thread %d: %s", faults ? faults : "no fault", t, wa[t].msg);
    tdm_sched_stats_init(ss);
    assert_int_equal(tdm_search_stats(s, ss), TDM_OK);
    /* every query answered once */
    assert_int_equal(ss->submitted, (uint64_t)threads * queries);
    assert_int_equal(ss->answered, (uint64_t)threads * queries);
    assert_int_equal(ss->failed, 0);
    assert_int_equal(ss->in_flight, 0);
    tdm_search_close(s);
    tdm_engine_close(e);
}

static void threads_forced(void **state)
{
    tdm_sched_stats ss;
    threads_with(*state, NULL, 4, tdm_test_small() ? 5 : 25, &ss);
    assert_true(ss.migrations > 0);
}

static void faults_mid_query(void **state)
{
    /* each lane's run n fails: lost (after its work, dropped), oom (lane
       lives), build (dead); early and later runs, both lanes */
    const char *faults[] = {"1:lost@2", "0:oom@3", "1:build@4", "0:lost@5,1:oom@2", "0:build@1"};
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
        tdm_sched_stats ss;
        threads_with(*state, faults[i], 3, tdm_test_small() ? 4 : 12, &ss);
        assert_true(ss.handovers >= 1);
        int dead = 0;
        for (int l = 0; l < ss.nlanes; l++) {
            dead += !ss.lanes[l].alive;
            if (strstr(faults[i], "oom") && !strstr(faults[i], "lost") &&
                !strstr(faults[i], "build"))
                assert_true(ss.lanes[l].alive);
        }
        assert_int_equal(dead, strstr(faults[i], "oom") && !strstr(faults[i], "lost") &&
                                       !strstr(faults[i], "build") ? 0 : 1);
    }
}

int main(void)
{
    tdm_test_pocl_devices();
    (void)assert_same_index; /* randcoll.h's */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernels_vs_reference),
        cmocka_unit_test(choose_made_up),
        cmocka_unit_test(choose_by_model),
        cmocka_unit_test_setup_teardown(forced_migration, setup, teardown),
        cmocka_unit_test_setup_teardown(auto_hybrid, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_forced, setup, teardown),
        cmocka_unit_test_setup_teardown(faults_mid_query, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
