/* Collection parsers: lines, TREC, SMART, JSON lines, JSON vectors, over the
 * line reader. */
#include "parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "vector.h"
#include "text/linereader.h"

struct tdm_parser {
    tdm_linereader *lr;
    int format;
    uint64_t ndocs;
    int allow_empty;
    int unnamed;       /* lines without a TAB are documents named by position */
    tdm_buf name, text;
    char *pending;          /* SMART: the .I line that ended the previous record */
    char *rest;             /* TREC: the unread part of the current line, or NULL */
    size_t rest_len;
    tdm_quant quant;        /* JSON vectors: their weights to impacts */
    double max_weight;      /* JSON vectors: the largest weight read */
};

static const char *const format_names[] = {"auto", "lines", "trec", "smart", "jsonl",
                                           "jsonvector"};
#define NFORMATS 6

int tdm_format_by_name(const char *name)
{
    if (strcasecmp(name, "vector") == 0 || strcasecmp(name, "json-vector") == 0)
        return TDM_BUILD_JSON_VECTOR;
    for (int i = 0; i < NFORMATS; i++)
        if (strcasecmp(name, format_names[i]) == 0)
            return i;
    if (strcasecmp(name, "json") == 0 || strcasecmp(name, "tsv") == 0)
        return name[0] == 'j' || name[0] == 'J' ? TDM_BUILD_JSONL : TDM_BUILD_LINES;
    return -1;
}

const char *tdm_format_name(int format)
{
    return format >= 0 && format < NFORMATS ? format_names[format] : "unknown";
}

/* Whether the first line of p[0..n) holds the key "vector" (Anserini's JSON
 * vector documents). */
static int has_vector_key(const char *p, size_t n)
{
    const char *nl = memchr(p, '\n', n);
    size_t m = nl ? (size_t)(nl - p) : n;
    for (size_t i = 0; i + 8 <= m; i++)
        if (memcmp(p + i, "\"vector\"", 8) == 0)
            return 1;
    return 0;
}

/* From the first non-blank bytes: "<DOC" TREC, ".I" SMART, "{" JSON (a JSON
 * vector when its first line has a "vector" key), else lines. */
static int guess(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    if (n - i >= 4 && strncasecmp(p + i, "<doc", 4) == 0)
        return TDM_BUILD_TREC;
    if (n - i >= 2 && p[i] == '.' && p[i + 1] == 'I' && (n - i == 2 || p[i + 2] == ' '))
        return TDM_BUILD_SMART;
    if (i < n && p[i] == '{')
        return has_vector_key(p + i, n - i) ? TDM_BUILD_JSON_VECTOR : TDM_BUILD_JSONL;
    return TDM_BUILD_LINES;
}

int tdm_parser_open(const char *path, int format, tdm_parser **out, tdm_err *err)
{
    *out = NULL;
    if (format < TDM_BUILD_AUTO || format > TDM_BUILD_JSON_VECTOR)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown input format %d", format);
    tdm_parser *p = calloc(1, sizeof *p);
    if (!p)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    tdm_quant_parse(NULL, &p->quant, NULL, 0);
    int rc = tdm_lr_open(path, &p->lr, err);
    if (!rc && format == TDM_BUILD_AUTO) {
        const char *head = NULL;
        size_t n = tdm_lr_peek(p->lr, &head, err);
        if (err && err->code && !n)
            rc = err->code;
        format = guess(head ? head : "", n);
    }
    if (rc) {
        tdm_parser_close(p);
        return rc;
    }
    p->format = format;
    *out = p;
    return TDM_OK;
}

void tdm_parser_close(tdm_parser *p)
{
    if (!p)
        return;
    tdm_lr_close(p->lr);
    free(p->name.p);
    free(p->text.p);
    free(p->pending);
    free(p);
}

