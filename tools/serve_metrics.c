/* The counters of `tandem serve` and their Prometheus text (serve.h): HTTP
 * requests by route and status, latency histograms, queries and errors,
 * batch sizes per device, and at each scrape the scheduler's lanes and the
 * list caches as tdm_search_stats and tdm_search_cache_stats give them: of
 * the server's own handle, or (tandem-mpi serve) of every rank's shards,
 * each family's HELP and TYPE written once above all of their series. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

/* From 10 µs: a light-load request on a GPU, and the server's own part of
 * one, take tens of microseconds. */
static const double sec_bounds[] = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
                                    0.001,   0.0025,   0.005,   0.01,   0.025,   0.05,
                                    0.1,     0.25,     0.5,     1,      2.5,     5, 10};
#define NSEC (sizeof sec_bounds / sizeof *sec_bounds)
static const double batch_bounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
#define NBATCH (sizeof batch_bounds / sizeof *batch_bounds)

typedef tdm_serve_histo histo;
_Static_assert(NSEC + 1 == TDM_SERVE_HISTO_BUCKETS && NBATCH < NSEC, "tdm_serve_histo's buckets");

static const char *const route_names[TDM_ROUTE_COUNT] = {"/search", "/search/batch", "/health",
                                                         "/metrics", "other"};

struct tdm_serve_metrics {
    pthread_mutex_t lock;
    uint64_t requests[TDM_ROUTE_COUNT][600]; /* by HTTP status */
    histo request_s[TDM_ROUTE_COUNT];
    histo overhead_s[TDM_ROUTE_COUNT]; /* request_s less the backend's calls */
    uint64_t queries, errors;
    histo query_s, queue_s;
    histo batch[TDM_SCHED_MAX_LANES]; /* by engine device */
};

tdm_serve_metrics *tdm_serve_metrics_new(void)
{
    tdm_serve_metrics *m = calloc(1, sizeof *m);
    if (m && pthread_mutex_init(&m->lock, NULL)) {
        free(m);
        return NULL;
    }
    return m;
}

