/* `tandem bench codecs --index FILE`: the index as stored, resident on each
 * device (its upload timed), decoded in batched launches (resident/decode_jobs.h):
 * (a) every list of at least one full block, (b) every shorter list, each
 * whole, to docids alone and to docids and frequencies. Checked once against
 * the host reference, then timed: the median of launches from the first
 * kernel's start to the last one's end, against the copy roofline of the
 * same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench.h"
#include "engine/engine.h"
#include "resident/decode_jobs.h"
#include "resident/resident.h"
#include "resident/stager.h"

/* One part of the index: its requests' job tables and what decoding reads. */
typedef struct part {
    const char *name;      /* "index-a", "index-b" */
    tdm_decode_batch b;
    uint64_t *lists;       /* [b.nreq] list of each request */
    double doc_bytes;      /* docid payload + metadata a docid decode reads */
    double freq_bytes;     /* the same for frequencies */
    double payload_words;  /* docid + frequency payload */
    char codec[24];        /* the lists' codec, or "mixed" */
} part;

/* Requests for every list whole: long = 1 those of at least one full block. */
static int make_part(const tdm_ireader *r, int longs, part *p, tdm_err *err)
{
    uint64_t nt = tdm_ireader_info_get(r)->nterms, n = 0;
    tdm_decode_req *req = malloc((nt ? nt : 1) * sizeof *req);
    p->lists = malloc((nt ? nt : 1) * sizeof *p->lists);
    int st = req && p->lists ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "bench");
    int codec = -1;
    for (uint64_t i = 0; st == TDM_OK && i < nt; i++) {
        tdm_ilist l;
        if ((st = tdm_ireader_list(r, i, &l, err)) != TDM_OK)
            break;
        if ((l.df >= l.docs.block_size) != longs)
            continue;
        codec = codec == -1 || codec == l.docs.codec ? l.docs.codec : -2;
        p->lists[n] = i;
        req[n++] = (tdm_decode_req){(uint32_t)i, 0, TDM_DECODE_TO_END};
        /* descriptor, codec id, one job; per block two endpoints (and a base) */
        double meta = 16 + 1 + 16.0 / 2;
        p->doc_bytes += l.docs.nwords * 4.0 + meta + l.nblocks * 12.0;
        p->freq_bytes += l.freqs.nwords * 4.0 + meta + l.nblocks * 8.0;
        p->payload_words += (double)l.docs.nwords + l.freqs.nwords;
    }
    snprintf(p->codec, sizeof p->codec, "%s",
             codec >= 0 ? tdm_codec_by_id(codec)->name : codec == -1 ? "none" : "mixed");
    if (st == TDM_OK)
        st = tdm_decode_batch_build(r, req, n, &p->b, err);
    free(req);
    return st;
}

static void free_part(part *p)
{
    tdm_decode_batch_free(&p->b);
    free(p->lists);
    memset(p, 0, sizeof *p);
}

/* Device buffers of one part on one device. */
typedef struct dev_part {
    cl_mem bufs[TDM_CODEC_COUNT], docs, freqs, status;
} dev_part;

static void free_dev_part(dev_part *q)
{
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (q->bufs[c])
            clReleaseMemObject(q->bufs[c]);
    cl_mem m[] = {q->docs, q->freqs, q->status};
    for (size_t i = 0; i < 3; i++)
        if (m[i])
            clReleaseMemObject(m[i]);
    memset(q, 0, sizeof *q);
}

/* Seconds from the start of `a` to the end of `b` (both completed). */
static double span_seconds(cl_event a, cl_event b)
{
    cl_ulong s = 0, e = 0;
    clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    return e > s ? (double)(e - s) * 1e-9 : 0;
}

/* One launch of the part (docs, and freqs when both), waited for; its time. */
static int launch(const tdm_resident *res, const part *p, const dev_part *q, int both,
                  double *s, tdm_err *err)
{
    cl_event done = NULL, first = NULL;
    int st = tdm_decode_batch_enqueue_timed(res, NULL, &p->b, q->bufs, q->docs,
                                            both ? q->freqs : NULL, q->status, 0, NULL, &done,
                                            &first, err);
    if (st == TDM_OK && done && clWaitForEvents(1, &done) != CL_SUCCESS)
        st = tdm_err_set(err, TDM_ERR_OPENCL, "waiting for a batched decode");
    *s = st == TDM_OK && first ? span_seconds(first, done) : 0;
    if (st == TDM_OK && *s <= 0)
        st = tdm_err_set(err, TDM_ERR_INTERNAL, "no profiling times for the launch");
    if (done)
        clReleaseEvent(done);
    if (first)
        clReleaseEvent(first);
    return st;
}

