/* Device decoding of encoded lists, shared by every codec.
 *
 * A list is uploaded once (tdm_codec_dev_upload) into a resident handle that
 * holds its payload words, endpoints (offsets), block bases and params on one
 * device. It is then decoded, whole or a chosen set of blocks, into a device
 * buffer (and optionally copied back), to docids (delta = 1: each block's
 * gaps summed inside the kernel from its stored base) or to plain values
 * (delta = 0). A codec contributes only its kernel and a tdm_codec_dev_ops
 * descriptor (hung on tdm_codec_ops.dev); this driver does buffers, the block
 * selection, launch geometry, timing and errors.
 *
 * The kernel contract. Every codec kernel takes these arguments, in order
 * (cl/codec_dev.cl has helpers that read them):
 *   0 __global const uint *words     payload
 *   1 __global const uint *offsets   [nblocks + 1] word offset of each block
 *   2 __global const uint *bases     [nblocks] value before each block
 *   3 __global const uint *params    [TDM_CODEC_MAX_PARAMS] codec-wide parameters
 *   4 uint nblocks                   blocks in the list
 *   5 uint n                         values in the list
 *   6 uint delta                     1: docids (sum gaps from bases), 0: values
 *   7 __global const uint *sel       use_sel: pairs (block id, output position)
 *   8 uint njobs                     blocks this launch decodes
 *   9 uint use_sel                   0: job k is block k, written at k * block size
 *  10 __global uint *out             decoded values
 *  11 uint out_cap                   values `out` holds: writes beyond are dropped
 *  12 __global uint *status          atomic_or'ed non-zero on corrupt input
 * and is launched with get_local_size(0) = TDM_WG_SIZE = tdm_device.wg_size
 * and ceil(njobs / blocks_per_group) work-groups; work-group g decodes jobs
 * [g * bpg, (g + 1) * bpg). A codec that sets grid_stride loops instead
 * (cl/codec_dev.cl: TDM_CODEC_FOR_JOBS), and the driver caps its groups
 * (tdm_codec_dev_groups_per_cu). A job whose block id is out of range or whose
 * output does not fit sets status and writes nothing; a kernel never reads
 * outside its block's words.
 *
 * Threads: a tdm_codec_dev_list is used by one thread at a time (it shares
 * the device's in-order queue).
 */
#ifndef TDM_CODEC_DEV_H
#define TDM_CODEC_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "runtime/runtime.h"

struct tdm_codec_dev_list;
struct tdm_codec_dev_job;

/* What a codec registers for its device decoder (tdm_codec_ops.dev). */
typedef struct tdm_codec_dev_ops {
    /* The kernel's name in kernels.cl; it follows the contract above. */
    const char *kernel;
    /* Blocks one work-group of wg_size work-items decodes (>= 1). NULL: 1. */
    uint32_t (*blocks_per_group)(size_t wg_size, uint32_t block_size);
    /* Optional structural check at upload, beyond tdm_encoded_validate, that
     * the kernel then relies on (e.g. every block's word count fits its
     * length). TDM_ERR_CORRUPT with a message when it fails. NULL: none. */
    int (*check)(const tdm_encoded *enc, tdm_err *err);
    /* Optional launcher that replaces the standard one (several kernels, other
     * geometry). It enqueues on l->dev->queue and returns in *ev the event of
     * its last kernel (profiling spans first..last when first_ev is set).
     * NULL: the standard launch of `kernel`. */
    int (*launch)(struct tdm_codec_dev_list *l, const struct tdm_codec_dev_job *job,
                  cl_event *first_ev, cl_event *ev, tdm_err *err);
    /* 1: the kernel loops over its jobs (grid-stride), so any number of
     * work-groups decodes them all and the driver launches fewer. */
    int grid_stride;
} tdm_codec_dev_ops;

