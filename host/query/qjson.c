/* Small strict JSON reader (qjson.h). */
#include "qjson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

void tdm_qjson_init(tdm_qjson *j, const char *s, size_t len)
{
    memset(j, 0, sizeof *j);
    j->s = s;
    j->len = len;
}

void tdm_qjson_free(tdm_qjson *j)
{
    tdm_buf_free(&j->out);
}

static int fail(tdm_qjson *j, const char *why)
{
    j->why = why;
    return 0;
}

int tdm_qjson_peek(tdm_qjson *j)
{
    while (j->pos < j->len && strchr(" \t\r\n", j->s[j->pos]) && j->s[j->pos])
        j->pos++;
    return j->pos < j->len ? (unsigned char)j->s[j->pos] : 0;
}

int tdm_qjson_expect(tdm_qjson *j, char c)
{
    if (tdm_qjson_peek(j) != (unsigned char)c)
        return fail(j, c == ':' ? "expected ':'" : c == '{' ? "expected '{'"
                     : c == '}' ? "expected '}' or ','" : "unexpected character");
    j->pos++;
    return 1;
}

static int put(tdm_qjson *j, const void *p, size_t n)
{
    return tdm_buf_append(&j->out, p, n) ? fail(j, "out of memory") : 1;
}

static int hex4(tdm_qjson *j, unsigned *v)
{
    if (j->len - j->pos < 4)
        return fail(j, "truncated \\u escape");
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = j->s[j->pos++];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
        if (d == 16)
            return fail(j, "bad hex digit in \\u escape");
        *v = *v * 16 + d;
    }
    return 1;
}

static int put_utf8(tdm_qjson *j, unsigned cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 63));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | (cp >> 6 & 63));
        b[2] = (unsigned char)(0x80 | (cp & 63));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | cp >> 18);
        b[1] = (unsigned char)(0x80 | (cp >> 12 & 63));
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 63));
        b[3] = (unsigned char)(0x80 | (cp & 63));
        n = 4;
    }
    return put(j, b, n);
}

static int escape(tdm_qjson *j)
{
    if (j->pos >= j->len)
        return fail(j, "unterminated string");
    char c = j->s[j->pos++];
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    const char *k = c ? strchr(from, c) : NULL;
    if (k)
        return put(j, &to[k - from], 1);
    if (c != 'u')
        return fail(j, "bad escape");
    unsigned cp, lo;
    if (!hex4(j, &cp))
        return 0;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail(j, "lone low surrogate in \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (j->len - j->pos < 2 || j->s[j->pos] != '\\' || j->s[j->pos + 1] != 'u')
            return fail(j, "high surrogate without its low half");
        j->pos += 2;
        if (!hex4(j, &lo))
            return 0;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(j, "high surrogate without its low half");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    return put_utf8(j, cp);
}

int tdm_qjson_string(tdm_qjson *j)
{
    if (!tdm_qjson_expect(j, '"'))
        return fail(j, "expected a string");
    tdm_buf_clear(&j->out);
    if (!put(j, "", 0))
        return 0;
    for (;;) {
        size_t start = j->pos;
        while (j->pos < j->len && j->s[j->pos] != '"' && j->s[j->pos] != '\\' &&
               (unsigned char)j->s[j->pos] >= 0x20)
            j->pos++;
        if (!put(j, j->s + start, j->pos - start))
            return 0;
        if (j->pos >= j->len)
            return fail(j, "unterminated string");
        char c = j->s[j->pos++];
        if (c == '"')
            return 1;
        if (c != '\\')
            return fail(j, "control character in a string");
        if (!escape(j))
            return 0;
    }
}

static size_t digits(tdm_qjson *j)
{
    size_t n = 0;
    while (j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9') {
        j->pos++;
        n++;
    }
    return n;
}

int tdm_qjson_number(tdm_qjson *j, double *v)
{
    tdm_qjson_peek(j);
    size_t start = j->pos;
    if (j->pos < j->len && j->s[j->pos] == '-')
        j->pos++;
    size_t int_start = j->pos, nd = digits(j);
    if (nd == 0 || (nd > 1 && j->s[int_start] == '0'))
        return fail(j, "malformed number");
    if (j->pos < j->len && j->s[j->pos] == '.') {
        j->pos++;
        if (!digits(j))
            return fail(j, "malformed number");
    }
    if (j->pos < j->len && (j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
        j->pos++;
        if (j->pos < j->len && (j->s[j->pos] == '+' || j->s[j->pos] == '-'))
            j->pos++;
        if (!digits(j))
            return fail(j, "malformed number");
    }
    tdm_buf_clear(&j->out);
    if (!put(j, j->s + start, j->pos - start))
        return 0;
    *v = strtod(j->out.p, NULL);
    if (!isfinite(*v))
        return fail(j, "number out of range");
    return 1;
}

static int skip_at(tdm_qjson *j, int depth);

static int skip_container(tdm_qjson *j, int depth, char close)
{
    j->pos++;
    if (tdm_qjson_peek(j) == (unsigned char)close) {
        j->pos++;
        return 1;
    }
    for (;;) {
        if (close == '}' && (!tdm_qjson_string(j) || !tdm_qjson_expect(j, ':')))
            return 0;
        if (!skip_at(j, depth + 1))
            return 0;
        int c = tdm_qjson_peek(j);
        j->pos++;
        if (c == close)
            return 1;
        if (c != ',')
            return fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int literal(tdm_qjson *j, const char *w)
{
    size_t n = strlen(w);
    if (j->len - j->pos < n || memcmp(j->s + j->pos, w, n))
        return fail(j, "unexpected character");
    j->pos += n;
    return 1;
}

static int skip_at(tdm_qjson *j, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(j, "nested too deeply");
    int c = tdm_qjson_peek(j);
    double v;
    switch (c) {
    case '"': return tdm_qjson_string(j);
    case '{': return skip_container(j, depth, '}');
    case '[': return skip_container(j, depth, ']');
    case 't': return literal(j, "true");
    case 'f': return literal(j, "false");
    case 'n': return literal(j, "null");
    case 0: return fail(j, "expected a value");
    default: return tdm_qjson_number(j, &v);
    }
}

int tdm_qjson_skip(tdm_qjson *j)
{
    return skip_at(j, 0);
}
