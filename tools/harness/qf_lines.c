/* One query a line: `id:text`, `id<TAB>text`, JSON lines (queryfile.h). */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "qf_priv.h"
#include "common/json.h"
#include "tandem.h"

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r", s[i]))
            return 0;
    return 1;
}

/* ---- repeated tokens: distinct terms counted in a small hash table */

typedef struct tokset {
    uint32_t *slot;            /* index + 1 into terms, 0 empty */
    size_t nslots;
    tdm_qf_term *terms;        /* term offsets into text until the end */
    size_t n, cap;
    tdm_buf text;              /* the distinct terms, NUL-terminated */
} tokset;

static int read_lines(tdm_qf_ctx *c, tokset *ts);

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Counts one token; -1 out of memory, 1 past TDM_QF_MAX_TERMS distinct terms. */
static int tok_add(tokset *t, const char *s, size_t n)
{
    size_t k = fnv(s, n) & (t->nslots - 1);
    for (; t->slot[k]; k = (k + 1) & (t->nslots - 1)) {
        tdm_qf_term *e = &t->terms[t->slot[k] - 1];
        const char *p = t->text.p + (uintptr_t)e->term;
        if (!strncmp(p, s, n) && !p[n]) {
            e->weight += 1;
            return 0;
        }
    }
    if (t->n == TDM_QF_MAX_TERMS)
        return 1;
    tdm_qf_term *e = tdm_array_grow(t->terms, &t->cap, t->n + 1, sizeof *e);
    if (!e)
        return -1;
    t->terms = e;
    t->terms[t->n++] = (tdm_qf_term){(const char *)(uintptr_t)t->text.len, 1};
    t->slot[k] = (uint32_t)t->n;
    return tdm_buf_append(&t->text, s, n) || tdm_buf_append(&t->text, "", 1) ? -1 : 0;
}

/* One line's text as repeated tokens, added as a weighted query: each
 * distinct token, in order of first appearance, weighs its count. */
static int token_query(tdm_qf_ctx *c, tokset *t, const char *id, size_t idlen,
                       const char *s, size_t n, uint64_t ln)
{
    memset(t->slot, 0, t->nslots * sizeof *t->slot);
    t->n = 0;
    t->text.len = 0;
    uint64_t tokens = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t j = i;
        while (j < n && s[j] != ' ' && s[j] != '\t')
            j++;
        if (j == i)
            break;
        if (memchr(s + i, 0, j - i))
            return tdm_qf_fail(c, ln, "a term holding NUL");
        int rc = tok_add(t, s + i, j - i);
        if (rc < 0)
            return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
        if (rc > 0)
            return tdm_qf_fail(c, ln, "query '%.*s': more than %d distinct terms (after "
                               "%llu tokens; the limit counts distinct terms, not their "
                               "repetitions)", (int)(idlen > 100 ? 100 : idlen), id,
                               TDM_QF_MAX_TERMS, (unsigned long long)tokens);
        tokens++;
        i = j;
    }
    for (size_t k = 0; k < t->n; k++)
        t->terms[k].term = t->text.p + (uintptr_t)t->terms[k].term;
    return tdm_qf_add(c, id, idlen, NULL, 0, t->terms, t->n, ln);
}

int tdm_qf_read_lines(tdm_qf_ctx *c)
{
    tokset ts = {0};
    if (c->o && c->o->tokens) {
        ts.nslots = 4 * TDM_QF_MAX_TERMS;
        if (!(ts.slot = calloc(ts.nslots, sizeof *ts.slot)))
            return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    }
    int rc = read_lines(c, ts.slot ? &ts : NULL);
    free(ts.slot);
    free(ts.terms);
    tdm_buf_free(&ts.text);
    return rc;
}

