/* Rice with a parameter per block: reference round trips, the kernel against
 * the list on every device, parameter choice, corrupt blocks. */
#include "engine/engine.h"
#include "codec_cases.h"

static void rice_reference_round_trips(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_RICE, 31);
    ccase_refuses_unsorted(TDM_CODEC_RICE);
}

static void rice_devices_match_reference(void **state)
{
    (void)state;
    ccase_run_devices(TDM_CODEC_RICE, 32);
}

/* Rice has no slot to read one value from: no device random access. */
static void rice_has_no_gather(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    uint32_t v[3] = {1, 5, 9}, i = 1, out;
    tdm_encoded enc;
    tdm_err err = {0};
    tdm_codec_dev_list dl;
    assert_int_equal(tdm_codec_encode(TDM_CODEC_RICE, v, 3, 1, &enc, &err), TDM_OK);
    assert_int_equal(tdm_codec_dev_upload(tdm_engine_device(e, 0), &enc, &dl, &err), TDM_OK);
    assert_false(tdm_codec_gather_supported(TDM_CODEC_RICE));
    assert_int_equal(tdm_codec_gather(&dl, &i, 1, &out, &err), TDM_ERR_UNSUPPORTED);
    tdm_codec_dev_free(&dl);
    tdm_encoded_free(&enc);
    tdm_err_clear(&err);
    tdm_engine_close(e);
}

/* k = floor(log2(mean gap)) per block: gaps of exactly 2^10 give k = 10,
 * one unary bit and 10 binary bits each; a block with one huge gap among
 * small ones still keeps its unary part short. */
static void rice_parameter_per_block(void **state)
{
    (void)state;
    enum { N = 128 * 8 };
    uint32_t *v = malloc(N * 4);
    for (uint32_t i = 0; i < N; i++)
        v[i] = (i + 1) << 10;
    tdm_encoded enc;
    tdm_err err = {0};
    assert_int_equal(tdm_codec_encode(TDM_CODEC_RICE, v, N, 1, &enc, &err), TDM_OK);
    for (uint32_t b = 0; b < enc.nblocks; b++) {
        assert_int_equal(enc.words[enc.offsets[b]], 10);
        /* header + 128 * 10 binary bits + 128 * 2 unary bits (q = 1 each) */
        assert_int_equal(enc.offsets[b + 1] - enc.offsets[b], 1 + 40 + 8);
    }
    tdm_encoded_free(&enc);
    uint64_t x = 0;
    for (uint32_t i = 0; i < N; i++) {
        x += i == 200 ? 2000000000u : 1 + i % 3;
        v[i] = (uint32_t)x;
    }
    assert_int_equal(tdm_codec_encode(TDM_CODEC_RICE, v, N, 1, &enc, &err), TDM_OK);
    for (uint32_t b = 0; b < enc.nblocks; b++) {
        uint32_t k = enc.words[enc.offsets[b]], nbin = (128 * k + 31) / 32;
        uint32_t nun = enc.offsets[b + 1] - enc.offsets[b] - 1 - nbin;
        if (nun > 12)
            fail_msg("block %u: %u unary words", b, nun);
    }
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

static void rice_corrupt_blocks(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 33);
    ccase_list ls[CCASE_MAX_LISTS];
    size_t count = 0;
    ccase_list *l = ccase_add(ls, &count, "mixed", 3 * 128 + 9, 1);
    ccase_mixed(&r, l->v, l->n);
    tdm_encoded enc;
    ccase_encode(TDM_CODEC_RICE, l, &enc);
    uint32_t *p = enc.words + enc.offsets[1], k = p[0], nbin = (128 * k + 31) / 32;
    uint32_t *u = p + 1 + nbin, nu = enc.offsets[2] - enc.offsets[1] - 1 - nbin;
    uint32_t save = u[nu - 1];
    /* The last run never ends: its terminator is gone. */
    u[nu - 1] &= ~(0x80000000u >> __builtin_clz(u[nu - 1]));
    expect_corrupt(e, &enc, 1, "a unary run past the block");
    u[nu - 1] = save;
    uint32_t j = 0;
    while (u[j] == 0xFFFFFFFFu)
        j++;
    save = u[j];
    u[j] |= ~u[j] & (u[j] + 1); /* a terminator too many */
    expect_corrupt(e, &enc, 1, "an extra terminator");
    u[j] = save;
    p[0] = 32;
    expect_corrupt(e, &enc, 1, "k = 32");
    p[0] = k;
    tdm_encoded_free(&enc);
    ccase_lists_free(ls, count);
    ccase_fuzz_lists(e, TDM_CODEC_RICE, 34);
    tdm_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rice_reference_round_trips),
        cmocka_unit_test(rice_parameter_per_block),
        cmocka_unit_test(rice_devices_match_reference),
        cmocka_unit_test(rice_has_no_gather),
        cmocka_unit_test(rice_corrupt_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
