/* tdm_search_batch against the same queries one by one (tdm_search_terms):
 * on every device of the engine, random indexes (several codecs, 1 to
 * 20,000 documents; under TANDEM_TEST_SMALL three small ones and one k per
 * algorithm) and random queries, every algorithm, k = 1, 10 and 1,000, BM25 at the index's parameters and others
 * and impact scores, batch sizes 1 to 200: each query's result must be the
 * lone query's exactly (the same documents in the same order, the same score
 * bits). A batch also holds queries that fail alone (too many terms, a zero
 * weight), empty queries and queries of only unknown terms, which must get
 * their own status and message without failing the others; and the request
 * errors that fail the whole batch. Batched queries must have shared their
 * launches (result.batch > 1) where two or more could, AND-then-OR, ranked
 * AND at k = 1,000 and pruning at other k1, b among them. The compressed
 * batch runs both its kernels on every device (TANDEM_BATCH_QUEUE on and
 * off: the CPU queue of ranges longest first, a work-item a range), with
 * one range a query, many, and both in one batch (TANDEM_BATCH_RANGES_PER_CU
 * 1, 4 and 64); the queue's batches must have held queries of one range
 * and of several (under TANDEM_TEST_SMALL: some queries).
 *
 * Ranked AND's batch kernels (cl/search_batch_and.cl) against their plain-C
 * reference (tdm_sband_ref): every codec, lists ending at block boundaries,
 * one-block lists, one-term queries, repeated terms, a query whose
 * shortest list is cut to nothing, three scorings; the kernels' block
 * selection, each query's matches (docids and score bits), and each
 * query's top k against the reference's matches ranked on the host. And
 * the block bounds the range batches make on the device (stored bounds at
 * the index's k1, b; from the postings at others and for impact scores),
 * each query's term bounds and MaxScore order, against the host's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/writer.h"
#include "index/format.h"
#include "drive/search_batch_and.h"
#include "drive/search.h"
#include "drive/search_run.h"
#include "drive/search_testing.h"
#include "plan/plan_testing.h"
#include "drive/search_batch_dev.h"
#include "randcoll.h"
#include "testutil.h"

static const char *codecs[] = {"bp128", "vbyte128", "pef", "pfor", "raw", "rice"};
#define NCODECS (sizeof codecs / sizeof *codecs)

static const int algos[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND,     TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
#define NALGOS (sizeof algos / sizeof *algos)

typedef struct fixture {
    tdm_engine *eng;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->eng = tdm_test_engine();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tdm_engine_close(f->eng);
    free(f);
    return 0;
}

static const char *write_index(randcoll *c, const char *dir, const char *codec)
{
    tdm_coll_source src;
    randcoll_source(c, &src);
    tdm_iwriter_options o = {.codec = codec};
    tdm_err err = {0};
    char *path = path_in(dir, "b.tdm");
    if (tdm_collection_write(&src, path, &o, &err) != TDM_OK)
        fail_msg("write %s: %s", path, tdm_err_msg(&err));
    tdm_err_clear(&err);
    return path;
}

#define MAXT 24
#define HUGE_TERMS (TDM_SEARCH_MAX_TERMS + 1)

/* A random collection (randcoll_init(seed, ndocs, nlists)), its index
 * written under dir with codec, and a search handle on it. */
typedef struct opened {
    randcoll c;
    tdm_index *ix;
    tdm_search *s;
} opened;

