/* The handle-free parts of the C API: versions, status names, open errors. */
#include <string.h>

#include "testutil.h"

static void version_matches_header(void **state)
{
    (void)state;
    assert_string_equal(tdm_version(), TDM_VERSION_STRING);
    assert_int_equal(tdm_version_number(), TDM_VERSION_NUMBER);
}

static void every_status_has_a_name(void **state)
{
    (void)state;
    for (int c = TDM_OK; c >= TDM_ERR_CANCELLED; c--)
        assert_string_not_equal(tdm_strerror(c), "unknown status");
    assert_string_equal(tdm_strerror(-9999), "unknown status");
    assert_string_equal(tdm_strerror(1), "unknown status");
}

static void failed_open_leaves_message_on_thread(void **state)
{
    (void)state;
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "no-such-device-anywhere";
    tdm_engine *e = (tdm_engine *)&o; /* must be overwritten with NULL */
    int rc = tdm_engine_open(&o, &e);
    assert_int_equal(rc, TDM_ERR_NO_DEVICE);
    assert_null(e);
    assert_int_equal(tdm_last_status(), TDM_ERR_NO_DEVICE);
    assert_non_null(strstr(tdm_last_error(), "no-such-device-anywhere"));
    assert_int_equal(tdm_engine_open(&o, NULL), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "out is NULL"));
    /* The next call clears it, whatever it is. */
    assert_int_equal(tdm_engine_device_count(NULL), 0);
    assert_string_equal(tdm_last_error(), "");
    assert_int_equal(tdm_last_status(), TDM_OK);
}

static void null_handles_are_safe(void **state)
{
    (void)state;
    tdm_engine_close(NULL);
    tdm_free(NULL);
    assert_int_equal(tdm_engine_device_count(NULL), 0);
    tdm_device_info info;
    assert_int_equal(tdm_engine_device_info_get(NULL, 0, &info), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "engine is NULL"));
    assert_int_equal(tdm_engine_device_cached(NULL, 0), TDM_ERR_INVALID_ARG);
    assert_int_equal(tdm_engine_selfcheck(NULL, NULL, 0), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "tdm_engine_selfcheck"));
    assert_int_equal(tdm_devices_discover(NULL, NULL), TDM_ERR_INVALID_ARG);
    assert_string_equal(tdm_engine_warnings(NULL), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_matches_header),
        cmocka_unit_test(every_status_has_a_name),
        cmocka_unit_test(failed_open_leaves_message_on_thread),
        cmocka_unit_test(null_handles_are_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
