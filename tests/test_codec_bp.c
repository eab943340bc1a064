/* GPU-BP (bp128, bp256): encoder, reference decoder, random access and the
 * device decoder on every device; corrupt payloads detected. */
#include "codec/bp_unpack.h"
#include "engine/engine.h"
#include "codec_cases.h"

static void bp128_matches_reference(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_BP128, 21);
    ccase_refuses_unsorted(TDM_CODEC_BP128);
    ccase_run_devices(TDM_CODEC_BP128, 21);
}

static void bp256_matches_reference(void **state)
{
    (void)state;
    ccase_run_host(TDM_CODEC_BP256, 22);
    ccase_refuses_unsorted(TDM_CODEC_BP256);
    ccase_run_devices(TDM_CODEC_BP256, 22);
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
        ccase_list ls[1];
        size_t count = 0;
        ccase_list *l = ccase_add(ls, &count, "widths", 33 * (size_t)B, 0);
        for (size_t i = 0; i < l->n; i++) {
            uint32_t w = (uint32_t)(i / B);
            l->v[i] = w == 0 ? 0 : w == 32 ? tdm_rng_u32(&r) | 0x80000000u
                                          : (tdm_rng_u32(&r) & ((1u << w) - 1)) | (1u << (w - 1));
        }
        ccase_check_everywhere(e, id, l, &r);
        tdm_encoded enc;
        ccase_encode(id, l, &enc);
        for (uint32_t b = 0; b < 33; b++)
            assert_int_equal(enc.offsets[b + 1] - enc.offsets[b], b * B / 32);
        tdm_encoded_free(&enc);
        ccase_lists_free(ls, count);
    }
    tdm_engine_close(e);
}

/* len values of w bits packed from bit 0 of w words, as the encoder does. */
static void pack_plain(uint32_t *words, const uint32_t *v, uint32_t len, uint32_t w)
{
    for (uint32_t i = 0; w && i < len; i++) {
        uint64_t bit = (uint64_t)i * w;
        uint32_t wi = (uint32_t)(bit >> 5), sh = (uint32_t)(bit & 31);
        words[wi] |= v[i] << sh;
        if (sh + w > 32)
            words[wi + 1] |= v[i] >> (32 - sh);
    }
}

/* Unpacks with `path` (0 the dispatcher, 1 scalar, 2 AVX2, 3 AVX-512) into a buffer of
 * exactly len values and a guard after it; 0 where the path is missing. */
static int unpack_with(int path, const uint32_t *words, uint32_t len, uint32_t w, uint32_t *out)
{
    enum { GUARD = 8 };
    uint32_t *o = malloc((len + GUARD) * sizeof *o);
    assert_non_null(o);
    for (uint32_t i = 0; i < len + GUARD; i++)
        o[i] = 0xA5A5A5A5u;
    int ran = 1;
    if (path == 0)
        tdm_bp_unpack(words, len, w, o);
    else if (path == 1)
        tdm_bp_unpack_scalar(words, len, w, o);
    else if (path == 2)
        ran = tdm_bp_unpack_avx2(words, len, w, o);
    else
        ran = tdm_bp_unpack_avx512(words, len, w, o);
    for (uint32_t i = len; i < len + GUARD; i++)
        assert_int_equal(o[i], 0xA5A5A5A5u); /* nothing written past len */
    memcpy(out, o, len * sizeof *o);
    free(o);
    return ran;
}

/* Every width 0..32 at every block length 1..256, from a words array of
 * exactly the block's ceil(len * w / 32) words (ASan sees any read past
 * it): packed random values come back, and random words (bits past the
 * last value set too) unpack the same on every path. */
