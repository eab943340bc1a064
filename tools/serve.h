/* `tandem serve`: a search service over HTTP (libmicrohttpd, JSON through
 * jansson) on the public API. One concern a file: cmd_serve.c (options,
 * start, signals, shutdown), serve_http.c (routing, bodies, tokens, status
 * codes), serve_req.c (JSON requests to queries, with the limits),
 * serve_run.c (queries to the engine, answers to JSON; search_json.c writes
 * each result as `tandem search --json` does), serve_metrics.c (Prometheus
 * text). */
#ifndef TDM_CLI_SERVE_H
#define TDM_CLI_SERVE_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tandem.h"

/* ---- requests (serve_req.c) */

/* What one request may ask for; a violation is a 4xx naming it. */
typedef struct tdm_serve_limits {
    size_t max_body;       /* request body bytes */
    uint32_t max_k;        /* k */
    uint32_t max_terms;    /* entries of a "terms" object */
    uint32_t max_batch;    /* queries of a /search/batch request */
} tdm_serve_limits;

/* One query: text, or terms given directly, and its options. */
typedef struct tdm_serve_query {
    const char *text;      /* NULL for terms; owned by the request's JSON */
    tdm_search_term *terms;
    size_t nterms;
    tdm_search_options o;
} tdm_serve_query;

typedef struct tdm_serve_request {
    json_t *root;          /* the parsed body, which the strings point into */
    tdm_serve_query *q;
    size_t n;
} tdm_serve_request;

/* Parses a body of /search (batch 0: one object) or /search/batch (batch 1:
 * an array of such objects, or {"queries": [...]}); unset options are those
 * of `defaults`. 0 on success (free *out with tdm_serve_request_free),
 * else the HTTP status (400, 413) with err naming the violation. */
int tdm_serve_parse(const char *body, size_t len, int batch, const tdm_search_options *defaults,
                    const tdm_serve_limits *lim, tdm_serve_request *out, char *err,
                    size_t errlen);
/* Accepts a zeroed request. */
void tdm_serve_request_free(tdm_serve_request *r);

/* ---- metrics (serve_metrics.c) */

enum tdm_serve_route {
    TDM_ROUTE_SEARCH, TDM_ROUTE_BATCH, TDM_ROUTE_HEALTH, TDM_ROUTE_METRICS, TDM_ROUTE_OTHER,
    TDM_ROUTE_COUNT
};

typedef struct tdm_serve_metrics tdm_serve_metrics;

tdm_serve_metrics *tdm_serve_metrics_new(void);
void tdm_serve_metrics_free(tdm_serve_metrics *m);
/* A request answered with `status` after `seconds`, `engine_s` of them in
 * the backend's calls (the rest is the server's own). Thread-safe. */
void tdm_serve_metrics_request(tdm_serve_metrics *m, int route, int status, double seconds,
                               double engine_s);
/* A query answered (r) or failed (r NULL). Thread-safe. */
void tdm_serve_metrics_query(tdm_serve_metrics *m, const tdm_search_result *r);

/* One search handle's counters as /metrics writes them: tandem serve's
 * own handle, or in tandem-mpi serve each shard of every rank (gathered
 * over MPI, tools/mpi/mpi_probe.c): the same families, each series'
 * labels led by `labels`. */
#define TDM_SERVE_HISTO_BUCKETS 20
/* Bucket counts (not cumulative; the text sums them), their sum and count. */
typedef struct tdm_serve_histo {
    uint64_t b[TDM_SERVE_HISTO_BUCKETS];
    double sum;
    uint64_t n;
} tdm_serve_histo;

typedef struct tdm_serve_shard {
    char labels[64];       /* "" (tandem serve) or `rank="1",shard="2",` */
    int ok;                /* st holds the scheduler's counters */
    double up;             /* seconds since ready: utilization's denominator */
    tdm_sched_stats st;
    int ndev;              /* the engine's devices (at most TDM_SCHED_MAX_LANES) */
    int cache_ok[TDM_SCHED_MAX_LANES];
    tdm_list_cache_stats cache[TDM_SCHED_MAX_LANES];
    char device_name[TDM_SCHED_MAX_LANES][128];
    /* batch sizes by device of the queries it answered (tandem-mpi's ranks;
     * tandem serve's are the server's, tdm_serve_metrics_query) */
    tdm_serve_histo batch[TDM_SCHED_MAX_LANES];
} tdm_serve_shard;

/* s's counters now (e its engine; sh->batch left as it is). */
void tdm_serve_shard_read(tdm_serve_shard *sh, tdm_engine *e, tdm_search *s, const char *labels,
                          double up);
/* One query's batch size into h (tandem_batch_size's buckets). */
void tdm_serve_batch_observe(tdm_serve_histo *h, double batch);
/* A label's value, escaped as the text format wants. */
void tdm_serve_label(FILE *f, const char *s);

/* ---- where queries go (serve_run.c)
 *
 * The server answers requests through a backend: by default the process's
 * own search handle (tdm_serve_backend_local: tdm_search_text/terms/batch),
 * in tandem-mpi serve the MPI ranks' rounds (tools/mpi/mpi_serve.c). Either
 * call may come from any number of connection threads at once. */
