/* The planner (plan/search_plan.c, tdm_search_plan) on devices described,
 * not opened: a GPU of 132 compute units and a CPU of 16. What it must keep:
 *  - auto on a GPU: COMPRESSED for ranked AND (GROUP when its shortest list
 *    holds more than 1/32 of the documents; ITEM in a batch of several),
 *    GROUP for OR and AND-then-OR,
 *    ITEM for WAND, BMW and MaxScore; on a CPU COMPRESSED for all;
 *  - the compressed cursors' scratch within the device's budget
 *    (tdm_search_zr_words: 2^24 words on a CPU, up to 2^27 on a GPU within
 *    half its largest allocation) for any number of terms (fewer ranges, not
 *    another variant), every document in a range;
 *  - a wanted range count the scratch cannot hold: the device's other
 *    default (GROUP for AND on a GPU, ITEM on a CPU);
 *  - a request's variant wins over auto; AUTO algorithm: OR for one term,
 *    MaxScore for more;
 *  - the host path for a query of at most the row's host_max_postings whose
 *    request leaves variant and ranges to the planner, the same when asked
 *    from the query's sizes before its lists are prepared
 *    (tdm_search_plan_host). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drive/search.h"
#include "drive/search_batch_dev.h"
#include "drive/search_seed.h"
#include "plan/search_hseed.h"
#include "runtime/tune_table.h"
#include "testutil.h"

typedef struct fake {
    tdm_device dev[2];
    tdm_sdev sdev[2];
    struct tdm_search s;
    tdm_settings st; /* the planner's own rules, but batch_host off (batch_host) */
} fake;

static void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    f->dev[0].info.type = TDM_DEVICE_GPU;
    f->dev[0].info.compute_units = 132;
    f->dev[0].info.max_alloc_bytes = 35ull << 30; /* the H200's */
    f->dev[1].info.type = TDM_DEVICE_CPU;
    f->dev[1].info.compute_units = 16;
    /* a CPU's batches on the host (the row's batch_host) would leave no
       device plan of a batch to look at: its own test, batch_host */
    f->st.tuning.batch_host = TDM_TUNE_OFF;
    for (int i = 0; i < 2; i++) {
        f->dev[i].settings = &f->st;
        f->sdev[i].d = &f->dev[i];
        f->sdev[i].index = i;
        f->sdev[i].fp64 = 1;
    }
    f->s.dev = f->sdev;
    f->s.ndev = 2;
    f->s.ndocs = 1000000;
}

static uint32_t min_df = 1000; /* the shortest list of the next plans */
/* and their postings: above every row's host_max_postings (the host path,
 * host_path below) */
static size_t npost = (size_t)1 << 40;
static int batched;             /* and whether they run in a batch */

/* What the planner reads of a preparation: nt terms, a shortest list of
 * `shortest` postings, `posts` postings in all, blocks of 128, BM25. */
static tdm_sprep prep_of(uint32_t nt, uint32_t shortest, uint64_t posts)
{
    tdm_sprep p;
    memset(&p, 0, sizeof p);
    p.nt = nt;
    p.min_df = shortest;
    p.max_block = 128;
    p.kind = TDM_SCORING_BM25;
    p.npost = posts;
    return p;
}

