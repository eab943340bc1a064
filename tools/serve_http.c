/* The HTTP side of `tandem serve` (serve.h) on libmicrohttpd: a thread per
 * connection (each waits in the engine for its own answer, so simultaneous
 * requests meet in the scheduler), routing, bounded bodies, the bearer
 * token, JSON errors with their status, and the drain at shutdown. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "search_json.h"
#include "serve.h"

/* One request's state, from its headers to its completion. */
typedef struct conn_req {
    int route;
    char *body;
    size_t len, cap;
    int too_large;         /* the body passed max_body: it is dropped */
    int status;            /* the status answered, 0 until then */
    /* when its stages ended (tdm_cli_now()), for /metrics and the trace:
     * headers in, body in, parsed, run (the backend's answer as JSON),
     * encoded to text, queued to libmicrohttpd; 0 for a stage not reached */
    double t0, t_body, t_parsed, t_run, t_encoded, t_queued;
    double engine;         /* of t_run - t_parsed, the backend's calls */
} conn_req;

static int route_of(const char *url)
{
    static const char *const paths[] = {"/search", "/search/batch", "/health", "/metrics"};
    for (int r = 0; r < 4; r++)
        if (!strcmp(url, paths[r]))
            return r;
    return TDM_ROUTE_OTHER;
}

static enum MHD_Result respond(tdm_serve *sv, struct MHD_Connection *c, conn_req *rq, int status,
                               char *body, size_t len, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, body ? MHD_RESPMEM_MUST_FREE
                                                        : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == 401)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"tandem\"");
    if (status == 405)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW,
                                rq->route <= TDM_ROUTE_BATCH ? "POST" : "GET, HEAD");
    if (atomic_load(&sv->stopping))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (rq->t_run) { /* a search ran: the server's part of it beside the engine's */
        char st[160];
        snprintf(st, sizeof st, "parse;dur=%.3f, engine;dur=%.3f, encode;dur=%.3f",
                 (rq->t_parsed - rq->t_body) * 1e3, rq->engine * 1e3,
                 (rq->t_encoded - rq->t_parsed - rq->engine) * 1e3);
        MHD_add_response_header(r, "Server-Timing", st);
    }
    rq->status = status;
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    rq->t_queued = tdm_cli_now();
    return ret;
}

static enum MHD_Result respond_json(tdm_serve *sv, struct MHD_Connection *c, conn_req *rq,
                                    int status, json_t *j)
{
    size_t len = 0;
    char *s = j ? tdm_cli_json_dump(j, &len) : NULL;
    json_decref(j);
    rq->t_encoded = tdm_cli_now();
    if (!s)
        return MHD_NO; /* out of memory: drop the connection */
    return respond(sv, c, rq, status, s, len, "application/json");
}

/* {"error": msg, "status": status}, the form of every refusal. */
static enum MHD_Result fail(tdm_serve *sv, struct MHD_Connection *c, conn_req *rq, int status,
                            const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return respond_json(sv, c, rq, status,
                        json_pack("{s:o, s:i}", "error", tdm_cli_json_str(msg), "status", status));
}

/* Whether the request carries "Authorization: Bearer <token>"; compared
 * in time independent of where it differs. */
static int authorized(const tdm_serve *sv, struct MHD_Connection *c)
{
    if (!sv->token)
        return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncmp(h, "Bearer ", 7))
        return 0;
    h += 7;
    size_t n = strlen(sv->token), m = strlen(h);
    unsigned diff = n != m;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)sv->token[i] ^ (unsigned char)h[i < m ? i : 0];
    return diff == 0;
}

/* What can be refused from the headers alone, before any body is read:
 * MHD_YES after queueing the refusal, MHD_NO on failure, -1 for none. */
static int check_headers(tdm_serve *sv, struct MHD_Connection *c, conn_req *rq,
                         const char *method)
{
    int post = !strcmp(method, "POST");
    int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (rq->route == TDM_ROUTE_OTHER)
        return fail(sv, c, rq, 404, "no such route (POST /search, POST /search/batch, "
                                    "GET /health, GET /metrics)");
    if (rq->route <= TDM_ROUTE_BATCH ? !post : !get)
        return fail(sv, c, rq, 405, "method %.16s not allowed here", method);
    if (rq->route != TDM_ROUTE_HEALTH && !authorized(sv, c))
        return fail(sv, c, rq, 401, "a bearer token is required (Authorization: Bearer ...)");
    if (atomic_load(&sv->stopping))
        return fail(sv, c, rq, 503, "the server is shutting down");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > sv->lim.max_body)
        return fail(sv, c, rq, 413, "body: %.20s bytes, more than the limit of %zu", cl,
                    sv->lim.max_body);
    return -1;
}