static void open_random(tdm_engine *eng, const char *dir, uint64_t seed, uint32_t ndocs,
                        uint32_t nlists, const char *codec, opened *o)
{
    randcoll_init(&o->c, seed, ndocs, nlists);
    if (tdm_index_open(write_index(&o->c, dir, codec), &o->ix) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    if (tdm_search_open(eng, o->ix, &o->s) != TDM_OK)
        fail_msg("search open: %s", tdm_last_error());
}

static void close_random(opened *o)
{
    tdm_search_close(o->s);
    tdm_index_close(o->ix);
    randcoll_free(&o->c);
}

/* HUGE_TERMS known terms, for the query of too many terms. */
static void fill_huge(const randcoll *c, tdm_search_term *huge)
{
    for (size_t i = 0; i < HUGE_TERMS; i++)
        huge[i] = (tdm_search_term){c->terms[i % c->nlists], 0, 1.0};
}

/* Query i of a batch: mostly random terms; some empty, some unknown only,
 * some failing (too many terms, a zero weight). */
static void make_query(tdm_rng *r, const randcoll *c, tdm_search_term *st, tdm_search_term *huge,
                       tdm_search_query *q)
{
    uint32_t kind = tdm_rng_range(r, 0, 19);
    q->text = NULL;
    q->terms = st;
    if (kind == 0) { /* empty */
        q->nterms = 0;
        return;
    }
    if (kind == 1) { /* too many terms: TDM_ERR_LIMIT */
        q->terms = huge;
        q->nterms = HUGE_TERMS;
        return;
    }
    size_t n = tdm_rng_range(r, 1, kind == 2 ? 3 : MAXT);
    for (size_t i = 0; i < n; i++) {
        if (kind == 3 || tdm_rng_range(r, 0, 12) == 0)
            st[i].term = "no-such-term";
        else if (i > 0 && tdm_rng_range(r, 0, 5) == 0)
            st[i].term = st[tdm_rng_range(r, 0, (uint32_t)i - 1)].term;
        else
            st[i].term = c->terms[tdm_rng_range(r, 0, (uint32_t)c->nlists - 1)];
        st[i].id = 0;
        st[i].weight = tdm_rng_range(r, 0, 3) ? 1.0 : tdm_rng_range(r, 1, 1000) / 64.0;
    }
    if (kind == 4)
        st[0].weight = 0.0; /* TDM_ERR_INVALID_ARG for this query alone */
    q->nterms = n;
}

/* The batch's result i against query i alone. */
static void compare(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                    const tdm_search_result *b, const char *what)
{
    tdm_search_result *one = NULL;
    int rc = tdm_search_terms(s, q->terms, q->nterms, o, &one);
    if (b->status != rc)
        fail_msg("%s: batch status %d, alone %d (%s)", what, b->status, rc,
                 rc ? tdm_last_error() : "");
    if (rc) {
        assert_non_null(b->error);
        assert_true(strlen(b->error) > 0);
        assert_int_equal(b->n, 0);
        return;
    }
    assert_null(b->error);
    if (b->n != one->n)
        fail_msg("%s: batch %zu hits, alone %zu", what, b->n, one->n);
    for (size_t i = 0; i < b->n; i++) {
        uint32_t sb, so;
        memcpy(&sb, &b->hits[i].score, 4);
        memcpy(&so, &one->hits[i].score, 4);
        if (b->hits[i].docid != one->hits[i].docid || sb != so)
            fail_msg("%s: rank %zu: batch doc %u score %.9g, alone doc %u score %.9g", what, i,
                     b->hits[i].docid, b->hits[i].score, one->hits[i].docid, one->hits[i].score);
        assert_string_equal(b->hits[i].name, one->hits[i].name);
    }
    assert_int_equal(b->terms, one->terms);
    assert_int_equal(b->unknown, one->unknown);
    assert_int_equal(b->algorithm, one->algorithm);
    assert_true(b->batch >= 1);
    tdm_search_result_free(one);
}

/* Queries that shared launches in the cases that once ran alone inside a
 * batch: AND-then-OR, ranked AND at k above 128, pruning at other k1, b. */
enum { SH_ALL, SH_AND_OR, SH_AND_BIGK, SH_PRUNE_BIGK, SH_BOUNDS, SH_Q_ONE, SH_Q_MANY, SH_COUNT };

static void run_collection(tdm_engine *eng, uint64_t seed, uint32_t ndocs, const char *codec,
                           const size_t *sizes, size_t nsizes, int small, uint64_t *shared)
{
    static const uint32_t ks[] = {1, 10, 1000};
    opened op;
    open_random(eng, tdm_test_tmpdir("search_batch"), seed, ndocs, 40, codec, &op);
    randcoll *c = &op.c;
    tdm_search *s = op.s;
    tdm_rng r;
    tdm_rng_seed(&r, seed * 131 + 5);
    size_t most = 0;
    for (size_t i = 0; i < nsizes; i++)
        most = sizes[i] > most ? sizes[i] : most;
    tdm_search_term *st = calloc(most * MAXT, sizeof *st);
    tdm_search_term *huge = calloc(HUGE_TERMS, sizeof *huge);
    tdm_search_query *qs = calloc(most, sizeof *qs);
    tdm_search_result **res = calloc(most, sizeof *res);
    fill_huge(c, huge);
    int ndev = tdm_engine_device_count(eng);
    const char *qv = getenv("TANDEM_BATCH_QUEUE");
    int queue = qv && !strcmp(qv, "on");
    for (int d = 0; d < ndev; d++)
        for (size_t a = 0; a < NALGOS; a++)
            for (size_t ki = small ? (a + seed) % 3 : 0; ki < 3; ki += small ? 3 : 1) {
                size_t n = sizes[(a + ki + (size_t)d) % nsizes];
                for (size_t i = 0; i < n; i++)
                    make_query(&r, c, st + i * MAXT, huge, &qs[i]);
                tdm_search_options o;
                tdm_search_options_init(&o);
                o.device = d;
                o.algorithm = algos[a];
                o.k = ks[ki];
                /* the compressed variant's batch kernel and the decoded one (with
                   the host seed where it prunes) on any device */
                static const int variants[] = {TDM_VARIANT_AUTO, TDM_VARIANT_COMPRESSED,
                                               TDM_VARIANT_ITEM};
                o.variant = variants[(a + ki) % 3];
                /* its scratch in both layouts (cl/search_zrange.cl) on every device */
                int zl = (int)((seed + ki + (size_t)d + a / 2) % 2);
                tdm_search_zr_layout_force(zl);
                uint32_t sc = tdm_rng_range(&r, 0, 3);
                if (sc == 1) {
                    o.k1 = 0.9;
                    o.b = 0.4;
                } else if (sc == 2) {
                    o.scoring = TDM_SCORE_IMPACT;
                }
                int brc = tdm_search_batch(s, qs, n, &o, res);
                tdm_search_zr_layout_force(-1);
                if (brc != TDM_OK)
                    fail_msg("batch of %zu: %s", n, tdm_last_error());
                for (size_t i = 0; i < n; i++) {
                    char what[200];
                    snprintf(what, sizeof what, "%s ndocs %u seed %llu dev %d %s k %u scoring "
                             "%u layout %d batch %zu query %zu (%zu terms)", codec, ndocs,
                             (unsigned long long)seed, d, tdm_algorithm_name(o.algorithm), o.k,
                             sc, zl, n, i, qs[i].nterms);
                    assert_non_null(res[i]);
                    compare(s, &qs[i], &o, res[i], what);
                    int sh = res[i]->batch > 1;
                    shared[SH_ALL] += sh;
                    shared[SH_AND_OR] += sh && o.algorithm == TDM_ALGO_AND_OR;
                    shared[SH_AND_BIGK] += sh && o.algorithm == TDM_ALGO_AND && o.k > 128;
                    shared[SH_PRUNE_BIGK] += sh && o.k > 128 && (o.algorithm == TDM_ALGO_WAND ||
                                                                 o.algorithm == TDM_ALGO_BMW ||
                                                                 o.algorithm == TDM_ALGO_MAXSCORE);
                    shared[SH_BOUNDS] += sh && sc == 1 && (o.algorithm == TDM_ALGO_WAND ||
                                                           o.algorithm == TDM_ALGO_BMW ||
                                                           o.algorithm == TDM_ALGO_MAXSCORE);
                    int zq = sh && queue && res[i]->variant == TDM_VARIANT_COMPRESSED;
                    shared[SH_Q_ONE] += zq && res[i]->ranges == 1;
                    shared[SH_Q_MANY] += zq && res[i]->ranges > 1;
                    tdm_search_result_free(res[i]);
                }
            }
    free(st);
    free(huge);
    free(qs);
    free(res);
    close_random(&op);
}

static void batches_match_lone_queries(void **state)
{
    (void)state;
    int small = tdm_test_small();
    static const size_t sizes[] = {1, 2, 7, 33, 200};
    static const size_t small_sizes[] = {1, 3, 6};
    uint64_t shared[SH_COUNT] = {0};
    int anyz = 0; /* a device runs the compressed variant (not rusticl's) */
    /* small (Oclgrind): three indexes, one k per algorithm */
    for (uint64_t seed = 1; seed <= (small ? 3 : NCODECS); seed++) {
        /* both variants of the batch path (search_batch_dev.c): Wu's AND and
         * device-made bounds on odd seeds, the range AND and uploaded bounds
         * on even ones */
        setenv("TANDEM_BATCH_AND", seed % 2 ? "wu" : "range", 1);
        setenv("TANDEM_BATCH_BOUNDS", seed % 2 ? "device" : "host", 1);
        /* the results waited for asleep (the completion callback) on odd seeds */
        setenv("TANDEM_BATCH_WAIT", seed % 2 ? "sleep" : "spin", 1);
        /* the uploads from pinned staging on seeds 1, 2, 5 and 6 (Oclgrind: 1
         * and 2), from the host's tables on 3 and 4 */
        setenv("TANDEM_BATCH_UPLOAD", seed % 4 == 1 || seed % 4 == 2 ? "pinned" : "pageable", 1);
        /* the compressed batch's kernels: the queue on seeds 1, 3, 4, 6 (2 and
         * 3 under Oclgrind), with 4 ranges a compute unit, 1 (a range a query
         * in the big batches) and 64 (many a query) */
        static const char *rpc[] = {"4", "1", "64"};
        setenv("TANDEM_BATCH_QUEUE", seed % 3 == (small ? 1u : 2u) ? "off" : "on", 1);
        setenv("TANDEM_BATCH_RANGES_PER_CU", rpc[seed % 3], 1);
        /* a query's heap slots capped (one range a query at 1) or not */
        static const char *mk[] = {"1", "16777216", "64"};
        setenv("TANDEM_BATCH_MERGE_KEYS", mk[seed % 3], 1);
        /* pruning at k = 1,000 batched on every device on even seeds (the GPU
           row's batch_max_k), alone on odd ones */
        setenv("TANDEM_BATCH_MAX_K", seed % 2 ? "128" : "1000", 1);
        /* an engine reads the variables at open */
        tdm_engine *eng = tdm_test_engine();
        for (int d = 0; seed == 1 && d < tdm_engine_device_count(eng); d++)
            anyz |= tdm_test_zcur(eng, d, "batches_match_lone_queries: the queue's batches");
        uint32_t ndocs = seed == 1 ? 1 : (uint32_t)(small ? 40 * seed : 3000 * seed * seed / 2);
        if (small)
            run_collection(eng, seed, ndocs, codecs[seed - 1], small_sizes, 3, 1, shared);
        else
            run_collection(eng, seed, ndocs, codecs[seed - 1], sizes, 5, 0, shared);
        tdm_engine_close(eng);
    }
    unsetenv("TANDEM_BATCH_AND");
    unsetenv("TANDEM_BATCH_BOUNDS");
    unsetenv("TANDEM_BATCH_WAIT");
    unsetenv("TANDEM_BATCH_UPLOAD");
    unsetenv("TANDEM_BATCH_QUEUE");
    unsetenv("TANDEM_BATCH_RANGES_PER_CU");
    unsetenv("TANDEM_BATCH_MERGE_KEYS");
    unsetenv("TANDEM_BATCH_MAX_K");
    if (shared[SH_ALL] == 0)
        fail_msg("no query of any batch shared its launches");
    print_message("shared launches: %llu queries, AND-then-OR %llu, AND k > 128 %llu, pruning "
                  "k > 128 %llu, pruning at other k1, b %llu; the queue: %llu queries of one "
                  "range, %llu of more\n",
                  (unsigned long long)shared[SH_ALL], (unsigned long long)shared[SH_AND_OR],
                  (unsigned long long)shared[SH_AND_BIGK],
                  (unsigned long long)shared[SH_PRUNE_BIGK], (unsigned long long)shared[SH_BOUNDS],
                  (unsigned long long)shared[SH_Q_ONE], (unsigned long long)shared[SH_Q_MANY]);
    /* small (Oclgrind): few queries, the queue's ranges as they come */
    if (anyz && (small ? !shared[SH_Q_ONE] && !shared[SH_Q_MANY]
                       : !shared[SH_Q_ONE] || !shared[SH_Q_MANY]))
        fail_msg("the queue's batches: %llu queries of one range, %llu of more (each must be > 0)",
                 (unsigned long long)shared[SH_Q_ONE], (unsigned long long)shared[SH_Q_MANY]);
    if (!small && (!shared[SH_AND_OR] || !shared[SH_AND_BIGK] || !shared[SH_PRUNE_BIGK] ||
                   !shared[SH_BOUNDS]))
        fail_msg("shared launches: AND-then-OR %llu, AND k > 128 %llu, pruning k > 128 %llu, "
                 "pruning at other k1, b %llu (each must be > 0)",
                 (unsigned long long)shared[SH_AND_OR], (unsigned long long)shared[SH_AND_BIGK],
                 (unsigned long long)shared[SH_PRUNE_BIGK], (unsigned long long)shared[SH_BOUNDS]);
}

/* A batch refused as too big (the 10M collection's 2,000 queries; here a
 * forced limit) reruns its queries alone on their own plans: batch 1, the
 * hits of a lone query, and the ranges a lone query of the same variant
 * gets (a query planned for a batch may differ from a lone one in variant
 * only: ranked AND on a GPU keeps the compressed cursors). Before a005d5d
 * they ran on the plans the batch's sizing had left in them. */
static void refused_batch_runs_alone(void **state)
{
    fixture *f = *state;
    opened op;
    open_random(f->eng, tdm_test_tmpdir("search_batch_refused"), 41, 3000, 30, "bp128", &op);
    tdm_search *s = op.s;
    enum { N = 6 };
    tdm_search_term st[N * MAXT], huge[HUGE_TERMS];
    fill_huge(&op.c, huge);
    tdm_search_query qs[N];
    tdm_search_result *res[N];
    tdm_rng r;
    tdm_rng_seed(&r, 4242);
    static const int algs[] = {TDM_ALGO_AND, TDM_ALGO_MAXSCORE, TDM_ALGO_OR};
    for (int d = 0; d < tdm_engine_device_count(f->eng); d++)
        for (size_t a = 0; a < 3; a++) {
            for (size_t i = 0; i < N; i++)
                make_query(&r, &op.c, st + i * MAXT, huge, &qs[i]);
            tdm_search_options o;
            tdm_search_options_init(&o);
            o.device = d;
            o.algorithm = algs[a];
            o.k = 10;
            tdm_search_batch_limit_force(1);
            int rc = tdm_search_batch(s, qs, N, &o, res);
            tdm_search_batch_limit_force(0);
            if (rc != TDM_OK)
                fail_msg("batch: %s", tdm_last_error());
            for (size_t i = 0; i < N; i++) {
                char what[120];
                snprintf(what, sizeof what, "refused batch dev %d %s query %zu", d,
                         tdm_algorithm_name(o.algorithm), i);
                compare(s, &qs[i], &o, res[i], what);
                tdm_search_result *one = NULL;
                if (res[i]->status == TDM_OK && res[i]->device >= 0) {
                    tdm_search_options lo = o;
                    lo.variant = res[i]->variant;
                    assert_int_equal(tdm_search_terms(s, qs[i].terms, qs[i].nterms, &lo, &one),
                                     TDM_OK);
                    if (res[i]->batch != 1 || res[i]->variant != one->variant ||
                        res[i]->ranges != one->ranges)
                        fail_msg("%s: batch %u variant %d ranges %u, alone variant %d ranges "
                                 "%u", what, res[i]->batch, res[i]->variant, res[i]->ranges,
                                 one->variant, one->ranges);
                    tdm_search_result_free(one);
                }
                tdm_search_result_free(res[i]);
            }
        }
    close_random(&op);
}

static void batch_errors(void **state)
{
    fixture *f = *state;
    opened op;
    open_random(f->eng, tdm_test_tmpdir("search_batch_err"), 99, 50, 10, "bp128", &op);
    tdm_search *s = op.s;
    tdm_search_term t = {op.c.terms[0], 0, 1.0};
    tdm_search_query q[2] = {{NULL, &t, 1}, {NULL, &t, 1}};
    tdm_search_result *res[2] = {(void *)1, (void *)1};
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.k = 0; /* bad options fail the batch: every result NULL */
    assert_int_equal(tdm_search_batch(s, q, 2, &o, res), TDM_ERR_INVALID_ARG);
    assert_null(res[0]);
    assert_null(res[1]);
    assert_non_null(strstr(tdm_last_error(), "k = 0"));
    o.k = 10;
    assert_int_equal(tdm_search_batch(s, NULL, 2, &o, res), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_batch(NULL, q, 2, &o, res), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_batch(s, q, 2, &o, NULL), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_search_batch(s, q, 0, &o, res), TDM_OK);
    /* terms NULL with nterms > 0: that query's own error */
    q[1].terms = NULL;
    assert_int_equal(tdm_search_batch(s, q, 2, &o, res), TDM_OK);
    assert_int_equal(res[0]->status, TDM_OK);
    assert_true(res[0]->n > 0);
    assert_int_equal(res[1]->status, TDM_ERR_INVALID_ARG);
    assert_non_null(res[1]->error);
    tdm_search_result_free(res[0]);
    tdm_search_result_free(res[1]);
    /* a lone query's result: status OK, no error, batch 1 */
    tdm_search_result *one = NULL;
    assert_int_equal(tdm_search_terms(s, &t, 1, &o, &one), TDM_OK);
    assert_int_equal(one->status, TDM_OK);
    assert_null(one->error);
    assert_int_equal(one->batch, 1);
    tdm_search_result_free(one);
    close_random(&op);
}


/* ---- ranked AND's batch kernels against tdm_sband_ref */

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* The length of query p's shortest list (the lead), as the term table says. */
static uint32_t lead_len(const tdm_sprep *p)
{
    uint32_t len = UINT32_MAX;
    for (uint32_t t = 0; t < p->nt; t++)
        if (p->terms[t * TDM_SEARCH_TW + TDM_TW_DF] < len)
            len = p->terms[t * TDM_SEARCH_TW + TDM_TW_DF];
    return p->nt ? len : 0;
}

static int by_doc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The device's matches of each query (any order) against the reference's
 * (every lead element in order), and the selection's jobs. */
static void same_trace(const tdm_sband_trace *dv, const tdm_sband_trace *rf, tdm_sbq **qs,
                       uint32_t n, const char *what)
{
    assert_int_equal(dv->nelem, rf->nelem);
    uint64_t *a = malloc((rf->nelem + 1) * 8), *b = malloc((rf->nelem + 1) * 8);
    size_t e0 = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = lead_len(&qs[i]->p), m = 0;
        for (uint32_t e = 0; e < len; e++)
            if (rf->hn[e0 + e])
                a[m++] = (uint64_t)rf->hd[e0 + e] << 32 | bits_of(rf->hs[e0 + e]);
        if (dv->count[i] != m || rf->count[i] != m)
            fail_msg("%s: query %u: device %u matches, reference %u", what, i, dv->count[i], m);
        for (uint32_t j = 0; j < m; j++) {
            assert_int_equal(dv->hn[e0 + j], 1);
            b[j] = (uint64_t)dv->hd[e0 + j] << 32 | bits_of(dv->hs[e0 + j]);
        }
        qsort(b, m, 8, by_doc);
        for (uint32_t j = 0; j < m; j++)
            if (a[j] != b[j])
                fail_msg("%s: query %u match %u: device doc %u score bits %08x, reference doc "
                         "%u score bits %08x", what, i, j, (uint32_t)(b[j] >> 32), (uint32_t)b[j],
                         (uint32_t)(a[j] >> 32), (uint32_t)a[j]);
        e0 += len;
    }
    assert_int_equal(e0, rf->nelem);
    free(a);
    free(b);
    for (int c = 0; c < TDM_CODEC_COUNT; c++) {
        assert_int_equal(dv->njobs[c], rf->njobs[c]);
        for (uint32_t j = 0; j < rf->njobs[c]; j++) {
            const tdm_decode_job *x = &dv->jobs[c][j], *y = &rf->jobs[c][j];
            if (memcmp(x, y, sizeof *x))
                fail_msg("%s: codec %d job %u: device {%u %u %u %u}, reference {%u %u %u %u}",
                         what, c, j, x->list, x->block_begin, x->block_end, x->out, y->list,
                         y->block_begin, y->block_end, y->out);
        }
    }
}

