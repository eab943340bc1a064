/* The error model of include/tandem.h: one thread-local last error, cleared
 * by every call and set by every failure, right under threads and never
 * stale. Several threads share one good and one corrupt index and make calls
 * that fail and succeed in turn; each checks its own message after each. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "testutil.h"

enum { THREADS = 8, ROUNDS = 300, DOCS = 50 };

static char good_path[1100], bad_path[1100];
static tdm_index *good, *bad;
static int verify_status;         /* what verifying `bad` gives ... */
static char verify_msg[2048];     /* ... and its message, seen on the main thread */

/* A lines collection: doc d holds "common" and "w<d % 7>", and doc 3 nothing. */
static void build_index(const char *dir)
{
    char in[1100];
    snprintf(in, sizeof in, "%s/coll.txt", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    for (int d = 0; d < DOCS; d++)
        fprintf(f, "doc%d\t%s\n", d, d == 3 ? "" : d % 2 ? "common w1 w2 common" : "common w3");
    fclose(f);
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.format = TDM_BUILD_LINES;
    o.stemmer = "none";
    o.codec = "raw";
    const char *inputs[] = {in};
    if (tdm_index_build(inputs, 1, good_path, &o) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());
}

static int write_bytes(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, n, f) == n;
    if (f)
        fclose(f);
    return ok;
}

/* A copy of the good index with one byte flipped such that it opens (the
 * postings checksum is left to verify) but fails tdm_index_verify. The byte
 * is searched for, so that the test does not depend on the file layout. */
static void corrupt_copy(void)
{
    size_t n = 0;
    unsigned char *b = tdm_read_file(good_path, &n);
    assert_non_null(b);
    int found = 0;
    for (size_t off = n / 2; off < n && !found; off++) {
        b[off] ^= 0x20;
        assert_true(write_bytes(bad_path, b, n));
        tdm_index *ix = NULL;
        if (tdm_index_open(bad_path, &ix) == TDM_OK) {
            found = tdm_index_verify(ix) != TDM_OK;
            tdm_index_close(ix);
        }
        b[off] ^= 0x20;
    }
    free(b);
    assert_true(found);
}

static int setup(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("errors");
    snprintf(good_path, sizeof good_path, "%s/good.idx", dir);
    snprintf(bad_path, sizeof bad_path, "%s/bad.idx", dir);
    build_index(dir);
    corrupt_copy();
    if (tdm_index_open(good_path, &good) != TDM_OK || tdm_index_open(bad_path, &bad) != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    verify_status = tdm_index_verify(bad);
    snprintf(verify_msg, sizeof verify_msg, "%s", tdm_last_error());
    assert_int_not_equal(verify_status, TDM_OK);
    assert_string_not_equal(verify_msg, "");
    assert_non_null(strstr(verify_msg, "bad.idx")); /* names the file */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tdm_index_close(good);
    tdm_index_close(bad);
    return 0;
}

/* ---- single thread */

/* The case: verify fails, then a successful call reports "". */
static void no_stale_message(void **state)
{
    (void)state;
    assert_int_equal(tdm_index_verify(bad), verify_status);
    assert_int_equal(tdm_last_status(), verify_status);
    assert_string_equal(tdm_last_error(), verify_msg);
    uint32_t df = 0;
    assert_int_equal(tdm_index_term_get(bad, "common", &df, NULL), TDM_OK);
    assert_int_equal(df, DOCS - 1);
    assert_string_equal(tdm_last_error(), "");
    assert_int_equal(tdm_last_status(), TDM_OK);
    /* A getter that cannot fail clears it too. */
    assert_int_equal(tdm_index_term_get(good, "absent", NULL, NULL), TDM_ERR_NOT_FOUND);
    assert_non_null(strstr(tdm_last_error(), "absent"));
    assert_int_equal(tdm_engine_device_count(NULL), 0);
    assert_string_equal(tdm_last_error(), "");
    /* ... and the functions that read it do not. */
    assert_int_equal(tdm_index_verify(bad), verify_status);
    (void)tdm_strerror(TDM_ERR_CORRUPT);
    (void)tdm_version();
    tdm_free(NULL);
    assert_int_equal(tdm_last_status(), verify_status);
    assert_string_equal(tdm_last_error(), verify_msg);
}

/* Every failure of the index API sets a message that names what failed. */
static void every_failure_has_a_message(void **state)
{
    (void)state;
    uint32_t len = 7;
    size_t n;
    char term[4];
    assert_int_equal(tdm_index_doclen_get(good, 3, &len), TDM_OK); /* an empty document */
    assert_int_equal(len, 0);
    assert_int_equal(tdm_index_doclen_get(good, DOCS, &len), TDM_ERR_NOT_FOUND);
    assert_non_null(strstr(tdm_last_error(), "docid 50"));
    assert_null(tdm_index_docname(good, DOCS + 5));
    assert_int_equal(tdm_last_status(), TDM_ERR_NOT_FOUND);
    assert_non_null(strstr(tdm_last_error(), "docid 55"));
    assert_int_equal(tdm_index_postings_get(good, "common", NULL, NULL, 0, &n), TDM_ERR_LIMIT);
    assert_non_null(strstr(tdm_last_error(), "common"));
    assert_int_equal(tdm_index_normalize(good, "lengthy", term, sizeof term), TDM_ERR_LIMIT);
    assert_non_null(strstr(tdm_last_error(), "cap"));
    assert_int_equal(tdm_index_stats_get(NULL, NULL), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "tdm_index_stats_get"));
    assert_int_equal(tdm_index_open("/nonexistent/x.idx", &(tdm_index *){NULL}),
                     TDM_ERR_NOT_FOUND);
    assert_non_null(strstr(tdm_last_error(), "/nonexistent/x.idx"));
    tdm_device_info *infos = NULL;
    size_t count = 0;
    assert_int_equal(tdm_devices_discover(NULL, &count), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "tdm_devices_discover"));
    if (tdm_devices_discover(&infos, &count) == TDM_OK) {
        assert_string_equal(tdm_last_error(), "");
        for (size_t i = 0; i < count; i++)
            assert_non_null(infos[i].extensions);
    } else {
        assert_string_not_equal(tdm_last_error(), ""); /* discovery keeps its message */
    }
    tdm_free(infos);
}