void tdm_parser_allow_empty(tdm_parser *p, int allow) { p->allow_empty = allow; }
void tdm_parser_allow_unnamed(tdm_parser *p, int allow) { p->unnamed = allow; }
uint64_t tdm_parser_bytes(const tdm_parser *p) { return tdm_lr_bytes(p->lr); }
void tdm_parser_set_quant(tdm_parser *p, const tdm_quant *q) { p->quant = *q; }
double tdm_parser_max_weight(const tdm_parser *p) { return p->max_weight; }
int tdm_parser_format(const tdm_parser *p) { return p->format; }

static int nomem(tdm_parser *p, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory reading %s", tdm_lr_path(p->lr));
}

static int set_name(tdm_parser *p, const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    p->name.len = 0;
    if (n == 0) {
        char num[24];
        int k = snprintf(num, sizeof num, "%llu", (unsigned long long)p->ndocs);
        return tdm_buf_append(&p->name, num, (size_t)k);
    }
    /* A name is a C string in the index: a NUL byte would cut it short. */
    const char *z = memchr(s, 0, n);
    return tdm_buf_append(&p->name, s, z ? (size_t)(z - s) : n);
}

/* name<TAB>text; a line without a tab is an error (a qrels or query file
 * given by mistake) unless allowed: then all text, named by its ordinal. */
static int next_line_doc(tdm_parser *p, tdm_err *err)
{
    char *l;
    size_t n;
    int rc;
    while ((rc = tdm_lr_next(p->lr, &l, &n, err)) == 1 && strspn(l, " \t") == n)
        ;   /* blank lines are no documents */
    if (rc != 1)
        return rc;
    char *tab = memchr(l, '\t', n);
    if (!tab && !p->unnamed)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: no TAB: a lines input is "
                           "name<TAB>text (--unnamed-lines to name such lines by position)",
                           tdm_lr_path(p->lr), (unsigned long long)tdm_lr_lineno(p->lr));
    size_t nl = tab ? (size_t)(tab - l) : 0, off = tab ? nl + 1 : 0;
    p->text.len = 0;
    if (set_name(p, l, nl) || tdm_buf_append(&p->text, l + off, n - off))
        return nomem(p, err);
    return 1;
}

/* Finds a TREC tag ignoring ASCII case: collections write <DOC> and <doc>. */
static char *find(char *hay, size_t n, const char *needle, size_t m)
{
    char *end = hay + n;
    for (char *h = hay; (size_t)(end - h) >= m && (h = memchr(h, '<', (size_t)(end - h) - m + 1));
         h++)
        if (strncasecmp(h, needle, m) == 0)
            return h;
    return NULL;
}

static int is_alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The length of the markup at s[0] == '<' (see parse.h), or 0 if s is text. */
static size_t tag_len(const char *s, size_t n)
{
    if (n >= 4 && memcmp(s, "<!--", 4) == 0) {
        for (size_t i = 4; i + 3 <= n; i++)
            if (memcmp(s + i, "-->", 3) == 0)
                return i + 3;
        return 0;
    }
    size_t i = 1;
    if (i < n && (s[i] == '/' || s[i] == '!' || s[i] == '?'))
        i++;
    if (i >= n || !is_alpha(s[i]))
        return 0;
    while (i < n && (is_alpha(s[i]) || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
                     s[i] == '-' || s[i] == '.' || s[i] == ':'))
        i++;
    if (i < n && s[i] == '/' && i + 1 < n && s[i + 1] == '>')
        return i + 2;
    if (i < n && s[i] == '>')
        return i + 1;
    if (i >= n || !is_space(s[i]))
        return 0;
    for (size_t end = n - i > 1024 ? i + 1024 : n; i < end; i++) {
        if (s[i] == '>')
            return i + 1;
        if (s[i] == '<')
            return 0;
    }
    return 0;
}

/* Replaces markup with spaces so that tag names are not indexed. */
static void strip_tags(char *s, size_t n)
{
    for (char *t = s; (t = memchr(t, '<', n - (size_t)(t - s))); ) {
        size_t k = tag_len(t, n - (size_t)(t - s));
        if (k)
            memset(t, ' ', k);
        t += k ? k : 1;
    }
}

