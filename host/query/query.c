/* Building a query (query.h). */
#include "query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "tandem.h"

void tdm_query_init(tdm_query *q)
{
    memset(q, 0, sizeof *q);
}

void tdm_query_reset(tdm_query *q)
{
    q->nterms = 0;
    q->given = q->unknown = q->absent = 0;
    q->finished = 0;
}

void tdm_query_free(tdm_query *q)
{
    free(q->terms);
    tdm_query_init(q);
}

/* Counts one given term; TDM_ERR_LIMIT past the maximum. */
static int count_given(tdm_query *q, tdm_err *err)
{
    if (q->given >= TDM_QUERY_MAX_TERMS)
        return tdm_err_set(err, TDM_ERR_LIMIT, "query has more than %d terms",
                           TDM_QUERY_MAX_TERMS);
    q->given++;
    return TDM_OK;
}

/* Bounded so that no score overflows a float or loses a term (tandem.h). */
static int check_weight(double w, tdm_err *err)
{
    if (!(w >= TDM_WEIGHT_MIN && w <= TDM_WEIGHT_MAX))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "query term weight %g: must lie in [%g, %g] (finite float "
                           "scores)", w, TDM_WEIGHT_MIN, TDM_WEIGHT_MAX);
    return TDM_OK;
}

static int push(tdm_query *q, uint64_t id, uint32_t df, double w, tdm_err *err)
{
    tdm_qterm *t = tdm_array_grow(q->terms, &q->cap, q->nterms + 1, sizeof *t);
    if (!t)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    q->terms = t;
    q->terms[q->nterms++] = (tdm_qterm){.id = id, .weight = w, .count = 1, .df = df};
    q->finished = 0;
    return TDM_OK;
}

int tdm_query_add_term(tdm_query *q, const tdm_ireader *r, const char *term, size_t len,
                       double weight, tdm_err *err)
{
    int rc = check_weight(weight, err);
    if (rc || (rc = count_given(q, err)))
        return rc;
    uint64_t id;
    if (tdm_ireader_find(r, term, len, &id) != TDM_OK) {
        q->unknown++;
        return TDM_OK;
    }
    uint32_t df = 0;
    tdm_ireader_term(r, id, NULL, &df, NULL);
    if (df == 0) { /* a shard's term without postings here */
        q->absent++;
        return TDM_OK;
    }
    return push(q, id, df, weight, err);
}

int tdm_query_add_id(tdm_query *q, const tdm_ireader *r, uint64_t id, double weight,
                     tdm_err *err)
{
    uint32_t df = 0;
    int rc = check_weight(weight, err);
    if (rc)
        return rc;
    if (!tdm_ireader_term(r, id, NULL, &df, NULL))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "term id %llu: the index has %llu terms",
                           (unsigned long long)id,
                           (unsigned long long)tdm_ireader_info_get(r)->nterms);
    if ((rc = count_given(q, err)))
        return rc;
    if (df == 0) { /* a shard's term without postings here */
        q->absent++;
        return TDM_OK;
    }
    return push(q, id, df, weight, err);
}

typedef struct text_ctx {
    tdm_query *q;
    const tdm_ireader *r;
    double weight;
    tdm_err *err;
} text_ctx;

static int on_token(void *user, const char *term, size_t len)
{
    text_ctx *c = user;
    return tdm_query_add_term(c->q, c->r, term, len, c->weight, c->err);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* An impact index's text: its terms were taken as written (a JSON vector
 * build keeps them so; an impact import holds a model's vocabulary), so a
 * tokenizer would miss them ("##ing", case). Words split on ASCII white space;
 * a run of one word repeated is one term weighing w x its length, so a
 * SPLADE line of thousands of repeated tokens stays within the term limit. */
static int add_words(tdm_query *q, const tdm_ireader *r, const char *text, size_t len,
                     double weight, tdm_err *err)
{
    const char *prev = NULL;
    size_t prev_len = 0, run = 0;
    for (size_t i = 0;;) {
        while (i < len && is_space(text[i]))
            i++;
        size_t b = i;
        while (i < len && !is_space(text[i]))
            i++;
        size_t n = i - b; /* 0 only at the end */
        if (n && run && n == prev_len && !memcmp(text + b, prev, n)) {
            run++;
            continue;
        }
        if (run) {
            double w = weight * (double)run;
            int rc = check_weight(w, err);
            if (rc || (rc = tdm_query_add_term(q, r, prev, prev_len, w, err)))
                return rc;
        }
        if (!n)
            return TDM_OK;
        prev = text + b;
        prev_len = n;
        run = 1;
    }
}

int tdm_query_add_text(tdm_query *q, const tdm_ireader *r, tdm_tokenizer *t,
                       const char *text, size_t len, double weight, tdm_err *err)
{
    int rc = check_weight(weight, err);
    if (rc)
        return rc;
    if (tdm_ireader_info_get(r)->impact)
        return add_words(q, r, text, len, weight, err);
    text_ctx c = {q, r, weight, err};
    return tdm_tokenize(t, text, len, on_token, &c);
}

/* Stable merge sort by id, so that repeats keep the order they were given
 * in and their weights sum in that order (deterministic). */
static void sort_by_id(tdm_qterm *a, tdm_qterm *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_by_id(a, tmp, h);
    sort_by_id(a + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = a[j].id < a[i].id ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

static void merge_repeats(tdm_query *q)
{
    size_t w = 0;
    for (size_t i = 0; i < q->nterms; i++) {
        if (w && q->terms[w - 1].id == q->terms[i].id) {
            q->terms[w - 1].weight += q->terms[i].weight;
            q->terms[w - 1].count += q->terms[i].count;
        } else {
            q->terms[w++] = q->terms[i];
        }
    }
    q->nterms = w;
}

void tdm_query_finish(tdm_query *q)
{
    if (q->finished)
        return;
    tdm_qterm small[64], *tmp = q->nterms <= 64 ? small : malloc(q->nterms * sizeof *tmp);
    if (tmp) {
        sort_by_id(q->terms, tmp, q->nterms);
    } else { /* out of memory: insertion sort, also stable */
        for (size_t i = 1; i < q->nterms; i++)
            for (size_t j = i; j > 0 && q->terms[j].id < q->terms[j - 1].id; j--) {
                tdm_qterm x = q->terms[j];
                q->terms[j] = q->terms[j - 1];
                q->terms[j - 1] = x;
            }
    }
    if (tmp != small)
        free(tmp);
    merge_repeats(q);
    q->finished = 1;
}

int tdm_query_from_text(tdm_query *q, const tdm_ireader *r, tdm_tokenizer *t,
                        const char *text, size_t len, tdm_err *err)
{
    tdm_query_reset(q);
    int rc = tdm_query_add_text(q, r, t, text, len, 1.0, err);
    if (rc == TDM_OK)
        tdm_query_finish(q);
    return rc;
}
