/* host/common/workers.c: tdm_par_for and the pool's tdm_pool_for do every
 * item exactly once, with worker numbers below the threads asked, from
 * several calling threads at once and nested. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/workers.h"
#include "testutil.h"

typedef struct count {
    atomic_uint *seen;   /* [n] times each item was done */
    unsigned threads;
    atomic_int bad;      /* a worker number out of range */
    int nested;          /* each item runs a call of its own */
} count;

static void inner(void *ctx, size_t i, unsigned worker)
{
    count *c = ctx;
    if (worker >= c->threads)
        atomic_fetch_add(&c->bad, 1);
    atomic_fetch_add(&c->seen[i], 1);
}

static void item(void *ctx, size_t i, unsigned worker)
{
    count *c = ctx;
    if (worker >= c->threads)
        atomic_fetch_add(&c->bad, 1);
    atomic_fetch_add(&c->seen[i], 1);
    for (volatile int spin = 0; spin < 2000; spin++) /* long enough for the helpers to come */
        ;
    if (c->nested) {
        atomic_uint seen[5] = {0};
        count in = {seen, 3, 0, 0};
        tdm_pool_for(3, 5, inner, &in);
        for (int k = 0; k < 5; k++)
            if (seen[k] != 1)
                atomic_fetch_add(&c->bad, 1);
        atomic_fetch_add(&c->bad, atomic_load(&in.bad));
    }
}

static void once_each(int pool, unsigned threads, size_t n, int nested)
{
    count c = {calloc(n ? n : 1, sizeof *c.seen), threads, 0, nested};
    if (pool)
        tdm_pool_for(threads, n, item, &c);
    else
        tdm_par_for(threads, n, item, &c);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(c.seen[i], 1);
    assert_int_equal(atomic_load(&c.bad), 0);
    free(c.seen);
}

static void every_item_once(void **state)
{
    (void)state;
    static const unsigned threads[] = {1, 2, 7, 16, 100};
    static const size_t ns[] = {0, 1, 5, 1000};
    for (int pool = 0; pool < 2; pool++)
        for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
            for (size_t k = 0; k < sizeof ns / sizeof *ns; k++)
                once_each(pool, threads[t], ns[k], 0);
    once_each(1, 8, 200, 1); /* each item a pool call of its own */
}

static void *caller(void *arg)
{
    (void)arg;
    for (int r = 0; r < 200; r++)
        once_each(1, 16, 300, 0);
    return NULL;
}

static void callers_at_once(void **state)
{
    (void)state;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, caller, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_item_once),
        cmocka_unit_test(callers_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
