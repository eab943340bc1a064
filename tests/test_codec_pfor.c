/* PForDelta, list-wide width with recursive exception arrays (PFOR, blocks
 * of 512) and per-block width (NEWPFD128, NEWPFD64): reference round trips, random
 * access, the kernels against the list on every device, corrupt blocks. */
#include "codec_cases.h"

static void pfor_reference_round_trips(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_PFOR, 21);
    ccase_refuses_unsorted(TDM_CODEC_PFOR);
}

static void newpfd_reference_round_trips(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_NEWPFD128, 22);
    ccase_refuses_unsorted(TDM_CODEC_NEWPFD128);
    ccase_run_host(TDM_CODEC_NEWPFD64, 32);
    ccase_refuses_unsorted(TDM_CODEC_NEWPFD64);
}

/* Also with 4 values a work-item, what devices short of local memory get. */
static void pfor_devices_match_reference(void **state)
{
    (void)state;
    const char *const variants[] = {"-DPFOR_NARROW=1", NULL};
    ccase_run_devices_with(TDM_CODEC_PFOR, 23, variants);
}

static void newpfd_devices_match_reference(void **state)
{
    (void)state;
    ccase_run_devices(TDM_CODEC_NEWPFD128, 24);
    ccase_run_devices(TDM_CODEC_NEWPFD64, 34);
}

/* Gaps below 16 but one in 20 near 2^20: PFOR picks b = 4 for the list (at
 * least 90% fit), and its compressed exception arrays keep the cost well
 * below what a plain position and high part per exception would take. */
static void pfor_width_and_exceptions(void **state)
{
    (void)state;
    enum { N = 512 * 40 };
    uint32_t *v = malloc(N * 4);
    tdm_rng r;
    tdm_rng_seed(&r, 25);
    uint64_t x = 0;
    for (uint32_t i = 0; i < N; i++) {
        x += i % 20 == 7 ? (1u << 20) + tdm_rng_range(&r, 0, 1000) : tdm_rng_range(&r, 1, 15);
        v[i] = (uint32_t)x;
    }
    tdm_encoded enc;
    tdm_err err = {0};
    assert_int_equal(tdm_codec_encode(TDM_CODEC_PFOR, v, N, 1, &enc, &err), TDM_OK);
    assert_int_equal(enc.params[0], 4);
    double bpi = enc.nwords * 32.0 / N; /* 4 + (about 2 + 17) / 20 */
    if (bpi > 5.3)
        fail_msg("%.2f bits per docid, want under 5.3", bpi);
    tdm_encoded_free(&enc);
    assert_int_equal(tdm_codec_encode(TDM_CODEC_NEWPFD128, v, N, 1, &enc, &err), TDM_OK);
    bpi = enc.nwords * 32.0 / N; /* 4 + (8 + 17) / 20 + header and padding */
    if (bpi > 6.0)
        fail_msg("newpfd: %.2f bits per docid, want under 6", bpi);
    tdm_encoded_free(&enc);
    free(v);
}

static void expect_corrupt(tdm_engine *e, const tdm_encoded *enc, uint32_t b, const char *what)
{
    ccase_expect_ref_corrupt(enc, b, what);
    int noticed = ccase_device_survives(e, enc, what);
    if (noticed != tdm_engine_device_count(e))
        fail_msg("%s: %d of %d devices noticed", what, noticed, tdm_engine_device_count(e));
}

/* A block of gaps 1 with exceptions at positions 10 and 500 (block 0) and
 * 1, 3 and 295 (block 1, shorter). */
static void two_exceptions(uint32_t *v, size_t n)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = i % 512;
        if (i < 512)
            x += k == 10 || k == 500 ? 5000 : 1;
        else
            x += k == 1 || k == 3 || i == n - 5 ? 70000 : 1;
        v[i] = (uint32_t)x;
    }
}

