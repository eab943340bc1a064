/* host/common's growable buffer, array growth and random generator. */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/rng.h"
#include "common/strutil.h"
#include "testutil.h"

static void buf_appends_and_terminates(void **state)
{
    (void)state;
    tdm_buf b = {0};
    assert_int_equal(tdm_buf_append(&b, NULL, 0), 0);
    assert_string_equal(b.p, "");
    for (int i = 0; i < 1000; i++)
        assert_int_equal(tdm_buf_append(&b, "abc", 3), 0);
    assert_int_equal(b.len, 3000);
    assert_true(b.cap > b.len);
    assert_int_equal(b.p[b.len], '\0');
    assert_memory_equal(b.p + 2997, "abc", 3);
    size_t cap = b.cap;
    tdm_buf_clear(&b);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, cap);
    assert_string_equal(b.p, "");
    tdm_buf_free(&b);
    assert_null(b.p);
    assert_int_equal(b.len + b.cap, 0);
    tdm_buf_free(&b); /* again: harmless */
}

static void buf_grows_zeroed_and_reserves(void **state)
{
    (void)state;
    tdm_buf b = {0};
    assert_int_equal(tdm_buf_append(&b, "xyz", 3), 0);
    unsigned char *z = tdm_buf_grow(&b, 5000);
    assert_non_null(z);
    assert_ptr_equal(z, b.p + 3);
    for (int i = 0; i < 5000; i++)
        assert_int_equal(z[i], 0);
    assert_int_equal(b.len, 5003);
    assert_int_equal(tdm_buf_reserve(&b, 100000), 0);
    assert_true(b.cap >= b.len + 100001);
    assert_int_equal(b.len, 5003);
    /* A size that overflows is refused before any allocation (no sizes that
     * only the allocator refuses: ASan aborts on those) and leaves the
     * buffer as it was. */
    char *p = b.p;
    assert_int_equal(tdm_buf_reserve(&b, SIZE_MAX - 2), -1);
    assert_null(tdm_buf_grow(&b, SIZE_MAX - b.len));
    assert_ptr_equal(b.p, p);
    assert_int_equal(b.len, 5003);
    tdm_buf_free(&b);
}

static void array_grows_by_doubling(void **state)
{
    (void)state;
    uint64_t *v = NULL;
    size_t cap = 0;
    v = tdm_array_grow(v, &cap, 0, sizeof *v);   /* room for nothing: still an array */
    assert_non_null(v);
    assert_int_equal(cap, 16);
    for (size_t n = 0; n < 1000; n++) {
        uint64_t *g = tdm_array_grow(v, &cap, n + 1, sizeof *g);
        assert_non_null(g);
        assert_true(cap >= n + 1);
        v = g;
        v[n] = n * n;
    }
    assert_int_equal(cap, 1024);   /* 16, 32, ... 1024 */
    for (size_t n = 0; n < 1000; n++)
        assert_true(v[n] == n * n);
    assert_ptr_equal(tdm_array_grow(v, &cap, 1024, sizeof *v), v);   /* room already */
    assert_int_equal(cap, 1024);
    uint64_t *g = tdm_array_grow(v, &cap, 4000, sizeof *v);           /* past doubling */
    assert_non_null(g);
    assert_int_equal(cap, 4000);
    v = g;
    /* Too large: NULL, the array and its capacity untouched. */
    assert_null(tdm_array_grow(v, &cap, SIZE_MAX / 4, sizeof *v));
    assert_int_equal(cap, 4000);
    assert_true(v[999] == 999 * 999);
    free(v);
}

/* splitmix64's published outputs for seed 1234567 (Vigna's splitmix64.c). */
static void rng_is_splitmix64(void **state)
{
    (void)state;
    tdm_rng r;
    tdm_rng_seed(&r, 1234567);
    assert_true(tdm_rng_next(&r) == 6457827717110365317ull);
    assert_true(tdm_rng_next(&r) == 3203168211198807973ull);
    assert_true(tdm_rng_next(&r) == 9817491932198370423ull);
    tdm_rng a = {42}, b = {42};
    assert_int_equal(tdm_rng_u32(&a), (uint32_t)(tdm_rng_next(&b) >> 32));
}

static void rng_draws_stay_in_range(void **state)
{
    (void)state;
    tdm_rng r = {0};   /* seed 0 is a good seed */
    unsigned seen[7] = {0};
    for (int i = 0; i < 70000; i++) {
        uint32_t v = tdm_rng_below(&r, 7);
        assert_true(v < 7);
        seen[v]++;
        uint32_t w = tdm_rng_range(&r, 10, 12);
        assert_true(w >= 10 && w <= 12);
        assert_int_equal(tdm_rng_range(&r, 5, 5), 5);
        assert_int_equal(tdm_rng_below(&r, 1), 0);
        uint32_t x = tdm_rng_range(&r, UINT32_MAX - 1, UINT32_MAX);
        assert_true(x >= UINT32_MAX - 1);
        double d = tdm_rng_double(&r), o = tdm_rng_open01(&r);
        assert_true(d >= 0.0 && d < 1.0);
        assert_true(o > 0.0 && o < 1.0);
    }
    for (int k = 0; k < 7; k++) /* 10000 expected each; 5 sigma is about 480 */
        assert_true(seen[k] > 9400 && seen[k] < 10600);
    /* The whole 32-bit range: both halves come up. */
    int hi = 0;
    for (int i = 0; i < 1000; i++)
        hi += tdm_rng_range(&r, 0, UINT32_MAX) >> 31;
    assert_true(hi > 400 && hi < 600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buf_appends_and_terminates),
        cmocka_unit_test(buf_grows_zeroed_and_reserves),
        cmocka_unit_test(array_grows_by_doubling),
        cmocka_unit_test(rng_is_splitmix64),
        cmocka_unit_test(rng_draws_stay_in_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
