/* The analyzer line of CIFF descriptions and PISA side files (analyzer.h). */
#include "analyzer.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "tandem.h"
#include "text/tokenize.h"

static int has_space(const char *w)
{
    for (; *w; w++)
        if (isspace((unsigned char)*w))
            return 1;
    return 0;
}

char *tdm_analyzer_format(const char *stemmer, const char *const *stops, size_t n,
                          tdm_err *err)
{
    int unknown = !strcmp(stemmer, "unknown");
    size_t len = sizeof TDM_ANALYZER_PREFIX + strlen(stemmer) + 64, kept = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(stops[i]) + 1;
    char *s = malloc(len);
    if (!s) {
        tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    s[0] = '\0';
    if (unknown)
        return s;
    for (size_t i = 0; i < n; i++)
        kept += *stops[i] && !has_space(stops[i]);
    char *p = s + sprintf(s, "%s stemmer=%s stopwords=%zu", TDM_ANALYZER_PREFIX, stemmer, kept);
    for (size_t i = 0; i < n; i++)
        if (*stops[i] && !has_space(stops[i]))
            p += sprintf(p, " %s", stops[i]);
    strcpy(p, "\n");
    return s;
}

char *tdm_analyzer_of_index(const tdm_ireader *r, tdm_err *err)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    const char **w = malloc((in->nstopwords + 1) * sizeof *w);
    if (!w) {
        tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < in->nstopwords; i++)
        w[i] = tdm_ireader_stopword(r, i);
    char *s = tdm_analyzer_format(in->stemmer, w, in->nstopwords, err);
    free(w);
    return s;
}

static int bad(const char *where, const char *why, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_FORMAT, "%s: malformed '%s' line: %s", where,
                       TDM_ANALYZER_PREFIX, why);
}

int tdm_analyzer_parse(const char *text, const char *where, tdm_analyzer *a, tdm_err *err)
{
    const char *line = text;
    size_t plen = strlen(TDM_ANALYZER_PREFIX);
    while (line && strncmp(line, TDM_ANALYZER_PREFIX, plen) != 0)
        line = (line = strchr(line, '\n')) ? line + 1 : NULL;
    if (!line)
        return TDM_OK;
    size_t len = strcspn(line, "\n");
    a->mem = malloc(len + 1);
    a->stops = malloc((len / 2 + 1) * sizeof *a->stops);
    if (!a->mem || !a->stops)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    memcpy(a->mem, line + plen, len - plen);
    a->mem[len - plen] = '\0';
    char *save = NULL, *tok = strtok_r(a->mem, " \t\r", &save);
    if (!tok || strncmp(tok, "stemmer=", 8) != 0 || !tok[8] || strlen(tok + 8) >= sizeof a->stemmer)
        return bad(where, "no stemmer=NAME", err);
    snprintf(a->stemmer, sizeof a->stemmer, "%s", tok + 8);
    tok = strtok_r(NULL, " \t\r", &save);
    char *end = NULL;
    errno = 0;
    unsigned long long n = tok && !strncmp(tok, "stopwords=", 10) && tok[10] >= '0' &&
                           tok[10] <= '9' ? strtoull(tok + 10, &end, 10) : 0;
    if (!end || *end || errno)
        return bad(where, "no stopwords=COUNT", err);
    while ((tok = strtok_r(NULL, " \t\r", &save)))
        a->stops[a->nstops++] = tok;
    if (a->nstops != n)
        return bad(where, "the stopword count differs from the words given", err);
    return TDM_OK;
}

int tdm_analyzer_read_file(const char *path, tdm_analyzer *a, tdm_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? TDM_OK
                               : tdm_err_set(err, TDM_ERR_IO, "%s: %s", path, strerror(errno));
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    int rd = ferror(f);
    fclose(f);
    if (rd)
        return tdm_err_set(err, TDM_ERR_IO, "%s: read error", path);
    if (n == sizeof buf - 1 || memchr(buf, 0, n))
        return bad(path, "not one short text line", err);
    buf[n] = '\0';
    return tdm_analyzer_parse(buf, path, a, err); /* empty: an unknown analyzer */
}

int tdm_analyzer_choose(tdm_analyzer *a, const char *stemmer, const char *stopwords,
                        tdm_err *err)
{
    if (stemmer) {
        if (strlen(stemmer) >= sizeof a->stemmer)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "stemmer name '%.40s...' too long",
                               stemmer);
        snprintf(a->stemmer, sizeof a->stemmer, "%s", stemmer);
    }
    if (stopwords) {
        char **w = NULL;
        size_t n = 0;
        int rc = tdm_stopwords_load(stopwords, &w, &n, err);
        if (rc != TDM_OK)
            return rc;
        free(a->stops);
        free(a->mem);
        a->mem = NULL;
        a->stops = w;
        a->nstops = n;
    }
    if (!a->stemmer[0])
        snprintf(a->stemmer, sizeof a->stemmer, "unknown");
    tdm_tokenizer *t = NULL; /* the stemmer must exist, now rather than at a query */
    int rc = tdm_tokenizer_open(a->stemmer, (const char *const *)a->stops, a->nstops, &t, err);
    tdm_tokenizer_free(t);
    return rc;
}

void tdm_analyzer_free(tdm_analyzer *a)
{
    free(a->stops);
    free(a->mem);
    a->stops = NULL;
    a->mem = NULL;
    a->nstops = 0;
}