/* The outputs against tdm_ireader_decode, list by list. */
static int check(const tdm_ireader *r, const tdm_resident *res, const part *p,
                 const dev_part *q, tdm_err *err)
{
    size_t np = (size_t)p->b.npostings;
    uint32_t *d = malloc(np * 4 + 4), *f = malloc(np * 4 + 4), *rd = NULL, *rf = NULL;
    size_t cap = 0;
    int st = d && f ? TDM_OK : tdm_err_set(err, TDM_ERR_NOMEM, "bench: %zu postings", np);
    if (st == TDM_OK && np)
        st = tdm_download(res->dev, q->docs, 0, np * 4, d, 0, NULL, NULL, err);
    if (st == TDM_OK && np)
        st = tdm_download(res->dev, q->freqs, 0, np * 4, f, 0, NULL, NULL, err);
    if (st == TDM_OK)
        st = tdm_decode_jobs_status(res, q->status, 0, NULL, err);
    for (size_t i = 0; st == TDM_OK && i < p->b.nreq; i++) {
        uint32_t df;
        size_t len;
        uint64_t cf;
        tdm_ireader_term(r, p->lists[i], &len, &df, &cf);
        if (df > cap) {
            free(rd);
            free(rf);
            cap = df;
            rd = malloc(cap * 4);
            rf = malloc(cap * 4);
            if (!rd || !rf) {
                st = tdm_err_set(err, TDM_ERR_NOMEM, "bench");
                break;
            }
        }
        st = tdm_ireader_decode(r, p->lists[i], rd, rf, err);
        uint32_t o = p->b.out[i];
        if (st == TDM_OK && (memcmp(d + o, rd, df * 4) || memcmp(f + o, rf, df * 4)))
            st = tdm_err_set(err, TDM_ERR_INTERNAL, "list %llu decoded wrong on %s",
                             (unsigned long long)p->lists[i], res->dev->info.name);
    }
    free(d);
    free(f);
    free(rd);
    free(rf);
    return st;
}

