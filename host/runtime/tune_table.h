/* The tuning table: every constant that chooses a search's path, per kind
 * of device, in one place (models: zstd's clevels.h, CLBlast's per-device
 * database). The planner (plan/search_plan.c) reads a device's row into
 * the plan; the device residency (resident/decode_jobs.c, stager.c) reads
 * its own columns. The environment's tuning switches (settings.h,
 * TANDEM_*) override some columns for timing runs; 0 there means the row.
 *
 * Rows are named kinds, picked from what the device reports
 * (tdm_tune_kind_of). A kind that was never measured copies the nearest
 * measured row and says so. Numbers quoted below are means of `tandem
 * bench queries` (BENCHMARKS.md) unless said otherwise. */
#ifndef TDM_RUNTIME_TUNE_TABLE_H
#define TDM_RUNTIME_TUNE_TABLE_H

#include <stdint.h>

#include "runtime/settings.h"
#include "tandem.h"

/* ---- constants of every kind of device alike (the drivers', host/drive) */

/* The merge in stages (cl/search_merge.cl) above this many ranges a
 * stage-one group, with at most two stage-one groups per compute unit; later
 * stages reduce TDM_TUNE_SELECT_FAN slices a group while more are left. */
#define TDM_TUNE_SELECT_MIN_RANGES 8u
#define TDM_TUNE_SELECT_GROUPS_PER_CU 2u
#define TDM_TUNE_SELECT_FAN 8u
#define TDM_TUNE_SELECT_GROUPS_MIN 128u
/* Work-items of a select or merge group on a GPU, within each kernel's
 * CL_KERNEL_WORK_GROUP_SIZE (256 on the H200): wide groups make a group's
 * read of its candidates short (at k = 1,000 the H200 spent 3.2 ms in a
 * radix select merge of 64 work-items). */
#define TDM_TUNE_MERGE_LOCAL_GPU 1024u

/* Slices a later select stage's group reduces (and the most the merge
 * takes): TDM_TUNE_SELECT_FAN, or more at small k so that a group reads about
 * TDM_TUNE_SELECT_KEYS keys (at k = 10 the first stage's slices go to the merge). */
#define TDM_TUNE_SELECT_KEYS 4096u

/* The queue's work-items a compute unit. One a PoCL thread would do, but
 * PoCL 3.1 hands a thread up to 1 + left / threads work-groups at a time
 * (they run one after the other): of 2 work-items on 2 cores, one thread
 * took both, and the first ran every range alone. With 8 a core every
 * thread gets some; the extra work-items find the queue empty and end. */
#define TDM_TUNE_QUEUE_ITEMS_PER_CU 8u

/* A device batch's queries at most, and its decoded postings at most
 * (search_batch.c's max_postings; a bigger batch is cut):
 * TDM_TUNE_BATCH_POSTINGS on a CPU, whose batches are compressed; on a GPU
 * its memory's bytes / TDM_TUNE_BATCH_POSTINGS_GPU_MEM_DIV (8 bytes a
 * posting: a quarter of it) and its largest allocation's worth of docids,
 * within 32-bit offsets, never fewer (search_batch.c says why). */
#define TDM_TUNE_BATCH_MAX_QUERIES 8192u
#define TDM_TUNE_BATCH_POSTINGS (1ull << 26)
#define TDM_TUNE_BATCH_POSTINGS_GPU_MEM_DIV 32u

/* ---- constants of every kind of device alike (the planner's, host/plan) */

/* Cursors at most (a query's ranges x its terms): the ITEM and GROUP
 * variants' cursor and order scratch hold a word each (16 MiB apiece at
 * this cap). A memory budget, not a limit of the kernels: it binds only on
 * queries of many terms (64 terms: 65,536 ranges), which then get fewer,
 * longer ranges; the compressed variant's larger cursors are bounded by the
 * row's zr_words as well. */
#define TDM_TUNE_MAX_CURSORS (1u << 22)

/* The host seed (plan/search_hseed.c) decodes for one term at most
 * TDM_TUNE_HSEED_K_TIMES x the blocks that hold k postings, plus
 * TDM_TUNE_HSEED_EXTRA_BLOCKS. The stop needs the k-th score to reach the
 * next block's bound; with the stored bounds (quantized to 256 levels a
 * list, with slack) many blocks' bounds lie above a list's k-th score, and
 * at k = 10 the k best postings sit in up to 10 blocks. Past the cap the
 * value is a lower bound of the k-th score, which costs pruning, never
 * exactness. So a term costs at most about (2 k + 16 x 128) postings
 * decoded and scored on the host, once per (term, weight, scoring, k): the
 * handle's cache keeps the value. (Measured on the 1M collection, 300
 * terabyte05 queries, BM25 stored bounds: k = 1,000 decodes 49 blocks a
 * query, a cap binding 1.2 terms a query; 4 k + 32 would raise the mean
 * seed by 6 % for 50 % more blocks, k + 8 lower it by 15 %.) A measuring
 * build may set both (-D). */
#ifndef TDM_TUNE_HSEED_K_TIMES
#define TDM_TUNE_HSEED_K_TIMES 2u
#endif
#ifndef TDM_TUNE_HSEED_EXTRA_BLOCKS
#define TDM_TUNE_HSEED_EXTRA_BLOCKS 16u
#endif

enum tdm_tune_kind {
    TDM_KIND_NVIDIA_GPU = 0, /* NVIDIA's driver (the H200 of BENCHMARKS.md) */
    TDM_KIND_GPU,            /* any other GPU: unmeasured, NVIDIA's row */
    TDM_KIND_SIMULATOR,      /* Oclgrind: a "GPU" run on the host, for checking */
    TDM_KIND_CPU,            /* PoCL, rusticl's llvmpipe */
    TDM_KIND_OTHER,          /* accelerators and the rest: the CPU's planning */
    TDM_KIND_COUNT
};

