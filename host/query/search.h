/* Internals of the public search API (tandem.h, tdm_search_*): the handle,
 * a query prepared for the device kernels (cl/search_range.cl,
 * cl/search_merge.cl), the planner, and the device driver.
 *
 * The index is resident on every device (index/resident.h). A query's lists
 * are decoded there by one batched launch per codec (index/decode_jobs.h)
 * into scratch buffers, one segment per term in the query's term order
 * (docids ascending, tf); the kernels read those, the term table
 * (TDM_SEARCH_TW words a term, named in search_layout.h), the block
 * bounds and the resident document lengths. Only the term table, the decode
 * jobs and (for the index's own BM25 parameters) the block bounds go up;
 * k results come down.
 *
 * Threads: a tdm_search is read-only after open; everything per call lives
 * in the call's own tdm_sprep and device buffers. */
#ifndef TDM_QUERY_SEARCH_H
#define TDM_QUERY_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "resident/decode_jobs.h"
#include "index/reader.h"
#include "resident/resident.h"
#include "index/tokpool.h"
#include "query/and_select.h"
#include "query/query.h"
#include "query/score.h"
#include "query/search_layout.h" /* the kernels' tables: TDM_SEARCH_TW, TDM_ZR_*, ... */
#include "runtime/runtime.h"
#include "runtime/tune_table.h"
#include "tandem.h"

enum { TDM_SALG_OR = 0, TDM_SALG_AND = 1, TDM_SALG_WAND = 2, TDM_SALG_BMW = 3,
       TDM_SALG_MAXSCORE = 4,
       TDM_SALG_AND_OR = 5 /* host only: an AND pass, then an OR pass the device skips
                              when AND found k */ };

struct tdm_sscratch;
struct tdm_bcache;

/* One device of the handle and the index resident on it. */
typedef struct tdm_sdev {
    tdm_device *d;
    int index;          /* engine device index */
    int fp64;           /* cl_khr_fp64: batches may make stored bounds on the device */
    tdm_resident res;
    /* Scratch buffer sets of finished calls, reused (grown when too small):
     * a call takes one (or makes one) and gives it back when its results
     * are in; guarded by a spin lock held for a push or a pop. */
    struct tdm_sscratch *pool;
    volatile int pool_lock;
    /* The same for device batches (search_batch_dev.c): their buffers, the
     * decoded postings of hundreds of queries among them, kept between
     * batches; the same lock. */
    struct tdm_bscratch *bpool;
} tdm_sdev;

/* Releases a device's scratch pools (no call may be running). */
void tdm_search_pool_free(tdm_sdev *sd);
void tdm_search_bpool_free(tdm_sdev *sd);
/* A pooled buffer *m (of *cap bytes, NULL: none) holds at least `bytes`: if
 * not, it is replaced by a new one with half again for growth, within the
 * device's largest allocation. */
int tdm_search_buffer_fit(tdm_device *d, cl_mem_flags flags, cl_mem *m, size_t *cap,
                          size_t bytes, tdm_err *err);
/* The pools' spin lock (sd->pool_lock), held for a push or a pop. */
void tdm_search_pool_lock(tdm_sdev *sd);
void tdm_search_pool_unlock(tdm_sdev *sd);

struct tdm_search {
    tdm_engine *engine;
    const tdm_ireader *r;
    uint32_t ndocs;
    tdm_tokpool *tok;   /* NULL when the index's stemmer is not available */
    char *tok_error;    /* why, for text queries */
    tdm_sdev *dev;
    int ndev;
    struct tdm_sched *sched; /* the lanes (host/sched), owned by them; query never uses it */
    struct tdm_bcache *bcache; /* recomputed block bounds per (k1, b, term) (bounds.h) */
    /* A partitioned handle (docs/PARTITION.md): the index split by docid
     * range, partition i a handle of its own on one device with its shard
     * (tdm_search_handle_open_part); this handle keeps the whole index's
     * reader and tokenizer, no device (ndev 0) and no lanes of its own.
     * host/sched/partition.c runs and merges. NULL, 0: not partitioned. */
    struct tdm_search **parts;
    int nparts;
    int device_base;         /* engine device of dev[0] less its index: a
                                partition's handle is on one engine device,
                                its device 0; 0 otherwise */
    struct tdm_part *part;   /* host/sched's state of the partitioned handle */
    const tdm_ireader *owned_r; /* a reader the handle owns (a partition's shard) */
};

