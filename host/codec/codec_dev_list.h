/* TESTS AND BENCHMARKS ONLY: the per-list device decode driver, which
 * uploads one encoded list into a handle of its own and decodes it, whole
 * or a chosen set of blocks, with its codec's kernel (codec_dev.h has the
 * kernel contract). The library's search path never calls it: it decodes
 * the resident index through resident/decode_jobs.h, many lists a launch.
 * The codec tests (tests/codec_cases.c, tests/test_decode_jobs.c) check the
 * kernels through it, and `tandem bench codecs` / `bench index` time them;
 * gather.h (random access, also tests and benchmarks only) builds on it.
 *
 * Events: an upload runs on the device's transfer queue; every decode waits
 * for it (and for the caller's wait list) through events, never by draining
 * a queue.
 *
 * Threads: after tdm_codec_dev_upload returns, a list is read-only: several
 * threads may decode it at once (kernels come from the device's pool; the
 * corruption flag is sticky and shared). tdm_codec_dev_free must not race
 * with any other use of the list. */
#ifndef TDM_CODEC_DEV_LIST_H
#define TDM_CODEC_DEV_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "codec_dev.h"

/* A list resident on one device. Fields are read-only for callers. */
typedef struct tdm_codec_dev_list {
    tdm_device *dev;
    const tdm_codec_ops *ops;
    int codec;
    int delta;
    uint32_t n, block_size, nblocks;
    size_t nwords;
    cl_mem words, offsets, bases, params, status;
    cl_event ready;        /* the upload's last copy: decodes wait for it */
    uint32_t bpg;          /* blocks per work-group on this device */
    size_t device_bytes;   /* bytes the handle holds on the device */
} tdm_codec_dev_list;

/* One decode launch. */
typedef struct tdm_codec_dev_job {
    cl_mem sel;        /* pairs (block id, output position); NULL: whole list */
    uint32_t njobs;    /* blocks to decode */
    cl_mem out;        /* output buffer */
    uint32_t out_cap;  /* values it holds */
} tdm_codec_dev_job;

/* Uploads `enc` to device `d` through its transfer queue, without waiting
 * for the device. Checks the structure first (tdm_encoded_validate and the
 * codec's check): TDM_ERR_CORRUPT if bad, TDM_ERR_UNSUPPORTED if the codec
 * has no device decoder, TDM_ERR_DEVICE_MEMORY (device named) if it does not
 * fit. `enc`'s arrays must stay valid and unchanged until out->ready
 * completes (a mapped index's do); *ev (if not NULL) gets that event too,
 * retained for the caller. On failure *out is left empty (safe to free). */
int tdm_codec_dev_upload_async(tdm_device *d, const tdm_encoded *enc, tdm_codec_dev_list *out,
                               cl_event *ev, tdm_err *err);

/* The same, returning once the list's copies are done (it waits for them
 * alone): `enc` is not referenced afterwards. */
int tdm_codec_dev_upload(tdm_device *d, const tdm_encoded *enc, tdm_codec_dev_list *out,
                         tdm_err *err);

/* Releases the device buffers (after the upload's copies). Accepts NULL and
 * empty handles. */
void tdm_codec_dev_free(tdm_codec_dev_list *l);

/* Decodes the whole list (blocks == NULL; nblocks ignored) or the listed
 * block ids (host array; any order, repeats allowed) concatenated in the
 * order given, as tdm_codec_decode_blocks does. Blocking: returns when the
 * values are in `out` (and host_out).
 *  out:      device buffer for the values (at least as many as decoded), or
 *            NULL to use a temporary one (then host_out should be set).
 *  host_out: if not NULL, the values are copied there and the list's
 *            corruption flag is checked: TDM_ERR_CORRUPT if the kernel found
 *            the payload bad.
 *  kernel_s: if not NULL, the kernel's device time (event profiling).
 * *nvalues (if not NULL) gets the number of values decoded.
 * Block ids out of range: TDM_ERR_INVALID_ARG. */
int tdm_codec_dev_decode(tdm_codec_dev_list *l, const uint32_t *blocks, size_t nblocks,
                         cl_mem out, uint32_t *host_out, size_t *nvalues, double *kernel_s,
                         tdm_err *err);

/* Device-resident selection: `sel` holds njobs pairs (block id, output
 * position) produced on the device (e.g. by block selection); block i's
 * values go to out[pos .. pos + its length), out holding out_cap values.
 * Jobs out of range are skipped and flag the list (tdm_codec_dev_status);
 * buffers smaller than njobs pairs or out_cap values: TDM_ERR_INVALID_ARG.
 * Non-blocking: the kernel runs after the nwait events of `wait` and the
 * list's upload; *ev (if not NULL) gets its event, which the caller
 * releases (NULL when njobs is 0). */
int tdm_codec_dev_decode_sel(tdm_codec_dev_list *l, cl_mem sel, uint32_t njobs, cl_mem out,
                             uint32_t out_cap, cl_uint nwait, const cl_event *wait,
                             cl_event *ev, tdm_err *err);

/* Enqueues one decode launch of `job` over `groups` work-groups (0: the
 * contract's count; tests and benchmarks pass others to check the kernels'
 * loop). No buffer checks: callers above check them. Non-blocking, as
 * tdm_codec_dev_decode_sel. */
int tdm_codec_dev_launch(tdm_codec_dev_list *l, const tdm_codec_dev_job *job, size_t groups,
                         cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err);

/* The caller's wait list (nwait events) plus the list's upload, in a
 * malloc'd *all of *n events (the caller frees it), for drivers of other
 * kernels on a resident list (gather.c). */
int tdm_codec_dev_wait_list(const tdm_codec_dev_list *l, cl_uint nwait, const cl_event *wait,
                            cl_event **all, cl_uint *n, tdm_err *err);

/* Reads the list's sticky corruption flag: TDM_OK, or TDM_ERR_CORRUPT if
 * any kernel so far found the payload bad, TDM_ERR_INVALID_ARG if one was
 * given an out-of-range job. Blocking. With nwait = 0 it waits for
 * everything enqueued on the device's compute queue; else for the wait
 * list only (the kernels whose verdict is wanted). */
int tdm_codec_dev_status(tdm_codec_dev_list *l, cl_uint nwait, const cl_event *wait,
                         tdm_err *err);

#endif