/* ---- many threads */

static atomic_int failures;
static char first_failure[512];
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;

static void check(int ok, int tid, int round, const char *what)
{
    if (ok)
        return;
    if (atomic_fetch_add(&failures, 1) == 0) {
        pthread_mutex_lock(&failure_lock);
        snprintf(first_failure, sizeof first_failure, "thread %d round %d: %s: status %d, '%s'",
                 tid, round, what, tdm_last_status(), tdm_last_error());
        pthread_mutex_unlock(&failure_lock);
    }
}

/* One round: a call chosen by (tid + round), then its status and message. */
static void one_round(int tid, int r)
{
    char want[64], name[1100];
    uint32_t len = 0, df = 0;
    switch ((tid + r) % 6) {
    case 0: /* a term only this thread and round asks for */
        snprintf(want, sizeof want, "t%dr%d", tid, r);
        check(tdm_index_term_get(good, want, NULL, NULL) == TDM_ERR_NOT_FOUND, tid, r, "term");
        check(strstr(tdm_last_error(), want) != NULL, tid, r, "term message");
        check(tdm_last_status() == TDM_ERR_NOT_FOUND, tid, r, "term status");
        break;
    case 1: /* success: nothing left from the failures before */
        check(tdm_index_term_get(good, "common", &df, NULL) == TDM_OK && df == DOCS - 1, tid, r,
              "common");
        check(!strcmp(tdm_last_error(), "") && tdm_last_status() == TDM_OK, tid, r, "clear");
        break;
    case 2: /* a file that is not there, named in the message */
        snprintf(name, sizeof name, "/nonexistent/t%d/r%d.idx", tid, r);
        tdm_index *ix = (tdm_index *)good;
        check(tdm_index_open(name, &ix) != TDM_OK && !ix, tid, r, "open");
        check(strstr(tdm_last_error(), name) != NULL, tid, r, "open message");
        break;
    case 3: /* the shared corrupt index, then a success on it */
        check(tdm_index_verify(bad) == verify_status, tid, r, "verify");
        check(!strcmp(tdm_last_error(), verify_msg), tid, r, "verify message");
        check(tdm_index_doclen_get(bad, 0, &len) == TDM_OK, tid, r, "doclen");
        check(!strcmp(tdm_last_error(), ""), tid, r, "stale after verify");
        break;
    case 4: /* a docid only this thread and round uses */
        snprintf(want, sizeof want, "docid %d ", 1000 + tid * ROUNDS + r);
        check(tdm_index_doclen_get(good, (uint32_t)(1000 + tid * ROUNDS + r), &len) ==
                  TDM_ERR_NOT_FOUND,
              tid, r, "doclen range");
        check(strstr(tdm_last_error(), want) != NULL, tid, r, "doclen message");
        break;
    default: { /* an engine option out of range: fails before any device */
        tdm_engine_options o;
        tdm_engine_options_init(&o);
        o.wg_size = 3 + 2 * (size_t)tid;
        tdm_engine *e = NULL;
        snprintf(want, sizeof want, "wg_size: %zu ", o.wg_size);
        check(tdm_engine_open(&o, &e) == TDM_ERR_INVALID_ARG && !e, tid, r, "engine");
        check(strstr(tdm_last_error(), want) != NULL, tid, r, "engine message");
        break;
    }
    }
}

static void *worker(void *arg)
{
    int tid = (int)(intptr_t)arg;
    pthread_barrier_wait(&start);
    for (int r = 0; r < ROUNDS; r++)
        one_round(tid, r);
    /* A thread's message is its own: what this thread did last is there. */
    check(tdm_index_term_get(good, "zz-last", NULL, NULL) == TDM_ERR_NOT_FOUND, tid, ROUNDS,
          "last");
    check(strstr(tdm_last_error(), "zz-last") != NULL, tid, ROUNDS, "last message");
    return NULL;
}

static void threads_get_their_own_messages(void **state)
{
    (void)state;
    pthread_t th[THREADS];
    atomic_store(&failures, 0);
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&start);
    if (atomic_load(&failures))
        fail_msg("%d wrong results; first: %s", atomic_load(&failures), first_failure);
    /* The main thread's own state was not touched by the others. */
    assert_int_equal(tdm_index_verify(good), TDM_OK);
    assert_string_equal(tdm_last_error(), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_stale_message),
        cmocka_unit_test(every_failure_has_a_message),
        cmocka_unit_test(threads_get_their_own_messages),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
