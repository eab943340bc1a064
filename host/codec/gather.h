/* TESTS AND BENCHMARKS ONLY (the search path never gathers): random
 * access on a device, value i of a resident list (codec_dev_list.h) for a
 * batch of positions, one work-item each, for the codecs whose format reads
 * a value without decoding its block: GPU-BP (one field at the block's
 * width), partitioned Elias-Fano (select on the partition's high part) and PForDelta (a slot plus, for an exception, its
 * high part; a docid also sums the slots before it in its block), as Ding
 * et al. fetch the frequencies of candidate documents for scoring.
 *
 * The kernel contract (each codec names its kernel in
 * tdm_codec_dev_ops.get_kernel; cl/codec_dev.cl: TDM_GET_ARGS):
 *   words, offsets, bases, params, uint nblocks, uint n, uint delta,
 *   __global const uint *idx, uint count, __global uint *out,
 *   __global uint *status
 * launched over count work-items rounded up to groups of TDM_WG_SIZE.
 * out[q] = value idx[q] for q < count; an index >= n gives 0 and flags the
 * list's status (bad job), a payload found corrupt flags it corrupt.
 *
 * Threads: as the list handle (codec_dev.h): any number at once.
 */
#ifndef TDM_CODEC_GATHER_H
#define TDM_CODEC_GATHER_H

#include <stddef.h>
#include <stdint.h>

#include "codec_dev_list.h"

/* Whether codec `codec` has random access on a device. */
int tdm_codec_gather_supported(int codec);

/* Enqueues the gather of `count` positions from device buffer idx into
 * device buffer out (count values each) after the wait list and the list's
 * upload. Non-blocking; *ev (if not NULL) gets the kernel's event, which the
 * caller releases. TDM_ERR_UNSUPPORTED for a codec without a gather kernel. */
int tdm_codec_gather_enqueue(tdm_codec_dev_list *l, cl_mem idx, uint32_t count, cl_mem out,
                             cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err);

/* Blocking convenience with host arrays: out[q] = value idx[q]. Positions
 * past the list: TDM_ERR_INVALID_ARG before anything runs; a corrupt
 * payload found by the kernel: TDM_ERR_CORRUPT. */
int tdm_codec_gather(tdm_codec_dev_list *l, const uint32_t *idx, size_t count, uint32_t *out,
                     tdm_err *err);

#endif
