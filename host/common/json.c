/* Small strict JSON reader (json.h). */
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

void tdm_json_init(tdm_json *j, const char *s, size_t len)
{
    memset(j, 0, sizeof *j);
    j->s = s;
    j->len = len;
}

void tdm_json_free(tdm_json *j) { tdm_buf_free(&j->out); }

static int fail(tdm_json *j, const char *why)
{
    j->why = why;
    return 0;
}

int tdm_json_peek(tdm_json *j)
{
    while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' ||
                               j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
        j->pos++;
    return j->pos < j->len ? (unsigned char)j->s[j->pos] : 0;
}

int tdm_json_expect(tdm_json *j, char c)
{
    if (tdm_json_peek(j) != (unsigned char)c)
        return fail(j, c == ':' ? "expected ':'" : c == '{' ? "expected '{'"
                     : c == '"' ? "expected a string" : "unexpected character");
    j->pos++;
    return 1;
}

static int put(tdm_json *j, const void *p, size_t n)
{
    return tdm_buf_append(&j->out, p, n) ? fail(j, "out of memory") : 1;
}

static int hex4(tdm_json *j, unsigned *v)
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

static int put_utf8(tdm_json *j, unsigned cp)
{
    unsigned char b[4];
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        b[i] = (unsigned char)(0x80 | (cp & 63));
    b[0] = (unsigned char)(lead[n] | cp);
    return put(j, b, n);
}

/* \uXXXX, a high surrogate joined with the low one that follows. */
static int unicode_escape(tdm_json *j)
{
    unsigned cp, lo;
    if (!hex4(j, &cp))
        return 0;
    int high = cp >= 0xD800 && cp <= 0xDBFF, low = cp >= 0xDC00 && cp <= 0xDFFF;
    if (high && j->len - j->pos >= 6 && j->s[j->pos] == '\\' && j->s[j->pos + 1] == 'u') {
        size_t save = j->pos;
        j->pos += 2;
        if (!hex4(j, &lo))
            return 0;
        if (lo >= 0xDC00 && lo <= 0xDFFF)
            return put_utf8(j, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
        j->pos = save;
    }
    if ((high || low) && !j->lone_surrogates)
        return fail(j, low ? "lone low surrogate in \\u escape"
                           : "high surrogate without its low half");
    return put_utf8(j, high || low ? 0xFFFD : cp);
}

static int escape(tdm_json *j)
{
    if (j->pos >= j->len)
        return fail(j, "unterminated string");
    char c = j->s[j->pos++];
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    const char *k = c ? strchr(from, c) : NULL;
    if (k)
        return put(j, &to[k - from], 1);
    return c == 'u' ? unicode_escape(j) : fail(j, "bad escape in a string");
}

int tdm_json_string(tdm_json *j)
{
    if (!tdm_json_expect(j, '"'))
        return 0;
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
            return j->pos--, fail(j, "control character in a string");
        if (!escape(j))
            return 0;
    }
}

static size_t digits(tdm_json *j)
{
    size_t start = j->pos;
    while (j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9')
        j->pos++;
    return j->pos - start;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? ("01" is 0, then a stray 1) */
int tdm_json_number_text(tdm_json *j)
{
    tdm_json_peek(j);
    size_t start = j->pos;
    if (j->pos < j->len && j->s[j->pos] == '-')
        j->pos++;
    if (j->pos < j->len && j->s[j->pos] == '0')
        j->pos++;
    else if (!digits(j))
        return fail(j, "expected a value");
    if (j->pos < j->len && j->s[j->pos] == '.' && (j->pos++, !digits(j)))
        return fail(j, "bad number: no digit after '.'");
    if (j->pos < j->len && (j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
        j->pos++;
        if (j->pos < j->len && (j->s[j->pos] == '+' || j->s[j->pos] == '-'))
            j->pos++;
        if (!digits(j))
            return fail(j, "bad number: no digit in the exponent");
    }
    tdm_buf_clear(&j->out);
    return put(j, j->s + start, j->pos - start);
}

int tdm_json_number(tdm_json *j, double *v)
{
    if (!tdm_json_number_text(j))
        return 0;
    *v = strtod(j->out.p, NULL);
    return isfinite(*v) ? 1 : fail(j, "number out of range");
}

static int skip_at(tdm_json *j, int depth);

static int skip_container(tdm_json *j, int depth, char close)
{
    j->pos++;
    if (tdm_json_peek(j) == (unsigned char)close) {
        j->pos++;
        return 1;
    }
    for (;;) {
        if (close == '}' && (!tdm_json_string(j) || !tdm_json_expect(j, ':')))
            return 0;
        if (!skip_at(j, depth + 1))
            return 0;
        int c = tdm_json_peek(j);
        if (c != close && c != ',')
            return fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        j->pos++;
        if (c == close)
            return 1;
    }
}

static int literal(tdm_json *j)
{
    static const char *const words[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(words[k]);
        if (j->len - j->pos >= n && memcmp(j->s + j->pos, words[k], n) == 0) {
            j->pos += n;
            return 1;
        }
    }
    return fail(j, "expected a value");
}

static int skip_at(tdm_json *j, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(j, "nested too deeply");
    int c = tdm_json_peek(j);
    if (c == '"')
        return tdm_json_string(j);
    if (c == '{' || c == '[')
        return skip_container(j, depth, c == '{' ? '}' : ']');
    if (c == '-' || (c >= '0' && c <= '9'))
        return tdm_json_number_text(j);
    return literal(j);
}

int tdm_json_skip(tdm_json *j) { return skip_at(j, 0); }