static int trec_error(tdm_parser *p, tdm_err *err, const char *what, uint64_t line)
{
    return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: %s", tdm_lr_path(p->lr),
                       (unsigned long long)line, what);
}

/* The name from <DOCNO> ... </DOCNO> (blanked in the text), else the ordinal. */
static int trec_finish(tdm_parser *p, uint64_t line, tdm_err *err)
{
    char *t = p->text.p;
    size_t n = p->text.len;
    char *a = find(t, n, "<DOCNO>", 7);
    char *b = a ? find(a + 7, n - (size_t)(a + 7 - t), "</DOCNO>", 8) : NULL;
    if (a && !b)
        return trec_error(p, err, "<DOCNO> without </DOCNO> in the document that starts here",
                          line);
    char *s = a ? a + 7 : t;
    size_t m = a ? (size_t)(b - s) : 0;
    while (m && is_space(*s))
        s++, m--;
    while (m && is_space(s[m - 1]))
        m--;
    if (memchr(s, '\n', m))
        return trec_error(p, err, "a <DOCNO> spans lines in the document that starts here",
                          line);
    if (set_name(p, s, m))
        return nomem(p, err);
    if (a)
        memset(a, ' ', (size_t)(b + 8 - a));
    strip_tags(t, n);
    return 1;
}

/* The next unread part of a line: what is left of the current one, else a new one. */
static int trec_line(tdm_parser *p, char **s, size_t *m, tdm_err *err)
{
    if (p->rest) {
        *s = p->rest;
        *m = p->rest_len;
        p->rest = NULL;
        return 1;
    }
    return tdm_lr_next(p->lr, s, m, err);
}

/* <DOC> ... </DOC>, the name from <DOCNO>; blank text outside documents is
 * skipped, several documents may share a line. */
static int next_trec_doc(tdm_parser *p, tdm_err *err)
{
    char *s;
    size_t m;
    int rc, in = 0;
    uint64_t start = 0;
    p->text.len = 0;
    while ((rc = trec_line(p, &s, &m, err)) == 1) {
        uint64_t line = tdm_lr_lineno(p->lr);
        if (!in) {
            char *d = find(s, m, "<DOC>", 5);
            char *c = find(s, d ? (size_t)(d - s) : m, "</DOC>", 6);
            if (c)
                return trec_error(p, err, "</DOC> outside a document", line);
            if (!d)
                continue;
            in = 1;
            start = line;
            m -= (size_t)(d + 5 - s);
            s = d + 5;
        }
        char *e = find(s, m, "</DOC>", 6);
        size_t k = e ? (size_t)(e - s) : m;
        if (find(s, k, "<DOC>", 5))
            return trec_error(p, err, "<DOC> inside a document (a </DOC> missing?)", line);
        if (tdm_buf_append(&p->text, s, k) || tdm_buf_append(&p->text, "\n", 1))
            return nomem(p, err);
        if (e) {
            p->rest = e + 6;
            p->rest_len = m - k - 6;
            return trec_finish(p, start, err);
        }
    }
    if (rc < 0)
        return rc;
    if (in)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: document without </DOC> at "
                           "the end of the input", tdm_lr_path(p->lr),
                           (unsigned long long)start);
    return 0;
}

/* ".X" or ".X rest": a SMART field marker; returns the letter or 0. */
static char smart_field(const char *l, size_t n)
{
    if (n >= 2 && l[0] == '.' && l[1] >= 'A' && l[1] <= 'Z' && (n == 2 || l[2] == ' ' ||
                                                                 l[2] == '\t'))
        return l[1];
    return 0;
}