static void pfor_corrupt_blocks(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    enum { N = 512 + 300 };
    uint32_t v[N];
    two_exceptions(v, N);
    tdm_encoded enc;
    tdm_err err = {0};
    assert_int_equal(tdm_codec_encode(TDM_CODEC_PFOR, v, N, 1, &enc, &err), TDM_OK);
    assert_int_equal(enc.params[0], 1);
    uint32_t *p = enc.words, hdr = p[0], wo = hdr >> 10 & 0x3F;
    assert_int_equal(hdr & 0x3FF, 2);
    assert_int_equal(wo, 9); /* offsets 10 and 489 */
    uint32_t *o = p + 2 + 512 / 32;
    uint32_t save = o[0];
    o[0] |= 0x1FFu << 9; /* the second offset becomes 511: position 522 */
    expect_corrupt(e, &enc, 0, "exception offsets past the block");
    o[0] = save;
    p[0] = (hdr & ~0x3FFu) | 600; /* more exceptions than values */
    expect_corrupt(e, &enc, 0, "600 exceptions");
    p[0] = hdr;
    uint32_t *x = p + 1 + 512 / 32; /* inner exception counts */
    save = *x;
    *x = 3; /* three inner exceptions the payload has no room for */
    expect_corrupt(e, &enc, 0, "inner exceptions past the payload");
    *x = save;
    tdm_encoded_free(&enc);

    const int npfd[] = {TDM_CODEC_NEWPFD128, TDM_CODEC_NEWPFD64};
    for (size_t c = 0; c < 2; c++) {
        assert_int_equal(tdm_codec_encode(npfd[c], v, N, 1, &enc, &err), TDM_OK);
        uint32_t last = enc.nblocks - 1, len = tdm_encoded_block_len(&enc, last);
        p = enc.words + enc.offsets[last];
        uint32_t bw = p[0] & 0x3F, ne = p[0] >> 6 & 0xFF;
        assert_true(ne >= 1 && len == 44);
        uint32_t *bytes = p + 1 + (len * bw + 31) / 32;
        save = bytes[0];
        bytes[0] = (bytes[0] & ~0xFFu) | 63; /* past the block's 44 values */
        expect_corrupt(e, &enc, last, "an exception position past the block");
        bytes[0] = save;
        save = p[0];
        p[0] = save + 1; /* a width that does not match the payload's size */
        expect_corrupt(e, &enc, last, "a wrong width");
        p[0] = save;
        tdm_encoded_free(&enc);
    }

    ccase_list ls[CCASE_MAX_LISTS];
    size_t count = 0;
    tdm_rng r;
    tdm_rng_seed(&r, 26);
    ccase_list *l = ccase_add(ls, &count, "mixed", 2 * 512 + 77, 1);
    ccase_mixed(&r, l->v, l->n);
    int rounds = tdm_test_small() ? 16 : 400;
    ccase_fuzz(e, TDM_CODEC_PFOR, l, rounds, 27);
    ccase_fuzz(e, TDM_CODEC_NEWPFD128, l, rounds, 28);
    ccase_fuzz(e, TDM_CODEC_NEWPFD64, l, rounds, 38);
    l = ccase_add(ls, &count, "freq-wide", 512 + 1, 0);
    ccase_freq(&r, l->v, l->n, 1);
    ccase_fuzz(e, TDM_CODEC_PFOR, l, rounds, 29);
    ccase_fuzz(e, TDM_CODEC_NEWPFD128, l, rounds, 30);
    ccase_fuzz(e, TDM_CODEC_NEWPFD64, l, rounds, 40);
    ccase_lists_free(ls, count);
    tdm_err_clear(&err);
    tdm_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pfor_reference_round_trips),
        cmocka_unit_test(newpfd_reference_round_trips),
        cmocka_unit_test(pfor_width_and_exceptions),
        cmocka_unit_test(pfor_devices_match_reference),
        cmocka_unit_test(newpfd_devices_match_reference),
        cmocka_unit_test(pfor_corrupt_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