static void unpack_paths_agree(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 33);
    uint32_t v[256], a[256], s[256], x[256], z[256];
    int avx2 = 0, avx512 = 0;
    for (uint32_t w = 0; w <= 32; w++)
        for (uint32_t len = 1; len <= 256; len++) {
            uint32_t nw = (uint32_t)(((uint64_t)len * w + 31) / 32);
            uint32_t *words = calloc(nw ? nw : 1, sizeof *words);
            assert_non_null(words);
            uint32_t mask = w == 32 ? 0xFFFFFFFFu : (1u << w) - 1u;
            for (uint32_t i = 0; i < len; i++)
                v[i] = tdm_rng_u32(&r) & mask;
            pack_plain(words, v, len, w);
            for (int round = 0; round < 2; round++) {
                unpack_with(0, words, len, w, a);
                unpack_with(1, words, len, w, s);
                int ran = unpack_with(2, words, len, w, x);
                int ranz = unpack_with(3, words, len, w, z);
                avx2 |= ran;
                avx512 |= ranz;
                for (uint32_t i = 0; i < len; i++) {
                    if (s[i] != a[i] || (ran && x[i] != s[i]) || (ranz && z[i] != s[i]) ||
                        (round == 0 && s[i] != v[i]))
                        fail_msg("w %u len %u value %u: packed %u, scalar %u, avx2 %u, "
                                 "avx512 %u, dispatch %u", w, len, i, v[i], s[i], ran ? x[i] : 0,
                                 ranz ? z[i] : 0, a[i]);
                }
                for (uint32_t i = 0; i < nw; i++) /* then random words */
                    words[i] = tdm_rng_u32(&r);
            }
            free(words);
        }
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2"))
        assert_true(avx2); /* the AVX2 path was tested where the CPU has it */
    if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw"))
        assert_true(avx512);
#endif
}

/* Gaps summed as unpacked, on every path: for every width 0..32 and block
 * length 1..256, gaps with no zero, a zero at a random place and one first
 * (allowed only where first_zero_ok), on a small base and on the highest
 * base no sum can pass 2^32 - 1 from (all gaps 2^w - 1: the last value is
 * 2^32 - 1), and one above it (refused: a sum might pass). 0 exactly where
 * the sums are right and a plain running sum would accept them. */
static void unpack_sums_agree(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 34);
    uint32_t g[256], s[256], x[256], z[256], d[256];
    for (uint32_t w = 0; w <= 32; w++)
        for (uint32_t len = 1; len <= 256; len++)
            for (int kind = 0; kind < 6; kind++) {
                uint32_t nw = (uint32_t)(((uint64_t)len * w + 31) / 32);
                uint32_t mask = w == 32 ? 0xFFFFFFFFu : (1u << w) - 1u;
                uint64_t top = 0xFFFFFFFFull - (uint64_t)len * mask;
                int first_ok = kind & 1, edge = kind >= 4;
                if (edge && (uint64_t)len * mask > 0xFFFFFFFFull)
                    continue;
                uint32_t base = edge ? (uint32_t)top + (kind == 5) : tdm_rng_range(&r, 0, 1000);
                for (uint32_t i = 0; i < len; i++)
                    g[i] = edge ? mask : (tdm_rng_u32(&r) & mask) | (w ? 1 : 0);
                if (kind == 2 || kind == 3) /* a zero gap somewhere, or first */
                    g[kind == 3 ? 0 : tdm_rng_below(&r, len)] = 0;
                uint32_t *words = calloc(nw ? nw : 1, sizeof *words);
                assert_non_null(words);
                pack_plain(words, g, len, w);
                uint64_t acc = base;
                int good = 1;
                for (uint32_t i = 0; i < len; i++) {
                    good &= g[i] != 0 || (i == 0 && first_ok);
                    acc += g[i];
                }
                good &= acc <= 0xFFFFFFFFull;
                int fits = (uint64_t)base + (uint64_t)len * mask <= 0xFFFFFFFFull;
                int rs = tdm_bp_unpack_sum_scalar(words, len, w, base, first_ok, s);
                int rx = tdm_bp_unpack_sum_avx2(words, len, w, base, first_ok, x);
                int rz = tdm_bp_unpack_sum_avx512(words, len, w, base, first_ok, z);
                int rd = tdm_bp_unpack_sum(words, len, w, base, first_ok, d);
                if (rs != (good && fits ? 0 : -1) || rd != rs || (rx != 1 && rx != rs) ||
                    (rz != 1 && rz != rs))
                    fail_msg("w %u len %u kind %d: scalar %d avx2 %d avx512 %d dispatch %d, "
                             "good %d fits %d", w, len, kind, rs, rx, rz, rd, good, fits);
                acc = base;
                for (uint32_t i = 0; rs == 0 && i < len; i++) {
                    acc += g[i];
                    if (s[i] != (uint32_t)acc || (rx == 0 && x[i] != s[i]) ||
                        (rz == 0 && z[i] != s[i]) || d[i] != s[i])
                        fail_msg("w %u len %u kind %d value %u: %u / %u / %u, want %u", w, len,
                                 kind, i, s[i], x[i], z[i], (uint32_t)acc);
                }
                free(words);
            }
}

