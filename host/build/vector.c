/* JSON vector documents and their quantization (vector.h). */
#include "vector.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "index/format.h"
#include "invert.h"

static int bad(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* A whole decimal number of s (strtod's), finite. */
static int number(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end && isfinite(*v);
}

int tdm_quant_parse(const char *spec, tdm_quant *q, char *why, size_t cap)
{
    memset(q, 0, sizeof *q);
    q->kind = TDM_QUANT_INTEGER;
    q->scale = 1;
    if (!spec || !strcmp(spec, "integer") || !strcmp(spec, "int"))
        return 0;
    if (!strncmp(spec, "scale:", 6)) {
        q->kind = TDM_QUANT_SCALE;
        if (!number(spec + 6, &q->scale) || !(q->scale > 0 && q->scale <= 1e9))
            return bad(why, cap, "quantize '%s': the scale must be a number in (0, 1e9]", spec);
        return 0;
    }
    if (!strncmp(spec, "linear:", 7)) {
        q->kind = TDM_QUANT_LINEAR;
        char *end;
        long b = strtol(spec + 7, &end, 10);
        if (end == spec + 7 || (*end && *end != ':') || b < TDM_QUANT_BITS_MIN ||
            b > TDM_QUANT_BITS_MAX)
            return bad(why, cap, "quantize '%s': linear:B needs B bits in %d .. %d", spec,
                       TDM_QUANT_BITS_MIN, TDM_QUANT_BITS_MAX);
        q->bits = (unsigned)b;
        double m = 0;
        if (*end && (!number(end + 1, &m) || !(m > 0 && m < 3e38)))
            return bad(why, cap, "quantize '%s': the largest weight M of linear:B:M must be a "
                       "positive number", spec);
        if (m > 0)
            tdm_quant_set_max(q, m);
        return 0;
    }
    return bad(why, cap, "quantize '%s': expected integer, scale:S, linear:B or linear:B:M",
               spec);
}

/* PISA's LinearQuantizer (src/linear_quantizer.cpp): the scale is
 * (range - 1) / max in float, range = 2^bits - 1. */
void tdm_quant_set_max(tdm_quant *q, double m)
{
    q->max = m;
    q->scale = (double)((float)((1u << q->bits) - 2u) / (float)m);
}

int tdm_quant_apply(const tdm_quant *q, double w, uint32_t *impact, const char **why)
{
    if (w == 0)
        return 0;
    double x;
    if (q->kind == TDM_QUANT_INTEGER) {
        if (w != floor(w)) {
            *why = "is not an integer: choose a rule for float weights (quantize scale:S "
                   "or linear:B)";
            return -1;
        }
        x = w;
    } else if (q->kind == TDM_QUANT_SCALE) {
        x = round(w * q->scale);
        if (x == 0)
            return 0;
    } else {
        if (w > q->max) {
            *why = "is above the largest weight M of the linear rule";
            return -1;
        }
        x = (double)roundf((float)w * (float)q->scale) + 1;
    }
    if (x > TDM_IMPACT_MAX) {
        *why = "gives an impact above 2^24 (choose a smaller scale)";
        return -1;
    }
    *impact = (uint32_t)x;
    return 1;
}

/* ---- the JSON object */

typedef struct vparse {
    tdm_json j;
    const tdm_quant *q;
    tdm_buf *id, *vec;
    double *maxw;
    char *why;
    size_t cap;
    int have_vector;
} vparse;

static int fail(vparse *v, const char *what)
{
    const char *j = v->j.why;
    snprintf(v->why, v->cap, "%s", what ? what : j ? j : "malformed JSON");
    return 0;
}

static int id_value(vparse *v)
{
    tdm_json *j = &v->j;
    int c = tdm_json_peek(j);
    if (c == '"') {
        if (!tdm_json_string(j))
            return fail(v, NULL);
        for (size_t k = 0; k < j->out.len; k++)
            if ((unsigned char)j->out.p[k] < 0x20)
                return fail(v, "control character or \\u0000 in the id");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!tdm_json_number_text(j))
            return fail(v, NULL);
    } else {
        return fail(v, "the id must be a string or a number");
    }
    v->id->len = 0;
    return tdm_buf_append(v->id, j->out.p, j->out.len) ? fail(v, "out of memory") : 1;
}

/* One "term": weight of the vector. */
static int entry(vparse *v)
{
    tdm_json *j = &v->j;
    char term[TDM_IDX_TERM_MAX + 1];
    if (!tdm_json_string(j) || !tdm_json_expect(j, ':'))
        return fail(v, NULL);
    size_t tl = j->out.len;
    if (tl == 0 || tl > TDM_IDX_TERM_MAX || memchr(j->out.p, 0, tl))
        return fail(v, tl == 0 ? "an empty term in the vector"
                     : tl > TDM_IDX_TERM_MAX ? "a term of more than 1024 bytes in the vector"
                                             : "\\u0000 in a term of the vector");
    memcpy(term, j->out.p, tl);
    term[tl] = 0;
    int c = tdm_json_peek(j);
    double w;
    if (c != '-' && (c < '0' || c > '9')) {
        snprintf(v->why, v->cap, "the weight of term '%.100s' must be a number", term);
        return 0;
    }
    if (!tdm_json_number(j, &w)) {
        snprintf(v->why, v->cap, "the weight of term '%.100s': %s", term,
                 j->why ? j->why : "not a number");
        return 0;
    }
    if (!(w >= 0)) {
        snprintf(v->why, v->cap, "the weight of term '%.100s' is negative (%g)", term, w);
        return 0;
    }
    if (v->q->kind == TDM_QUANT_SCAN) {
        *v->maxw = w > *v->maxw ? w : *v->maxw;
        return 1;
    }
    uint32_t imp;
    const char *why = NULL;
    int got = tdm_quant_apply(v->q, w, &imp, &why);
    if (got < 0) {
        snprintf(v->why, v->cap, "the weight %g of term '%.100s' %s", w, term, why);
        return 0;
    }
    if (got && (tdm_buf_append(v->vec, term, tl + 1) || tdm_buf_append(v->vec, &imp, 4)))
        return fail(v, "out of memory");
    return 1;
}

static int vector_value(vparse *v)
{
    tdm_json *j = &v->j;
    if (v->have_vector)
        return fail(v, "\"vector\" given twice");
    v->have_vector = 1;
    if (tdm_json_peek(j) != '{')
        return fail(v, "the vector must be an object of terms and weights");
    j->pos++;
    if (tdm_json_peek(j) == '}') {
        j->pos++;
        return 1;
    }
    for (;;) {
        if (!entry(v))
            return 0;
        int c = tdm_json_peek(j);
        if (c != ',' && c != '}')
            return fail(v, "expected ',' or '}' in the vector");
        j->pos++;
        if (c == '}')
            return 1;
    }
}

static int member(vparse *v)
{
    tdm_json *j = &v->j;
    if (!tdm_json_string(j) || !tdm_json_expect(j, ':'))
        return fail(v, NULL);
    if (j->out.len == 2 && memcmp(j->out.p, "id", 2) == 0)
        return id_value(v);
    if (j->out.len == 6 && memcmp(j->out.p, "vector", 6) == 0)
        return vector_value(v);
    return tdm_json_skip(j) ? 1 : fail(v, NULL);
}

static int object(vparse *v)
{
    tdm_json *j = &v->j;
    if (!tdm_json_expect(j, '{'))
        return fail(v, "expected '{'");
    if (tdm_json_peek(j) == '}')
        j->pos++;
    else
        for (;;) {
            if (!member(v))
                return 0;
            int c = tdm_json_peek(j);
            if (c != ',' && c != '}')
                return fail(v, "expected ',' or '}'");
            j->pos++;
            if (c == '}')
                break;
        }
    if (tdm_json_peek(j))
        return fail(v, "trailing characters after the object");
    return v->have_vector ? 1 : fail(v, "no \"vector\" (a JSON vector document is {\"id\", "
                                        "\"contents\", \"vector\": {term: weight}})");
}

int tdm_json_vector_doc(const char *s, size_t len, const tdm_quant *q, tdm_buf *id,
                        tdm_buf *vec, double *maxw, char *why, size_t cap, size_t *pos)
{
    vparse v = {.q = q, .id = id, .vec = vec, .maxw = maxw, .why = why, .cap = cap};
    tdm_json_init(&v.j, s, len);
    v.j.lone_surrogates = 1;
    id->len = vec->len = 0;
    int ok = tdm_buf_append(id, "", 0) || tdm_buf_append(vec, "", 0) ? fail(&v, "out of memory")
                                                                    : object(&v);
    *pos = v.j.pos;
    tdm_json_free(&v.j);
    return ok ? 0 : -1;
}

int tdm_vector_each(const char *vec, size_t len, tdm_vector_fn fn, void *user)
{
    size_t at = 0;
    while (at < len) {
        const char *t = vec + at;
        size_t tl = strnlen(t, len - at);
        if (at + tl + 5 > len)
            return -1;   /* not a packed vector: a bug of the caller */
        uint32_t imp;
        memcpy(&imp, t + tl + 1, 4);
        int rc = fn(user, t, tl, imp);
        if (rc)
            return rc;
        at += tl + 5;
    }
    return 0;
}

typedef struct vinv {
    tdm_inverter *inv;
    uint32_t doc, len;
} vinv;

static int add_one(void *user, const char *term, size_t len, uint32_t impact)
{
    vinv *v = user;
    if (v->len > UINT32_MAX - impact)
        return TDM_ERR_LIMIT;
    v->len += impact;
    return tdm_inverter_add_n(v->inv, term, len, v->doc, impact);
}

int tdm_vector_invert(tdm_inverter *inv, const char *vec, size_t len, uint32_t doc,
                      uint32_t *doclen)
{
    vinv v = {inv, doc, 0};
    int rc = tdm_vector_each(vec, len, add_one, &v);
    *doclen = v.len;
    return rc < 0 && rc != TDM_ERR_NOMEM && rc != TDM_ERR_LIMIT ? TDM_ERR_INTERNAL : rc;
}
