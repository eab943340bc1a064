/* The paths after a failed kernel build: one device fails and the others
 * open (reported in tdm_engine_warnings), every device fails (the open
 * fails, naming each), and NVIDIA's inline PTX rejected by the driver (the
 * device opens with the portable kernels). Builds are broken on purpose:
 * tdm_test_break_build for one device, -DTDM_TEST_BREAK_PTX for the PTX.
 * A device that hangs (TANDEM_TEST_HANG) is skipped after its time limit.
 * PoCL is asked for two devices (POCL_DEVICES), so that a machine with one
 * CPU has a second device to break. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/program.h"
#include "runtime/runtime.h"
#include "engine/engine_testing.h"
#include "engine/selfcheck.h"
#include "found.h"
#include "testutil.h"

static tdm_engine *open_all(const char *build_options, int *rc)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "all";
    o.build_options = build_options;
    tdm_engine *e = NULL;
    *rc = tdm_engine_open(&o, &e);
    return e;
}

static void one_broken_device_others_open(void **state)
{
    (void)state;
    if (nfound < 2) {
        printf("only %zu device(s): no second one to break\n", nfound);
        skip();
    }
    size_t broken = nfound - 1;
    tdm_test_break_build(found[broken].device);
    int rc;
    tdm_engine *e = open_all(NULL, &rc);
    tdm_test_break_build(NULL);
    if (rc != TDM_OK)
        fail_msg("open with one broken device: %s", tdm_last_error());
    assert_string_equal(tdm_last_error(), ""); /* the skipped device is a warning, not an error */
    assert_int_equal(tdm_engine_device_count(e), (int)nfound - 1);
    const char *w = tdm_engine_warnings(e);
    char want[64];
    snprintf(want, sizeof want, "device [%zu]", broken);
    if (!w || !strstr(w, want) || !strstr(w, "broken on purpose"))
        fail_msg("warnings should name %s and the build log, got: %s", want, w ? w : "(null)");
    /* The others work. */
    char report[1024];
    if (tdm_engine_selfcheck(e, report, sizeof report) != TDM_OK)
        fail_msg("selfcheck of the devices left: %s", tdm_last_error());
    tdm_engine_close(e);
}

static void every_device_broken_fails(void **state)
{
    (void)state;
    for (size_t i = 0; i < nfound; i++)
        tdm_test_break_build(found[i].device);
    int rc;
    tdm_engine *e = open_all(NULL, &rc);
    tdm_test_break_build(NULL);
    assert_null(e);
    assert_int_equal(rc, TDM_ERR_BUILD);
    for (size_t i = 0; i < nfound; i++) {
        char want[64];
        snprintf(want, sizeof want, "device [%zu]", i);
        if (!strstr(tdm_last_error(), want))
            fail_msg("the error should name %s: %s", want, tdm_last_error());
    }
    /* Nothing sticks: the next open works. */
    e = open_all(NULL, &rc);
    assert_int_equal(rc, TDM_OK);
    assert_int_equal(tdm_engine_device_count(e), (int)nfound);
    tdm_engine_close(e);
}

/* NVIDIA GPUs of compute capability 7+ build with inline-PTX shuffles
 * (TDM_NV_SHFL) by default; a driver that rejects them gets the portable
 * kernels. Both paths are checked where such a device exists, else the
 * test says skipped. */
static void rejected_ptx_falls_back(void **state)
{
    (void)state;
    int rc, nv = 0;
    tdm_engine *e = open_all(NULL, &rc);
    assert_int_equal(rc, TDM_OK);
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_device *d = tdm_engine_device(e, i);
        int ok = tdm_nv_shuffle_ok(d->settings, d->id, &d->info);
        if (ok && !d->nv_shuffle)
            fail_msg("%s supports warp shuffles but was built without", d->info.name);
        if (ok)
            printf("%s: built with inline PTX shuffles (TDM_NV_SHFL)\n", d->info.name);
        nv += ok;
    }
    tdm_engine_close(e);
    e = open_all("-DTDM_TEST_BREAK_PTX=1", &rc);
    if (rc != TDM_OK)
        fail_msg("open with the PTX rejected: %s", tdm_last_error());
    assert_int_equal(tdm_engine_device_count(e), (int)nfound);
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_device *d = tdm_engine_device(e, i);
        if (d->nv_shuffle)
            fail_msg("%s: the PTX build should have failed", d->info.name);
        if (tdm_nv_shuffle_ok(d->settings, d->id, &d->info))
            printf("%s: PTX rejected, retried without: opened\n", d->info.name);
    }
    char report[1024];
    if (tdm_engine_selfcheck(e, report, sizeof report) != TDM_OK)
        fail_msg("selfcheck after the retry: %s", tdm_last_error());
    tdm_engine_close(e);
    if (nv == 0) {
        printf("no NVIDIA GPU of compute capability 7+: the PTX paths were not run\n");
        skip();
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A device whose first kernel never ends (TANDEM_TEST_HANG) is skipped once
 * first_kernel_ms pass, named in the warnings, and the others work. Last:
 * the hung kernel keeps a PoCL thread spinning until the process ends. */
static void hung_device_skipped(void **state)
{
    (void)state;
    if (nfound < 2) {
        printf("only %zu device(s): no second one to hang\n", nfound);
        skip();
    }
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "all";
    o.first_kernel_ms = 1500;
    setenv("TANDEM_TEST_HANG", "0", 1);
    tdm_engine *e = NULL;
    double t0 = now_s();
    int rc = tdm_engine_open(&o, &e);
    double took = now_s() - t0;
    unsetenv("TANDEM_TEST_HANG");
    if (rc != TDM_OK)
        fail_msg("open with one hung device: %s", tdm_last_error());
    assert_int_equal(tdm_engine_device_count(e), (int)nfound - 1);
    const char *w = tdm_engine_warnings(e);
    if (!w || !strstr(w, "device [0]") || !strstr(w, "did not finish within 1500 ms"))
        fail_msg("warnings should name device [0] and its time limit, got: %s",
                 w ? w : "(null)");
    printf("open with a hung device took %.2f s: %s\n", took, w);
    if (took > 60)
        fail_msg("the open waited %.1f s for a 1.5 s limit", took);
    char report[1024];
    if (tdm_engine_selfcheck(e, report, sizeof report) != TDM_OK)
        fail_msg("selfcheck of the devices left: %s", tdm_last_error());
    tdm_engine_close(e);
}

int main(void)
{
    /* Before the ICD loader starts PoCL: two CPU devices instead of one. */
    if (!getenv("POCL_DEVICES"))
        setenv("POCL_DEVICES", "pthread pthread", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_broken_device_others_open),
        cmocka_unit_test(every_device_broken_fails),
        cmocka_unit_test(rejected_ptx_falls_back),
        cmocka_unit_test(hung_device_skipped), /* last: leaves a kernel spinning */
    };
    return cmocka_run_group_tests(tests, discover, forget);
}
