/* Host-to-device copies through pinned staging buffers: pageable memory
 * (a file's mapping) reaches a discrete GPU at a fraction of the bus's
 * speed, because the driver stages it through its own small pinned buffer
 * and waits for each piece; here worker threads copy chunks into buffers
 * made with CL_MEM_ALLOC_HOST_PTR and mapped once (pinned on such
 * devices), two per thread, each refilled while the other's copy runs on
 * a queue of the stager's own (the device's transfer queue may hold
 * commands that wait for the upload).
 *
 * TANDEM_STAGING=THREADS[,CHUNK_MB] overrides the 4 threads and 1 MB
 * buffers (for measurements; a bad value fails the upload, naming it).
 *
 * Threads: a stager belongs to the thread that started it; its workers
 * only enqueue on the stager's queue. */
#ifndef TDM_RESIDENT_STAGER_H
#define TDM_RESIDENT_STAGER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "runtime/runtime.h"

typedef struct tdm_stage_copy {
    cl_mem dst;           /* written from offset 0 */
    const void *src;      /* must stay valid until the copies are done */
    uint64_t bytes;
} tdm_stage_copy;

typedef struct tdm_stager tdm_stager;

/* Whether uploads to d are staged by default: a GPU whose memory is not
 * the host's (CL_DEVICE_HOST_UNIFIED_MEMORY false). */
int tdm_stager_wanted(const tdm_device *d);

/* Starts copies[0..n) (the array is copied) and returns at once: *ready
 * is a user event of d's context that completes when every copy has
 * (negative status if one failed: commands waiting for it fail too); the
 * caller releases it. *out is finished with tdm_stager_finish. */
int tdm_stager_start(tdm_device *d, const tdm_stage_copy *copies, size_t n, cl_event *ready,
                     tdm_stager **out, tdm_err *err);

/* Where the time of a staged upload went (tdm_stager_stats_get, once the
 * ready event has completed): for measurements. */
typedef struct tdm_stager_stats {
    double setup_s;     /* the slowest worker's staging buffers made and mapped */
    double copy_s;      /* memcpy into the staging buffers, summed over workers */
    double wait_s;      /* waits for a staging buffer's last copy, summed */
    unsigned workers;
    uint64_t chunk;     /* bytes a staging buffer holds */
} tdm_stager_stats;

/* Copies the stats so far (all of them once `ready` has completed). Any
 * thread; s NULL gives zeros. */
void tdm_stager_stats_get(tdm_stager *s, tdm_stager_stats *out);

/* Waits for the workers and frees the staging buffers: TDM_OK, or the
 * first failure (in err). Accepts NULL. */
int tdm_stager_finish(tdm_stager *s, tdm_err *err);

#endif