static int key_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Each query's keys against the reference's matches, best k. */
static void same_tops(tdm_sbq **qs, uint32_t n, uint32_t k, const tdm_sband_trace *rf,
                      const char *what)
{
    size_t e = 0;
    uint64_t *keys = malloc((rf->nelem + 1) * 8);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = lead_len(&qs[i]->p), m = 0;
        for (uint32_t j = 0; j < len; j++, e++)
            if (rf->hn[e])
                keys[m++] = (uint64_t)bits_of(rf->hs[e]) << 32 | (0xffffffffu - rf->hd[e]);
        qsort(keys, m, 8, key_desc);
        uint32_t want = m < k ? m : k;
        if (qs[i]->so.n != want)
            fail_msg("%s: query %u: %u results, reference %u", what, i, qs[i]->so.n, want);
        for (uint32_t j = 0; j < want; j++)
            if (qs[i]->so.keys[j] != keys[j])
                fail_msg("%s: query %u rank %u: key %llx, reference %llx", what, i, j,
                         (unsigned long long)qs[i]->so.keys[j], (unsigned long long)keys[j]);
        assert_int_equal(qs[i]->batch, n);
    }
    assert_int_equal(e, rf->nelem);
    free(keys);
}

#define AND_N 40

/* n random queries (a quarter of one term, repeats, random weights)
 * prepared for algorithm salg at k with the scoring's parameters (0: the
 * index's BM25, 1: BM25 at k1 0.9, b 0.4, 2: impact). */
