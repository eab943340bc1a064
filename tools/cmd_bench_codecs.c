/* `tandem bench codecs`: decode speed and size of every codec on every
 * device, on Uniform and Clustered lists of 2^16 .. 2^25 integers (and the
 * lists of an index), beside libstreamvbyte on one CPU core and each device's
 * copy bandwidth as the roofline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench.h"
#include "engine/engine.h"
#include "codec/codec_dev_list.h"
#include "index/reader.h"
#include "runtime/runtime.h"
#include "support/listgen.h"
#include "tandem.h"

#ifdef TANDEM_HAVE_STREAMVBYTE
#include <streamvbyte.h>
#include <streamvbytedelta.h>
#endif

#define MAX_SIZES 32

typedef struct opts {
    const char *codecs, *dists, *devices, *csv, *plot, *index, *build_options;
    int sizes[MAX_SIZES], nsizes;
    uint32_t universe;
    int reps, e2e_reps, index_lists;
    int no_check; /* --no-check: time without comparing the output to the input */
    int gaps; /* --values gaps: decode the d-gaps as plain values (no prefix sum) */
    double select; /* --select F: decode a random fraction F of the blocks */
    double budget_s; /* per measured point, beyond the minimum of 5 launches */
    uint64_t seed;
} opts;

typedef struct bench {
    opts o;
    tdm_engine *e;
    double *roof_gbs; /* per device */
    const tdm_codec_ops *codecs[TDM_CODEC_COUNT];
    int ncodecs;
    tdm_bench_rows rows;
    int failures;
} bench;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tandem bench codecs [options]\n"
        "  Decodes synthetic lists with every codec on every device: bits per integer,\n"
        "  kernel speed (median of profiled launches after warm-up) and end-to-end speed\n"
        "  (upload + decode + download), beside libstreamvbyte on one CPU core and the\n"
        "  device's copy bandwidth (clEnqueueCopyBuffer, bytes read + written) as roofline.\n"
        "options:\n"
        "  --codecs LIST      comma-separated codec names, or all (default: all with a\n"
        "                     device decoder)\n"
        "  --dist LIST        uniform,clustered (default both)\n"
        "  --sizes A-B|A,B,.. list lengths as powers of two (default 16-25)\n"
        "  --universe N       docids drawn from [0, N) (default 2^29, as Mallia et al.)\n"
        "  --devices SPEC     as TANDEM_DEVICES (default: TANDEM_DEVICES, else all)\n"
        "  --reps N           timed kernel launches a point (default 50; fewer past\n"
        "                     --budget seconds, at least 5)\n"
        "  --budget S         seconds a point may take (default 1)\n"
        "  --e2e-reps N       end-to-end runs a point (default 3)\n"
        "  --seed N           generator seed (default 42)\n"
        "  --values KIND      docids (default: d-gaps summed in the kernel) or gaps (the\n"
        "                     d-gaps as plain values, no prefix sum, as Mallia et al. time)\n"
        "  --select F         decode a random fraction F of each list's blocks (ids\n"
        "                     ascending, as block selection gives them), not whole lists;\n"
        "                     n stays the list's length, speed counts values decoded\n"
        "  --index FILE       also a built index: as stored, resident on each device and\n"
        "                     decoded in batched launches ((a) every list of at least one\n"
        "                     block, (b) every shorter list), then its longest lists\n"
        "                     re-encoded with every codec\n"
        "  --index-lists N    the N longest lists of the index (default 1000)\n"
        "  --csv FILE         every row as CSV\n"
        "  --plot FILE.svg    kernel speed against list length, log-log (first --dist)\n"
        "  --build-options S  extra kernel build options (experiments)\n"
        "  --no-check         time without comparing the output to the input (for build\n"
        "                     options that leave out part of the decoding, to time the rest)\n"
        "Progress goes to stderr, the table to stdout.\n");
}

static int parse_sizes(const char *s, opts *o)
{
    o->nsizes = 0;
    int a, b, used;
    if (sscanf(s, "%d-%d%n", &a, &b, &used) == 2 && s[used] == '\0') {
        for (int k = a; k <= b && o->nsizes < MAX_SIZES; k++)
            o->sizes[o->nsizes++] = k;
    } else {
        for (const char *p = s; *p && o->nsizes < MAX_SIZES;) {
            char *end;
            long k = strtol(p, &end, 10);
            if (end == p)
                return -1;
            o->sizes[o->nsizes++] = (int)k;
            p = *end == ',' ? end + 1 : end;
            if (*end && *end != ',')
                return -1;
        }
    }
    for (int i = 0; i < o->nsizes; i++)
        if (o->sizes[i] < 0 || o->sizes[i] > 30)
            return -1;
    return o->nsizes ? 0 : -1;
}

