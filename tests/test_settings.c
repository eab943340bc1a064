/* The environment read once (runtime/settings.c): every variable's garbage
 * refused with a message naming the variable and what it accepts, good
 * values taken into the settings the code paths read, empty as unset, and
 * an engine open failing on a bad switch before it looks for a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/settings.h"
#include "testutil.h"

/* Clears every documented variable, so that each case sees only its own. */
static int clear_env(void **state)
{
    (void)state;
    size_t n;
    const tdm_settings_var *v = tdm_settings_vars(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, "TANDEM_CACHE_DIR") != 0) /* the tests' own cache */
            unsetenv(v[i].name);
    return 0;
}

/* Resolves with default options; the return code, *s resolved on TDM_OK. */
static int resolve(tdm_settings *s, tdm_err *err)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    return tdm_settings_resolve(&o, s, err);
}

static void expect_refused(const char *var, const char *value)
{
    tdm_settings s;
    tdm_err err = {0};
    setenv(var, value, 1);
    int rc = resolve(&s, &err);
    unsetenv(var);
    if (rc == TDM_OK) {
        tdm_settings_free(&s);
        fail_msg("%s=%s was taken", var, value);
    }
    assert_int_equal(rc, TDM_ERR_INVALID_ARG);
    const char *m = tdm_err_msg(&err);
    if (!strstr(m, var) || !strstr(m, "expected"))
        fail_msg("%s=%s: '%s' does not name the variable and what it accepts", var, value, m);
    tdm_err_clear(&err);
}

/* Variables whose value is free text checked by their users (a device spec
 * at selection, a directory, the scheduler's test switches at
 * tdm_search_open, `tandem bench load`'s test switch, which the CLI
 * checks): garbage is not refused at resolve. */
static int free_text(const char *name)
{
    static const char *const names[] = {"TANDEM_DEVICES", "TANDEM_CACHE_DIR", "TANDEM_LANE_KINDS",
                                        "TANDEM_FAULT_INJECT", "TANDEM_BENCH_LOAD_CORRUPT"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i]))
            return 1;
    return 0;
}

/* Every documented variable but the free-text ones refuses garbage, naming
 * itself: a variable added to the table is checked without a new case. */
static void every_variable_refuses_garbage(void **state)
{
    (void)state;
    size_t n;
    const tdm_settings_var *v = tdm_settings_vars(&n);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++) {
        if (free_text(v[i].name))
            continue;
        expect_refused(v[i].name, "garbage!");
        expect_refused(v[i].name, "-1");
        expect_refused(v[i].name, " 1");
    }
}

