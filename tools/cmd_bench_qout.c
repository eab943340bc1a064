/* `tandem bench queries`: the series, their statistics, the table and the
 * CSV (columns: algorithm, k, device, device_name, queries, mean_us, p50_us,
 * p90_us, p99_us, max_us per query call; launches, bytes up and down per
 * query; mismatches with the oracle; mode single or batch, batch (queries a
 * call), threads (sending calls at once), queries_per_s, shared (queries a
 * query's launches served, on average), queue_us (mean wait in the
 * scheduler's queues before a lane started the query), sched_batches (runs of
 * several queries the scheduler's lanes made), window_us (their wait in the
 * batching window, per query), cpu_us (the process's CPU time per query)). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_bench_queries.h"
#include "common/fsutil.h"
#include "tandem.h"

tdm_bq_series *tdm_bq_add(tdm_bq_set *s, size_t n)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        tdm_bq_series *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return NULL;
        s->v = v;
        s->cap = cap;
    }
    tdm_bq_series *r = &s->v[s->n];
    memset(r, 0, sizeof *r);
    if (!(r->us = calloc(n ? n : 1, sizeof *r->us)))
        return NULL;
    if (s->per_query && !(r->perq = calloc(n ? n : 1, sizeof *r->perq))) {
        free(r->us);
        return NULL;
    }
    s->n++;
    return r;
}

void tdm_bq_set_free(tdm_bq_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].us);
        free(s->v[i].perq);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p of the values at or below it. */
static double pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t r = (size_t)ceil(p * (double)n);
    return v[r ? r - 1 : 0];
}

void tdm_bq_stats(tdm_bq_series *r)
{
    for (size_t i = 0; r->perq && i < r->n; i++)
        r->perq[i].us = r->us[i];
    qsort(r->us, r->n, sizeof *r->us, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < r->n; i++)
        sum += r->us[i];
    r->mean = r->n ? sum / (double)r->n : 0;
    r->p50 = pct(r->us, r->n, 0.50);
    r->p90 = pct(r->us, r->n, 0.90);
    r->p99 = pct(r->us, r->n, 0.99);
    r->max = r->n ? r->us[r->n - 1] : 0;
}

void tdm_bq_print_header(FILE *f)
{
    fprintf(f, "%-11s %5s %-28s %7s %10s %10s %10s %10s %10s %8s %9s %9s %6s %9s %-11s %6s "
               "%9s\n", "algorithm", "k", "device", "queries", "mean us", "p50 us", "p90 us",
            "p99 us", "max us", "launch/q", "up B/q", "down B/q", "wrong", "q/s", "calls",
            "shared", "cpu us/q");
}

/* "single x4" (4 threads sending single queries), "batch 64" or "batch 64x2". */
static void mode_text(char *buf, size_t cap, const tdm_bq_series *r)
{
    if (!r->batch)
        snprintf(buf, cap, "single x%u", r->threads);
    else if (r->threads > 1)
        snprintf(buf, cap, "batch %ux%u", r->batch, r->threads);
    else
        snprintf(buf, cap, "batch %u", r->batch);
}

void tdm_bq_print_row(FILE *f, const tdm_bq_series *r)
{
    char dev[48], mode[32];
    if (r->device < 0)
        snprintf(dev, sizeof dev, "%.40s", r->device_name);
    else
        snprintf(dev, sizeof dev, "%d %.30s", r->device, r->device_name);
    mode_text(mode, sizeof mode, r);
    fprintf(f, "%-11s %5u %-28.28s %7zu %10.1f %10.1f %10.1f %10.1f %10.1f %8.2f %9.0f %9.0f "
               "%6llu %9.0f %-11s %6.1f %9.1f\n", r->algorithm, r->k, dev, r->n, r->mean, r->p50,
            r->p90, r->p99, r->max, r->launches, r->bytes_up, r->bytes_down,
            (unsigned long long)r->mismatches, r->qps, mode, r->device < 0 ? 1.0 : r->shared,
            r->cpu_us);
    fflush(f);
}