/* Word counts no encoder writes, zero gaps and docids past 2^32-1: the
 * reference reports TDM_ERR_CORRUPT, and the upload refuses bad word counts;
 * random bit flips crash nothing and read nothing out of bounds. */
static void corrupt_payload_detected(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_rng r;
    tdm_rng_seed(&r, 24);
    uint32_t v[1000], out[1000];
    ccase_docids(&r, v, 1000, 5, 1, 300);
    tdm_encoded enc;
    tdm_err err = {0};
    ccase_ok(tdm_codec_encode(TDM_CODEC_BP128, v, 1000, 1, &enc, &err), &err, "encode");
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
    tdm_err_clear(&err);
    ccase_fuzz_lists(e, TDM_CODEC_BP128, 26);
    ccase_fuzz_lists(e, TDM_CODEC_BP256, 29);
    tdm_engine_close(e);
}

/* The decoder's gap sums (four lanes at a time where SSE2 is, bp.c) refuse
 * exactly what one at a time would: a zero gap at any position of a block
 * but the list's first, and a sum past 2^32 - 1 at any position; blocks of
 * 128 and a short last one of 7. Gaps packed as plain values, then read
 * as a docid list's. */
static void gap_sums_checked_everywhere(void **state)
{
    (void)state;
    enum { N = 2 * 128 + 7 };
    tdm_rng r;
    tdm_rng_seed(&r, 31);
    const tdm_codec_ops *ops = tdm_codec_by_id(TDM_CODEC_BP128);
    for (int kind = 0; kind < 3; kind++) /* a zero gap; an overflow; none */
        for (uint32_t at = 0; at < N; at++) {
            uint32_t g[N], out[128];
            for (uint32_t i = 0; i < N; i++)
                g[i] = tdm_rng_range(&r, 1, 1000);
            uint32_t b = at / 128, i0 = b * 128;
            uint32_t base = kind == 1 ? 0xFFFFFFFFu - 500u * (at - i0) - 2000u
                                      : tdm_rng_range(&r, 0, 1000);
            if (kind == 0)
                g[at] = 0;
            if (kind == 1) /* the sum passes 2^32 - 1 at `at` first */
                for (uint32_t i = i0; i <= at; i++)
                    g[i] = i < at ? 500 : 2000 + 500;
            tdm_encoded enc;
            tdm_err err = {0};
            ccase_ok(tdm_codec_encode(TDM_CODEC_BP128, g, N, 0, &enc, &err), &err, "encode");
            enc.delta = 1;
            enc.bases[b] = base;
            int rc = ops->decode_block(&enc, b, out, &err);
            int want = kind == 2 || (kind == 0 && at == 0) ? TDM_OK : TDM_ERR_CORRUPT;
            if (rc != want)
                fail_msg("kind %d at %u: %d, want %d", kind, at, rc, want);
            if (rc == TDM_OK) {
                uint32_t acc = base;
                for (uint32_t i = i0; i < i0 + tdm_encoded_block_len(&enc, b); i++)
                    assert_int_equal(out[i - i0], acc += g[i]);
            }
            tdm_err_clear(&err);
            tdm_encoded_free(&enc);
        }
}

/* Mallia's Table 1 setting in small: dense Uniform lists pack at ~7 bits. */
static void compresses_dense_lists(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 25);
    size_t n = 1 << 16;
    uint32_t *v = malloc(n * 4);
    ccase_docids(&r, v, n, 0, 1, 31); /* mean gap 16 */
    tdm_encoded enc;
    tdm_err err = {0};
    ccase_ok(tdm_codec_encode(TDM_CODEC_BP256, v, n, 1, &enc, &err), &err, "encode");
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
        cmocka_unit_test(unpack_paths_agree),
        cmocka_unit_test(unpack_sums_agree),
        cmocka_unit_test(corrupt_payload_detected),
        cmocka_unit_test(gap_sums_checked_everywhere),
        cmocka_unit_test(compresses_dense_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
