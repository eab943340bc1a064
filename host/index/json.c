/* A strict JSON object reader for JSON-lines collections. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct cur {
    const char *s;
    size_t len, i;
    const char *why;
} cur;

static int fail(cur *c, const char *why)
{
    c->why = why;
    return -1;
}

static void ws(cur *c)
{
    while (c->i < c->len && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' ||
                             c->s[c->i] == '\r'))
        c->i++;
}

static int hex4(cur *c, unsigned *v)
{
    if (c->len - c->i < 4)
        return fail(c, "truncated \\u escape");
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char h = c->s[c->i++];
        unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                   : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                   : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
        if (d > 15)
            return fail(c, "bad hex digit in \\u escape");
        *v = *v * 16 + d;
    }
    return 0;
}

static int put_utf8(tdm_buf *b, unsigned cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6), u[1] = (unsigned char)(0x80 | (cp & 63)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12), u[1] = (unsigned char)(0x80 | (cp >> 6 & 63));
        u[2] = (unsigned char)(0x80 | (cp & 63)), n = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | cp >> 18), u[1] = (unsigned char)(0x80 | (cp >> 12 & 63));
        u[2] = (unsigned char)(0x80 | (cp >> 6 & 63)), u[3] = (unsigned char)(0x80 | (cp & 63));
        n = 4;
    }
    return b ? tdm_buf_append(b, u, n) : 0;
}

/* \uXXXX, with a following low surrogate joined; lone surrogates become U+FFFD. */
static int unicode_escape(cur *c, tdm_buf *out)
{
    unsigned v, lo;
    if (hex4(c, &v))
        return -1;
    if (v >= 0xD800 && v < 0xDC00 && c->len - c->i >= 6 && c->s[c->i] == '\\' &&
        c->s[c->i + 1] == 'u') {
        size_t save = c->i;
        c->i += 2;
        if (hex4(c, &lo))
            return -1;
        if (lo >= 0xDC00 && lo < 0xE000)
            return put_utf8(out, 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00));
        c->i = save;
    }
    return put_utf8(out, v >= 0xD800 && v < 0xE000 ? 0xFFFD : v);
}

/* A string at c->i (the opening quote); decoded into out unless out is NULL. */
static int string(cur *c, tdm_buf *out)
{
    if (c->i >= c->len || c->s[c->i] != '"')
        return fail(c, "expected a string");
    c->i++;
    while (c->i < c->len) {
        size_t start = c->i;
        while (c->i < c->len && c->s[c->i] != '"' && c->s[c->i] != '\\' &&
               (unsigned char)c->s[c->i] >= 0x20)
            c->i++;
        if (out && tdm_buf_append(out, c->s + start, c->i - start))
            return fail(c, "out of memory");
        if (c->i >= c->len)
            break;
        char ch = c->s[c->i++];
        if (ch == '"')
            return 0;
        if ((unsigned char)ch < 0x20)
            return fail(c, "control character in a string");
        if (c->i >= c->len)
            break;
        char e = c->s[c->i++];
        const char *map = strchr("\"\\/bfnrt", e);
        if (e == 'u') {
            if (unicode_escape(c, out))
                return c->why ? -1 : fail(c, "out of memory");
        } else if (e && map) {
            char v = "\"\\/\b\f\n\r\t"[map - "\"\\/bfnrt"];
            if (out && tdm_buf_append(out, &v, 1))
                return fail(c, "out of memory");
        } else {
            return fail(c, "bad escape in a string");
        }
    }
    return fail(c, "unterminated string");
}

static int digits(cur *c)
{
    size_t start = c->i;
    while (c->i < c->len && c->s[c->i] >= '0' && c->s[c->i] <= '9')
        c->i++;
    return c->i > start;
}

/* A number as JSON spells it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
 * copied verbatim into out unless out is NULL. */
static int number(cur *c, tdm_buf *out)
{
    size_t start = c->i;
    if (c->i < c->len && c->s[c->i] == '-')
        c->i++;
    if (c->i < c->len && c->s[c->i] == '0')
        c->i++;
    else if (!digits(c))
        return fail(c, "expected a value");
    if (c->i < c->len && c->s[c->i] == '.' && (c->i++, !digits(c)))
        return fail(c, "bad number: no digit after '.'");
    if (c->i < c->len && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->len && (c->s[c->i] == '+' || c->s[c->i] == '-'))
            c->i++;
        if (!digits(c))
            return fail(c, "bad number: no digit in the exponent");
    }
    return out && tdm_buf_append(out, c->s + start, c->i - start) ? fail(c, "out of memory")
                                                                 : 0;
}