/* Before anything runs: the index opens, and --csv and --plot are files
 * that may be replaced (not the index, not a device, not stdout). 0, or the
 * exit status after a message. */
static int check_paths(const opts *o)
{
    static const char C[] = "bench codecs";
    const char *in[1] = {o->index};
    int bad = o->csv ? tdm_cli_output(C, "--csv", o->csv, 0, in, 1, NULL) : 0;
    if (!bad && o->plot)
        bad = tdm_cli_output(C, "--plot", o->plot, 0, in, 1, NULL);
    if (bad)
        return bad;
    if (o->csv && o->plot && !strcmp(o->csv, o->plot))
        return tdm_cli_usage(C, "--csv and --plot name the same file '%s'", o->csv);
    if (!o->index)
        return 0;
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    int rc = tdm_ireader_open(o->index, &r, &err);
    if (rc != TDM_OK)
        tdm_cli_fail(C, "--index: %s", tdm_err_msg(&err));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : TDM_CLI_EXIT_FAIL;
}

/* The options into o: 0, -1 after --help, or the exit status after a
 * message. */
static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.dists = "uniform,clustered", .universe = 1u << 29, .reps = 50,
                .e2e_reps = 3, .budget_s = 1.0, .seed = 42, .index_lists = 1000};
    parse_sizes("16-25", o);
    static const char C[] = "bench codecs";
    uint64_t u;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(a, "--no-check")) {
            o->no_check = 1;
            continue;
        }
        if (!v)
            return tdm_cli_usage("bench codecs", "%s needs a value (or unknown option)", a);
        i++;
        if (!strcmp(a, "--codecs"))
            o->codecs = v;
        else if (!strcmp(a, "--dist"))
            o->dists = v;
        else if (!strcmp(a, "--sizes")) {
            if (parse_sizes(v, o))
                return tdm_cli_usage("bench codecs", "bad --sizes '%s' (e.g. 16-25)", v);
        } else if (!strcmp(a, "--universe")) {
            if (tdm_cli_uint(C, a, v, 2, TDM_LISTGEN_MAX_UNIVERSE, &u))
                return TDM_CLI_EXIT_USAGE;
            o->universe = (uint32_t)u;
        } else if (!strcmp(a, "--devices"))
            o->devices = v;
        else if (!strcmp(a, "--reps")) {
            if (tdm_cli_uint(C, a, v, 1, 1000000, &u))
                return TDM_CLI_EXIT_USAGE;
            o->reps = (int)u;
        } else if (!strcmp(a, "--budget")) {
            if (tdm_cli_real(C, a, v, 0, 1, 3600, &o->budget_s))
                return TDM_CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--e2e-reps")) {
            if (tdm_cli_uint(C, a, v, 0, 64, &u))
                return TDM_CLI_EXIT_USAGE;
            o->e2e_reps = (int)u;
        } else if (!strcmp(a, "--values")) {
            if (strcmp(v, "docids") && strcmp(v, "gaps"))
                return tdm_cli_usage("bench codecs", "--values docids or gaps");
            o->gaps = !strcmp(v, "gaps");
        } else if (!strcmp(a, "--seed")) {
            if (tdm_cli_uint(C, a, v, 0, UINT64_MAX, &o->seed))
                return TDM_CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--select")) {
            if (tdm_cli_real(C, a, v, 0, 1, 1, &o->select))
                return TDM_CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--index"))
            o->index = v;
        else if (!strcmp(a, "--index-lists")) {
            if (tdm_cli_uint(C, a, v, 1, INT32_MAX, &u))
                return TDM_CLI_EXIT_USAGE;
            o->index_lists = (int)u;
        } else if (!strcmp(a, "--csv"))
            o->csv = v;
        else if (!strcmp(a, "--plot"))
            o->plot = v;
        else if (!strcmp(a, "--build-options"))
            o->build_options = v;
        else
            return tdm_cli_usage("bench codecs", "unknown option %s (see --help)", a);
    }
    if (o->codecs && !*o->codecs)
        return tdm_cli_usage(C, "--codecs '': empty; give codec names or all");
    if (!*o->dists)
        return tdm_cli_usage(C, "--dist '': empty; expected uniform, clustered or both");
    for (const char *p = o->dists; *p;) { /* every name known before anything runs */
        size_t len = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), p);
        if (tdm_listgen_dist_by_name(name) < 0)
            return tdm_cli_usage(C, "--dist '%s': unknown '%s'; expected uniform, clustered",
                                 o->dists, name);
        p += len + (p[len] == ',');
    }
    return check_paths(o);
}

