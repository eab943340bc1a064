/* Multi-line query records: TREC topics and SMART .I/.W (queryfile.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qf_priv.h"
#include "tandem.h"

static const char *skip_ws(const char *s, const char *e)
{
    while (s < e && isspace((unsigned char)*s))
        s++;
    return s;
}

static int all_ws(const char *s, size_t n)
{
    return skip_ws(s, s + n) == s + n;
}

/* Appends s[0..n) to b, a space between pieces; NOMEM on failure. */
static int append(tdm_buf *b, const char *s, size_t n)
{
    const char *e = s + n;
    s = skip_ws(s, e);
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    if (s == e)
        return TDM_OK;
    if (b->len && tdm_buf_append(b, " ", 1))
        return TDM_ERR_NOMEM;
    return tdm_buf_append(b, s, (size_t)(e - s));
}

/* ---- TREC topics */

enum { F_NONE, F_NUM, F_TITLE, F_DESC, F_NARR, F_OTHER, F_N };

typedef struct topic {
    int in, field;
    uint64_t start;
    tdm_buf f[F_N];
    int seen[F_N];
} topic;

/* A tag at s (`<name>` or `</name>`, letters only): its length, else 0. */
static size_t tag_at(const char *s, const char *e, int *closing, char *name, size_t cap)
{
    const char *p = s + 1;
    *closing = p < e && *p == '/';
    p += *closing;
    size_t n = 0;
    while (p + n < e && isalpha((unsigned char)p[n]))
        n++;
    if (n == 0 || n >= cap || p + n >= e || p[n] != '>')
        return 0;
    for (size_t i = 0; i < n; i++)
        name[i] = (char)tolower((unsigned char)p[i]);
    name[n] = 0;
    return (size_t)(p + n + 1 - s);
}

static int field_of(const char *name)
{
    static const char *const n[] = {"", "num", "title", "desc", "narr"};
    for (int i = 1; i < 5; i++)
        if (!strcmp(name, n[i]))
            return i;
    return F_OTHER;
}

static const char *strip_prefix(const char *s, int field)
{
    static const char *const pre[] = {"", "Number:", "Topic:", "Description:", "Narrative:"};
    if (field >= F_NUM && field <= F_NARR && !strncasecmp(s, pre[field], strlen(pre[field])))
        s += strlen(pre[field]);
    return s;
}

static int finish_topic(tdm_qf_ctx *c, topic *t, uint64_t ln)
{
    static const char *const tag[] = {"", "num", "title", "desc", "narr"};
    if (!t->seen[F_NUM] || !t->f[F_NUM].len)
        return tdm_qf_fail(c, ln, "topic from line %llu has no <num>",
                           (unsigned long long)t->start);
    const char *id = skip_ws(strip_prefix(t->f[F_NUM].p, F_NUM), t->f[F_NUM].p + t->f[F_NUM].len);
    tdm_buf text = {0};
    int rc = TDM_OK;
    for (int f = F_TITLE; f <= F_NARR && rc == TDM_OK; f++) {
        if (!(c->o->trec_fields & (1u << (f - F_TITLE))))
            continue;
        if (!t->seen[f])
            rc = tdm_qf_fail(c, ln, "topic %s (from line %llu) has no <%s>", id,
                             (unsigned long long)t->start, tag[f]);
        else if (t->f[f].len && append(&text, strip_prefix(t->f[f].p, f), strlen(strip_prefix(t->f[f].p, f))))
            rc = tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    }
    if (rc == TDM_OK)
        rc = tdm_qf_add(c, id, strlen(id), text.p ? text.p : "", text.len, NULL, 0, t->start);
    free(text.p);
    for (int f = 0; f < F_N; f++) {
        t->f[f].len = 0;
        t->seen[f] = 0;
    }
    t->in = 0;
    return rc;
}

static int topic_tag(tdm_qf_ctx *c, topic *t, const char *name, int closing, uint64_t ln)
{
    if (!strcmp(name, "top")) {
        if (closing && !t->in)
            return tdm_qf_fail(c, ln, "</top> without <top>");
        if (!closing && t->in)
            return tdm_qf_fail(c, ln, "<top> inside the topic from line %llu",
                               (unsigned long long)t->start);
        if (closing)
            return finish_topic(c, t, ln);
        t->in = 1;
        t->start = ln;
        t->field = F_NONE;
        return TDM_OK;
    }
    if (!t->in)
        return tdm_qf_fail(c, ln, "<%s%s> outside <top>", closing ? "/" : "", name);
    int f = field_of(name);
    if (closing) {
        t->field = F_NONE;
        return TDM_OK;
    }
    if (f != F_OTHER && t->seen[f])
        return tdm_qf_fail(c, ln, "<%s> twice in the topic from line %llu", name,
                           (unsigned long long)t->start);
    t->seen[f] = 1;
    t->field = f;
    return TDM_OK;
}

static int topic_text(tdm_qf_ctx *c, topic *t, const char *s, size_t n, uint64_t ln)
{
    if (all_ws(s, n))
        return TDM_OK;
    if (!t->in)
        return tdm_qf_fail(c, ln, "text outside <top> ... </top>");
    if (t->field == F_NONE || t->field == F_OTHER)
        return TDM_OK;
    return append(&t->f[t->field], s, n) ? tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory")
                                         : TDM_OK;
}