/* Every algorithm a request may name, AUTO first. */
static const int every_alg[] = {TDM_ALGO_AUTO, TDM_ALGO_OR,  TDM_ALGO_AND,     TDM_ALGO_AND_OR,
                                TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
#define EVERY_ALG (sizeof every_alg / sizeof *every_alg)

static tdm_splan plan(fake *f, uint32_t nt, int alg, int dev, int variant, uint32_t ranges)
{
    tdm_sprep p = prep_of(nt, min_df, npost);
    tdm_splan pl;
    tdm_err err = {0};
    if (tdm_search_plan(&f->s, &p, alg, dev, variant, ranges, 10, batched, &pl, &err) != TDM_OK)
        fail_msg("plan nt %u alg %d dev %d: %s", nt, alg, dev, tdm_err_msg(&err));
    assert_int_equal(pl.dev, dev);
    assert_true(pl.ranges >= 1 && pl.rlen >= 1);
    assert_true((uint64_t)pl.ranges * pl.rlen >= f->s.ndocs); /* every document in a range */
    assert_true((uint64_t)(pl.ranges - 1) * pl.rlen < f->s.ndocs); /* no empty range */
    /* every choice is the plan's: the algorithm's one mapping, the seeds'
       rules on the finished plan */
    assert_int_equal(pl.salg, tdm_search_salg(pl.alg));
    assert_int_equal(pl.seeded, tdm_search_seeded(&pl, pl.salg, 10, batched));
    assert_int_equal(pl.hseeded, tdm_search_hseeded(&pl, pl.salg, 10, batched));
    assert_true(pl.bounds == TDM_SBOUNDS_NONE || pl.salg == TDM_SALG_WAND ||
                pl.salg == TDM_SALG_BMW || pl.salg == TDM_SALG_MAXSCORE);
    return pl;
}

/* AUTO: OR for one term, MaxScore for more; on a GPU row OR from its
 * auto_or_min_terms on (long learned sparse queries), never on a CPU's; a
 * named algorithm is kept. */
static void auto_long_queries(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    uint32_t most = tdm_tune_row_get(TDM_KIND_GPU)->auto_or_min_terms;
    assert_true(most > 1);
    assert_int_equal(tdm_tune_row_get(TDM_KIND_CPU)->auto_or_min_terms, 0);
    assert_int_equal(plan(&f, 1, TDM_ALGO_AUTO, 0, TDM_VARIANT_AUTO, 0).alg, TDM_ALGO_OR);
    assert_int_equal(plan(&f, most - 1, TDM_ALGO_AUTO, 0, TDM_VARIANT_AUTO, 0).alg,
                     TDM_ALGO_MAXSCORE);
    assert_int_equal(plan(&f, most, TDM_ALGO_AUTO, 0, TDM_VARIANT_AUTO, 0).alg, TDM_ALGO_OR);
    assert_int_equal(plan(&f, most, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_AUTO, 0).alg,
                     TDM_ALGO_MAXSCORE);
    assert_int_equal(plan(&f, most + 40, TDM_ALGO_AUTO, 1, TDM_VARIANT_AUTO, 0).alg,
                     TDM_ALGO_MAXSCORE);
}

static void auto_variants(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    static const int algs[] = {TDM_ALGO_OR,   TDM_ALGO_AND, TDM_ALGO_AND_OR,
                               TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    static const int gpu[] = {TDM_VARIANT_GROUP, TDM_VARIANT_ITEM, TDM_VARIANT_GROUP,
                              TDM_VARIANT_ITEM,  TDM_VARIANT_ITEM, TDM_VARIANT_ITEM};
    for (size_t a = 0; a < 6; a++) {
        assert_int_equal(plan(&f, 3, algs[a], 0, TDM_VARIANT_AUTO, 0).variant, gpu[a]);
        assert_int_equal(plan(&f, 3, algs[a], 1, TDM_VARIANT_AUTO, 0).variant,
                         TDM_VARIANT_COMPRESSED);
    }
    assert_int_equal(plan(&f, 1, TDM_ALGO_AUTO, 0, TDM_VARIANT_AUTO, 0).alg, TDM_ALGO_OR);
    assert_int_equal(plan(&f, 2, TDM_ALGO_AUTO, 0, TDM_VARIANT_AUTO, 0).alg, TDM_ALGO_MAXSCORE);
    /* AND whose shortest list holds more than 1/32 of the documents: ITEM
       on a GPU too (no fallback: and_long_fraction 0), COMPRESSED on a CPU */
    min_df = 1000000 / 32 + 1;
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_AUTO, 0).variant,
                     TDM_VARIANT_ITEM);
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 1, TDM_VARIANT_AUTO, 0).variant,
                     TDM_VARIANT_COMPRESSED);
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_COMPRESSED, 0).variant,
                     TDM_VARIANT_COMPRESSED);
    batched = 1; /* in a batch of several: the decoded range batch on a GPU */
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_AUTO, 0).variant, TDM_VARIANT_ITEM);
    min_df = 1000;
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_AUTO, 0).variant, TDM_VARIANT_ITEM);
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 1, TDM_VARIANT_AUTO, 0).variant,
                     TDM_VARIANT_COMPRESSED);
    batched = 0;
    min_df = 1000000 / 32;
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_AUTO, 0).variant,
                     TDM_VARIANT_ITEM);
    min_df = 1000;
    /* a request's own variant */
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_ITEM, 0).variant, TDM_VARIANT_ITEM);
    /* ranked AND's block selection: a CPU's row, not a GPU's */
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_ITEM, 0).and_select, 0);
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 1, TDM_VARIANT_ITEM, 0).and_select, 1);
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_GROUP, 0).variant,
                     TDM_VARIANT_GROUP);
    assert_int_equal(plan(&f, 3, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_GROUP, 0).variant,
                     TDM_VARIANT_ITEM); /* GROUP is for exhaustive algorithms only */
}

static void compressed_fits(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    uint32_t prev = 0;
    for (uint32_t nt = 1; nt <= 1024; nt = nt < 8 ? nt + 1 : nt * 2) {
        for (int dev = 0; dev < 2; dev++) {
            /* a GPU's AUTO for AND is ITEM: COMPRESSED asked for there */
            tdm_splan pl = plan(&f, nt, TDM_ALGO_AND, dev,
                                dev ? TDM_VARIANT_AUTO : TDM_VARIANT_COMPRESSED, 0);
            assert_int_equal(pl.variant, TDM_VARIANT_COMPRESSED);
            uint64_t words = (uint64_t)nt * pl.ranges * (TDM_ZR_CW + 2u * 128u);
            if (words > tdm_search_zr_words(&f.dev[dev]))
                fail_msg("nt %u dev %d: %u ranges need %llu words", nt, dev, pl.ranges,
                         (unsigned long long)words);
            if (dev == 0) {
                assert_true(prev == 0 || pl.ranges <= prev); /* more terms, no more ranges */
                prev = pl.ranges;
            }
        }
    }
    /* two terms fit the GPU's full plan: 132 compute units x 2 groups x 64
       ranges, but none shorter than 64 documents */
    assert_int_equal(tdm_tune_row_of(&f.dev[0].info)->zr_min_rlen, 64);
    assert_int_equal(plan(&f, 2, TDM_ALGO_AND, 0, TDM_VARIANT_COMPRESSED, 0).ranges,
                     1000000u / 64);
    f.s.ndocs = 10000000;
    assert_int_equal(plan(&f, 2, TDM_ALGO_AND, 0, TDM_VARIANT_COMPRESSED, 0).rlen,
                     (10000000u + 132u * 2 * 64 - 1) / (132u * 2 * 64));
}

