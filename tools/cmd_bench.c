/* `tandem bench <what>`: dispatch, and the result table and CSV every
 * benchmark shares. */
#include "cmd_bench.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench_load.h"
#include "cmd_bench_queries.h"
#include "common/fsutil.h"

int tdm_bench_rows_add(tdm_bench_rows *rows, const tdm_bench_row *r)
{
    if (rows->n == rows->cap) {
        size_t cap = rows->cap ? rows->cap * 2 : 64;
        tdm_bench_row *v = realloc(rows->v, cap * sizeof *v);
        if (!v)
            return -1;
        rows->v = v;
        rows->cap = cap;
    }
    rows->v[rows->n++] = *r;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tdm_bench_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void tdm_bench_print_header(FILE *f)
{
    fprintf(f, "%-18s %9s %-16s %-26s %6s %11s %10s %9s %7s %6s\n", "list", "n", "codec",
            "device", "bpi", "kernel Mi/s", "e2e Mi/s", "GB/s", "%roof", "runs");
}

void tdm_bench_print_row(FILE *f, const tdm_bench_row *r)
{
    char dev[48];
    if (r->device < 0)
        snprintf(dev, sizeof dev, "%.39s", r->device_name);
    else
        snprintf(dev, sizeof dev, "%d %.30s", r->device, r->device_name);
    fprintf(f, "%-18s %9llu %-16s %-26.26s %6.2f %11.0f %10.0f %9.1f %7.1f %6d\n", r->dist,
            (unsigned long long)r->n, r->codec, dev, r->bpi, r->kernel_mis, r->e2e_mis, r->gbps,
            r->roof_pct, r->launches);
}

int tdm_bench_write_csv(const char *path, const tdm_bench_rows *rows)
{
    tdm_outfile out;
    tdm_err err = {0};
    if (tdm_outfile_open(&out, path, &err) != TDM_OK) {
        fprintf(stderr, "tandem bench: %s\n", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return -1;
    }
    FILE *f = out.f;
    fprintf(f, "list,n,codec,device,device_name,bpi,bpi_with_bases,kernel_s,kernel_mints_s,"
               "e2e_s,e2e_mints_s,gb_s,roofline_pct,launches\n");
    for (size_t i = 0; i < rows->n; i++) {
        const tdm_bench_row *r = &rows->v[i];
        char name[64];
        snprintf(name, sizeof name, "%s", r->device_name);
        for (char *p = name; *p; p++)
            if (*p == ',' || *p == '"')
                *p = ' ';
        fprintf(f, "%s,%llu,%s,%d,%s,%.4f,%.4f,%.9g,%.2f,%.9g,%.2f,%.2f,%.2f,%d\n", r->dist,
                (unsigned long long)r->n, r->codec, r->device, name, r->bpi, r->bpi_all,
                r->kernel_s, r->kernel_mis, r->e2e_s, r->e2e_mis, r->gbps, r->roof_pct,
                r->launches);
    }
    int rc = tdm_outfile_commit(&out, &err); /* renamed over path only when complete */
    if (rc != TDM_OK)
        fprintf(stderr, "tandem bench: %s\n", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : -1;
}

int tdm_cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "codecs"))
        return tdm_bench_codecs(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "queries"))
        return tdm_bench_queries(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "load"))
        return tdm_bench_load(argc - 1, argv + 1);
    FILE *f = argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? stdout
                                                                                  : stderr;
    fprintf(f, "usage: tandem bench codecs [options]   (--help for the options)\n"
               "       tandem bench queries INDEX --queries FILE [options]\n"
               "       tandem bench load INDEX --queries FILE --rates LIST|--find-max [options]\n");
    return f == stdout ? 0 : 2;
}