static void body_append(tdm_serve *sv, conn_req *rq, const char *data, size_t n)
{
    if (rq->too_large || rq->len + n > sv->lim.max_body) {
        rq->too_large = 1;
        free(rq->body);
        rq->body = NULL;
        return;
    }
    if (rq->len + n > rq->cap) {
        size_t cap = rq->cap ? rq->cap : 1024;
        while (cap < rq->len + n)
            cap *= 2;
        char *b = realloc(rq->body, cap);
        if (!b) {
            rq->too_large = 1; /* answered 413: better than a crash */
            free(rq->body);
            rq->body = NULL;
            return;
        }
        rq->body = b, rq->cap = cap;
    }
    memcpy(rq->body + rq->len, data, n);
    rq->len += n;
}

/* How many of the scheduler's lanes live (*n: of how many). A lane dies
 * when its device fails (its queries handed to another); with none left
 * no search can be answered, so the server is not ready. */
static int lanes_alive(tdm_serve *sv, int *n)
{
    tdm_sched_stats st;
    tdm_sched_stats_init(&st);
    if (tdm_search_stats(sv->s, &st) != TDM_OK) {
        *n = 0;
        return 0;
    }
    int alive = 0;
    for (int l = 0; l < st.nlanes; l++)
        alive += st.lanes[l].alive != 0;
    *n = st.nlanes;
    return alive;
}

/* 200 {"status": "ready", ...} when searches can be answered, else 503
 * with the reason: loading, stopping, or every lane dead (or the
 * backend's answer, where it gives one). */
static enum MHD_Result health(tdm_serve *sv, struct MHD_Connection *c, conn_req *rq)
{
    int stopping = atomic_load(&sv->stopping), ready = atomic_load(&sv->ready);
    double up = tdm_cli_now() - sv->started;
    if (stopping || !ready)
        return respond_json(sv, c, rq, 503,
                            json_pack("{s:s, s:s, s:f}", "status",
                                      stopping ? "stopping" : "loading", "reason",
                                      stopping ? "the server is shutting down"
                                               : "the index is loading",
                                      "uptime_seconds", up));
    if (sv->be.health) { /* tandem-mpi serve: every rank's shards (mpi_health.c) */
        int st = 503;
        json_t *j = sv->be.health(sv->be.ctx, up, &st);
        return j ? respond_json(sv, c, rq, st, j) : MHD_NO;
    }
    int n, alive = lanes_alive(sv, &n);
    if (n > 0 && alive == 0) {
        char why[128];
        snprintf(why, sizeof why, "no lane alive: all %d failed (their devices faulted); "
                                  "restart the server", n);
        return respond_json(sv, c, rq, 503,
                            json_pack("{s:s, s:s, s:i, s:i, s:f}", "status", "unavailable",
                                      "reason", why, "lanes", n, "lanes_alive", 0,
                                      "uptime_seconds", up));
    }
    return respond_json(sv, c, rq, 200,
                        json_pack("{s:s, s:i, s:i, s:f}", "status", "ready", "lanes", n,
                                  "lanes_alive", alive, "uptime_seconds", up));
}

static enum MHD_Result metrics(tdm_serve *sv, struct MHD_Connection *c, conn_req *rq)
{
    size_t len;
    char *text = tdm_serve_metrics_text(sv, &len);
    if (!text)
        return MHD_NO;
    return respond(sv, c, rq, 200, text, len, "text/plain; version=0.0.4; charset=utf-8");
}