/* .I name, then fields; .T and .W are indexed, every other field ignored. */
static int next_smart_doc(tdm_parser *p, tdm_err *err)
{
    char *l;
    size_t n;
    int rc, in = 0, keep = 0;
    p->text.len = 0;
    if (p->pending) {
        in = 1;
        if (set_name(p, p->pending + 2, strlen(p->pending + 2)))
            return nomem(p, err);
        free(p->pending);
        p->pending = NULL;
    }
    while ((rc = tdm_lr_next(p->lr, &l, &n, err)) == 1) {
        char f = smart_field(l, n);
        if (f == 'I' && in) {
            if (!(p->pending = strdup(l)))
                return nomem(p, err);
            return 1;
        }
        if (f == 'I') {
            in = 1;
            if (set_name(p, l + 2, n - 2))
                return nomem(p, err);
        } else if (f) {
            keep = f == 'T' || f == 'W';
        } else if (in && keep) {
            if (tdm_buf_append(&p->text, l, n) || tdm_buf_append(&p->text, "\n", 1))
                return nomem(p, err);
        }
    }
    return rc < 0 ? rc : in;
}

static int next_json_doc(tdm_parser *p, tdm_err *err)
{
    char *l;
    size_t n, pos;
    const char *why;
    int rc;
    while ((rc = tdm_lr_next(p->lr, &l, &n, err)) == 1 && strspn(l, " \t\r") == n)
        ;
    if (rc != 1)
        return rc;
    if (tdm_json_doc(l, n, &p->name, &p->text, &why, &pos))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu, column %zu: %s",
                           tdm_lr_path(p->lr), (unsigned long long)tdm_lr_lineno(p->lr),
                           pos + 1, why);
    if (p->name.len == 0 && set_name(p, "", 0))   /* no id: the ordinal */
        return nomem(p, err);
    return 1;
}

/* A JSON vector document: its text is the packed vector (vector.h). */
static int next_vector_doc(tdm_parser *p, tdm_err *err)
{
    char *l;
    size_t n, pos;
    char why[256];
    int rc;
    while ((rc = tdm_lr_next(p->lr, &l, &n, err)) == 1 && strspn(l, " \t\r") == n)
        ;
    if (rc != 1)
        return rc;
    if (tdm_json_vector_doc(l, n, &p->quant, &p->name, &p->text, &p->max_weight, why,
                            sizeof why, &pos))
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu, column %zu: %s",
                           tdm_lr_path(p->lr), (unsigned long long)tdm_lr_lineno(p->lr),
                           pos + 1, why);
    if (p->name.len == 0 && set_name(p, "", 0))   /* no id: the ordinal */
        return nomem(p, err);
    return 1;
}

/* The end of an input: one that gave no document is an error unless allowed. */
static int at_end(tdm_parser *p, tdm_err *err)
{
    if (p->ndocs || p->allow_empty)
        return 0;
    uint64_t lines = tdm_lr_lineno(p->lr);
    const char *why = lines == 0 ? "empty input"
                    : p->format == TDM_BUILD_TREC ? "no <DOC> in the input (not TREC?)"
                    : p->format == TDM_BUILD_SMART ? "no .I line in the input (not SMART?)"
                    : "only blank lines";
    if (lines == 0)
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: %s: no documents", tdm_lr_path(p->lr), why);
    return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: %s: no documents", tdm_lr_path(p->lr),
                       (unsigned long long)lines, why);
}

int tdm_parser_next(tdm_parser *p, const char **name, const char **text, size_t *text_len,
                    tdm_err *err)
{
    int rc;
    switch (p->format) {
    case TDM_BUILD_TREC: rc = next_trec_doc(p, err); break;
    case TDM_BUILD_SMART: rc = next_smart_doc(p, err); break;
    case TDM_BUILD_JSONL: rc = next_json_doc(p, err); break;
    case TDM_BUILD_JSON_VECTOR: rc = next_vector_doc(p, err); break;
    default: rc = next_line_doc(p, err); break;
    }
    if (rc == 0)
        return at_end(p, err);
    if (rc != 1)
        return rc;
    if (tdm_buf_append(&p->text, "", 0))   /* NUL-terminates text[len] */
        return nomem(p, err);
    p->ndocs++;
    *name = p->name.p;
    *text = p->text.p;
    *text_len = p->text.len;
    return 1;
}