/* The 13 that once took anything: near misses refused too. */
static void near_misses_refused(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"TANDEM_BATCH_QUEUE", "yes"},         {"TANDEM_BATCH_QUEUE", "1"},
        {"TANDEM_BATCH_WAIT", "on"},           {"TANDEM_BATCH_WAIT", "sleeps"},
        {"TANDEM_BATCH_UPLOAD", "transfer"},       {"TANDEM_BATCH_UPLOAD", "1"},
        {"TANDEM_BATCH_BOUNDS", "gpu"},        {"TANDEM_BATCH_AND", "wuu"},
        {"TANDEM_QUERY_BOUNDS", "stored"},     {"TANDEM_QUERY_BOUNDS", "1"},
        {"TANDEM_BOUNDS_CACHE_MB", "64M"},     {"TANDEM_BOUNDS_CACHE_MB", "1.5"},
        {"TANDEM_BOUNDS_CACHE_MB", "99999999999999999999999"},
        {"TANDEM_ZR_SEED", "2"},               {"TANDEM_ZR_SEED", "on"},
        {"TANDEM_SEED", "2"},                  {"TANDEM_SEED", "01x"},
        {"TANDEM_GPU_MIN_RLEN", "0"},          {"TANDEM_GPU_MIN_RLEN", "1048577"},
        {"TANDEM_GPU_ZGROUPS_PER_CU", "0"},    {"TANDEM_GPU_ZGROUPS_PER_CU", "65"},
        {"TANDEM_DECODE_VARIANT", "warp"},     {"TANDEM_CPU_RANGES_PER_CU", "1025"},
        {"TANDEM_CPU_RANGES_PER_CU", "4x"},    {"TANDEM_BATCH_RANGES_PER_CU", "65537"},
        {"TANDEM_BATCH_RANGES_PER_CU", "0"},   {"TANDEM_STAGING", "0"},
        {"TANDEM_BATCH_MERGE_KEYS", "0"},      {"TANDEM_BATCH_MERGE_KEYS", "16777217"},
        {"TANDEM_BATCH_MIN_PART", "0"},        {"TANDEM_BATCH_MIN_PART", "65537"},
        {"TANDEM_BATCH_MAX_K", "0"},           {"TANDEM_BATCH_MAX_K", "65537"},
        {"TANDEM_BATCH_MERGE_RLEN", "0"},      {"TANDEM_BATCH_MERGE_RLEN", "1073741825"},
        {"TANDEM_MERGE_DIRECT_KEYS", "16777217"}, {"TANDEM_MERGE_DIRECT_KEYS", "-1"},
        {"TANDEM_MERGE_DIRECT_KEYS", "16k"},    {"TANDEM_MERGE_FILTER", "1"},
        {"TANDEM_MERGE_FILTER", "radix"},     {"TANDEM_MERGE_SMALL", "2"},
        {"TANDEM_RANGE_SELECT", "fused"},
        {"TANDEM_BATCH_ALONE_THREADS", "0"},   {"TANDEM_BATCH_ALONE_THREADS", "65"},
        {"TANDEM_BATCH_OR_ALONE_TERMS", "0"},  {"TANDEM_BATCH_OR_ALONE_TERMS", "65537"},
        {"TANDEM_RUN_QUEUES", "per_run"},      {"TANDEM_RUN_QUEUES", "1"},
        {"TANDEM_HOST_MAX_POSTINGS", "-1"},    {"TANDEM_HOST_MAX_POSTINGS", "8k"},
        {"TANDEM_HOST_MAX_POSTINGS", "4611686018427387905"},
        {"TANDEM_STAGING", "17"},              {"TANDEM_STAGING", "3,0"},
        {"TANDEM_STAGING", "3,257"},           {"TANDEM_STAGING", "3x"},
        {"TANDEM_STAGING", "3,1,2"},           {"TANDEM_STAGING", "3,"},
        {"TANDEM_SEARCH_PROFILE", "2"},        {"TANDEM_SEARCH_PROFILE", "yes"},
        {"TANDEM_SEARCH_VARIANT", "auto"},     {"TANDEM_ZR_LAYOUT", "ranges"},
        {"TANDEM_POLICY", "fastest"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_refused(bad[i][0], bad[i][1]);
}

/* One good value of a variable: what the settings then hold. */
typedef struct good {
    const char *var, *value;
    size_t offset; /* into tdm_tuning */
    int is_size;   /* a size_t field, else int or uint32_t (all 4 bytes) */
    long long want;
} good;

#define T(field) offsetof(tdm_tuning, field)

