/* GPU-BP's bit unpacking (bp.c's blocks): len values of w bits (0..32)
 * packed from bit 0 of `in`, value i from bit i * w, little-endian across
 * words. Reads exactly the block's ceil(len * w / 32) words and writes
 * exactly len values. The paths are named for test_codec_bp, which checks
 * them against each other. */
#ifndef TDM_CODEC_BP_UNPACK_H
#define TDM_CODEC_BP_UNPACK_H

#include <stdint.h>

/* The fastest path this CPU has (AVX2 where the CPU has it, chosen at run
 * time; the scalar one elsewhere). */
void tdm_bp_unpack(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);

/* Straight C: a routine for each width, 32 values a step. */
void tdm_bp_unpack_scalar(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);

/* The AVX2 path: 1 with out written, 0 (nothing written) where the build or
 * the CPU has no AVX2. */
int tdm_bp_unpack_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);

/* Docid gaps unpacked and summed onto base: out[i] = base + gaps 0..i.
 * 0 where the values rise strictly from the base (gap 0 may be zero where
 * first_zero_ok: the list's first block); -1 where that fails or might (a
 * zero gap elsewhere, or base + len * (2^w - 1) past 2^32 - 1, so that a
 * sum could pass it), out then undefined: the caller takes its exact path. */
int tdm_bp_unpack_sum(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                      int first_zero_ok, uint32_t *out);
int tdm_bp_unpack_sum_scalar(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             int first_zero_ok, uint32_t *out);
/* As tdm_bp_unpack_sum through AVX2, or 1 (nothing written) without it. */
int tdm_bp_unpack_sum_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                           int first_zero_ok, uint32_t *out);

#endif
