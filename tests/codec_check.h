/* Shared checks for the codec tests (header-only, static): encode a list,
 * compare the reference decoder, random access and the device decoder on
 * every device of the engine, for whole lists and random block selections. */
#ifndef TDM_TEST_CODEC_CHECK_H
#define TDM_TEST_CODEC_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/codec_dev.h"
#include "runtime/runtime.h"
#include "testutil.h"

/* A strictly increasing docid list of n values: gaps in [lo, hi], starting at
 * `first`, clipped so that no value passes 2^32-1 (n must fit). */
static uint32_t *cc_docids(tdm_rng *r, size_t n, uint32_t first, uint32_t lo, uint32_t hi)
{
    uint32_t *v = malloc(n ? n * 4 : 4);
    uint64_t x = first;
    for (size_t i = 0; i < n; i++) {
        v[i] = (uint32_t)x;
        if (i + 1 == n)
            break;
        uint64_t room = UINT32_MAX - x - (n - 2 - i); /* the rest need 1 each */
        uint64_t g = tdm_rng_range(r, lo, hi);
        x += g > room ? room : g;
    }
    return v;
}

/* n values drawn from [0, 2^bits) (frequencies: delta = 0). */
static uint32_t *cc_values(tdm_rng *r, size_t n, unsigned bits)
{
    uint32_t *v = malloc(n ? n * 4 : 4);
    for (size_t i = 0; i < n; i++)
        v[i] = bits >= 32 ? tdm_rng_u32(r) : tdm_rng_u32(r) & ((1u << bits) - 1u);
    return v;
}

static void cc_fail_if(int rc, const tdm_err *err, const char *what)
{
    if (rc != TDM_OK)
        fail_msg("%s: %s (%d)", what, tdm_err_msg(err), rc);
}

/* Device decode of the whole list and of random block selections equals the
 * reference, on every device. */
static void cc_check_device(tdm_engine *e, const tdm_encoded *enc, const uint32_t *want,
                            tdm_rng *r)
{
    tdm_err err = {0};
    size_t n = enc->n;
    uint32_t *got = malloc((n + 8) * 4);
    for (int d = 0; d < tdm_engine_device_count(e); d++) {
        tdm_codec_dev_list l;
        cc_fail_if(tdm_codec_dev_upload(tdm_engine_device(e, d), enc, &l, &err), &err,
                   "upload");
        memset(got, 0xab, (n + 8) * 4);
        size_t nv = 0;
        double ks = -1;
        cc_fail_if(tdm_codec_dev_decode(&l, NULL, 0, NULL, got, &nv, &ks, &err), &err,
                   "decode");
        assert_int_equal(nv, n);
        assert_true(ks >= 0);
        if (n && memcmp(got, want, n * 4) != 0) {
            size_t i = 0;
            while (got[i] == want[i])
                i++;
            fail_msg("%s on device %d, n=%zu delta=%d: value %zu is %u, want %u",
                     l.ops->name, d, n, enc->delta, i, got[i], want[i]);
        }
        /* Random selections: repeats and any order, the last block included. */
        for (int round = 0; round < 3 && enc->nblocks; round++) {
            size_t k = 1 + tdm_rng_range(r, 0, enc->nblocks < 40 ? enc->nblocks : 40);
            uint32_t *ids = malloc(k * 4), *ref = malloc((k * enc->block_size + 1) * 4),
                     *dev = malloc((k * enc->block_size + 1) * 4);
            for (size_t i = 0; i < k; i++)
                ids[i] = i == 0 && round == 0 ? enc->nblocks - 1
                                              : tdm_rng_range(r, 0, enc->nblocks - 1);
            cc_fail_if(tdm_codec_decode_blocks(enc, ids, k, ref, &err), &err, "ref blocks");
            cc_fail_if(tdm_codec_dev_decode(&l, ids, k, NULL, dev, &nv, NULL, &err), &err,
                       "decode blocks");
            assert_memory_equal(dev, ref, nv * 4);
            free(ids);
            free(ref);
            free(dev);
        }
        tdm_codec_dev_free(&l);
    }
    free(got);
    tdm_err_clear(&err);
}

/* Encodes values with codec `id`; checks the reference decoder, random access
 * and every device against the input. */
static void cc_check_list(tdm_engine *e, int id, const uint32_t *values, size_t n, int delta,
                          tdm_rng *r)
{
    tdm_err err = {0};
    tdm_encoded enc;
    cc_fail_if(tdm_codec_encode(id, values, n, delta, &enc, &err), &err, "encode");
    uint32_t *ref = malloc((n + 1) * 4);
    cc_fail_if(tdm_codec_decode(&enc, ref, &err), &err, "reference decode");
    assert_memory_equal(ref, values, n * 4);
    const tdm_codec_ops *ops = tdm_codec_by_id(id);
    for (int k = 0; ops->get && n && k < 50; k++) {
        uint32_t i = k == 0 ? (uint32_t)n - 1 : tdm_rng_range(r, 0, (uint32_t)n - 1), v;
        cc_fail_if(ops->get(&enc, i, &v, &err), &err, "get");
        assert_int_equal(v, values[i]);
    }
    if (e)
        cc_check_device(e, &enc, values, r);
    free(ref);
    tdm_encoded_free(&enc);
    tdm_err_clear(&err);
}

/* The edge-case suite every codec passes: sizes around its block, gap ranges
 * from 1 to 2^31, all-equal gaps, docids from 0 and up to 2^32-1, and
 * frequencies. */
static void cc_suite(tdm_engine *e, int id, uint64_t seed)
{
    const tdm_codec_ops *ops = tdm_codec_by_id(id);
    assert_non_null(ops);
    tdm_rng r;
    tdm_rng_seed(&r, seed);
    size_t B = ops->block_size, big = tdm_test_small() ? 3 * B + 17 : 1000000;
    size_t sizes[] = {0, 1, B - 1, B, B + 1, 2 * B + 3, big};
    struct { uint32_t lo, hi; } gaps[] = {{1, 1}, {1, 20}, {1, 1u << 12}, {1, 1u << 20},
                                         {1u << 30, 1u << 31}, {7, 7}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (size_t g = 0; g < sizeof gaps / sizeof *gaps; g++) {
            size_t n = sizes[s];
            if (gaps[g].lo >= (1u << 30) && n > 4096)
                n = 4096; /* big gaps fill 2^32 quickly: the clip keeps them valid */
            uint32_t *v = cc_docids(&r, n, g % 2 ? 0 : tdm_rng_range(&r, 0, 1000), gaps[g].lo,
                                    gaps[g].hi);
            cc_check_list(e, id, v, n, 1, &r);
            free(v);
        }
        unsigned bits[] = {0, 1, 5, 13, 32};
        for (size_t k = 0; k < sizeof bits / sizeof *bits; k++) {
            uint32_t *v = cc_values(&r, sizes[s], bits[k]);
            cc_check_list(e, id, v, sizes[s], 0, &r);
            free(v);
        }
    }
    /* The largest docid, and a list that ends there after the largest gaps. */
    uint32_t top[] = {0, 1u << 31, 0xFFFFFFFEu, 0xFFFFFFFFu};
    cc_check_list(e, id, top + 3, 1, 1, &r);
    cc_check_list(e, id, top, 4, 1, &r);
    uint32_t *v = cc_docids(&r, B + 5, 0xFFFFFFFFu - (uint32_t)(B + 4) * 3, 3, 3);
    assert_int_equal(v[B + 4], 0xFFFFFFFFu);
    cc_check_list(e, id, v, B + 5, 1, &r);
    free(v);
}

#endif