/* true, false or null (only where any value will do). */
static int literal(cur *c)
{
    static const char *const words[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(words[k]);
        if (c->len - c->i >= n && memcmp(c->s + c->i, words[k], n) == 0) {
            c->i += n;
            return 0;
        }
    }
    return fail(c, "expected a value");
}

static int skip_value(cur *c, int depth);

/* An object or array; its members are parsed and dropped. */
static int container(cur *c, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(c, "nested too deeply");
    char close = c->s[c->i] == '{' ? '}' : ']';
    c->i++;
    ws(c);
    if (c->i < c->len && c->s[c->i] == close) {
        c->i++;
        return 0;
    }
    for (;;) {
        ws(c);
        if (close == '}') {
            if (string(c, NULL))
                return -1;
            ws(c);
            if (c->i >= c->len || c->s[c->i++] != ':')
                return fail(c, "expected ':'");
        }
        if (skip_value(c, depth + 1))
            return -1;
        ws(c);
        if (c->i < c->len && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->len && c->s[c->i] == close) {
            c->i++;
            return 0;
        }
        return fail(c, "expected ',' or a closing bracket");
    }
}

/* A value whose content is dropped. */
static int skip_value(cur *c, int depth)
{
    ws(c);
    if (c->i >= c->len)
        return fail(c, "expected a value");
    char ch = c->s[c->i];
    if (ch == '"')
        return string(c, NULL);
    if (ch == '{' || ch == '[')
        return container(c, depth);
    if (ch == '-' || (ch >= '0' && ch <= '9'))
        return number(c, NULL);
    return literal(c);
}

/* The id: a string (no NUL: it becomes a C string; no other control
 * character: names are one line in run files and PISA exports) or a number. */
static int id_value(cur *c, tdm_buf *out)
{
    ws(c);
    if (c->i < c->len && c->s[c->i] == '"') {
        size_t start = c->i;
        if (string(c, out))
            return -1;
        for (size_t k = 0; k < out->len; k++)
            if ((unsigned char)out->p[k] < 0x20) {   /* a name is one line of text */
                c->i = start;
                return fail(c, out->p[k] ? "control character in the id"
                                         : "\\u0000 in the id");
            }
        return 0;
    }
    if (c->i < c->len && (c->s[c->i] == '-' || (c->s[c->i] >= '0' && c->s[c->i] <= '9')))
        return number(c, out);
    return fail(c, "the id must be a string or a number");
}

static int text_value(cur *c, tdm_buf *out)
{
    ws(c);
    if (c->i >= c->len || c->s[c->i] != '"')
        return fail(c, "the contents must be a string");
    return string(c, out);
}

static int member(cur *c, tdm_buf *key, tdm_buf *id, tdm_buf *text)
{
    key->len = 0;
    ws(c);
    if (string(c, key))
        return -1;
    ws(c);
    if (c->i >= c->len || c->s[c->i++] != ':')
        return fail(c, "expected ':'");
    if (key->len == 2 && memcmp(key->p, "id", 2) == 0) {
        id->len = 0;
        return id_value(c, id);
    }
    if (key->len == 8 && memcmp(key->p, "contents", 8) == 0) {
        text->len = 0;
        return text_value(c, text);
    }
    return skip_value(c, 1);
}

int tdm_json_doc(const char *s, size_t len, tdm_buf *id, tdm_buf *text,
                 const char **why, size_t *pos)
{
    cur c = {s, len, 0, NULL};
    tdm_buf key = {0};
    id->len = text->len = 0;
    int rc = tdm_buf_append(id, "", 0) || tdm_buf_append(text, "", 0) ? fail(&c, "out of memory")
                                                                      : 0;
    ws(&c);
    if (!rc && (c.i >= len || s[c.i++] != '{'))
        rc = fail(&c, "expected '{'");
    ws(&c);
    if (!rc && c.i < len && s[c.i] == '}')
        c.i++;
    else
        while (!rc) {
            rc = member(&c, &key, id, text);
            ws(&c);
            if (!rc && c.i < len && s[c.i] == ',') {
                c.i++;
                continue;
            }
            if (!rc && (c.i >= len || s[c.i++] != '}'))
                rc = fail(&c, "expected ',' or '}'");
            break;
        }
    ws(&c);
    if (!rc && c.i != len)
        rc = fail(&c, "trailing characters after the object");
    free(key.p);
    *why = c.why;
    *pos = c.i;
    return rc;
}
