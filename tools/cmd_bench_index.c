/* `tandem bench codecs --index FILE`: the longest lists of a built index,
 * re-encoded with every codec and decoded on every device. A pass decodes
 * every list once (one launch a list, as a query would); speed is the lists'
 * postings over the median pass's summed kernel time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench.h"
#include "engine/engine.h"
#include "codec/codec_dev_list.h"
#include "index/reader.h"

typedef struct ilists {
    uint32_t **docs, **freqs; /* [n] lists; freqs hold tf - 1 */
    uint32_t *len;
    int n;
    uint64_t total;
} ilists;

typedef struct dfi {
    uint32_t df;
    uint64_t i;
} dfi;

static int by_df_desc(const void *a, const void *b)
{
    const dfi *x = a, *y = b;
    return (x->df < y->df) - (x->df > y->df);
}

static void free_lists(ilists *L)
{
    for (int k = 0; k < L->n; k++) {
        free(L->docs[k]);
        free(L->freqs[k]);
    }
    free(L->docs);
    free(L->freqs);
    free(L->len);
    memset(L, 0, sizeof *L);
}

/* Decodes the nlists longest lists with the reference decoder. */
static int load_lists(const char *path, int nlists, ilists *L)
{
    tdm_ireader *r = NULL;
    tdm_err err = {0};
    memset(L, 0, sizeof *L);
    if (tdm_ireader_open(path, &r, &err) != TDM_OK) {
        fprintf(stderr, "tandem bench codecs: %s\n", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return -1;
    }
    uint64_t nt = tdm_ireader_info_get(r)->nterms;
    dfi *t = malloc((nt ? nt : 1) * sizeof *t);
    int rc = t ? 0 : -1;
    for (uint64_t i = 0; rc == 0 && i < nt; i++) {
        size_t len;
        uint64_t cf;
        t[i].i = i;
        if (!tdm_ireader_term(r, i, &len, &t[i].df, &cf))
            t[i].df = 0;
    }
    if (rc == 0)
        qsort(t, nt, sizeof *t, by_df_desc);
    int n = nlists < 0 ? 0 : (uint64_t)nlists < nt ? nlists : (int)nt;
    L->docs = calloc((size_t)n + 1, sizeof *L->docs);
    L->freqs = calloc((size_t)n + 1, sizeof *L->freqs);
    L->len = calloc((size_t)n + 1, sizeof *L->len);
    rc = rc == 0 && L->docs && L->freqs && L->len ? 0 : -1;
    for (int k = 0; rc == 0 && k < n && t[k].df; k++) {
        uint32_t df = t[k].df;
        L->docs[k] = malloc((size_t)df * 4);
        L->freqs[k] = malloc((size_t)df * 4);
        L->n = k + 1;
        if (!L->docs[k] || !L->freqs[k] ||
            tdm_ireader_decode(r, t[k].i, L->docs[k], L->freqs[k], &err) != TDM_OK) {
            fprintf(stderr, "tandem bench codecs: %s: list %llu: %s\n", path,
                    (unsigned long long)t[k].i, tdm_err_msg(&err));
            rc = -1;
            break;
        }
        for (uint32_t j = 0; j < df; j++)
            L->freqs[k][j] -= 1; /* as the index stores them */
        L->len[k] = df;
        L->total += df;
    }
    if (rc)
        free_lists(L);
    free(t);
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    return rc;
}

/* Kernel seconds of one pass over every list (summed), or -1. */
static double pass_seconds(tdm_codec_dev_list *l, int n, cl_mem out, tdm_err *err)
{
    double sum = 0, s;
    for (int k = 0; k < n; k++) {
        if (tdm_codec_dev_decode(&l[k], NULL, 0, out, NULL, NULL, &s, err) != TDM_OK)
            return -1;
        sum += s;
    }
    return sum;
}

/* Upload + decode + download of every list, wall clock. */
static double e2e_seconds(tdm_device *d, const tdm_encoded *enc, int n, uint32_t *host,
                          tdm_err *err)
{
    double t0 = tdm_cli_now();
    for (int k = 0; k < n; k++) {
        tdm_codec_dev_list l;
        int st = tdm_codec_dev_upload(d, &enc[k], &l, err);
        if (st == TDM_OK)
            st = tdm_codec_dev_decode(&l, NULL, 0, NULL, host, NULL, NULL, err);
        tdm_codec_dev_free(&l);
        if (st != TDM_OK)
            return -1;
    }
    return tdm_cli_now() - t0;
}

/* Uploads every list, checks each decode once, then times passes. */
static int time_lists(const tdm_bench_ctx *c, int dev, const tdm_encoded *enc, uint32_t **want,
                      const ilists *L, uint32_t *host, tdm_bench_row *row, tdm_err *err)
{
    tdm_device *d = tdm_engine_device(c->e, dev);
    tdm_codec_dev_list *l = calloc((size_t)L->n + 1, sizeof *l);
    uint32_t maxlen = 0;
    for (int k = 0; k < L->n; k++)
        maxlen = L->len[k] > maxlen ? L->len[k] : maxlen;
    cl_mem out = NULL;
    int st = l ? tdm_buffer_create(d, CL_MEM_READ_WRITE, (size_t)maxlen * 4, NULL, &out, err)
               : tdm_err_set(err, TDM_ERR_NOMEM, "bench");
    for (int k = 0; st == TDM_OK && k < L->n; k++) {
        st = tdm_codec_dev_upload(d, &enc[k], &l[k], err);
        if (st == TDM_OK)
            st = tdm_codec_dev_decode(&l[k], NULL, 0, out, host, NULL, NULL, err);
        if (st == TDM_OK && memcmp(host, want[k], (size_t)L->len[k] * 4))
            st = tdm_err_set(err, TDM_ERR_INTERNAL, "list %d decoded wrong", k);
    }
    double t[64], start = tdm_cli_now();
    int np = 0;
    for (int p = -1; st == TDM_OK && p < c->reps && np < 64; p++) {
        double s = pass_seconds(l, L->n, out, err);
        if (s < 0)
            st = err->code;
        else if (p >= 0)
            t[np++] = s;
        if (np >= 3 && tdm_cli_now() - start > c->budget_s)
            break;
    }
    row->launches = np;
    row->kernel_s = tdm_bench_median(t, (size_t)np);
    for (int k = 0; l && k < L->n; k++)
        tdm_codec_dev_free(&l[k]);
    free(l);
    if (out)
        clReleaseMemObject(out);
    if (st == TDM_OK && (row->e2e_s = e2e_seconds(d, enc, L->n, host, err)) < 0)
        st = err->code;
    return st;
}

/* One codec, one kind of list, every device. */
static void bench_kind(const tdm_bench_ctx *c, const struct tdm_codec_ops *ops,
                       const ilists *L, int docs)
{
    uint32_t **vals = docs ? L->docs : L->freqs, maxlen = 0;
    tdm_encoded *enc = calloc((size_t)L->n + 1, sizeof *enc);
    tdm_err err = {0};
    double words = 0, rd = 0;
    int st = enc ? TDM_OK : TDM_ERR_NOMEM;
    for (int k = 0; st == TDM_OK && k < L->n; k++) {
        st = tdm_codec_encode(ops->id, vals[k], L->len[k], docs, &enc[k], &err);
        words += (double)enc[k].nwords + enc[k].nblocks + 1;
        rd += ((double)enc[k].nwords + 2.0 * enc[k].nblocks + 1) * 4;
        maxlen = L->len[k] > maxlen ? L->len[k] : maxlen;
    }
    uint32_t *host = malloc((size_t)maxlen * 4 + 4);
    for (int d = 0; st == TDM_OK && host && d < tdm_engine_device_count(c->e); d++) {
        tdm_bench_row row = {.n = L->total, .device = d};
        snprintf(row.dist, sizeof row.dist, "%s", docs ? "index-docs" : "index-freqs");
        snprintf(row.codec, sizeof row.codec, "%s", ops->name);
        snprintf(row.device_name, sizeof row.device_name, "%.63s",
                 tdm_engine_device(c->e, d)->info.name);
        row.bpi = words * 32 / (double)L->total;
        row.bpi_all = row.bpi + (rd / 4 - words) * 32 / (double)L->total;
        fprintf(stderr, "  %s %s on %d ...\n", row.dist, row.codec, d);
        if (time_lists(c, d, enc, vals, L, host, &row, &err) != TDM_OK)
            fprintf(stderr, "tandem bench codecs: %s on device %d: %s\n", ops->name, d,
                    tdm_err_msg(&err));
        double n = (double)L->total;
        row.kernel_mis = row.kernel_s > 0 ? n / row.kernel_s / 1e6 : 0;
        row.e2e_mis = row.e2e_s > 0 ? n / row.e2e_s / 1e6 : 0;
        row.gbps = row.kernel_s > 0 ? (rd + 4 * n) / row.kernel_s / 1e9 : 0;
        row.roof_pct = c->roof_gbs[d] > 0 ? 100 * row.gbps / c->roof_gbs[d] : 0;
        c->add_row(c->arg, &row);
        tdm_err_clear(&err);
    }
    if (st != TDM_OK)
        fprintf(stderr, "tandem bench codecs: encoding the index lists with %s: %s\n",
                ops->name, tdm_err_msg(&err));
    for (int k = 0; enc && k < L->n; k++)
        tdm_encoded_free(&enc[k]);
    free(enc);
    free(host);
    tdm_err_clear(&err);
}

int tdm_bench_index(const tdm_bench_ctx *c, const char *path, int nlists)
{
    ilists L;
    fprintf(stderr, "index %s: reading the %d longest lists\n", path, nlists);
    if (load_lists(path, nlists, &L))
        return -1;
    printf("# index %s: the %d longest lists, %llu postings\n", path, L.n,
           (unsigned long long)L.total);
    for (int k = 0; k < c->ncodecs; k++) {
        bench_kind(c, c->codecs[k], &L, 1);
        bench_kind(c, c->codecs[k], &L, 0);
    }
    free_lists(&L);
    return 0;
}
