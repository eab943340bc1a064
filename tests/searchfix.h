/* What the tests of search against the float oracle share (test_search,
 * test_search_host): random term lists, the writer's options, a term
 * list's query, the oracle's answer as the engine's algorithm defines it,
 * and a result compared with that answer bit for bit. Header-only: static
 * inline functions. */
#ifndef TDM_TEST_SEARCHFIX_H
#define TDM_TEST_SEARCHFIX_H

#include <stdlib.h>
#include <string.h>

#include "harness/oracle.h"
#include "index/writer.h"
#include "randcoll.h"
#include "testutil.h"

/* A random query of 1..maxt terms of c into st: an unknown term one time
 * in 13, a repeat of an earlier term one time in `repeat_in`, weights
 * 1/64 .. 1000/64 where `weighted` (else 1). Returns the count. */
static inline size_t searchfix_terms(tdm_rng *r, const randcoll *c, tdm_search_term *st,
                                     size_t maxt, int weighted, uint32_t repeat_in)
{
    size_t n = tdm_rng_range(r, 1, (uint32_t)maxt);
    for (size_t i = 0; i < n; i++) {
        if (tdm_rng_range(r, 0, 12) == 0)
            st[i].term = "no-such-term";
        else if (i > 0 && tdm_rng_range(r, 0, repeat_in - 1) == 0)
            st[i].term = st[tdm_rng_range(r, 0, (uint32_t)i - 1)].term;
        else
            st[i].term = c->terms[tdm_rng_range(r, 0, (uint32_t)c->nlists - 1)];
        st[i].id = 0;
        st[i].weight = weighted ? tdm_rng_range(r, 1, 1000) / 64.0 : 1.0;
    }
    return n;
}

/* The writer's options: codec (NULL: the default); with `own_bm25` the
 * stored bounds for k1 0.9, b 0.4 (requests with other values then take
 * the stored path); with `impact` the frequencies stored as integer
 * impacts. */
static inline tdm_iwriter_options searchfix_writer(const char *codec, int own_bm25, int impact)
{
    tdm_iwriter_options o = {.codec = codec};
    if (own_bm25) {
        o.k1 = 0.9;
        o.b = 0.4;
        o.bm25_as_given = 1;
    }
    if (impact) {
        o.impact = 1;
        o.quant = TDM_QUANT_INTEGER;
    }
    return o;
}

/* q (initialised here, the caller's to free) made of the n terms st
 * (NULL ones left out) on ir; fails naming `what` on an error. */
static inline void searchfix_query(tdm_query *q, const tdm_ireader *ir, const tdm_search_term *st,
                                   size_t n, const char *what)
{
    tdm_query_init(q);
    tdm_err err = {0};
    for (size_t i = 0; i < n; i++)
        if (st[i].term && tdm_query_add_term(q, ir, st[i].term, strlen(st[i].term),
                                             st[i].weight, &err) != TDM_OK)
            fail_msg("%s: %s", what, tdm_err_msg(&err));
    tdm_query_finish(q);
}

/* The oracle's answer for the terms st under o's k, scoring, k1 and b, as
 * `match` (AND or OR) at `precision`: its hits (room for o->k) and count;
 * the documents matched in *matched where not NULL. */
static inline size_t searchfix_oracle(tdm_oracle *or, const tdm_ireader *ir,
                                      const tdm_search_term *st, size_t n,
                                      const tdm_search_options *o, int match, int precision,
                                      tdm_hit *hits, uint64_t *matched)
{
    tdm_query q;
    searchfix_query(&q, ir, st, n, "oracle query");
    int impact = o->scoring == TDM_SCORE_IMPACT ||
                 (o->scoring == TDM_SCORE_AUTO && tdm_ireader_info_get(ir)->impact);
    tdm_oracle_request req = {o->k, match, precision,
                              {impact ? TDM_SCORING_IMPACT : TDM_SCORING_BM25, o->k1, o->b}};
    size_t got = 0;
    tdm_err err = {0};
    if (tdm_oracle_search(or, &q, &req, hits, &got, matched, &err) != TDM_OK)
        fail_msg("oracle: %s", tdm_err_msg(&err));
    tdm_query_free(&q);
    return got;
}

/* The match o's algorithm makes of st: AND for AND, and for AND-then-OR
 * where AND matched k documents or more (the engine's rule); else OR. */
static inline int searchfix_match(tdm_oracle *or, const tdm_ireader *ir,
                                  const tdm_search_term *st, size_t n, const tdm_search_options *o)
{
    if (o->algorithm == TDM_ALGO_AND)
        return TDM_MATCH_AND;
    if (o->algorithm != TDM_ALGO_AND_OR)
        return TDM_MATCH_OR;
    tdm_hit *w = malloc(o->k * sizeof *w);
    uint64_t matched = 0;
    searchfix_oracle(or, ir, st, n, o, TDM_MATCH_AND, TDM_ORACLE_FLOAT, w, &matched);
    free(w);
    return matched >= o->k ? TDM_MATCH_AND : TDM_MATCH_OR;
}

/* res, the engine's answer (`what` in a failure), is the float oracle's nw
 * hits w exactly: the same documents in the same order, the same float
 * bits, each named as ir names it. */
static inline void searchfix_same_oracle(const tdm_search_result *res, const tdm_hit *w,
                                         size_t nw, const tdm_ireader *ir, const char *what)
{
    if (res->n != nw)
        fail_msg("%s: %zu hits, the oracle has %zu", what, res->n, nw);
    for (size_t i = 0; i < nw; i++) {
        const tdm_search_hit *h = &res->hits[i];
        if (h->docid != w[i].docid || (double)h->score != w[i].score)
            fail_msg("%s: rank %zu: doc %u score %.9g, oracle doc %u score %.9g", what, i,
                     h->docid, h->score, w[i].docid, w[i].score);
        assert_non_null(h->name);
        assert_string_equal(h->name, tdm_ireader_docname(ir, h->docid));
    }
}

#endif
