/* prune_counters INDEX QUERIES [N [K [ALG [RANGES [SEED [SHARE [WAVE]]]]]]]
 * Work counters of the range kernel as C (prune_sim.h) over the first N
 * queries (id:text lines) of QUERIES on INDEX, BM25 at the index's
 * parameters: per query, postings decoded, postings scored by the seed pass
 * and by the range kernel, documents fully scored, documents offered to a
 * heap, skips. ALG: or, and, wand, bmw, maxscore. Checks every answer against
 * the float oracle. Device-independent: the lead's way to see what a change
 * of the pruning does before timing it on a GPU. With ALG and, also the
 * postings and blocks AND's block selection decodes (plan/and_select.h,
 * its reference, Griffin's ratio: env PRUNE_RATIO, default 128). SEED: 0
 * none, 1 the device seed pass, 2 the compressed variant's host seed. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/tokpool.h"
#include "prune_sim.h"
#include "plan/and_select.h"
#include "harness/oracle.h"
#include "drive/search.h"

static int alg_of(const char *s)
{
    static const char *n[] = {"or", "and", "wand", "bmw", "maxscore"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, n[i]))
            return i;
    return -1;
}

/* Postings and blocks the selection decodes for q (added to *post, *blk),
 * and the blocks a whole decode of the same lists does (*all). */
static int and_counts(const tdm_ireader *r, const tdm_query *q, uint64_t *post, uint64_t *blk,
                      uint64_t *all, tdm_err *err)
{
    tdm_and_sel a;
    const char *ra = getenv("PRUNE_RATIO");
    int rc = tdm_and_sel_build(r, q, ra ? (uint32_t)atol(ra) : 0, &a, err);
    if (rc)
        return rc;
    uint64_t n = 0;
    for (uint32_t t = 0; t < a.nt; t++)
        n += a.tab[t * TDM_SEL_TW + TDM_SEL_DF];
    uint32_t *d = malloc(n * 4 + 4), *f = malloc(n * 4 + 4), *pos = malloc(a.nt * 8 + 8);
    uint64_t sel = 0;
    rc = d && f && pos ? tdm_and_sel_ref(r, q, &a, d, f, pos, pos + a.nt, &sel, err)
                       : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (uint32_t t = 0; rc == TDM_OK && t < a.nt; t++)
        *post += pos[a.nt + t];
    *blk += sel + a.tab[a.lead * TDM_SEL_TW + TDM_SEL_NB];
    *all += a.blocks_all + a.tab[a.lead * TDM_SEL_TW + TDM_SEL_NB];
    free(d);
    free(f);
    free(pos);
    tdm_and_sel_free(&a);
    return rc;
}

static int check(tdm_oracle *or, const tdm_query *q, uint32_t k, const tdm_score_params *sp,
                 int match, const uint64_t *keys, uint32_t n)
{
    tdm_oracle_request req = {k, match, TDM_ORACLE_FLOAT, *sp};
    tdm_hit *h = malloc(k * sizeof *h);
    size_t got = 0;
    tdm_err err = {0};
    int ok = h && tdm_oracle_search(or, q, &req, h, &got, NULL, &err) == TDM_OK && got == n;
    for (size_t i = 0; ok && i < got; i++) {
        float f = (float)h[i].score;
        uint32_t u;
        memcpy(&u, &f, 4);
        ok = keys[i] == ((uint64_t)u << 32 | (uint32_t)~h[i].docid);
    }
    free(h);
    tdm_err_clear(&err);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: prune_counters INDEX QUERIES [N [K [ALG [RANGES [SEED [SHARE "
                        "[WAVE]]]]]]]\n");
        return 2;
    }
    long nq = argc > 3 ? atol(argv[3]) : 1000;
    prune_opts o = {TDM_SALG_MAXSCORE, argc > 4 ? (uint32_t)atol(argv[4]) : 1000,
                    argc > 6 ? (uint32_t)atol(argv[6]) : 64, argc > 7 ? atoi(argv[7]) : 0,
                    argc > 8 ? atoi(argv[8]) : 0, argc > 9 ? (uint32_t)atol(argv[9]) : 1};
    if (argc > 5 && (o.salg = alg_of(argv[5])) < 0) {
        fprintf(stderr, "prune_counters: unknown algorithm %s\n", argv[5]);
        return 2;
    }
    tdm_err err = {0};
    tdm_ireader *r;
    tdm_tokpool *tp;
    tdm_oracle *or;
    if (tdm_ireader_open(argv[1], &r, &err) || tdm_tokpool_open(r, &tp, &err) ||
        tdm_oracle_open(r, &or, &err)) {
        fprintf(stderr, "prune_counters: %s\n", tdm_err_msg(&err));
        return 1;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    tdm_tokenizer *tok = tdm_tokpool_get(tp, &err);
    tdm_score_params sp = tdm_score_params_default();
    uint64_t *keys = malloc((size_t)o.k * 8);
    prune_counts c = {0};
    long done = 0, bad = 0;
    uint64_t apost = 0, ablk = 0, aall = 0;
    char line[4096];
    tdm_query q;
    tdm_query_init(&q);
    while (done < nq && fgets(line, sizeof line, f)) {
        char *text = strchr(line, ':');
        text = text ? text + 1 : line;
        if (tdm_query_from_text(&q, r, tok, text, strlen(text), &err) != TDM_OK) {
            tdm_err_clear(&err);
            continue;
        }
        if (!q.nterms)
            continue;
        uint32_t n = 0;
        if (prune_sim(r, &q, &sp, &o, keys, &n, &c, &err) != TDM_OK) {
            fprintf(stderr, "prune_counters: %s\n", tdm_err_msg(&err));
            return 1;
        }
        if (o.salg == TDM_SALG_AND && and_counts(r, &q, &apost, &ablk, &aall, &err) != TDM_OK) {
            fprintf(stderr, "prune_counters: %s\n", tdm_err_msg(&err));
            return 1;
        }
        bad += !check(or, &q, o.k, &sp, o.salg == TDM_SALG_AND ? TDM_MATCH_AND : TDM_MATCH_OR,
                      keys, n);
        done++;
    }
    double d = done ? (double)done : 1;
    printf("queries %ld k %u alg %s ranges %u seed %d share %d wave %u mismatches %ld\n", done,
           o.k, argv[5 < argc ? 5 : 0], o.ranges, o.seed, o.share, o.wave, bad);
    printf("per query: decoded %.0f seeded %.0f scored %.0f docs %.0f pushed %.0f skips %.0f\n",
           c.decoded / d, c.seeded / d, c.scored / d, c.docs / d, c.pushed / d, c.skips / d);
    if (o.salg == TDM_SALG_AND)
        printf("AND block selection: postings decoded %.0f, blocks %.0f of %.0f\n", apost / d,
               ablk / d, aall / d);
    tdm_query_free(&q);
    tdm_tokpool_put(tp, tok);
    free(keys);
    fclose(f);
    tdm_oracle_close(or);
    tdm_tokpool_free(tp);
    tdm_ireader_close(r);
    return bad ? 1 : 0;
}
