/* Device decoding of encoded lists, shared by every codec: what a codec
 * registers (tdm_codec_dev_ops, hung on tdm_codec_ops.dev: its kernels and
 * launch geometry) and the kernel contract every decode kernel follows.
 * A list decodes to docids (delta = 1: each block's gaps summed inside the
 * kernel from its stored base) or to plain values (delta = 0).
 *
 * The decode kernel contract. Every codec's decode kernel takes these
 * arguments, in order (cl/codec_dev.cl: TDM_CODEC_ARGS):
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
 *  12 __global uint *status          atomic_or'ed: 1 corrupt payload, 2 bad job
 * It is launched with get_local_size(0) = TDM_WG_SIZE = tdm_device.wg_size
 * and min(ceil(njobs / bpg), compute units x codec_groups_per_cu)
 * work-groups, bpg = ops->blocks_per_group(wg_size, block size). Every kernel
 * loops over the launch's jobs (cl/codec_dev.cl: TDM_CODEC_FOR_JOBS_TPB): a
 * work-group takes bpg consecutive jobs a round and strides by all groups,
 * so any number of groups decodes every job. A job whose block id is out of
 * range or whose output does not fit sets status bit 2 and writes nothing; a
 * kernel never reads outside its block's words.
 *
 * The random-access (gather) kernel contract: gather.h.
 *
 * The library decodes through resident/decode_jobs.h (many lists a launch).
 * The per-list driver that uploads and decodes one list at a time
 * (tdm_codec_dev_list) is for the tests and `tandem bench`: codec_dev_list.h.
 */
#ifndef TDM_CODEC_DEV_H
#define TDM_CODEC_DEV_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "layout.h"
#include "runtime/runtime.h"

/* What a codec registers for its device decoder (tdm_codec_ops.dev). */
typedef struct tdm_codec_dev_ops {
    /* The decode kernel's name in kernels.cl; it follows the contract above. */
    const char *kernel;
    /* The random-access kernel's name (gather.h has its contract), or NULL
     * where the format has no random access on a device. */
    const char *get_kernel;
    /* Blocks one work-group of wg_size work-items decodes a round (>= 1). */
    uint32_t (*blocks_per_group)(size_t wg_size, uint32_t block_size);
    /* Optional structural check at upload, beyond tdm_encoded_validate, that
     * the kernel then relies on (e.g. every block's word count fits its
     * length). TDM_ERR_CORRUPT with a message when it fails. NULL: none. */
    int (*check)(const tdm_encoded *enc, tdm_err *err);
} tdm_codec_dev_ops;

/* ---- helpers for codecs */

/* Blocks per work-group for kernels built on cl/codec_dev.cl's geometry
 * (TDM_CODEC_VPT: max(4, block / wg) values per work-item): wg * vpt / block,
 * at least 1. Fits tdm_codec_dev_ops.blocks_per_group. */
uint32_t tdm_codec_dev_bpg_vpt(size_t wg_size, uint32_t block_size);
/* The same for the wide geometry (TDM_WIDE_VPT: max(8, block / wg) values per
 * work-item) of every codec but RAW. */
uint32_t tdm_codec_dev_bpg_wide(size_t wg_size, uint32_t block_size);
/* Work-groups a compute unit gets at most: the engine's codec_groups_per_cu
 * setting (option or TANDEM_CODEC_GROUPS_PER_CU; 32 by default, or with no
 * settings). */
size_t tdm_codec_dev_groups_per_cu(const tdm_device *d);

#endif
