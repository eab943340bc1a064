/* Shared cases and checks for every codec test (codec_cases.c): edge-case
 * lists, reference round trips, device decoding against the reference on
 * every device (and in other work-group geometries), random access, and
 * corrupt payloads. Every check fails the running cmocka test. */
#ifndef TDM_TEST_CODEC_CASES_H
#define TDM_TEST_CODEC_CASES_H

#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/codec_dev_list.h"
#include "codec/gather.h"
#include "runtime/runtime.h"
#include "testutil.h"

typedef struct ccase_list {
    char name[64];
    uint32_t *v;
    size_t n;
    int delta;
} ccase_list;

#define CCASE_MAX_LISTS 96
#define CCASE_MAXDOC UINT32_C(0xFFFFFFFF)

/* Fails the test with `what` and the error's message unless rc is TDM_OK. */
void ccase_ok(int rc, const tdm_err *err, const char *what);

/* Appends an empty list of n values named "kind/n" to ls (at most
 * CCASE_MAX_LISTS); the caller fills v, ccase_lists_free frees it. */
ccase_list *ccase_add(ccase_list *ls, size_t *count, const char *kind, size_t n, int delta);

/* A strictly increasing docid list of n values: gaps in [lo, hi], starting
 * at `first`, clipped so that no value passes 2^32 - 1 (n must fit). */
void ccase_docids(tdm_rng *r, uint32_t *v, size_t n, uint32_t first, uint32_t lo,
                  uint32_t hi);

/* Gaps of mixed bit widths (1 to 2^31) within a 2^32 - 1 budget, one of
 * them exactly 2^31, starting at docid 0. */
void ccase_mixed(tdm_rng *r, uint32_t *v, size_t n);

/* Frequencies: mostly small with a few large ones, or (wide) of every bit
 * width up to 32. */
void ccase_freq(tdm_rng *r, uint32_t *v, size_t n, int wide);

/* Frees the values of the first `count` lists. */
void ccase_lists_free(ccase_list *ls, size_t count);

/* Encodes l with `codec` into enc (the caller frees it); fails the test on
 * an error. */
void ccase_encode(int codec, const ccase_list *l, tdm_encoded *enc);

/* One list through the reference and on every device of `e`. */
void ccase_check_everywhere(tdm_engine *e, int codec, const ccase_list *l, tdm_rng *r);

/* The edge-case lists (sizes 0, 1, block - 1, block, block + 1, a few
 * blocks and 10^6; docids with gaps from 1 to 2^31, up to 2^32 - 1, equal
 * gaps, frequencies) through the reference decoder: whole lists, block
 * selections, random access. */
void ccase_run_host(int codec, uint64_t seed);

/* Every list on every device, then on each device again with kernels built
 * for work-groups of 32 and 8, and with each of the codec's `extra` build
 * variants (NULL-terminated; may be NULL) at its own size and at 8. */
void ccase_run_devices_with(int codec, uint64_t seed, const char *const *extra);

/* ccase_run_devices_with and no extra build variants. */
void ccase_run_devices(int codec, uint64_t seed);

/* The reference decoder must call block b of `enc` corrupt. */
void ccase_expect_ref_corrupt(const tdm_encoded *enc, uint32_t b, const char *what);

/* Every device decodes a corrupt list without failing in any other way than
 * TDM_ERR_CORRUPT (whether it notices is up to the format); out-of-bounds
 * access shows under Oclgrind and ASan. Returns how many devices noticed. */
int ccase_device_survives(tdm_engine *e, const tdm_encoded *enc, const char *what);

/* Random bit flips in a valid payload: the reference decoder never crashes
 * or reads out of bounds (ASan), and neither do the kernels (Oclgrind). */
void ccase_fuzz(tdm_engine *e, int codec, const ccase_list *l, int rounds, uint64_t seed);

/* ccase_fuzz on a docid list of mixed gaps and a list of wide frequencies,
 * a few blocks each. */
void ccase_fuzz_lists(tdm_engine *e, int codec, uint64_t seed);

/* Docids that do not increase are refused. */
void ccase_refuses_unsorted(int codec);

#endif
