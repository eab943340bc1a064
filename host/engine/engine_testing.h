/* Test hooks of the engine (a device's program build): switches that only
 * the tests set, kept out of the product headers so that product code
 * never reaches for them by accident.
 * Nothing here is part of the library's contract. */
#ifndef TDM_ENGINE_ENGINE_TESTING_H
#define TDM_ENGINE_ENGINE_TESTING_H

#include "runtime/runtime.h"

/* Every later build for `dev` fails (the kernels get -DTDM_TEST_BREAK_BUILD),
 * as a broken driver's would; NULL undoes it for all devices. Not
 * thread-safe: call it before tdm_engine_open, whose device threads only
 * read it (tdm_test_build_broken, program.c). */
void tdm_test_break_build(cl_device_id dev);
int tdm_test_build_broken(cl_device_id dev);

#endif