typedef struct tdm_tune_row {
    const char *name;
    /* ---- the planner, one query (search_plan.c) */
    int gpu;                 /* plans as a GPU: ranges in groups of item_local, many
                                short ones (TANDEM_GPU_* apply), else a few long
                                ranges a core (TANDEM_CPU_* apply) */
    uint32_t item_local;     /* work-items a group, ITEM and COMPRESSED */
    uint32_t item_ranges_per_cu; /* ranges a compute unit, ITEM */
    uint32_t zr_ranges_per_cu;   /* ranges a compute unit, COMPRESSED */
    uint32_t min_rlen;       /* the shortest range, ITEM */
    uint32_t zr_min_rlen;    /* the shortest range, COMPRESSED */
    uint32_t group_per_cu;   /* work-groups a compute unit, GROUP */
    int auto_variant[TDM_ALGO_MAXSCORE + 1]; /* variant AUTO, by algorithm */
    int fallback[TDM_ALGO_MAXSCORE + 1];     /* where COMPRESSED cannot run */
    int and_batched;         /* ranked AND in a batch of several (0: auto_variant's) */
    uint32_t and_long_fraction; /* ranked AND takes fallback[AND] when its shortest
                                   list holds more than 1/this of the documents (0: never) */
    int and_select;          /* a single ranked AND on ITEM decodes only the blocks its
                                block selection keeps (1), or every block (0) */
    uint64_t zr_words;       /* the compressed cursors' scratch words a launch, within
                                half the largest allocation, never below 2^24 */
    uint32_t zr_layout;      /* TDM_ZR_RANGE (0) or TDM_ZR_INTERLEAVED (1) */
    /* ---- the seeds of the shared threshold (the planner's seeded and hseeded) */
    uint32_t seed_rlen_per_k; /* device seed where ranges are shorter than this x k
                                 (always where item_local > 1) */
    uint32_t hseed_min_k;    /* host seed of COMPRESSED from this k */
    uint32_t hseed_min_ranges; /* ... or on plans of this many ranges */
    uint32_t hseed_alone_below_k; /* a pruning query alone on a decoded variant below
                                     this k takes the host seed instead of the device
                                     seed's two launches, 0 never
                                     (TDM_TUNE_HSEED_ALONE_BELOW_K_GPU says why) */
    /* ---- device batches (search_batch*.c; the planner's and_wu, batch_queue) */
    uint32_t batch_max_k;    /* above it OR, WAND, BMW and MaxScore run alone
                                (TDM_TUNE_BATCH_MAX_K_GPU says why) */
    uint32_t and_wu_k;       /* above it ranked AND batches by Wu's mapping */
    uint32_t batch_ranges_per_cu; /* ranges a compute unit shared by a batch */
    uint32_t batch_min_rlen; /* the shortest range of a batch's query */
    uint32_t batch_min_part; /* the fewest queries of a batch a lane gets a part of,
                                0 any (sched/batch.c) */
    uint32_t batch_merge_keys; /* a query's heap slots (ranges x room) at most, 0 any:
                                  its merge is one work-group's */
    uint32_t batch_merge_rlen; /* ... but never ranges longer than this many
                                  documents for it, 0 no floor
                                  (TDM_TUNE_BATCH_MERGE_RLEN_GPU says why) */
    int batch_queue;         /* compressed batches through the queue kernel */
    int batch_sleep;         /* a batch's host thread waits for its results asleep
                                (tdm_read_wait; TANDEM_BATCH_WAIT) */
    int batch_upload;        /* a batch's uploads, TDM_TUNE_UPLOAD_* (0: pageable;
                                TANDEM_BATCH_UPLOAD; TDM_TUNE_BATCH_UPLOAD_GPU
                                says why) */
    /* ---- the top k of one query (drive/search_dev.c) */
    int query_bounds;        /* where a pruning query run alone gets its block bounds,
                                TDM_TUNE_BOUNDS_* (0: host; TANDEM_QUERY_BOUNDS;
                                TDM_TUNE_QUERY_BOUNDS_GPU says why) */
    uint32_t merge_direct_keys; /* candidates (ranges x their heaps' room) the merge
                                   takes directly, without a select stage, at most
                                   (TANDEM_MERGE_DIRECT_KEYS) */
    uint32_t merge_filter_max_k; /* the select stages' filter up to this k, their
                                    radix select above; the merge filters at every
                                    k (TANDEM_MERGE_FILTER) */
    uint32_t merge_small;    /* 1: the small select and merge kernels at k <= 16 where
                                their candidates fit (TANDEM_MERGE_SMALL) */
    uint32_t range_select_max_k; /* the first select stage in the range kernel's launch
                                    up to this k, 0 never (TANDEM_RANGE_SELECT) */
    uint32_t alone_threads;  /* a batch call's queries that run alone (the plan's alone,
                                long OR) at once on host threads, on one device:
                                one's host work beside another's device work
                                (drive/search_alone.c; TANDEM_BATCH_ALONE_THREADS) */
    uint32_t or_alone_terms; /* an OR query of this many terms or more runs alone in
                                a batch call, 0 never (drive/search_batch.c;
                                TANDEM_BATCH_OR_ALONE_TERMS) */
    /* ---- device residency (resident/) */
    int decode_variant;      /* TDM_TUNE_DECODE_GROUP or _SERIAL (settings.h) */
    int staging;             /* uploads through pinned staging buffers (stager.c) */
    /* ---- a split handle (sched/split.c, TANDEM_PARTITION=split) */
    uint64_t split_min_postings; /* a single query whose lists hold this many postings
                                    or more runs on every partition at once, the rest
                                    whole on one lane (TANDEM_SPLIT_MIN_POSTINGS) */
    /* ---- the host path (plan/search_plan.c, drive/search_host.c) */
    uint32_t auto_or_min_terms; /* AUTO runs OR for a query of this many terms or
                                   more, 0 never (plan/search_plan.c) */
    uint64_t host_max_postings[TDM_ALGO_MAXSCORE + 1]; /* by algorithm (public, not
                                   AUTO): a query whose lists hold at most this many
                                   postings is answered on the host, no device work
                                   (0: never; TANDEM_HOST_MAX_POSTINGS, all of them) */
    int batch_host;          /* in a batch call every query on the host
                                (TANDEM_BATCH_HOST) ... */
    uint64_t batch_host_max_postings; /* ... whose lists hold at most this many */
} tdm_tune_row;

/* A split handle's threshold (split_min_postings) by kind. The decision
 * reads the query's postings (the sum of its lists' lengths, from the
 * lexicon, before the query is prepared): the same on every machine and
 * every run, where a cost model's prediction moves as its fit does.
 * GPU: 4 H200s, 10M documents, 2,999 terabyte05 queries, k 10 (ninth
 * session, BENCHMARKS.md), mean us whole on one GPU -> split on 4, by the
 * queries' postings: 2^19..2^20 AND 311 -> 326, MaxScore 305 -> 339, BMW
 * 326 -> 377 (the fan-out, a second set of launches, the merge cost more
 * than they save); 2^20..2^21 AND 415 -> 384, MaxScore 424 -> 373, BMW 469
 * -> 444; 2^22..2^23 MaxScore 869 -> 528: 2^20. To tune: `bench queries --spread
 * gpu-only --per-query` with TANDEM_SPLIT_MIN_POSTINGS=1 (every query
 * split) and =4611686018427387904 (none), joined per query: the len_sum
 * above which the split rows are faster (docs/PARTITION.md).
 * CPU: PoCL's devices on one host share its cores (a split gains no
 * compute, and one query's ranges already use every core): only the
 * longest queries, 2^24, unmeasured. */
