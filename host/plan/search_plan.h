/* The planner (search_plan.c): every choice of a query's path, the
 * algorithm (AUTO resolved), the variant, ranges and work-groups, the
 * compressed scratch's layout, the seeds, from the device's row of the
 * tuning table (runtime/tune_table.h); the drivers read the plan. */
#ifndef TDM_PLAN_SEARCH_PLAN_H
#define TDM_PLAN_SEARCH_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "common/error.h"
#include "plan/search_handle.h"
#include "plan/sprep.h"
#include "runtime/runtime.h"
#include "runtime/tune_table.h"

enum { TDM_SALG_OR = 0, TDM_SALG_AND = 1, TDM_SALG_WAND = 2, TDM_SALG_BMW = 3,
       TDM_SALG_MAXSCORE = 4,
       TDM_SALG_AND_OR = 5 /* host only: an AND pass, then an OR pass the device skips
                              when AND found k */ };

/* The planner's choices for one request. */
typedef struct tdm_splan {
    int dev;            /* index into tdm_search.dev */
    int alg;            /* public enum tdm_algorithm, never AUTO */
    int variant;        /* TDM_VARIANT_ITEM, GROUP (OR/AND only) or COMPRESSED
                           (cl/search_zrange.cl: ITEM on the compressed index);
                           TDM_VARIANT_HOST where host is set */
    int host;           /* answered on the host, no device work
                           (drive/search_host.h): the request leaves the variant
                           and ranges to the planner, and the query's lists hold
                           at most the device's TANDEM_HOST_MAX_POSTINGS, else
                           its row's host_max_postings, or it runs in a batch on
                           a row with batch_host (search_plan.c); dev still names
                           the device (the result's), nothing else of the plan
                           is set */
    uint32_t ranges, rlen, local;
    uint32_t zlayout;   /* COMPRESSED: its scratch's layout, TDM_ZR_RANGE or
                           TDM_ZR_INTERLEAVED (the planner's: range-major on a
                           CPU, interleaved on a GPU; TANDEM_ZR_LAYOUT) */
    int seed, zr_seed;  /* the device's TANDEM_SEED, TANDEM_ZR_SEED (TDM_TUNE_RULE,
                           _OFF or _ON; runtime/settings.h): search_seed.h's rules
                           unless forced */
    const tdm_tune_row *row; /* the device's row of the tuning table
                                (runtime/tune_table.h): the constants of every
                                choice here and of the runs' (seeds, batches) */
    int alone;          /* never in a device batch: OR, WAND, BMW or MaxScore
                           with k above the row's batch_max_k */
    int salg;           /* the run's algorithm, TDM_SALG_* (tdm_search_salg) */
    int seeded;         /* the device seed (tdm_search_seeded's rule) */
    int hseeded;        /* the host seed (tdm_search_hseeded's rule) */
    int and_select;     /* a single ranked AND on ITEM decodes only the blocks its
                           block selection keeps (drive/search_dev.c), else every
                           block: TANDEM_AND_SELECT, else the row's and_select */
    /* a device batch's choices (search_batch_dev.c), for every query of a
       batch alike (one device, algorithm, k and scoring): */
    int and_wu;         /* ranked AND by Wu's mapping (search_batch_and.c)
                           instead of the range kernel */
    int batch_sleep;    /* a batch waits for its results asleep (tdm_read_wait) */
    int batch_upload;   /* a batch's uploads, TDM_TUNE_UPLOAD_* (search_batch_dev.c) */
    int batch_queue;    /* a compressed batch by the queue kernel
                           (tdm_search_zrange_queue) */
    int bounds;         /* where the run's block bounds come from, TDM_SBOUNDS_*
                           (a batch's, or the query's where it runs alone) */
} tdm_splan;

/* Where a device run's block bounds come from (tdm_splan.bounds): none
 * (not a pruning algorithm); made on the device from the postings (the
 * request's k1, b are not the index's); made on the device from the
 * stored ones; the host's, uploaded (the batch takes HOST where a query's
 * bounds are not the stored ones after all: search_batch_dev.c). */
enum { TDM_SBOUNDS_NONE = 0, TDM_SBOUNDS_POSTINGS, TDM_SBOUNDS_STORED, TDM_SBOUNDS_HOST };

/* The kernels' algorithm code (TDM_SALG_*) of public algorithm alg (enum
 * tdm_algorithm, not AUTO): the one mapping of the two. */
int tdm_search_salg(int alg);
/* Whether TDM_SALG_* salg prunes with bounds (WAND, BMW, MaxScore). */
int tdm_search_salg_prunes(int salg);
/* Whether a run of salg on p reads block bounds (p->bmax, or the device's
 * copy): Block-Max WAND does; WAND and MaxScore read each term's bound and
 * MaxScore's order (term words 5 and 6) alone, which the host sets where
 * the preparation gave the terms' bounds (p->term_bounds), else they are
 * made from the block bounds. */
