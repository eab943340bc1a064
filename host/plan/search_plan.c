/* The planner (search_plan.h): which device, which algorithm, how many ranges.
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
 * HOST: no device at all (drive/search_host.c), for a query of few postings
 * (the row's host_max_postings) whose request leaves the variant and ranges
 * to the planner: a device's floor (launches, upload, download) is tens of
 * microseconds, the host's a few nanoseconds a posting. The rule needs the
 * query's sizes alone, so a preparation asks it first (tdm_search_plan_host)
 * and a host query skips what only a device reads (decode jobs, block
 * bounds, the term and AND selection tables). In a batch call on a row with
 * batch_host (CPUs), every query of up to batch_host_max_postings: the
 * call's threads keep every core on whole queries, and the host evaluator
 * (pruning with MaxScore's cursors for MaxScore, WAND and BMW on long
 * queries) costs a core less than PoCL's kernels do (tune_table.h).
 *
 * Algorithm `auto`: one term -> OR (nothing to prune across terms); else
 * MaxScore, the fastest exact disjunction in PISA at k = 10 and 1000 (the
 * issue's table), and no worse here: it only looks non-essential lists up. */
#include <stdlib.h>
#include <string.h>

#include "plan_testing.h"
#include "search_hseed.h"
#include "search_plan.h"
#include "tandem.h"

/* The tuning table's row of device sd (runtime/tune_table.h): every
 * constant of the planner's choices. */
static const tdm_tune_row *row(const tdm_sdev *sd)
{
    return tdm_tune_row_of(&sd->d->info);
}

