/* JSON request bodies of `tandem serve` to queries (serve.h): the fields
 * `tandem search` takes as options, each checked against its range and the
 * server's limits; anything else is an error naming the field. Pure: no
 * engine, so that the fuzzer and the tests drive it alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* Sets err to "<where>: <message>" and returns 400. */
static int bad(char *err, size_t errlen, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int bad(char *err, size_t errlen, const char *where, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s%s%s", where, *where ? ": " : "", msg);
    return 400;
}

/* A number field in [lo, hi]. */
static int real_field(json_t *v, const char *name, double lo, double hi, double *out,
                      char *err, size_t errlen)
{
    /* 400, not bad()'s value, on failure: the compiler then sees that *out
     * is set whenever 0 comes back (bad() is variadic, never inlined). */
    if (!json_is_number(v)) {
        bad(err, errlen, name, "expected a number in [%g, %g]", lo, hi);
        return 400;
    }
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi)) {
        bad(err, errlen, name, "%g is out of range [%g, %g]", x, lo, hi);
        return 400;
    }
    *out = x;
    return 0;
}

/* A whole number field in [lo, hi]. */
static int int_field(json_t *v, const char *name, json_int_t lo, json_int_t hi, json_int_t *out,
                     char *err, size_t errlen)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        bad(err, errlen, name, "expected a whole number in %lld..%lld", (long long)lo,
            (long long)hi);
        return 400; /* as real_field: *out is set whenever 0 comes back */
    }
    *out = json_integer_value(v);
    return 0;
}

static int terms_field(json_t *v, const tdm_serve_limits *lim, tdm_serve_query *q, char *err,
                       size_t errlen)
{
    if (!json_is_object(v))
        return bad(err, errlen, "terms", "expected an object of term: weight");
    size_t n = json_object_size(v);
    if (n > lim->max_terms)
        return bad(err, errlen, "terms", "%zu terms, more than the limit of %u", n,
                   lim->max_terms);
    q->terms = calloc(n ? n : 1, sizeof *q->terms);
    if (!q->terms)
        return bad(err, errlen, "", "out of memory");
    const char *key;
    json_t *w;
    json_object_foreach(v, key, w) {
        double x;
        char where[96];
        snprintf(where, sizeof where, "terms.%.80s", key);
        if (real_field(w, where, TDM_WEIGHT_MIN, TDM_WEIGHT_MAX, &x, err, errlen))
            return 400;
        q->terms[q->nterms].term = key;
        q->terms[q->nterms].weight = x;
        q->nterms++;
    }
    return 0;
}

/* One option field `name` = v into q->o; 0, 400, or -1 if no such field. */
static int option_field(const char *name, json_t *v, const tdm_serve_limits *lim,
                        tdm_serve_query *q, char *err, size_t errlen)
{
    json_int_t i;
    const char *s = json_string_value(v);
    if (!strcmp(name, "k")) {
        if (int_field(v, "k", 1, lim->max_k, &i, err, errlen))
            return 400;
        q->o.k = (uint32_t)i;
    } else if (!strcmp(name, "algorithm")) {
        if (!s || tdm_algorithm_parse(s, &q->o.algorithm) != TDM_OK)
            return bad(err, errlen, "algorithm",
                       "expected auto, or, and, and_or, wand, bmw or maxscore");
    } else if (!strcmp(name, "scoring")) {
        if (s && !strcmp(s, "bm25"))
            q->o.scoring = TDM_SCORE_BM25;
        else if (s && !strcmp(s, "impact"))
            q->o.scoring = TDM_SCORE_IMPACT;
        else
            return bad(err, errlen, "scoring", "expected bm25 or impact");
    } else if (!strcmp(name, "k1")) {
        return real_field(v, "k1", 0, TDM_BM25_K1_MAX, &q->o.k1, err, errlen);
    } else if (!strcmp(name, "b")) {
        return real_field(v, "b", 0, 1, &q->o.b, err, errlen);
    } else if (!strcmp(name, "device")) {
        if (s && !strcmp(s, "auto"))
            q->o.device = -1;
        else if (int_field(v, "device", 0, 1023, &i, err, errlen))
            return bad(err, errlen, "device", "expected an engine device index or \"auto\"");
        else
            q->o.device = (int)i;
    } else if (!strcmp(name, "policy")) {
        if (!s || tdm_policy_parse(s, &q->o.policy) != TDM_OK)
            return bad(err, errlen, "policy",
                       "expected hybrid, best, cpu-only, gpu-only, direct or default");
    } else {
        return -1;
    }
    return 0;
}