static int pick_codecs(bench *B)
{
    size_t count;
    const tdm_codec_ops *const *all = tdm_codec_all(&count);
    const char *list = B->o.codecs && strcmp(B->o.codecs, "all") ? B->o.codecs : NULL;
    for (size_t i = 0; !list && i < count; i++)
        if (all[i]->dev)
            B->codecs[B->ncodecs++] = all[i];
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), p);
        const tdm_codec_ops *c = tdm_codec_by_name(name);
        if (!c || !c->dev) {
            fprintf(stderr, "tandem bench codecs: no device codec '%s'; there are:", name);
            for (size_t k = 0; k < count; k++)
                if (all[k]->dev)
                    fprintf(stderr, " %s", all[k]->name);
            fputc('\n', stderr);
            return -1;
        }
        if (B->ncodecs < TDM_CODEC_COUNT)
            B->codecs[B->ncodecs++] = c;
        p += len + (p[len] == ',');
    }
    return B->ncodecs ? 0 : -1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The blocks a measurement decodes: all (ids NULL), or a random subset. */
typedef struct pick {
    uint32_t *ids;
    size_t nids;
    size_t nvalues;   /* values they hold */
    double bytes;     /* compressed bytes the kernel reads for them */
} pick;

/* k = F * nblocks distinct block ids (at least 1), ascending. */
static int make_pick(const tdm_encoded *enc, double f, uint64_t seed, pick *p)
{
    double all = (double)enc->nwords * 4 + (2.0 * enc->nblocks + 1) * 4;
    *p = (pick){.nvalues = enc->n, .bytes = all};
    if (f <= 0 || enc->nblocks == 0)
        return 0;
    size_t k = (size_t)(f * enc->nblocks + 0.5);
    k = k < 1 ? 1 : k > enc->nblocks ? enc->nblocks : k;
    uint32_t *all_ids = malloc((size_t)enc->nblocks * 4);
    if (!all_ids)
        return -1;
    for (uint32_t b = 0; b < enc->nblocks; b++)
        all_ids[b] = b;
    uint64_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < k; i++) { /* partial Fisher-Yates */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = i + (size_t)(x % (enc->nblocks - i));
        uint32_t t = all_ids[i];
        all_ids[i] = all_ids[j];
        all_ids[j] = t;
    }
    qsort(all_ids, k, 4, cmp_u32);
    p->ids = all_ids;
    p->nids = k;
    p->nvalues = 0;
    p->bytes = 4;
    for (size_t i = 0; i < k; i++) {
        uint32_t b = all_ids[i];
        p->nvalues += tdm_encoded_block_len(enc, b);
        p->bytes += (double)(enc->offsets[b + 1] - enc->offsets[b]) * 4 + 12;
    }
    return 0;
}

/* Kernel time: warm-up, then the median of up to reps launches (at least 5;
 * fewer past the time budget). */
static int time_kernel(bench *B, tdm_codec_dev_list *l, const pick *pk, cl_mem out,
                       tdm_bench_row *row, tdm_err *err)
{
    double *t = malloc((size_t)B->o.reps * sizeof *t), start = tdm_cli_now();
    int k = 0, st = t ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "bench");
    for (int i = -3; st == TDM_OK && i < B->o.reps; i++) {
        double s;
        st = tdm_codec_dev_decode(l, pk->ids, pk->nids, out, NULL, NULL, &s, err);
        if (st == TDM_OK && i >= 0)
            t[k++] = s;
        if (k >= 5 && tdm_cli_now() - start > B->o.budget_s)
            break;
    }
    row->launches = k;
    row->kernel_s = tdm_bench_median(t, (size_t)k);
    free(t);
    return st;
}

