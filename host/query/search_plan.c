/* The planner (search.h): which device, which algorithm, how many ranges.
 *
 * Variants (tandem.h, enum tdm_search_variant). ITEM, the range kernel: a
 * work-item per docid range, document at a time (Huang 2017), every
 * algorithm. A CPU device (PoCL) gets groups of one work-item and a few
 * ranges per core, so every core works on the one query with long ranges
 * (few cursor set-ups, good pruning); a GPU gets groups of 64 and enough
 * ranges to fill every compute unit with whole groups. GROUP, the group
 * kernel: a work-group per range with dense accumulators in local memory
 * (Ding 2009), for exhaustive OR and AND, the planner's choice on a GPU
 * (coalesced reads of each list, no per-document cursor juggling); a few
 * groups per compute unit. COMPRESSED, ITEM on the compressed index
 * (cl/search_zrange.cl: cursors decode only the blocks they enter, no
 * decode launch): the CPU default and a lone ranked AND's on a GPU, else the
 * device's other default where it cannot apply (tdm_search_zrange_fits).
 *
 * Algorithm `auto`: one term -> OR (nothing to prune across terms); else
 * MaxScore, the fastest exact disjunction in PISA at k = 10 and 1000 (the
 * issue's table), and no worse here: it only looks non-essential lists up. */
#include <stdlib.h>
#include <string.h>

#include "search.h"
#include "search_seed.h"
#include "search_testing.h"
#include "tandem.h"

#define CPU_RANGES_PER_CU 4u
#define CPU_MIN_RLEN 256u
#define GPU_LOCAL 64u
#define GPU_MIN_RLEN 64u
/* Cursor and order scratch: ranges x terms words each. */
#define MAX_CURSORS (1u << 22)

static int is_gpu(const tdm_sdev *sd)
{
    return sd->d->info.type == TDM_DEVICE_GPU;
}

/* Any device computes exact BM25 (search_range.cl's division: PTX, fp64,
 * or integers), so the choice is by kind and size alone. */
static int pick_device(const struct tdm_search *s, int device, tdm_err *err)
{
    if (device >= 0) {
        for (int i = 0; i < s->ndev; i++)
            if (s->dev[i].index == device)
                return i;
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "device = %d: the engine has devices 0 .. %d",
                           device, s->ndev - 1);
    }
    int best = -1;
    for (int i = 0; i < s->ndev; i++) {
        const tdm_sdev *sd = &s->dev[i];
        if (best < 0 || (is_gpu(sd) && !is_gpu(&s->dev[best])) ||
            (is_gpu(sd) == is_gpu(&s->dev[best]) &&
             sd->d->info.compute_units > s->dev[best].d->info.compute_units))
            best = i;
    }
    return best;
}

/* The tuning switches of device sd (runtime/settings.h: the environment,
 * read at engine open; every one 0 where unset). */
static const tdm_tuning *tuning(const tdm_sdev *sd)
{
    return tdm_settings_tuning(sd->d->settings);
}

/* Ranges a CPU compute unit gets: CPU_RANGES_PER_CU, or
 * TANDEM_CPU_RANGES_PER_CU (for timing runs). */
static uint32_t cpu_ranges_per_cu(const tdm_tuning *t)
{
    return t->cpu_ranges_per_cu ? t->cpu_ranges_per_cu : CPU_RANGES_PER_CU;
}

/* Groups of GPU_LOCAL ranges a GPU compute unit gets for COMPRESSED, or
 * TANDEM_GPU_ZGROUPS_PER_CU (for timing runs). Its cursors keep a
 * decoded block per term a range in global memory, so fewer, longer ranges
 * than ITEM's (which shares decoded lists). H200, 1M documents, 5,000
 * queries, interleaved scratch, mean us at 1 / 2 / 4 groups: AND k10
 * 171.8 / 153.8 / 153.2, MaxScore k10 255.6 / 192.4 / 190.6 (BENCHMARKS.md,
 * fifth session). */
static uint32_t gpu_zgroups_per_cu(const tdm_tuning *t)
{
    return t->gpu_zgroups_per_cu ? t->gpu_zgroups_per_cu : 2u;
}

/* The shortest range a GPU gets, or TANDEM_GPU_MIN_RLEN (for timing runs). */
static uint32_t gpu_min_rlen(const tdm_tuning *t)
{
    return t->gpu_min_rlen ? t->gpu_min_rlen : GPU_MIN_RLEN;
}

