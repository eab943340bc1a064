/* Options that can grow and settings in one place: struct_size, explicit
 * defaults, out-of-range values as errors naming the field, BM25 b = 0,
 * TANDEM_* variables checked at engine open, and cancellation of the long
 * operations from their progress callbacks with nothing left behind. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/pisa.h"
#include "index/reader.h"
#include "testutil.h"

static char dir[1100], coll[1200];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("errors-options"));
    snprintf(coll, sizeof coll, "%s/coll.txt", dir);
    FILE *f = fopen(coll, "w");
    assert_non_null(f);
    for (int d = 0; d < 400; d++)
        fprintf(f, "d%d\tterm%d common word%d word%d\n", d, d % 13, d % 5, d % 31);
    fclose(f);
    return 0;
}

/* The files in `dir` other than coll.txt and `keep` (a name or NULL). */
static int stray_files(const char *keep)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strcmp(e->d_name, "coll.txt") &&
            (!keep || strncmp(e->d_name, keep, strlen(keep))))
            n++;
    closedir(d);
    return n;
}

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static tdm_index_build_options lines_options(void)
{
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.format = TDM_BUILD_LINES;
    o.stemmer = "none";
    return o;
}

/* ---- engine options and settings */

static void engine_options_need_init(void **state)
{
    (void)state;
    tdm_engine_options o = {0}; /* no struct_size */
    tdm_engine *e = NULL;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
    assert_null(e);
    assert_non_null(strstr(tdm_last_error(), "tdm_engine_options_init"));
    tdm_engine_options_init(&o);
    assert_int_equal(o.struct_size, sizeof o);
    assert_null(o.devices);
    assert_int_equal(o.cache_mode, TDM_CACHE_DEFAULT);
    assert_int_equal(o.nv_shuffle, -1);
    assert_int_equal(o.wg_size, 0);
    o.struct_size = sizeof o + 8; /* from a newer header: options this library lacks */
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
}

static void expect_engine_error(const tdm_engine_options *o, const char *name)
{
    tdm_engine *e = NULL;
    assert_int_equal(tdm_engine_open(o, &e), TDM_ERR_INVALID_ARG);
    assert_null(e);
    if (!strstr(tdm_last_error(), name))
        fail_msg("'%s' does not name %s", tdm_last_error(), name);
}

static void engine_options_out_of_range(void **state)
{
    (void)state;
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.wg_size = 96;
    expect_engine_error(&o, "wg_size");
    tdm_engine_options_init(&o);
    o.wg_size = 8192;
    expect_engine_error(&o, "wg_size");
    tdm_engine_options_init(&o);
    o.nv_shuffle = 2;
    expect_engine_error(&o, "nv_shuffle");
    tdm_engine_options_init(&o);
    o.cache_mode = 9;
    expect_engine_error(&o, "cache_mode");
    tdm_engine_options_init(&o);
    o.codec_groups_per_cu = 1u << 20;
    expect_engine_error(&o, "codec_groups_per_cu");
}

/* Each variable with a bad value fails the open, naming the variable; an
 * option that is set wins over the variable. */
static void environment_is_checked_at_open(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"TANDEM_WG_SIZE", "abc"},  {"TANDEM_WG_SIZE", "100"},
        {"TANDEM_WG_SIZE", "0"},    {"TANDEM_NV_SHUFFLE", "yes"},
        {"TANDEM_CACHE", "maybe"},  {"TANDEM_CODEC_GROUPS_PER_CU", "0"},
        {"TANDEM_CODEC_GROUPS_PER_CU", "12x"},
    };
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *old = getenv(bad[i][0]) ? strdup(getenv(bad[i][0])) : NULL;
        setenv(bad[i][0], bad[i][1], 1);
        expect_engine_error(&o, bad[i][0]);
        if (old)
            setenv(bad[i][0], old, 1);
        else
            unsetenv(bad[i][0]);
        free(old);
    }
    /* The option is used, the variable not read: the open gets past the
     * settings (it may still fail for want of a device, not for the variable). */
    setenv("TANDEM_WG_SIZE", "abc", 1);
    o.wg_size = 64;
    o.devices = "no-such-device-anywhere";
    tdm_engine *e = NULL;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_NO_DEVICE);
    assert_null(strstr(tdm_last_error(), "TANDEM_WG_SIZE"));
    unsetenv("TANDEM_WG_SIZE");
}

/* ---- build options */

static void expect_build_error(const tdm_index_build_options *o, const char *field)
{
    char out[1300];
    path_of(out, sizeof out, "bad.idx");
    const char *in[] = {coll};
    assert_int_equal(tdm_index_build(in, 1, out, o), TDM_ERR_INVALID_ARG);
    if (!strstr(tdm_last_error(), field))
        fail_msg("'%s' does not name %s", tdm_last_error(), field);
    assert_int_not_equal(access(out, F_OK), 0);
}

