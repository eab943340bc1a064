/* Random access on a device: value i of a resident list (codec_dev.h) for a
 * batch of positions, one work-item each, for the codecs whose format reads
 * a value without decoding its block: GPU-BP (one field at the block's
 * width), partitioned Elias-Fano (select on the partition's high part) and PForDelta (a slot plus, for an exception, its
 * high part; a docid also sums the slots before it in its block), as Ding
 * et al. fetch the frequencies of candidate documents for scoring.
 *
 * The kernel contract (tdm_bp128_get, tdm_bp256_get, tdm_pef_get, tdm_pfor_get,
 * tdm_newpfd128_get):
 *   words, offsets, bases, params, uint nblocks, uint n, uint delta,
 *   __global const uint *idx, uint count, __global uint *out,
 *   __global uint *status
 * out[q] = value idx[q] for q < count; an index >= n gives 0 and flags the
 * list's status (bad job), a payload found corrupt flags it corrupt.
 *
 * Threads: as the list handle (one thread at a time).
 */
#ifndef TDM_CODEC_GATHER_H
#define TDM_CODEC_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include "codec_dev.h"

/* The gather kernel's name for a codec id, or NULL where there is none. */
const char *tdm_codec_gather_kernel(int codec);

/* Enqueues the gather of `count` positions from device buffer idx into
 * device buffer out (count values each). Non-blocking; *ev (if not NULL)
 * gets the kernel's event, which the caller releases. TDM_ERR_UNSUPPORTED
 * for a codec without a gather kernel. */
int tdm_codec_gather_enqueue(tdm_codec_dev_list *l, cl_mem idx, uint32_t count, cl_mem out,
                             cl_event *ev, tdm_err *err);

/* Blocking convenience with host arrays: out[q] = value idx[q]. Positions
 * past the list: TDM_ERR_INVALID_ARG before anything runs; a corrupt
 * payload found by the kernel: TDM_ERR_CORRUPT. */
int tdm_codec_gather(tdm_codec_dev_list *l, const uint32_t *idx, size_t count, uint32_t *out,
                     tdm_err *err);

#endif