/* A list resident on one device. Fields are read-only for callers. */
typedef struct tdm_codec_dev_list {
    tdm_device *dev;
    const tdm_codec_ops *ops;
    int codec;
    int delta;
    uint32_t n, block_size, nblocks;
    size_t nwords;
    cl_mem words, offsets, bases, params, status;
    cl_kernel kernel;      /* the codec's kernel, created at upload */
    uint32_t bpg;          /* blocks per work-group on this device */
    size_t device_bytes;   /* bytes the handle holds on the device */
} tdm_codec_dev_list;

/* One decode launch: what the standard launcher (and a custom one) gets. */
typedef struct tdm_codec_dev_job {
    cl_mem sel;        /* pairs (block id, output position); NULL: whole list */
    uint32_t njobs;    /* blocks to decode */
    cl_mem out;        /* output buffer */
    uint32_t out_cap;  /* values it holds */
} tdm_codec_dev_job;

/* Uploads `enc` to device `d` (blocking). Checks the structure first
 * (tdm_encoded_validate and the codec's check): TDM_ERR_CORRUPT if bad,
 * TDM_ERR_UNSUPPORTED if the codec has no device decoder,
 * TDM_ERR_DEVICE_MEMORY (device named) if it does not fit. On failure *out is
 * left empty (safe to free). `enc` is not referenced afterwards. */
int tdm_codec_dev_upload(tdm_device *d, const tdm_encoded *enc, tdm_codec_dev_list *out,
                         tdm_err *err);

/* Releases the device buffers and kernel. Accepts NULL and empty handles. */
void tdm_codec_dev_free(tdm_codec_dev_list *l);

/* Decodes the whole list (blocks == NULL; nblocks ignored) or the listed
 * block ids (host array; any order, repeats allowed) concatenated in the
 * order given, as tdm_codec_decode_blocks does.
 *  out:      device buffer for the values (at least as many as decoded), or
 *            NULL to use a temporary one (then host_out should be set).
 *  host_out: if not NULL, the values are copied there (blocking) and the
 *            list's corruption flag is checked: TDM_ERR_CORRUPT if the kernel
 *            found the payload bad.
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
 * Non-blocking: enqueues and returns; *ev (if not NULL) gets the kernel's
 * event, which the caller releases. */
int tdm_codec_dev_decode_sel(tdm_codec_dev_list *l, cl_mem sel, uint32_t njobs, cl_mem out,
                             uint32_t out_cap, cl_event *ev, tdm_err *err);

/* Reads the list's sticky corruption flag (blocking): TDM_OK, or
 * TDM_ERR_CORRUPT if any kernel so far found the payload bad or was given an
 * out-of-range job. */
int tdm_codec_dev_status(tdm_codec_dev_list *l, tdm_err *err);

/* ---- helpers for codecs */

/* Blocks per work-group for kernels built on cl/codec_dev.cl's geometry
 * (TDM_CODEC_VPT: max(4, block / wg) values per work-item): wg * vpt / block,
 * at least 1. Fits tdm_codec_dev_ops.blocks_per_group. */
uint32_t tdm_codec_dev_bpg_vpt(size_t wg_size, uint32_t block_size);
/* The same for the wide geometry (TDM_WIDE_VPT: max(8, block / wg) values per
 * work-item) of every codec but RAW. */
uint32_t tdm_codec_dev_bpg_wide(size_t wg_size, uint32_t block_size);
/* Work-groups a compute unit gets at most for grid-stride codecs: 32, or
 * TANDEM_CODEC_GROUPS_PER_CU from the environment (a tuning knob; 0: no cap). */
size_t tdm_codec_dev_groups_per_cu(void);


/* Sets the 13 standard arguments of kernel k for `job` on list l. */
int tdm_codec_dev_set_args(tdm_codec_dev_list *l, cl_kernel k, const tdm_codec_dev_job *job,
                           tdm_err *err);
/* Enqueues k over ceil(njobs / bpg) work-groups of l->dev->wg_size (capped
 * for grid-stride codecs: tdm_codec_dev_groups_per_cu). */
int tdm_codec_dev_enqueue(tdm_codec_dev_list *l, cl_kernel k, uint32_t njobs, uint32_t bpg,
                          cl_event *ev, tdm_err *err);

#endif
