/* `tandem serve INDEX`: the search service over HTTP (serve.h). Options
 * and limits, listening, loading the index, and the signals: SIGINT and
 * SIGTERM stop accepting, let what is in flight finish, and exit 0. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "cmd_search.h"
#include "serve.h"

static const char help[] =
    "usage: tandem serve INDEX|--shards PREFIX [--listen ADDR:PORT] [options]\n"
    "  a search service over HTTP: JSON in and out, concurrent requests batched\n"
    "  onto the devices by the engine's scheduler (README, 'Serving').\n"
    "%s"
    "defaults of every query (a request's fields override them):\n%s";

const char tdm_serve_help[] =
    "  POST /search        {\"query\": \"text\"} or {\"terms\": {\"term\": weight, ...}},\n"
    "                      with k, algorithm, scoring, k1, b, device, policy as\n"
    "                      'tandem search' takes them: its --json object\n"
    "  POST /search/batch  a list of those (or {\"queries\": [...]}): {\"results\": [...]}\n"
    "  GET /health         200 once the index is resident (503 while loading)\n"
    "  GET /metrics        Prometheus text: requests, latency, devices, list cache\n"
    "  --listen ADDR:PORT  where to listen (127.0.0.1:8080; [::1]:PORT for IPv6;\n"
    "                      port 0 picks a free one, printed on stderr)\n"
    "  --token-file FILE   every route but /health needs 'Authorization: Bearer T',\n"
    "                      T the file's first line\n"
    "limits (a request past one is refused with a 4xx naming it):\n"
    "  --max-body BYTES    request body size (1M; k, M, G suffixes)   -> 413\n"
    "  --max-k N           k of a query, 1..10000 (1000)             -> 400\n"
    "  --max-terms N       entries of a \"terms\" object, 1..1024 (1024) -> 400\n"
    "  --max-batch N       queries of a batch (1000)                 -> 400\n"
    "  --max-connections N connections at once (256; past it they are refused)\n"
    "  --timeout S         seconds a connection may stay idle (30): slow clients\n"
    "  --drain S           seconds a stop waits for requests in flight (30)\n"
    "  --trace             a line a request on stderr: each stage's microseconds\n";

/* ADDR:PORT (ADDR an IPv4 address, [IPv6] or a host name) into *ss; 0, or
 * the exit status after a message (2 for a malformed value, 1 for a name
 * that does not resolve). */
static int parse_listen(const char *cmd, const char *v, struct sockaddr_storage *ss,
                        socklen_t *len)
{
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v)
        return tdm_cli_usage(cmd, "--listen '%s': expected ADDR:PORT", v);
    uint64_t port;
    if (tdm_cli_uint(cmd, "--listen port", colon + 1, 0, 65535, &port))
        return TDM_CLI_EXIT_USAGE;
    char host[256];
    size_t hl = (size_t)(colon - v);
    if (v[0] == '[' && hl >= 2 && v[hl - 1] == ']')
        v++, hl -= 2;
    if (hl >= sizeof host)
        return tdm_cli_usage(cmd, "--listen: address too long");
    memcpy(host, v, hl);
    host[hl] = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc)
        return tdm_cli_fail(cmd, "--listen '%s': %s", host, gai_strerror(rc));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    return 0;
}

/* The token: the file's first line, not empty. */
static char *read_token(const char *cmd, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        tdm_cli_fail(cmd, "--token-file %s: cannot read it", path);
        return NULL;
    }
    char buf[4096];
    char *t = fgets(buf, sizeof buf, f) ? buf : NULL;
    fclose(f);
    if (t)
        t[strcspn(t, "\r\n")] = '\0';
    if (!t || !*t) {
        tdm_cli_fail(cmd, "--token-file %s: the first line is empty", path);
        return NULL;
    }
    return strdup(t);
}

void tdm_serve_defaults(tdm_serve_opts *o, tdm_serve_limits *lim)
{
    *o = (tdm_serve_opts){"127.0.0.1:8080", NULL, 30, 256, 30, 0};
    *lim = (tdm_serve_limits){1u << 20, 1000, TDM_SEARCH_MAX_TERMS, 1000};
}

int tdm_serve_option(const char *cmd, int argc, char **argv, int *i, tdm_serve_opts *o,
                     tdm_serve_limits *lim)
{
    const char *v;
    uint64_t u;
    if ((v = tdm_cli_opt(argc, argv, i, "--listen"))) {
        o->listen = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--token-file"))) {
        o->token_file = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--max-body"))) {
        if (tdm_cli_uint(cmd, "--max-body", v, 1, 1ull << 30, &u))
            return -1;
        lim->max_body = (size_t)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--max-k"))) {
        if (tdm_cli_uint(cmd, "--max-k", v, 1, TDM_SEARCH_K_MAX, &u))
            return -1;
        lim->max_k = (uint32_t)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--max-terms"))) {
        if (tdm_cli_uint(cmd, "--max-terms", v, 1, TDM_SEARCH_MAX_TERMS, &u))
            return -1;
        lim->max_terms = (uint32_t)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--max-batch"))) {
        if (tdm_cli_uint(cmd, "--max-batch", v, 1, 1000000, &u))
            return -1;
        lim->max_batch = (uint32_t)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--max-connections"))) {
        if (tdm_cli_uint(cmd, "--max-connections", v, 1, 100000, &o->max_conn))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--timeout"))) {
        if (tdm_cli_uint(cmd, "--timeout", v, 1, 86400, &o->timeout))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--drain"))) {
        if (tdm_cli_uint(cmd, "--drain", v, 0, 86400, &o->drain))
            return -1;
    } else if (!strcmp(argv[*i], "--trace")) {
        o->trace = 1;
    } else {
        return 0;
    }
    return 1;
}

