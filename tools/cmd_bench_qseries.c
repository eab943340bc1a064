/* `tandem bench queries`: the device series. Each algorithm at each k on
 * each device, sent as single queries from T threads (for each T of
 * --threads) and as batch calls of N queries (for each N of --batch),
 * through qrun.h; every answer checked against the oracle's, the latency of
 * each query's call and the queries per second of the series recorded. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_bench_queries.h"
#include "progress.h"
#include "qrun.h"
#include "tandem.h"

#define MAX_REPORTED 5 /* mismatches described per series */

static const char C[] = "bench queries";

typedef tdm_bq bq;

/* The oracle's answer for what ran. */
/* 0 if r is the oracle's answer for query q at k, from the device asked;
 * else describes the first difference into why[]. */
static int check(const bq *b, const tdm_search_result *r, size_t q, uint32_t k, int device,
                 int spread, char *why, size_t cap)
{
    if (!spread && r->device != device) {
        snprintf(why, cap, "answered by device %d", r->device);
        return 1;
    }
    return tdm_bq_answers_check(&b->ans_and, &b->ans_or, r, q, k, why, cap);
}

/* What one series' sink needs. */
typedef struct sctx {
    const bq *b;
    tdm_bq_series *s;     /* NULL in the warm-up */
    tdm_progress bar;
    double start;         /* before the first timed call */
    double last;          /* when the last call of a delivered answer returned */
    size_t timed;
    double shared;        /* sum of tdm_search_result.batch */
    double queue;         /* sum of tdm_search_result.queue_seconds */
    char failed[320];     /* the failed query and why; "" none */
} sctx;

static int sink(void *ctx, size_t i, const tdm_qr_answer *a)
{
    sctx *c = ctx;
    const bq *b = c->b;
    tdm_bq_series *s = c->s;
    const char *id = b->qs.qf->q[b->qs.pos[i]].id;
    if (!a->r) {
        snprintf(c->failed, sizeof c->failed, "query '%s': %s", id,
                 a->error ? a->error : "failed");
        return 1;
    }
    if (s) {
        const tdm_search_result *r = a->r;
        double shared = r->batch ? r->batch : 1; /* launches and bytes are the batch's */
        char why[160];
        s->us[i] = a->seconds * 1e6;
        if (s->perq)
            s->perq[i] = (tdm_bq_qrec){0, r->algorithm, r->variant, r->partitions};
        s->split += r->partitions > 0;
        c->timed++;
        /* answers arrive in the queries' order, not the calls' (several
           senders): the series ends with the call that returned last */
        if (a->t_done > c->last)
            c->last = a->t_done;
        c->shared += shared;
        c->queue += r->queue_seconds;
        s->launches += r->launches / shared;
        s->bytes_up += (double)r->bytes_up / shared;
        s->bytes_down += (double)r->bytes_down / shared;
        if (check(b, r, i, s->k, s->device, s->spread, why, sizeof why) && ++s->mismatches <= MAX_REPORTED) {
            tdm_progress_clear(&c->bar);
            fprintf(stderr, "MISMATCH %s k %u device %d %s query '%s': %s\n", s->algorithm,
                    s->k, s->device, s->batch ? "batch" : "single", id, why);
        }
    }
    tdm_progress_update(&c->bar, i + 1);
    /* the budget ends a series at a call's last answer: a batch call's
       answers all count (calls take consecutive chunks of `batch` queries) */
    int call_end = !s || !s->batch || (i + 1) % s->batch == 0;
    return s && call_end && b->o.budget > 0 && tdm_cli_now() - c->start > b->o.budget;
}

/* The process's CPU time so far (every thread), in seconds. */
static double cpu_now(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t))
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A spread series' work on each lane (stderr): queries answered, runs, and
 * the share of the series' wall time it had a run going, so that a lane
 * left idle shows. */
static void lanes_line(const char *label, const tdm_sched_stats *st0,
                       const tdm_sched_stats *st1, double wall)
{
    fprintf(stderr, "%s: lanes (queries, runs, busy):", label);
    for (int l = 0; l < st1->nlanes && l < TDM_SCHED_MAX_LANES; l++) {
        const tdm_lane_stats *a = &st0->lanes[l], *b = &st1->lanes[l];
        double busy = wall > 0 ? (b->active_seconds - a->active_seconds) / wall : 0;
        fprintf(stderr, " %d: %llu, %llu, %.0f%%;", b->device,
                (unsigned long long)(b->queries - a->queries),
                (unsigned long long)(b->batches - a->batches), busy * 100);
    }
    fputc('\n', stderr);
}