#define TDM_TUNE_SPLIT_MIN_POSTINGS_GPU (1ull << 20)
#define TDM_TUNE_SPLIT_MIN_POSTINGS_CPU (1ull << 24)

/* A batch query's heap slots on a GPU: its ranges x k at most. The batch's
 * ranges go to its queries by their work, so a long query of a small batch
 * got up to ndocs / 8k ranges, and its merge (one work-group of 256 on the
 * H200, whose driver reports 256 for every kernel) read them all: H200, 1M
 * documents, AND k = 10, batches of 128 spent 1.75 of their 4.5 ms in the
 * merge, 4,096 still 1.1 ms (TANDEM_SEARCH_PROFILE, ninth session). */
#define TDM_TUNE_BATCH_MERGE_KEYS_GPU 32768u

/* ... yet that cap never makes a query's ranges longer than this many
 * documents: at large k it left few long ranges (32 of 31,250 documents at
 * k = 1,000 on 1M documents), and a batch waited on its long queries' few
 * long ranges. H200, 3,000 queries, MaxScore k 1,000, batches of 3,000 /
 * 1,000 from 4 senders, q/s, TANDEM_BATCH_MERGE_KEYS 32,768 / 131,072
 * (ranges of 31,250 / 8,000 documents): 1M terabyte05 10,481 / 18,458 and
 * 4,220 / 13,529; msmarco 5,212 / 9,166 and 2,736 / 7,430; BMW terabyte05
 * 6,372 / 12,551 (g42). 10M, 1,500 terabyte05 queries in one call, ranges
 * of 78k / 38k / 19k documents (128 / 262 / 524 a query): MaxScore 1,321 /
 * 1,836 / 2,439 q/s, BMW 680 / 1,027 / 1,489 (g41; fifteenth session).
 * Below k = 256 the cap leaves shorter ranges anyway. */
#define TDM_TUNE_BATCH_MERGE_RLEN_GPU 8192u

/* A batch's heaps (8 bytes a slot: score and docid) in at most this share
 * of a GPU's memory (search_batch.c cuts the batch): 1,500 queries at k =
 * 1,000 on 10M documents, 1,220 ranges each, take 14.6 GB. */
#define TDM_TUNE_BATCH_HEAP_MEM_DIV 8u

/* A query's candidates (ranges x their heaps' room) that go to the merge
 * directly, without a select stage (merge_direct_keys): a launch less (a
 * dependent kernel on the GPU, 18-25 us of host time on the H200, 30-67 us
 * on PoCL), against one group reading them all. The merge's filter
 * (cl/search_merge.cl) reads each candidate once, so one group of 256
 * (NVIDIA's limit for the merge kernels) can take more than the radix
 * select's eight passes could: OR and AND at k = 10 on the H200 have 1,056
 * ranges (10,560 candidates), k = 1,000 about a million (select stages
 * whatever the value). 16,384 was measured with the radix select at 1,024
 * work-items; the filter's best value is unmeasured (sweep
 * TANDEM_MERGE_DIRECT_KEYS: 4,096, 16,384, 65,536). PoCL's plans (4
 * ranges a core) stay far below it. */
#define TDM_TUNE_MERGE_DIRECT_KEYS_GPU 16384u
#define TDM_TUNE_MERGE_DIRECT_KEYS_CPU 16384u

/* The select stages' filter (merge_filter_max_k; cl/search_merge.cl,
 * tdm_merge_filtered) up to this k, the radix select above
 * (tdm_search_select_radix; the merge, one group, filters at every k: on
 * PoCL at k = 1,000 it was faster so, OR 360 -> 265 us). A GPU: every
 * k (one read of the candidates against the radix select's eight chains of
 * dependent loads; unmeasured: TANDEM_MERGE_FILTER=off to compare). A CPU
 * runs a group's work-items one after the other, where the filter's sorts
 * (about 2 k keys, then the ~k that pass) cost more than the radix passes
 * at k = 1,000. PoCL, the 2-core build machine, 200k documents, GPU-shaped
 * plans (TANDEM_CPU_RANGES_PER_CU=528), 300 queries, us a query radix /
 * filter: k = 17, the direct merge of ~13,000 candidates, OR 292 / 97, AND
 * 181 / 51, MaxScore 209 / 48; k = 1,000, two select stages and the merge,
 * OR 2,087 / 3,740, AND 653 / 869, MaxScore 791 / 1,147. */
#define TDM_TUNE_MERGE_FILTER_MAX_K_GPU 0xffffffffu
#define TDM_TUNE_MERGE_FILTER_MAX_K_CPU 128u

/* A single query's select stages and merge at k <= 16 over at most 32
 * candidates a work-item (tdm_search_small_fits) with the small kernels
 * (merge_small: cl/search_merge.cl's tdm_merge_small), else the filter.
 * PoCL, 2 cores, MaxScore k 10: a merge 94 us with the radix select, 22 with
 * the small one (the filter there unmeasured). H200, 1M documents, 300
 * terabyte05 queries, k 10, profiled (`.gl/g48.sh`, sixteenth session),
 * device us small / filter: MaxScore select 8.7 / 7.8, merge 18.6 / 14.8;
 * ranked AND select 7.7 / 7.4, merge 17.6 / 15.5: the filter on a GPU. */
#define TDM_TUNE_MERGE_SMALL_GPU 0u
#define TDM_TUNE_MERGE_SMALL_CPU 1u

/* A single query's first select stage in its range kernel's launch
 * (range_select_max_k; cl/search_range_sel.cl): each work-group takes its
 * ranges' top k once their heaps are written, so no select launch follows.
 * Up to this k on a GPU where a select stage runs at all, 0 never; a CPU's
 * ranges are single work-items. H200, 1M documents, 1,000 queries a log, k
 * 10, two rounds (`.gl/g48.sh`, sixteenth session): the fused kernel took
 * about what the range and select kernels took together (MaxScore 61.4 us
 * against 51.3 + 8.7; ranked AND's compressed 94.5 against 82.2 + 7.7), a
 * launch less (launches a query 2.91 -> 2.18); terabyte05 means within the
 * rounds' noise (MaxScore 134 -> 114, 109; AND 121 -> 108, 110), msmarco's
 * slower (WAND 173, 169 -> 220, 225; BMW 186, 186 -> 240, 248; MaxScore
 * 147, 145 -> 158, 163): off until a rule says which queries gain (their
 * terms, their lists' lengths; `--per-query`). TDM_TUNE_RANGE_SELECT_LOCAL:
 * the groups' size where the plan's range groups are single work-items
 * (TANDEM_RANGE_SELECT=on on a CPU). */
#define TDM_TUNE_RANGE_SELECT_MAX_K_GPU 0u
#define TDM_TUNE_RANGE_SELECT_LOCAL 64u

