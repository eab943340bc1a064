/* A probe of every rank's shards between rounds, for serve's /health and
 * /metrics (docs/MPI.md). Rank 0 sends each rank one small message and
 * gathers one answer through the calls a round uses (tmpi_bcast,
 * tmpi_gather): a rank that does not answer within --rank-timeout is named
 * and the job ends, as in a round; that deadline is the one detector of a
 * dead or hung rank. A rank answers at once, since between rounds it waits
 * for rank 0's next message. Each shard reports its scheduler's lanes (a
 * shard none of whose lanes lives cannot answer: its devices failed, the
 * failure a round would name) and, for /metrics, its counters
 * (tdm_serve_shard, sent as bytes: every rank runs this one binary). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tmpi.h"

/* ---- a rank's part */

/* Shard s's lanes (*lanes, *alive); msg "" or why it cannot answer. */
static void shard_lanes(tmpi_ctx *c, uint32_t s, int *lanes, int *alive, char *msg, size_t len)
{
    tdm_sched_stats st;
    tdm_sched_stats_init(&st);
    *lanes = *alive = 0;
    msg[0] = 0;
    if (tdm_search_stats(c->sh[s], &st) != TDM_OK) {
        snprintf(msg, len, "%s.%u: %s", c->o->prefix, c->mine[s], tdm_last_error());
        return;
    }
    *lanes = st.nlanes;
    for (int l = 0; l < st.nlanes; l++)
        *alive += st.lanes[l].alive != 0;
    if (*lanes > 0 && *alive == 0) /* tandem serve's words for the same state */
        snprintf(msg, len, "%s.%u: no lane alive: all %d failed (their devices faulted)",
                 c->o->prefix, c->mine[s], *lanes);
}

/* Shard s's counters for /metrics, appended to b. */
static void shard_stats(tmpi_ctx *c, uint32_t s, double up, tmpi_buf *b)
{
#ifdef TANDEM_HAVE_MICROHTTPD
    tdm_serve_shard *sh = calloc(1, sizeof *sh);
    if (!sh) {
        b->nomem = 1;
        return;
    }
    tdm_serve_shard_read(sh, c->engine, c->sh[s], "", up);
    if (c->batch_sizes)
        memcpy(sh->batch, c->batch_sizes[s], sizeof sh->batch);
    tmpi_put(b, sh, sizeof *sh);
    free(sh);
#else
    (void)c, (void)s, (void)up, (void)b; /* no serve, no probe with stats */
#endif
}

void tmpi_probe_answer(tmpi_ctx *c, tmpi_rd *rd, tmpi_buf *b)
{
    uint32_t stats = tmpi_get_u32(rd);
    /* the status a batch's answer begins with (tmpi_read_status) */
    tmpi_put_u32(b, rd->bad ? 1u : 0u);
    tmpi_put_str(b, rd->bad ? "a malformed probe" : "");
    if (rd->bad)
        return;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    uint64_t pid = (uint64_t)getpid(), rounds = c->rounds;
    double up = tdm_cli_now() - c->opened_at;
    tmpi_put(b, &pid, sizeof pid);
    tmpi_put_str(b, host);
    tmpi_put(b, &rounds, sizeof rounds);
    tmpi_put(b, &up, sizeof up);
    tmpi_put_u32(b, c->nmine);
    tmpi_put_u32(b, stats);
    for (uint32_t s = 0; s < c->nmine; s++) {
        int lanes, alive;
        char msg[4300];
        shard_lanes(c, s, &lanes, &alive, msg, sizeof msg);
        tmpi_put_u32(b, c->mine[s]);
        tmpi_put_u32(b, (uint32_t)lanes);
        tmpi_put_u32(b, (uint32_t)alive);
        tmpi_put_str(b, msg);
        if (stats)
            shard_stats(c, s, up, b);
    }
}

void tmpi_probe_observe(tmpi_ctx *c, uint32_t s, tdm_search_result *const *res, uint32_t nq)
{
#ifdef TANDEM_HAVE_MICROHTTPD
    if (strcmp(c->o->mode, "serve")) /* only serve's /metrics reads them */
        return;
    if (!c->batch_sizes &&
        !(c->batch_sizes = calloc(c->nmine ? c->nmine : 1, sizeof *c->batch_sizes)))
        return;
    for (uint32_t i = 0; i < nq; i++) {
        const tdm_search_result *r = res[i];
        if (r && r->status == TDM_OK && r->device >= 0 && r->device < TDM_SCHED_MAX_LANES)
            tdm_serve_batch_observe(&c->batch_sizes[s][r->device], r->batch);
    }
#else
    (void)c, (void)s, (void)res, (void)nq;
#endif
}