/* A query prepared for the kernels, on the host. */
typedef struct tdm_sprep {
    uint32_t nt;
    uint32_t *terms;    /* [nt * TDM_SEARCH_TW] */
    tdm_decode_batch batch; /* decode jobs: term t's postings at batch.out[t] */
    size_t npost;
    float *bmax;
    size_t nbmax;
    int kind;           /* enum tdm_scoring_kind */
    int device_bounds;  /* bmax is computed on the device (tdm_search_bounds):
                           the stored bounds do not apply to the request */
    float c0, c1;
    uint32_t min_df, max_df;
    tdm_and_sel andsel; /* AND's block selection (and_select.h), for 2+ terms */
    int term_bounds;    /* word 5 of each term holds its bound already (the
                           largest of its stored block bounds) */
    uint32_t *ids;      /* [nt] each term's list (the compressed variant's word 0) */
    uint32_t max_block; /* the largest block size among the lists (its cursor buffers) */
} tdm_sprep;

/* Plans the decoding of q's lists and fills the term table (words 0-4) and, when the
 * request's k1, b are the index's, each block's bound from the stored bounds
 * (bounds.h); else device_bounds is set and the device recomputes them from
 * the postings (exact maxima). */
int tdm_sprep_build(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                    const tdm_score_params *sp, tdm_err *err);
/* The same; where the stored bounds do not apply and bc is not NULL, the
 * bounds come from the handle's cache of exact recomputed ones (bounds.h:
 * computed on the host at a term's first use with these parameters) and
 * device_bounds stays 0. */
int tdm_sprep_build_cached(tdm_sprep *p, const tdm_ireader *r, const tdm_query *q,
                           const tdm_score_params *sp, struct tdm_bcache *bc, tdm_err *err);
void tdm_sprep_free(tdm_sprep *p);

/* The planner's choices for one request. */
typedef struct tdm_splan {
    int dev;            /* index into tdm_search.dev */
    int alg;            /* public enum tdm_algorithm, never AUTO */
    int variant;        /* TDM_VARIANT_ITEM, GROUP (OR/AND only) or COMPRESSED
                           (cl/search_zrange.cl: ITEM on the compressed index) */
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
} tdm_splan;

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

/* For a kernel that reads the resident index itself (the compressed
 * variant): a marker on q (in order) that waits for the index's upload and
 * the nwait <= 1 events of `wait` (a list cache's), those not complete yet
 * (nothing enqueued when all are). */
int tdm_search_after_index(const tdm_sdev *sd, cl_command_queue q, cl_uint nwait,
                           const cl_event *wait, tdm_err *err);

/* The algorithm the planner runs for `algorithm` (enum tdm_algorithm) on a
 * query of nt terms: itself, or for AUTO OR with one term (nothing to prune
 * across terms) and MaxScore with more. */
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

/* What one device run returns. */
typedef struct tdm_sout {
    uint64_t *keys;     /* [k] best first: score bits << 32 | ~docid */
    uint32_t n;         /* keys written */
    uint32_t total;     /* candidates in the range heaps (>= k iff >= k matches) */
    uint32_t launches;
    uint64_t bytes_up, bytes_down;
} tdm_sout;

/* Runs algorithm `salg` (TDM_SALG_*) for p on device sd with plan pl; out->keys
 * must hold k entries. Blocking. */
int tdm_search_dev_run(const tdm_sdev *sd, const tdm_sprep *p, uint32_t ndocs,
                       const tdm_splan *pl, int salg, uint32_t k, tdm_sout *out, tdm_err *err);

/* ---- profile (search_prof.c): TANDEM_SEARCH_PROFILE=1 sums each device
 * run's host phases and command events per algorithm, k and name, and prints
 * the means to stderr at exit. A run's profile is its own, passed to the
 * steps that record into it (search_dev.c: the run context). */
#define TDM_SPROF_EVENTS 48
typedef struct tdm_sprof {
    int on, salg, nev;
    int events;         /* 1: commands on the profiling queue with events (device
                           times); 0 (TANDEM_SEARCH_PROFILE=host): host phases
                           only, on the unprofiled path a search really takes */
    uint32_t k;
    double t0;
    cl_event ev[TDM_SPROF_EVENTS];
    const char *name[TDM_SPROF_EVENTS];
} tdm_sprof;
int tdm_sprof_on(void);
double tdm_sprof_now(void);
void tdm_sprof_begin(tdm_sprof *p, int salg, uint32_t k);
/* Keeps ev (retained) to read its times at tdm_sprof_end; no-op when off. */
void tdm_sprof_event(tdm_sprof *p, const char *name, cl_event ev);
/* A host phase from t_begin (tdm_sprof_now) to now. */
void tdm_sprof_host(tdm_sprof *p, const char *name, double t_begin);
/* A host phase from t_begin to t_end (tdm_sprof_now). */
void tdm_sprof_host_span(tdm_sprof *p, const char *name, double t_begin, double t_end);
/* After the run's last command completed: adds its times (ok) and releases
 * the events. */
