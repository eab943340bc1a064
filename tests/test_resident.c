/* An index resident on every device (resident/resident.h): the buffers hold the
 * file's sections byte for byte (straight from the mapping and through
 * pinned staging), the memory reported is what is held, an index without
 * long lists (an empty block table) uploads, the upload does not block and
 * kernels wait for it, an index that does not fit gets TDM_ERR_DEVICE_MEMORY
 * naming both sizes when a full upload is asked for and a list cache
 * otherwise, and a budget too small even for that is refused. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "resident/decode_jobs.h"
#include "resident/listcache.h"
#include "resident/resident.h"
#include "resident/stager.h"
#include "residx.h"
#include "runtime/runtime.h"
#include "testutil.h"

static tdm_engine *E;

static int setup(void **state)
{
    (void)state;
    E = tdm_test_engine();
    return E ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tdm_engine_close(E);
    return 0;
}

/* Every buffer read back equals its section of the file. */
static void check_copy(const tdm_ireader *r, tdm_device *d, const tdm_resident *res)
{
    cl_mem m[] = {res->arena,      res->lists,       res->codecs,    res->block_last,
                  res->block_docs, res->block_freqs, res->block_max, res->doclens};
    tdm_err err = {0};
    uint64_t sum = 0;
    for (unsigned s = 0; s < sizeof m / sizeof *m; s++) {
        uint64_t size;
        const void *want = tdm_ireader_section(r, s, &size);
        size_t bytes = 0;
        assert_int_equal(clGetMemObjectInfo(m[s], CL_MEM_SIZE, sizeof bytes, &bytes, NULL),
                         CL_SUCCESS);
        assert_int_equal(bytes, size < 4 ? 4 : size);
        sum += bytes;
        if (!size)
            continue;
        void *got = malloc((size_t)size);
        assert_int_equal(tdm_download(d, m[s], 0, (size_t)size, got, 1, &res->ready, NULL, &err),
                         TDM_OK);
        if (memcmp(got, want, (size_t)size))
            fail_msg("section %s differs on %s", tdm_ireader_section_name(s), d->info.name);
        free(got);
    }
    assert_int_equal(sum, res->bytes);
    assert_int_equal(res->bytes, tdm_resident_bytes_needed(r));
}

static void upload_every_device(void **state)
{
    (void)state;
    const char *names[3] = {"bp128", "pfor", "vbyte1024"};
    residx x;
    residx_make(&x, "res-up", names, 3, tdm_test_small() ? 9 : 40, 3000, 21);
    const tdm_ireader_info *in = tdm_ireader_info_get(x.r);
    uint64_t want = 0;
    for (unsigned s = 0; s <= TDM_SEC_DOCLENS; s++)
        want += in->section_size[s] < 4 ? 4 : in->section_size[s];
    assert_int_equal(tdm_resident_bytes_needed(x.r), want);
    tdm_err err = {0};
    /* the same devices with TANDEM_STAGING's 3 threads and 1 MB buffers
       (read at engine open; a bad value fails it: test_settings) */
    setenv("TANDEM_STAGING", "3,1", 1);
    tdm_engine *E3 = getenv("TANDEM_TEST_OCLGRIND") ? NULL : tdm_test_engine();
    unsetenv("TANDEM_STAGING");
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
        assert_non_null(res.ready);
        assert_ptr_equal(res.dev, d);
        assert_int_equal(res.nlists, in->nterms);
        assert_int_equal(res.arena_words, in->arena_words);
        assert_int_equal(res.nentries, in->block_entries);
        assert_int_equal(res.ndocs, in->ndocs);
        check_copy(x.r, d, &res);
        tdm_resident_release(&res);
        assert_null(res.arena);
        tdm_resident_release(&res); /* twice: harmless */
        /* pinned staging, forced where the device would not use it, with
         * its default and with TANDEM_STAGING's 3 threads and 1 MB buffers;
         * not under Oclgrind, whose runtime is not thread-safe (the staging
         * threads' calls made it throw std::out_of_range now and then) */
        tdm_resident_opts o = {TDM_RESIDENT_FULL, 0, 1};
        if (E3) {
            assert_int_equal(tdm_resident_upload_opts(x.r, d, &o, &res, &err), TDM_OK);
            assert_null(res.cache);
            check_copy(x.r, d, &res);
            tdm_resident_release(&res);
            tdm_device *d3 = tdm_engine_device(E3, dv);
            assert_int_equal(tdm_resident_upload_opts(x.r, d3, &o, &res, &err), TDM_OK);
            assert_non_null(res.ready);
            assert_int_equal(clWaitForEvents(1, &res.ready), CL_SUCCESS);
            tdm_stager_stats ss;
            tdm_stager_stats_get(res.stager, &ss);
            assert_true(ss.workers >= 1 && ss.workers <= 3);
            assert_true(ss.chunk <= (1u << 20));
            check_copy(x.r, d3, &res);
            tdm_resident_release(&res);
        }
    }
    tdm_engine_close(E3);
    tdm_resident_release(NULL);
    residx_free(&x);
}

