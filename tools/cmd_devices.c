/* `tandem devices` and `tandem selfcheck`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "runtime/icdhint.h"
#include "runtime/runtime.h"

static void print_table(const tdm_device_info *d, size_t n)
{
    printf("%-3s %-12s %-28s %-44s %-10s %5s %6s %9s %7s %6s %4s %-14s\n", "#", "type",
           "platform", "device", "driver", "CUs", "MHz", "global", "local", "maxWG",
           "mult", "OpenCL C");
    for (size_t i = 0; i < n; i++)
        printf("%-3d %-12s %-28.28s %-44.44s %-10.10s %5u %6u %7.1fGB %5lluKB %6zu %4zu %-14s\n",
               d[i].index, tdm_device_type_name(d[i].type), d[i].platform, d[i].name,
               d[i].driver_version, d[i].compute_units, d[i].max_clock_mhz,
               (double)d[i].global_mem_bytes / 1e9,
               (unsigned long long)d[i].local_mem_bytes / 1024, d[i].max_work_group_size,
               d[i].preferred_wg_multiple, d[i].opencl_c_version);
}

static void json_field(const char *k, const char *v, int last)
{
    printf("    ");
    tdm_cli_json_string(stdout, k);
    printf(": ");
    tdm_cli_json_string(stdout, v);
    printf(last ? "\n" : ",\n");
}

static void print_json(const tdm_device_info *d, size_t n)
{
    printf("[\n");
    for (size_t i = 0; i < n; i++) {
        printf("  {\n    \"index\": %d,\n    \"platform_index\": %d,\n", d[i].index,
               d[i].platform_index);
        json_field("type", tdm_device_type_name(d[i].type), 0);
        json_field("platform", d[i].platform, 0);
        json_field("vendor", d[i].vendor, 0);
        json_field("name", d[i].name, 0);
        json_field("driver_version", d[i].driver_version, 0);
        json_field("device_version", d[i].device_version, 0);
        json_field("opencl_c_version", d[i].opencl_c_version, 0);
        printf("    \"compute_units\": %u,\n    \"max_clock_mhz\": %u,\n"
               "    \"global_mem_bytes\": %llu,\n    \"max_alloc_bytes\": %llu,\n"
               "    \"local_mem_bytes\": %llu,\n    \"max_work_group_size\": %zu,\n"
               "    \"preferred_work_group_multiple\": %zu,\n",
               d[i].compute_units, d[i].max_clock_mhz,
               (unsigned long long)d[i].global_mem_bytes,
               (unsigned long long)d[i].max_alloc_bytes,
               (unsigned long long)d[i].local_mem_bytes, d[i].max_work_group_size,
               d[i].preferred_wg_multiple);
        json_field("extensions", d[i].extensions, 1);
        printf(i + 1 < n ? "  },\n" : "  }\n");
    }
    printf("]\n");
}

/* The preferred work-group multiple needs a built kernel: open an engine on
 * all devices to fill it in; on failure the table shows 0 there. */
static void fill_multiples(tdm_device_info *d, size_t n)
{
    tdm_engine_options o;
    tdm_engine_options_init(&o);
    o.devices = "all";
    tdm_engine *e = NULL;
    if (tdm_engine_open(&o, &e) != TDM_OK)
        return;
    for (int i = 0; i < tdm_engine_device_count(e); i++) {
        tdm_device_info info;
        tdm_engine_device_info_get(e, i, &info);
        if (info.index >= 0 && (size_t)info.index < n)
            d[info.index].preferred_wg_multiple = info.preferred_wg_multiple;
    }
    tdm_engine_close(e);
}

int tdm_cmd_devices(int argc, char **argv)
{
    int json = 0, probe = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--no-probe"))
            probe = 0;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: tandem devices [--json] [--no-probe]\n"
                   "Lists every OpenCL device in discovery order; the index is what\n"
                   "TANDEM_DEVICES accepts. --no-probe skips building the kernels\n"
                   "(the preferred work-group multiple then shows 0).\n");
            return 0;
        } else
            return tdm_cli_usage("devices", "unknown option '%s'", argv[i]);
    }
    tdm_device_info *d = NULL;
    size_t n = 0;
    int rc = tdm_devices_discover(&d, &n);
    if (rc != TDM_OK)
        return tdm_cli_fail("devices", "%s", tdm_strerror(rc));
    if (probe)
        fill_multiples(d, n);
    if (json)
        print_json(d, n);
    else if (n == 0) {
        char hint[1024];
        tdm_no_device_hint(hint, sizeof hint);
        printf("no OpenCL device found: %s\n", hint);
    }
    else
        print_table(d, n);
    tdm_free(d);
    return 0;
}

int tdm_cmd_selfcheck(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: tandem selfcheck\nBuilds kernels.cl on the devices TANDEM_DEVICES "
               "selects and checks a kernel against its C reference on each.\n");
        return 0;
    }
    if (argc > 1)
        return tdm_cli_usage("selfcheck", "unexpected argument '%s' (it takes none; "
                                          "TANDEM_DEVICES selects the devices)", argv[1]);
    tdm_engine *e = NULL;
    int rc = tdm_engine_open(NULL, &e);
    if (rc != TDM_OK)
        return tdm_cli_fail("selfcheck", "%s: %s", tdm_strerror(rc), tdm_last_error());
    if (*tdm_engine_warnings(e))
        fprintf(stderr, "tandem selfcheck: warning: %s\n", tdm_engine_warnings(e));
    char report[4096];
    rc = tdm_engine_selfcheck(e, report, sizeof report);
    fputs(report, stdout);
    if (rc != TDM_OK)
        fprintf(stderr, "tandem selfcheck: %s: %s\n", tdm_strerror(rc), tdm_last_error());
    else
        printf("selfcheck passed on %d device(s)\n", tdm_engine_device_count(e));
    tdm_engine_close(e);
    return rc == TDM_OK ? 0 : 1;
}