static void build_options_out_of_range(void **state)
{
    (void)state;
    tdm_index_build_options o = lines_options();
    o.k1 = -0.5;
    expect_build_error(&o, "k1");
    o = lines_options();
    o.k1 = NAN;
    expect_build_error(&o, "k1");
    o = lines_options();
    o.k1 = INFINITY;
    expect_build_error(&o, "k1");
    o = lines_options();
    o.k1 = 1e308; /* finite, but every bound and score inf (TDM_BM25_K1_MAX) */
    expect_build_error(&o, "k1 = 1e+308: must lie in [0, 100]");
    o = lines_options();
    o.b = 1.01;
    expect_build_error(&o, "b = ");
    o = lines_options();
    o.b = -0.01;
    expect_build_error(&o, "b = ");
    o = lines_options();
    o.b = NAN;
    expect_build_error(&o, "b = ");
    o = lines_options();
    o.memory_mb = 0;
    expect_build_error(&o, "memory_mb");
    o = lines_options();
    o.format = 42;
    expect_build_error(&o, "format");
    o = lines_options();
    o.codec = "nope";
    expect_build_error(&o, "nope");
    o = lines_options();
    o.struct_size = 0;
    expect_build_error(&o, "tdm_index_build_options_init");
    tdm_index_build_options_init(&o);
    assert_int_equal(o.memory_mb, 512);
    assert_true(o.k1 == 1.2 && o.b == 0.75);
    assert_string_equal(o.codec, "bp128");
    assert_string_equal(o.stemmer, "english");
}

/* b = 0 (no length normalisation) and k1 = 0 are values, not "the default". */
static void build_keeps_b_zero(void **state)
{
    (void)state;
    char out[1300];
    path_of(out, sizeof out, "b0.idx");
    tdm_index_build_options o = lines_options();
    o.b = 0;
    o.k1 = 0;
    const char *in[] = {coll};
    if (tdm_index_build(in, 1, out, &o) != TDM_OK)
        fail_msg("build: %s", tdm_last_error());
    tdm_index *ix;
    assert_int_equal(tdm_index_open(out, &ix), TDM_OK);
    tdm_index_stats st;
    assert_int_equal(tdm_index_stats_get(ix, &st), TDM_OK);
    assert_true(st.b == 0.0);
    assert_true(st.k1 == 0.0);
    assert_int_equal(tdm_index_verify(ix), TDM_OK); /* bounds agree with b = 0 */
    tdm_index_close(ix);
    unlink(out);
}

static int calls;

static int cancel_at(void *user, const tdm_index_build_progress *p)
{
    calls++;
    return p->phase >= *(const int *)user;
}

static void build_cancels_without_leftovers(void **state)
{
    (void)state;
    char out[1300];
    path_of(out, sizeof out, "cancel.idx");
    const char *in[] = {coll};
    for (int phase = 0; phase <= 1; phase++) {
        tdm_index_build_options o = lines_options();
        o.memory_mb = 1;
        o.progress = cancel_at;
        o.progress_user = &phase;
        calls = 0;
        assert_int_equal(tdm_index_build(in, 1, out, &o), TDM_ERR_CANCELLED);
        assert_int_equal(tdm_last_status(), TDM_ERR_CANCELLED);
        assert_non_null(strstr(tdm_last_error(), "cancelled"));
        assert_true(calls >= 1);
        assert_int_equal(stray_files(NULL), 0);
    }
    /* A callback that returns 0 builds the index as usual. */
    int never = 99;
    tdm_index_build_options o = lines_options();
    o.progress = cancel_at;
    o.progress_user = &never;
    assert_int_equal(tdm_index_build(in, 1, out, &o), TDM_OK);
    assert_string_equal(tdm_last_error(), "");
    unlink(out);
}

/* ---- import */

static int import_calls;

static int import_cancel(void *user, const tdm_index_import_progress *p)
{
    import_calls++;
    return p->lists_done >= *(const uint64_t *)user;
}

static void import_options_and_cancel(void **state)
{
    (void)state;
    char idx[1300], base[1300], out[1300];
    path_of(idx, sizeof idx, "src.idx");
    path_of(base, sizeof base, "pisa");
    path_of(out, sizeof out, "imported.idx");
    tdm_index_build_options bo = lines_options();
    const char *in[] = {coll};
    assert_int_equal(tdm_index_build(in, 1, idx, &bo), TDM_OK);
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    assert_int_equal(tdm_ireader_open(idx, &r, &err), TDM_OK);
    assert_int_equal(tdm_pisa_export(r, base, &err), TDM_OK);
    tdm_ireader_close(r);
    unlink(idx);

    tdm_index_import_options o;
    tdm_index_import_options_init(&o);
    o.format = TDM_IMPORT_PISA;
    o.b = 1.5;
    assert_int_equal(tdm_index_import(base, out, &o), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "b = "));
    o.b = 0;
    uint64_t at = 0;
    o.progress = import_cancel;
    o.progress_user = &at;
    assert_int_equal(tdm_index_import(base, out, &o), TDM_ERR_CANCELLED);
    assert_non_null(strstr(tdm_last_error(), "cancelled"));
    assert_int_not_equal(access(out, F_OK), 0);
    assert_int_equal(stray_files("pisa."), 0);
    at = UINT64_MAX;
    import_calls = 0;
    assert_int_equal(tdm_index_import(base, out, &o), TDM_OK);
    assert_true(import_calls >= 2); /* at the start and at the end */
    tdm_index *ix;
    assert_int_equal(tdm_index_open(out, &ix), TDM_OK);
    tdm_index_stats st;
    assert_int_equal(tdm_index_stats_get(ix, &st), TDM_OK);
    assert_true(st.b == 0.0);
    assert_int_equal(st.documents, 400);
    tdm_index_close(ix);
    o.format = 7;
    assert_int_equal(tdm_index_import(base, out, &o), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "format"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(engine_options_need_init),
        cmocka_unit_test(engine_options_out_of_range),
        cmocka_unit_test(environment_is_checked_at_open),
        cmocka_unit_test(build_options_out_of_range),
        cmocka_unit_test(build_keeps_b_zero),
        cmocka_unit_test(build_cancels_without_leftovers),
        cmocka_unit_test(import_options_and_cancel),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
