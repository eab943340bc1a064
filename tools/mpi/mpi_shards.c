/* Every rank opens its shards, PREFIX.<i> for i = rank, rank + R, ...
 * (below N, the count its first shard records), and reports them to rank
 * 0, which checks before any engine opens, and again after, that the files
 * are one split (one split id, each shard once, ranges covering the
 * documents), that no shard is missing and that the rank count fits; then
 * every rank opens its engine (TANDEM_DEVICES as usual) and a search
 * handle per shard. Every failure is reported on rank 0 naming the file and
 * the rank, and every rank stops. */
#include <stdlib.h>
#include <string.h>

#include "index/index_priv.h"
#include "index/reader.h"
#include "tmpi.h"

typedef struct rec {
    uint32_t want;              /* PREFIX.<want> was opened */
    uint32_t shard, nshards, lo, hi, impact;
    uint64_t split, ndocs;
} rec;

static void path_of(const tmpi_ctx *c, uint32_t i, char *p, size_t cap)
{
    snprintf(p, cap, "%s.%u", c->o->prefix, i);
}

/* Opens PREFIX.i into c's next slot; its record into b. 0, or the error
 * text in msg. */
static int open_one(tmpi_ctx *c, uint32_t i, tmpi_buf *b, char *msg, size_t cap)
{
    char path[4096];
    path_of(c, i, path, sizeof path);
    tdm_index *ix = NULL;
    if (tdm_index_open(path, &ix) != TDM_OK) {
        snprintf(msg, cap, "%s", tdm_last_error());
        return -1;
    }
    const tdm_ireader_info *in = tdm_ireader_info_get(tdm_index_ireader(ix));
    if (!in->shard) {
        snprintf(msg, cap, "%s: a whole index, not a shard ('tandem shard INDEX --shards N "
                 "-o PREFIX' makes PREFIX.0 .. PREFIX.<N-1>)", path);
        tdm_index_close(ix);
        return -1;
    }
    rec r = {i, in->shard_index, in->nshards, in->doc_lo, in->doc_hi, (uint32_t)in->impact,
             in->split_id, in->ndocs};
    tmpi_put(b, &r, sizeof r);
    c->mine[c->nmine] = i;
    c->ix[c->nmine++] = ix;
    if (!c->nshards)
        c->nshards = in->nshards;
    c->impact = in->impact;
    return 0;
}

/* This rank's files: a status, a message, the records. */
static void open_files(tmpi_ctx *c, tmpi_buf *out)
{
    char msg[4200] = "";
    tmpi_buf recs = {0};
    uint32_t first_missing = 0;
    int rc = open_one(c, (uint32_t)c->rank, &recs, msg, sizeof msg);
    if (rc)
        first_missing = 1;
    for (uint64_t i = (uint64_t)c->rank + (uint64_t)c->size; rc == 0 && i < c->nshards;
         i += (uint64_t)c->size) {
        if (c->nmine == TMPI_MAX_SHARDS) {
            snprintf(msg, sizeof msg, "more than %d shards on one rank", TMPI_MAX_SHARDS);
            rc = -1;
        } else {
            rc = open_one(c, (uint32_t)i, &recs, msg, sizeof msg);
        }
    }
    tmpi_put_u32(out, rc ? 1u : 0u);
    tmpi_put_u32(out, first_missing);
    tmpi_put_str(out, msg);
    tmpi_put_u32(out, c->nmine);
    tmpi_put(out, recs.p, recs.n);
    free(recs.p);
}

/* Rank 0: the checks of one rank's report against shard 0's record r0;
 * 0 or 1 after a message. seen[i] marks shard i found. */