static int setup_dev_part(const tdm_resident *res, const part *p, dev_part *q, tdm_err *err)
{
    memset(q, 0, sizeof *q);
    size_t np = (size_t)(p->b.npostings ? p->b.npostings : 1);
    uint32_t zero = 0;
    int st = tdm_decode_batch_upload(res, &p->b, q->bufs, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(res->dev, CL_MEM_READ_WRITE, np * 4, NULL, &q->docs, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(res->dev, CL_MEM_READ_WRITE, np * 4, NULL, &q->freqs, err);
    if (st == TDM_OK)
        st = tdm_buffer_create(res->dev, CL_MEM_READ_WRITE, 4, NULL, &q->status, err);
    if (st == TDM_OK)
        st = tdm_upload(res->dev, q->status, 0, 4, &zero, 0, NULL, NULL, err);
    return st;
}

/* Times one part on one device, docs alone and both, into two rows. */
static void time_part(const tdm_bench_ctx *c, const tdm_ireader *r, const tdm_resident *res,
                      int dev, const part *p)
{
    tdm_err err = {0};
    dev_part q;
    double s;
    int st = setup_dev_part(res, p, &q, &err);
    if (st == TDM_OK)
        st = launch(res, p, &q, 1, &s, &err);
    if (st == TDM_OK && (st = check(r, res, p, &q, &err)) == TDM_OK)
        fprintf(stderr, "  %s on %d: every list checked against the reference\n", p->name, dev);
    for (int both = 0; st == TDM_OK && both < 2; both++) {
        double t[64], start = tdm_cli_now();
        int k = 0;
        for (int i = -2; st == TDM_OK && i < c->reps && k < 64; i++) {
            st = launch(res, p, &q, both, &s, &err);
            if (i >= 0)
                t[k++] = s;
            if (k >= 3 && tdm_cli_now() - start > c->budget_s)
                break;
        }
        tdm_bench_row row = {.n = p->b.npostings * (both ? 2 : 1), .device = dev, .launches = k};
        snprintf(row.dist, sizeof row.dist, "%s-%s", p->name, both ? "both" : "docs");
        snprintf(row.codec, sizeof row.codec, "%s", p->codec);
        snprintf(row.device_name, sizeof row.device_name, "%.63s", res->dev->info.name);
        row.bpi = row.bpi_all = p->b.npostings ? p->payload_words * 32 / p->b.npostings : 0;
        row.kernel_s = tdm_bench_median(t, (size_t)k);
        double n = (double)row.n, rd = p->doc_bytes + (both ? p->freq_bytes : 0);
        row.kernel_mis = row.kernel_s > 0 ? n / row.kernel_s / 1e6 : 0;
        row.gbps = row.kernel_s > 0 ? (rd + 4 * n) / row.kernel_s / 1e9 : 0;
        row.roof_pct = c->roof_gbs[dev] > 0 ? 100 * row.gbps / c->roof_gbs[dev] : 0;
        if (st == TDM_OK)
            c->add_row(c->arg, &row);
    }
    if (st != TDM_OK)
        fprintf(stderr, "tandem bench codecs: %s on device %d: %s\n", p->name, dev,
                tdm_err_msg(&err));
    free_dev_part(&q);
    tdm_err_clear(&err);
}

/* Uploads the index to device d (staging: -1 the default, 0 pageable),
 * timed (wall clock, the mapping's pages read as they are copied). */
static int timed_upload(const tdm_ireader *r, tdm_device *d, int staging, tdm_resident *res,
                        tdm_err *err)
{
    tdm_resident_opts o = {TDM_RESIDENT_AUTO, 0, staging};
    int staged = staging < 0 ? tdm_stager_wanted(d) : staging;
    double t0 = tdm_cli_now();
    int st = tdm_resident_upload_opts(r, d, &o, res, err);
    if (st == TDM_OK && res->ready && clWaitForEvents(1, &res->ready) != CL_SUCCESS)
        st = tdm_err_set(err, TDM_ERR_OPENCL, "uploading the index to %s", d->info.name);
    double s = tdm_cli_now() - t0;
    if (st == TDM_OK)
        printf("# index resident on %s: %llu bytes in %.1f ms, %.2f GB/s (%s, wall clock%s)\n",
               d->info.name, (unsigned long long)res->bytes, s * 1e3,
               s > 0 ? res->bytes / s / 1e9 : 0,
               staged ? "through pinned staging" : "pageable, from the mapping",
               res->cache ? "; a list cache: the index exceeds the device memory" : "");
    if (st == TDM_OK && res->stager) {
        tdm_stager_stats ss;
        tdm_stager_stats_get(res->stager, &ss);
        printf("#   staging: %u threads, %llu MB buffers: buffers made in %.1f ms (slowest "
               "thread), memcpy %.1f ms, waits for a buffer %.1f ms (summed over threads)\n",
               ss.workers, (unsigned long long)(ss.chunk >> 20), ss.setup_s * 1e3,
               ss.copy_s * 1e3, ss.wait_s * 1e3);
    }
    return st;
}

/* Where uploads are staged (a discrete GPU), the pageable upload first,
 * for comparison (it also reads the mapping's pages in). */
static int upload(const tdm_ireader *r, tdm_device *d, tdm_resident *res, tdm_err *err)
{
    if (tdm_stager_wanted(d)) {
        if (timed_upload(r, d, 0, res, err) != TDM_OK)
            return err->code;
        tdm_resident_release(res);
    }
    return timed_upload(r, d, -1, res, err);
}

int tdm_bench_index_batched(const tdm_bench_ctx *c, const char *path)
{
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    part parts[2] = {{.name = "index-a"}, {.name = "index-b"}};
    int rc = tdm_ireader_open(path, &r, &err) == TDM_OK ? 0 : -1;
    for (int k = 0; rc == 0 && k < 2; k++)
        if (make_part(r, k == 0, &parts[k], &err) != TDM_OK)
            rc = -1;
    if (rc == 0) {
        printf("# index %s as stored, batched decode: (a) %zu lists of at least one block, "
               "%llu postings; (b) %zu shorter lists, %llu postings; %llu bytes resident\n",
               path, parts[0].b.nreq, (unsigned long long)parts[0].b.npostings, parts[1].b.nreq,
               (unsigned long long)parts[1].b.npostings,
               (unsigned long long)tdm_resident_bytes_needed(r));
        fflush(stdout);
    }
    for (int d = 0; rc == 0 && d < tdm_engine_device_count(c->e); d++) {
        tdm_resident res;
        if (upload(r, tdm_engine_device(c->e, d), &res, &err) != TDM_OK) {
            fprintf(stderr, "tandem bench codecs: device %d: %s\n", d, tdm_err_msg(&err));
            tdm_err_clear(&err);
            continue;
        }
        int v = tdm_decode_jobs_variant(res.dev);
        printf("# batched decode on %s: the %s kernel%s\n", res.dev->info.name,
               v == TDM_DECODE_SERIAL ? "serial" : "work-group",
               tdm_settings_tuning(res.dev->settings)->decode_variant ? " (TANDEM_DECODE_VARIANT)"
                                                                      : "");
        for (int k = 0; k < 2; k++)
            time_part(c, r, &res, d, &parts[k]);
        tdm_resident_release(&res);
    }
    if (rc)
        fprintf(stderr, "tandem bench codecs: %s: %s\n", path, tdm_err_msg(&err));
    for (int k = 0; k < 2; k++)
        free_part(&parts[k]);
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    return rc;
}