static int read_lines(tdm_qf_ctx *c, tokset *ts)
{
    char sep = c->f->format == TDM_QF_TAB ? '\t' : ':', *line;
    size_t len;
    int rc;
    while ((rc = tdm_lr_next(c->lr, &line, &len, c->err)) == 1) {
        uint64_t ln = tdm_lr_lineno(c->lr);
        if ((rc = tdm_qf_bare_cr(c, line, len, ln)))
            return rc;
        if (blank(line, len))
            continue;
        char *s = memchr(line, sep, len);
        if (!s)
            return tdm_qf_fail(c, ln, "no '%s' between query id and text",
                               sep == '\t' ? "\\t" : ":");
        const char *text = s + 1;
        size_t tlen = len - (size_t)(text - line);
        while (tlen && strchr(" \t\r", *text))
            text++, tlen--;
        while (tlen && strchr(" \t\r", text[tlen - 1]))
            tlen--;
        rc = ts ? token_query(c, ts, line, (size_t)(s - line), text, tlen, ln)
                : tdm_qf_add(c, line, (size_t)(s - line), text, tlen, NULL, 0, ln);
        if (rc)
            return rc;
    }
    return rc;
}

/* ---- JSON lines */

typedef struct jq {
    tdm_buf id, text;
    int has_id, has_text, has_terms;
    tdm_qf_term *terms;
    size_t nterms, cap;
    tdm_buf termtext;    /* the terms' bytes, NUL-separated */
} jq;

static int jfail(tdm_qf_ctx *c, uint64_t ln, const tdm_json *j)
{
    return tdm_qf_fail(c, ln, "byte %zu: %s", j->pos + 1, j->why ? j->why : "malformed JSON");
}

static int read_id(tdm_qf_ctx *c, uint64_t ln, tdm_json *j, jq *q)
{
    double v;
    int ch = tdm_json_peek(j);
    int ok = 0;
    if (ch == '"')
        ok = tdm_json_string(j);
    else if (ch == '-' || (ch >= '0' && ch <= '9'))
        ok = tdm_json_number(j, &v);
    else
        j->why = "id: want a string or a number";
    if (!ok)
        return jfail(c, ln, j);
    if (memchr(j->out.p, 0, j->out.len))
        return tdm_qf_fail(c, ln, "id holds a NUL character");
    q->id.len = 0;
    q->has_id = 1;
    return tdm_buf_append(&q->id, j->out.p, j->out.len) ? tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory") : TDM_OK;
}

static int add_term(tdm_qf_ctx *c, uint64_t ln, jq *q, const char *t, size_t n, double w)
{
    if (n == 0 || memchr(t, 0, n))
        return tdm_qf_fail(c, ln, "terms: an empty term or one holding NUL");
    if (!(w >= TDM_WEIGHT_MIN && w <= TDM_WEIGHT_MAX)) /* finite float scores (tandem.h) */
        return tdm_qf_fail(c, ln, "terms: weight %g of '%s' (want %g .. %g)", w, t,
                           TDM_WEIGHT_MIN, TDM_WEIGHT_MAX);
    for (size_t i = 0; i < q->nterms; i++)
        if (!strcmp(q->termtext.p + (size_t)q->terms[i].term, t))
            return tdm_qf_fail(c, ln, "terms: '%s' twice", t);
    if (q->nterms == TDM_QF_MAX_TERMS)
        return tdm_qf_fail(c, ln, "terms: more than %d distinct terms", TDM_QF_MAX_TERMS);
    tdm_qf_term *p = tdm_array_grow(q->terms, &q->cap, q->nterms + 1, sizeof *p);
    if (!p)
        return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    q->terms = p;
    /* offsets until the end: termtext may move */
    q->terms[q->nterms++] = (tdm_qf_term){(const char *)(uintptr_t)q->termtext.len, w};
    if (tdm_buf_append(&q->termtext, t, n + 1))
        return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    return TDM_OK;
}

static int read_terms(tdm_qf_ctx *c, uint64_t ln, tdm_json *j, jq *q)
{
    if (!tdm_json_expect(j, '{'))
        return tdm_qf_fail(c, ln, "terms: want an object of term: weight");
    q->has_terms = 1;
    if (tdm_json_peek(j) == '}') {
        j->pos++;
        return TDM_OK;
    }
    for (;;) {
        double w;
        if (!tdm_json_string(j))
            return jfail(c, ln, j);
        char *t = strdup(j->out.p);
        size_t n = j->out.len;
        if (!t)
            return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
        int rc = !tdm_json_expect(j, ':') || !tdm_json_number(j, &w) ? jfail(c, ln, j)
                                                                       : add_term(c, ln, q, t, n, w);
        free(t);
        if (rc)
            return rc;
        int ch = tdm_json_peek(j);
        j->pos++;
        if (ch == '}')
            return TDM_OK;
        if (ch != ',')
            return j->pos--, j->why = "expected ',' or '}'", jfail(c, ln, j);
    }
}

