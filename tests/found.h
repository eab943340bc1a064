/* The OpenCL devices as discovery finds them (runtime/runtime.h,
 * tdm_discover), for tests that break one device's build and check what the
 * engine opens (test_device_fail, test_engine_open): `discover` and `forget`
 * are a cmocka group's setup and teardown; found[0 .. nfound) between them.
 * Header-only: static definitions. */
#ifndef TDM_TEST_FOUND_H
#define TDM_TEST_FOUND_H

#include <stdlib.h>

#include "runtime/runtime.h"

static tdm_found_device *found;
static size_t nfound;

static int discover(void **state)
{
    (void)state;
    tdm_err err = {0};
    int rc = tdm_discover(&found, &nfound, &err);
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : -1;
}

static int forget(void **state)
{
    (void)state;
    free(found);
    return 0;
}

#endif
