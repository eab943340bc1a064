/* The program-binary cache: a hit on the second open, recovery from corrupt,
 * truncated and foreign entries, and the off switch. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "common/fsutil.h"
#include "runtime/runtime.h"
#include "testutil.h"

/* A program of one small kernel: the cache handles every program alike, and
 * fetching a binary makes PoCL compile every kernel of the program, which for
 * the whole of kernels.cl takes minutes on a loaded 2-core machine. The real
 * program's cached builds are exercised by every other kernel test. */
static const char small_source[] =
    "__kernel void tdm_cache_probe(__global uint *x)\n"
    "{ x[get_global_id(0)] = (uint)get_global_id(0) * 3u + TDM_WG_SIZE; }\n";

/* Runs the small kernel on d and checks what it wrote. */
static void check_kernel_runs(tdm_device *d)
{
    enum { N = 1000 };
    uint32_t got[N];
    tdm_err err = {0};
    cl_mem buf;
    assert_int_equal(tdm_buffer_create(d, CL_MEM_WRITE_ONLY, sizeof got, NULL, &buf, &err),
                     TDM_OK);
    tdm_karg args[] = {TDM_KARG_MEM(&buf)};
    cl_event k;
    if (tdm_kernel_launch(d, "tdm_cache_probe", args, 1, N, 1, 0, NULL, &k, &err) != TDM_OK ||
        tdm_download(d, buf, 0, sizeof got, got, 1, &k, NULL, &err) != TDM_OK)
        fail_msg("the cached program: %s", tdm_err_msg(&err));
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(got[i], i * 3u + d->wg_size);
    clReleaseEvent(k);
    clReleaseMemObject(buf);
}

/* Opens an engine on device 0 with the cache forced on in `dir`; returns
 * whether its program came from the cache, after checking that it works. */
static int open_cached(const char *dir, int mode)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "0";
    o.cache_dir = dir;
    o.cache_mode = mode;
    o.kernel_source = small_source;
    tdm_engine *e = NULL;
    int rc = tdm_engine_open(&o, &e);
    if (rc != TDM_OK)
        fail_msg("open: %s", tdm_last_error());
    check_kernel_runs(tdm_engine_device(e, 0));
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