static void scratch_budget(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    assert_int_equal(tdm_search_zr_words(&f.dev[1]), TDM_ZR_MAX_WORDS); /* a CPU */
    assert_int_equal(tdm_search_zr_words(&f.dev[0]), TDM_ZR_GPU_WORDS);
    /* eight terms: the GPU's whole plan of 64-document ranges fits 2^27
       words (not 2^24) */
    assert_int_equal(plan(&f, 8, TDM_ALGO_AND, 0, TDM_VARIANT_COMPRESSED, 0).ranges,
                     1000000u / 64);
    f.dev[0].info.max_alloc_bytes = 128u << 20; /* half of it, in words */
    assert_int_equal(tdm_search_zr_words(&f.dev[0]), 64u << 20);
    f.dev[0].info.max_alloc_bytes = 16u << 20; /* never below the CPU's */
    assert_int_equal(tdm_search_zr_words(&f.dev[0]), TDM_ZR_MAX_WORDS);
    uint32_t r = plan(&f, 8, TDM_ALGO_AND, 0, TDM_VARIANT_COMPRESSED, 0).ranges;
    assert_true((uint64_t)r * 8 * (TDM_ZR_CW + 2u * 128u) <= TDM_ZR_MAX_WORDS);
}

static void wanted_ranges_fall_back(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    tdm_splan pl = plan(&f, 64, TDM_ALGO_AND, 0, TDM_VARIANT_COMPRESSED, 100000);
    assert_int_equal(pl.variant, TDM_VARIANT_GROUP);
    pl = plan(&f, 64, TDM_ALGO_AND, 1, TDM_VARIANT_AUTO, 100000);
    assert_int_equal(pl.variant, TDM_VARIANT_ITEM);
    assert_true(pl.ranges <= TDM_TUNE_MAX_CURSORS / 64u); /* 64 terms */
    pl = plan(&f, 2, TDM_ALGO_AND, 0, TDM_VARIANT_COMPRESSED, 1000);
    assert_int_equal(pl.variant, TDM_VARIANT_COMPRESSED);
    assert_int_equal(pl.ranges, 1000u);
}

/* The environment's switches (runtime/settings.h, read at engine open)
 * reach the plan through the device's settings: the variant auto means, the
 * scratch layout, the seeds' force, a GPU's shortest range and a CPU's
 * ranges a compute unit; without settings, the planner's own rules. */
static void tuning_reaches_the_plan(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    tdm_settings st;
    memset(&st, 0, sizeof st);
    st.tuning.batch_host = TDM_TUNE_OFF;
    for (int i = 0; i < 2; i++)
        f.dev[i].settings = &st;
    tdm_splan pl = plan(&f, 3, TDM_ALGO_MAXSCORE, 1, TDM_VARIANT_AUTO, 0);
    assert_int_equal(pl.variant, TDM_VARIANT_COMPRESSED);
    assert_int_equal(pl.zlayout, TDM_ZR_RANGE);
    assert_int_equal(pl.seed, TDM_TUNE_RULE);
    uint32_t cpu_ranges = pl.ranges;
    st.tuning.and_select = TDM_TUNE_ON; /* TANDEM_AND_SELECT over the GPU row's 0 */
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 0, TDM_VARIANT_ITEM, 0).and_select, 1);
    st.tuning.and_select = TDM_TUNE_OFF;
    assert_int_equal(plan(&f, 3, TDM_ALGO_AND, 1, TDM_VARIANT_ITEM, 0).and_select, 0);
    st.tuning.and_select = TDM_TUNE_RULE;
    st.tuning.search_variant = TDM_VARIANT_ITEM;
    st.tuning.zr_layout = TDM_TUNE_ZR_INTERLEAVED;
    st.tuning.seed = TDM_TUNE_OFF;
    st.tuning.zr_seed = TDM_TUNE_ON;
    st.tuning.cpu_ranges_per_cu = 1;
    pl = plan(&f, 3, TDM_ALGO_MAXSCORE, 1, TDM_VARIANT_AUTO, 0);
    assert_int_equal(pl.variant, TDM_VARIANT_ITEM);
    assert_int_equal(pl.zlayout, TDM_ZR_INTERLEAVED);
    assert_int_equal(pl.ranges, 16); /* a range for each of the 16 compute units */
    assert_true(pl.ranges < cpu_ranges);
    assert_int_equal(tdm_search_seeded(&pl, TDM_SALG_MAXSCORE, 10, 0), 0);
    st.tuning.seed = TDM_TUNE_ON;
    pl = plan(&f, 3, TDM_ALGO_MAXSCORE, 1, TDM_VARIANT_AUTO, 0);
    assert_int_equal(tdm_search_seeded(&pl, TDM_SALG_MAXSCORE, 10, 0), 1);
    assert_int_equal(tdm_search_hseeded(&pl, TDM_SALG_MAXSCORE, 10, 1), 1);
    /* a request's own variant still wins */
    assert_int_equal(plan(&f, 3, TDM_ALGO_MAXSCORE, 1, TDM_VARIANT_COMPRESSED, 0).variant,
                     TDM_VARIANT_COMPRESSED);
    /* a GPU's shortest range: 1M documents in ranges of at least 500,000 */
    memset(&st.tuning, 0, sizeof st.tuning);
    st.tuning.gpu_min_rlen = 500000;
    pl = plan(&f, 3, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_AUTO, 0);
    assert_true(pl.ranges <= 2);
    st.tuning.gpu_min_rlen = 0;
    assert_true(plan(&f, 3, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_AUTO, 0).ranges > 2);
}

