/* Device selection on a made-up list of devices (no OpenCL involved). */
#include <string.h>

#include "runtime/runtime.h"
#include "testutil.h"

static tdm_found_device devs[3];

static int setup(void **state)
{
    (void)state;
    memset(devs, 0, sizeof devs);
    const char *names[] = {"NVIDIA H200", "pthread-haswell-AMD EPYC", "Intel(R) Arc(TM) A770"};
    const char *plats[] = {"NVIDIA CUDA", "Portable Computing Language", "Intel(R) OpenCL"};
    int types[] = {TDM_DEVICE_GPU, TDM_DEVICE_CPU, TDM_DEVICE_GPU};
    for (int i = 0; i < 3; i++) {
        strcpy(devs[i].info.name, names[i]);
        strcpy(devs[i].info.platform, plats[i]);
        devs[i].info.type = types[i];
        devs[i].info.index = i;
    }
    return 0;
}

static void expect(const char *spec, int rc_want, const char *mask_want)
{
    unsigned char chosen[3];
    tdm_err err = {0};
    int rc = tdm_select_devices(spec, "device selection", devs, 3, chosen, &err);
    assert_int_equal(rc, rc_want);
    if (rc == TDM_OK) {
        char mask[4] = {0};
        for (int i = 0; i < 3; i++)
            mask[i] = chosen[i] ? '1' : '0';
        assert_string_equal(mask, mask_want);
    } else {
        /* A failed selection names the devices there are. */
        assert_non_null(strstr(tdm_err_msg(&err), "NVIDIA H200"));
    }
    tdm_err_clear(&err);
}

static void by_type(void **state)
{
    (void)state;
    expect("all", TDM_OK, "111");
    expect("gpu", TDM_OK, "101");
    expect("CPU", TDM_OK, "010");
    expect("accelerator", TDM_ERR_NO_DEVICE, NULL);
}

static void by_index_and_name(void **state)
{
    (void)state;
    expect("2", TDM_OK, "001");
    expect("0, 1", TDM_OK, "110");
    expect("pocl", TDM_OK, "010"); /* PoCL's platform name does not say "pocl" */
    expect("portable", TDM_OK, "010");
    expect("nvidia,cpu", TDM_OK, "110");
    expect("h200", TDM_OK, "100");
    expect("3", TDM_ERR_NO_DEVICE, NULL);
    expect("gpu,nonexistent", TDM_ERR_NO_DEVICE, NULL);
}

static void malformed(void **state)
{
    (void)state;
    expect("", TDM_ERR_INVALID_ARG, NULL);
    expect(" , ", TDM_ERR_INVALID_ARG, NULL);
}

static void no_devices_at_all(void **state)
{
    (void)state;
    unsigned char c[1];
    tdm_err err = {0};
    assert_int_equal(tdm_select_devices("all", "TANDEM_DEVICES", devs, 0, c, &err), TDM_ERR_NO_DEVICE);
    /* Why, in words (icdhint.h): no driver installed, or drivers that gave no device. */
    assert_non_null(strstr(tdm_err_msg(&err), "OpenCL driver"));
    tdm_err_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_type),
        cmocka_unit_test(by_index_and_name),
        cmocka_unit_test(malformed),
        cmocka_unit_test(no_devices_at_all),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