static int topic_line(tdm_qf_ctx *c, topic *t, const char *line, size_t len, uint64_t ln)
{
    const char *p = line, *e = line + len, *text = line;
    while (p < e) {
        char name[16];
        int closing;
        size_t n = *p == '<' ? tag_at(p, e, &closing, name, sizeof name) : 0;
        if (!n) {
            p++;
            continue;
        }
        int rc = topic_text(c, t, text, (size_t)(p - text), ln);
        if (rc || (rc = topic_tag(c, t, name, closing, ln)))
            return rc;
        p += n;
        text = p;
    }
    return topic_text(c, t, text, (size_t)(e - text), ln);
}

int tdm_qf_read_trec(tdm_qf_ctx *c)
{
    topic t = {0};
    char *line;
    size_t len;
    int rc;
    while ((rc = tdm_lr_next(c->lr, &line, &len, c->err)) == 1)
        if ((rc = topic_line(c, &t, line, len, tdm_lr_lineno(c->lr))))
            break;
    if (rc == TDM_OK && t.in)
        rc = tdm_qf_fail(c, tdm_lr_lineno(c->lr), "end of file inside the topic from line %llu",
                         (unsigned long long)t.start);
    for (int f = 0; f < F_N; f++)
        free(t.f[f].p);
    return rc;
}

/* ---- SMART */

typedef struct record {
    int in, fields, seen_tw;
    char field;              /* 'T', 'W', or 0 inside an ignored field */
    uint64_t start, count;
    tdm_buf id, t, w;
} record;

/* The record's query: .T then .W. A record with no field at all (CACM's
 * trailing `.I 0`) is an empty query; one with fields but neither .T nor .W
 * is an error. */
static int finish_record(tdm_qf_ctx *c, record *r)
{
    if (!r->in)
        return TDM_OK;
    r->in = 0;
    if (r->fields && !r->seen_tw)
        return tdm_qf_fail(c, r->start, "query %s has no .W (nor .T)", r->id.p);
    tdm_buf text = {0};
    int rc = TDM_OK;
    if ((r->t.len && append(&text, r->t.p, r->t.len)) ||
        (r->w.len && append(&text, r->w.p, r->w.len)))
        rc = tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    char pos[32];
    snprintf(pos, sizeof pos, "%llu", (unsigned long long)r->count);
    const char *id = c->o->number_by_position ? pos : r->id.p;
    if (rc == TDM_OK)
        rc = tdm_qf_add(c, id, strlen(id), text.p ? text.p : "", text.len, NULL, 0, r->start);
    free(text.p);
    return rc;
}

static int start_record(tdm_qf_ctx *c, record *r, const char *id, size_t n, uint64_t ln)
{
    int rc = finish_record(c, r);
    if (rc)
        return rc;
    if (n == 0)
        return tdm_qf_fail(c, ln, ".I without an id");
    r->in = 1;
    r->fields = r->seen_tw = 0;
    r->field = 0;
    r->start = ln;
    r->count++;
    r->id.len = r->t.len = r->w.len = 0;
    return tdm_buf_append(&r->id, id, n) ? tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory")
                                         : TDM_OK;
}

static int smart_marker(tdm_qf_ctx *c, record *r, const char *line, size_t len, uint64_t ln)
{
    char m = line[1];
    const char *e = line + len, *rest = skip_ws(line + 2, e);
    while (e > rest && isspace((unsigned char)e[-1]))
        e--;
    if (m == 'I')
        return start_record(c, r, rest, (size_t)(e - rest), ln);
    if (!r->in)
        return tdm_qf_fail(c, ln, ".%c before the first .I", m);
    if (!strchr("TWABNXKC", m))
        return tdm_qf_fail(c, ln, "unknown field .%c (SMART has .I .T .W .A .B .N .X .K .C)", m);
    r->fields++;
    r->field = m == 'T' || m == 'W' ? m : 0;
    r->seen_tw |= r->field != 0;
    tdm_buf *b = m == 'T' ? &r->t : m == 'W' ? &r->w : NULL;
    if (b && rest < e && append(b, rest, (size_t)(e - rest)))
        return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    return TDM_OK;
}

static int is_marker(const char *line, size_t len)
{
    return len >= 2 && line[0] == '.' && isupper((unsigned char)line[1]) &&
           (len == 2 || isspace((unsigned char)line[2]));
}

int tdm_qf_read_smart(tdm_qf_ctx *c)
{
    record r = {0};
    char *line;
    size_t len;
    int rc;
    while ((rc = tdm_lr_next(c->lr, &line, &len, c->err)) == 1) {
        uint64_t ln = tdm_lr_lineno(c->lr);
        if ((rc = tdm_qf_bare_cr(c, line, len, ln)))
            break;
        if (is_marker(line, len)) {
            rc = smart_marker(c, &r, line, len, ln);
        } else if (all_ws(line, len)) {
            continue;
        } else if (!r.in) {
            rc = tdm_qf_fail(c, ln, "text before the first .I");
        } else if (!r.fields) {
            rc = tdm_qf_fail(c, ln, "text before the first field of query %s", r.id.p);
        } else if (r.field) {
            rc = append(r.field == 'T' ? &r.t : &r.w, line, len)
                     ? tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory") : TDM_OK;
        }
        if (rc)
            break;
    }
    if (rc == TDM_OK)
        rc = finish_record(c, &r);
    free(r.id.p);
    free(r.t.p);
    free(r.w.p);
    return rc;
}