/* Sends queries [0, n) as series s asks (the warm-up when timed is 0);
 * 0, or 1 after a message. */
static int pass(const bq *b, tdm_search *sh, const tdm_qr_query *qs, size_t n,
                const tdm_search_options *o, tdm_bq_series *s, int timed, const char *label)
{
    sctx c = {b, timed ? s : NULL, {0}, 0, 0, 0, 0, 0, ""};
    tdm_qr_job j = {sh, qs, n, o, s->batch, s->threads, sink, &c};
    tdm_progress_begin(&c.bar, label, timed ? "queries" : "warm-up", n, 0);
    tdm_sched_stats st0, st1;
    tdm_sched_stats_init(&st0);
    tdm_sched_stats_init(&st1);
    int have = tdm_search_stats(sh, &st0) == TDM_OK;
    c.start = tdm_cli_now();
    double cpu0 = cpu_now();
    size_t done = 0;
    int rc = tdm_qr_run(&j, C, &done);
    double cpu = cpu_now() - cpu0;
    tdm_progress_end(&c.bar, done);
    have = have && tdm_search_stats(sh, &st1) == TDM_OK;
    if (rc)
        return 1;
    if (*c.failed)
        return tdm_cli_fail(C, "%s: %s", label, c.failed);
    if (timed) {
        s->n = c.timed;
        s->qps = c.last > c.start ? (double)c.timed / (c.last - c.start) : 0;
        s->shared = c.timed ? c.shared / (double)c.timed : 0;
        s->queue_us = c.timed ? c.queue * 1e6 / (double)c.timed : 0;
        s->cpu_us = c.timed ? cpu * 1e6 / (double)c.timed : 0;
        if (have) { /* what the scheduler did for this series (the runs it stopped early too) */
            s->sched_batches = st1.batches - st0.batches;
            s->window_us = done ? (st1.window_wait - st0.window_wait) * 1e6 / (double)done : 0;
        }
        if (have && s->spread)
            lanes_line(label, &st0, &st1, c.last - c.start);
    }
    return 0;
}

/* One series: algorithm ai at k on device d (d the device count: every
 * device, placed by b->o.spread), single calls from `threads` threads
 * (batch 0) or batch calls of `batch` queries. */
static int run_series(bq *b, tdm_search *sh, const tdm_qr_query *qs, int d, const char *dname,
                      size_t ai, uint32_t k, uint32_t batch, unsigned threads)
{
    tdm_bq_series *s = tdm_bq_add(&b->set, b->qs.nq);
    if (!s)
        return tdm_cli_fail(C, "out of memory");
    int a = b->o.algos[ai];
    snprintf(s->algorithm, sizeof s->algorithm, "%s", tdm_algorithm_name(a));
    s->algo = a;
    s->color = (int)ai;
    s->k = k;
    s->device = d;
    s->spread = b->o.spread;
    snprintf(s->device_name, sizeof s->device_name, "%.63s", dname);
    s->batch = batch;
    s->threads = threads;
    s->cdf = batch == 0 && threads == b->o.threads[0];
    tdm_search_options o;
    tdm_search_options_init(&o);
    o.algorithm = a;
    o.k = k;
    o.device = b->o.spread ? -1 : d;
    o.policy = b->o.spread ? b->o.spread : o.policy;
    o.k1 = b->o.k1;
    o.b = b->o.b;
    char label[96];
    if (batch)
        snprintf(label, sizeof label, "%s k %u device %d batch %u", s->algorithm, k, d, batch);
    else
        snprintf(label, sizeof label, "%s k %u device %d %u thread%s", s->algorithm, k, d,
                 threads, threads == 1 ? "" : "s");
    /* a batched series warms up with at least a full batch a sender (the
     * first batch of a size allocates its buffers), unless told none */
    size_t warm = (size_t)b->o.warmup, full = (size_t)batch * s->threads;
    warm = warm && full > warm ? full : warm;
    warm = warm < b->qs.nq ? warm : b->qs.nq;
    if ((warm && pass(b, sh, qs, warm, &o, s, 0, label)) || pass(b, sh, qs, b->qs.nq, &o, s, 1, label))
        return 1;
    if (s->n) {
        s->launches /= (double)s->n;
        s->bytes_up /= (double)s->n;
        s->bytes_down /= (double)s->n;
    }
    tdm_bq_stats(s);
    b->mismatches += s->mismatches;
    tdm_bq_print_row(stdout, s);
    if (s->split) /* a partitioned or split handle (docs/PARTITION.md) */
        fprintf(stderr, "%s: %zu of %zu queries ran on every partition at once\n", label,
                s->split, s->n);
    return 0;
}