/* The series of algorithm/k/device of r in mode (batch, threads), or NULL. */
static const tdm_bq_series *find(const tdm_bq_set *s, const tdm_bq_series *r, uint32_t batch,
                                 unsigned threads)
{
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *x = &s->v[i];
        if (x->device == r->device && x->k == r->k && x->algo == r->algo &&
            x->batch == batch && x->threads == threads)
            return x;
    }
    return NULL;
}

void tdm_bq_print_tput(FILE *f, const tdm_bq_set *s, const tdm_bq_opts *o)
{
    if (o->nthreads < 2 && !o->nbatches)
        return;
    char mode[32];
    fprintf(f, "\nqueries per second (best: the most of any mode, over single x%u)\n%-11s %5s "
               "%-28s", o->threads[0], "algorithm", "k", "device");
    tdm_bq_series m = {0};
    for (size_t t = 0; t < o->nthreads; t++) {
        m.threads = o->threads[t];
        mode_text(mode, sizeof mode, &m);
        fprintf(f, " %11s", mode);
    }
    m.threads = (unsigned)o->batch_threads;
    for (size_t b = 0; b < o->nbatches; b++) {
        m.batch = o->batches[b];
        mode_text(mode, sizeof mode, &m);
        fprintf(f, " %11s", mode);
    }
    fprintf(f, " %8s\n", "best");
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        if (r->device < 0 || r->batch || r->threads != o->threads[0])
            continue; /* one line per algorithm, k and device: at its first series */
        char dev[48];
        snprintf(dev, sizeof dev, "%d %.30s", r->device, r->device_name);
        fprintf(f, "%-11s %5u %-28.28s", r->algorithm, r->k, dev);
        double best = 0;
        for (size_t c = 0; c < o->nthreads + o->nbatches; c++) {
            const tdm_bq_series *x =
                c < o->nthreads ? find(s, r, 0, o->threads[c])
                                : find(s, r, o->batches[c - o->nthreads],
                                       (unsigned)o->batch_threads);
            fprintf(f, " %11.0f", x ? x->qps : 0.0);
            best = x && x->qps > best ? x->qps : best;
        }
        fprintf(f, " %7.1fx\n", r->qps > 0 ? best / r->qps : 0.0);
    }
    fflush(f);
}

int tdm_bq_open(tdm_outfile *out, const char *path)
{
    tdm_err err = {0};
    int rc = tdm_outfile_open(out, path, &err);
    if (rc != TDM_OK)
        fprintf(stderr, "tandem bench queries: %s\n", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : -1;
}

int tdm_bq_commit(tdm_outfile *out)
{
    tdm_err err = {0};
    int rc = tdm_outfile_commit(out, &err);
    if (rc != TDM_OK)
        fprintf(stderr, "tandem bench queries: %s\n", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : -1;
}

int tdm_bq_write_csv(const char *path, const tdm_bq_set *s)
{
    tdm_outfile out;
    if (tdm_bq_open(&out, path))
        return -1;
    fprintf(out.f, "algorithm,k,device,device_name,queries,mean_us,p50_us,p90_us,p99_us,max_us,"
                   "launches_per_query,bytes_up_per_query,bytes_down_per_query,mismatches,"
                   "mode,batch,threads,queries_per_s,shared,queue_us,sched_batches,window_us,cpu_us\n");
    for (size_t i = 0; i < s->n; i++) {
        const tdm_bq_series *r = &s->v[i];
        char name[64];
        snprintf(name, sizeof name, "%s", r->device_name);
        for (char *p = name; *p; p++)
            if (*p == ',' || *p == '"')
                *p = ' ';
        fprintf(out.f, "%s,%u,%d,%s,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%llu,%s,%u,%u,"
                       "%.1f,%.2f,%.1f,%llu,%.1f,%.1f\n",
                r->algorithm, r->k, r->device, name, r->n, r->mean, r->p50, r->p90, r->p99,
                r->max, r->launches, r->bytes_up, r->bytes_down,
                (unsigned long long)r->mismatches, r->batch ? "batch" : "single",
                r->batch ? r->batch : 1, r->threads, r->qps, r->device < 0 ? 1.0 : r->shared,
                r->queue_us, (unsigned long long)r->sched_batches, r->window_us, r->cpu_us);
    }
    return tdm_bq_commit(&out);
}
