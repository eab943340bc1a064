/* One batch through every shard. Rank 0 sends the queries to every rank
 * (op, algorithm, queries), each rank runs them on each of its shards
 * (tdm_search_batch), merges its shards' top k and sends them back (with
 * the documents' names: a shard names only its own documents), and rank 0
 * merges the ranks' lists: score descending, docid ascending (the
 * library's merge of partitions' answers, tdm_hits_merge in
 * sched/partition.h, and the oracle's order), the whole index's top k.
 *
 * AND-then-OR is decided on the whole: AND on every shard, then OR for the
 * queries whose AND matches fall short of k over all shards (each shard
 * answers min(k, its matches), so their sum reaches k exactly when the
 * whole AND does; docs/PARTITION.md). A shard's own AND-then-OR would
 * decide on its part alone. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/partition.h"
#include "tmpi.h"

void tmpi_answer_free(tmpi_answer *a)
{
    for (uint32_t h = 0; a->hits && h < a->n; h++)
        free((char *)a->hits[h].name);
    free(a->hits);
    free(a->error);
    memset(a, 0, sizeof *a);
}

/* ---- the message down */

/* The options a round carries (a served request's may differ from the
 * command line's, which every rank read): algorithm, k, scoring, k1, b. */
static void pack_batch(tmpi_buf *b, uint32_t op, const tdm_search_options *o,
                       const tmpi_query *q, size_t n)
{
    tmpi_put_u32(b, op);
    tmpi_put_u32(b, (uint32_t)o->algorithm);
    tmpi_put_u32(b, o->k);
    tmpi_put_u32(b, (uint32_t)o->scoring);
    tmpi_put(b, &o->k1, sizeof(double));
    tmpi_put(b, &o->b, sizeof(double));
    tmpi_put_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        tmpi_put_u32(b, q[i].text ? 0 : 1);
        if (q[i].text) {
            tmpi_put_str(b, q[i].text);
            continue;
        }
        tmpi_put_u32(b, (uint32_t)q[i].nterms);
        for (size_t t = 0; t < q[i].nterms; t++) {
            tmpi_put_str(b, q[i].terms[t].term);
            tmpi_put(b, &q[i].terms[t].weight, sizeof(double));
        }
    }
}

/* The batch's queries as the search calls take them; strings malloc'd
 * (freed by free_queries). -1 on a malformed message. */
static int unpack_batch(tmpi_rd *rd, uint32_t *op, tdm_search_options *o,
                        tdm_search_query **qs, uint32_t *nq)
{
    *op = tmpi_get_u32(rd);
    o->algorithm = (int)tmpi_get_u32(rd);
    o->k = tmpi_get_u32(rd);
    o->scoring = (int)tmpi_get_u32(rd);
    tmpi_get(rd, &o->k1, sizeof(double));
    tmpi_get(rd, &o->b, sizeof(double));
    *nq = tmpi_get_u32(rd);
    *qs = NULL;
    if (rd->bad || *op != TMPI_OP_BATCH)
        return rd->bad ? -1 : 0;
    if (*nq > rd->n || !(*qs = calloc(*nq ? *nq : 1, sizeof **qs)))
        return -1;
    for (uint32_t i = 0; !rd->bad && i < *nq; i++) {
        tdm_search_query *q = &(*qs)[i];
        if (tmpi_get_u32(rd) == 0) {
            q->text = tmpi_get_str(rd);
            continue;
        }
        uint32_t nt = tmpi_get_u32(rd);
        tdm_search_term *t = nt <= rd->n ? calloc(nt ? nt : 1, sizeof *t) : NULL;
        if (!t) {
            rd->bad = 1;
            break;
        }
        q->terms = t;
        q->nterms = nt;
        for (uint32_t j = 0; !rd->bad && j < nt; j++) {
            t[j].term = tmpi_get_str(rd);
            tmpi_get(rd, &t[j].weight, sizeof(double));
        }
    }
    return rd->bad ? -1 : 0;
}

static void free_queries(tdm_search_query *qs, uint32_t nq)
{
    for (uint32_t i = 0; qs && i < nq; i++) {
        free((char *)qs[i].text);
        for (size_t j = 0; qs[i].terms && j < qs[i].nterms; j++)
            free((char *)qs[i].terms[j].term);
        free((tdm_search_term *)qs[i].terms);
    }
    free(qs);
}

/* ---- a rank's part */