static void prep_items(tdm_search *s, const randcoll *c, tdm_rng *r, int scoring, int salg,
                       uint32_t k, tdm_sbq *items, tdm_sbq **qs, uint32_t n, const char *what)
{
    tdm_search_term st[6];
    memset(items, 0, n * sizeof *items);
    tdm_score_params sp = {scoring == 2 ? TDM_SCORING_IMPACT : TDM_SCORING_BM25,
                           scoring == 1 ? 0.9 : 1.2, scoring == 1 ? 0.4 : 0.75};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nt = i % 4 == 0 ? 1 : tdm_rng_range(r, 2, 6);
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t pick = t && tdm_rng_range(r, 0, 7) == 0 ? 0 : 1; /* repeats */
            st[t].term = pick ? c->terms[tdm_rng_range(r, 0, (uint32_t)c->nlists - 1)]
                              : st[0].term;
            st[t].id = 0;
            st[t].weight = tdm_rng_range(r, 0, 2) ? 1.0 : tdm_rng_range(r, 1, 500) / 64.0;
        }
        tdm_sbq *it = &items[i];
        tdm_search_query rq = {NULL, st, nt};
        tdm_query_init(&it->q);
        if (tdm_search_query_build(s, &rq, &it->q, &it->err) != TDM_OK)
            fail_msg("%s: query build: %s", what, tdm_err_msg(&it->err));
        if (tdm_sprep_build(&it->p, s->r, &it->q, &sp, &it->err) != TDM_OK)
            fail_msg("%s: prep: %s", what, tdm_err_msg(&it->err));
        it->so.keys = calloc(k, 8);
        it->k = k;
        it->salg = salg;
        /* the plan by hand: the decoded variant, the range kernel (not Wu's
           mapping: and_batch_once calls that itself), no queue; the bounds
           are bounds_batch_once's */
        it->pl.variant = TDM_VARIANT_ITEM;
        it->pl.salg = salg;
        it->pl.and_wu = 0;
        it->pl.batch_queue = 0;
        it->pl.bounds = TDM_SBOUNDS_NONE;
        qs[i] = it;
    }
}