struct tdm_sprep;
int tdm_search_reads_blocks(const struct tdm_sprep *p, int salg);

/* The compressed cursors' scratch words (cursors, docs and freqs buffers
 * together) one launch may use on device d: 2^24 (64 MB) on a CPU, whose
 * plans run few ranges; 2^27 (512 MB) on a GPU, within half its largest
 * allocation (the docs buffer holds about half the words), so that a batch
 * of hundreds of queries keeps enough ranges to fill it. Offsets stay
 * within 32 bits. */
#define TDM_ZR_MAX_WORDS (1u << 24)
#define TDM_ZR_GPU_WORDS (1u << 27)
uint64_t tdm_search_zr_words(const tdm_device *d);
/* Whether the compressed variant can run p with algorithm salg
 * (TDM_SALG_*) over nranges ranges on device d: bounds from the host where
 * it prunes, cursor buffers within tdm_search_zr_words(d), and a device that
 * runs its kernels (not d->no_zcur: rusticl). Where not, the planner takes a
 * decoded variant, whose answers are the same. */
int tdm_search_zrange_fits(const tdm_device *d, const tdm_sprep *p, int salg, uint32_t nranges);

/* The algorithm the planner runs for `algorithm` (enum tdm_algorithm) on a
 * query of nt terms: itself, or for AUTO OR with one term (nothing to prune
 * across terms) and MaxScore with more; a plan also takes OR for AUTO from
 * its row's auto_or_min_terms (tdm_search_plan). */
int tdm_search_auto_alg(int algorithm, size_t nt);

/* Picks the device (opts->device or the planner's), the algorithm (AUTO by
 * the query's features) and the ranges. TDM_ERR_INVALID_ARG for a device
 * index out of range, TDM_ERR_UNSUPPORTED for BM25 on a device without
 * exact division. batched: the query runs in a device batch of several,
 * where ranked AND takes the compressed batch kernel whatever its lists
 * (the GPU's GROUP rule for AND is for one query's latency). */
int tdm_search_plan(const struct tdm_search *s, const tdm_sprep *p, int algorithm, int device,
                    int variant, uint32_t ranges, uint32_t k, int batched, tdm_splan *out,
                    tdm_err *err);

/* The host rule alone, before a query's lists are prepared
 * (tdm_search_prepare): from its terms nt and postings npost (its lists'
 * df summed), out->host set where tdm_search_plan would answer a query of
 * these sizes on the host in a batch of several (batched) or alone, and
 * out then that plan, whole (the same bytes);
 * else out->host 0, the rest of out not a plan: the query's lists are
 * prepared and tdm_search_plan plans it. The rule stays tdm_search_plan's
 * own (one function of both). Errors: tdm_search_plan's for the device. */
int tdm_search_plan_host(const struct tdm_search *s, uint32_t nt, uint64_t npost, int algorithm,
                         int device, int variant, uint32_t ranges, uint32_t k, int batched,
                         tdm_splan *out, tdm_err *err);

/* The smallest power of two >= k (heap and key capacities). */
static inline uint32_t tdm_pow2_at_least(uint32_t k)
{
    uint32_t p = 1;
    while (p < k)
        p <<= 1;
    return p;
}

/* Whether a run of algorithm salg (TDM_SALG_*) with plan pl and k gets the
 * seed (search_plan.c): the pruning algorithms, on a GPU's plan (groups of
 * more than one range) or when the ranges are short for k, unless the run
 * is alone (not `batched`) and its plan has the host seed (pl->hseeded,
 * set first: tdm_search_hseeded). */
int tdm_search_seeded(const tdm_splan *pl, int salg, uint32_t k, int batched);

/* Whether alg (public) is WAND, BMW or MaxScore: a pruning algorithm, whose
 * exact answer is ranked OR's top k. */
int tdm_search_prunes(int alg);

/* Whether the host path answers a query of algorithm alg (public), nt
 * terms, npost postings at k with MaxScore's evaluator (drive/search_host_ms.h,
 * which keeps a block a list) rather than OR's (which keeps every posting's
 * docid and score): a pruning algorithm, two terms or more, postings past
 * the size at which it beat OR (search_plan.c says where). */
int tdm_search_host_ms(int alg, size_t nt, uint64_t npost, uint32_t k);

/* The largest k at which OR, WAND, BMW and MaxScore queries of a batch call
 * share a device batch on device sd: TANDEM_BATCH_MAX_K, else the row's. */
uint32_t tdm_search_batch_max_k(const tdm_sdev *sd);

#endif