void tdm_serve_metrics_free(tdm_serve_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static void observe(histo *h, const double *bounds, size_t nb, double x)
{
    size_t i = 0;
    while (i < nb && x > bounds[i])
        i++;
    h->b[i]++;
    h->sum += x;
    h->n++;
}

void tdm_serve_metrics_request(tdm_serve_metrics *m, int route, int status, double seconds,
                               double engine_s)
{
    if (route < 0 || route >= TDM_ROUTE_COUNT)
        route = TDM_ROUTE_OTHER;
    pthread_mutex_lock(&m->lock);
    if (status >= 100 && status < 600)
        m->requests[route][status]++;
    observe(&m->request_s[route], sec_bounds, NSEC, seconds);
    observe(&m->overhead_s[route], sec_bounds, NSEC, seconds > engine_s ? seconds - engine_s : 0);
    pthread_mutex_unlock(&m->lock);
}

void tdm_serve_metrics_query(tdm_serve_metrics *m, const tdm_search_result *r)
{
    pthread_mutex_lock(&m->lock);
    if (!r) {
        m->errors++;
    } else {
        m->queries++;
        observe(&m->query_s, sec_bounds, NSEC, r->seconds);
        observe(&m->queue_s, sec_bounds, NSEC, r->queue_seconds);
        if (r->device >= 0 && r->device < TDM_SCHED_MAX_LANES)
            observe(&m->batch[r->device], batch_bounds, NBATCH, r->batch);
    }
    pthread_mutex_unlock(&m->lock);
}

void tdm_serve_batch_observe(tdm_serve_histo *h, double batch)
{
    observe(h, batch_bounds, NBATCH, batch);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram's lines; `labels` is "" or `key="v",`. */
static void histo_text(FILE *f, const char *name, const char *labels, const histo *h,
                       const double *bounds, size_t nb)
{
    uint64_t c = 0;
    for (size_t i = 0; i < nb; i++) {
        c += h->b[i];
        fprintf(f, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels, bounds[i],
                (unsigned long long)c);
    }
    fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels, (unsigned long long)h->n);
    int l = (int)strlen(labels); /* "key=\"v\"," without its comma, in braces */
    char sel[80] = "";
    if (l)
        snprintf(sel, sizeof sel, "{%.*s}", l - 1, labels);
    fprintf(f, "%s_sum%s %.9g\n%s_count%s %llu\n", name, sel, h->sum, name, sel,
            (unsigned long long)h->n);
}

/* The server's own counters (a copy taken under the lock); the shards'
 * batch sizes under the same family as the server's. */
static void server_text(FILE *f, const tdm_serve_metrics *m, const tdm_serve_shard *sh, size_t n)
{
    char lab[160];
    head(f, "tandem_http_requests_total", "counter", "HTTP requests answered, by route and status");
    for (int r = 0; r < TDM_ROUTE_COUNT; r++)
        for (int c = 100; c < 600; c++)
            if (m->requests[r][c])
                fprintf(f, "tandem_http_requests_total{route=\"%s\",code=\"%d\"} %llu\n",
                        route_names[r], c, (unsigned long long)m->requests[r][c]);
    head(f, "tandem_http_request_duration_seconds", "histogram",
         "time from a request's headers to its answer sent, by route");
    for (int r = 0; r < TDM_ROUTE_COUNT; r++) {
        snprintf(lab, sizeof lab, "route=\"%s\",", route_names[r]);
        histo_text(f, "tandem_http_request_duration_seconds", lab, &m->request_s[r], sec_bounds,
                   NSEC);
    }
    head(f, "tandem_http_overhead_seconds", "histogram",
         "the server's own part of a request's duration: the duration less the time in the "
         "engine's search calls, by route");
    for (int r = 0; r < TDM_ROUTE_COUNT; r++) {
        snprintf(lab, sizeof lab, "route=\"%s\",", route_names[r]);
        histo_text(f, "tandem_http_overhead_seconds", lab, &m->overhead_s[r], sec_bounds, NSEC);
    }
    head(f, "tandem_queries_total", "counter", "queries answered (a batch counts each of its queries)");
    fprintf(f, "tandem_queries_total %llu\n", (unsigned long long)m->queries);
    head(f, "tandem_query_errors_total", "counter", "queries that failed");
    fprintf(f, "tandem_query_errors_total %llu\n", (unsigned long long)m->errors);
    head(f, "tandem_query_duration_seconds", "histogram",
         "the library's time for a query, queueing included");
    histo_text(f, "tandem_query_duration_seconds", "", &m->query_s, sec_bounds, NSEC);
    head(f, "tandem_query_queue_seconds", "histogram", "time from arrival until a lane started a query");
    histo_text(f, "tandem_query_queue_seconds", "", &m->queue_s, sec_bounds, NSEC);
    head(f, "tandem_batch_size", "histogram",
         "queries sharing a query's launches, by the device that answered it");
    for (int d = 0; d < TDM_SCHED_MAX_LANES; d++)
        if (m->batch[d].n) {
            snprintf(lab, sizeof lab, "device=\"%d\",", d);
            histo_text(f, "tandem_batch_size", lab, &m->batch[d], batch_bounds, NBATCH);
        }
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < TDM_SCHED_MAX_LANES; d++)
            if (sh[i].batch[d].n) {
                snprintf(lab, sizeof lab, "%sdevice=\"%d\",", sh[i].labels, d);
                histo_text(f, "tandem_batch_size", lab, &sh[i].batch[d], batch_bounds, NBATCH);
            }
}

void tdm_serve_label(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
}

/* A series' name and labels: sh's, then `more` ("" or `key="v"`), in
 * braces unless there are none. */
static void series(FILE *f, const char *name, const tdm_serve_shard *sh, const char *more)
{
    size_t l = strlen(sh->labels);
    if (!l && !*more)
        fputs(name, f);
    else if (!*more) /* the labels' own trailing comma dropped */
        fprintf(f, "%s{%.*s}", name, (int)l - 1, sh->labels);
    else
        fprintf(f, "%s{%s%s}", name, sh->labels, more);
}

#define U(x) ((unsigned long long)(x))

void tdm_serve_shard_read(tdm_serve_shard *sh, tdm_engine *e, tdm_search *s, const char *labels,
                          double up)
{
    snprintf(sh->labels, sizeof sh->labels, "%s", labels);
    sh->up = up;
    tdm_sched_stats_init(&sh->st);
    sh->ok = tdm_search_stats(s, &sh->st) == TDM_OK;
    int nd = tdm_engine_device_count(e);
    sh->ndev = nd < TDM_SCHED_MAX_LANES ? nd : TDM_SCHED_MAX_LANES;
    for (int d = 0; d < sh->ndev; d++) {
        tdm_device_info info;
        sh->cache_ok[d] = tdm_search_cache_stats(s, d, &sh->cache[d]) == TDM_OK;
        snprintf(sh->device_name[d], sizeof sh->device_name[d], "%s",
                 tdm_engine_device_info_get(e, d, &info) == TDM_OK ? info.name : "");
    }
}

