/* The test harness itself: a test file whose every test skips exits with
 * ctest's skip code; one where only some skip passes. */
#include "testutil.h"

#include <stdio.h>

static void needs_missing_data(void **state)
{
    (void)state;
    tdm_test_data("no/such/file/in/shared/data");
    fail_msg("tdm_test_data returned for a missing file");
}

static void skips_itself(void **state)
{
    (void)state;
    skip();
}

static void runs(void **state)
{
    (void)state;
    assert_int_equal(tdm_rng_range(&(tdm_rng){1}, 3, 3), 3);
}

int main(void)
{
    const struct CMUnitTest all_skip[] = {
        cmocka_unit_test(needs_missing_data),
        cmocka_unit_test(skips_itself),
    };
    const struct CMUnitTest some_skip[] = {
        cmocka_unit_test(needs_missing_data),
        cmocka_unit_test(runs),
    };
    int all = cmocka_run_group_tests(all_skip, NULL, NULL);
    int some = cmocka_run_group_tests(some_skip, NULL, NULL);
    if (all != TDM_TEST_SKIPPED || some != 0) {
        fprintf(stderr, "every test skipped: status %d (want %d); some skipped: %d (want 0)\n",
                all, TDM_TEST_SKIPPED, some);
        return 1;
    }
    return 0;
}
