/* Opening an engine's devices concurrently (engine.c, open_devices): with
 * several devices chosen each opens on a thread of its own, and the engine
 * takes the results in discovery order. Checked: every device opens and the
 * engine's devices are in discovery order; one device's build fails while
 * the others open (the warning names it, exactly as a one-by-one open's
 * would, and the others keep their order); every build fails (the error
 * lists each device in order); two identical devices write the same
 * program-binary cache entry at once (one entry, no temporary file left,
 * both devices read it back on the next open). Each case runs a few rounds
 * to give a race a chance. PoCL is asked for two devices (POCL_DEVICES). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "runtime/selfcheck.h"
#include "testutil.h"

enum { ROUNDS = 3 };

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

static tdm_engine *open_with(int cache_mode, const char *cache_dir, int *rc)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "all";
    o.cache_mode = cache_mode;
    o.cache_dir = cache_dir;
    tdm_engine *e = NULL;
    *rc = tdm_engine_open(&o, &e);
    return e;
}

static void skip_unless_two(void)
{
    if (nfound < 2) {
        printf("only %zu device(s): nothing opens concurrently\n", nfound);
        skip();
    }
}

/* The engine's devices are the discovered ones but `broken`, in order. */
static void assert_order(tdm_engine *e, size_t broken)
{
    int k = 0;
    for (size_t i = 0; i < nfound; i++) {
        if (i == broken)
            continue;
        tdm_device *d = tdm_engine_device(e, k);
        assert_non_null(d);
        if (d->id != found[i].device)
            fail_msg("engine device %d should be discovered device [%zu] (%s)", k, i,
                     found[i].info.name);
        k++;
    }
    assert_int_equal(tdm_engine_device_count(e), k);
}

/* The line a one-by-one open writes for device i's failed build. */
static void want_line(size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "device [%zu] %s (%s) skipped: %s: kernel build failed", i,
             found[i].info.name, found[i].info.platform, tdm_strerror(TDM_ERR_BUILD));
}

static void all_open_in_discovery_order(void **state)
{
    (void)state;
    skip_unless_two();
    for (int r = 0; r < ROUNDS; r++) {
        int rc;
        tdm_engine *e = open_with(TDM_CACHE_DEFAULT, NULL, &rc);
        if (rc != TDM_OK)
            fail_msg("open: %s", tdm_last_error());
        assert_string_equal(tdm_engine_warnings(e), "");
        assert_order(e, (size_t)-1);
        char report[1024];
        if (tdm_engine_selfcheck(e, report, sizeof report) != TDM_OK)
            fail_msg("selfcheck: %s", tdm_last_error());
        tdm_engine_close(e);
    }
}

/* Device `broken` fails its build while the others build beside it. */
static void one_fails(size_t broken)
{
    for (int r = 0; r < ROUNDS; r++) {
        tdm_test_break_build(found[broken].device);
        int rc;
        tdm_engine *e = open_with(TDM_CACHE_DEFAULT, NULL, &rc);
        tdm_test_break_build(NULL);
        if (rc != TDM_OK)
            fail_msg("open with device [%zu] broken: %s", broken, tdm_last_error());
        assert_string_equal(tdm_last_error(), "");
        assert_order(e, broken);
        const char *w = tdm_engine_warnings(e);
        char want[512];
        want_line(broken, want, sizeof want);
        if (strncmp(w, want, strlen(want)) != 0 || !strstr(w, "broken on purpose"))
            fail_msg("the warning should start \"%s\" and hold the log, got: %s", want, w);
        if (strstr(w, "\ndevice ["))
            fail_msg("one device failed, the warnings name more: %s", w);
        char report[1024];
        if (tdm_engine_selfcheck(e, report, sizeof report) != TDM_OK)
            fail_msg("selfcheck of the devices left: %s", tdm_last_error());
        tdm_engine_close(e);
    }
}

static void first_fails_others_open(void **state)
{
    (void)state;
    skip_unless_two();
    one_fails(0);
}

static void last_fails_others_open(void **state)
{
    (void)state;
    skip_unless_two();
    one_fails(nfound - 1);
}

static void every_fail_listed_in_order(void **state)
{
    (void)state;
    skip_unless_two();
    for (int r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < nfound; i++)
            tdm_test_break_build(found[i].device);
        int rc;
        tdm_engine *e = open_with(TDM_CACHE_DEFAULT, NULL, &rc);
        tdm_test_break_build(NULL);
        assert_null(e);
        assert_int_equal(rc, TDM_ERR_BUILD);
        const char *msg = tdm_last_error(), *at = msg;
        const char *head = "no selected device could be opened:\n";
        if (strncmp(msg, head, strlen(head)) != 0)
            fail_msg("the error should start \"%s\": %s", head, msg);
        for (size_t i = 0; i < nfound; i++) {
            char want[512];
            want_line(i, want, sizeof want);
            const char *p = strstr(at, want);
            if (!p)
                fail_msg("device [%zu]'s line missing or out of order: %s", i, msg);
            at = p + strlen(want);
        }
    }
}

/* Entries (*.clbin) and leftovers (anything else) in dir. */
static void count_files(const char *dir, int *entries, int *others)
{
    *entries = *others = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        size_t n = strlen(de->d_name);
        if (n > 6 && strcmp(de->d_name + n - 6, ".clbin") == 0)
            ++*entries;
        else
            ++*others;
    }
    closedir(d);
}

/* Two identical devices (POCL_DEVICES="pthread pthread") have one cache
 * key: both store the same entry at once. */
static void same_entry_written_twice(void **state)
{
    (void)state;
    skip_unless_two();
    int same = 0;
    for (size_t i = 1; i < nfound; i++)
        same += !strcmp(found[i].info.name, found[0].info.name) &&
                !strcmp(found[i].info.driver_version, found[0].info.driver_version);
    for (int r = 0; r < ROUNDS; r++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("engine_open_cache"));
        int rc;
        tdm_engine *e = open_with(TDM_CACHE_ALWAYS, dir, &rc);
        if (rc != TDM_OK)
            fail_msg("open, empty cache: %s", tdm_last_error());
        tdm_engine_close(e);
        int entries, others;
        count_files(dir, &entries, &others);
        assert_int_equal(others, 0); /* no temporary file left */
        if (same && entries >= (int)nfound)
            fail_msg("identical devices should share an entry: %d for %zu devices", entries,
                     nfound);
        e = open_with(TDM_CACHE_ALWAYS, dir, &rc);
        if (rc != TDM_OK)
            fail_msg("open, warm cache: %s", tdm_last_error());
        assert_order(e, (size_t)-1);
        for (int i = 0; i < tdm_engine_device_count(e); i++)
            if (tdm_engine_device_cached(e, i) != 1)
                fail_msg("device %d did not come from the cache on the second open", i);
        char report[1024];
        if (tdm_engine_selfcheck(e, report, sizeof report) != TDM_OK)
            fail_msg("selfcheck from the cache: %s", tdm_last_error());
        tdm_engine_close(e);
    }
    if (!same)
        printf("no two identical devices: the shared entry was not exercised\n");
}

int main(void)
{
    /* Before the ICD loader starts PoCL: two CPU devices instead of one. */
    if (!getenv("POCL_DEVICES"))
        setenv("POCL_DEVICES", "pthread pthread", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_open_in_discovery_order),
        cmocka_unit_test(first_fails_others_open),
        cmocka_unit_test(last_fails_others_open),
        cmocka_unit_test(every_fail_listed_in_order),
        cmocka_unit_test(same_entry_written_twice),
    };
    return cmocka_run_group_tests(tests, discover, forget);
}
