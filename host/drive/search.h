/* The device drivers (host/drive): a planned query run on one device
 * (search_dev.c), many in one device batch (search_batch_dev.c, ranked
 * AND's search_batch_and.c), grouped into batches (search_batch.c); the
 * scratch pools and buffers they share (search_buf.c). The plan headers
 * come with it: the handle, the prepared query, the plan, the profile. */
#ifndef TDM_DRIVE_SEARCH_H
#define TDM_DRIVE_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include "common/error.h"
#include "plan/search_handle.h"
#include "plan/search_plan.h"
#include "plan/search_prepare.h"
#include "plan/search_prof.h"
#include "plan/sprep.h"
#include "runtime/runtime.h"

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

/* For a kernel that reads the resident index itself (the compressed
 * variant): a marker on q (in order) that waits for the index's upload and
 * the nwait <= 1 events of `wait` (a list cache's), those not complete yet
 * (nothing enqueued when all are). */
int tdm_search_after_index(const tdm_sdev *sd, cl_command_queue q, cl_uint nwait,
                           const cl_event *wait, tdm_err *err);

/* Runs algorithm `salg` (TDM_SALG_*) for p on device sd with plan pl; out->keys
 * must hold k entries. Blocking. */
int tdm_search_dev_run(const tdm_sdev *sd, const tdm_sprep *p, uint32_t ndocs,
                       const tdm_splan *pl, int salg, uint32_t k, tdm_sout *out, tdm_err *err);

/* Whether d's runs take one host thread and its one queue at a time,
 * whatever the settings (search_dev.c): PoCL's basic driver, which one
 * host thread drives (runtime/serial.h), and Oclgrind, which aborts when
 * two threads' or queues' kernels run at once. */
int tdm_search_dev_one_thread(const tdm_device *d);

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

/* Work-items of a select or merge group on d (search_dev.c): wide on a GPU,
 * where each pass of the radix select loops over the candidates; within
 * each such kernel's CL_KERNEL_WORK_GROUP_SIZE on d. */
size_t tdm_search_merge_local(tdm_device *d);
/* Whether the small-k kernels tdm_search_select_small and
 * tdm_search_merge_small (k <= 16, few keys) take n keys (a group's) at k on
 * d in groups of wg; else tdm_search_select and tdm_search_merge. */
int tdm_search_small_fits(const tdm_device *d, size_t wg, uint32_t k, uint64_t n);

/* A batch's pinned staging (the planner's batch_upload): host memory the
 * device reads directly (CL_MEM_ALLOC_HOST_PTR, mapped once), into which
 * the batch's host tables are copied, so that a non-blocking write from it
 * returns at once instead of copying pageable memory while the queue runs
 * other batches' kernels. tdm_spinned_fit makes room for bytes in all
 * (grown when too small, the old mapping released) and empties it;
 * tdm_spinned_put copies bytes of src into it (at a 64-byte boundary, within
 * what fit made room for) and returns the copy; tdm_spinned_free unmaps and
 * releases it. Its owner's: the copies must not be overwritten before the
 * writes reading them are done (a batch's pool entry, search_batch_dev.c). */
typedef struct tdm_spinned {
    cl_mem m;
    unsigned char *host; /* its mapping */
    size_t cap, used;
} tdm_spinned;
/* The bytes tdm_spinned_put takes for bytes of a table (rounded up to 64). */
size_t tdm_spinned_size(size_t bytes);
int tdm_spinned_fit(tdm_device *d, tdm_spinned *s, size_t bytes, tdm_err *err);
const void *tdm_spinned_put(tdm_spinned *s, const void *src, size_t bytes);
void tdm_spinned_free(tdm_device *d, tdm_spinned *s);

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