static int read_member(tdm_qf_ctx *c, uint64_t ln, tdm_json *j, jq *q)
{
    if (!tdm_json_string(j))
        return jfail(c, ln, j);
    char key[8] = "";
    if (j->out.len < sizeof key && !memchr(j->out.p, 0, j->out.len)) /* else: an unknown key */
        memcpy(key, j->out.p, j->out.len + 1);
    if (!tdm_json_expect(j, ':'))
        return jfail(c, ln, j);
    if ((!strcmp(key, "id") && q->has_id) || (!strcmp(key, "text") && q->has_text) ||
        ((!strcmp(key, "terms") || !strcmp(key, "vector")) && q->has_terms))
        return tdm_qf_fail(c, ln, "key \"%s\" twice (or \"terms\" and \"vector\")", key);
    if (!strcmp(key, "id"))
        return read_id(c, ln, j, q);
    if (!strcmp(key, "terms") || !strcmp(key, "vector"))
        return read_terms(c, ln, j, q);
    if (!strcmp(key, "text")) {
        if (!tdm_json_string(j))
            return jfail(c, ln, j);
        if (memchr(j->out.p, 0, j->out.len))
            return tdm_qf_fail(c, ln, "text holds a NUL character");
        q->has_text = 1;
        q->text.len = 0;
        return tdm_buf_append(&q->text, j->out.p, j->out.len) ? tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory") : TDM_OK;
    }
    return tdm_json_skip(j) ? TDM_OK : jfail(c, ln, j);
}

static int json_line(tdm_qf_ctx *c, uint64_t ln, const char *line, size_t len, jq *q)
{
    tdm_json j;
    tdm_json_init(&j, line, len);
    q->has_id = q->has_text = q->has_terms = 0;
    q->nterms = 0;
    q->termtext.len = 0;
    int rc = TDM_OK;
    if (!tdm_json_expect(&j, '{'))
        rc = jfail(c, ln, &j);
    else if (tdm_json_peek(&j) == '}')
        j.pos++;
    else
        for (;;) {
            if ((rc = read_member(c, ln, &j, q)))
                break;
            int ch = tdm_json_peek(&j);
            j.pos++;
            if (ch == '}')
                break;
            if (ch != ',') {
                j.pos--;
                j.why = "expected ',' or '}'";
                rc = jfail(c, ln, &j);
                break;
            }
        }
    if (rc == TDM_OK && tdm_json_peek(&j))
        rc = (j.why = "text after the object", jfail(c, ln, &j));
    tdm_json_free(&j);
    if (rc)
        return rc;
    if (!q->has_id)
        return tdm_qf_fail(c, ln, "no \"id\"");
    if (q->has_text == q->has_terms)
        return tdm_qf_fail(c, ln, "want exactly one of \"text\" and \"terms\" (or "
                           "\"vector\")");
    if (q->has_text)
        return tdm_qf_add(c, q->id.p, q->id.len, q->text.p, q->text.len, NULL, 0, ln);
    for (size_t i = 0; i < q->nterms; i++)
        q->terms[i].term = q->termtext.p + (uintptr_t)q->terms[i].term;
    return tdm_qf_add(c, q->id.p, q->id.len, NULL, 0, q->terms, q->nterms, ln);
}

int tdm_qf_read_jsonl(tdm_qf_ctx *c)
{
    jq q = {0};
    char *line;
    size_t len;
    int rc;
    while ((rc = tdm_lr_next(c->lr, &line, &len, c->err)) == 1) {
        if ((rc = tdm_qf_bare_cr(c, line, len, tdm_lr_lineno(c->lr))))
            break;
        if (blank(line, len))
            continue;
        if ((rc = json_line(c, tdm_lr_lineno(c->lr), line, len, &q)))
            break;
    }
    free(q.id.p);
    free(q.text.p);
    free(q.terms);
    free(q.termtext.p);
    return rc;
}
