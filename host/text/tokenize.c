/* The tokenizer: ASCII alphanumeric runs, lowercased, stopped, stemmed. */
#include "tokenize.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libstemmer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stoplists.h"
#include "tandem.h"

struct tdm_tokenizer {
    struct sb_stemmer *stem;    /* NULL for "none" */
    char **stop;                /* sorted, lowercased */
    size_t nstop;
    char *stopmem;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_stops(tdm_tokenizer *t, const char *const *words, size_t n, tdm_err *err)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(words[i]) + 1;
    t->stop = malloc((n ? n : 1) * sizeof *t->stop);
    t->stopmem = malloc(bytes ? bytes : 1);
    if (!t->stop || !t->stopmem)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    char *p = t->stopmem;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(words[i]);
        for (size_t k = 0; k <= len; k++)
            p[k] = (char)tolower((unsigned char)words[i][k]);
        t->stop[t->nstop++] = p;
        p += len + 1;
    }
    qsort(t->stop, t->nstop, sizeof *t->stop, cmp_str);
    return TDM_OK;
}

int tdm_tokenizer_open(const char *stemmer, const char *const *stopwords, size_t nstopwords,
                       tdm_tokenizer **out, tdm_err *err)
{
    *out = NULL;
    tdm_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (!stemmer)
        stemmer = "english";
    /* "unknown": an imported index that carried no analyzer (analyzer.h) */
    if (strcasecmp(stemmer, "none") != 0 && strcmp(stemmer, "unknown") != 0) {
        t->stem = sb_stemmer_new(stemmer, "UTF_8");
        if (!t->stem) {
            tdm_tokenizer_free(t);
            return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown stemmer '%s' (none or a "
                               "Snowball language such as english, porter, french)", stemmer);
        }
    }
    int rc = load_stops(t, stopwords, nstopwords, err);
    if (rc) {
        tdm_tokenizer_free(t);
        return rc;
    }
    *out = t;
    return TDM_OK;
}

void tdm_tokenizer_free(tdm_tokenizer *t)
{
    if (!t)
        return;
    if (t->stem)
        sb_stemmer_delete(t->stem);
    free(t->stop);
    free(t->stopmem);
    free(t);
}

/* A copy of a named list in the one-block layout tdm_stopwords_load returns. */
static int copy_named(const char *const *list, size_t n, char ***words, tdm_err *err)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(list[i]) + 1;
    char **w = malloc((n ? n : 1) * sizeof *w + bytes + 1);
    if (!w)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    char *dst = (char *)(w + (n ? n : 1));
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list[i]) + 1;
        w[i] = memcpy(dst, list[i], len);
        dst += len;
    }
    *words = w;
    return TDM_OK;
}

/* The whole of `path`: a regular file or a device (/dev/null is the empty
 * list); a FIFO is refused at once, not waited on (O_NONBLOCK open), as is a
 * directory. */
static unsigned char *slurp(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        unsigned char *b2 = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
        if (!b2) {
            free(buf);
            buf = NULL;
            errno = cap < ((size_t)1 << 30) ? ENOMEM : EFBIG;
            break;
        }
        buf = b2;
        cap *= 2;
    }
    int bad = buf && ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        free(buf);
        errno = e ? e : EIO;
        return NULL;
    }
    *size = n;
    return buf;
}

int tdm_stopwords_load(const char *path, char ***words, size_t *n, tdm_err *err)
{
    const char *const *named = tdm_stoplist_named(path, n);
    if (named)
        return copy_named(named, *n, words, err);
    size_t size = 0;
    unsigned char *text = slurp(path, &size);
    if (!text)
        return tdm_err_set(err, TDM_ERR_IO, "%s: cannot read stopword file: %s (or name a "
                           "list: lucene, snowball, none)", path,
                           errno == EINVAL ? "not a regular file" : strerror(errno));
    /* A binary file (an index given by mistake) is no word list. */
    const unsigned char *z = memchr(text, 0, size);
    if (z) {
        int rc = tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %zu: NUL byte: not a text "
                             "stopword file", path, (size_t)(z - text));
        free(text);
        return rc;
    }
    /* Pointers first, then the words, in one block the caller frees at once. */
    size_t max = size / 2 + 1;
    char **w = malloc(max * sizeof *w + size + 1);
    if (!w) {
        free(text);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    char *dst = (char *)(w + max);
    size_t count = 0, start = 0;
    if (size >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        start = 3;   /* a UTF-8 byte-order mark */
    size_t i = start;
    while (i < size) {
        if (text[i] == '#' && (i == start || text[i - 1] == '\n')) {
            while (i < size && text[i] != '\n')
                i++;
            continue;
        }
        if (isspace(text[i]) || text[i] == 0) {
            i++;
            continue;
        }
        w[count++] = dst;
        while (i < size && !isspace(text[i]) && text[i] != 0)
            *dst++ = (char)tolower(text[i++]);
        *dst++ = '\0';
    }
    free(text);
    *words = w;
    *n = count;
    return TDM_OK;
}

static int is_stop(const tdm_tokenizer *t, const char *term)
{
    return t->nstop && bsearch(&term, t->stop, t->nstop, sizeof *t->stop, cmp_str) != NULL;
}

/* Stops and stems one lowercased run; calls fn unless it is a stopword. */
static int emit(tdm_tokenizer *t, char *term, size_t len, tdm_token_fn fn, void *user)
{
    term[len] = '\0';
    if (is_stop(t, term))
        return 0;
    if (!t->stem)
        return fn(user, term, len);
    const sb_symbol *s = sb_stemmer_stem(t->stem, (const sb_symbol *)term, (int)len);
    int slen = s ? sb_stemmer_length(t->stem) : 0;
    if (slen <= 0)
        return fn(user, term, len);   /* out of memory in the stemmer: keep the word */
    return fn(user, (const char *)s, (size_t)slen);
}

/* Explicit ASCII tests: the C library's versions follow the locale. */
static int ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char ascii_lower(unsigned char c) { return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c); }

int tdm_tokenize(tdm_tokenizer *t, const char *text, size_t len, tdm_token_fn fn, void *user)
{
    char term[TDM_TERM_MAX_BYTES + 1];
    size_t n = 0, run = 0;
    for (size_t i = 0; i <= len; i++) {
        unsigned char c = i < len ? (unsigned char)text[i] : ' ';
        if (ascii_alnum(c)) {
            if (n < TDM_TERM_MAX_BYTES)
                term[n++] = ascii_lower(c);
            run++;
            continue;
        }
        if (run && run <= TDM_TERM_MAX_BYTES) {
            int rc = emit(t, term, n, fn, user);
            if (rc)
                return rc;
        }
        n = run = 0;
    }
    return 0;
}

typedef struct first_ctx {
    char *out;
    size_t len;
} first_ctx;

static int take_first(void *user, const char *term, size_t len)
{
    first_ctx *c = user;
    if (len > 2 * TDM_TERM_MAX_BYTES)
        len = 2 * TDM_TERM_MAX_BYTES;
    memcpy(c->out, term, len);
    c->out[len] = '\0';
    c->len = len;
    return 1;
}

size_t tdm_tokenize_first(tdm_tokenizer *t, const char *text, size_t len, char *out)
{
    first_ctx c = {out, 0};
    out[0] = '\0';
    tdm_tokenize(t, text, len, take_first, &c);
    return c.len;
}
