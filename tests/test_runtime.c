/* The OpenCL runtime on every device: discovery, the engine, a kernel against
 * its C reference, build failures, device selection, the kernel pool,
 * transfers ordered by events, and device probes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "runtime/runtime.h"
#include "engine/selfcheck.h"
#include "testutil.h"

static void discovery_finds_a_device(void **state)
{
    (void)state;
    tdm_device_info *infos = NULL;
    size_t n = 0;
    assert_int_equal(tdm_devices_discover(&infos, &n), TDM_OK);
    assert_true(n >= 1);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(infos[i].index, (int)i);
        assert_true(strlen(infos[i].name) > 0);
        assert_true(strlen(infos[i].platform) > 0);
        assert_true(infos[i].compute_units >= 1);
        assert_true(infos[i].global_mem_bytes > 0);
        assert_true(infos[i].max_work_group_size >= 1);
        assert_non_null(strstr(infos[i].opencl_c_version, "OpenCL C"));
    }
    tdm_free(infos);
}

static void engine_reports_its_devices(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    assert_true(tdm_engine_device_count(e) >= 1);
    tdm_device_info info;
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        assert_int_equal(tdm_engine_device_info_get(e, i, &info), TDM_OK);
        assert_true(tdm_engine_device_cached(e, i) >= 0);
    }
    assert_int_equal(tdm_engine_device_info_get(e, tdm_engine_device_count(e), &info),
                     TDM_ERR_INVALID_ARG);
    char report[1024];
    assert_int_equal(tdm_engine_selfcheck(e, report, sizeof report), TDM_OK);
    assert_non_null(strstr(report, ": ok"));
    tdm_engine_close(e);
}

/* tdm_delta_decode on every device equals the reference, for sizes around
 * the block and work-group edges and random gaps up to 2^20. */
static void delta_decode_matches_reference(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    size_t sizes[] = {0, 1, 127, 128, 129, 255, 256, 257, 1000, 4097, 100003};
    size_t blocks[] = {1, 128, 256, 1000, 4096};
    size_t nsizes = tdm_test_small() ? 8 : sizeof sizes / sizeof *sizes;
    tdm_rng rng;
    tdm_rng_seed(&rng, 42);
    for (size_t s = 0; s < nsizes; s++) {
        size_t n = sizes[s], nb_max = n + 1;
        uint32_t *gaps = malloc((n + 1) * 4), *bases = malloc(nb_max * 4),
                 *want = malloc((n + 1) * 4), *got = malloc((n + 1) * 4);
        for (size_t i = 0; i < n; i++)
            gaps[i] = tdm_rng_range(&rng, 0, 1u << 20);
        for (size_t i = 0; i < nb_max; i++)
            bases[i] = tdm_rng_u32(&rng) >> 4;
        for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
            if (tdm_test_small() && blocks[b] == 1 && n > 300)
                continue;
            tdm_delta_decode_ref(gaps, bases, want, n, blocks[b]);
            for (int d = 0; d < tdm_engine_device_count(e); d++) {
                tdm_err err = {0};
                memset(got, 0xab, (n + 1) * 4);
                int rc = tdm_delta_decode_device(tdm_engine_device(e, d), gaps, bases, got, n,
                                                 blocks[b], &err);
                if (rc != TDM_OK)
                    fail_msg("device %d: %s", d, tdm_err_msg(&err));
                assert_memory_equal(got, want, n * 4);
                tdm_err_clear(&err);
            }
        }
        free(gaps);
        free(bases);
        free(want);
        free(got);
    }
    tdm_engine_close(e);
}

/* Oclgrind's API checker reports the intended build failures as errors. */
static int under_oclgrind(void)
{
    const char *s = getenv("TANDEM_TEST_OCLGRIND");
    return s && *s == '1';
}

static void broken_kernel_gives_build_log(void **state)
{
    (void)state;
    if (under_oclgrind())
        skip();
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.kernel_source = "__kernel void broken(__global int *x) { x[0] = undeclared_name; }\n";
    o.cache_mode = TDM_CACHE_OFF;
    tdm_engine *e = NULL;
    int rc = tdm_engine_open(&o, &e);
    assert_int_equal(rc, TDM_ERR_BUILD);
    assert_null(e);
    const char *msg = tdm_last_error();
    assert_non_null(strstr(msg, "build log"));
    assert_non_null(strstr(msg, "undeclared_name"));
}

static void bad_build_option_is_an_error(void **state)
{
    (void)state;
    if (under_oclgrind())
        skip();
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.build_options = "-this-option-does-not-exist";
    o.cache_mode = TDM_CACHE_OFF;
    tdm_engine *e = NULL;
    int rc = tdm_engine_open(&o, &e);
    assert_int_equal(rc, TDM_ERR_BUILD);
    assert_null(e);
    assert_non_null(strstr(tdm_last_error(), "-this-option-does-not-exist"));
}