/* OR, WAND, BMW and MaxScore share a GPU's device batch up to this k
 * (above, each query of a batch call runs alone). At 128 a batch call's k =
 * 1,000 queries ran alone, one after another: H200, 1M documents, 3,000
 * terabyte05 queries, MaxScore k 1,000, 5,200 q/s in batches of 3,000
 * against 18,458 batched with TANDEM_BATCH_MERGE_RLEN_GPU's ranges
 * (msmarco 3,078 / 9,166; BMW terabyte05 4,463 / 12,551; fifteenth session,
 * g40, g42). The CPU row keeps 128: its batches go to the host path. */
#define TDM_TUNE_BATCH_MAX_K_GPU 1000u

/* A batch is split over several GPUs only in parts of this many queries or
 * more, else it goes whole to the GPU that would finish it first: a part
 * pays a batch call's fixed cost. H200, 1M documents, AND k = 10, one
 * sender: batches of 128 / 512 / 1,024 / 4,096 took 4.6 / 9.9 / 16.0 / 50.0
 * ms (about 3.5 ms + 11.3 us a query); two GPUs splitting every call of
 * 1,024 from 4 senders gave 1.22x one GPU (eighth session). */
#define TDM_TUNE_BATCH_MIN_PART_GPU 1024u

/* AUTO's OR for long queries (auto_or_min_terms): on the GPU a query's
 * ranges all run at once, so exhaustive OR pays no pivoting, while WAND,
 * BMW and MaxScore sort or scan every cursor at each step, and a learned
 * sparse query's lists all reach the same documents. One H200, 1M
 * SPLADE-shaped documents (ninth session, BENCHMARKS.md), 500 SPLADE++
 * queries of ~44 terms, k 10, mean us: OR 464, MaxScore 1,548, WAND 5,729,
 * BMW 5,716; uniCOIL's shorter queries: OR 278, MaxScore 248. A CPU
 * (PoCL, 16 cores): MaxScore 12,983 against OR 14,789 on SPLADE++: never. */
#define TDM_TUNE_AUTO_OR_MIN_TERMS_GPU 24u

/* A batch call's queries that run alone (alone_threads): on a GPU a query
 * alone is mostly host work (its launches, uploads, the download's wait)
 * around a short device run, and a batch ran them one after the other with
 * the device idle between: H200, 1M documents, MaxScore k 1,000 in batches
 * reached 0.72x PISA's 16 threads while one query alone is 9x PISA's one
 * thread. Several at once overlap one's host work with another's device
 * work (one in-order queue: the device's commands stay in turn); 4 on a
 * GPU: one H200 (tenth session, BENCHMARKS.md), 1M documents, 4,000
 * terabyte05 queries, MaxScore k 1,000, batches of 256 from 4 senders:
 * 3,681 / 3,789 / 4,131 q/s at 1 / 4 / 8 threads (one query at a time
 * 3,830: the in-order queue bounds it): 8.
 * CPU (PoCL, the 2-core build VM, shared, so +-20 % from run to run):
 * 300k documents, 1,200 queries of .gl/q.txt, k 1,000, batches of 256,
 * median q/s of 5 alternating runs at 1 / 2 / 4 threads: MaxScore 950 /
 * 1,030 / 992, BMW 788 / 812 / 821; 50k SPLADE-shaped documents, 300
 * SPLADE++ queries, OR k 10 (alone: or_alone_terms), batches of 100, 4 runs
 * at 1 / 2: 156 / 164; quieter, 400 queries, MaxScore / BMW batch q/s
 * over single q/s of the same run, medians of 5: 1.23 / 1.02 at one
 * thread, 1.32 / 1.02 at two, 1.30 / 1.02 at four. Never worse at 2,
 * within the noise: 2 (a query's merge is one work-group, one core). */
#define TDM_TUNE_ALONE_THREADS_GPU 8u

/* How a device batch's host thread waits for its results (batch_sleep,
 * TANDEM_BATCH_WAIT). NVIDIA's blocking read spins a core in the driver for
 * the whole batch: 4 H200s of one host (eleventh session, BENCHMARKS.md),
 * 10M documents, batches of 256, 16 senders, q/s asleep / spinning: AND
 * 56,794 / 53,473, MaxScore 43,352 / 43,736, BMW 20,707 / 21,517, the CPU a
 * query 113 / 131 us; one GPU 17,809 / 18,140, 12,670 / 12,488, 6,090 /
 * 6,106. Even within the noise; asleep leaves the cores to the host's
 * other work. A CPU device waits in the driver (PoCL's blocking read
 * sleeps already). */
#define TDM_TUNE_BATCH_SLEEP_GPU 1

/* A GPU batch's uploads from pinned staging (batch_upload): NVIDIA's
 * non-blocking write from pageable memory copies it while the in-order
 * queue runs other batches' kernels, and the host's part of a call grew
 * with its senders (4 H200s, 16 senders: 3.45 ms of buffers and uploads a
 * call of 35 KB, eleventh session). One H100 (twelfth session), 1M
 * documents, terabyte05 batches of 256 from 16 senders, q/s pageable /
 * pinned, same call: AND 106,600 / 106,598 and 107,677 / 114,215, MaxScore
 * 79,955 / 97,106, BMW 46,616 / 48,140. The transfer queue with a barrier
 * (eleventh session) gained nothing on one H200 (AND 131,718 on the compute
 * queue, 124,693) and is gone. CPUs: pageable (PoCL's pinned memory is the
 * same host memory: a copy more). */
#define TDM_TUNE_BATCH_UPLOAD_GPU TDM_TUNE_UPLOAD_PINNED
#define TDM_TUNE_ALONE_THREADS_CPU 2u

/* A GPU's pruning query alone (WAND, BMW, MaxScore on the ITEM variant)
 * below k = 100 takes its shared threshold's seed from the host
 * (plan/search_hseed.c: each term's k-th score, from its best blocks,
 * cached per term by the handle) instead of the device seed's histogram
 * and reduction launches. One H200 (fourteenth session, BENCHMARKS.md), 1M
 * documents, 2,000 queries, mean us device seed / host seed (a bench
 * process runs MaxScore's series first, so WAND's and BMW's find the terms'
 * values cached; MaxScore's pay for the cold ones): terabyte05 k 10
 * MaxScore 144, 160 / 143, 146, WAND 166, 163 / 135, 143, BMW 173, 169 /
 * 157, 153; msmarco k 10 MaxScore 199, 220 / 149, 164, WAND 247, 269 / 187,
 * 196, BMW 267, 296 / 204, 216. At k = 1,000 MaxScore took 229, 231 / 583,
 * 519 on terabyte05 (354, 362 / 397, 429 on msmarco), 492 and 580 with
 * both seeds: a cold term's value at k = 1,000 decodes up to 33 blocks on
 * the host, and caps at a value far below a long list's 1,000th score.
 * CPUs plan the compressed variant (its own rule); their ITEM runs keep
 * the device seed. */