static int check_rank(tmpi_ctx *c, int r, tmpi_rd *rd, const rec *r0, rec *byshard,
                      unsigned char *seen)
{
    uint32_t bad = tmpi_get_u32(rd), first_missing = tmpi_get_u32(rd);
    char *msg = tmpi_get_str(rd);
    uint32_t n = tmpi_get_u32(rd);
    int rc = 0;
    static int said; /* every rank past N says the same: once */
    if (bad && first_missing && r0 && (uint32_t)r >= r0->nshards)
        rc = said++ ? 1 : tmpi_fail(c, "%d ranks for %u shards (%s.0 is shard 0 of %u): run at most %u "
                       "ranks; shard i goes to rank i %% ranks", c->size, r0->nshards,
                       c->o->prefix, r0->nshards, r0->nshards);
    else if (bad)
        rc = tmpi_fail(c, "rank %d: %s", r, msg ? msg : "(no message)");
    free(msg);
    for (uint32_t k = 0; !rd->bad && k < n; k++) {
        rec x;
        tmpi_get(rd, &x, sizeof x);
        char path[4096];
        path_of(c, x.want, path, sizeof path);
        if (!r0 || rd->bad)
            continue;
        if (x.split != r0->split || x.nshards != r0->nshards)
            rc = tmpi_fail(c, "%s (rank %d): shard %u of %u of split %016llx, but %s.0 is "
                           "of split %016llx (%u shards): shards of two splits", path, r,
                           x.shard, x.nshards, (unsigned long long)x.split, c->o->prefix,
                           (unsigned long long)r0->split, r0->nshards);
        else if (x.shard != x.want)
            rc = tmpi_fail(c, "%s (rank %d) holds shard %u, not shard %u", path, r, x.shard,
                           x.want);
        else if (x.want < r0->nshards) {
            seen[x.want] = 1;
            byshard[x.want] = x;
        }
    }
    if (rd->bad)
        rc = tmpi_fail(c, "rank %d: a malformed report", r);
    return rc;
}

/* Rank 0: every shard once, their ranges covering the documents. */
static int check_cover(tmpi_ctx *c, const rec *r0, const rec *byshard,
                       const unsigned char *seen)
{
    for (uint32_t i = 0; i < r0->nshards; i++) {
        if (!seen[i])
            return tmpi_fail(c, "shard %u of %u (%s.%u) was opened by no rank", i,
                             r0->nshards, c->o->prefix, i);
        uint32_t lo = i ? byshard[i - 1].hi : 0;
        if (byshard[i].lo != lo || (i + 1 == r0->nshards && byshard[i].hi != r0->ndocs))
            return tmpi_fail(c, "%s.%u: documents [%u, %u) do not follow on from shard %u",
                             c->o->prefix, i, byshard[i].lo, byshard[i].hi, i ? i - 1 : 0);
    }
    return 0;
}

/* Rank 0: every rank's report checked; 0 or 1. */
static int check_files(tmpi_ctx *c, const char *all, const size_t *lens, const size_t *offs)
{
    uint32_t n0 = c->nshards ? c->nshards : 1;
    rec *byshard = calloc(n0, sizeof *byshard);
    unsigned char *seen = calloc(n0, 1);
    if (!byshard || !seen) {
        free(byshard);
        free(seen);
        return tmpi_fail(c, "out of memory");
    }
    rec r0s, *r0 = NULL;
    if (c->nmine) { /* rank 0's first record, shard 0: the reference */
        tmpi_rd rd = {all, lens[0], 0, 0};
        tmpi_get_u32(&rd);
        tmpi_get_u32(&rd);
        free(tmpi_get_str(&rd));
        tmpi_get_u32(&rd);
        tmpi_get(&rd, &r0s, sizeof r0s);
        r0 = rd.bad ? NULL : &r0s;
    }
    int rc = 0;
    for (int r = 0; r < c->size; r++) {
        tmpi_rd rd = {all + offs[r], lens[r], 0, 0};
        rc |= check_rank(c, r, &rd, r0, byshard, seen);
    }
    if (rc == 0 && r0)
        rc = check_cover(c, r0, byshard, seen);
    free(byshard);
    free(seen);
    return rc ? 1 : 0;
}

/* One step of the open: every rank's report to rank 0, its verdict back.
 * 0 on every rank, or 1 on every rank. */
