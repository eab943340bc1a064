/* Shared helpers for the cmocka tests. */
#ifndef TDM_TESTUTIL_H
#define TDM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h" /* tdm_rng: the deterministic generator, seeded per test */
#include "tandem.h"

/* Whether TANDEM_TEST_SMALL is set (Oclgrind runs): tests shrink inputs. */
int tdm_test_small(void);

/* Opens an engine on TANDEM_DEVICES (default all) or fails the test with the
 * engine's message. */
tdm_engine *tdm_test_engine(void);

/* Opens an engine with options o or fails the test with the engine's message. */
tdm_engine *tdm_test_engine_with(const tdm_engine_options *o);

/* e, when it has two devices or more; else closes e, says to set
 * POCL_DEVICES="pthread pthread" and returns NULL (the caller skips). */
tdm_engine *tdm_test_two_devices(tdm_engine *e);

/* The scheduler's tests run on two lanes: ctest gives them POCL_DEVICES=
 * "pthread pthread" (two PoCL devices). TANDEM_TEST_POCL_DEVICES, when set,
 * replaces it before OpenCL loads: the rusticl stage sets "pthread", one PoCL
 * device beside rusticl's, two implementations as the two lanes. Call first
 * in main. */
void tdm_test_pocl_devices(void);

/* Whether device d of e runs the compressed variant's kernels. Where it does
 * not (no_zcur: rusticl, whose compiler cannot take them), prints that the
 * compressed case `what` is skipped on that device, so a test checks what it
 * still can (a decoded variant's answer) without passing a case that did not
 * run. */
int tdm_test_zcur(tdm_engine *e, int d, const char *what);

/* A fresh empty directory under TANDEM_TEST_TMP (or /tmp) named after `tag`;
 * returns a static buffer valid until the next call. */
const char *tdm_test_tmpdir(const char *tag);

/* Writes `text` to DIR/NAME and returns the path: one of 8 static buffers
 * used in turn. Fails the test when the file cannot be written. */
const char *tdm_test_write(const char *dir, const char *name, const char *text);

/* Fails the test unless files a and b hold the same bytes. */
void tdm_test_same_file(const char *a, const char *b);

/* Path of a file under ../shared/data (TANDEM_TEST_DATA); static buffer.
 * Skips the calling test, with a message, when the file is not there. */
const char *tdm_test_data(const char *rel);

/* Exit status that ctest reads as "skipped" (SKIP_RETURN_CODE of every test). */
#define TDM_TEST_SKIPPED 77

/* cmocka reports a test that calls skip() as skipped, but its process exits 0,
 * which ctest reads as passed. So every test file's skip() is counted and its
 * cmocka_run_group_tests returns TDM_TEST_SKIPPED when every test of the group
 * skipped and none failed (a group with some tests skipped still passes, and
 * says how many skipped). Not thread-safe: skip from the test's own thread. */
void tdm_test_count_skip(void);
int tdm_test_run_group(const char *name, const struct CMUnitTest *tests, size_t count,
                       CMFixtureFunction setup, CMFixtureFunction teardown);
#undef skip
#define skip() (tdm_test_count_skip(), _skip(__FILE__, __LINE__))
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(group_tests, group_setup, group_teardown)                    \
    tdm_test_run_group(#group_tests, group_tests, sizeof(group_tests) / sizeof((group_tests)[0]), \
                       group_setup, group_teardown)

#endif