static void free_items(tdm_sbq *items, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        tdm_sprep_free(&items[i].p);
        tdm_query_free(&items[i].q);
        free(items[i].so.keys);
        tdm_err_clear(&items[i].err);
    }
}

static void and_batch_once(tdm_search *s, int dev, const randcoll *c, tdm_rng *r, uint32_t k,
                           int scoring, int cut, const char *what)
{
    tdm_sbq items[AND_N], *qs[AND_N];
    uint32_t n = tdm_test_small() ? 8 : AND_N;
    prep_items(s, c, r, scoring, TDM_SALG_AND, k, items, qs, n, what);
    if (cut) { /* query 1's shortest list cut to nothing */
        tdm_sprep *p = &qs[1]->p;
        uint32_t lead = 0;
        for (uint32_t t = 1; t < p->nt; t++)
            if (p->terms[t * TDM_SEARCH_TW + TDM_TW_DF] <
                p->terms[lead * TDM_SEARCH_TW + TDM_TW_DF])
                lead = t;
        p->terms[lead * TDM_SEARCH_TW + TDM_TW_DF] = 0;
    }
    tdm_sband_trace dv, rf;
    tdm_err err = {0};
    if (tdm_search_dev_batch_and(&s->dev[dev], qs, n, k, &dv, &err) != TDM_OK)
        fail_msg("%s: device: %s", what, tdm_err_msg(&err));
    if (tdm_sband_ref(s->r, qs, n, &rf, &err) != TDM_OK)
        fail_msg("%s: reference: %s", what, tdm_err_msg(&err));
    same_trace(&dv, &rf, qs, n, what);
    same_tops(qs, n, k, &rf, what);
    if (cut)
        assert_int_equal(qs[1]->so.n, 0);
    tdm_sband_trace_free(&dv);
    tdm_sband_trace_free(&rf);
    free_items(items, n);
}