/* Every series of one device. */
static int run_device(bq *b, tdm_search *sh, const tdm_qr_query *qs, int d, const char *dname)
{
    const tdm_bq_opts *o = &b->o;
    int rc = 0;
    for (size_t ki = 0; rc == 0 && ki < o->nk; ki++)
        for (size_t ai = 0; rc == 0 && ai < o->nalgos; ai++) {
            for (size_t t = 0; rc == 0 && t < o->nthreads; t++)
                rc = run_series(b, sh, qs, d, dname, ai, o->ks[ki], 0, o->threads[t]);
            for (size_t n = 0; rc == 0 && n < o->nbatches; n++)
                rc = run_series(b, sh, qs, d, dname, ai, o->ks[ki], o->batches[n],
                                (unsigned)o->batch_threads);
        }
    return rc;
}

/* The usable queries as qrun.h takes them. */
static tdm_qr_query *make_queries(const bq *b)
{
    tdm_qr_query *qs = calloc(b->qs.nq ? b->qs.nq : 1, sizeof *qs);
    for (size_t q = 0; qs && q < b->qs.nq; q++) {
        const tdm_qf_query *fq = &b->qs.qf->q[b->qs.pos[q]];
        qs[q] = (tdm_qr_query){fq->text, b->qs.terms[q], fq->text ? 0 : fq->nterms};
    }
    return qs;
}

int tdm_bq_run_devices(bq *b, tdm_index *ix)
{
    tdm_engine_options eo;
    tdm_engine_options_init(&eo);
    eo.devices = b->o.devices;
    eo.build_options = b->o.build_options;
    tdm_engine *e = NULL;
    tdm_search *sh = NULL;
    tdm_qr_query *qs = make_queries(b);
    int rc = qs ? 0 : tdm_cli_fail(C, "out of memory");
    if (rc == 0 && (tdm_engine_open(&eo, &e) != TDM_OK || tdm_search_open(e, ix, &sh) != TDM_OK))
        rc = tdm_cli_fail(C, "%s", tdm_last_error());
    /* no series shares the host with the index's uploads (a CPU device's
       copy of it took a core for seconds at 10M documents) */
    if (rc == 0 && tdm_search_wait_ready(sh) != TDM_OK)
        rc = tdm_cli_fail(C, "%s", tdm_last_error());
    if (rc == 0 && *tdm_engine_warnings(e))
        fprintf(stderr, "%s\n", tdm_engine_warnings(e));
    int nd = rc == 0 ? tdm_engine_device_count(e) : 0;
    if (rc == 0 && b->o.spread) {
        char name[64];
        snprintf(name, sizeof name, "all %d, %s", nd, tdm_policy_name(b->o.spread));
        fprintf(stderr, "device %d: %d devices together under policy %s\n", nd, nd,
                tdm_policy_name(b->o.spread));
        rc = run_device(b, sh, qs, nd, name);
        nd = 0; /* no series a device */
    }
    for (int d = 0; rc == 0 && d < nd; d++) {
        tdm_device_info info;
        tdm_engine_device_info_get(e, d, &info);
        fprintf(stderr, "device %d: %s (%s, %u compute units)\n", d, info.name, info.platform,
                info.compute_units);
        rc = run_device(b, sh, qs, d, info.name);
        tdm_list_cache_stats cs; /* TANDEM_DEVICE_MEMORY below the index: docs/CACHE.md */
        if (rc == 0 && tdm_search_cache_stats(sh, d, &cs) == TDM_OK && cs.cached)
            fprintf(stderr, "device %d list cache: %llu bytes, hit rate %.4f (%llu hits, %llu "
                    "misses), %llu bytes moved, %llu evictions, %llu streamed, %llu waits\n", d,
                    (unsigned long long)cs.capacity_bytes,
                    cs.hits + cs.misses ? (double)cs.hits / (double)(cs.hits + cs.misses) : 0,
                    (unsigned long long)cs.hits, (unsigned long long)cs.misses,
                    (unsigned long long)cs.bytes_moved, (unsigned long long)cs.evictions,
                    (unsigned long long)cs.streamed, (unsigned long long)cs.waits);
    }
    tdm_search_close(sh);
    tdm_engine_close(e);
    free(qs);
    return rc;
}