static long long field(const tdm_tuning *t, const good *g)
{
    const char *p = (const char *)t + g->offset;
    if (g->is_size)
        return (long long)*(const size_t *)p;
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void good_values_taken(void **state)
{
    (void)state;
    static const good cases[] = {
        {"TANDEM_SEARCH_VARIANT", "item", T(search_variant), 0, TDM_VARIANT_ITEM},
        {"TANDEM_SEARCH_VARIANT", "group", T(search_variant), 0, TDM_VARIANT_GROUP},
        {"TANDEM_SEARCH_VARIANT", "compressed", T(search_variant), 0, TDM_VARIANT_COMPRESSED},
        {"TANDEM_ZR_LAYOUT", "range", T(zr_layout), 0, TDM_TUNE_ZR_RANGE},
        {"TANDEM_ZR_LAYOUT", "interleaved", T(zr_layout), 0, TDM_TUNE_ZR_INTERLEAVED},
        {"TANDEM_SEED", "0", T(seed), 0, TDM_TUNE_OFF},
        {"TANDEM_SEED", "1", T(seed), 0, TDM_TUNE_ON},
        {"TANDEM_ZR_SEED", "0", T(zr_seed), 0, TDM_TUNE_OFF},
        {"TANDEM_ZR_SEED", "1", T(zr_seed), 0, TDM_TUNE_ON},
        {"TANDEM_GPU_MIN_RLEN", "1", T(gpu_min_rlen), 0, 1},
        {"TANDEM_GPU_MIN_RLEN", "1048576", T(gpu_min_rlen), 0, 1048576},
        {"TANDEM_GPU_ZGROUPS_PER_CU", "64", T(gpu_zgroups_per_cu), 0, 64},
        {"TANDEM_CPU_RANGES_PER_CU", "1024", T(cpu_ranges_per_cu), 0, 1024},
        {"TANDEM_BATCH_RANGES_PER_CU", "65536", T(batch_ranges_per_cu), 0, 65536},
        {"TANDEM_BATCH_MERGE_KEYS", "1", T(batch_merge_keys), 0, 1},
        {"TANDEM_BATCH_MIN_PART", "65536", T(batch_min_part), 0, 65536},
        {"TANDEM_BATCH_MAX_K", "1000", T(batch_max_k), 0, 1000},
        {"TANDEM_BATCH_MERGE_RLEN", "1073741824", T(batch_merge_rlen), 0, 1073741824},
        {"TANDEM_BATCH_MERGE_KEYS", "16777216", T(batch_merge_keys), 0, 16777216},
        {"TANDEM_MERGE_DIRECT_KEYS", "0", T(merge_direct_keys), 0, 0},
        {"TANDEM_MERGE_DIRECT_KEYS", "1", T(merge_direct_keys), 0, 1},
        {"TANDEM_MERGE_DIRECT_KEYS", "65536", T(merge_direct_keys), 0, 65536},
        {"TANDEM_MERGE_DIRECT_KEYS", "16777216", T(merge_direct_keys), 0, 16777216},
        {"TANDEM_MERGE_FILTER", "on", T(merge_filter), 0, TDM_TUNE_ON},
        {"TANDEM_MERGE_FILTER", "off", T(merge_filter), 0, TDM_TUNE_OFF},
        {"TANDEM_MERGE_SMALL", "on", T(merge_small), 0, TDM_TUNE_ON},
        {"TANDEM_MERGE_SMALL", "off", T(merge_small), 0, TDM_TUNE_OFF},
        {"TANDEM_RANGE_SELECT", "on", T(range_select), 0, TDM_TUNE_ON},
        {"TANDEM_RANGE_SELECT", "off", T(range_select), 0, TDM_TUNE_OFF},
        {"TANDEM_DECODE_VARIANT", "group", T(decode_variant), 0, TDM_TUNE_DECODE_GROUP},
        {"TANDEM_DECODE_VARIANT", "serial", T(decode_variant), 0, TDM_TUNE_DECODE_SERIAL},
        {"TANDEM_BATCH_AND", "wu", T(batch_and), 0, TDM_TUNE_AND_WU},
        {"TANDEM_BATCH_AND", "range", T(batch_and), 0, TDM_TUNE_AND_RANGE},
        {"TANDEM_BATCH_BOUNDS", "device", T(batch_bounds), 0, TDM_TUNE_BOUNDS_DEVICE},
        {"TANDEM_BATCH_BOUNDS", "host", T(batch_bounds), 0, TDM_TUNE_BOUNDS_HOST},
        {"TANDEM_BATCH_QUEUE", "on", T(batch_queue), 0, TDM_TUNE_ON},
        {"TANDEM_BATCH_QUEUE", "off", T(batch_queue), 0, TDM_TUNE_OFF},
        {"TANDEM_BATCH_WAIT", "spin", T(batch_wait), 0, TDM_TUNE_OFF},
        {"TANDEM_BATCH_WAIT", "sleep", T(batch_wait), 0, TDM_TUNE_ON},
        {"TANDEM_BATCH_UPLOAD", "pageable", T(batch_upload), 0, TDM_TUNE_UPLOAD_PAGEABLE},
        {"TANDEM_BATCH_UPLOAD", "Pinned", T(batch_upload), 0, TDM_TUNE_UPLOAD_PINNED},
        {"TANDEM_HOST_MAX_POSTINGS", "0", T(host_max_postings), 1, 0},
        {"TANDEM_HOST_MAX_POSTINGS", "4611686018427387904", T(host_max_postings), 1,
         4611686018427387904ll},
        {"TANDEM_BOUNDS_CACHE_MB", "0", T(bounds_cache_mb), 1, 0},
        {"TANDEM_BOUNDS_CACHE_MB", "128", T(bounds_cache_mb), 1, 128},
        {"TANDEM_STAGING", "3", T(staging_workers), 0, 3},
        {"TANDEM_STAGING", "3", T(staging_chunk_mb), 0, 8},
        {"TANDEM_STAGING", "16,256", T(staging_workers), 0, 16},
        {"TANDEM_STAGING", "16,256", T(staging_chunk_mb), 0, 256},
        {"TANDEM_SEARCH_PROFILE", "1", T(search_profile), 0, 1},
        {"TANDEM_SEARCH_PROFILE", "host", T(search_profile), 0, 2},
        {"TANDEM_SEARCH_PROFILE", "0", T(search_profile), 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const good *g = &cases[i];
        tdm_settings s;
        tdm_err err = {0};
        setenv(g->var, g->value, 1);
        int rc = resolve(&s, &err);
        unsetenv(g->var);
        if (rc != TDM_OK)
            fail_msg("%s=%s refused: %s", g->var, g->value, tdm_err_msg(&err));
        if (field(&s.tuning, g) != g->want)
            fail_msg("%s=%s gave %lld, want %lld", g->var, g->value, field(&s.tuning, g),
                     g->want);
        if (!strcmp(g->var, "TANDEM_BOUNDS_CACHE_MB"))
            assert_int_equal(s.tuning.bounds_cache_set, 1);
        if (!strcmp(g->var, "TANDEM_HOST_MAX_POSTINGS")) /* 0 is never, not the row's */
            assert_int_equal(s.tuning.host_max_set, 1);
        tdm_settings_free(&s);
    }
}

/* Unset and empty are the rules: every switch 0, as for a device made by
 * hand (tdm_settings_tuning(NULL)). */
static void unset_and_empty_are_the_rules(void **state)
{
    (void)state;
    static const tdm_tuning zero;
    tdm_settings s;
    tdm_err err = {0};
    assert_int_equal(resolve(&s, &err), TDM_OK);
    assert_memory_equal(&s.tuning, &zero, sizeof zero);
    tdm_settings_free(&s);
    size_t n;
    const tdm_settings_var *v = tdm_settings_vars(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, "TANDEM_CACHE_DIR") != 0)
            setenv(v[i].name, "", 1);
    assert_int_equal(resolve(&s, &err), TDM_OK);
    assert_memory_equal(&s.tuning, &zero, sizeof zero);
    assert_string_equal(s.devices, "all");
    tdm_settings_free(&s);
    clear_env(NULL);
    assert_memory_equal(tdm_settings_tuning(NULL), &zero, sizeof zero);
}

/* Where the device spec came from, for its errors. */
static void devices_name_their_source(void **state)
{
    (void)state;
    tdm_settings s;
    tdm_err err = {0};
    assert_int_equal(resolve(&s, &err), TDM_OK);
    assert_string_equal(s.devices_from, "device selection");
    tdm_settings_free(&s);
    setenv("TANDEM_DEVICES", "gpu", 1);
    assert_int_equal(resolve(&s, &err), TDM_OK);
    assert_string_equal(s.devices_from, "TANDEM_DEVICES");
    tdm_settings_free(&s);
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "cpu";
    assert_int_equal(tdm_settings_resolve(&o, &s, &err), TDM_OK);
    assert_string_equal(s.devices_from, "engine option devices");
    assert_string_equal(s.devices, "cpu");
    tdm_settings_free(&s);
    unsetenv("TANDEM_DEVICES");
}

/* Through the public call: the open fails on the switch, naming it, before
 * any device is looked for (the selection names no device there is). */
static void engine_open_refuses_a_bad_switch(void **state)
{
    (void)state;
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "no-such-device-anywhere";
    setenv("TANDEM_BATCH_QUEUE", "sometimes", 1);
    tdm_engine *e = NULL;
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_INVALID_ARG);
    assert_null(e);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_BATCH_QUEUE=sometimes: expected on or off"));
    unsetenv("TANDEM_BATCH_QUEUE");
    assert_int_equal(tdm_engine_open(&o, &e), TDM_ERR_NO_DEVICE);
    assert_null(strstr(tdm_last_error(), "TANDEM_BATCH_QUEUE"));
    assert_non_null(strstr(tdm_last_error(), "engine option devices 'no-such-device-anywhere'"));
}

/* The table: names unique, each with a group and a description. */
static void table_is_well_formed(void **state)
{
    (void)state;
    size_t n;
    const tdm_settings_var *v = tdm_settings_vars(&n);
    for (size_t i = 0; i < n; i++) {
        assert_true(!strncmp(v[i].name, "TANDEM_", 7));
        assert_true(v[i].group && *v[i].group && v[i].help && *v[i].help);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(v[i].name, v[j].name))
                fail_msg("%s listed twice", v[i].name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(every_variable_refuses_garbage, clear_env),
        cmocka_unit_test_setup(near_misses_refused, clear_env),
        cmocka_unit_test_setup(good_values_taken, clear_env),
        cmocka_unit_test_setup(unset_and_empty_are_the_rules, clear_env),
        cmocka_unit_test_setup(devices_name_their_source, clear_env),
        cmocka_unit_test_setup(engine_open_refuses_a_bad_switch, clear_env),
        cmocka_unit_test_setup(table_is_well_formed, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
