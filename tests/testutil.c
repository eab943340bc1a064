#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "common/fsutil.h"
#include "runtime/runtime.h"

int tdm_test_small(void)
{
    const char *s = getenv("TANDEM_TEST_SMALL");
    return s && *s && strcmp(s, "0") != 0;
}

tdm_engine *tdm_test_engine(void) { return tdm_test_engine_with(NULL); }

tdm_engine *tdm_test_engine_with(const tdm_engine_options *o)
{
    tdm_engine *e = NULL;
    int rc = tdm_engine_open(o, &e);
    if (rc != TDM_OK)
        fail_msg("tdm_engine_open: %s: %s", tdm_strerror(rc), tdm_last_error());
    return e;
}

void tdm_test_pocl_devices(void)
{
    const char *v = getenv("TANDEM_TEST_POCL_DEVICES");
    if (v && *v)
        setenv("POCL_DEVICES", v, 1);
}

int tdm_test_zcur(tdm_engine *e, int d, const char *what)
{
    const tdm_device *dev = tdm_engine_device(e, d);
    if (!dev || !dev->no_zcur)
        return 1;
    printf("[ SKIPPED  ] %s: the compressed variant on device %d (%s, %s): its kernels are "
           "not run there (no_zcur); a decoded variant's answer is checked instead\n",
           what, d, dev->info.platform, dev->info.name);
    fflush(stdout);
    return 0;
}

const char *tdm_test_write(const char *dir, const char *name, const char *text)
{
    static char buf[8][1024];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return p;
}

void tdm_test_same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *x = tdm_read_file(a, &na), *y = tdm_read_file(b, &nb);
    if (!x || !y)
        fail_msg("cannot read %s", x ? b : a);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x);
    free(y);
}

tdm_engine *tdm_test_two_devices(tdm_engine *e)
{
    if (tdm_engine_device_count(e) >= 2)
        return e;
    tdm_engine_close(e);
    print_message("only one device: set POCL_DEVICES=\"pthread pthread\"\n");
    return NULL;
}

const char *tdm_test_tmpdir(const char *tag)
{
    static char buf[1024];
    const char *base = getenv("TANDEM_TEST_TMP");
    snprintf(buf, sizeof buf, "%s/%s.%ld", base && *base ? base : "/tmp", tag, (long)getpid());
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", buf);
    if (system(cmd) != 0 || tdm_mkdirs(buf) != 0)
        fail_msg("cannot create %s", buf);
    return buf;
}

const char *tdm_test_data(const char *rel)
{
    static char buf[1024];
    const char *base = getenv("TANDEM_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/%s", base && *base ? base : "../shared/data", rel);
    if (access(buf, R_OK) != 0) { /* e.g. on a machine that has only the repository */
        print_message("skipped: %s is missing\n", buf);
        skip();
    }
    return buf;
}

static size_t skipped;

void tdm_test_count_skip(void) { skipped++; }

int tdm_test_run_group(const char *name, const struct CMUnitTest *tests, size_t count,
                       CMFixtureFunction setup, CMFixtureFunction teardown)
{
    skipped = 0;
    int failed = _cmocka_run_group_tests(name, tests, count, setup, teardown);
    if (failed != 0 || skipped == 0)
        return failed;
    if (skipped >= count) {
        print_message("%s: all %zu tests skipped\n", name, count);
        return TDM_TEST_SKIPPED;
    }
    print_message("%s: %zu of %zu tests skipped, the others passed\n", name, skipped, count);
    return 0;
}