static int step(tmpi_ctx *c, tmpi_buf *mine, int (*check)(tmpi_ctx *, const char *,
                                                          const size_t *, const size_t *))
{
    size_t *lens = calloc((size_t)c->size, sizeof *lens);
    size_t *offs = calloc((size_t)c->size, sizeof *offs);
    char *all = NULL;
    uint32_t verdict = 1;
    if (!lens || !offs || mine->nomem) {
        tmpi_fail(c, "rank %d: out of memory", c->rank);
        tmpi_abort(c, 1);
    }
    if (tmpi_gather(c, mine->p, mine->n, c->o->open_timeout_s, &all, lens, offs))
        tmpi_abort(c, 1);
    if (c->rank == 0) {
        verdict = (uint32_t)check(c, all, lens, offs);
        if (tmpi_bcast(c, &verdict, sizeof verdict, c->o->open_timeout_s))
            tmpi_abort(c, 1);
    } else {
        char *m = NULL;
        size_t n = 0;
        if (tmpi_recv(c, &m, &n))
            tmpi_abort(c, 1);
        verdict = n == sizeof verdict ? *(uint32_t *)m : 1;
        free(m);
    }
    free(all);
    free(lens);
    free(offs);
    return verdict ? 1 : 0;
}

/* Rank 0: every rank's engine report; 0 or 1. */
static int check_engines(tmpi_ctx *c, const char *all, const size_t *lens, const size_t *offs)
{
    int rc = 0;
    for (int r = 0; r < c->size; r++) {
        tmpi_rd rd = {all + offs[r], lens[r], 0, 0};
        uint32_t bad = tmpi_get_u32(&rd);
        char *msg = tmpi_get_str(&rd);
        if (bad || rd.bad)
            rc = tmpi_fail(c, "rank %d: %s", r, msg ? msg : "a malformed report");
        free(msg);
    }
    return rc ? 1 : 0;
}

/* This rank's engine and a search handle per shard. */
static void open_engine(tmpi_ctx *c, tmpi_buf *out)
{
    char msg[4200] = "";
    int rc = tdm_engine_open(NULL, &c->engine);
    if (rc != TDM_OK)
        snprintf(msg, sizeof msg, "engine: %s", tdm_last_error());
    /* each shard resident before the rank says it is open: no first query
       shares the host with the uploads (tdm_search_wait_ready) */
    for (uint32_t k = 0; rc == TDM_OK && k < c->nmine; k++)
        if ((rc = tdm_search_open(c->engine, c->ix[k], &c->sh[k])) != TDM_OK ||
            (rc = tdm_search_wait_ready(c->sh[k])) != TDM_OK)
            snprintf(msg, sizeof msg, "%s.%u: %s", c->o->prefix, c->mine[k], tdm_last_error());
    tmpi_put_u32(out, rc ? 1u : 0u);
    tmpi_put_str(out, msg);
}

int tmpi_shards_open(tmpi_ctx *c)
{
    tmpi_buf b = {0};
    open_files(c, &b);
    int rc = step(c, &b, check_files);
    free(b.p);
    if (rc)
        return 1;
    /* every rank knows N now (from its first shard) */
    b = (tmpi_buf){0};
    open_engine(c, &b);
    rc = step(c, &b, check_engines);
    free(b.p);
    if (rc == 0 && c->rank == 0)
        fprintf(stderr, "tandem-mpi: %u shards of %s on %d rank%s\n", c->nshards,
                c->o->prefix, c->size, c->size == 1 ? "" : "s");
    return rc;
}

void tmpi_shards_close(tmpi_ctx *c)
{
    for (uint32_t k = 0; k < c->nmine; k++) {
        tdm_search_close(c->sh[k]);
        tdm_index_close(c->ix[k]);
    }
    tdm_engine_close(c->engine);
    free(c->batch_sizes);
    c->batch_sizes = NULL;
    c->nmine = 0;
    c->engine = NULL;
}
