/* A query's terms as the unsharded index counts them (tmpi.h), on rank 0
 * from its first shard: every shard holds the whole index's lexicon, in
 * its order, and each term's df in the whole index (docs/PARTITION.md). A
 * shard's own search counts only the terms with postings in it, so neither
 * one shard's count nor the largest is the whole's. */
#include <stdlib.h>
#include <string.h>

#include "index/index_priv.h"
#include "index/reader.h"
#include "index/tokpool.h"
#include "plan/search_plan.h"
#include "query/query.h"
#include "tmpi.h"

struct tmpi_terms {
    const tdm_ireader *r;
    tdm_tokpool *tp;
};

int tmpi_terms_open(const tmpi_ctx *c, tmpi_terms **out)
{
    tdm_err err = {0};
    tmpi_terms *t = c->nmine ? calloc(1, sizeof *t) : NULL; /* rank 0 holds shard 0 */
    if (!t)
        return tmpi_fail(c, "serve: out of memory");
    t->r = tdm_index_ireader(c->ix[0]);
    if (tdm_tokpool_open(t->r, &t->tp, &err) != TDM_OK) {
        tmpi_fail(c, "serve: %s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        free(t);
        return 1;
    }
    *out = t;
    return 0;
}

void tmpi_terms_close(tmpi_terms *t)
{
    if (t)
        tdm_tokpool_free(t->tp);
    free(t);
}

/* The lexicon ids of the whole index's terms met (whole df > 0). */
typedef struct idset {
    const tdm_ireader *r;
    uint64_t *v;
    size_t n, cap;
} idset;

static int id_add(void *user, const char *term, size_t len)
{
    idset *s = user;
    uint64_t id;
    if (tdm_ireader_find(s->r, term, len, &id) != TDM_OK || !tdm_ireader_score_df(s->r, id))
        return TDM_OK;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        uint64_t *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return TDM_ERR_NOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = id;
    return TDM_OK;
}

static int id_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every word of q through the lexicon as tdm_query_add_text and _term take
 * them (an impact index's text split on white space, any other through
 * the index's tokenizer): the distinct ids of the whole index's terms. */
static int distinct_terms(tmpi_terms *t, tdm_tokenizer *tok, const tmpi_query *q, size_t *n)
{
    idset s = {.r = t->r};
    int rc = TDM_OK;
    if (q->text && !tdm_ireader_info_get(t->r)->impact) {
        rc = tdm_tokenize(tok, q->text, strlen(q->text), id_add, &s);
    } else if (q->text) {
        for (const char *p = q->text; rc == TDM_OK && *p;) {
            size_t sp = strspn(p, " \t\n\r\v\f"), w = strcspn(p + sp, " \t\n\r\v\f");
            rc = w ? id_add(&s, p + sp, w) : TDM_OK;
            p += sp + w;
        }
    }
    for (size_t i = 0; rc == TDM_OK && !q->text && i < q->nterms; i++)
        rc = id_add(&s, q->terms[i].term, strlen(q->terms[i].term));
    if (s.n)
        qsort(s.v, s.n, sizeof *s.v, id_cmp);
    *n = 0;
    for (size_t i = 0; i < s.n; i++)
        *n += i == 0 || s.v[i] != s.v[i - 1];
    free(s.v);
    return rc;
}

void tmpi_terms_whole(tmpi_terms *t, const tmpi_query *q, tdm_search_result *r)
{
    tdm_err err = {0};
    tdm_tokenizer *tok = tdm_tokpool_get(t->tp, &err);
    tdm_query wq;
    tdm_query_init(&wq);
    int rc = tok ? TDM_OK : TDM_ERR_NOMEM;
    if (rc == TDM_OK && q->text)
        rc = tdm_query_add_text(&wq, t->r, tok, q->text, strlen(q->text), 1.0, &err);
    for (size_t i = 0; rc == TDM_OK && !q->text && i < q->nterms; i++)
        rc = tdm_query_add_term(&wq, t->r, q->terms[i].term, strlen(q->terms[i].term),
                                q->terms[i].weight, &err);
    if (rc == TDM_OK)
        tdm_query_finish(&wq);
    /* without terms absent from this shard, its own count is the whole's */
    size_t n = wq.nterms;
    if (rc == TDM_OK && wq.absent)
        rc = distinct_terms(t, tok, q, &n);
    if (rc == TDM_OK) { /* else the shards' counts stay (the query failed there too) */
        r->terms = (uint32_t)n;
        r->unknown = wq.unknown;
        if (r->algorithm == TDM_ALGO_AUTO) /* what the whole index would say ran */
            r->algorithm = tdm_search_auto_alg(TDM_ALGO_AUTO, n);
    }
    if (tok)
        tdm_tokpool_put(t->tp, tok);
    tdm_query_free(&wq);
    tdm_err_clear(&err);
}
