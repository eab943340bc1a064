/* tdm_fdiv_rn (cl/common.cl), the correctly rounded float division from
 * integers that BM25 uses on a device with neither cl_khr_fp64 nor PTX,
 * against C's float division (correctly rounded on the host: score.h) on
 * every device: random finite operands of every exponent, subnormals,
 * quotients that overflow and underflow, BM25's own operand ranges, and
 * zeros, infinities and NaNs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "runtime/runtime.h"
#include "testutil.h"

static float bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t ubits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* a[i], b[i]: edge cases first, then random ones. Returns the count. */
static size_t make_cases(float *a, float *b, size_t cap)
{
    static const uint32_t edge[][2] = {
        {0x3f800000u, 0x40400000u}, /* 1 / 3 */
        {0x00000001u, 0x3f800000u}, /* the smallest subnormal / 1 */
        {0x00000001u, 0x40000000u}, /* ... / 2: a tie, to even (0) */
        {0x00000003u, 0x40000000u}, /* 1.5 ulp: a tie, to even (2) */
        {0x007fffffu, 0x3f7fffffu}, /* the largest subnormal / just under 1 */
        {0x00800000u, 0x40000000u}, /* the smallest normal / 2: subnormal */
        {0x7f7fffffu, 0x3f000000u}, /* the largest float / 0.5: infinity */
        {0x7f7fffffu, 0x3f7fffffu}, /* / just under 1: rounds to infinity? */
        {0x00000001u, 0x7f7fffffu}, /* underflow to 0 */
        {0x00800000u, 0x3f800001u}, /* rounds up to the smallest normal */
        {0x80000000u, 0x3f800000u}, /* -0 / 1 */
        {0x00000000u, 0x00000000u}, /* 0 / 0: NaN */
        {0x7f800000u, 0x3f800000u}, /* inf / 1 */
        {0x3f800000u, 0x7f800000u}, /* 1 / inf */
        {0x3f800000u, 0x00000000u}, /* 1 / 0 */
        {0x7fc00000u, 0x3f800000u}, /* NaN / 1 */
        {0xc0a00000u, 0x40400000u}, /* -5 / 3 */
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof edge / sizeof *edge && n < cap; i++, n++) {
        a[n] = bits(edge[i][0]);
        b[n] = bits(edge[i][1]);
    }
    tdm_rng r;
    tdm_rng_seed(&r, 0x5eed0fd1ull);
    while (n < cap) {
        uint32_t kind = tdm_rng_below(&r, 4), x = tdm_rng_u32(&r), y = tdm_rng_u32(&r);
        if (kind == 0) { /* BM25's: tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)) */
            float tf = (float)(1 + tdm_rng_below(&r, 1000));
            float dl = (float)(1 + tdm_rng_below(&r, 5000));
            a[n] = tf * 2.2f * (float)(1 + tdm_rng_below(&r, 1000)) / 64.0f;
            b[n] = tf + 1.2f * (0.25f + 0.75f * dl / 317.5f);
        } else if (kind == 1) { /* subnormal on either side */
            a[n] = bits(x & 0x807fffffu);
            b[n] = bits(tdm_rng_below(&r, 2) ? y & 0x807fffffu : y);
        } else { /* any finite pair */
            a[n] = bits(x);
            b[n] = bits(y);
        }
        if (!isfinite(a[n]) || !isfinite(b[n]))
            continue;
        n++;
    }
    return n;
}

static void fdiv_matches_c(void **state)
{
    (void)state;
    size_t n = tdm_test_small() ? 4096 : 1u << 20;
    float *a = malloc(n * 4), *b = malloc(n * 4), *q = malloc(n * 4);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(q);
    n = make_cases(a, b, n);
    tdm_engine *e = tdm_test_engine();
    tdm_err err = {0};
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_device *d = tdm_engine_device(e, i);
        cl_mem ba = NULL, bb = NULL, bq = NULL;
        cl_uint un = (cl_uint)n;
        int st = tdm_buffer_create(d, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, a, &ba,
                                   &err);
        if (st == TDM_OK)
            st = tdm_buffer_create(d, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, b, &bb,
                                   &err);
        if (st == TDM_OK)
            st = tdm_buffer_create(d, CL_MEM_WRITE_ONLY, n * 4, NULL, &bq, &err);
        tdm_karg args[] = {TDM_KARG_MEM(&ba), TDM_KARG_MEM(&bb), TDM_KARG_MEM(&bq),
                           TDM_KARG_U32(&un)};
        size_t wg = d->wg_size, global = (n + wg - 1) / wg * wg;
        cl_event kev = NULL;
        if (st == TDM_OK)
            st = tdm_kernel_launch(d, "tdm_test_fdiv_rn", args, 4, global, wg, 0, NULL, &kev,
                                   &err);
        if (st == TDM_OK)
            st = tdm_download(d, bq, 0, n * 4, q, 1, &kev, NULL, &err);
        if (kev)
            clReleaseEvent(kev);
        clReleaseMemObject(ba);
        clReleaseMemObject(bb);
        clReleaseMemObject(bq);
        if (st != TDM_OK)
            fail_msg("%s: %s", d->info.name, tdm_err_msg(&err));
        size_t bad = 0;
        for (size_t j = 0; j < n; j++) {
            float want = a[j] / b[j];
            int same = isnan(want) ? isnan(q[j]) : ubits(want) == ubits(q[j]);
            if (!same && bad++ < 5)
                printf("%s: %a / %a = %a, want %a\n", d->info.name, a[j], b[j], q[j], want);
        }
        if (bad)
            fail_msg("%s: %zu of %zu quotients differ from C's", d->info.name, bad, n);
        printf("%s: %zu quotients equal C's\n", d->info.name, n);
    }
    tdm_engine_close(e);
    free(a);
    free(b);
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fdiv_matches_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
