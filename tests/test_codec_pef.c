/* Partitioned Elias-Fano: reference round trips, random access, the device
 * kernel against the list on every device, and corrupt partitions. */
#include "codec_cases.h"

static void pef_reference_round_trips(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_PEF, 11);
    ccase_refuses_unsorted(TDM_CODEC_PEF);
}

/* Also the variant that stages partitions in local memory (an experiment
 * for GPUs, built with -DTDM_CODEC_PIPE=1). */
static void pef_devices_match_reference(void **state)
{
    (void)state;
    const char *const variants[] = {"-DTDM_CODEC_PIPE=1", NULL};
    ccase_run_devices_with(TDM_CODEC_PEF, 12, variants);
}

/* Compression sanity: a dense docid list costs about 2 bits a value plus
 * the partition header, a sparse one about log2(gap) + 2. */
static void pef_sizes_are_elias_fano(void **state)
{
    (void)state;
    enum { N = 128 * 64 };
    uint32_t *v = malloc(N * 4);
    for (uint32_t i = 0; i < N; i++)
        v[i] = i * 1024 + (i * 7919) % 1000;
    tdm_encoded enc;
    tdm_err err = {0};
    assert_int_equal(tdm_codec_encode(TDM_CODEC_PEF, v, N, 1, &enc, &err), TDM_OK);
    double bpi = enc.nwords * 32.0 / N;
    if (bpi < 10 || bpi > 12.5)
        fail_msg("gaps near 1024 cost %.2f bits each, want about 12", bpi);
    tdm_encoded_free(&enc);
    for (uint32_t i = 0; i < N; i++)
        v[i] = i;
    assert_int_equal(tdm_codec_encode(TDM_CODEC_PEF, v, N, 1, &enc, &err), TDM_OK);
    bpi = enc.nwords * 32.0 / N;
    if (bpi > 2.6)
        fail_msg("dense list costs %.2f bits each, want about 2.25", bpi);
    tdm_encoded_free(&enc);
    free(v);
}

/* Block b of an encoded list: header, low-part length, high part words. */
static uint32_t *pef_high(tdm_encoded *enc, uint32_t b, uint32_t *nh)
{
    uint32_t len = tdm_encoded_block_len(enc, b), *p = enc->words + enc->offsets[b];
    uint32_t l = p[0] & 0xFF, nlow = (len * l + 31) / 32;
    *nh = enc->offsets[b + 1] - enc->offsets[b] - 1 - nlow;
    return p + 1 + nlow;
}

/* The kernel checks what costs nothing extra: a known kind and width, and as
 * many ones in the high part as the partition has values. */
static void pef_expect_corrupt(tdm_engine *e, const tdm_encoded *enc, uint32_t b,
                               const char *what)
{
    ccase_expect_ref_corrupt(enc, b, what);
    int noticed = ccase_device_survives(e, enc, what);
    if (noticed != tdm_engine_device_count(e))
        fail_msg("%s: %d of %d devices noticed", what, noticed, tdm_engine_device_count(e));
}

static void pef_corrupt_partitions(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 13);
    ccase_list ls[CCASE_MAX_LISTS];
    size_t count = 0;
    ccase_list *l = ccase_add(ls, &count, "mixed", 3 * 128 + 17, 1);
    ccase_mixed(&r, l->v, l->n);
    tdm_encoded enc;
    ccase_encode(TDM_CODEC_PEF, l, &enc);
    uint32_t nh, *h = pef_high(&enc, 1, &nh), j = 0;
    while (h[j] == 0) /* a large first value leaves the first words empty */
        j++;
    uint32_t save = h[j];
    h[j] &= h[j] - 1; /* one one too few */
    pef_expect_corrupt(e, &enc, 1, "a missing one");
    h[j] = save;
    uint32_t zero = ~h[j] & (h[j] + 1); /* one one too many, in the lowest zero bit */
    if (zero) {
        h[j] |= zero;
        pef_expect_corrupt(e, &enc, 1, "an extra one");
    }
    h[j] = save;
    save = h[nh - 1];
    h[nh - 1] = 0; /* the last ones lost: the unary part ends too early */
    pef_expect_corrupt(e, &enc, 1, "a short unary part");
    h[nh - 1] = save;
    uint32_t hdr = enc.words[enc.offsets[2]];
    enc.words[enc.offsets[2]] = 40;
    pef_expect_corrupt(e, &enc, 2, "l = 40");
    enc.words[enc.offsets[2]] = hdr | 7u << 8;
    pef_expect_corrupt(e, &enc, 2, "an unknown partition kind");
    enc.words[enc.offsets[2]] = hdr;
    /* Low bits that break the order: the reference notices (the kernel cannot
     * without a scan, but must stay in bounds). */
    uint32_t *p = enc.words + enc.offsets[3];
    if ((p[0] & 0xFF) > 0) {
        p[1] ^= 1u << ((p[0] & 0xFF) - 1);
        uint32_t out[128];
        tdm_err err = {0};
        int rc = tdm_codec_by_id(TDM_CODEC_PEF)->decode_block(&enc, 3, out, &err);
        assert_true(rc == TDM_OK || rc == TDM_ERR_CORRUPT);
        tdm_err_clear(&err);
    }
    tdm_encoded_free(&enc);
    ccase_lists_free(ls, count);
    ccase_fuzz_lists(e, TDM_CODEC_PEF, 14);
    tdm_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pef_reference_round_trips),
        cmocka_unit_test(pef_sizes_are_elias_fano),
        cmocka_unit_test(pef_devices_match_reference),
        cmocka_unit_test(pef_corrupt_partitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