void tdm_sprof_end(tdm_sprof *p, int ok);

/* ---- batches */

/* A query on its way through the engine (search_run.h): the finished
 * query, its options, its preparation and plan, its device output, and its
 * own outcome. Prepared once (tdm_search_prepare); a run (planned again
 * where its device or batch differ) resets the run's part. */
typedef struct tdm_sbq {
    tdm_query q;
    tdm_search_options o; /* checked (tdm_search_options_check) */
    int prc;            /* the preparation's outcome: TDM_OK, or the query's own
                           error (in err) that every run of it answers */
    tdm_sprep p;
    int prepped;        /* p is built (free it) */
    tdm_splan pl;
    int pl_batched;     /* pl was made for a batch of several (tdm_search_plan) */
    int run;            /* goes to a device (it has terms, no error) */
    int salg;           /* TDM_SALG_* */
    uint32_t k;
    tdm_sout so;        /* so.keys holds k */
    uint32_t batch;     /* queries that shared its launches */
    int rc;             /* TDM_OK, or this query's own error (in err) */
    tdm_err err;
} tdm_sbq;

/* Each term's bound (word 5) and MaxScore's order (word 6) of p's term table
 * from its host block bounds (when !p->device_bounds), exactly as the
 * tdm_search_order kernel computes them (search_dev.c). Writes p->terms. */
void tdm_sprep_host_order(const tdm_sprep *p);

/* One device batch (search_batch_dev.c): the n >= 1 queries qs[i] (prepared,
 * planned for device sd, all with the same device_bounds, kind, c0 and c1;
 * salg not AND-then-OR) run algorithm salg (TDM_SALG_*) with k in one set of
 * launches (ranked AND: search_batch_and.h, Wu's mapping; the others: their
 * plans' ranges are resized for the batch, variant ITEM),
 * and each qs[i]->so gets its keys, counts, the batch's launches and bytes,
 * qs[i]->batch = n. Any failure is the whole batch's (TDM_ERR_CORRUPT when a
 * list failed to decode: the caller reruns the queries alone to find whose).
 * Blocking; thread-safe. */
int tdm_search_dev_batch(const tdm_sdev *sd, uint32_t ndocs, tdm_sbq *const *qs, uint32_t n,
                         int salg, uint32_t k, tdm_err *err);

/* The smallest power of two >= k (heap and key capacities). */
static inline uint32_t tdm_pow2_at_least(uint32_t k)
{
    uint32_t p = 1;
    while (p < k)
        p <<= 1;
    return p;
}

/* Work-items of a select or merge group on d (search_dev.c): wide on a GPU,
 * where each pass of the radix select loops over the candidates; within
 * each such kernel's CL_KERNEL_WORK_GROUP_SIZE on d. */
size_t tdm_search_merge_local(tdm_device *d);
/* Whether the small-k kernels tdm_search_select_small and
 * tdm_search_merge_small (k <= 16, few keys) take n keys (a group's) at k on
 * d in groups of wg; else tdm_search_select and tdm_search_merge. */
int tdm_search_small_fits(const tdm_device *d, size_t wg, uint32_t k, uint64_t n);

/* A batch's upload of bytes of src to m on d's compute queue, non-blocking
 * (src must outlive the batch), added to *up; none when bytes is 0. */
int tdm_search_batch_upload(tdm_device *d, cl_mem m, size_t bytes, const void *src, uint64_t *up,
                            tdm_err *err);
/* After a failed batch: waits for what was enqueued on d's compute queue (it
 * reads the host tables and held lists) before they go. */
void tdm_search_batch_drain(tdm_device *d);

/* Runs the items with run set (search_batch.c): groups them by device and
 * launch-compatible plan and runs each group as one device batch. A query's
 * own failure (a damaged list) goes to its rc; the return value is an error
 * that fails the whole batch. */
int tdm_search_dev_batches(const struct tdm_search *s, tdm_sbq *const *items, size_t n,
                           tdm_err *err);

#endif
