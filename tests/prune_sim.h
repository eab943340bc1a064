/* The range kernel (cl/search_range.cl) compiled as C and run on the host,
 * one range after another, with work counters: a plain-C model of a pruning
 * query on a device, for exactness tests (tests/test_prune.c) and for
 * device-independent measurements (tests/prune_counters.c). The query is
 * prepared as the device path prepares it (tdm_sprep_build), its lists
 * decoded on the host, block bounds and term order by the kernels' own code,
 * the shared threshold's seed by tdm_search_seed_ref, the merge by a sort.
 *
 * Concurrency is modelled by waves: ranges r run in waves of `wave` ranges
 * (r / wave), and a range sees the shared threshold published by ranges of
 * earlier waves only (plus the seed and its own). */
#ifndef TDM_TESTS_PRUNE_SIM_H
#define TDM_TESTS_PRUNE_SIM_H

#include <stdint.h>

#include "common/error.h"
#include "index/reader.h"
#include "query/query.h"
#include "query/score.h"

typedef struct prune_counts {
    uint64_t decoded; /* postings decoded (the query's lists, whole) */
    uint64_t seeded;  /* postings scored by the seed pass */
    uint64_t scored;  /* postings scored by the range kernel */
    uint64_t docs;    /* documents fully scored */
    uint64_t pushed;  /* documents offered to a heap past the shared threshold */
    uint64_t skips;   /* BMW block skips, MaxScore documents cut short */
} prune_counts;

typedef struct prune_opts {
    int salg;         /* TDM_SALG_* (OR, AND, WAND, BMW, MAXSCORE) */
    uint32_t k, ranges;
    int seed;         /* 1: run the seed pass; 2: the compressed variant's host
                         seed instead (tdm_search_hseed, no cache) */
    int share;        /* let ranges see others' publications (0: as before) */
    uint32_t wave;    /* ranges that run at once (>= 1) */
} prune_opts;

/* Runs q on r; keys[0..*n) get the top k best first (score bits << 32 |
 * ~docid, as the device returns them); counts are added to *c. */
int prune_sim(const tdm_ireader *r, const tdm_query *q, const tdm_score_params *sp,
              const prune_opts *o, uint64_t *keys, uint32_t *n, prune_counts *c, tdm_err *err);

#endif
