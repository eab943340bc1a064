/* GPU-BP's bit unpacking (bp.c's blocks): len values of w bits (0..32)
 * packed from bit 0 of `in`, value i from bit i * w, little-endian across
 * words. Reads exactly the block's ceil(len * w / 32) words and writes
 * exactly len values. The paths are named for test_codec_bp, which checks
 * them against each other. */
#ifndef TDM_CODEC_BP_UNPACK_H
#define TDM_CODEC_BP_UNPACK_H

#include <stdint.h>

/* The fastest path this CPU has, chosen at run time: AVX-512 VBMI, AVX2,
 * else scalar. */
void tdm_bp_unpack(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);

/* Straight C: a routine for each width, 32 values a step. */
void tdm_bp_unpack_scalar(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);

/* The AVX2 path: 1 with out written, 0 (nothing written) where the build or
 * the CPU has no AVX2. */
int tdm_bp_unpack_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);
/* The AVX-512 VBMI path, the same way. */
int tdm_bp_unpack_avx512(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);

/* Docid gaps unpacked and summed onto base: out[i] = base + gaps 0..i.
 * 0 where the values rise strictly from the base (gap 0 may be zero where
 * first_zero_ok: the list's first block); -1 where that fails or might (a
 * zero gap elsewhere, or base + len * (2^w - 1) past 2^32 - 1, so that a
 * sum could pass it), out then undefined: the caller takes its exact path. */
int tdm_bp_unpack_sum(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                      int first_zero_ok, uint32_t *out);
int tdm_bp_unpack_sum_scalar(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             int first_zero_ok, uint32_t *out);
/* As tdm_bp_unpack_sum through AVX2 (AVX-512), or 1 (nothing written)
 * without it. */
int tdm_bp_unpack_sum_avx2(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                           int first_zero_ok, uint32_t *out);
int tdm_bp_unpack_sum_avx512(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             int first_zero_ok, uint32_t *out);

/* bp_unpack_avx512.c's kernels, for bp_unpack.c: whether the CPU has
 * them; a block unpacked (1), or 0 (nothing written) for a width they
 * leave to others (0, 27, 29-32); gaps summed onto base as unpacked,
 * wrapping, *zero_gap set where one is zero (the first too). */
int tdm_bp_avx512_ok(void);
int tdm_bp_avx512_unpack(const uint32_t *in, uint32_t len, uint32_t w, uint32_t *out);
int tdm_bp_avx512_unpack_sum(const uint32_t *in, uint32_t len, uint32_t w, uint32_t base,
                             uint32_t *out, int *zero_gap);

#endif