/* zwords: the compressed cursors' scratch words a term a range (0: another
 * variant). Without a wanted count, ranges are capped so that the scratch
 * fits the device's budget (tdm_search_zr_words): a query of many terms gets fewer, longer ranges
 * instead of another variant. */
static void size_ranges(const tdm_sdev *sd, uint32_t ndocs, uint32_t nt, uint32_t zwords,
                        uint32_t want, tdm_splan *pl)
{
    uint32_t cus = sd->d->info.compute_units ? sd->d->info.compute_units : 1;
    uint32_t r, minlen;
    if (is_gpu(sd)) {
        pl->local = GPU_LOCAL;
        r = cus * GPU_LOCAL *
            (pl->variant == TDM_VARIANT_COMPRESSED ? gpu_zgroups_per_cu(tuning(sd)) : 4u);
        minlen = gpu_min_rlen(tuning(sd));
    } else {
        pl->local = 1;
        r = cus * cpu_ranges_per_cu(tuning(sd));
        minlen = CPU_MIN_RLEN;
    }
    if (want) {
        r = want;
    } else if ((uint64_t)r * minlen > ndocs) {
        r = (ndocs + minlen - 1) / minlen;
    }
    if (r > MAX_CURSORS / (nt ? nt : 1))
        r = MAX_CURSORS / (nt ? nt : 1);
    uint64_t zmax = tdm_search_zr_words(sd->d);
    if (!want && zwords && (uint64_t)r * nt * zwords > zmax)
        r = (uint32_t)(zmax / ((uint64_t)(nt ? nt : 1) * zwords));
    if (r > ndocs)
        r = ndocs;
    if (r < 1)
        r = 1;
    pl->rlen = (uint32_t)(((uint64_t)ndocs + r - 1) / r);
    if (pl->rlen < 1)
        pl->rlen = 1;
    pl->ranges = (uint32_t)(((uint64_t)ndocs + pl->rlen - 1) / pl->rlen);
    if (pl->ranges < 1)
        pl->ranges = 1;
}

/* Work-groups per compute unit for the GROUP variant. */
#define GROUPS_PER_CU 8u

static void size_groups(const tdm_sdev *sd, uint32_t ndocs, uint32_t nt, uint32_t want,
                        tdm_splan *pl)
{
    uint32_t cus = sd->d->info.compute_units ? sd->d->info.compute_units : 1;
    uint32_t r = want ? want : cus * GROUPS_PER_CU;
    if (r > MAX_CURSORS / (nt ? nt : 1))
        r = MAX_CURSORS / (nt ? nt : 1);
    if (r > ndocs)
        r = ndocs;
    if (r < 1)
        r = 1;
    pl->rlen = (uint32_t)(((uint64_t)ndocs + r - 1) / r);
    pl->ranges = (uint32_t)(((uint64_t)ndocs + pl->rlen - 1) / pl->rlen);
    pl->local = (uint32_t)sd->d->wg_size;
}

static void size_plan(const tdm_sdev *sd, uint32_t ndocs, const tdm_sprep *p, uint32_t want,
                      tdm_splan *pl)
{
    uint32_t zwords = pl->variant == TDM_VARIANT_COMPRESSED && p->max_block
                          ? TDM_ZR_CW + 2u * p->max_block
                          : 0u;
    if (pl->variant == TDM_VARIANT_GROUP)
        size_groups(sd, ndocs, p->nt, want, pl);
    else
        size_ranges(sd, ndocs, p->nt, zwords, want, pl);
}

uint64_t tdm_search_zr_words(const tdm_device *d)
{
    if (d->info.type != TDM_DEVICE_GPU)
        return TDM_ZR_MAX_WORDS;
    uint64_t w = d->info.max_alloc_bytes / 2; /* the docs buffer: 4 bytes, half the words */
    if (w > TDM_ZR_GPU_WORDS)
        w = TDM_ZR_GPU_WORDS;
    return w > TDM_ZR_MAX_WORDS ? w : TDM_ZR_MAX_WORDS;
}