/* End to end: upload + decode into a fresh buffer + download, wall clock. */
static int time_e2e(bench *B, tdm_device *d, const tdm_encoded *enc, const pick *pk,
                    uint32_t *host, tdm_bench_row *row, tdm_err *err)
{
    double t[64];
    int k = 0, st = TDM_OK;
    for (int i = 0; st == TDM_OK && i < B->o.e2e_reps && i < 64; i++) {
        tdm_codec_dev_list l;
        double t0 = tdm_cli_now();
        st = tdm_codec_dev_upload(d, enc, &l, err);
        if (st == TDM_OK)
            st = tdm_codec_dev_decode(&l, pk->ids, pk->nids, NULL, host, NULL, NULL, err);
        t[k++] = tdm_cli_now() - t0;
        tdm_codec_dev_free(&l);
    }
    row->e2e_s = tdm_bench_median(t, (size_t)k);
    return st;
}

/* Whether the device's output is the input's values of the picked blocks. */
static int same_values(const tdm_encoded *enc, const pick *pk, const uint32_t *want,
                       const uint32_t *got)
{
    if (!pk->ids)
        return memcmp(got, want, (size_t)enc->n * 4) == 0;
    for (size_t i = 0, pos = 0; i < pk->nids; i++) {
        uint32_t b = pk->ids[i], len = tdm_encoded_block_len(enc, b);
        if (memcmp(got + pos, want + (size_t)b * enc->block_size, (size_t)len * 4))
            return 0;
        pos += len;
    }
    return 1;
}