/* ---- rank 0 */

tmpi_snap *tmpi_snap_ref(tmpi_snap *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

void tmpi_snap_unref(tmpi_snap *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (int r = 0; s->rank && r < s->size; r++) {
        for (uint32_t i = 0; s->rank[r].sh && i < s->rank[r].nshards; i++) {
            free(s->rank[r].sh[i].error);
            free(s->rank[r].sh[i].stats);
        }
        free(s->rank[r].sh);
    }
    free(s->rank);
    free(s);
}

/* A rank's answer after its status: -1 where malformed. */
static int read_state(tmpi_rd *rd, tmpi_rank_state *st)
{
    uint64_t pid = 0;
    tmpi_get(rd, &pid, sizeof pid);
    st->pid = (long)pid;
    char *host = tmpi_get_str(rd);
    snprintf(st->host, sizeof st->host, "%s", host ? host : "");
    free(host);
    tmpi_get(rd, &st->rounds, sizeof st->rounds);
    tmpi_get(rd, &st->up, sizeof st->up);
    st->nshards = tmpi_get_u32(rd);
    uint32_t stats = tmpi_get_u32(rd);
    if (rd->bad || st->nshards > TMPI_MAX_SHARDS ||
        !(st->sh = calloc(st->nshards ? st->nshards : 1, sizeof *st->sh)))
        return -1;
    for (uint32_t i = 0; !rd->bad && i < st->nshards; i++) {
        tmpi_shard_state *sh = &st->sh[i];
        sh->shard = tmpi_get_u32(rd);
        sh->lanes = (int)tmpi_get_u32(rd);
        sh->alive = (int)tmpi_get_u32(rd);
        sh->error = tmpi_get_str(rd);
        if (sh->error && !*sh->error)
            free(sh->error), sh->error = NULL;
        if (stats && !rd->bad) {
            if (!(sh->stats = malloc(sizeof *sh->stats)))
                return -1;
            tmpi_get(rd, sh->stats, sizeof *sh->stats);
        }
    }
    return rd->bad || rd->at != rd->n ? -1 : 0;
}

/* Every rank's answer (all, lens, offs as tmpi_gather gives them) into s. */
static int read_all(tmpi_ctx *c, const char *all, const size_t *lens, const size_t *offs,
                    tmpi_snap *s)
{
    for (int r = 0; r < c->size; r++) {
        tmpi_rd rd = {all + offs[r], lens[r], 0, 0};
        if (tmpi_read_status(c, r, &rd))
            return -1;
        if (read_state(&rd, &s->rank[r]))
            return tmpi_fail(c, "rank %d: a malformed answer to a probe", r), -1;
    }
    return 0;
}

int tmpi_probe(tmpi_ctx *c, int stats, tmpi_snap **out)
{
    double t0 = MPI_Wtime();
    tmpi_buf down = {0}, up = {0};
    *out = NULL;
    tmpi_put_u32(&down, TMPI_OP_PROBE);
    tmpi_put_u32(&down, stats ? 1u : 0u);
    tmpi_expect_all(c);
    if (down.nomem || tmpi_bcast(c, down.p, down.n, c->o->timeout_s)) {
        free(down.p);
        return tmpi_fail(c, "cannot send a probe"), -1;
    }
    tmpi_rd self = {down.p, down.n, sizeof(uint32_t), 0}; /* rank 0's own shards */
    tmpi_probe_answer(c, &self, &up);
    free(down.p);
    size_t *lens = calloc((size_t)c->size, sizeof *lens);
    size_t *offs = calloc((size_t)c->size, sizeof *offs);
    tmpi_snap *s = calloc(1, sizeof *s);
    char *all = NULL;
    int rc = 0;
    if (up.nomem || !lens || !offs || !s || !(s->rank = calloc((size_t)c->size, sizeof *s->rank)) ||
        tmpi_gather(c, up.p, up.n, c->o->timeout_s, &all, lens, offs)) {
        tmpi_fail(c, "cannot gather the ranks' answers to a probe");
        rc = -1;
    }
    if (s) {
        atomic_init(&s->refs, 1);
        s->size = c->size;
        s->stats = stats != 0;
    }
    if (rc == 0)
        rc = read_all(c, all, lens, offs, s);
    free(up.p);
    free(all);
    free(lens);
    free(offs);
    if (rc) {
        tmpi_snap_unref(s);
        return -1;
    }
    s->at = tdm_cli_now();
    s->took = MPI_Wtime() - t0;
    *out = s;
    return 0;
}