typedef struct tdm_serve_backend {
    void *ctx;
    /* One query (q->text or q->terms) with options o: *out a result, or a
     * tandem.h status (negative) with err naming why. */
    int (*search)(void *ctx, const tdm_search_query *q, const tdm_search_options *o,
                  tdm_search_result **out, char *err, size_t errlen);
    /* n queries with options o: out[0 .. n) each a result (its own status
     * for a query that failed), or a status for the whole batch. */
    int (*batch)(void *ctx, const tdm_search_query *qs, size_t n, const tdm_search_options *o,
                 tdm_search_result **out, char *err, size_t errlen);
    /* Frees a result either call gave (accepts NULL). */
    void (*release)(void *ctx, tdm_search_result *r);
    /* Optional (NULL: from the server's own handle `s`), tandem-mpi's:
     * /health's answer once ready and not stopping (*status its HTTP
     * status; uptime the server's); /metrics's shards (*out malloc'd, the
     * count returned) and families of its own, written after the rest. */
    json_t *(*health)(void *ctx, double uptime, int *status);
    size_t (*shards)(void *ctx, tdm_serve_shard **out);
    void (*metrics)(void *ctx, FILE *f);
} tdm_serve_backend;

/* ---- the server */

typedef struct tdm_serve {
    /* set before `ready`, then read-only */
    tdm_engine *e;
    tdm_index *ix;
    tdm_search *s;         /* /health's lanes, /metrics (tandem-mpi: NULL, the backend's hooks) */
    tdm_serve_backend be;  /* where queries go (tdm_serve_backend_local: to s) */
    atomic_int ready;      /* the index is resident: searches are answered */
    atomic_int stopping;   /* a signal came: new requests get 503 */
    tdm_serve_limits lim;
    tdm_search_options defaults;
    const char *token;     /* bearer token, NULL for none */
    double started;        /* tdm_cli_now() at start */
    double ready_at;       /* tdm_cli_now() when `ready` was set */
    tdm_serve_metrics *metrics;
    int trace;             /* --trace: a line a request on stderr */
    /* requests begun and not yet completed, for the drain at shutdown */
    pthread_mutex_t lock;
    pthread_cond_t idle;
    unsigned in_flight;
    struct MHD_Daemon *daemon;
} tdm_serve;

/* The Prometheus text of sv's counters now (malloc'ed, *len its length);
 * NULL when out of memory. Thread-safe. */
char *tdm_serve_metrics_text(tdm_serve *sv, size_t *len);

/* ---- running requests (serve_run.c) */

/* The backend of sv->s, the process's own search handle. */
tdm_serve_backend tdm_serve_backend_local(tdm_serve *sv);

/* Answers a parsed request: one result object (batch 0) or {"results":
 * [...]} (batch 1), each result as `tandem search --json` writes it and a
 * failed query of a batch as {"error", "status"}. NULL with *status and
 * err set when the request (batch 0) or the whole batch failed. *engine_s
 * gets the wall time spent in the backend's calls (the rest of a request's
 * time is the server's own). */
json_t *tdm_serve_run(tdm_serve *sv, const tdm_serve_request *req, int batch, int *status,
                      double *engine_s, char *err, size_t errlen);

/* ---- HTTP (serve_http.c) */

/* Starts listening on addr (sa_len bytes); *port gets the bound port. 0, or
 * -1 after a message. */
int tdm_serve_http_start(tdm_serve *sv, const void *addr, size_t sa_len, unsigned timeout_s,
                         unsigned max_connections, unsigned *port);
/* Stops accepting, waits up to `drain_s` seconds for the requests in flight
 * to be answered, then closes every connection. Returns how many were still
 * in flight at the deadline (0: none lost). */
unsigned tdm_serve_http_stop(tdm_serve *sv, double drain_s);

/* ---- the command's frame (cmd_serve.c), which tandem-mpi serve shares */

typedef struct tdm_serve_opts {
    const char *listen, *token_file;
    uint64_t timeout, max_conn, drain;
    int trace;             /* --trace: a line a request on stderr */
} tdm_serve_opts;

/* The --help lines of the server's options (listen, token, limits, drain). */
extern const char tdm_serve_help[];
/* Defaults of the options and limits. */
void tdm_serve_defaults(tdm_serve_opts *o, tdm_serve_limits *lim);
/* One server option at argv[*i]: 1 taken, 0 not this, -1 bad (after a
 * message; a usage error). */
int tdm_serve_option(const char *cmd, int argc, char **argv, int *i, tdm_serve_opts *o,
                     tdm_serve_limits *lim);
/* Sets up sv (metrics, lock, token, defaults) and blocks SIGINT and SIGTERM
 * in this thread and every thread it starts (call it before any starts);
 * *sigs gets them. 0, or 1 after a message. */
int tdm_serve_init(tdm_serve *sv, const char *cmd, const tdm_serve_opts *o,
                   const tdm_search_options *defaults, sigset_t *sigs);
void tdm_serve_fini(tdm_serve *sv);
/* Listens as o says, printing where (and `what` it loads) on stderr. 0, or
 * the exit status after a message. */
int tdm_serve_listen(tdm_serve *sv, const char *cmd, const tdm_serve_opts *o, const char *what);

#endif
