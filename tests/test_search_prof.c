/* The search profile's sums (plan/search_prof.c): rows found again without
 * the lock by the caller's name pointer, added to from many threads at once
 * without losing a run, and a name in a reused buffer kept in its own row. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan_testing.h"
#include "plan/search_prof.h"
#include "testutil.h"

#define THREADS 8
#define ADDS 20000

static void *adder(void *arg)
{
    (void)arg;
    tdm_sprof pf = {.on = 1, .salg = 1, .k = 7};
    for (int i = 0; i < ADDS; i++) {
        /* 1 us each, from t0: the row's sum is exact */
        tdm_sprof_host_span(&pf, "test: many threads", 1.0, 1.0 + 1e-6);
        tdm_sprof_host_span(&pf, "test: second phase", 2.0, 2.0 + 2e-6);
    }
    return NULL;
}

static void many_threads(void **state)
{
    (void)state;
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, adder, NULL), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    unsigned long long n;
    double s;
    assert_true(tdm_sprof_row_get("and k=7 | host: test: many threads", &n, &s));
    assert_int_equal(n, THREADS * ADDS);
    assert_true(s > THREADS * ADDS * 0.999e-6 && s < THREADS * ADDS * 1.001e-6);
    assert_true(tdm_sprof_row_get("and k=7 | host: test: second phase", &n, &s));
    assert_int_equal(n, THREADS * ADDS);
    assert_false(tdm_sprof_row_get("and k=7 | host: test: none", &n, &s));
    assert_int_equal(n, 0);
}

/* One buffer, two names: two rows; and the same name in another series. */
static void reused_buffer(void **state)
{
    (void)state;
    char name[32];
    tdm_sprof pf = {.on = 1, .salg = 4, .k = 10};
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "test: name %d", i % 2);
        tdm_sprof_host_span(&pf, name, 0, 1e-3);
    }
    pf.salg = 3;
    tdm_sprof_host_span(&pf, name, 0, 1e-3);
    unsigned long long n;
    double s;
    assert_true(tdm_sprof_row_get("maxscore k=10 | host: test: name 0", &n, &s));
    assert_int_equal(n, 3);
    assert_true(tdm_sprof_row_get("maxscore k=10 | host: test: name 1", &n, &s));
    assert_int_equal(n, 3);
    assert_true(tdm_sprof_row_get("bmw k=10 | host: test: name 1", &n, &s));
    assert_int_equal(n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_threads),
        cmocka_unit_test(reused_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