/* One query object; `where` prefixes its messages ("queries[3]"). */
static int parse_query(json_t *obj, const char *where, const tdm_search_options *defaults,
                       const tdm_serve_limits *lim, tdm_serve_query *q, char *err,
                       size_t errlen)
{
    q->o = *defaults;
    if (!json_is_object(obj))
        return bad(err, errlen, where, "expected an object with \"query\" or \"terms\"");
    json_t *text = json_object_get(obj, "query"), *terms = json_object_get(obj, "terms");
    if (!text == !terms)
        return bad(err, errlen, where, "expected either \"query\" (text) or \"terms\" "
                                       "(an object of term: weight), not %s",
                   text ? "both" : "neither");
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        int rc = 0;
        if (!strcmp(key, "query")) {
            if (!json_is_string(v))
                rc = bad(err, errlen, "query", "expected a string");
            q->text = json_string_value(v);
        } else if (!strcmp(key, "terms")) {
            rc = terms_field(v, lim, q, err, errlen);
        } else if ((rc = option_field(key, v, lim, q, err, errlen)) < 0) {
            return bad(err, errlen, where, "unknown field '%.80s' (expected query or terms, "
                                           "k, algorithm, scoring, k1, b, device, policy)",
                       key);
        }
        if (rc) {
            if (*where) { /* the field's message, under the query's name */
                char m[256];
                snprintf(m, sizeof m, "%s", err);
                snprintf(err, errlen, "%s.%s", where, m);
            }
            return rc;
        }
    }
    return 0;
}

static int parse_body(const char *body, size_t len, int batch,
                      const tdm_search_options *defaults, const tdm_serve_limits *lim,
                      tdm_serve_request *out, char *err, size_t errlen)
{
    if (len > lim->max_body) {
        snprintf(err, errlen, "body: %zu bytes, more than the limit of %zu", len, lim->max_body);
        return 413;
    }
    json_error_t je;
    out->root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!out->root)
        return bad(err, errlen, "body", "invalid JSON at line %d, column %d: %s", je.line,
                   je.column, je.text);
    json_t *list = out->root;
    if (batch && json_is_object(list)) {
        list = json_object_get(out->root, "queries");
        if (!list || json_object_size(out->root) != 1)
            return bad(err, errlen, "body", "expected a list of queries or {\"queries\": [...]}");
    }
    size_t n = batch ? json_array_size(list) : 1;
    if (batch && !json_is_array(list))
        return bad(err, errlen, "body", "expected a list of queries or {\"queries\": [...]}");
    if (batch && (n == 0 || n > lim->max_batch))
        return bad(err, errlen, "queries", "%zu queries; a batch takes 1..%u", n,
                   lim->max_batch);
    out->q = calloc(n, sizeof *out->q);
    if (!out->q)
        return bad(err, errlen, "", "out of memory");
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        char where[32] = "";
        if (batch)
            snprintf(where, sizeof where, "queries[%zu]", i);
        int rc = parse_query(batch ? json_array_get(list, i) : list, where, defaults, lim,
                             &out->q[i], err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

int tdm_serve_parse(const char *body, size_t len, int batch, const tdm_search_options *defaults,
                    const tdm_serve_limits *lim, tdm_serve_request *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc = parse_body(body, len, batch, defaults, lim, out, err, errlen);
    if (rc)
        tdm_serve_request_free(out);
    return rc;
}

void tdm_serve_request_free(tdm_serve_request *r)
{
    for (size_t i = 0; r->q && i < r->n; i++)
        free(r->q[i].terms);
    free(r->q);
    json_decref(r->root);
    memset(r, 0, sizeof *r);
}