#define TDM_TUNE_HSEED_ALONE_BELOW_K_GPU 100u

/* A GPU's pruning query alone makes its block bounds on the device from 16
 * bytes a term (tdm_search_stored_bounds_batch, as its batches do): H100,
 * 10M documents (twelfth session), the host filled and uploaded 131 KB
 * (terabyte05) to 315 KB (msmarco) of them a MaxScore, WAND or BMW query,
 * a table lookup a block on the host before the launch; SPLADE queries at
 * 8.8M hold millions of blocks. One launch more instead. CPUs: host (the
 * upload is a copy within host memory). */
#define TDM_TUNE_QUERY_BOUNDS_GPU TDM_TUNE_BOUNDS_DEVICE

/* An OR query of many terms in a batch call alone (or_alone_terms): a
 * device batch's ranges and merge suit short queries. GPU: learned sparse
 * queries (SPLADE++, ~44 terms) on an H200, 1M documents: OR one query at
 * a time 2,153 q/s, in batches of 500 759 q/s (issue 30). 8.8M documents
 * (eleventh session, H200): SPLADE OR in device batches 58 q/s against 274
 * alone, and at 24 the log's queries of 13 to 23 terms (7 %) went there.
 * 1M, one H100 (twelfth session), SPLADE++ OR k 10, batches of 500, q/s
 * at 24 / 8 / 1: 3,551 / 3,546 / 3,950 (8 and 1 send every query alone:
 * within the noise). 8: every learned sparse query alone, terabyte05's
 * (2-6 terms) in device batches. CPU
 * (PoCL, 2 cores): 50k SPLADE-shaped documents, 300 SPLADE++ queries, OR
 * k 10, batches of 100, median q/s of alternating runs: the VM loaded,
 * in device batches 112, alone 146; quieter, with the merge of 4728e7b, in
 * device batches 240, alone 251 (one thread), 261 (two); the
 * terabyte05-like queries of .gl/q.txt (2-6 terms), OR k 10, batches of
 * 256: all alone (1) against never, 634-792 against 581-792, no
 * difference: 24 too. */
#define TDM_TUNE_OR_ALONE_TERMS_GPU 8u
#define TDM_TUNE_OR_ALONE_TERMS_CPU 24u

/* The host path's threshold (host_max_postings) by kind: a query whose
 * lists hold at most this many postings (their df summed, from the
 * lexicon) is answered on the host (drive/search_host.c), every posting
 * decoded and scored there on the caller's thread, with no launch, upload
 * or download. Its cost (the evaluator of drive/search_host.c, 2-core
 * build machine, 1M documents, msmarco-passage-dev, its lists' postings
 * at most 16k): 1-2 us a query and about 4 ns a posting for OR and the
 * pruning algorithms at k 10, 9 at k 1000, 6 for AND at k 10 (10.7, 31.6
 * and 7.2 before the evaluator's rework); a device's is its floor, then
 * its own slope.
 * CPU (PoCL), with the reworked evaluator: the same machine, collection
 * and log (1,000 queries), k 10, p50 us device / host (share of the queries
 * the host answers faster): AND 4-8k 109 / 67 (85%), 8-16k 172 / 128
 * (55%), 16-32k 170 / 213 (43%); OR 4-8k 178 / 46, 16-32k 314 / 119,
 * 64-128k 710 / 392 (100% each); MaxScore 4-8k 79 / 44 (100%), 16-32k
 * 176 / 120 (81%), 64-128k 368 / 391 (50%); under 1k postings device
 * 53-87, host 8-18. So 8,192: below it the host wins for every algorithm
 * (a CPU of more cores runs longer queries faster on the device).
 * Before the rework, measured on the 2-core build machine, 1M documents, 1,494
 * msmarco-passage-dev queries, k 10, p50 us device / host by the query's
 * postings (the CPU count read once, common/workers.c): OR 2-4k 78 / 42, 4-8k 110 / 84, 8-16k 146 / 165; AND 2-4k
 * 69 / 66, 4-8k 83 / 64 (means 79 / 92), 8-16k 87 / 91; MaxScore 2-4k
 * 74 / 45, 4-8k 91 / 103. One-term queries of less than a block (220 of
 * the log's words): k 10 37-44 / 2-5 us p50, k 1000 93-97 / 3-4. So 4,096: below it the host wins for every algorithm (a CPU of
 * more cores runs longer queries faster on the device, not the host).
 * GPU: one H200 and its host (ninth session, BENCHMARKS.md), 1M
 * documents, the 3,000 first msmarco-passage-dev queries, k 10, mean us
 * host / device by postings (2 to 10 queries a bucket): 512-1k AND 58 / 118,
 * MaxScore 60 / 149, OR 63 / 190; 1-2k AND 82 / 98, MaxScore 106 / 139,
 * BMW 106 / 108, OR 109 / 198; 2-4k AND 198 / 117, MaxScore 210 / 141,
 * BMW 201 / 139, OR 222 / 206 (that host's cold postings cost more than
 * the build machine's). Tenth session, the reworked evaluator, same
 * set-up, host / device: 4-8k AND 126 / 108, MaxScore 92 / 134, BMW 108 /
 * 130, OR 102 / 155; 8-16k AND 205 / 106, MaxScore 189 / 131, BMW 205 /
 * 128, OR 200 / 158: 4,096 (AND loses above it).
 * Fourteenth session (one H200, 1M documents, 1,500 queries a log, k 10,
 * after the host path's AND block filter, MaxScore and one-term reworks
 * and the GPU's host seed), mean us device / host by postings (share of the
 * queries the host answers faster), terabyte05: AND 4-8k 98 / 24 (100%),
 * 8-16k 91 / 44 (99%), 16-32k 96 / 70 (83%), 32-64k 105 / 111 (49%);
 * MaxScore 4-8k 119 / 23, 8-16k 131 / 72 (94%), 16-32k 133 / 145 (34%);
 * BMW 8-16k 118 / 84 (82%), 16-32k 128 / 163 (24%); OR 8-16k 111 / 109
 * (62%), 16-32k 118 / 202 (4%); msmarco-passage-dev: AND 16-32k 108 / 36,
 * 32-64k 109 / 66, 64-128k 126 / 111; MaxScore 8-16k 119 / 69, 16-32k 122
 * / 108 (50%), 32-64k 124 / 209; OR 8-16k 123 / 101, 16-32k 118 / 170:
 * 32,768 for ranked AND, 16,384 for the others.
 * To tune: `bench queries --per-query` with TANDEM_HOST_MAX_POSTINGS=0
 * (never) and =4611686018427387904 (every query on the host), joined per
 * query: the len_sum below which the host's rows are faster. */