/* Only one-block lists: the block table is empty, its buffers 4 bytes. */
static void no_long_lists(void **state)
{
    (void)state;
    const char *names[1] = {"vbyte1024"};
    residx x;
    residx_make(&x, "res-short", names, 1, 3, 900, 22); /* 1, 1023 -> 900, 900 postings */
    assert_int_equal(tdm_ireader_info_get(x.r)->block_entries, 0);
    tdm_err err = {0};
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
        check_copy(x.r, d, &res);
        tdm_resident_release(&res);
    }
    residx_free(&x);
}

/* A device too small for the index, or whose buffers are too small for its
 * arena: refused before anything is allocated, both sizes named. */
static void does_not_fit(void **state)
{
    (void)state;
    const char *names[1] = {"bp128"};
    residx x;
    residx_make(&x, "res-fit", names, 1, 30, 500, 23);
    uint64_t need = tdm_resident_bytes_needed(x.r), arena, largest = 0;
    tdm_ireader_section(x.r, TDM_SEC_ARENA, &arena);
    for (unsigned s = 0; s <= TDM_SEC_DOCLENS; s++) {
        uint64_t size;
        tdm_ireader_section(x.r, s, &size);
        largest = size > largest ? size : largest;
    }
    assert_int_equal(largest, arena); /* the arena is the largest section here */
    tdm_device small = *tdm_engine_device(E, 0);
    small.info.global_mem_bytes = need - 1;
    tdm_err err = {0};
    tdm_resident res;
    char a[32], b[32];
    tdm_resident_opts full = {TDM_RESIDENT_FULL, 0, -1};
    assert_int_equal(tdm_resident_upload_opts(x.r, &small, &full, &res, &err),
                     TDM_ERR_DEVICE_MEMORY);
    snprintf(a, sizeof a, "%" PRIu64, need);
    snprintf(b, sizeof b, "%" PRIu64, need - 1);
    assert_non_null(strstr(tdm_err_msg(&err), a));
    assert_non_null(strstr(tdm_err_msg(&err), b));
    assert_null(res.arena);
    assert_null(res.ready);
    small.info.global_mem_bytes = need;
    small.info.max_alloc_bytes = arena - 1;
    assert_int_equal(tdm_resident_upload_opts(x.r, &small, &full, &res, &err),
                     TDM_ERR_DEVICE_MEMORY);
    snprintf(a, sizeof a, "%" PRIu64, arena);
    snprintf(b, sizeof b, "%" PRIu64, arena - 1);
    assert_non_null(strstr(tdm_err_msg(&err), a));
    assert_non_null(strstr(tdm_err_msg(&err), b));
    assert_non_null(strstr(tdm_err_msg(&err), "arena"));
    small.info.max_alloc_bytes = arena;
    assert_int_equal(tdm_resident_check_fits(x.r, &small, &err), TDM_OK);
    /* a budget below the index: refused for a full upload, both sizes named */
    full.budget = need - 1;
    assert_int_equal(tdm_resident_upload_opts(x.r, &small, &full, &res, &err),
                     TDM_ERR_DEVICE_MEMORY);
    snprintf(a, sizeof a, "%" PRIu64, need);
    assert_non_null(strstr(tdm_err_msg(&err), a));
    assert_non_null(strstr(tdm_err_msg(&err), "TANDEM_DEVICE_MEMORY"));
    tdm_err_clear(&err);
    residx_free(&x);
}

/* Sections 2 to 7 hold the file's bytes; the descriptors are zeros (no
 * list in the cache); the arena is the cache. */
static void check_cached(const tdm_ireader *r, tdm_device *d, const tdm_resident *res,
                         uint64_t cache)
{
    cl_mem m[] = {res->arena,      res->lists,       res->codecs,    res->block_last,
                  res->block_docs, res->block_freqs, res->block_max, res->doclens};
    tdm_err err = {0};
    uint64_t sum = 0, nl = tdm_ireader_info_get(r)->nterms;
    assert_non_null(res->cache);
    assert_int_equal(res->spans, 1);
    assert_int_equal(res->arena_words, cache / 4);
    for (unsigned s = 0; s < sizeof m / sizeof *m; s++) {
        uint64_t size;
        const void *want = tdm_ireader_section(r, s, &size);
        size_t bytes = 0;
        assert_int_equal(clGetMemObjectInfo(m[s], CL_MEM_SIZE, sizeof bytes, &bytes, NULL),
                         CL_SUCCESS);
        sum += bytes;
        if (s == TDM_SEC_ARENA) {
            assert_int_equal(bytes, cache);
            continue;
        }
        assert_int_equal(bytes, size < 4 ? 4 : size);
        if (!size)
            continue;
        unsigned char *got = malloc((size_t)size);
        assert_int_equal(tdm_download(d, m[s], 0, (size_t)size, got, 1, &res->ready, NULL, &err),
                         TDM_OK);
        if (s == TDM_SEC_LISTS) {
            assert_int_equal(size, nl * 16);
            for (uint64_t i = 0; i < size; i++)
                assert_int_equal(got[i], 0);
        } else if (memcmp(got, want, (size_t)size)) {
            fail_msg("section %s differs on %s", tdm_ireader_section_name(s), d->info.name);
        }
        free(got);
    }
    assert_int_equal(sum, res->bytes);
    tdm_listcache_stats st;
    assert_int_equal(tdm_resident_cache_stats(res, &st, &err), TDM_OK);
    assert_int_equal(st.capacity_bytes, cache);
    assert_int_equal(st.used_bytes, 0);
    assert_int_equal(st.hits + st.misses, 0);
}