static enum MHD_Result search(tdm_serve *sv, struct MHD_Connection *c, conn_req *rq)
{
    int batch = rq->route == TDM_ROUTE_BATCH;
    if (rq->too_large)
        return fail(sv, c, rq, 413, "body: more than the limit of %zu bytes", sv->lim.max_body);
    if (!atomic_load(&sv->ready))
        return fail(sv, c, rq, 503, "the index is loading");
    char err[512];
    tdm_serve_request req;
    int st = tdm_serve_parse(rq->body ? rq->body : "", rq->len, batch, &sv->defaults, &sv->lim,
                             &req, err, sizeof err);
    rq->t_parsed = tdm_cli_now();
    if (st)
        return fail(sv, c, rq, st, "%s", err);
    json_t *j = tdm_serve_run(sv, &req, batch, &st, &rq->engine, err, sizeof err);
    tdm_serve_request_free(&req);
    rq->t_run = tdm_cli_now();
    if (!j)
        return fail(sv, c, rq, st, "%s", err);
    return respond_json(sv, c, rq, st, j);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    tdm_serve *sv = cls;
    conn_req *rq = *con_cls;
    if (!rq) { /* the headers are in: the request begins */
        if (!(rq = calloc(1, sizeof *rq)))
            return MHD_NO;
        rq->t0 = tdm_cli_now();
        rq->route = route_of(url);
        *con_cls = rq;
        pthread_mutex_lock(&sv->lock);
        sv->in_flight++;
        pthread_mutex_unlock(&sv->lock);
        int r = check_headers(sv, c, rq, method);
        return r < 0 ? MHD_YES : (enum MHD_Result)r;
    }
    if (*upload_size) {
        if (!rq->status)
            body_append(sv, rq, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->status) /* refused from its headers */
        return MHD_YES;
    rq->t_body = tdm_cli_now();
    switch (rq->route) {
    case TDM_ROUTE_HEALTH:
        return health(sv, c, rq);
    case TDM_ROUTE_METRICS:
        return metrics(sv, c, rq);
    default:
        return search(sv, c, rq);
    }
}

/* --trace: one line a request on stderr, the microseconds of
 * each stage (from the previous one reached; '-' for one not reached), to
 * see where a request's time goes. */
static void trace(const conn_req *rq, double now, enum MHD_RequestTerminationCode why)
{
    static const char *const names[] = {"/search", "/search/batch", "/health", "/metrics",
                                        "other"};
    const double t[] = {rq->t_body, rq->t_parsed, rq->t_run, rq->t_encoded, rq->t_queued, now};
    static const char *const stage[] = {"body", "parse", "run", "encode", "queue", "send"};
    char line[256];
    int n = snprintf(line, sizeof line, "tandem serve: trace %s %d", names[rq->route],
                     rq->status);
    double prev = rq->t0;
    for (size_t i = 0; i < sizeof t / sizeof *t && n > 0 && (size_t)n < sizeof line; i++) {
        if (t[i] == 0) {
            n += snprintf(line + n, sizeof line - (size_t)n, " %s -", stage[i]);
            continue;
        }
        n += snprintf(line + n, sizeof line - (size_t)n, " %s %.0f", stage[i], (t[i] - prev) * 1e6);
        prev = t[i];
    }
    fprintf(stderr, "%s engine %.0f total %.0f%s\n", line, rq->engine * 1e6, (now - rq->t0) * 1e6,
            why == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (cut off)");
}

/* The request is over (answered, or its connection gone): counted, freed,
 * and the drain told. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode why)
{
    (void)c, (void)why;
    tdm_serve *sv = cls;
    conn_req *rq = *con_cls;
    if (!rq)
        return;
    *con_cls = NULL;
    double now = tdm_cli_now();
    if (rq->status)
        tdm_serve_metrics_request(sv->metrics, rq->route, rq->status, now - rq->t0, rq->engine);
    if (sv->trace)
        trace(rq, now, why);
    free(rq->body);
    free(rq);
    pthread_mutex_lock(&sv->lock);
    if (--sv->in_flight == 0)
        pthread_cond_broadcast(&sv->idle);
    pthread_mutex_unlock(&sv->lock);
}

static void logger(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    fputs("tandem serve: ", stderr);
    vfprintf(stderr, fmt, ap);
}

int tdm_serve_http_start(tdm_serve *sv, const void *addr, size_t sa_len, unsigned timeout_s,
                         unsigned max_connections, unsigned *port)
{
    const struct sockaddr *sa = addr;
    (void)sa_len;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG | (sa->sa_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    sv->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, sv, MHD_OPTION_EXTERNAL_LOGGER, logger, NULL,
        MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
        MHD_OPTION_CONNECTION_LIMIT, max_connections, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)64 * 1024, MHD_OPTION_NOTIFY_COMPLETED, completed, sv, MHD_OPTION_END);
    if (!sv->daemon)
        return tdm_cli_fail("serve", "cannot listen there: %s", strerror(errno)), -1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(sv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    *port = info ? info->port : 0;
    return 0;
}

unsigned tdm_serve_http_stop(tdm_serve *sv, double drain_s)
{
    atomic_store(&sv->stopping, 1);
    MHD_socket ls = MHD_quiesce_daemon(sv->daemon);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double t = until.tv_sec + until.tv_nsec * 1e-9 + drain_s;
    until.tv_sec = (time_t)t;
    until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&sv->lock);
    while (sv->in_flight && pthread_cond_timedwait(&sv->idle, &sv->lock, &until) == 0)
        ;
    unsigned left = sv->in_flight;
    pthread_mutex_unlock(&sv->lock);
    MHD_stop_daemon(sv->daemon); /* waits for every connection's thread */
    sv->daemon = NULL;
    if (ls != MHD_INVALID_SOCKET)
        close(ls);
    return left;
}