static int is_gpu(const tdm_sdev *sd)
{
    return row(sd)->gpu;
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

uint32_t tdm_search_batch_max_k(const tdm_sdev *sd)
{
    uint32_t v = tuning(sd)->batch_max_k;
    return v ? v : row(sd)->batch_max_k;
}

/* Ranges a compute unit gets for variant v (ITEM or COMPRESSED): the
 * row's, or for timing runs TANDEM_CPU_RANGES_PER_CU (a CPU's, every
 * variant) and TANDEM_GPU_ZGROUPS_PER_CU (a GPU's groups, COMPRESSED). */
static uint32_t ranges_per_cu(const tdm_sdev *sd, int v)
{
    const tdm_tune_row *rw = row(sd);
    const tdm_tuning *t = tuning(sd);
    if (!rw->gpu)
        return t->cpu_ranges_per_cu ? t->cpu_ranges_per_cu
               : v == TDM_VARIANT_COMPRESSED ? rw->zr_ranges_per_cu
                                             : rw->item_ranges_per_cu;
    if (v != TDM_VARIANT_COMPRESSED)
        return rw->item_ranges_per_cu;
    return t->gpu_zgroups_per_cu ? t->gpu_zgroups_per_cu * rw->item_local : rw->zr_ranges_per_cu;
}

/* The shortest range of variant v: the row's, or on a GPU
 * TANDEM_GPU_MIN_RLEN (timing). */
static uint32_t min_rlen(const tdm_sdev *sd, int v)
{
    uint32_t t = tuning(sd)->gpu_min_rlen;
    if (row(sd)->gpu && t)
        return t;
    return v == TDM_VARIANT_COMPRESSED ? row(sd)->zr_min_rlen : row(sd)->min_rlen;
}

/* zwords: the compressed cursors' scratch words a term a range (0: another
 * variant). Without a wanted count, ranges are capped so that the scratch
 * fits the device's budget (tdm_search_zr_words): a query of many terms gets fewer, longer ranges
 * instead of another variant. */
static void size_ranges(const tdm_sdev *sd, uint32_t ndocs, uint32_t nt, uint32_t zwords,
                        uint32_t want, tdm_splan *pl)
{
    uint32_t cus = sd->d->info.compute_units ? sd->d->info.compute_units : 1;
    pl->local = row(sd)->item_local;
    uint32_t r = cus * ranges_per_cu(sd, pl->variant), minlen = min_rlen(sd, pl->variant);
    if (want) {
        r = want;
    } else if ((uint64_t)r * minlen > ndocs) {
        r = (ndocs + minlen - 1) / minlen;
    }
    if (r > TDM_TUNE_MAX_CURSORS / (nt ? nt : 1))
        r = TDM_TUNE_MAX_CURSORS / (nt ? nt : 1);
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

static void size_groups(const tdm_sdev *sd, uint32_t ndocs, uint32_t nt, uint32_t want,
                        tdm_splan *pl)
{
    uint32_t cus = sd->d->info.compute_units ? sd->d->info.compute_units : 1;
    uint32_t r = want ? want : cus * row(sd)->group_per_cu;
    if (r > TDM_TUNE_MAX_CURSORS / (nt ? nt : 1))
        r = TDM_TUNE_MAX_CURSORS / (nt ? nt : 1);
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
    uint64_t w = d->info.max_alloc_bytes / 2; /* the docs buffer: 4 bytes, half the words */
    uint64_t most = tdm_tune_row_of(&d->info)->zr_words;
    if (w > most)
        w = most;
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
                                                  : row(sd)->zr_layout;
}

/* Whether ranked AND's shortest list is long for the row (its
 * and_long_fraction of the documents): every range's cursors then decode a
 * block of every list, and the row's fallback wins. */
static int and_long(const tdm_tune_row *rw, const tdm_sprep *p, uint32_t ndocs)
{
    return rw->and_long_fraction && p->nt > 1 &&
           (uint64_t)p->min_df * rw->and_long_fraction > ndocs;
}

int tdm_search_salg(int alg)
{
    static const int map[] = {
        [TDM_ALGO_OR] = TDM_SALG_OR,         [TDM_ALGO_AND] = TDM_SALG_AND,
        [TDM_ALGO_AND_OR] = TDM_SALG_AND_OR, [TDM_ALGO_WAND] = TDM_SALG_WAND,
        [TDM_ALGO_BMW] = TDM_SALG_BMW,       [TDM_ALGO_MAXSCORE] = TDM_SALG_MAXSCORE,
    };
    return alg >= 0 && (size_t)alg < sizeof map / sizeof *map ? map[alg] : TDM_SALG_OR;
}

int tdm_search_salg_prunes(int salg)
{
    return salg == TDM_SALG_WAND || salg == TDM_SALG_BMW || salg == TDM_SALG_MAXSCORE;
}

int tdm_search_reads_blocks(const tdm_sprep *p, int salg)
{
    return tdm_search_salg_prunes(salg) && (salg == TDM_SALG_BMW || !p->term_bounds);
}

static int prunes(int salg)
{
    return tdm_search_salg_prunes(salg);
}

/* The device batch's choices (tdm_splan's and_wu, batch_queue, bounds).
 * Ranked AND batches by the range kernel like the other algorithms, or by
 * Wu's mapping above the row's and_wu_k (the range batch's heaps stop
 * there) or with TANDEM_BATCH_AND=wu. On the H200, 2,000 terabyte05
 * queries, batches of 512, k = 10: Wu's mapping 27,321 q/s against 24,737
 * on the 1M collection but 995 against 4,557 on the 10M one, where its
 * per-query merge of every matching lead element takes 12.6 of a batch's
 * 15.7 ms. The compressed batch's queue (a work-item a compute unit takes
 * whole ranges, longest first): the row's (every device but GPUs, whose
 * warps want a work-item per range); TANDEM_BATCH_QUEUE=on or off on every
 * device. The batch's wait for its results: the row's or TANDEM_BATCH_WAIT's,
 * but never asleep on a simulator; its uploads from pinned staging or
 * the host's tables: the row's or TANDEM_BATCH_UPLOAD's.
 * Bounds for the pruning algorithms: from the postings where the
 * request's k1, b are not the index's; else made on the device from the
 * stored ones (the terms' bounds and order from the host, which has them
 * from the preparation: a per-query order kernel once took 6.3 of 13 ms a
 * batch) unless TANDEM_BATCH_BOUNDS=host or without fp64: the upload of
 * every block's bound cost the H200's host 27 ms a batch of 512 MaxScore
 * queries on the 10M collection (60 MB through the driver's staging). A
 * query run alone (not batched, or alone in a batch call) the same way
 * where the row's query_bounds or TANDEM_QUERY_BOUNDS says device. */
static void plan_batch(const tdm_sdev *sd, const tdm_sprep *p, uint32_t k, int batched,
                       tdm_splan *out)
{
    const tdm_tune_row *rw = out->row;
    const tdm_tuning *tn = tuning(sd);
    /* AND-then-OR's AND pass is a ranked AND batch too (search_batch.c) */
    int ranked_and = out->salg == TDM_SALG_AND || out->salg == TDM_SALG_AND_OR;
    out->and_wu = ranked_and && (k > rw->and_wu_k || tn->batch_and == TDM_TUNE_AND_WU);
    out->batch_queue = tn->batch_queue != TDM_TUNE_RULE ? tn->batch_queue == TDM_TUNE_ON
                                                        : rw->batch_queue;
    /* never on Oclgrind, which runs commands only inside a blocking call */
    out->batch_sleep = (tn->batch_wait != TDM_TUNE_RULE ? tn->batch_wait == TDM_TUNE_ON
                                                        : rw->batch_sleep) &&
                       tdm_tune_kind_of(&sd->d->info) != TDM_KIND_SIMULATOR;
    out->batch_upload = tn->batch_upload   ? tn->batch_upload
                        : rw->batch_upload ? rw->batch_upload
                                           : TDM_TUNE_UPLOAD_PAGEABLE;
    /* a query run alone: the row's rule or TANDEM_QUERY_BOUNDS */
    int alone = !batched || out->alone;
    int qb = tn->query_bounds ? tn->query_bounds : rw->query_bounds;
    int stored = alone ? qb == TDM_TUNE_BOUNDS_DEVICE : tn->batch_bounds != TDM_TUNE_BOUNDS_HOST;
    out->bounds = !prunes(out->salg)  ? TDM_SBOUNDS_NONE
                  : p->device_bounds ? TDM_SBOUNDS_POSTINGS
                  : sd->fp64 && stored ? TDM_SBOUNDS_STORED
                                       : TDM_SBOUNDS_HOST;
}

/* The host path's threshold for public algorithm alg (not AUTO) on device
 * sd (search_plan.h, tdm_splan.host): TANDEM_HOST_MAX_POSTINGS (0: never),
 * else the row's (tune_table.h says why). */
static uint64_t host_max(const tdm_sdev *sd, int alg)
{
    const tdm_tuning *t = tuning(sd);
    return t->host_max_set ? t->host_max_postings : row(sd)->host_max_postings[alg];
}

/* The host path's MaxScore evaluator (drive/search_host_ms.h) where it
 * beat OR on the 2-core VM: from npost >= min(MS_POSTINGS_PER_K k, MS_POSTINGS_SQRT_K sqrt(k)). Its
 * document-at-a-time steps cost several times OR's 4 ns a posting, so it
 * wins only where it skips most postings, and a larger k's threshold is
 * lower and skips fewer: past k = 16 the postings it needs grow as sqrt(k),
 * not as k. One term: OR. WAND and BMW take it at the same threshold.
 * k <= 16, the linear rule (twelfth session, 200k documents, batches of
 * 1,000 on the host, k 10, q/s at 500 / 2,000 / 5,000 / 10,000 / 20,000 a
 * k: terabyte05 14,533 / 15,475 / 15,536-15,811 / 15,512 / 12,292, msmarco
 * 5,509 / 6,218 / 6,089-6,381 / 6,341 / 6,160; OR's evaluator for them:
 * 8,495 and 2,894).
 * Past it (thirteenth session, 1M documents, 1,000 queries of each log,
 * every query on the host one at a time, each answered by both
 * evaluators): MaxScore beat OR from about 200k postings at k = 100
 * (terabyte05; msmarco 100k) and 500k-700k at k = 1,000, where the linear
 * rule asked 500k and 5M (so most MaxScore@1000 queries ran OR); total
 * milliseconds over the queries of two terms or more, OR alone / the
 * linear rule / MS_POSTINGS_SQRT_K 20,000 / each query's faster one:
 * terabyte05 k 100 1,476 / 795 / 724 / 587, k 1,000 1,263 / 1,263 / 933 /
 * 846; msmarco k 100 3,665 / 1,483 / 1,472 / 1,348, k 1,000
 * 3,479 / 3,479 / 2,554 / 2,351. Batches of 1,000 queries from 2
 * threads, CPU us a query (q/s ranges are the CI's noise), linear / this
 * rule: MaxScore@1000 terabyte05 1,156-1,299 / 803-853, msmarco 3,570-3,700
 * / 2,279-2,369 (BMW and WAND the same); MaxScore@100 terabyte05 505-594 /
 * 451-486, msmarco 1,247-1,368 / 1,147-1,202. MS_POSTINGS_SQRT_K 10,000 to
 * 35,000 were alike within the noise. */
#define MS_POSTINGS_PER_K 5000u
#define MS_POSTINGS_SQRT_K 20000u

int tdm_search_prunes(int alg)
{
    return alg == TDM_ALGO_MAXSCORE || alg == TDM_ALGO_WAND || alg == TDM_ALGO_BMW;
}

/* npost >= MS_POSTINGS_PER_K k, or >= MS_POSTINGS_SQRT_K sqrt(k) compared
 * squared (no libm; a threshold's rounding changes no answer). */
int tdm_search_host_ms(int alg, size_t nt, uint64_t npost, uint32_t k)
{
    double n = (double)npost, c = MS_POSTINGS_SQRT_K;
    return nt > 1 && tdm_search_prunes(alg) &&
           (npost >= (uint64_t)MS_POSTINGS_PER_K * k || n * n >= c * c * k);
}

/* Whether a batch call's query of algorithm alg (public, not AUTO) of nt
 * terms whose lists hold npost postings runs on the host at k (tune_table.h,
 * batch_host, says why): TANDEM_BATCH_HOST, else the row's; at any size
 * where the host keeps no posting: ranked AND (its cursors keep a block a
 * list), a pruning query that the host's MaxScore evaluator takes
 * (tdm_search_host_ms: its cursors too), a one-term query (a block at a
 * time); the others up to the row's batch_host_max_postings (2^20 where
 * the row has none: the host's OR keeps every posting's docid and score);
 * never where TANDEM_HOST_MAX_POSTINGS is set (then it rules every query). */
static int batch_host(const tdm_sdev *sd, int alg, size_t nt, uint64_t npost, uint32_t k)
{
    const tdm_tuning *t = tuning(sd);
    const tdm_tune_row *rw = row(sd);
    int on = t->batch_host != TDM_TUNE_RULE ? t->batch_host == TDM_TUNE_ON : rw->batch_host;
    uint64_t most = rw->batch_host_max_postings ? rw->batch_host_max_postings : 1ull << 20;
    return on && !t->host_max_set &&
           (alg == TDM_ALGO_AND || nt == 1 || npost <= most ||
            tdm_search_host_ms(alg, nt, npost, k));
}

int tdm_search_auto_alg(int algorithm, size_t nt)
{
    if (algorithm != TDM_ALGO_AUTO)
        return algorithm;
    return nt <= 1 ? TDM_ALGO_OR : TDM_ALGO_MAXSCORE;
}

/* The plan's head, from the query's sizes alone (nt terms, npost
 * postings): the device, the algorithm, the switches, and the host rule,
 * which completes the plan where it holds (out->host); *variant becomes
 * what AUTO means on the device (TANDEM_SEARCH_VARIANT). */
static int plan_head(const struct tdm_search *s, uint32_t nt, uint64_t npost, int algorithm,
                     int device, int *variant, uint32_t ranges, uint32_t k, int batched,
                     tdm_splan *out, tdm_err *err)
{
    memset(out, 0, sizeof *out);
    int i = pick_device(s, device, err);
    if (i < 0)
        return i;
    out->dev = i;
    const tdm_tune_row *rw = out->row = row(&s->dev[i]);
    out->alg = tdm_search_auto_alg(algorithm, nt);
    /* a long query where exhaustive OR outruns pruning (the row's rule) */
    if (algorithm == TDM_ALGO_AUTO && rw->auto_or_min_terms && nt >= rw->auto_or_min_terms)
        out->alg = TDM_ALGO_OR;
    out->salg = tdm_search_salg(out->alg);
    /* k: above the row's batch_max_k OR, WAND, BMW and MaxScore run alone
       (ranked AND and AND-then-OR batch at any k) */
    out->alone = !(out->alg == TDM_ALGO_AND || out->alg == TDM_ALGO_AND_OR) &&
                 k > tdm_search_batch_max_k(&s->dev[i]);
    /* TANDEM_SEARCH_VARIANT: what AUTO means, for A/B runs of a whole
     * benchmark (a request's own variant wins) */
    const tdm_tuning *tn = tuning(&s->dev[i]);
    if (*variant == TDM_VARIANT_AUTO && tn->search_variant)
        *variant = tn->search_variant;
    out->seed = tn->seed;
    out->zr_seed = tn->zr_seed;
    /* a few postings: on the host, where a device's launches, upload and
       download cost more than decoding and scoring them; in a batch call,
       where the row says (batch_host) */
    const tdm_sdev *sd = &s->dev[i];
    if (*variant == TDM_VARIANT_AUTO && !ranges &&
        (npost <= host_max(sd, out->alg) || (batched && batch_host(sd, out->alg, nt, npost, k)))) {
        out->host = 1;
        out->variant = TDM_VARIANT_HOST;
        out->ranges = 1;
        out->rlen = s->ndocs;
    }
    return TDM_OK;
}

int tdm_search_plan_host(const struct tdm_search *s, uint32_t nt, uint64_t npost, int algorithm,
                         int device, int variant, uint32_t ranges, uint32_t k, int batched,
                         tdm_splan *out, tdm_err *err)
{
    return plan_head(s, nt, npost, algorithm, device, &variant, ranges, k, batched, out, err);
}

int tdm_search_plan(const struct tdm_search *s, const tdm_sprep *p, int algorithm, int device,
                    int variant, uint32_t ranges, uint32_t k, int batched, tdm_splan *out,
                    tdm_err *err)
{
    int rc = plan_head(s, p->nt, p->npost, algorithm, device, &variant, ranges, k, batched, out,
                       err);
    if (rc || out->host)
        return rc;
    int i = out->dev;
    const tdm_tune_row *rw = out->row;
    int exhaustive = out->alg == TDM_ALGO_OR || out->alg == TDM_ALGO_AND ||
                     out->alg == TDM_ALGO_AND_OR;
    /* AUTO: the row's variant for the algorithm (runtime/tune_table.h says
       why), except ranked AND in a batch of several and ranked AND over a
       long shortest list, where the row says otherwise */
    if (variant == TDM_VARIANT_AUTO)
        variant = out->alg == TDM_ALGO_AND && batched && rw->and_batched ? rw->and_batched
                  : out->alg == TDM_ALGO_AND && and_long(rw, p, s->ndocs)
                      ? rw->fallback[TDM_ALGO_AND]
                      : rw->auto_variant[out->alg];
    out->variant = exhaustive || variant == TDM_VARIANT_COMPRESSED ? variant : TDM_VARIANT_ITEM;
    size_plan(&s->dev[i], s->ndocs, p, ranges, out);
    if (out->variant == TDM_VARIANT_COMPRESSED) {
        /* AND-then-OR's passes are an AND and an OR: both need what OR needs */
        int salg = out->salg == TDM_SALG_AND_OR ? TDM_SALG_OR : out->salg;
        if (!tdm_search_zrange_fits(s->dev[i].d, p, salg, out->ranges)) {
            out->variant = rw->fallback[out->alg];
            size_plan(&s->dev[i], s->ndocs, p, ranges, out);
        }
    }
    zr_layout(&s->dev[i], out);
    int as = tuning(&s->dev[i])->and_select; /* TANDEM_AND_SELECT, else the row */
    out->and_select = as ? as == TDM_TUNE_ON : rw->and_select;
    /* the seeds, on the plan as it stands (a batch's resizing of its
       queries' ranges does not change them: the batch has no seed pass, and
       a query rerun alone gets its own plan back) */
    /* the host seed reads the host's block bounds: none where the device
       makes them from the postings */
    out->hseeded = tdm_search_hseeded(out, out->salg, k, batched) && !p->device_bounds;
    out->seeded = tdm_search_seeded(out, out->salg, k, batched);
    plan_batch(&s->dev[i], p, k, batched, out);
    return TDM_OK;
}

/* Which runs get the seed (search_seed.h). Its cost is one score per
 * decoded posting, in parallel; its gain, the range kernel's work: on a
 * GPU's plan (groups of ranges) always, else when ranges are shorter than
 * the row's seed_rlen_per_k x k (runtime/tune_table.h says why). */
int tdm_search_seeded(const tdm_splan *pl, int salg, uint32_t k, int batched)
{
    /* the seed scores decoded postings: the compressed variant has none */
    if (!prunes(salg) || pl->variant == TDM_VARIANT_COMPRESSED)
        return 0;
    /* TANDEM_SEED=0 never, =1 always, for A/B runs */
    if (pl->seed != TDM_TUNE_RULE)
        return pl->seed == TDM_TUNE_ON;
    /* a run alone whose host seed is planned (the row's hseed_alone_below_k) */
    if (pl->hseeded && !batched)
        return 0;
    const tdm_tune_row *rw = pl->row ? pl->row : tdm_tune_row_get(TDM_KIND_OTHER);
    return pl->local > 1 || (uint64_t)pl->rlen < (uint64_t)rw->seed_rlen_per_k * k;
}
