/* GPU-VByte (vbyte128, vbyte1024): encoder, reference decoder, random access
 * and the device decoder on every device; corrupt selectors detected by the
 * reference and by the kernel, which never reads outside the block. */
#include "engine/engine.h"
#include "codec_cases.h"

static void vbyte128_matches_reference(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_VBYTE128, 31);
    ccase_refuses_unsorted(TDM_CODEC_VBYTE128);
    ccase_run_devices(TDM_CODEC_VBYTE128, 31);
}

static void vbyte1024_matches_reference(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_VBYTE1024, 32);
    ccase_refuses_unsorted(TDM_CODEC_VBYTE1024);
    ccase_run_devices(TDM_CODEC_VBYTE1024, 32);
}

/* Each byte length 1..4 in long runs and mixed at random. */
static void every_byte_length(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 33);
    ccase_list ls[1];
    size_t count = 0;
    ccase_list *l = ccase_add(ls, &count, "lengths", 5000, 0);
    for (size_t i = 0; i < l->n; i++) {
        uint32_t len = i < 4000 ? 1 + (uint32_t)(i / 1000) : tdm_rng_range(&r, 1, 4);
        l->v[i] = len == 4 ? tdm_rng_u32(&r) | (1u << 24)
                           : tdm_rng_u32(&r) & ((1u << (8 * len)) - 1);
    }
    ccase_check_everywhere(e, TDM_CODEC_VBYTE128, l, &r);
    ccase_check_everywhere(e, TDM_CODEC_VBYTE1024, l, &r);
    ccase_lists_free(ls, count);
    tdm_engine_close(e);
}

/* Selectors that claim more (or fewer) bytes than the block holds: the
 * reference says TDM_ERR_CORRUPT, and so does the device decode (the kernel
 * flags the list), without reading past the block; random bit flips crash
 * nothing and read nothing out of bounds. */
static void corrupt_selectors_detected(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 34);
    for (int id = TDM_CODEC_VBYTE128; id <= TDM_CODEC_VBYTE1024; id++) {
        size_t n = 3000;
        uint32_t *v = malloc(n * 4), *out = malloc(n * 4);
        ccase_docids(&r, v, n, 0, 1, 200);
        tdm_encoded enc;
        tdm_err err = {0};
        ccase_ok(tdm_codec_encode(id, v, n, 1, &enc, &err), &err, "encode");
        for (int k = 0; k < 2; k++) {
            /* The first selector byte of block 1 (k = 0) or of the short
             * last block (k = 1) claims 4 bytes for values stored in 1: 12
             * bytes more than the block has. */
            uint32_t b = k == 0 ? 1 : enc.nblocks - 1;
            uint32_t *w = enc.words + enc.offsets[b], saved = w[0];
            w[0] = saved | 0xffu;
            assert_int_equal(tdm_codec_decode(&enc, out, &err), TDM_ERR_CORRUPT);
            for (int d = 0; d < tdm_engine_device_count(e); d++) {
                tdm_codec_dev_list l;
                ccase_ok(tdm_codec_dev_upload(tdm_engine_device(e, d), &enc, &l, &err), &err,
                           "upload");
                assert_int_equal(tdm_codec_dev_decode(&l, NULL, 0, NULL, out, NULL, NULL, &err),
                                 TDM_ERR_CORRUPT);
                assert_non_null(strstr(tdm_err_msg(&err), "corrupt"));
                tdm_codec_dev_free(&l);
            }
            w[0] = saved;
        }
        /* A block whose word count no selector can explain is refused at upload. */
        enc.offsets[1] = enc.offsets[0] + 1;
        tdm_codec_dev_list l;
        assert_int_equal(tdm_codec_dev_upload(tdm_engine_device(e, 0), &enc, &l, &err),
                         TDM_ERR_CORRUPT);
        tdm_encoded_free(&enc);
        free(v);
        free(out);
        tdm_err_clear(&err);
    }
    ccase_fuzz_lists(e, TDM_CODEC_VBYTE128, 36);
    ccase_fuzz_lists(e, TDM_CODEC_VBYTE1024, 39);
    tdm_engine_close(e);
}

/* Mallia's Table 1 setting in small: dense lists take ~10 bits an integer. */
static void compresses_dense_lists(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 35);
    size_t n = 1 << 16;
    uint32_t *v = malloc(n * 4);
    ccase_docids(&r, v, n, 0, 1, 31);
    tdm_encoded enc;
    tdm_err err = {0};
    ccase_ok(tdm_codec_encode(TDM_CODEC_VBYTE1024, v, n, 1, &enc, &err), &err, "encode");
    double bpi = (double)enc.nwords * 32 / (double)n;
    assert_true(bpi >= 10.0 && bpi < 10.1);
    tdm_encoded_free(&enc);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vbyte128_matches_reference),
        cmocka_unit_test(vbyte1024_matches_reference),
        cmocka_unit_test(every_byte_length),
        cmocka_unit_test(corrupt_selectors_detected),
        cmocka_unit_test(compresses_dense_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