#define TDM_TUNE_HOST_MAX_POSTINGS_GPU 16384u
#define TDM_TUNE_HOST_MAX_AND_GPU 32768u
/* the rows' host_max_postings: by algorithm (AUTO, OR, AND, AND-then-OR,
   WAND, BMW, MaxScore), or none */
#define TDM_TUNE_HOST_MAX_GPU                                                                  \
    {0, TDM_TUNE_HOST_MAX_POSTINGS_GPU, TDM_TUNE_HOST_MAX_AND_GPU,                             \
     TDM_TUNE_HOST_MAX_POSTINGS_GPU, TDM_TUNE_HOST_MAX_POSTINGS_GPU,                           \
     TDM_TUNE_HOST_MAX_POSTINGS_GPU, TDM_TUNE_HOST_MAX_POSTINGS_GPU}
#define TDM_TUNE_HOST_MAX_NONE {0}

/* A batch call's queries on the host path (batch_host): a batch keeps every
 * core busy with whole queries (the call's threads answer host queries in
 * parallel, drive/search_run.c), so what counts is the work a query costs a
 * core, and there the host evaluator (a block at a time, OR's dense window;
 * MaxScore's cursors for MaxScore, WAND and BMW on long queries) beats
 * PoCL's kernels for every algorithm. MaxScore at k <= batch_max_k stayed on
 * the device until the host pruned (twelfth session, k 10, q/s device / host,
 * batches of 1,000 and 256, 2 senders: terabyte05 11,767-12,119 / 15,377-
 * 16,387, msmarco 5,389-5,652 / 6,448-6,718). PoCL, the 2-core build VM
 * (eleventh session, BENCHMARKS.md),
 * 200k documents, 1,000 queries, q/s of batches, device / every query on the
 * host: terabyte05 k 10 (batches of 1,000) AND 17,278 / 18,502, MaxScore
 * 11,897 / 7,694, BMW 6,380 / 8,093; k 1,000 (256) MaxScore 1,834 / 5,915;
 * msmarco-passage-dev k 10 AND 12,330 / 16,010, MaxScore 5,448 / 2,578, BMW
 * 2,020 / 2,597, WAND 1,862 / 2,591, OR 694 / 2,563; k 1,000 MaxScore 681 /
 * 2,313, BMW 512 / 2,352, OR 415 / 2,313. CPU: on; GPU: off (a GPU batch
 * is many queries' device work at once). Single queries keep the
 * host_max_postings rule: alone, PoCL spreads one query over every core. */
#define TDM_TUNE_BATCH_HOST_CPU 1
/* ... up to 2^23 postings a query (batch_host_max_postings), at any size
 * where the host keeps no posting: ranked AND, the pruning queries that the
 * host's MaxScore evaluator takes (plan/search_plan.h, tdm_search_host_ms)
 * and one-term queries (a block at a time). The host's OR of several terms
 * (and a pruning query below MaxScore's postings a result) keeps every
 * posting's docid and score, 8 bytes: 64 MiB a query at most, on every
 * core at once; AND's and MaxScore's cursors keep a block a list. Past 2^23 the pruning queries
 * went to PoCL until the fifteenth session: 10M documents, the 16-core H200
 * host's CPU batches were 0.32-0.61x PISA's 16 threads for BMW@10 and
 * 0.19-0.38x for MaxScore@1000 (most msmarco queries hold more). At 2^20 the 16-core
 * H100 host's CPU batches fell to 0.19-0.72x PISA's 16 threads (1M
 * documents, thirteenth session: longer queries went to PoCL, each over
 * every core); on the 2-core build VM, 1M documents, 1,000 queries, batches
 * of 1,000, q/s at 2^20 / 2^23 with AND past it: terabyte05 k 10 AND 6,235 /
 * 10,158, MaxScore 5,834 / 7,981, BMW 2,350 / 8,077, k 1,000 MaxScore 1,336
 * / 1,843; msmarco AND 4,072 / 8,075, MaxScore 2,057 / 3,526, BMW 677 /
 * 3,481, k 1,000 MaxScore 431 / 625. */
#define TDM_TUNE_BATCH_HOST_MAX_POSTINGS_CPU (1ull << 23)
#define TDM_TUNE_HOST_MAX_POSTINGS_CPU 8192u
#define TDM_TUNE_HOST_MAX_CPU                                                                  \
    {0, TDM_TUNE_HOST_MAX_POSTINGS_CPU, TDM_TUNE_HOST_MAX_POSTINGS_CPU,                        \
     TDM_TUNE_HOST_MAX_POSTINGS_CPU, TDM_TUNE_HOST_MAX_POSTINGS_CPU,                           \
     TDM_TUNE_HOST_MAX_POSTINGS_CPU, TDM_TUNE_HOST_MAX_POSTINGS_CPU}

/* The row of kind k (0 .. TDM_KIND_COUNT - 1). */
const tdm_tune_row *tdm_tune_row_get(int kind);
/* The kind of a device from what it reports. */
int tdm_tune_kind_of(const tdm_device_info *info);
/* The row of a device: tdm_tune_row_get(tdm_tune_kind_of(info)). */
const tdm_tune_row *tdm_tune_row_of(const tdm_device_info *info);

/* ---- the rows (compiled once, in tune_table.c) */
#ifdef TDM_TUNE_TABLE_ROWS

