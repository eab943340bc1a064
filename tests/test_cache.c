/* The program-binary cache: a hit on the second open, recovery from corrupt,
 * truncated and foreign entries, and the off switch. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "testutil.h"

/* Opens an engine on device 0 with the cache forced on in `dir`; returns
 * whether its program came from the cache, after checking that it works. */
static int open_cached(const char *dir, int mode)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "0";
    o.cache_dir = dir;
    o.cache_mode = mode;
    tdm_engine *e = NULL;
    int rc = tdm_engine_open(&o, &e);
    if (rc != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    assert_int_equal(tdm_engine_selfcheck(e, NULL, 0), TDM_OK);
    int cached = tdm_engine_device_cached(e, 0);
    tdm_engine_close(e);
    return cached;
}

/* The one entry in dir (fails if there is not exactly one). */
static void entry_in(const char *dir, char *path, size_t len)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (strstr(de->d_name, ".clbin")) {
            snprintf(path, len, "%s/%s", dir, de->d_name);
            found++;
        }
    }
    closedir(d);
    assert_int_equal(found, 1);
}

static void rewrite(const char *path, size_t keep, int flip_at)
{
    size_t n = 0;
    unsigned char *buf = tdm_read_file(path, &n);
    assert_non_null(buf);
    if (flip_at >= 0 && (size_t)flip_at < n)
        buf[flip_at] ^= 0x5a;
    const void *parts[] = {buf};
    size_t sizes[] = {keep < n ? keep : n};
    assert_int_equal(tdm_write_file_atomic(path, parts, sizes, 1), 0);
    free(buf);
}

static void hit_on_second_open(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("cache-hit");
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 0);
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 1);
}

static void recovers_from_damage(void **state)
{
    (void)state;
    char dir[1024], path[1400];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("cache-damage"));
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 0);
    entry_in(dir, path, sizeof path);
    rewrite(path, (size_t)-1, 100); /* a flipped payload byte */
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 0);
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 1); /* rewritten whole */
    rewrite(path, 50, -1);                                   /* truncated header+ */
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 0);
    rewrite(path, (size_t)-1, 2); /* bad magic */
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 0);
    assert_int_equal(open_cached(dir, TDM_CACHE_ALWAYS), 1);
}

static void off_writes_nothing(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("cache-off"));
    assert_int_equal(open_cached(dir, TDM_CACHE_OFF), 0);
    assert_int_equal(open_cached(dir, TDM_CACHE_OFF), 0);
    DIR *d = opendir(dir);
    int files = 0;
    for (struct dirent *de; (de = readdir(d));)
        files += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(files, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hit_on_second_open),
        cmocka_unit_test(recovers_from_damage),
        cmocka_unit_test(off_writes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