/* --test-fault: this rank dies, hangs or fails at its chosen batch. */
static int fault(tmpi_ctx *c)
{
    const tmpi_opts *o = c->o;
    if (o->fault_rank != c->rank || (uint64_t)o->fault_batch != c->rounds)
        return 0;
    if (!strcmp(o->fault_kind, "kill"))
        raise(SIGKILL);
    if (!strcmp(o->fault_kind, "hang"))
        for (;;)
            pause();
    return 1;
}

/* Query i's answers of this rank's shards merged, packed. */
static void pack_query(tmpi_ctx *c, tdm_search_result **res, uint32_t nq, uint32_t i,
                       uint32_t k, tmpi_buf *b)
{
    const tdm_search_hit *lists[TMPI_MAX_SHARDS];
    size_t ns[TMPI_MAX_SHARDS], at[TMPI_MAX_SHARDS], total = 0;
    uint32_t terms = 0;
    for (uint32_t s = 0; s < c->nmine; s++) {
        const tdm_search_result *r = res[(size_t)s * nq + i];
        if (r->status != TDM_OK) {
            tmpi_put_u32(b, (uint32_t)r->status);
            char msg[4300];
            snprintf(msg, sizeof msg, "%s.%u: %s", c->o->prefix, c->mine[s],
                     r->error ? r->error : "failed");
            tmpi_put_str(b, msg);
            return;
        }
        lists[s] = r->hits;
        ns[s] = r->n;
        total += r->n;
        terms = r->terms > terms ? r->terms : terms;
    }
    tdm_search_hit *out = calloc(total ? total : 1, sizeof *out);
    if (!out) {
        tmpi_put_u32(b, (uint32_t)TDM_ERR_NOMEM);
        tmpi_put_str(b, "out of memory merging the shards' answers");
        return;
    }
    uint32_t n = (uint32_t)tdm_hits_merge(lists, ns, c->nmine, k, at, out);
    tmpi_put_u32(b, TDM_OK);
    tmpi_put_u32(b, terms);
    tmpi_put_u32(b, n);
    for (uint32_t h = 0; h < n; h++) {
        tmpi_put(b, &out[h].score, sizeof(float));
        tmpi_put_u32(b, out[h].docid);
        tmpi_put_str(b, out[h].name);
    }
    free(out);
}

/* This rank's answer to a batch: a status, a message, each query's. */
static void answer(tmpi_ctx *c, const tdm_search_query *qs, uint32_t nq,
                   const tdm_search_options *ro, tmpi_buf *b)
{
    c->rounds++;
    tdm_search_options o = c->o->so; /* the command line's, but what the round carries */
    o.algorithm = ro->algorithm;
    o.k = ro->k;
    o.scoring = ro->scoring;
    o.k1 = ro->k1;
    o.b = ro->b;
    tdm_search_result **res = calloc((size_t)c->nmine * (nq ? nq : 1), sizeof *res);
    char msg[4300] = "";
    int rc = res ? TDM_OK : TDM_ERR_NOMEM;
    if (!res)
        snprintf(msg, sizeof msg, "out of memory");
    if (rc == TDM_OK && fault(c)) {
        rc = TDM_ERR_INTERNAL;
        snprintf(msg, sizeof msg, "%s.%u: failure injected (--test-fault)", c->o->prefix,
                 c->mine[0]);
    }
    for (uint32_t s = 0; rc == TDM_OK && nq && s < c->nmine; s++)
        if ((rc = tdm_search_batch(c->sh[s], qs, nq, &o, res + (size_t)s * nq)) != TDM_OK)
            snprintf(msg, sizeof msg, "%s.%u: %s", c->o->prefix, c->mine[s], tdm_last_error());
        else
            tmpi_probe_observe(c, s, res + (size_t)s * nq, nq);
    tmpi_put_u32(b, rc == TDM_OK ? 0u : 1u);
    tmpi_put_str(b, msg);
    for (uint32_t i = 0; rc == TDM_OK && i < nq; i++)
        pack_query(c, res, nq, i, o.k, b);
    for (size_t j = 0; res && j < (size_t)c->nmine * nq; j++)
        tdm_search_result_free(res[j]);
    free(res);
}

