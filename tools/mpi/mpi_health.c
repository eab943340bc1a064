/* GET /health on tandem-mpi serve (docs/MPI.md): 200 "ready" only when
 * every rank answered the latest probe (mpi_probe.c) and each shard has a
 * lane alive; else 503 "unavailable" naming each rank and shard that
 * cannot answer ("failed": [{rank, shard, error}], the first also as
 * "rank", "shard" and "reason").
 *
 * Each call asks rank 0's main thread for a probe and waits for it at most
 * TMPI_STATUS_WAIT_S. The probe runs between two requests' rounds, so it
 * waits behind a round under way. When the wait ends first:
 * - the main thread is in a round: ranks still searching are busy, not
 *   failed (a long batch is not a fault; --rank-timeout decides that):
 *   the answer is the latest probe's, marked "busy" with the round's
 *   seconds and the ranks it still waits for;
 * - the main thread is in a probe that has waited half the wait or more:
 *   the ranks it waits for are named as not answering (an idle rank
 *   answers in microseconds): 503. The probe keeps waiting, and a rank
 *   silent for --rank-timeout ends the job, as in a round. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "search_json.h"
#include "tmpi.h"

/* The shards of rank r, "PREFIX.i, PREFIX.j" (shard i opens on rank i % R). */
static void shards_of(const tmpi_ctx *c, int r, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (uint32_t i = (uint32_t)r; i < c->nshards && at < len; i += (uint32_t)c->size)
        at += (size_t)snprintf(out + at, len - at, "%s%s.%u", at ? ", " : "", c->o->prefix, i);
}

static void add_failed(json_t *failed, int rank, long shard, const char *error)
{
    json_t *f = json_pack("{s:i, s:o}", "rank", rank, "error", tdm_cli_json_str(error));
    if (f && shard >= 0)
        json_object_set_new(f, "shard", json_integer(shard));
    json_array_append_new(failed, f);
}

int tmpi_silent(const tmpi_ctx *c, const tmpi_view *v, int r)
{
    return !v->fresh && v->phase == TMPI_PROBING && v->phase_s >= TMPI_STATUS_WAIT_S / 2 &&
           r > 0 && r < c->size && atomic_load(&c->waiting[r]);
}

/* The ranks a probe under way has waited for for half the wait or more. */
static void silent_ranks(const tmpi_ctx *c, const tmpi_view *v, json_t *failed)
{
    for (int r = 1; r < c->size; r++) {
        if (!tmpi_silent(c, v, r))
            continue;
        char sh[512], msg[1024];
        shards_of(c, r, sh, sizeof sh);
        snprintf(msg, sizeof msg, "rank %d (%s) has not answered a probe for %.1f s: dead or "
                 "hung; the job ends if it has not answered within --rank-timeout (%.0f s)",
                 r, sh, v->phase_s, c->o->timeout_s);
        add_failed(failed, r, r < (int)c->nshards ? r : -1, msg);
    }
}

/* The latest probe's shards that cannot answer; "ranks" gets each rank's
 * state ("answering" false while silent to a probe under way), *lanes and
 * *alive the sums. */
static void probe_failures(const tmpi_ctx *c, const tmpi_view *v, json_t *failed, json_t *ranks,
                           int *lanes, int *alive)
{
    const tmpi_snap *s = v->last;
    for (int r = 0; s && r < s->size; r++) {
        const tmpi_rank_state *st = &s->rank[r];
        json_t *shards = json_array();
        for (uint32_t i = 0; i < st->nshards; i++) {
            const tmpi_shard_state *sh = &st->sh[i];
            *lanes += sh->lanes;
            *alive += sh->alive;
            json_t *o = json_pack("{s:I, s:i, s:i}", "shard", (json_int_t)sh->shard, "lanes",
                                  sh->lanes, "lanes_alive", sh->alive);
            if (sh->error) {
                char msg[4400];
                snprintf(msg, sizeof msg, "rank %d failed: %s", r, sh->error);
                add_failed(failed, r, (long)sh->shard, msg);
                json_object_set_new(o, "error", tdm_cli_json_str(sh->error));
            }
            json_array_append_new(shards, o);
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o, s:I, s:I, s:b, s:o}", "rank", r,
                                               "host", tdm_cli_json_str(st->host), "pid",
                                               (json_int_t)st->pid, "rounds",
                                               (json_int_t)st->rounds, "answering",
                                               !tmpi_silent(c, v, r), "shards", shards));
    }
}

/* While a round runs: its seconds and the ranks it still waits for. */
static json_t *busy_json(const tmpi_ctx *c, const tmpi_view *v)
{
    if (v->fresh || v->phase != TMPI_ROUND)
        return NULL;
    json_t *w = json_array();
    for (int r = 1; r < c->size; r++)
        if (atomic_load(&c->waiting[r]))
            json_array_append_new(w, json_integer(r));
    return json_pack("{s:f, s:o}", "round_seconds", v->phase_s, "waiting_for_ranks", w);
}

json_t *tmpi_health(void *ctx, double uptime, int *status)
{
    const tmpi_ctx *c = ctx;
    tmpi_view v;
    tmpi_serve_view(0, TMPI_STATUS_WAIT_S, &v);
    json_t *failed = json_array(), *ranks = json_array();
    int lanes = 0, alive = 0;
    silent_ranks(c, &v, failed);
    probe_failures(c, &v, failed, ranks, &lanes, &alive);
    const char *reason = v.closed        ? v.why
                         : v.probe_error ? v.probe_error
                         : !v.last       ? "no probe of the ranks has ended yet"
                                         : NULL;
    json_t *first = json_array_get(failed, 0);
    if (!reason && first)
        reason = json_string_value(json_object_get(first, "error"));
    *status = reason ? 503 : 200;
    json_t *j = json_pack("{s:s, s:i, s:I, s:i, s:i, s:o, s:f}", "status",
                          reason ? "unavailable" : "ready", "nranks", c->size, "nshards",
                          (json_int_t)c->nshards, "lanes", lanes, "lanes_alive", alive, "ranks",
                          ranks, "uptime_seconds", uptime);
    if (j && reason) {
        json_object_set_new(j, "reason", tdm_cli_json_str(reason));
        if (first) {
            json_object_set(j, "rank", json_object_get(first, "rank"));
            if (json_object_get(first, "shard"))
                json_object_set(j, "shard", json_object_get(first, "shard"));
        }
    }
    if (j && json_array_size(failed))
        json_object_set(j, "failed", failed);
    if (j && v.last)
        json_object_set_new(j, "checked_seconds_ago", json_real(tdm_cli_now() - v.last->at));
    json_t *busy = busy_json(c, &v);
    if (j && busy)
        json_object_set_new(j, "busy", busy);
    else
        json_decref(busy);
    json_decref(failed);
    tmpi_view_free(&v);
    return j;
}