/* CACHED mode: asked for, or chosen by AUTO under a budget below the
 * index; the cache takes the budget less the small sections; a budget
 * that leaves less than 4 KiB is refused naming the sizes. */
static void cached_upload(void **state)
{
    (void)state;
    const char *names[2] = {"bp128", "pef"};
    residx x;
    residx_make(&x, "res-cached", names, 2, 30, 4000, 25);
    uint64_t need = tdm_resident_bytes_needed(x.r), arena;
    tdm_ireader_section(x.r, TDM_SEC_ARENA, &arena);
    uint64_t small = need - (arena < 4 ? 4 : arena);
    tdm_err err = {0};
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        /* staged: not under Oclgrind (its runtime is not thread-safe) */
        int stagings = getenv("TANDEM_TEST_OCLGRIND") ? 1 : 2;
        for (int staged = 0; staged < stagings; staged++) {
            tdm_resident res;
            tdm_resident_opts o = {TDM_RESIDENT_AUTO, small + 8192, staged};
            assert_int_equal(tdm_resident_upload_opts(x.r, d, &o, &res, &err), TDM_OK);
            check_cached(x.r, d, &res, 8192);
            tdm_resident_release(&res);
            o.mode = TDM_RESIDENT_CACHED; /* asked for: at most the arena */
            o.budget = 0;
            assert_int_equal(tdm_resident_upload_opts(x.r, d, &o, &res, &err), TDM_OK);
            check_cached(x.r, d, &res, arena & ~(uint64_t)3);
            tdm_resident_release(&res);
            /* the default: the whole index fits, full upload */
            assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
            assert_null(res.cache);
            assert_int_equal(res.spans, 0);
            tdm_resident_release(&res);
        }
        tdm_resident res;
        tdm_resident_opts o = {TDM_RESIDENT_AUTO, small + 100, -1};
        assert_int_equal(tdm_resident_upload_opts(x.r, d, &o, &res, &err), TDM_ERR_DEVICE_MEMORY);
        char a[32];
        snprintf(a, sizeof a, "%" PRIu64, small);
        assert_non_null(strstr(tdm_err_msg(&err), a));
        assert_null(res.arena);
        assert_null(res.cache);
    }
    tdm_err_clear(&err);
    residx_free(&x);
}

/* A decode enqueued right after the (non-blocking) upload waits for it
 * through the resident's event, not through the caller. */
static void decode_waits_for_upload(void **state)
{
    (void)state;
    const char *names[1] = {"bp256"};
    residx x;
    residx_make(&x, "res-wait", names, 1, 8, 1500, 24);
    tdm_err err = {0};
    for (int dv = 0; dv < tdm_engine_device_count(E); dv++) {
        tdm_device *d = tdm_engine_device(E, dv);
        tdm_resident res;
        assert_int_equal(tdm_resident_upload(x.r, d, &res, &err), TDM_OK);
        tdm_decode_req req = {7, 0, TDM_DECODE_TO_END};
        tdm_decode_batch b;
        assert_int_equal(tdm_decode_batch_build(x.r, &req, 1, &b, &err), TDM_OK);
        cl_mem bufs[TDM_CODEC_COUNT], out = NULL, st = NULL;
        assert_int_equal(tdm_decode_batch_upload(&res, &b, bufs, &err), TDM_OK);
        assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, b.npostings * 4, NULL, &out,
                                           &err), TDM_OK);
        uint32_t zero = 0, *h = malloc(b.npostings * 4);
        assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, 4, NULL, &st, &err), TDM_OK);
        assert_int_equal(tdm_upload(d, st, 0, 4, &zero, 0, NULL, NULL, &err), TDM_OK);
        cl_event done;
        assert_int_equal(tdm_decode_batch_enqueue(&res, NULL, &b, bufs, out, NULL, st, 0, NULL,
                                                  &done, &err), TDM_OK);
        assert_int_equal(tdm_download(d, out, 0, b.npostings * 4, h, 1, &done, NULL, &err),
                         TDM_OK);
        assert_int_equal(tdm_decode_jobs_status(&res, st, 1, &done, &err), TDM_OK);
        assert_memory_equal(h, x.docs[7], b.npostings * 4);
        clReleaseEvent(done);
        clReleaseMemObject(bufs[TDM_CODEC_BP256]);
        clReleaseMemObject(out);
        clReleaseMemObject(st);
        free(h);
        tdm_decode_batch_free(&b);
        tdm_resident_release(&res);
    }
    residx_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(upload_every_device),
        cmocka_unit_test(no_long_lists),
        cmocka_unit_test(does_not_fit),
        cmocka_unit_test(cached_upload),
        cmocka_unit_test(decode_waits_for_upload),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