/* ---- block bounds of range batches made on the device */

/* Query p's block bounds recomputed from its postings on the host (the
 * range kernel's float formula, the largest of each block) into p->bmax. */
static void postings_bounds(const tdm_ireader *r, const tdm_sbq *it)
{
    const tdm_sprep *p = &it->p;
    uint64_t sz;
    const uint32_t *doclens = tdm_ireader_section(r, TDM_SEC_DOCLENS, &sz);
    tdm_err err = {0};
    for (uint32_t t = 0; t < p->nt; t++) {
        const uint32_t *w = p->terms + t * TDM_SEARCH_TW;
        uint32_t df = w[1], bs = w[2], nb = (df + bs - 1) / bs;
        uint32_t *d = malloc((df + 1) * 4), *f = malloc((df + 1) * 4);
        if (tdm_ireader_decode(r, (uint32_t)it->q.terms[t].id, d, f, &err) != TDM_OK)
            fail_msg("decode: %s", tdm_err_msg(&err));
        float qw;
        memcpy(&qw, &w[4], 4);
        for (uint32_t b = 0; b < nb; b++) {
            float m = 0.0f;
            for (uint32_t i = b * bs; i < df && i < (b + 1) * bs; i++) {
                float tf = (float)f[i], sc;
                if (p->kind == TDM_SCORING_IMPACT)
                    sc = qw * tf;
                else
                    sc = (qw * tf) / (tf + (p->c0 + p->c1 * (float)doclens[d[i]]));
                m = sc > m ? sc : m;
            }
            p->bmax[w[3] + b] = m;
        }
        free(d);
        free(f);
    }
}