int tmpi_serve_rounds(tmpi_ctx *c)
{
    for (;;) {
        char *m = NULL;
        size_t n = 0;
        if (tmpi_recv(c, &m, &n))
            return 1;
        tmpi_rd rd = {m, n, 0, 0};
        uint32_t op = 0, nq = 0;
        tdm_search_options ro = c->o->so;
        tdm_search_query *qs = NULL;
        tmpi_buf b = {0};
        if (n >= sizeof op && (memcpy(&op, m, sizeof op), op == TMPI_OP_PROBE)) {
            rd.at = sizeof op;
            tmpi_probe_answer(c, &rd, &b); /* between rounds: /health, /metrics */
        } else if (unpack_batch(&rd, &op, &ro, &qs, &nq) ||
                   (op != TMPI_OP_BATCH && op != TMPI_OP_STOP)) {
            free_queries(qs, nq);
            free(m);
            tmpi_fail(c, "rank %d: a malformed message from rank 0", c->rank);
            return 1;
        }
        free(m);
        if (op == TMPI_OP_STOP)
            return ro.algorithm; /* the job's exit status */
        if (op == TMPI_OP_BATCH)
            answer(c, qs, nq, &ro, &b);
        free_queries(qs, nq);
        int rc = b.nomem ? -1 : tmpi_gather(c, b.p, b.n, 0, NULL, NULL, NULL);
        free(b.p);
        if (rc)
            return 1;
    }
}

/* ---- rank 0 */

int tmpi_stop(tmpi_ctx *c, int status)
{
    tmpi_buf b = {0};
    tdm_search_options o = c->o->so;
    o.algorithm = status;
    pack_batch(&b, TMPI_OP_STOP, &o, NULL, 0);
    int rc = b.nomem ? -1 : tmpi_bcast(c, b.p, b.n, c->o->timeout_s);
    free(b.p);
    return rc;
}

int tmpi_read_status(tmpi_ctx *c, int r, tmpi_rd *rd)
{
    uint32_t bad = tmpi_get_u32(rd);
    char *msg = tmpi_get_str(rd);
    if (bad || rd->bad) {
        tmpi_fail(c, "rank %d failed: %s", r, msg ? msg : "a malformed answer");
        free(msg);
        return 1;
    }
    free(msg);
    return 0;
}

/* Rank r's answers (rd) parsed into per[r * n + i]: 0, or 1 after naming
 * the rank's error. */
static int read_rank(tmpi_ctx *c, int r, tmpi_rd *rd, size_t n, uint32_t k, tmpi_answer *per)
{
    if (tmpi_read_status(c, r, rd))
        return 1;
    for (size_t i = 0; !rd->bad && i < n; i++) {
        tmpi_answer *a = &per[(size_t)r * n + i];
        a->status = (int)tmpi_get_u32(rd);
        if (a->status != TDM_OK) {
            a->error = tmpi_get_str(rd);
            continue;
        }
        a->terms = tmpi_get_u32(rd);
        a->n = tmpi_get_u32(rd);
        if (a->n > k || !(a->hits = calloc(a->n ? a->n : 1, sizeof *a->hits))) {
            rd->bad = 1;
            break;
        }
        for (uint32_t h = 0; !rd->bad && h < a->n; h++) {
            tmpi_get(rd, &a->hits[h].score, sizeof(float));
            a->hits[h].docid = tmpi_get_u32(rd);
            a->hits[h].name = tmpi_get_str(rd);
        }
    }
    return rd->bad || rd->at != rd->n ? tmpi_fail(c, "rank %d: a malformed answer", r) : 0;
}

/* Query i's answer from the ranks' (per[r * n + i]). */
static int merge_query(tmpi_ctx *c, tmpi_answer *per, size_t n, size_t i, uint32_t k,
                       tmpi_answer *a)
{
    const tdm_search_hit *lists[TMPI_MAX_SHARDS];
    size_t ns[TMPI_MAX_SHARDS], at[TMPI_MAX_SHARDS];
    memset(a, 0, sizeof *a);
    for (int r = 0; r < c->size; r++) {
        tmpi_answer *p = &per[(size_t)r * n + i];
        if (p->status != TDM_OK) {
            a->status = p->status;
            a->error = p->error;
            p->error = NULL;
            return 0;
        }
        lists[r] = p->hits;
        ns[r] = p->n;
        a->terms = p->terms > a->terms ? p->terms : a->terms;
    }
    if (!(a->hits = calloc(k ? k : 1, sizeof *a->hits)))
        return -1;
    a->n = (uint32_t)tdm_hits_merge(lists, ns, (size_t)c->size, k, at, a->hits);
    int rc = 0;
    for (uint32_t h = 0; h < a->n; h++) /* the lists' names are freed with them */
        if (rc || !(a->hits[h].name = strdup(a->hits[h].name ? a->hits[h].name : "")))
            a->hits[h].name = NULL, rc = -1;
    return rc;
}