/* The tuning table (runtime/tune_table.h): a row for every kind, each
 * complete; a device's kind from what it reports; the plan carries its
 * device's row and reads it (the same choices on NVIDIA's and another
 * GPU's, whose row copies NVIDIA's); k decides which runs stay alone. */
/* Where a pruning run's block bounds come from: a query alone (not batched,
 * or alone in a batch call at k above batch_max_k) by the row's query_bounds
 * (the device's on a GPU, the host's on a CPU) or TANDEM_QUERY_BOUNDS; a
 * batch by TANDEM_BATCH_BOUNDS (the device's); never the device's without
 * fp64; from the postings where the stored ones do not apply; none for the
 * exhaustive algorithms. */
static void bounds_rule(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    tdm_sprep p = prep_of(3, min_df, npost);
    tdm_splan pl;
    tdm_err err = {0};
    /* dev, batched, k, query_bounds setting, fp64, postings' bounds: expected */
    static const struct {
        int dev, batched;
        uint32_t k;
        int qb, fp64, post, want;
    } c[] = {
        {0, 0, 10, 0, 1, 0, TDM_SBOUNDS_STORED},
        {1, 0, 10, 0, 1, 0, TDM_SBOUNDS_HOST},
        {0, 0, 10, TDM_TUNE_BOUNDS_HOST, 1, 0, TDM_SBOUNDS_HOST},
        {1, 0, 10, TDM_TUNE_BOUNDS_DEVICE, 1, 0, TDM_SBOUNDS_STORED},
        {0, 0, 10, 0, 0, 0, TDM_SBOUNDS_HOST},
        {0, 0, 10, 0, 1, 1, TDM_SBOUNDS_POSTINGS},
        {1, 1, 10, 0, 1, 0, TDM_SBOUNDS_STORED},            /* a batch: its own rule */
        {0, 1, 10, TDM_TUNE_BOUNDS_HOST, 1, 0, TDM_SBOUNDS_STORED},
        /* alone in a batch call (k above either row's batch_max_k) */
        {1, 1, TDM_TUNE_BATCH_MAX_K_GPU + 1, 0, 1, 0, TDM_SBOUNDS_HOST},
        {0, 1, TDM_TUNE_BATCH_MAX_K_GPU + 1, TDM_TUNE_BOUNDS_HOST, 1, 0, TDM_SBOUNDS_HOST},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        f.st.tuning.query_bounds = c[i].qb;
        f.sdev[c[i].dev].fp64 = c[i].fp64;
        p.device_bounds = c[i].post;
        if (tdm_search_plan(&f.s, &p, TDM_ALGO_MAXSCORE, c[i].dev, TDM_VARIANT_AUTO, 0, c[i].k,
                            c[i].batched, &pl, &err))
            fail_msg("plan: %s", tdm_err_msg(&err));
        if (pl.bounds != c[i].want)
            fail_msg("case %zu: bounds %d, not %d", i, pl.bounds, c[i].want);
        f.sdev[c[i].dev].fp64 = 1;
        if (tdm_search_plan(&f.s, &p, TDM_ALGO_OR, c[i].dev, TDM_VARIANT_AUTO, 0, c[i].k,
                            c[i].batched, &pl, &err))
            fail_msg("plan: %s", tdm_err_msg(&err));
        assert_int_equal(pl.bounds, TDM_SBOUNDS_NONE);
    }
}

/* Wu's mapping above the row's and_wu_k for ranked AND and for AND-then-OR's
 * AND pass alike (the range batch's heaps stop there: AND-then-OR at k 1000
 * on a device without the compressed batch lost its OR pass, 99a6aac). */
static void and_wu_for_and_or(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    tdm_sprep p = prep_of(3, min_df, npost);
    const int algs[] = {TDM_ALGO_AND, TDM_ALGO_AND_OR};
    for (int a = 0; a < 2; a++)
        for (int big = 0; big < 2; big++) {
            tdm_splan pl;
            tdm_err err = {0};
            uint32_t k = big ? 1000 : 10;
            if (tdm_search_plan(&f.s, &p, algs[a], 0, TDM_VARIANT_AUTO, 0, k, 1, &pl, &err))
                fail_msg("plan: %s", tdm_err_msg(&err));
            assert_int_equal(pl.and_wu, k > pl.row->and_wu_k);
        }
}