/* ITEM on a GPU: groups of 64 ranges, 4 groups a compute unit, none shorter
 * than 32 documents (TANDEM_GPU_MIN_RLEN): a range's work-item walks its
 * documents one dependent load after another, so the kernel lasts as long
 * as its longest range, and 1M documents in ranges of 64 left the H200 most
 * of its threads idle. One H200 (fourteenth session), 1M documents, 2,000
 * queries, k 10, the host seed, mean / p99 us at 64 (two runs) / 32 / 16 /
 * 128: terabyte05 WAND 141, 145 / 118 / 147 / 171, p99 456-466 / 316 / 345
 * / 683; BMW 156, 157 / 127 / 162 / 189; MaxScore 137, 159 / 136 / 161 /
 * 175; msmarco WAND 204, 184 / 176 / 164 / 237, p99 577-593 / 420 / 387 /
 * 876; BMW 215, 199 / 180 / 174 / 265; MaxScore 178, 151 / 163 / 151 / 207.
 * At k = 1,000, 64 / 32, two rounds: terabyte05 MaxScore 259, 291 / 271,
 * 253, WAND 259, 301 / 271, 257, p99 730-760 / 576-590; msmarco MaxScore
 * 344, 376 / 343, 341, WAND 409, 432 / 376, 368. COMPRESSED (ranked AND)
 * keeps 64: at 60 (its 2 groups' 16,896 ranges at 1M) AND k 1,000 took
 * 220-224 us against 181-203 (terabyte05, H200).
 * COMPRESSED: 2 groups a compute
 * unit (TANDEM_GPU_ZGROUPS_PER_CU): its cursors keep a decoded block per
 * term a range in global memory, so fewer, longer ranges than ITEM's. H200,
 * 1M documents, 5,000 queries, interleaved scratch, mean us at 1 / 2 / 4
 * groups: AND k10 171.8 / 153.8 / 153.2, MaxScore k10 255.6 / 192.4 / 190.6
 * (fifth session).
 * AUTO on a GPU: GROUP for OR and AND-then-OR, ITEM for WAND, BMW,
 * MaxScore and AND. H200, 1M documents, 5,000 queries, mean us GROUP or
 * ITEM / COMPRESSED (fifth session): AND k10 218.9 / 153.8, k1000 235.0 /
 * 179.2; OR k10 229.6 / 289.1; AND-then-OR k10 235.1 / 232.9, k1000 404.4 /
 * 420.4; MaxScore k10 152.2 / 192.4. Ranked AND on ITEM decoding every block
 * of its lists (and_select 0: the decode is one launch, the selection's
 * host and device steps cost more than the blocks they save) overtook
 * COMPRESSED once the range kernels read G once a work-group (eighteenth
 * session, `.gl/g54.sh`, H200, 1M, 1,000 queries a log, k 10, three
 * rounds, mean us ITEM / COMPRESSED / GROUP: terabyte05 85.2, 88.3, 104.1 /
 * 107.1, 123.7, 111.4 / 148.6, 162.9, 144.0, p99 148-165 / 318-345;
 * msmarco 95.1, 90.9, 107.1 / 165.9, 175.1, 160.3 / 207.1, 217.0, 209.0,
 * p99 150-173 / 359-390; ITEM with the selection: 157-212). At 10M
 * (`.gl/g56.sh`, two rounds, ITEM / with the selection / COMPRESSED):
 * terabyte05 157, 184 / 359, 383 / 365, 353, msmarco 202, 216 / 862, 857
 * / 456, 458; k 1,000: 256 / - / 502 and 281 / - / 524.
 * AND in a batch of several: ITEM (the decoded range batch): H200, 10M
 * documents, 2,000 queries, k10, batches of 512, 8,901 queries/s against
 * 2,817 on the compressed cursors, whose lanes each decode every block they
 * enter alone.
 * No fallback for AND with long lists (and_long_fraction 0): GROUP beat
 * COMPRESSED where the shortest list held more than 1/32 of the documents
 * (every compressed cursor then decodes a block of every list), but ITEM
 * beats both on those too (its p99 above is half of theirs).
 * Compressed scratch: 2^27 words (512 MB) within half the largest
 * allocation, so that a batch of hundreds of queries keeps enough ranges.
 * Layout interleaved: a warp's 32 ranges run in lockstep, so each cursor,
 * buffer and ord access is one coalesced transaction instead of 32.
 * A seed always (item_local > 1: groups of 64 short ranges, all running
 * at once, never see another's heap in time), the host's below k = 100
 * (TDM_TUNE_HSEED_ALONE_BELOW_K_GPU), the device's from it: host model
 * counters (tests/prune_counters, 300k documents, 200 terabyte05 queries,
 * MaxScore), range kernel postings scored without / with: k = 1000 248,303
 * / 52,264, k = 10 200,232 / 21,697.
 * Batches: OR, WAND, BMW and MaxScore above k = 128 run alone: MaxScore at
 * k = 1,000 answered 2,852 lone queries/s against 1,599/s in batches of 512
 * (the lone path's select stages and seed beat the batch's few long ranges
 * a query); at k = 10 batches won (12,314 against 3,539). Ranked AND above
 * k = 128 by Wu's mapping (the range batch's heaps stop there; below, Wu's
 * mapping 27,321 q/s against 24,737 on 1M documents but 995 against 4,557
 * on 10M, where its per-query merge takes 12.6 of a batch's 15.7 ms).
 * 16,384 batch ranges a compute unit: 2,000 terabyte05 queries, k = 10,
 * batches of 512 / 4,096, queries/s, 1,024 against 16,384: 1M documents
 * AND 55,750 / 71,350 against 70,749 / 97,789, MaxScore 34,557 / 37,864
 * against 54,454 / 69,512, BMW 27,571 / 31,038 against 44,836 / 47,188; 10M
 * documents (512) AND 8,261 against 13,897, MaxScore 4,990 against 8,982,
 * BMW 3,877 against 5,857; 4,096 and 65,536 slower, 32,768 about the same.
 * No queue: warps want a work-item per range.
 * Decode: a work-group per job. Staging: pinned buffers (discrete memory). */
#define TDM_TUNE_ROW_GPU(nm, stg, hmax, alone)                                                 \
    {                                                                                          \
        .name = nm, .gpu = 1, .item_local = 64, .item_ranges_per_cu = 64 * 4,                 \
        .zr_ranges_per_cu = 64 * 2, .min_rlen = 32, .zr_min_rlen = 64, .group_per_cu = 8,      \
        .auto_variant = {0, TDM_VARIANT_GROUP, TDM_VARIANT_ITEM, TDM_VARIANT_GROUP,            \
                         TDM_VARIANT_ITEM, TDM_VARIANT_ITEM, TDM_VARIANT_ITEM},                \
        .fallback = {0, TDM_VARIANT_GROUP, TDM_VARIANT_GROUP, TDM_VARIANT_GROUP,               \
                     TDM_VARIANT_ITEM, TDM_VARIANT_ITEM, TDM_VARIANT_ITEM},                    \
        .and_batched = TDM_VARIANT_ITEM, .and_long_fraction = 0, .and_select = 0,             \
        .zr_words = 1u << 27,                                                                  \
        .zr_layout = 1, .seed_rlen_per_k = 16, .hseed_min_k = 100, .hseed_min_ranges = 32,     \
        .hseed_alone_below_k = TDM_TUNE_HSEED_ALONE_BELOW_K_GPU,                               \
        .batch_max_k = TDM_TUNE_BATCH_MAX_K_GPU, .and_wu_k = 128,                              \
        .batch_ranges_per_cu = 16384, .batch_min_rlen = 64,                                    \
        .batch_merge_keys = TDM_TUNE_BATCH_MERGE_KEYS_GPU,                                     \
        .batch_merge_rlen = TDM_TUNE_BATCH_MERGE_RLEN_GPU,                                     \
        .batch_min_part = TDM_TUNE_BATCH_MIN_PART_GPU, .batch_queue = 0,                    \
        .batch_sleep = TDM_TUNE_BATCH_SLEEP_GPU,                                               \
        .batch_upload = TDM_TUNE_BATCH_UPLOAD_GPU,                                             \
        .query_bounds = TDM_TUNE_QUERY_BOUNDS_GPU,                                             \
        .merge_direct_keys = TDM_TUNE_MERGE_DIRECT_KEYS_GPU,                                   \
        .merge_filter_max_k = TDM_TUNE_MERGE_FILTER_MAX_K_GPU,                                 \
        .merge_small = TDM_TUNE_MERGE_SMALL_GPU,                                               \
        .range_select_max_k = TDM_TUNE_RANGE_SELECT_MAX_K_GPU,                                 \
        .alone_threads = alone,                                                                \
        .or_alone_terms = TDM_TUNE_OR_ALONE_TERMS_GPU,                                         \
        .decode_variant = TDM_TUNE_DECODE_GROUP,                                               \
        .staging = stg, .split_min_postings = TDM_TUNE_SPLIT_MIN_POSTINGS_GPU,                 \
        .auto_or_min_terms = TDM_TUNE_AUTO_OR_MIN_TERMS_GPU,                                 \
        .host_max_postings = hmax                                                              \
    }