/* One codec on one device: upload, check the output once, time. */
static int measure(bench *B, int dev, const tdm_encoded *enc, const pick *pk,
                   const uint32_t *want, uint32_t *host, tdm_bench_row *row, tdm_err *err)
{
    tdm_device *d = tdm_engine_device(B->e, dev);
    tdm_codec_dev_list l;
    cl_mem out = NULL;
    int st = tdm_codec_dev_upload(d, enc, &l, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(d, CL_MEM_READ_WRITE, pk->nvalues * 4, NULL, &out, err);
    if (st == TDM_OK && pk->nvalues) {
        memset(host, 0, pk->nvalues * 4);
        st = tdm_codec_dev_decode(&l, pk->ids, pk->nids, out, host, NULL, NULL, err);
        if (st == TDM_OK && !B->o.no_check && !same_values(enc, pk, want, host))
            st = tdm_err_set(err, TDM_ERR_INTERNAL, "decoded values differ from the input");
    }
    if (st == TDM_OK)
        st = time_kernel(B, &l, pk, out, row, err);
    if (out)
        clReleaseMemObject(out);
    tdm_codec_dev_free(&l);
    if (st == TDM_OK)
        st = time_e2e(B, d, enc, pk, host, row, err);
    double n = (double)pk->nvalues; /* speed counts the values decoded */
    row->kernel_mis = row->kernel_s > 0 ? n / row->kernel_s / 1e6 : 0;
    row->e2e_mis = row->e2e_s > 0 ? n / row->e2e_s / 1e6 : 0;
    row->gbps = row->kernel_s > 0 ? (pk->bytes + 4 * n) / row->kernel_s / 1e9 : 0;
    row->roof_pct = B->roof_gbs[dev] > 0 ? 100 * row->gbps / B->roof_gbs[dev] : 0;
    return st;
}

static void add_row(bench *B, const tdm_bench_row *r)
{
    tdm_bench_print_row(stdout, r);
    fflush(stdout);
    if (tdm_bench_rows_add(&B->rows, r))
        B->failures++;
}

/* Every chosen codec on every device for one list. */
static void bench_list(bench *B, const char *dist, const uint32_t *v, size_t n, int delta,
                       uint32_t *host)
{
    for (int c = 0; c < B->ncodecs; c++) {
        tdm_err err = {0};
        tdm_encoded enc;
        if (tdm_codec_encode(B->codecs[c]->id, v, n, delta, &enc, &err) != TDM_OK) {
            fprintf(stderr, "tandem bench codecs: %s: %s\n", B->codecs[c]->name,
                    tdm_err_msg(&err));
            B->failures++;
            tdm_err_clear(&err);
            continue;
        }
        pick pk;
        if (make_pick(&enc, B->o.select, B->o.seed + n, &pk)) {
            B->failures++;
            tdm_encoded_free(&enc);
            continue;
        }
        for (int d = 0; d < tdm_engine_device_count(B->e); d++) {
            tdm_bench_row row = {.n = n, .device = d};
            snprintf(row.dist, sizeof row.dist, "%s", dist);
            snprintf(row.codec, sizeof row.codec, "%s", B->codecs[c]->name);
            snprintf(row.device_name, sizeof row.device_name, "%.63s",
                     tdm_engine_device(B->e, d)->info.name);
            row.bpi = n ? ((double)enc.nwords + enc.nblocks + 1) * 32 / (double)n : 0;
            row.bpi_all = n ? row.bpi + (double)enc.nblocks * 32 / (double)n : 0;
            fprintf(stderr, "  %s n=%zu %s on %d ...\n", dist, n, row.codec, d);
            if (measure(B, d, &enc, &pk, v, host, &row, &err) != TDM_OK) {
                fprintf(stderr, "tandem bench codecs: %s on device %d (%s): %s\n", row.codec,
                        d, row.device_name, tdm_err_msg(&err));
                B->failures++;
            }
            add_row(B, &row);
            tdm_err_clear(&err);
        }
        free(pk.ids);
        tdm_encoded_free(&enc);
    }
}

/* libstreamvbyte (differential) on one core: the CPU reference. */
static void bench_cpu(bench *B, const char *dist, const uint32_t *v, size_t n, uint32_t *host)
{
#ifdef TANDEM_HAVE_STREAMVBYTE
    uint8_t *buf = malloc(streamvbyte_max_compressedbytes((uint32_t)n) + 16);
    if (!buf || n == 0) {
        free(buf);
        return;
    }
    size_t bytes = streamvbyte_delta_encode(v, (uint32_t)n, buf, 0);
    double t[50], start = tdm_cli_now();
    int k = 0;
    while (k < 50 && (k < 5 || tdm_cli_now() - start < B->o.budget_s)) {
        double t0 = tdm_cli_now();
        streamvbyte_delta_decode(buf, host, (uint32_t)n, 0);
        t[k++] = tdm_cli_now() - t0;
    }
    tdm_bench_row row = {.n = n, .device = -1, .launches = k};
    snprintf(row.dist, sizeof row.dist, "%s", dist);
    snprintf(row.codec, sizeof row.codec, "streamvbyte");
    snprintf(row.device_name, sizeof row.device_name, "CPU, 1 core");
    row.bpi = row.bpi_all = (double)bytes * 8 / (double)n;
    row.kernel_s = row.e2e_s = tdm_bench_median(t, (size_t)k);
    row.kernel_mis = row.e2e_mis = row.kernel_s > 0 ? n / row.kernel_s / 1e6 : 0;
    if (memcmp(host, v, n * 4)) {
        fprintf(stderr, "tandem bench codecs: streamvbyte round trip failed\n");
        B->failures++;
    }
    add_row(B, &row);
    free(buf);
#else
    (void)B, (void)dist, (void)v, (void)n, (void)host;
#endif
}

static int bench_index(bench *B);

/* "uniform", "uniform:gaps", "uniform:sel0.1", ... */
static void list_label(const bench *B, const char *dist, char *buf, size_t len)
{
    char sel[16] = "";
    if (B->o.select > 0)
        snprintf(sel, sizeof sel, ":sel%.4g", B->o.select);
    snprintf(buf, len, "%.9s%s%.9s", dist, B->o.gaps ? ":gaps" : "", sel);
}

static void bench_synthetic(bench *B)
{
    char dists[64];
    snprintf(dists, sizeof dists, "%s", B->o.dists);
    for (char *save = NULL, *dn = strtok_r(dists, ",", &save); dn;
         dn = strtok_r(NULL, ",", &save)) {
        int dist = tdm_listgen_dist_by_name(dn);
        if (dist < 0) {
            fprintf(stderr, "tandem bench codecs: unknown --dist '%s'\n", dn);
            B->failures++;
            continue;
        }
        for (int s = 0; s < B->o.nsizes; s++) {
            size_t n = (size_t)1 << B->o.sizes[s];
            uint32_t *v = malloc(n * 4), *host = malloc(n * 4);
            fprintf(stderr, "%s 2^%d: generating\n", dn, B->o.sizes[s]);
            if (!v || !host ||
                tdm_listgen(dist, v, n, B->o.universe, B->o.seed + (uint64_t)s) != TDM_OK) {
                fprintf(stderr, "tandem bench codecs: cannot generate %zu values in [0, %u)\n",
                        n, B->o.universe);
                B->failures++;
            } else {
                char label[24];
                list_label(B, dn, label, sizeof label);
                if (!B->o.gaps && B->o.select <= 0)
                    bench_cpu(B, dn, v, n, host);
                for (size_t i = n - 1; B->o.gaps && i > 0; i--)
                    v[i] -= v[i - 1];
                bench_list(B, label, v, n, !B->o.gaps, host);
            }
            free(v);
            free(host);
        }
    }
}

static int open_engine(bench *B)
{
    tdm_engine_options eo;
    tdm_engine_options_init(&eo);
    eo.devices = B->o.devices;
    eo.build_options = B->o.build_options;
    if (tdm_engine_open(&eo, &B->e) != TDM_OK)
        return tdm_cli_fail("bench codecs", "%s", tdm_last_error());
    int nd = tdm_engine_device_count(B->e);
    B->roof_gbs = calloc((size_t)nd, sizeof *B->roof_gbs);
    if (!B->roof_gbs)
        return tdm_cli_fail("bench codecs", "out of memory");
    for (int d = 0; d < nd; d++) {
        tdm_device *dv = tdm_engine_device(B->e, d);
        tdm_device_probe pr;
        tdm_err perr = {0};
        fprintf(stderr, "device %d: measuring copy bandwidth and launch cost\n", d);
        if (tdm_device_probe_get(dv, &pr, &perr) != TDM_OK) {
            fprintf(stderr, "tandem bench codecs: device %d: %s\n", d, tdm_err_msg(&perr));
            memset(&pr, 0, sizeof pr);
        }
        tdm_err_clear(&perr);
        B->roof_gbs[d] = pr.copy_gbs;
        printf("# device %d: %s (%s, driver %s), work-group %zu; roofline (copy, read + "
               "written) %.1f GB/s; launch %.1f us (host round trip), %.1f us on the device\n",
               d, dv->info.name, dv->info.platform, dv->info.driver_version, dv->wg_size,
               B->roof_gbs[d], pr.launch_s * 1e6, pr.launch_dev_s * 1e6);
    }
    return 0;
}

int tdm_bench_codecs(int argc, char **argv)
{
    bench B = {0};
    int rc = parse(argc, argv, &B.o);
    if (rc)
        return rc < 0 ? 0 : rc; /* --help, or the exit status after a message */
    if (pick_codecs(&B))
        return TDM_CLI_EXIT_USAGE; /* --codecs names no device codec */
    if (open_engine(&B)) {
        tdm_engine_close(B.e);
        free(B.roof_gbs);
        return 1;
    }
#ifdef TANDEM_HAVE_STREAMVBYTE
    printf("# CPU reference: libstreamvbyte (differential), one core; Debian's build is "
           "scalar (~200 M ints/s a core)\n");
#else
    printf("# CPU reference: libstreamvbyte not found at build time: skipped\n");
#endif
    printf("# bpi: payload + endpoints (Mallia's Table 1); GB/s: (compressed bytes read + "
           "4n written) / kernel time\n");
    tdm_bench_print_header(stdout);
    bench_synthetic(&B);
    if (B.o.index)
        B.failures += bench_index(&B) != 0;
    if (B.o.csv && tdm_bench_write_csv(B.o.csv, &B.rows)) {
        fprintf(stderr, "tandem bench codecs: cannot write %s\n", B.o.csv);
        B.failures++;
    }
    if (B.o.plot) {
        char first[16], dist[24], title[160];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(B.o.dists, ","), B.o.dists);
        list_label(&B, first, dist, sizeof dist);
        snprintf(title, sizeof title, "Decode speed, %s lists in [0, %u): kernel time", dist,
                 B.o.universe);
        if (tdm_bench_write_svg(B.o.plot, &B.rows, dist, title)) {
            fprintf(stderr, "tandem bench codecs: cannot write %s\n", B.o.plot);
            B.failures++;
        }
    }
    tdm_engine_close(B.e);
    free(B.roof_gbs);
    free(B.rows.v);
    return B.failures ? 1 : 0;
}

static void add_row_cb(void *arg, const tdm_bench_row *r)
{
    add_row(arg, r);
}

/* A built index as stored, resident and decoded in batched launches; then
 * its longest lists re-encoded with every codec, through the same rows. */
static int bench_index(bench *B)
{
    tdm_bench_ctx c = {.e = B->e, .roof_gbs = B->roof_gbs, .codecs = B->codecs,
                       .ncodecs = B->ncodecs, .reps = B->o.reps < 64 ? B->o.reps : 63,
                       .budget_s = B->o.budget_s, .rows = &B->rows, .add_row = add_row_cb,
                       .arg = B};
    int rc = tdm_bench_index_batched(&c, B->o.index);
    return tdm_bench_index(&c, B->o.index, B->o.index_lists) || rc;
}