int tdm_search_zrange_fits(const tdm_device *d, const tdm_sprep *p, int salg, uint32_t nranges)
{
    int bounds = salg == TDM_SALG_WAND || salg == TDM_SALG_BMW || salg == TDM_SALG_MAXSCORE;
    uint64_t words = (uint64_t)p->nt * nranges * (TDM_ZR_CW + 2u * (uint64_t)p->max_block);
    return !d->no_zcur && !(bounds && p->device_bounds) && p->max_block &&
           words <= tdm_search_zr_words(d);
}

static int zr_forced = -1;

void tdm_search_zr_layout_force(int layout)
{
    __atomic_store_n(&zr_forced, layout, __ATOMIC_RELAXED);
}

/* The compressed variant's scratch layout on device sd: range-major on a
 * CPU, where each range runs on one core and must not share cache lines
 * with its neighbours' (d3186ea); interleaved on a GPU, whose warps run 32
 * ranges in lockstep: each of their cursor, buffer and ord accesses is then
 * one coalesced transaction instead of 32. */
static void zr_layout(const tdm_sdev *sd, tdm_splan *pl)
{
    int f = __atomic_load_n(&zr_forced, __ATOMIC_RELAXED), e = tuning(sd)->zr_layout;
    /* TANDEM_ZR_LAYOUT=range|interleaved on every device, for A/B runs */
    pl->zlayout = f >= 0                          ? (uint32_t)f
                  : e == TDM_TUNE_ZR_RANGE        ? TDM_ZR_RANGE
                  : e == TDM_TUNE_ZR_INTERLEAVED  ? TDM_ZR_INTERLEAVED
                  : is_gpu(sd)                    ? TDM_ZR_INTERLEAVED
                                                  : TDM_ZR_RANGE;
}

/* Ranked AND on a GPU runs GROUP instead of COMPRESSED when its shortest
 * list holds more than 1/AND_GROUP_FRACTION of the documents: every range's
 * cursors then decode a block of every list, the slowest ranges set the
 * query's time, and GROUP's coalesced scan of the lists wins. H200, 1M
 * documents, 5,000 queries, k10, both variants per query (bench queries
 * --per-query): COMPRESSED alone mean 164.1 / p99 577 us, GROUP alone
 * 215.1 / 408, GROUP where the shortest list is past 36,085 postings (a
 * tenth of the queries) 153.1 / 391, past 9,292 (a quarter) 159.0 / 366,
 * the better of the two per query 151.0 / 363. */
#define AND_GROUP_FRACTION 32u

static int and_group(const tdm_sprep *p, uint32_t ndocs)
{
    return p->nt > 1 && (uint64_t)p->min_df * AND_GROUP_FRACTION > ndocs;
}

int tdm_search_auto_alg(int algorithm, size_t nt)
{
    if (algorithm != TDM_ALGO_AUTO)
        return algorithm;
    return nt <= 1 ? TDM_ALGO_OR : TDM_ALGO_MAXSCORE;
}

