/* The search handle (tandem.h's tdm_search): the index, its tokenizer, and
 * the devices it is resident on. Opened and closed in host/drive
 * (search_run.c); planned against here (search_plan.h), run by the drivers.
 *
 * The index is resident on every device the handle uses (resident.h): whole,
 * or, where it does not fit, through the device's list cache (listcache.h),
 * which holds the lists of the queries running. A partitioned handle holds
 * a handle per partition instead (docs/PARTITION.md).
 *
 * Threads: a tdm_search is read-only after open; everything per call lives
 * in the call's own tdm_sprep and device buffers. */
#ifndef TDM_PLAN_SEARCH_HANDLE_H
#define TDM_PLAN_SEARCH_HANDLE_H

#include <stddef.h>
#include <stdint.h>
#include "index/reader.h"
#include "index/tokpool.h"
#include "resident/resident.h"
#include "runtime/runtime.h"
#include "tandem.h"

struct tdm_sscratch;
struct tdm_bscratch;
struct tdm_bcache;
struct tdm_sched;
struct tdm_part;

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

#endif