int tmpi_round_o(tmpi_ctx *c, const tmpi_query *q, size_t n, const tdm_search_options *o,
                 tmpi_answer *a)
{
    tmpi_buf down = {0}, up = {0};
    double t_round = MPI_Wtime();
    pack_batch(&down, TMPI_OP_BATCH, o, q, n);
    tmpi_expect_all(c);
    if (down.nomem || tmpi_bcast(c, down.p, down.n, c->o->timeout_s)) {
        free(down.p);
        tmpi_fail(c, "cannot send a batch");
        return -1;
    }
    /* rank 0's own shards: the same message, read back */
    tmpi_rd rd = {down.p, down.n, 0, 0};
    uint32_t op, nq;
    tdm_search_options ro = *o;
    tdm_search_query *qs = NULL;
    int rc = unpack_batch(&rd, &op, &ro, &qs, &nq);
    if (rc == 0)
        answer(c, qs, nq, &ro, &up);
    free_queries(qs, nq);
    free(down.p);
    size_t *lens = calloc((size_t)c->size, sizeof *lens);
    size_t *offs = calloc((size_t)c->size, sizeof *offs);
    char *all = NULL;
    if (rc || up.nomem || !lens || !offs ||
        tmpi_gather(c, up.p, up.n, c->o->timeout_s, &all, lens, offs)) {
        tmpi_fail(c, "cannot gather the ranks' answers");
        rc = -1;
    }
    free(up.p);
    double t0 = MPI_Wtime();
    tmpi_answer *per = rc ? NULL : calloc((size_t)c->size * (n ? n : 1), sizeof *per);
    if (rc == 0 && !per)
        rc = -1;
    for (int r = 0; rc == 0 && r < c->size; r++) {
        tmpi_rd rr = {all + offs[r], lens[r], 0, 0};
        rc = read_rank(c, r, &rr, n, o->k, per) ? -1 : 0;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = merge_query(c, per, n, i, o->k, &a[i]);
    c->merge_s += MPI_Wtime() - t0;
    c->round_s += MPI_Wtime() - t_round;
    c->round_queries += n;
    for (size_t j = 0; per && j < (size_t)c->size * n; j++)
        tmpi_answer_free(&per[j]);
    free(per);
    free(all);
    free(lens);
    free(offs);
    return rc;
}

int tmpi_round(tmpi_ctx *c, const tmpi_query *q, size_t n, int alg, tmpi_answer *a)
{
    tdm_search_options o = c->o->so;
    o.algorithm = alg;
    return tmpi_round_o(c, q, n, &o, a);
}

int tmpi_search_o(tmpi_ctx *c, const tmpi_query *q, size_t n, const tdm_search_options *o,
                  tmpi_answer *a)
{
    if (o->algorithm != TDM_ALGO_AND_OR)
        return tmpi_round_o(c, q, n, o, a);
    tdm_search_options po = *o;
    po.algorithm = TDM_ALGO_AND;
    if (tmpi_round_o(c, q, n, &po, a))
        return -1;
    size_t m = 0, *pos = calloc(n ? n : 1, sizeof *pos);
    tmpi_query *short_q = calloc(n ? n : 1, sizeof *short_q);
    tmpi_answer *or_a = calloc(n ? n : 1, sizeof *or_a);
    int rc = pos && short_q && or_a ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (a[i].status == TDM_OK && a[i].n < o->k) {
            pos[m] = i;
            short_q[m++] = q[i];
        }
    po.algorithm = TDM_ALGO_OR;
    if (rc == 0 && m)
        rc = tmpi_round_o(c, short_q, m, &po, or_a);
    for (size_t j = 0; rc == 0 && j < m; j++) {
        tmpi_answer_free(&a[pos[j]]);
        a[pos[j]] = or_a[j];
    }
    free(pos);
    free(short_q);
    free(or_a);
    return rc;
}

int tmpi_search(tmpi_ctx *c, const tmpi_query *q, size_t n, int alg, tmpi_answer *a)
{
    tdm_search_options o = c->o->so;
    o.algorithm = alg;
    return tmpi_search_o(c, q, n, &o, a);
}