int tdm_search_plan(const struct tdm_search *s, const tdm_sprep *p, int algorithm, int device,
                    int variant, uint32_t ranges, uint32_t k, int batched, tdm_splan *out,
                    tdm_err *err)
{
    (void)k;
    memset(out, 0, sizeof *out);
    int i = pick_device(s, device, err);
    if (i < 0)
        return i;
    out->dev = i;
    out->alg = tdm_search_auto_alg(algorithm, p->nt);
    int exhaustive = out->alg == TDM_ALGO_OR || out->alg == TDM_ALGO_AND ||
                     out->alg == TDM_ALGO_AND_OR;
    /* TANDEM_SEARCH_VARIANT: what AUTO means, for A/B runs of a whole
     * benchmark (a request's own variant wins) */
    const tdm_tuning *tn = tuning(&s->dev[i]);
    if (variant == TDM_VARIANT_AUTO && tn->search_variant)
        variant = tn->search_variant;
    out->seed = tn->seed;
    out->zr_seed = tn->zr_seed;
    /* On a CPU COMPRESSED for every algorithm: PoCL, 2 cores, 1M documents,
     * 300 queries, mean us ITEM / COMPRESSED, two alternating runs: OR k10
     * 16,908, 14,070 / 6,622, 6,729; AND-then-OR k10 8,426, 8,426 / 3,555,
     * 3,754; AND 4,592 / 929 and MaxScore 5,716 / 1,282 (f38a427, before
     * the serial decode; docs/SEARCH.md). */
    /* On a GPU: GROUP for OR and AND-then-OR, ITEM for WAND, BMW and
     * MaxScore, and for AND COMPRESSED unless its shortest list is long
     * (AND_GROUP_FRACTION). H200, 1M documents, 5,000 queries, mean us GROUP
     * or ITEM / COMPRESSED (2 groups a compute unit): AND k10 218.9 / 153.8,
     * k1000 235.0 / 179.2; OR k10 229.6 / 289.1; AND-then-OR k10 235.1 /
     * 232.9, k1000 404.4 / 420.4; MaxScore k10 152.2 / 192.4 (BENCHMARKS.md). */
    /* In a batch of several on a GPU, AND runs ITEM (the decoded range
     * batch), as the others do: H200, 10M documents, 2,000 queries, k10,
     * batches of 512, 8,901 queries/s against 2,817 on the compressed
     * cursors, whose lanes each decode every block they enter alone. */
    int gpu_default = exhaustive ? TDM_VARIANT_GROUP : TDM_VARIANT_ITEM;
    if (variant == TDM_VARIANT_AUTO)
        variant = !is_gpu(&s->dev[i])                   ? TDM_VARIANT_COMPRESSED
                  : out->alg == TDM_ALGO_AND && batched ? TDM_VARIANT_ITEM
                  : out->alg == TDM_ALGO_AND && !and_group(p, s->ndocs)
                      ? TDM_VARIANT_COMPRESSED
                      : gpu_default;
    out->variant = exhaustive || variant == TDM_VARIANT_COMPRESSED ? variant : TDM_VARIANT_ITEM;
    size_plan(&s->dev[i], s->ndocs, p, ranges, out);
    if (out->variant == TDM_VARIANT_COMPRESSED) {
        /* AND-then-OR's passes are an AND and an OR: both need what OR needs */
        int salg = out->alg == TDM_ALGO_OR         ? TDM_SALG_OR
                   : out->alg == TDM_ALGO_AND      ? TDM_SALG_AND
                   : out->alg == TDM_ALGO_AND_OR   ? TDM_SALG_OR
                   : out->alg == TDM_ALGO_WAND     ? TDM_SALG_WAND
                   : out->alg == TDM_ALGO_BMW      ? TDM_SALG_BMW
                                                   : TDM_SALG_MAXSCORE;
        if (!tdm_search_zrange_fits(s->dev[i].d, p, salg, out->ranges)) {
            out->variant = is_gpu(&s->dev[i]) ? gpu_default : TDM_VARIANT_ITEM;
            size_plan(&s->dev[i], s->ndocs, p, ranges, out);
        }
    }
    zr_layout(&s->dev[i], out);
    return TDM_OK;
}

/* Which runs get the seed (search_seed.h). Its cost is one score per
 * decoded posting, in parallel; its gain, the range kernel's work. On a GPU
 * (groups of 64 ranges of 64 documents, all running at once) no range sees
 * another's heap in time: always. On a CPU (a few long ranges a core) when
 * ranges are shorter than SEED_RLEN_PER_K x k. The host model's counters
 * (tests/prune_counters, 300k documents, 200 terabyte05 queries, MaxScore),
 * range kernel postings scored per query, without / with the seed:
 * GPU plan k = 1000 248,303 / 52,264, k = 10 200,232 / 21,697; CPU plan
 * (64 ranges, 16 at once) k = 1000 182,452 / 52,115 (+124,151 seeded), k = 10
 * 31,912 / 18,981 (+124,151 seeded: not worth it). */
#define SEED_RLEN_PER_K 16u

int tdm_search_seeded(const tdm_splan *pl, int salg, uint32_t k)
{
    int prunes = salg == TDM_SALG_WAND || salg == TDM_SALG_BMW || salg == TDM_SALG_MAXSCORE;
    /* the seed scores decoded postings: the compressed variant has none */
    if (!prunes || pl->variant == TDM_VARIANT_COMPRESSED)
        return 0;
    /* TANDEM_SEED=0 never, =1 always, for A/B runs */
    if (pl->seed != TDM_TUNE_RULE)
        return pl->seed == TDM_TUNE_ON;
    return pl->local > 1 || (uint64_t)pl->rlen < (uint64_t)SEED_RLEN_PER_K * k;
}