static void bounds_batch_once(tdm_search *s, int dev, const randcoll *c, tdm_rng *r, int salg,
                              int scoring, const char *what)
{
    tdm_sbq items[AND_N], *qs[AND_N];
    uint32_t n = tdm_test_small() ? 8 : AND_N, *terms;
    float *bmax;
    size_t nt, nb;
    prep_items(s, c, r, scoring, salg, 10, items, qs, n, what);
    /* the bounds' paths, as the planner picks them (tdm_splan.bounds):
       from the postings where k1, b are not the index's, else made on the
       device from the stored ones where it has fp64, else the host's */
    for (uint32_t i = 0; i < n; i++)
        qs[i]->pl.bounds = qs[i]->p.device_bounds ? TDM_SBOUNDS_POSTINGS
                           : s->dev[dev].fp64     ? TDM_SBOUNDS_STORED
                                                  : TDM_SBOUNDS_HOST;
    tdm_err err = {0};
    if (tdm_search_dev_batch_tables(&s->dev[dev], s->ndocs, qs, n, salg, 10, &terms, &bmax, &nt,
                                    &nb, &err) != TDM_OK)
        fail_msg("%s: device: %s", what, tdm_err_msg(&err));
    size_t tb = 0, bb = 0;
    for (uint32_t i = 0; i < n; i++) {
        tdm_sprep *p = &qs[i]->p;
        if (p->device_bounds)
            postings_bounds(s->r, qs[i]);
        tdm_sprep_host_order(p); /* the reference of words 5 and 6 */
        for (size_t j = 0; j < p->nbmax; j++)
            if (bits_of(bmax[bb + j]) != bits_of(p->bmax[j]))
                fail_msg("%s: query %u block %zu: device bound %.9g, reference %.9g (%s)", what,
                         i, j, bmax[bb + j], p->bmax[j], p->device_bounds ? "postings" : "stored");
        for (uint32_t t = 0; t < p->nt; t++)
            for (uint32_t w = TDM_TW_BOUND; w <= TDM_TW_ORDER; w++)
                if (terms[(tb + t) * TDM_SEARCH_TW + w] != p->terms[t * TDM_SEARCH_TW + w])
                    fail_msg("%s: query %u term %u word %u: device %u, reference %u", what, i, t,
                             w, terms[(tb + t) * TDM_SEARCH_TW + w], p->terms[t * TDM_SEARCH_TW + w]);
        tb += p->nt;
        bb += p->nbmax;
    }
    assert_int_equal(tb, nt);
    assert_int_equal(bb, nb);
    free(terms);
    free(bmax);
    free_items(items, n);
}