static void environment_selects_devices(void **state)
{
    (void)state;
    const char *old = getenv("TANDEM_DEVICES");
    char *saved = old ? strdup(old) : NULL;
    tdm_device_info *infos;
    size_t n;
    assert_int_equal(tdm_devices_discover(&infos, &n), TDM_OK);
    /* By index: exactly that device. */
    setenv("TANDEM_DEVICES", "0", 1);
    tdm_engine *e = tdm_test_engine();
    tdm_device_info info;
    assert_int_equal(tdm_engine_device_count(e), 1);
    tdm_engine_device_info_get(e, 0, &info);
    assert_string_equal(info.name, infos[0].name);
    tdm_engine_close(e);
    /* By type: only devices of that type. */
    const char *tname = infos[0].type == TDM_DEVICE_GPU ? "gpu" : infos[0].type == TDM_DEVICE_CPU ? "cpu" : "all";
    setenv("TANDEM_DEVICES", tname, 1);
    e = tdm_test_engine();
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_engine_device_info_get(e, i, &info);
        if (strcmp(tname, "all") != 0)
            assert_int_equal(info.type, infos[0].type);
    }
    tdm_engine_close(e);
    /* Impossible: a clear error listing what there is. */
    setenv("TANDEM_DEVICES", "quantum-annealer", 1);
    e = NULL;
    assert_int_equal(tdm_engine_open(NULL, &e), TDM_ERR_NO_DEVICE);
    assert_null(e);
    assert_non_null(strstr(tdm_last_error(), "quantum-annealer"));
    assert_non_null(strstr(tdm_last_error(), "TANDEM_DEVICES")); /* where it came from */
    assert_non_null(strstr(tdm_last_error(), infos[0].name));
    if (saved)
        setenv("TANDEM_DEVICES", saved, 1);
    else
        unsetenv("TANDEM_DEVICES");
    free(saved);
    tdm_free(infos);
}

/* An allocation past the device's limit is a clear error, not a crash. */
static void oversized_buffer_is_device_memory_error(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_device *d = tdm_engine_device(e, i);
        tdm_err err = {0};
        cl_mem m = NULL;
        size_t too_big = (size_t)d->info.max_alloc_bytes + 4096;
        assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, too_big, NULL, &m, &err),
                         TDM_ERR_DEVICE_MEMORY);
        assert_null(m);
        assert_non_null(strstr(tdm_err_msg(&err), d->info.name));
        tdm_err_clear(&err);
    }
    tdm_engine_close(e);
}

/* Kernels are created once per device and name and lent to one borrower at
 * a time: two borrowers get two kernels, a returned one is lent again, and
 * an unknown name fails naming the kernel and the device. */
static void kernel_pool_lends_and_reuses(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    tdm_device *d = tdm_engine_device(e, 0);
    tdm_err err = {0};
    cl_kernel a, b, c;
    assert_int_equal(tdm_kernel_borrow(d, "tdm_delta_decode", &a, &err), TDM_OK);
    assert_int_equal(tdm_kernel_borrow(d, "tdm_delta_decode", &b, &err), TDM_OK);
    assert_ptr_not_equal(a, b);
    assert_int_equal(tdm_kcache_count(d, "tdm_delta_decode"), 2);
    tdm_kernel_return(d, a);
    assert_int_equal(tdm_kernel_borrow(d, "tdm_delta_decode", &c, &err), TDM_OK);
    assert_ptr_equal(c, a);
    assert_int_equal(tdm_kcache_count(d, "tdm_delta_decode"), 2);
    tdm_kernel_return(d, b);
    tdm_kernel_return(d, c);
    if (getenv("TANDEM_TEST_OCLGRIND")) { /* it reports every API error, deliberate ones too */
        tdm_engine_close(e);
        return;
    }
    assert_int_equal(tdm_kernel_borrow(d, "no_such_kernel", &a, &err), TDM_ERR_OPENCL);
    assert_non_null(strstr(tdm_err_msg(&err), "no_such_kernel"));
    assert_non_null(strstr(tdm_err_msg(&err), d->info.name));
    /* A bad argument is reported with its index, and the kernel goes back. */
    cl_uint x = 0;
    tdm_karg bad[] = {TDM_KARG_U32(&x)}; /* argument 0 is a buffer */
    assert_int_not_equal(tdm_kernel_launch(d, "tdm_delta_decode", bad, 1, d->wg_size,
                                           d->wg_size, 0, NULL, NULL, &err), TDM_OK);
    assert_non_null(strstr(tdm_err_msg(&err), "argument 0"));
    assert_int_equal(tdm_kcache_count(d, "tdm_delta_decode"), 2);
    tdm_err_clear(&err);
    tdm_engine_close(e);
}