/* The schedulers' counters and lanes of every shard whose counters came. */
static void sched_text(FILE *f, const tdm_serve_shard *sh, size_t n)
{
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += sh[i].ok != 0;
    if (!ok)
        return;
    static const struct { const char *name, *help; size_t off; } c[] = {
#define C(f, h) {"tandem_sched_" #f "_total", h, offsetof(tdm_sched_stats, f)}
        C(submitted, "queries submitted to the scheduler"),
        C(answered, "queries the scheduler answered"),
        C(failed, "queries the scheduler failed"),
        C(direct, "queries answered in the caller's thread (policy direct)"),
        C(stolen, "queries a lane took from another's queue"),
        C(promoted, "queries run ahead of older work for their deadline"),
        C(handovers, "queries handed from a failing lane to another"),
        C(batches, "lane runs of more than one query"),
        C(batched, "queries answered in those runs"),
        C(deadline_misses, "queries answered after their deadline"),
#undef C
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        head(f, c[k].name, "counter", c[k].help);
        for (size_t i = 0; i < n; i++)
            if (sh[i].ok) {
                series(f, c[k].name, &sh[i], "");
                fprintf(f, " %llu\n", U(*(const uint64_t *)((const char *)&sh[i].st + c[k].off)));
            }
    }
    head(f, "tandem_sched_in_flight", "gauge", "queries submitted and not yet answered");
    for (size_t i = 0; i < n; i++)
        if (sh[i].ok) {
            series(f, "tandem_sched_in_flight", &sh[i], "");
            fprintf(f, " %llu\n", U(sh[i].st.in_flight));
        }
    head(f, "tandem_sched_batch_mode", "gauge", "1 while the lanes take batches (load mode)");
    for (size_t i = 0; i < n; i++)
        if (sh[i].ok) {
            series(f, "tandem_sched_batch_mode", &sh[i], "");
            fprintf(f, " %d\n", sh[i].st.load_mode == TDM_LOAD_BATCH);
        }

    head(f, "tandem_device_info", "gauge", "an engine device: its name and lane kind");
    for (size_t i = 0; i < n; i++)
        for (int l = 0; sh[i].ok && l < sh[i].st.nlanes; l++) {
            const tdm_lane_stats *ls = &sh[i].st.lanes[l];
            fprintf(f, "tandem_device_info{%sdevice=\"%d\",kind=\"%s\",name=\"", sh[i].labels,
                    ls->device, ls->gpu ? "gpu" : "cpu");
            tdm_serve_label(f, ls->device >= 0 && ls->device < sh[i].ndev
                                   ? sh[i].device_name[ls->device] : "");
            fputs("\"} 1\n", f);
        }
    static const struct { const char *name, *type, *help; } lc[] = {
        {"tandem_device_queries_total", "counter", "queries the device's lane answered"},
        {"tandem_device_batches_total", "counter", "its runs of more than one query"},
        {"tandem_device_faults_total", "counter", "its runs that failed (queries handed over)"},
        {"tandem_device_queued", "gauge", "queries waiting in its queue"},
        {"tandem_device_alive", "gauge", "0 once the lane failed"},
        {"tandem_device_busy_seconds_total", "counter", "time its runs took (slots summed)"},
        {"tandem_device_active_seconds_total", "counter",
         "wall time with at least one run going (rate() of it is utilization)"},
        {"tandem_device_utilization", "gauge", "active seconds over the time since ready"},
    };
    for (size_t k = 0; k < sizeof lc / sizeof *lc; k++) {
        head(f, lc[k].name, lc[k].type, lc[k].help);
        for (size_t i = 0; i < n; i++)
            for (int l = 0; sh[i].ok && l < sh[i].st.nlanes; l++) {
                const tdm_lane_stats *ls = &sh[i].st.lanes[l];
                double up = sh[i].up;
                double v[] = {(double)ls->queries, (double)ls->batches, (double)ls->faults,
                              (double)ls->queued, ls->alive, ls->busy_seconds, ls->active_seconds,
                              up > 0 ? ls->active_seconds / up : 0};
                char more[32];
                snprintf(more, sizeof more, "device=\"%d\"", ls->device);
                series(f, lc[k].name, &sh[i], more);
                fprintf(f, " %.9g\n", v[k]);
            }
    }
}

