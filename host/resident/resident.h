/* An index resident on one device: the sections a kernel needs (docs/FORMAT.md,
 * sections 0 to 7), each uploaded as one buffer straight from the reader's
 * mapping, so that a kernel reaches any block of any list from the list's id:
 *
 *   arena        uint   every list's params and payload (ARENA)
 *   lists        uint4  descriptors {words, df, ext, max_score bits} (LISTS)
 *   codecs       uchar  codec id of each list (CODECS)
 *   block_last   uint   block table: 0, then last docid of each block (BLOCK_LAST)
 *   block_docs   uint   block table: docid payload endpoints (BLOCK_DOCS)
 *   block_freqs  uint   block table: frequency payload endpoints (BLOCK_FREQS)
 *   block_max    uchar  block table: quantized BM25 bounds (BLOCK_MAX)
 *   doclens      uint   tokens per document (DOCLENS)
 *
 * Block j of list L (descriptor D, P = tdm_idx_codec_nparams(codec)): its
 * docid words are arena[D.words + 2P + block_docs[D.ext + j] .. + block_docs[D.ext + j + 1]),
 * its base block_last[D.ext + j]; for a one-block list the docid words are
 * arena[D.words + 2P .. + D.ext) and the base 0. decode_jobs.h decodes them.
 *
 * Two modes (tdm_resident_opts). FULL: every section as above. CACHED (an
 * index larger than the memory allowed it, listcache.h): every section but
 * the arena is resident; the arena buffer is a list cache of a budgeted
 * size, `lists` is a device-side copy of the descriptors whose words point
 * into the cache (D.w: the list's span there; `spans` = 1 tells the decode
 * kernels) and whose df is 0 for a list not in the cache (a job on it is a
 * bad job). Before decoding, a caller holds its lists in the cache
 * (tdm_resident_acquire) and releases them once its commands are done.
 *
 * Uploads go through pinned staging buffers (CL_MEM_ALLOC_HOST_PTR, mapped)
 * on a discrete GPU, in chunks double-buffered by a thread of the upload;
 * straight from the mapping elsewhere.
 *
 * The copies run on the device's transfer queue and do not block: `ready`
 * is the event of the last one (the queue is in order), which every kernel
 * on the resident index waits for. Empty sections get a 4-byte buffer, so
 * every cl_mem is valid.
 *
 * Threads: after tdm_resident_upload returns the struct is read-only; any
 * number of threads may launch kernels on it and acquire lists of it (the
 * cache has its own lock). tdm_resident_release must not race with any
 * other use.
 */
#ifndef TDM_RESIDENT_RESIDENT_H
#define TDM_RESIDENT_RESIDENT_H

#include <stdint.h>

#include "index/reader.h"
#include "runtime/runtime.h"

typedef struct tdm_resident {
    tdm_device *dev;
    const tdm_ireader *r;   /* the index it came from (must outlive the struct) */
    cl_mem arena, lists, codecs, block_last, block_docs, block_freqs, block_max, doclens;
    uint64_t bytes;         /* device memory the buffers hold */
    uint32_t nlists;        /* descriptors (= terms) */
    uint32_t arena_words;
    uint32_t nentries;      /* block-table rows */
    uint32_t ndocs;
    cl_uint spans;          /* 1: descriptors carry their span (CACHED mode) */
    cl_event ready;         /* the upload's last copy (retained by the struct) */
    struct tdm_listcache *cache; /* CACHED mode's cache, else NULL */
    struct tdm_stager *stager;   /* pinned staging still copying, else NULL */
} tdm_resident;

enum tdm_resident_mode {
    TDM_RESIDENT_AUTO = 0, /* FULL when the index fits the budget, else CACHED */
    TDM_RESIDENT_FULL = 1,
    TDM_RESIDENT_CACHED = 2,
};

typedef struct tdm_resident_opts {
    int mode;               /* enum tdm_resident_mode */
    /* Device bytes the index may take (its sections, or the small sections
     * plus the cache). 0: the device's setting (engine option
     * device_memory, TANDEM_DEVICE_MEMORY); when that is 0 too, FULL needs
     * the index within the device's global memory and CACHED takes three
     * quarters of it (room for the queries' scratch). */
    uint64_t budget;
    int staging;            /* -1: pinned staging on discrete GPUs; 0: never; 1: always */
} tdm_resident_opts;

/* Device bytes the index needs resident: the sizes of sections 0 to 7
 * (an empty one counts 4). O(1). */
uint64_t tdm_resident_bytes_needed(const tdm_ireader *r);

/* Whether the index fits device d: TDM_ERR_DEVICE_MEMORY naming the index,
 * the device and both sizes when it needs more than the device's global
 * memory, or a section is larger than its largest buffer. */
int tdm_resident_check_fits(const tdm_ireader *r, const tdm_device *d, tdm_err *err);

/* Whether AUTO would hold the whole index on d (FULL): it fits the
 * device and its budget (d->settings->device_memory). A partitioned
 * search handle is chosen where it does not (docs/PARTITION.md). */
int tdm_resident_fits_full(const tdm_ireader *r, const tdm_device *d);

/* The same rule for an index not made yet, from its device sections'
 * sizes (size[0 .. 7], by enum tdm_idx_section): whether AUTO would hold
 * it whole on d. The partitioned handle's auto rule asks it of a shard's
 * estimated sizes (docs/PARTITION.md). */
int tdm_resident_fits_sizes(const uint64_t *size, const tdm_device *d);
/* The same beside `beside` bytes already resident on d (a split handle's
 * shard beside the whole index, docs/PARTITION.md): whether the sections
 * fit d's memory and budget with them, and each its largest buffer. */
int tdm_resident_fits_beside(const uint64_t *size, uint64_t beside, const tdm_device *d);

/* Creates the buffers on d and enqueues the copies (on d->xfer, or the
 * stager's queue) without waiting for them: out->ready completes when they
 * are done (kernels wait for it; a caller that wants the data there now
 * waits for it). AUTO mode: the whole index when it fits the device and
 * the budget (d->settings->device_memory), else a list cache. `r` must
 * stay open until out is released (the copies read its mapping; the job
 * table helpers and the cache read its descriptors). Fails cleanly
 * (nothing held, *out zeroed) with TDM_ERR_DEVICE_MEMORY when not even a
 * cache fits (sizes named), TDM_ERR_LIMIT for more than 2^32 - 2 lists. */
int tdm_resident_upload(const tdm_ireader *r, tdm_device *d, tdm_resident *out, tdm_err *err);

/* The same with options (NULL: all defaults, which is tdm_resident_upload).
 * FULL that does not fit: TDM_ERR_DEVICE_MEMORY as above. CACHED (or AUTO
 * that does not fit): TDM_ERR_DEVICE_MEMORY naming the sizes when the
 * budget does not hold the small sections and a cache of at least 256 bytes. */
int tdm_resident_upload_opts(const tdm_ireader *r, tdm_device *d, const tdm_resident_opts *o,
                             tdm_resident *out, tdm_err *err);

/* Waits for the copies (out->ready of the upload): TDM_OK, or their
 * failure. Accepts a zeroed struct. */
int tdm_resident_wait(const tdm_resident *res, tdm_err *err);

/* Waits for the copies, then releases the buffers. Accepts NULL and a
 * zeroed struct. */
void tdm_resident_release(tdm_resident *res);

#endif