/* Copies on the transfer queue ordered with a kernel on the compute queue
 * through events alone. */
static void transfers_and_kernels_order_by_events(void **state)
{
    (void)state;
    tdm_engine *e = tdm_test_engine();
    enum { N = 5000, BLOCK = 700 };
    uint32_t gaps[N], bases[(N + BLOCK - 1) / BLOCK], want[N], got[N];
    for (uint32_t i = 0; i < N; i++)
        gaps[i] = i % 13;
    for (uint32_t b = 0; b < (N + BLOCK - 1) / BLOCK; b++)
        bases[b] = b * 1000;
    tdm_delta_decode_ref(gaps, bases, want, N, BLOCK);
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_device *d = tdm_engine_device(e, i);
        tdm_err err = {0};
        cl_mem bg, bb, bo;
        cl_event up[2], k, down;
        assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_ONLY, sizeof gaps, NULL, &bg, &err), TDM_OK);
        assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_ONLY, sizeof bases, NULL, &bb, &err), TDM_OK);
        assert_int_equal(tdm_buffer_create(d, CL_MEM_READ_WRITE, sizeof got, NULL, &bo, &err), TDM_OK);
        assert_int_equal(tdm_upload(d, bg, 0, sizeof gaps, gaps, 0, NULL, &up[0], &err), TDM_OK);
        assert_int_equal(tdm_upload(d, bb, 0, sizeof bases, bases, 0, NULL, &up[1], &err), TDM_OK);
        cl_uint n = N, blk = BLOCK;
        tdm_karg args[] = {TDM_KARG_MEM(&bg), TDM_KARG_MEM(&bb), TDM_KARG_MEM(&bo),
                           TDM_KARG_U32(&n), TDM_KARG_U32(&blk)};
        size_t groups = (N + BLOCK - 1) / BLOCK;
        assert_int_equal(tdm_kernel_launch(d, "tdm_delta_decode", args, 5, groups * d->wg_size,
                                           d->wg_size, 2, up, &k, &err), TDM_OK);
        memset(got, 0, sizeof got);
        assert_int_equal(tdm_download(d, bo, 0, sizeof got, got, 1, &k, &down, &err), TDM_OK);
        assert_int_equal(clWaitForEvents(1, &down), CL_SUCCESS);
        assert_memory_equal(got, want, sizeof got);
        clReleaseEvent(up[0]);
        clReleaseEvent(up[1]);
        clReleaseEvent(k);
        clReleaseEvent(down);
        clReleaseMemObject(bg);
        clReleaseMemObject(bb);
        clReleaseMemObject(bo);
    }
    tdm_engine_close(e);
}

/* Device characteristics are measured once, on the first request, and the
 * same figures come back after. Too slow under a simulator. */
static void device_probe_is_measured_once(void **state)
{
    (void)state;
    if (getenv("TANDEM_TEST_OCLGRIND")) {
        printf("under Oclgrind: 512 MiB of copies skipped\n");
        skip();
    }
    tdm_engine *e = tdm_test_engine();
    tdm_device *d = tdm_engine_device(e, 0);
    tdm_device_probe a, b;
    tdm_err err = {0};
    assert_int_equal(tdm_device_probe_get(d, &a, &err), TDM_OK);
    assert_true(a.copy_gbs > 0);
    assert_true(a.launch_s > 0);
    assert_int_equal(tdm_device_probe_get(d, &b, &err), TDM_OK);
    assert_memory_equal(&a, &b, sizeof a);
    printf("%s: copy %.1f GB/s, launch %.1f us (device %.1f us)\n", d->info.name, a.copy_gbs,
           a.launch_s * 1e6, a.launch_dev_s * 1e6);
    tdm_engine_close(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(discovery_finds_a_device),
        cmocka_unit_test(engine_reports_its_devices),
        cmocka_unit_test(delta_decode_matches_reference),
        cmocka_unit_test(broken_kernel_gives_build_log),
        cmocka_unit_test(bad_build_option_is_an_error),
        cmocka_unit_test(environment_selects_devices),
        cmocka_unit_test(oversized_buffer_is_device_memory_error),
        cmocka_unit_test(kernel_pool_lends_and_reuses),
        cmocka_unit_test(transfers_and_kernels_order_by_events),
        cmocka_unit_test(device_probe_is_measured_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