static void and_kernels_match_reference(void **state)
{
    fixture *f = *state;
    int small = tdm_test_small();
    /* 1024 documents: lists of every document end on a block boundary for
       every codec (blocks of 128 and 512); 100: one-block lists only; 1 */
    static const uint32_t sizes[] = {1024, 100, 1};
    const char *dir = tdm_test_tmpdir("search_batch_and");
    for (size_t ci = 0; ci < NCODECS; ci++) {
        for (size_t si = 0; si < 3; si++) {
            if (small && si != ci % 3)
                continue;
            /* small (Oclgrind): 256 documents (block boundaries for blocks of 128) */
            uint32_t nd = small && sizes[si] > 200 ? 256 : sizes[si];
            opened op;
            open_random(f->eng, dir, 7 + ci * 3 + si, nd, 30, codecs[ci], &op);
            tdm_search *s = op.s;
            tdm_rng r;
            tdm_rng_seed(&r, 100 + ci * 3 + si);
            for (int d = 0; d < s->ndev; d++)
                for (int sc = 0; sc < 3; sc++) {
                    if (small && sc != (int)(ci % 3)) /* Oclgrind: one scoring each */
                        continue;
                    char what[160];
                    uint32_t k = sc == 0 ? 10 : sc == 1 ? 1 : 128;
                    snprintf(what, sizeof what, "AND kernels: %s ndocs %u dev %d scoring %d k %u",
                             codecs[ci], nd, d, sc, k);
                    and_batch_once(s, d, &op.c, &r, k, sc, sc == 0, what);
                    static const int pr[] = {TDM_SALG_WAND, TDM_SALG_BMW, TDM_SALG_MAXSCORE};
                    snprintf(what, sizeof what, "batch bounds: %s ndocs %u dev %d scoring %d",
                             codecs[ci], nd, d, sc);
                    bounds_batch_once(s, d, &op.c, &r, pr[(sc + si) % 3], sc, what);
                }
            close_random(&op);
        }
    }
}

int main(void)
{
    (void)assert_same_index; /* randcoll.h's, for other tests */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_batch_runs_alone),
        cmocka_unit_test(batch_errors),
        cmocka_unit_test(batches_match_lone_queries),
        cmocka_unit_test(and_kernels_match_reference),
    };
    if (getenv("TDM_TEST_FILTER")) /* e.g. and_kernels* */
        cmocka_set_test_filter(getenv("TDM_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}