static void cache_text(FILE *f, const tdm_serve_shard *sh, size_t n)
{
    static const struct { const char *name, *type, *help; } c[] = {
        {"tandem_list_cache_enabled", "gauge", "1: posting lists go through the device's cache"},
        {"tandem_list_cache_hits_total", "counter", "lists found in the cache"},
        {"tandem_list_cache_misses_total", "counter", "lists uploaded"},
        {"tandem_list_cache_hit_bytes_total", "counter", "bytes of the lists found"},
        {"tandem_list_cache_moved_bytes_total", "counter", "bytes uploaded"},
        {"tandem_list_cache_evictions_total", "counter", "lists evicted"},
        {"tandem_list_cache_used_bytes", "gauge", "bytes the cache holds"},
        {"tandem_list_cache_capacity_bytes", "gauge", "bytes the cache may hold"},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        head(f, c[k].name, c[k].type, c[k].help);
        for (size_t i = 0; i < n; i++)
            for (int d = 0; d < sh[i].ndev; d++) {
                const tdm_list_cache_stats *cs = &sh[i].cache[d];
                if (!sh[i].cache_ok[d])
                    continue;
                uint64_t v[] = {(uint64_t)cs->cached, cs->hits, cs->misses, cs->bytes_hit,
                                cs->bytes_moved, cs->evictions, cs->used_bytes,
                                cs->capacity_bytes};
                char more[32];
                snprintf(more, sizeof more, "device=\"%d\"", d);
                series(f, c[k].name, &sh[i], more);
                fprintf(f, " %llu\n", U(v[k]));
            }
    }
}

/* The shards /metrics describes: the backend's, or the server's own
 * handle (*n 0 before ready). NULL with *n 0 when there are none. */
static tdm_serve_shard *shards_now(tdm_serve *sv, int ready, double now, size_t *n)
{
    tdm_serve_shard *sh = NULL;
    *n = 0;
    if (!ready)
        return NULL;
    if (sv->be.shards) {
        *n = sv->be.shards(sv->be.ctx, &sh);
        return *n ? sh : (free(sh), NULL);
    }
    if ((sh = calloc(1, sizeof *sh))) {
        tdm_serve_shard_read(sh, sv->e, sv->s, "", now - sv->ready_at);
        *n = 1;
    }
    return sh;
}

char *tdm_serve_metrics_text(tdm_serve *sv, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    double now = tdm_cli_now();
    int ready = atomic_load(&sv->ready);
    size_t nsh;
    tdm_serve_shard *sh = shards_now(sv, ready, now, &nsh);
    tdm_serve_metrics *copy = malloc(sizeof *copy);
    if (copy) { /* print from a copy: the lock is not held while writing */
        pthread_mutex_lock(&sv->metrics->lock);
        memcpy(copy, sv->metrics, sizeof *copy);
        pthread_mutex_unlock(&sv->metrics->lock);
        server_text(f, copy, sh, nsh);
        free(copy);
    }
    pthread_mutex_lock(&sv->lock);
    unsigned in_flight = sv->in_flight;
    pthread_mutex_unlock(&sv->lock);
    head(f, "tandem_ready", "gauge", "1 once the index is resident and searches are answered");
    fprintf(f, "tandem_ready %d\n", ready);
    head(f, "tandem_http_requests_in_flight", "gauge", "requests begun and not yet answered");
    fprintf(f, "tandem_http_requests_in_flight %u\n", in_flight);
    head(f, "tandem_uptime_seconds", "gauge", "seconds since the server started");
    fprintf(f, "tandem_uptime_seconds %.3f\n", now - sv->started);
    if (ready) {
        sched_text(f, sh, nsh);
        cache_text(f, sh, nsh);
        if (sv->be.metrics)
            sv->be.metrics(sv->be.ctx, f);
    }
    free(sh);
    if (fclose(f) || !copy) {
        free(buf);
        return NULL;
    }
    return buf;
}
