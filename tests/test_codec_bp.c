/* GPU-BP (bp128, bp256): encoder, reference decoder, random access and the
 * device decoder on every device; corrupt payloads detected. */
#include "codec/gather.h"
#include "codec_check.h"

static void bp128_matches_reference(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    cc_suite(e, TDM_CODEC_BP128, 21);
    tdm_engine_close(e);
}

static void bp256_matches_reference(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    cc_suite(e, TDM_CODEC_BP256, 22);
    tdm_engine_close(e);
}

/* Every width 0..32 in one list: block b holds gaps of exactly b bits. */
static void every_bit_width(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 23);
    for (int id = TDM_CODEC_BP128; id <= TDM_CODEC_BP256; id++) {
        uint32_t B = tdm_codec_by_id(id)->block_size;
        size_t n = 33 * (size_t)B;
        uint32_t *v = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            uint32_t w = (uint32_t)(i / B);
            v[i] = w == 0 ? 0 : w == 32 ? tdm_rng_u32(&r) | 0x80000000u
                                       : (tdm_rng_u32(&r) & ((1u << w) - 1)) | (1u << (w - 1));
        }
        cc_check_list(e, id, v, n, 0, &r);
        tdm_encoded enc;
        tdm_err err = {0};
        cc_fail_if(tdm_codec_encode(id, v, n, 0, &enc, &err), &err, "encode");
        for (uint32_t b = 0; b < 33; b++)
            assert_int_equal(enc.offsets[b + 1] - enc.offsets[b], b * B / 32);
        tdm_encoded_free(&enc);
        free(v);
    }
    tdm_engine_close(e);
}

/* Device random access (gather.h) equals the reference decode: docids with
 * gaps up to 2^31 and frequencies, random positions plus the first and last;
 * a position past the list is refused. */
static void gather_matches_reference(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 25);
    size_t n = tdm_test_small() ? 700 : 100003, k = tdm_test_small() ? 64 : 4096;
    uint32_t *idx = malloc(k * 4), *got = malloc(k * 4), *want = malloc(n * 4);
    for (int id = TDM_CODEC_BP128; id <= TDM_CODEC_BP256; id++) {
        for (int delta = 0; delta <= 1; delta++) {
            /* bp256 docids: gaps up to 2^31 until the universe runs out, then 1s */
            uint32_t hi = id == TDM_CODEC_BP256 ? 1u << 31 : 1u << 14;
            uint32_t *v = delta ? cc_docids(&r, n, 3, 1, hi) : malloc(n * 4);
            for (size_t i = 0; !delta && i < n; i++)
                v[i] = tdm_rng_u32(&r) >> (tdm_rng_u32(&r) % 32);
            tdm_encoded enc;
            tdm_err err = {0};
            cc_fail_if(tdm_codec_encode(id, v, n, delta, &enc, &err), &err, "encode");
            cc_fail_if(tdm_codec_decode(&enc, want, &err), &err, "decode");
            for (size_t q = 0; q < k; q++)
                idx[q] = q == 0 ? (uint32_t)n - 1 : q == 1 ? 0 : tdm_rng_range(&r, 0, (uint32_t)n - 1);
            for (int d = 0; d < tdm_engine_device_count(e); d++) {
                tdm_codec_dev_list dl;
                cc_fail_if(tdm_codec_dev_upload(tdm_engine_device(e, d), &enc, &dl, &err), &err,
                           "upload");
                cc_fail_if(tdm_codec_gather(&dl, idx, k, got, &err), &err, "gather");
                for (size_t q = 0; q < k; q++)
                    if (got[q] != want[idx[q]])
                        fail_msg("%s delta=%d device %d: value %u is %u, want %u",
                                 tdm_codec_by_id(id)->name, delta, d, idx[q], got[q],
                                 want[idx[q]]);
                idx[k / 2] = (uint32_t)n;
                assert_int_equal(tdm_codec_gather(&dl, idx, k, got, &err), TDM_ERR_INVALID_ARG);
                idx[k / 2] = 0;
                tdm_err_clear(&err);
                tdm_codec_dev_free(&dl);
            }
            tdm_encoded_free(&enc);
            free(v);
        }
    }
    free(idx);
    free(got);
    free(want);
    tdm_engine_close(e);
}

/* Word counts no encoder writes, zero gaps and docids past 2^32-1: the
 * reference reports TDM_ERR_CORRUPT, and the upload refuses bad word counts. */
static void corrupt_payload_detected(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 24);
    uint32_t *v = cc_docids(&r, 1000, 5, 1, 300), out[1000];
    tdm_encoded enc;
    tdm_err err = {0};
    cc_fail_if(tdm_codec_encode(TDM_CODEC_BP128, v, 1000, 1, &enc, &err), &err, "encode");
    /* One word moved from block 2 to block 3: neither count is 4 * width. */
    enc.offsets[3] -= 1;
    assert_int_equal(tdm_codec_decode(&enc, out, &err), TDM_ERR_CORRUPT);
    tdm_codec_dev_list l;
    assert_int_equal(tdm_codec_dev_upload(tdm_engine_device(e, 0), &enc, &l, &err),
                     TDM_ERR_CORRUPT);
    assert_non_null(strstr(tdm_err_msg(&err), "block 2"));
    enc.offsets[3] += 1;
    /* A zero gap inside a docid list. */
    uint32_t w0 = enc.words[enc.offsets[1]];
    enc.words[enc.offsets[1]] = 0;
    assert_int_equal(tdm_codec_decode(&enc, out, &err), TDM_ERR_CORRUPT);
    enc.words[enc.offsets[1]] = w0;
    /* A base so high that the block's docids pass 2^32-1. */
    enc.bases[4] = 0xFFFFFFF0u;
    assert_int_equal(tdm_codec_decode(&enc, out, &err), TDM_ERR_CORRUPT);
    uint32_t x;
    assert_int_equal(tdm_codec_by_id(TDM_CODEC_BP128)->get(&enc, 4 * 128 + 100, &x, &err),
                     TDM_ERR_CORRUPT);
    tdm_encoded_free(&enc);
    free(v);
    tdm_err_clear(&err);
    tdm_engine_close(e);
}

/* Mallia's Table 1 setting in small: dense Uniform lists pack at ~7 bits. */
static void compresses_dense_lists(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 25);
    size_t n = 1 << 16;
    uint32_t *v = cc_docids(&r, n, 0, 1, 31); /* mean gap 16 */
    tdm_encoded enc;
    tdm_err err = {0};
    cc_fail_if(tdm_codec_encode(TDM_CODEC_BP256, v, n, 1, &enc, &err), &err, "encode");
    double bpi = (double)enc.nwords * 32 / (double)n;
    assert_true(bpi > 4.5 && bpi <= 5.01);
    tdm_encoded_free(&enc);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bp128_matches_reference),
        cmocka_unit_test(bp256_matches_reference),
        cmocka_unit_test(every_bit_width),
        cmocka_unit_test(gather_matches_reference),
        cmocka_unit_test(corrupt_payload_detected),
        cmocka_unit_test(compresses_dense_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
