/* Query files: format choice, the query list, duplicate ids (queryfile.h). */
#include "queryfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qf_priv.h"
#include "tandem.h"

static const char *const names[] = {"auto", "colon", "tab", "trec", "smart", "jsonl"};

int tdm_qf_format_by_name(const char *name)
{
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

const char *tdm_qf_format_name(int format)
{
    return format >= 0 && format < (int)(sizeof names / sizeof *names) ? names[format] : "?";
}

int tdm_qf_options_by_name(const char *name, tdm_qf_options *o)
{
    int tokens = !strcmp(name, "tokens");
    int f = tokens ? TDM_QF_TAB : tdm_qf_format_by_name(name);
    if (f < 0)
        return -1;
    o->format = f;
    o->tokens = tokens;
    return 0;
}

unsigned tdm_qf_fields_by_names(const char *list)
{
    unsigned f = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n == 5 && !strncmp(p, "title", 5))
            f |= TDM_QF_TITLE;
        else if (n == 4 && !strncmp(p, "desc", 4))
            f |= TDM_QF_DESC;
        else if (n == 4 && !strncmp(p, "narr", 4))
            f |= TDM_QF_NARR;
        else
            return 0;
        p += n + (p[n] == ',');
    }
    return f;
}

/* Whether line p[0 .. n) starts with an id ended by sep: something, with
 * no white space in it (leading blanks aside, as tdm_qf_add trims them). */
static int id_then(const char *p, size_t n, char sep)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t') && p[i] != sep)
        i++;
    size_t start = i;
    while (i < n && p[i] != sep && p[i] != ' ' && p[i] != '\t')
        i++;
    return i < n && p[i] == sep && i > start;
}

/* Colon or tab lines, from the lines in reach: a tab file's lines are
 * id<TAB>text and a colon file's id:text, with no white space in the id (a
 * TAB inside a colon file's text made it a tab file, issue 27 item 6).
 * When every line reads both ways, the separator that comes first on the
 * first line decides. */
static int guess_lines(const char *p, size_t n)
{
    int tab = 1, colon = 1, lines = 0, first = TDM_QF_COLON;
    for (size_t i = 0; i < n && lines < 256;) {
        const char *nl = memchr(p + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (p + i)) : n - i;
        if (!nl && lines > 0)
            break; /* a line cut by the end of what is in reach */
        const char *l = p + i;
        size_t k = 0;
        while (k < len && strchr(" \t\r", l[k]))
            k++;
        if (k < len) {
            if (lines++ == 0) {
                size_t t = 0;
                while (t < len && l[t] != '\t' && l[t] != ':')
                    t++;
                first = t < len && l[t] == '\t' ? TDM_QF_TAB : TDM_QF_COLON;
            }
            tab &= id_then(l, len, '\t');
            colon &= id_then(l, len, ':');
        }
        i += len + 1;
    }
    if (tab && colon)
        return first;
    return tab ? TDM_QF_TAB : TDM_QF_COLON;
}

static int guess(tdm_qf_ctx *c)
{
    const char *p;
    size_t n = tdm_lr_peek(c->lr, &p, c->err), i = 0;
    while (i < n && strchr(" \t\r\n", p[i]) && p[i])
        i++;
    if (i == n)
        return TDM_QF_COLON; /* empty: no queries whatever the format */
    if (p[i] == '<')
        return TDM_QF_TREC;
    if (p[i] == '{')
        return TDM_QF_JSONL;
    if (n - i >= 2 && p[i] == '.' && p[i + 1] == 'I')
        return TDM_QF_SMART;
    return guess_lines(p, n);
}

static int id_cmp(const void *a, const void *b)
{
    const tdm_qf_query *x = *(tdm_qf_query *const *)a, *y = *(tdm_qf_query *const *)b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int check_duplicates(tdm_qf_ctx *c)
{
    tdm_qfile *f = c->f;
    tdm_qf_query **s = malloc((f->n ? f->n : 1) * sizeof *s);
    if (!s)
        return tdm_err_set(c->err, TDM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < f->n; i++)
        s[i] = &f->q[i];
    qsort(s, f->n, sizeof *s, id_cmp);
    int rc = TDM_OK;
    for (size_t i = 1; i < f->n && rc == TDM_OK; i++)
        if (!strcmp(s[i - 1]->id, s[i]->id))
            rc = tdm_qf_fail(c, s[i]->line, "query id '%s' again (first at line %llu)",
                             s[i]->id, (unsigned long long)s[i - 1]->line);
    free(s);
    return rc;
}

int tdm_qfile_read(const char *path, const tdm_qf_options *opts, tdm_qfile **out,
                   tdm_err *err)
{
    tdm_qf_options o = opts ? *opts : (tdm_qf_options){0};
    *out = NULL;
    if (o.format < TDM_QF_AUTO || o.format > TDM_QF_JSONL)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "query file format %d", o.format);
    if (o.trec_fields == 0)
        o.trec_fields = TDM_QF_TITLE;
    if (o.trec_fields & ~7u)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "TREC fields %#x", o.trec_fields);
    tdm_qfile *f = calloc(1, sizeof *f);
    if (!f)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    tdm_qf_ctx c = {f, path, NULL, &o, err};
    int rc = tdm_lr_open(path, &c.lr, err);
    if (rc == TDM_OK) {
        f->format = o.format ? o.format : guess(&c);
        rc = f->format == TDM_QF_TREC    ? tdm_qf_read_trec(&c)
           : f->format == TDM_QF_SMART   ? tdm_qf_read_smart(&c)
           : f->format == TDM_QF_JSONL   ? tdm_qf_read_jsonl(&c)
                                         : tdm_qf_read_lines(&c);
        tdm_lr_close(c.lr);
        if (rc == TDM_ERR_FORMAT && !o.format) /* say what the guess was */
            tdm_err_append(err, " (read as %s, detected from its first lines; --format "
                           "chooses another)", f->format == TDM_QF_TAB ? "a tab file, id<TAB>text"
                           : f->format == TDM_QF_COLON ? "a colon file, id:text"
                           : tdm_qf_format_name(f->format));
    }
    if (rc == TDM_OK)
        rc = check_duplicates(&c);
    if (rc != TDM_OK) {
        tdm_qfile_free(f);
        return rc;
    }
    *out = f;
    return TDM_OK;
}

void tdm_qfile_free(tdm_qfile *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->ntermblocks; i++)
        free(f->termblocks[i]);
    free(f->termblocks);
    free(f->q);
    tdm_arena_free(&f->strs);
    free(f);
}