static int parse_args(int argc, char **argv, tdm_cli_sopts *s, tdm_serve_opts *o,
                      tdm_serve_limits *lim)
{
    for (int i = 1; i < argc; i++) {
        int t;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf(help, tdm_serve_help, tdm_cli_search_help);
            return -1;
        } else if ((t = tdm_serve_option("serve", argc, argv, &i, o, lim)) ||
                   (t = tdm_cli_search_opt("serve", argc, argv, &i, s))) {
            if (t < 0)
                return TDM_CLI_EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage("serve", "unknown or incomplete option '%s'", argv[i]);
        } else if (!s->index) {
            s->index = argv[i];
        } else {
            return tdm_cli_usage("serve", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!s->index)
        return tdm_cli_usage("serve", "need INDEX ('tandem serve --help')");
    if (s->o.k > lim->max_k)
        return tdm_cli_usage("serve", "-k %u is past --max-k %u", s->o.k, lim->max_k);
    return 0;
}

int tdm_serve_listen(tdm_serve *sv, const char *cmd, const tdm_serve_opts *o, const char *what)
{
    struct sockaddr_storage ss = {0};
    socklen_t sl = 0;
    unsigned port;
    int bad = parse_listen(cmd, o->listen, &ss, &sl);
    if (bad)
        return bad;
    sv->trace = o->trace;
    if (tdm_serve_http_start(sv, &ss, sl, (unsigned)o->timeout, (unsigned)o->max_conn, &port))
        return 1;
    char host[INET6_ADDRSTRLEN] = "?";
    const void *a = ss.ss_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                                             : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
    inet_ntop(ss.ss_family, a, host, sizeof host);
    fprintf(stderr, "tandem %s: listening on http://%s%s%s:%u/, loading %s\n", cmd,
            ss.ss_family == AF_INET6 ? "[" : "", host, ss.ss_family == AF_INET6 ? "]" : "", port,
            what);
    return 0;
}

/* Loads the index and serves until SIGINT or SIGTERM (blocked in every
 * thread, so that sigwait here takes them). */
static int serve(tdm_serve *sv, const tdm_cli_sopts *s, const tdm_serve_opts *o,
                 const sigset_t *sigs)
{
    int rc = tdm_serve_listen(sv, "serve", o, s->index);
    if (rc)
        return rc;
    rc = tdm_cli_search_open("serve", s, &sv->e, &sv->ix, &sv->s);
    /* ready once the index is resident everywhere: no first query shares
       the host with its copies */
    if (rc == 0 && tdm_search_wait_ready(sv->s) != TDM_OK)
        rc = tdm_cli_fail("serve", "%s", tdm_last_error());
    if (rc == 0) {
        sv->be = tdm_serve_backend_local(sv);
        sv->ready_at = tdm_cli_now();
        atomic_store(&sv->ready, 1);
        fprintf(stderr, "tandem serve: ready in %.1f s; SIGINT or SIGTERM stops it\n",
                sv->ready_at - sv->started);
        int sig = 0;
        sigwait(sigs, &sig);
        fprintf(stderr, "tandem serve: %s: stopping (waiting up to %llu s for requests in "
                        "flight)\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
                (unsigned long long)o->drain);
    }
    unsigned left = tdm_serve_http_stop(sv, (double)o->drain);
    if (left) {
        fprintf(stderr, "tandem serve: %u request%s still in flight after --drain were cut off\n",
                left, left == 1 ? "" : "s");
        rc = 1;
    } else if (rc == 0) {
        fprintf(stderr, "tandem serve: stopped\n");
    }
    return rc;
}

int tdm_serve_init(tdm_serve *sv, const char *cmd, const tdm_serve_opts *o,
                   const tdm_search_options *defaults, sigset_t *sigs)
{
    char *token = NULL;
    if (o->token_file && !(token = read_token(cmd, o->token_file)))
        return 1;
    /* Before any thread starts (the engine's lanes, the server's), so
     * that every thread inherits the mask. */
    sigemptyset(sigs);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    sv->defaults = *defaults;
    sv->token = token;
    sv->started = tdm_cli_now();
    sv->metrics = tdm_serve_metrics_new();
    if (!sv->metrics || pthread_mutex_init(&sv->lock, NULL) || pthread_cond_init(&sv->idle, NULL)) {
        free(token);
        tdm_serve_metrics_free(sv->metrics);
        return tdm_cli_fail(cmd, "out of memory");
    }
    return 0;
}

void tdm_serve_fini(tdm_serve *sv)
{
    pthread_cond_destroy(&sv->idle);
    pthread_mutex_destroy(&sv->lock);
    tdm_serve_metrics_free(sv->metrics);
    free((char *)sv->token);
}

int tdm_cmd_serve(int argc, char **argv)
{
    tdm_cli_sopts s = {0};
    tdm_search_options_init(&s.o);
    tdm_serve_opts o;
    tdm_serve sv = {0};
    tdm_serve_defaults(&o, &sv.lim);
    int rc = parse_args(argc, argv, &s, &o, &sv.lim);
    if (rc)
        return rc < 0 ? 0 : rc;
    sigset_t sigs;
    if (tdm_serve_init(&sv, "serve", &o, &s.o, &sigs))
        return 1;
    rc = serve(&sv, &s, &o, &sigs);
    tdm_cli_search_close(sv.e, sv.ix, sv.s);
    tdm_serve_fini(&sv);
    return rc;
}
