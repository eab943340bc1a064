/* GET /metrics on tandem-mpi serve (docs/MPI.md): tandem serve's families
 * (serve_metrics.c), their scheduler, device, batch-size and list-cache
 * series for every shard of every rank (labels rank and shard before
 * device), and the broker's own (tandem_mpi_*: requests, rounds, merge
 * time, bytes, probes, each rank's state).
 *
 * The ranks' counters are gathered when scraped, by a probe with them
 * (mpi_probe.c), not periodically: a scrape (every 15 s or so) then costs
 * one small exchange with each rank between two requests' rounds and reads
 * counters as of now, where a periodic gather would move them whether
 * anyone reads them or not and still be up to a period old. A scrape waits
 * for its probe at most TMPI_STATUS_WAIT_S (a probe waits behind the round
 * under way); past that it gets the latest gathered, and
 * tandem_mpi_stats_age_seconds says how old they are. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "tmpi.h"

size_t tmpi_metrics_shards(void *ctx, tdm_serve_shard **out)
{
    tmpi_view v;
    tmpi_serve_view(1, TMPI_STATUS_WAIT_S, &v);
    const tmpi_snap *s = v.last_stats;
    size_t n = 0, at = 0;
    (void)ctx;
    for (int r = 0; s && r < s->size; r++)
        n += s->rank[r].nshards;
    if ((*out = calloc(n ? n : 1, sizeof **out)))
        for (int r = 0; s && r < s->size; r++)
            for (uint32_t i = 0; i < s->rank[r].nshards; i++) {
                const tmpi_shard_state *sh = &s->rank[r].sh[i];
                if (!sh->stats)
                    continue;
                tdm_serve_shard *o = &(*out)[at++];
                *o = *sh->stats;
                snprintf(o->labels, sizeof o->labels, "rank=\"%d\",shard=\"%u\",", r, sh->shard);
            }
    tmpi_view_free(&v);
    return at;
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

#define U(x) ((unsigned long long)(x))

/* The broker's counters. */
static void broker_text(FILE *f, const tmpi_ctx *c, const tmpi_view *v)
{
    const tmpi_counters *k = &v->cnt;
    static const struct { const char *name, *type, *help; } m[] = {
        {"tandem_mpi_ranks", "gauge", "ranks of the job"},
        {"tandem_mpi_shards", "gauge", "shards of the split"},
        {"tandem_mpi_requests_total", "counter", "requests run as rounds of every rank"},
        {"tandem_mpi_request_failures_total", "counter",
         "of those, failed by a rank (answered 503 naming it)"},
        {"tandem_mpi_rounds_total", "counter",
         "rounds: a batch to every rank, their answers merged (AND-then-OR may take two)"},
        {"tandem_mpi_round_queries_total", "counter", "queries the rounds carried"},
        {"tandem_mpi_round_seconds_total", "counter",
         "the rounds' wall time on rank 0: send, search on every rank, gather, merge"},
        {"tandem_mpi_merge_seconds_total", "counter",
         "rank 0's time parsing and merging the ranks' answers"},
        {"tandem_mpi_sent_bytes_total", "counter", "bytes rank 0 sent the other ranks"},
        {"tandem_mpi_received_bytes_total", "counter", "bytes rank 0 received from them"},
        {"tandem_mpi_probes_total", "counter",
         "probes of every rank's shards (for /health and /metrics)"},
    };
    double val[] = {(double)c->size, (double)c->nshards, (double)k->requests,
                    (double)k->request_failures, (double)k->rounds, (double)k->round_queries,
                    k->round_s, k->merge_s, (double)k->bytes_out, (double)k->bytes_in,
                    (double)k->probes};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
        head(f, m[i].name, m[i].type, m[i].help);
        fprintf(f, "%s %.9g\n", m[i].name, val[i]);
    }
    if (v->last) {
        head(f, "tandem_mpi_probe_seconds", "gauge", "the latest probe's round trip");
        fprintf(f, "tandem_mpi_probe_seconds %.9g\n", v->last->took);
    }
    if (v->last_stats) {
        head(f, "tandem_mpi_stats_age_seconds", "gauge",
             "age of the rank and shard series: since their probe ended");
        fprintf(f, "tandem_mpi_stats_age_seconds %.3f\n", tdm_cli_now() - v->last_stats->at);
    }
}

/* Each rank's and shard's state at the latest probe. */
static void ranks_text(FILE *f, const tmpi_ctx *c, const tmpi_view *v)
{
    const tmpi_snap *s = v->last;
    if (!s)
        return;
    head(f, "tandem_mpi_rank_info", "gauge", "a rank: its host and process");
    for (int r = 0; r < s->size; r++) {
        fprintf(f, "tandem_mpi_rank_info{rank=\"%d\",host=\"", r);
        tdm_serve_label(f, s->rank[r].host);
        fprintf(f, "\",pid=\"%ld\"} 1\n", s->rank[r].pid);
    }
    head(f, "tandem_mpi_rank_up", "gauge",
         "1: the rank answered the latest probe and is not silent to one under way");
    for (int r = 0; r < s->size; r++)
        fprintf(f, "tandem_mpi_rank_up{rank=\"%d\"} %d\n", r, !tmpi_silent(c, v, r));
    head(f, "tandem_mpi_rank_rounds_total", "counter", "batches the rank has answered");
    for (int r = 0; r < s->size; r++)
        fprintf(f, "tandem_mpi_rank_rounds_total{rank=\"%d\"} %llu\n", r, U(s->rank[r].rounds));
    head(f, "tandem_mpi_shard_ready", "gauge", "1: a lane of the shard lives (it can answer)");
    for (int r = 0; r < s->size; r++)
        for (uint32_t i = 0; i < s->rank[r].nshards; i++)
            fprintf(f, "tandem_mpi_shard_ready{rank=\"%d\",shard=\"%u\"} %d\n", r,
                    s->rank[r].sh[i].shard, !s->rank[r].sh[i].error);
}

void tmpi_metrics_text(void *ctx, FILE *f)
{
    const tmpi_ctx *c = ctx;
    tmpi_view v;
    tmpi_serve_view(0, 0, &v); /* tmpi_metrics_shards's probe has just ended */
    broker_text(f, c, &v);
    ranks_text(f, c, &v);
    tmpi_view_free(&v);
}
