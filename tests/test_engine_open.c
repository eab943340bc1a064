/* Opening an engine's devices concurrently (engine.c, open_devices): with
 * several devices chosen each opens on a thread of its own, and the engine
 * takes the results in discovery order. Checked: every device opens and the
 * engine's devices are in discovery order; one device's build fails while
 * the others open (the warning names it, exactly as a one-by-one open's
 * would, and the others keep their order); every build fails (the error
 * lists each device in order); two identical devices write the same
 * program-binary cache entry at once, as their open threads do (one entry,
 * no temporary file left, both devices read it back next time). Each case
 * runs a few rounds to give a race a chance. PoCL is asked for two devices (POCL_DEVICES). */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/program.h"
#include "runtime/runtime.h"
#include "engine/engine_testing.h"
#include "engine/selfcheck.h"
#include "found.h"
#include "testutil.h"

enum { ROUNDS = 3 };

static tdm_engine *open_all(int *rc)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "all";
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
        tdm_engine *e = open_all(&rc);
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
        tdm_engine *e = open_all(&rc);
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
        tdm_engine *e = open_all(&rc);
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

/* One device's tdm_program_get of a small program, started with the other
 * devices' (a barrier), as the engine's open threads run it. A small
 * program rather than kernels.cl: PoCL makes the binary the cache stores by
 * compiling every kernel, minutes for kernels.cl on a cold PoCL cache. */
typedef struct get_job {
    const tdm_found_device *f;
    const tdm_cache_cfg *cache;
    pthread_barrier_t *start;
    cl_context ctx;
    cl_program prog;
    int st, from_cache;
    tdm_err err;
} get_job;

static const char small_src[] = "kernel void tdm_t(global int *a) { a[get_global_id(0)] = 7; }";

static void *get_run(void *arg)
{
    get_job *j = arg;
    pthread_barrier_wait(j->start);
    j->st = tdm_program_get(j->cache, j->ctx, j->f->device, &j->f->info, small_src,
                            sizeof small_src - 1, "-cl-std=CL1.2", &j->prog, &j->from_cache,
                            &j->err);
    return NULL;
}

/* Every device gets the program at once; returns how many came from the cache. */
static int get_all(get_job *jobs, const tdm_cache_cfg *cache)
{
    pthread_t th[8];
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, (unsigned)nfound), 0);
    for (size_t i = 0; i < nfound; i++) {
        jobs[i].cache = cache;
        jobs[i].start = &start;
        assert_int_equal(pthread_create(&th[i], NULL, get_run, &jobs[i]), 0);
    }
    int cached = 0;
    for (size_t i = 0; i < nfound; i++) {
        pthread_join(th[i], NULL);
        if (jobs[i].st != TDM_OK)
            fail_msg("device [%zu]: %s", i, tdm_err_msg(&jobs[i].err));
        cached += jobs[i].from_cache;
        clReleaseProgram(jobs[i].prog);
        tdm_err_clear(&jobs[i].err);
    }
    pthread_barrier_destroy(&start);
    return cached;
}

/* Whether two devices get one cache key (cache.c: the same platform, name,
 * driver and device version). */
static int same_device_kind(const tdm_device_info *a, const tdm_device_info *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->platform, b->platform) &&
           !strcmp(a->driver_version, b->driver_version) &&
           !strcmp(a->device_version, b->device_version);
}

/* Identical devices (POCL_DEVICES="pthread pthread") share a cache key: two
 * opens store the same entry at once. One entry, no temporary file left,
 * and both read it back next time. */
static void same_entry_written_at_once(void **state)
{
    (void)state;
    skip_unless_two();
    if (nfound > 8)
        nfound = 8;
    size_t distinct = 0; /* cache keys: devices that differ in a keyed field */
    for (size_t i = 0; i < nfound; i++) {
        size_t j = 0;
        while (j < i && !same_device_kind(&found[i].info, &found[j].info))
            j++;
        distinct += j == i;
    }
    get_job jobs[8];
    memset(jobs, 0, sizeof jobs);
    for (size_t i = 0; i < nfound; i++) {
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                         (cl_context_properties)found[i].platform, 0};
        cl_int rc;
        jobs[i].f = &found[i];
        jobs[i].ctx = clCreateContext(props, 1, &found[i].device, NULL, NULL, &rc);
        assert_int_equal(rc, CL_SUCCESS);
    }
    for (int r = 0; r < 10; r++) {
        tdm_cache_cfg cache = {.enabled = 1};
        snprintf(cache.dir, sizeof cache.dir, "%s", tdm_test_tmpdir("engine_open_cache"));
        assert_int_equal(get_all(jobs, &cache), 0);
        int entries, others;
        count_files(cache.dir, &entries, &others);
        assert_int_equal(others, 0); /* no temporary file left */
        if (entries != (int)distinct)
            fail_msg("%d entries for %zu kinds of device (%zu devices)", entries, distinct,
                     nfound);
        assert_int_equal(get_all(jobs, &cache), (int)nfound);
    }
    for (size_t i = 0; i < nfound; i++)
        clReleaseContext(jobs[i].ctx);
    if (distinct == nfound)
        printf("no two identical devices: no entry was written twice at once\n");
}

/* Each device's preferred work-group multiple is tdm_first_kernel's, not
 * that of whichever kernel the program lists first: rusticl lists a program
 * read from a binary in a different order in every process, and creating a
 * compressed cursors' kernel there (no_zcur) spun the open for minutes. */
static void wg_multiple_from_first_kernel(void **state)
{
    (void)state;
    int rc;
    tdm_engine *e = open_all(&rc);
    assert_int_equal(rc, TDM_OK);
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_device *d = tdm_engine_device(e, i);
        cl_kernel k = clCreateKernel(d->program, "tdm_first_kernel", &rc);
        assert_int_equal(rc, CL_SUCCESS);
        size_t m = 0;
        assert_int_equal(clGetKernelWorkGroupInfo(k, d->id,
                                                  CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                                  sizeof m, &m, NULL), CL_SUCCESS);
        clReleaseKernel(k);
        if (m == 0 || d->info.preferred_wg_multiple != m)
            fail_msg("%s: preferred multiple %zu, tdm_first_kernel's %zu", d->info.name,
                     d->info.preferred_wg_multiple, m);
    }
    tdm_engine_close(e);
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
        cmocka_unit_test(same_entry_written_at_once),
        cmocka_unit_test(wg_multiple_from_first_kernel),
    };
    return cmocka_run_group_tests(tests, discover, forget);
}