static void tuning_table(void **state)
{
    (void)state;
    for (int kind = 0; kind < TDM_KIND_COUNT; kind++) {
        const tdm_tune_row *r = tdm_tune_row_get(kind);
        assert_non_null(r->name);
        assert_true(r->item_local >= 1 && r->item_ranges_per_cu >= 1 && r->zr_ranges_per_cu >= 1);
        assert_true(r->min_rlen >= 1 && r->zr_min_rlen >= 1 && r->group_per_cu >= 1 &&
                    r->batch_min_rlen >= 1);
        assert_true(r->batch_ranges_per_cu >= 1 && r->seed_rlen_per_k >= 1);
        assert_true(r->zr_words >= TDM_ZR_MAX_WORDS);
        assert_true(r->zr_layout == TDM_ZR_RANGE || r->zr_layout == TDM_ZR_INTERLEAVED);
        assert_true(r->decode_variant == TDM_TUNE_DECODE_GROUP ||
                    r->decode_variant == TDM_TUNE_DECODE_SERIAL);
        for (int a = TDM_ALGO_OR; a <= TDM_ALGO_MAXSCORE; a++) {
            assert_true(r->auto_variant[a] >= TDM_VARIANT_ITEM &&
                        r->auto_variant[a] <= TDM_VARIANT_COMPRESSED);
            /* where COMPRESSED cannot run: a decoded variant */
            assert_true(r->fallback[a] == TDM_VARIANT_ITEM || r->fallback[a] == TDM_VARIANT_GROUP);
        }
    }
    tdm_device_info info;
    memset(&info, 0, sizeof info);
    info.type = TDM_DEVICE_GPU;
    snprintf(info.vendor, sizeof info.vendor, "NVIDIA Corporation");
    assert_int_equal(tdm_tune_kind_of(&info), TDM_KIND_NVIDIA_GPU);
    snprintf(info.vendor, sizeof info.vendor, "Advanced Micro Devices, Inc.");
    assert_int_equal(tdm_tune_kind_of(&info), TDM_KIND_GPU);
    snprintf(info.platform, sizeof info.platform, "Oclgrind");
    assert_int_equal(tdm_tune_kind_of(&info), TDM_KIND_SIMULATOR);
    assert_false(tdm_tune_row_of(&info)->staging); /* its runtime is not thread-safe */
    assert_true(tdm_tune_row_of(&info)->gpu);
    info.type = TDM_DEVICE_CPU;
    assert_int_equal(tdm_tune_kind_of(&info), TDM_KIND_CPU);
    assert_int_equal(tdm_tune_row_of(&info)->decode_variant, TDM_TUNE_DECODE_SERIAL);
    info.type = TDM_DEVICE_ACCELERATOR;
    assert_int_equal(tdm_tune_kind_of(&info), TDM_KIND_OTHER);
    assert_false(tdm_tune_row_of(&info)->gpu); /* plans as a CPU */
    assert_int_equal(tdm_tune_row_of(&info)->decode_variant, TDM_TUNE_DECODE_GROUP);

    /* another GPU plans as NVIDIA's; the plan carries the row */
    fake f;
    fake_init(&f);
    snprintf(f.dev[0].info.vendor, sizeof f.dev[0].info.vendor, "NVIDIA Corporation");
    static const int algs[] = {TDM_ALGO_OR,   TDM_ALGO_AND, TDM_ALGO_AND_OR,
                               TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    tdm_splan nv[6];
    for (size_t a = 0; a < 6; a++) {
        nv[a] = plan(&f, 3, algs[a], 0, TDM_VARIANT_AUTO, 0);
        assert_ptr_equal(nv[a].row, tdm_tune_row_get(TDM_KIND_NVIDIA_GPU));
        assert_int_equal(nv[a].variant, tdm_tune_row_get(TDM_KIND_NVIDIA_GPU)->auto_variant[algs[a]]);
    }
    snprintf(f.dev[0].info.vendor, sizeof f.dev[0].info.vendor, "Intel(R) Corporation");
    for (size_t a = 0; a < 6; a++) {
        tdm_splan pl = plan(&f, 3, algs[a], 0, TDM_VARIANT_AUTO, 0);
        assert_ptr_equal(pl.row, tdm_tune_row_get(TDM_KIND_GPU));
        assert_int_equal(pl.variant, nv[a].variant);
        assert_int_equal(pl.ranges, nv[a].ranges);
        assert_int_equal(pl.local, nv[a].local);
    }
    assert_ptr_equal(plan(&f, 3, TDM_ALGO_OR, 1, TDM_VARIANT_AUTO, 0).row,
                     tdm_tune_row_get(TDM_KIND_CPU));

    /* k: above the row's batch_max_k the pruning algorithms and OR run
       alone; ranked AND and AND-then-OR batch at any k */
    tdm_sprep p = prep_of(3, 1000, npost);
    uint32_t kmax = tdm_tune_row_get(TDM_KIND_NVIDIA_GPU)->batch_max_k;
    for (size_t a = 0; a < 6; a++) {
        for (uint32_t k = kmax; k <= kmax + 1; k++) {
            tdm_splan pl;
            tdm_err err = {0};
            assert_int_equal(tdm_search_plan(&f.s, &p, algs[a], 0, TDM_VARIANT_AUTO, 0, k, 1, &pl,
                                             &err),
                             TDM_OK);
            int and = algs[a] == TDM_ALGO_AND || algs[a] == TDM_ALGO_AND_OR;
            assert_int_equal(pl.alone, !and && k > kmax);
        }
    }
    /* TANDEM_BATCH_MAX_K (read at engine open into the tuning) moves it */
    f.st.tuning.batch_max_k = 50;
    assert_int_equal(tdm_search_batch_max_k(&f.s.dev[0]), 50);
    for (uint32_t k = 50; k <= 51; k++) {
        tdm_splan pl;
        tdm_err err = {0};
        assert_int_equal(tdm_search_plan(&f.s, &p, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_AUTO, 0, k, 1,
                                         &pl, &err),
                         TDM_OK);
        assert_int_equal(pl.alone, k > 50);
    }
    f.st.tuning.batch_max_k = 0;
    assert_int_equal(tdm_search_batch_max_k(&f.s.dev[0]), kmax);
}

/* The host rule asked before the lists are prepared (tdm_search_plan_host,
 * from p's sizes alone) says what tdm_search_plan said (pl), and where
 * that is the host, gives the same plan, byte for byte. */
static void same_early(fake *f, const tdm_sprep *p, int alg, int dev, int variant,
                       uint32_t ranges, int batched, const tdm_splan *pl)
{
    tdm_splan early;
    memset(&early, 0xa5, sizeof early);
    tdm_err err = {0};
    assert_int_equal(tdm_search_plan_host(&f->s, p->nt, p->npost, alg, dev, variant, ranges, 10,
                                          batched, &early, &err), TDM_OK);
    assert_int_equal(early.host, pl->host);
    if (pl->host)
        assert_memory_equal(&early, pl, sizeof early);
}

/* The seeds of a pruning run on the decoded variant: alone on a GPU below
 * the row's hseed_alone_below_k the host's instead of the device's, from
 * it the device's alone; in a batch the host's (the batch has no seed pass)
 * and the device's for a run rerun alone; a CPU's ITEM run alone never the
 * host's (the device's by its own rule); TANDEM_SEED and TANDEM_ZR_SEED
 * force either; a query whose bounds the device makes from its postings
 * never the host's. */
static void lone_seed_rule(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    tdm_sprep p = prep_of(3, min_df, npost);
    tdm_err err = {0};
    uint32_t below = tdm_tune_row_of(&f.dev[0].info)->hseed_alone_below_k;
    assert_true(below > 10 && below <= 1000);
    static const int algs[] = {TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
    for (size_t a = 0; a < 3; a++)
        for (int dev = 0; dev < 2; dev++)
            for (int b = 0; b < 2; b++)
                for (uint32_t k = 10; k <= 1000; k += 990) {
                    tdm_splan pl;
                    assert_int_equal(tdm_search_plan(&f.s, &p, algs[a], dev, TDM_VARIANT_ITEM,
                                                     0, k, b, &pl, &err), TDM_OK);
                    int host = b || (dev == 0 && k < below);
                    int dseed = dev == 0 ? !host || b : pl.seeded; /* a CPU's: its rule */
                    if (pl.hseeded != host || pl.seeded != dseed)
                        fail_msg("alg %d dev %d batched %d k %u: hseeded %d seeded %d", algs[a],
                                 dev, b, k, pl.hseeded, pl.seeded);
                }
    /* the switches win over the rule */
    f.st.tuning.zr_seed = TDM_TUNE_OFF;
    tdm_splan pl;
    assert_int_equal(tdm_search_plan(&f.s, &p, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_ITEM, 0, 10, 0,
                                     &pl, &err), TDM_OK);
    assert_true(!pl.hseeded && pl.seeded);
    f.st.tuning.zr_seed = TDM_TUNE_ON;
    f.st.tuning.seed = TDM_TUNE_ON;
    assert_int_equal(tdm_search_plan(&f.s, &p, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_ITEM, 0, 1000, 0,
                                     &pl, &err), TDM_OK);
    assert_true(pl.hseeded && pl.seeded);
    /* bounds from the postings: no host seed, the device's */
    f.st.tuning.zr_seed = TDM_TUNE_RULE;
    f.st.tuning.seed = TDM_TUNE_RULE;
    p.device_bounds = 1;
    assert_int_equal(tdm_search_plan(&f.s, &p, TDM_ALGO_MAXSCORE, 0, TDM_VARIANT_ITEM, 0, 10, 0,
                                     &pl, &err), TDM_OK);
    assert_true(!pl.hseeded && pl.seeded);
}

/* Who reads block bounds: Block-Max WAND always; WAND and MaxScore only
 * where the preparation left the terms' bounds unset (they read each
 * term's bound and order alone); the exhaustive algorithms never. */
static void reads_blocks_rule(void **state)
{
    (void)state;
    tdm_sprep p = prep_of(3, 10, 1000);
    static const int salgs[] = {TDM_SALG_OR, TDM_SALG_AND, TDM_SALG_AND_OR, TDM_SALG_WAND,
                                TDM_SALG_BMW, TDM_SALG_MAXSCORE};
    for (int tb = 0; tb < 2; tb++) {
        p.term_bounds = tb;
        for (size_t i = 0; i < sizeof salgs / sizeof *salgs; i++) {
            int s = salgs[i];
            int want = s == TDM_SALG_BMW || (!tb && tdm_search_salg_prunes(s));
            if (tdm_search_reads_blocks(&p, s) != want)
                fail_msg("salg %d term_bounds %d: reads blocks %d", s, tb,
                         tdm_search_reads_blocks(&p, s));
        }
    }
}

/* The host path: a query of at most the row's host_max_postings (GPU and
 * CPU rows alike: every device without settings) whose request leaves the
 * variant and ranges to the planner, whatever its algorithm and however it
 * is batched; one posting more, a variant or ranges asked for: a device. */
static void host_path(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    const int *algs = every_alg;
    tdm_sprep p = prep_of(2, 3, 0);
    tdm_err err = {0};
    for (int dev = 0; dev < 2; dev++) {
        for (size_t a = 0; a < EVERY_ALG; a++)
            for (int b = 0; b < 2; b++) {
                uint64_t most = tdm_tune_row_of(&f.dev[dev].info)
                                    ->host_max_postings[tdm_search_auto_alg(algs[a], p.nt)];
                assert_true(most >= 128); /* a list of less than one block at least */
                tdm_splan pl;
                p.npost = most;
                assert_int_equal(tdm_search_plan(&f.s, &p, algs[a], dev, TDM_VARIANT_AUTO, 0, 10,
                                                 b, &pl, &err), TDM_OK);
                assert_true(pl.host && pl.variant == TDM_VARIANT_HOST && pl.dev == dev);
                assert_int_equal(pl.alg, tdm_search_auto_alg(algs[a], p.nt));
                assert_int_equal(pl.salg, tdm_search_salg(pl.alg));
                assert_true(!pl.seeded && !pl.hseeded && pl.ranges == 1);
                same_early(&f, &p, algs[a], dev, TDM_VARIANT_AUTO, 0, b, &pl);
                p.npost = most + 1;
                assert_int_equal(tdm_search_plan(&f.s, &p, algs[a], dev, TDM_VARIANT_AUTO, 0, 10,
                                                 b, &pl, &err), TDM_OK);
                assert_true(!pl.host && pl.variant != TDM_VARIANT_HOST);
                same_early(&f, &p, algs[a], dev, TDM_VARIANT_AUTO, 0, b, &pl);
                p.npost = 1;
                assert_int_equal(tdm_search_plan(&f.s, &p, algs[a], dev, TDM_VARIANT_ITEM, 0, 10,
                                                 b, &pl, &err), TDM_OK);
                assert_true(!pl.host && pl.variant == TDM_VARIANT_ITEM);
                same_early(&f, &p, algs[a], dev, TDM_VARIANT_ITEM, 0, b, &pl);
                assert_int_equal(tdm_search_plan(&f.s, &p, algs[a], dev, TDM_VARIANT_AUTO, 7, 10,
                                                 b, &pl, &err), TDM_OK);
                assert_true(!pl.host && pl.ranges == 7);
                same_early(&f, &p, algs[a], dev, TDM_VARIANT_AUTO, 7, b, &pl);
            }
    }
}

/* A batch call's queries on the host (the row's batch_host, on for CPU
 * rows): in a batch on the CPU every algorithm at any k (MaxScore at small
 * k too), up to the row's batch_host_max_postings, past them ranked AND,
 * the pruning algorithms of two terms or more (MaxScore's evaluator;
 * tdm_search_host_ms) and one-term queries (a block at a time) too: no
 * posting kept;
 * never alone (single queries keep host_max_postings), never on the GPU row
 * unless TANDEM_BATCH_HOST=on, never with TANDEM_BATCH_HOST=off, nor where
 * TANDEM_HOST_MAX_POSTINGS is set, nor where a variant or ranges are asked
 * for, nor past the postings. */
static void batch_host(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    f.st.tuning.batch_host = TDM_TUNE_RULE;
    const int *algs = every_alg;
    tdm_sprep p = prep_of(3, 1000, 0);
    tdm_err err = {0};
    const tdm_tune_row *cpu = tdm_tune_row_of(&f.dev[1].info);
    assert_int_equal(cpu->batch_host, 1);
    for (size_t a = 1; a < EVERY_ALG; a++)
        assert_true(cpu->batch_host_max_postings > cpu->host_max_postings[every_alg[a]]);
    assert_int_equal(tdm_tune_row_of(&f.dev[0].info)->batch_host, 0);
    for (size_t a = 0; a < EVERY_ALG; a++)
        for (uint32_t k = 10; k <= 1000; k += 990)
            for (int mode = 0; mode < 8; mode++) {
                /* 0 the rules; 1 TANDEM_BATCH_HOST=off; 2 =on; 3 the host's
                   threshold set; 4 a variant asked for; 5 ranges asked for;
                   6 one posting past the row's; 7 the same, one term */
                f.st.tuning.batch_host = mode == 1 ? TDM_TUNE_OFF
                                         : mode == 2 ? TDM_TUNE_ON
                                                     : TDM_TUNE_RULE;
                f.st.tuning.host_max_set = mode == 3;
                f.st.tuning.host_max_postings = mode == 3 ? 1000 : 0;
                int variant = mode == 4 ? TDM_VARIANT_ITEM : TDM_VARIANT_AUTO;
                uint32_t ranges = mode == 5 ? 7 : 0;
                for (int dev = 0; dev < 2; dev++)
                    for (int b = 0; b < 2; b++) {
                        /* the row's postings (2^20 where it has none) */
                        uint64_t most = tdm_tune_row_of(&f.dev[dev].info)->batch_host_max_postings;
                        most = most ? most : 1ull << 20;
                        p.npost = mode >= 6 ? most + 1 : most;
                        p.nt = mode == 7 ? 1 : 3;
                        tdm_splan pl;
                        assert_int_equal(tdm_search_plan(&f.s, &p, algs[a], dev, variant, ranges,
                                                         k, b, &pl, &err), TDM_OK);
                        int on = mode == 2 || ((mode == 0 || mode >= 6) && dev == 1);
                        /* past the row's postings ranked AND, a pruning query of
                           several terms and a one-term query (no posting kept) */
                        int alg = tdm_search_auto_alg(algs[a], p.nt); /* AUTO: MaxScore */
                        int past = alg == TDM_ALGO_AND || mode == 7 ||
                                   (mode == 6 && tdm_search_prunes(alg));
                        int want = b && on && (mode < 6 || past);
                        if (pl.host != want)
                            fail_msg("alg %d k %u mode %d dev %d batched %d: host %d", algs[a],
                                     k, mode, dev, b, pl.host);
                        assert_int_equal(pl.variant == TDM_VARIANT_HOST, want);
                        /* the preparation's early rule, told of the batch, the same */
                        tdm_splan early;
                        memset(&early, 0xa5, sizeof early);
                        assert_int_equal(tdm_search_plan_host(&f.s, p.nt, p.npost, algs[a], dev,
                                                              variant, ranges, k, b, &early,
                                                              &err),
                                         TDM_OK);
                        assert_int_equal(early.host, want);
                        if (want)
                            assert_memory_equal(&early, &pl, sizeof early);
                    }
            }
}

/* A batch query's heap slots at most (search_batch_dev.c): its ranges are
 * capped by the merge's keys (batch_merge_keys / k) at small k, but never
 * made longer than the GPU row's batch_merge_rlen documents at large k;
 * the whole batch's ranges by the device's share (ranges a compute unit x
 * compute units, at least one a query). TANDEM_BATCH_MERGE_KEYS moves the
 * cap. */
static void batch_ranges_rule(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    const tdm_device *g = &f.dev[0];
    const tdm_tune_row *rw = tdm_tune_row_get(TDM_KIND_GPU);
    uint32_t mk = rw->batch_merge_keys, mr = rw->batch_merge_rlen;
    assert_true(mk > 0 && mr > 0);
    /* k 10: the keys' cap (3,276 ranges of 305 documents on 1M) */
    assert_int_equal(tdm_search_batch_heap_keys(g, 1000000, 10, 1), (uint64_t)(mk / 10) * 10);
    /* k 1,000: ranges of at most mr documents, not the cap's 32 */
    assert_int_equal(tdm_search_batch_heap_keys(g, 1000000, 1000, 1),
                     (uint64_t)(1000000 / mr) * 1000);
    assert_int_equal(tdm_search_batch_heap_keys(g, 10000000, 1000, 1),
                     (uint64_t)(10000000 / mr) * 1000);
    /* ... within the 8k-document floor of a range at k (ndocs / 8k) */
    assert_int_equal(tdm_search_batch_heap_keys(g, 100000, 1000, 1), 12 * 1000);
    /* a batch: each query's, or the device's ranges shared by them all */
    uint64_t share = 132ull * rw->batch_ranges_per_cu;
    assert_int_equal(tdm_search_batch_heap_keys(g, 1000000, 1000, 7), 7ull * (1000000 / mr) * 1000);
    assert_int_equal(tdm_search_batch_heap_keys(g, 1000000, 10, 8192), (share + 8192) * 10);
    /* TANDEM_BATCH_MERGE_KEYS and _RLEN (read at engine open into the tuning) */
    f.st.tuning.batch_merge_keys = 524288;
    assert_int_equal(tdm_search_batch_heap_keys(g, 10000000, 1000, 1), (10000000 / mr) * 1000ull);
    f.st.tuning.batch_merge_rlen = 1u << 30; /* no floor in effect: the keys' 524 */
    assert_int_equal(tdm_search_batch_heap_keys(g, 10000000, 1000, 1), 524ull * 1000);
    f.st.tuning.batch_merge_rlen = 50000;
    f.st.tuning.batch_merge_keys = 0;
    assert_int_equal(tdm_search_batch_heap_keys(g, 10000000, 1000, 1), 200ull * 1000);
    f.st.tuning.batch_merge_rlen = 0;
    /* a CPU row: no floor; the 8k-document ranges (125), within its 16 cores'
       share (4 ranges a core, and one a query) */
    uint64_t cshare = 16ull * tdm_tune_row_get(TDM_KIND_CPU)->batch_ranges_per_cu + 1;
    assert_int_equal(tdm_search_batch_heap_keys(&f.dev[1], 1000000, 1000, 1),
                     (cshare < 125 ? cshare : 125) * 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(auto_variants),        cmocka_unit_test(batch_host),
        cmocka_unit_test(auto_long_queries),
        cmocka_unit_test(compressed_fits),
        cmocka_unit_test(scratch_budget),
        cmocka_unit_test(wanted_ranges_fall_back),
        cmocka_unit_test(tuning_reaches_the_plan),
        cmocka_unit_test(tuning_table),
        cmocka_unit_test(and_wu_for_and_or),
        cmocka_unit_test(bounds_rule),
        cmocka_unit_test(host_path),
        cmocka_unit_test(lone_seed_rule),
        cmocka_unit_test(reads_blocks_rule),
        cmocka_unit_test(batch_ranges_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