/* A CPU (PoCL): groups of one work-item, 4 ranges a core
 * (TANDEM_CPU_RANGES_PER_CU) of at least 256 documents, so every core works
 * on the one query with long ranges (few cursor set-ups, good pruning).
 * AUTO: COMPRESSED for every algorithm, also in batches: PoCL, 2 cores, 1M
 * documents, 300 queries, mean us ITEM / COMPRESSED, two alternating runs:
 * OR k10 16,908, 14,070 / 6,622, 6,729; AND-then-OR k10 8,426, 8,426 /
 * 3,555, 3,754; AND 4,592 / 929 and MaxScore 5,716 / 1,282 (f38a427,
 * docs/SEARCH.md). Where COMPRESSED cannot run: ITEM.
 * Compressed scratch 2^24 words (64 MB): its plans run few ranges. Layout
 * range-major: each range runs on one core and must not share cache lines
 * with its neighbours' (d3186ea).
 * Device seed where ranges are shorter than 16 k: CPU plan (64 ranges, 16
 * at once) k = 1000 182,452 / 52,115 (+124,151 seeded), k = 10 31,912 /
 * 18,981 (+124,151 seeded: not worth it). Host seed of COMPRESSED from k =
 * 100 or on 32 ranges or more (a CPU of 8 compute units or more, whose
 * first ranges, all running at once, see no published threshold): PoCL, 2
 * cores, 1M collection, 300 terabyte05 queries, mean us without / with: 8
 * ranges (the plan) k1000 MaxScore 14,893 / 11,126, BMW 17,812 / 14,025,
 * WAND 19,065 / 15,798; 64 ranges k1000 MaxScore 15,796 / 8,699; at k = 10
 * no gain (the host's 25-40 us a query uncached eat it).
 * Batches: 4 ranges a core of any length; compressed batches through the
 * queue (a few work-items a core take whole ranges, longest first, as PISA
 * runs whole queries). Decode: serial, a work-item per job. No staging
 * (host memory). */
#define TDM_TUNE_ROW_CPU(nm, decode)                                                           \
    {                                                                                          \
        .name = nm, .gpu = 0, .item_local = 1, .item_ranges_per_cu = 4, .zr_ranges_per_cu = 4, \
        .min_rlen = 256, .zr_min_rlen = 256, .group_per_cu = 8,                                \
        .auto_variant = {0, TDM_VARIANT_COMPRESSED, TDM_VARIANT_COMPRESSED,                    \
                         TDM_VARIANT_COMPRESSED, TDM_VARIANT_COMPRESSED,                       \
                         TDM_VARIANT_COMPRESSED, TDM_VARIANT_COMPRESSED},                      \
        .fallback = {0, TDM_VARIANT_ITEM, TDM_VARIANT_ITEM, TDM_VARIANT_ITEM,                  \
                     TDM_VARIANT_ITEM, TDM_VARIANT_ITEM, TDM_VARIANT_ITEM},                    \
        .and_batched = 0, .and_long_fraction = 0, .and_select = 1, .zr_words = 1u << 24,      \
        .zr_layout = 0,                                                                        \
        .seed_rlen_per_k = 16, .hseed_min_k = 100, .hseed_min_ranges = 32, .batch_max_k = 128, \
        .and_wu_k = 128, .batch_ranges_per_cu = 4, .batch_min_rlen = 1, .batch_queue = 1,      \
        .merge_direct_keys = TDM_TUNE_MERGE_DIRECT_KEYS_CPU,                                   \
        .merge_filter_max_k = TDM_TUNE_MERGE_FILTER_MAX_K_CPU,                                 \
        .merge_small = TDM_TUNE_MERGE_SMALL_CPU,                                               \
        .range_select_max_k = 0,                                                               \
        .alone_threads = TDM_TUNE_ALONE_THREADS_CPU,                                           \
        .or_alone_terms = TDM_TUNE_OR_ALONE_TERMS_CPU,                                         \
        .decode_variant = decode, .staging = 0,                                                \
        .split_min_postings = TDM_TUNE_SPLIT_MIN_POSTINGS_CPU,                                 \
        .host_max_postings = TDM_TUNE_HOST_MAX_CPU,                                            \
        .batch_host = TDM_TUNE_BATCH_HOST_CPU,                                                 \
        .batch_host_max_postings = TDM_TUNE_BATCH_HOST_MAX_POSTINGS_CPU                        \
    }

static const tdm_tune_row tdm_tune_rows[TDM_KIND_COUNT] = {
    [TDM_KIND_NVIDIA_GPU] = TDM_TUNE_ROW_GPU("NVIDIA GPU", 1, TDM_TUNE_HOST_MAX_GPU,
                                             TDM_TUNE_ALONE_THREADS_GPU),
    /* unmeasured: NVIDIA's row */
    [TDM_KIND_GPU] = TDM_TUNE_ROW_GPU("GPU", 1, TDM_TUNE_HOST_MAX_GPU,
                                      TDM_TUNE_ALONE_THREADS_GPU),
    /* plans as the GPU it says it is (the GPU paths' kernels checked), but
     * its runtime is the host's: no staging; no host path (it is there to
     * check the kernels); one run at a time (Oclgrind 21's Context runs one
     * kernel invocation a process: two host threads' launches abort it) */
    [TDM_KIND_SIMULATOR] = TDM_TUNE_ROW_GPU("Oclgrind", 0, TDM_TUNE_HOST_MAX_NONE, 1),
    [TDM_KIND_CPU] = TDM_TUNE_ROW_CPU("CPU", TDM_TUNE_DECODE_SERIAL),
    /* unmeasured: plans as a CPU (never a GPU's rules unmeasured), decodes
     * a work-group per job as GPUs do */
    [TDM_KIND_OTHER] = TDM_TUNE_ROW_CPU("other", TDM_TUNE_DECODE_GROUP),
};

#endif /* TDM_TUNE_TABLE_ROWS */

#endif
