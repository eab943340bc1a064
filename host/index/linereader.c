/* Line reading over zlib: gzread handles gzip and passes plain files through.
 * zlib reports a gzip stream cut short only through gzerror (Z_BUF_ERROR,
 * "unexpected end of file") while gzread returns what it could decode, so
 * every read checks it: a truncated input is an error, never a short one. */
#include "linereader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tandem.h"

#define CHUNK (256u << 10)

struct tdm_linereader {
    gzFile gz;
    char *path;
    unsigned char *buf;
    size_t blen, bpos;
    int eof, started;
    char *line;
    size_t lcap;
    uint64_t lineno;
};

int tdm_lr_open(const char *path, tdm_linereader **out, tdm_err *err)
{
    *out = NULL;
    tdm_linereader *lr = calloc(1, sizeof *lr);
    if (!lr || !(lr->buf = malloc(CHUNK)) || !(lr->path = strdup(path))) {
        tdm_lr_close(lr);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !(lr->gz = gzdopen(fd, "rb"))) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        tdm_lr_close(lr);
        return tdm_err_set(err, e == ENOENT ? TDM_ERR_NOT_FOUND : TDM_ERR_IO, "%s: %s", path,
                           strerror(e));
    }
    gzbuffer(lr->gz, CHUNK);
    *out = lr;
    return TDM_OK;
}

void tdm_lr_close(tdm_linereader *lr)
{
    if (!lr)
        return;
    if (lr->gz)
        gzclose(lr->gz);
    free(lr->buf);
    free(lr->line);
    free(lr->path);
    free(lr);
}

static int read_error(tdm_linereader *lr, const char *msg, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu: %s", lr->path,
                       (unsigned long long)lr->lineno + 1, msg);
}

/* Refills the buffer, keeping unread bytes; 0 at the end, < 0 on error. */
static int fill(tdm_linereader *lr, tdm_err *err)
{
    if (lr->eof)
        return 0;
    memmove(lr->buf, lr->buf + lr->bpos, lr->blen - lr->bpos);
    lr->blen -= lr->bpos;
    lr->bpos = 0;
    int n = gzread(lr->gz, lr->buf + lr->blen, (unsigned)(CHUNK - lr->blen));
    int e = Z_OK;
    const char *msg = gzerror(lr->gz, &e);
    if (n < 0 || e == Z_BUF_ERROR)
        return read_error(lr, e == Z_BUF_ERROR ? "gzip input truncated (unexpected end of "
                                                 "file)" : msg, err);
    if (n == 0)
        lr->eof = 1;
    lr->blen += (size_t)n;
    /* A UTF-8 byte-order mark is not text: skip it before anyone looks. */
    if (!lr->started && (lr->blen >= 3 || lr->eof)) {
        lr->started = 1;
        if (lr->blen >= 3 && memcmp(lr->buf, "\xef\xbb\xbf", 3) == 0)
            lr->bpos = 3;
    }
    return n;
}

size_t tdm_lr_peek(tdm_linereader *lr, const char **p, tdm_err *err)
{
    while (!lr->eof && lr->blen - lr->bpos < 4096)
        if (fill(lr, err) < 0)
            return 0;
    *p = (const char *)lr->buf + lr->bpos;
    return lr->blen - lr->bpos;
}

static int grow(tdm_linereader *lr, size_t need, tdm_err *err)
{
    if (need <= lr->lcap)
        return TDM_OK;
    if (need > TDM_LINE_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT, "%s: line %llu: longer than %zu bytes",
                           lr->path, (unsigned long long)lr->lineno + 1, TDM_LINE_MAX);
    size_t cap = lr->lcap ? lr->lcap : 4096;
    while (cap < need)
        cap *= 2;
    char *l = realloc(lr->line, cap);
    if (!l)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory reading %s", lr->path);
    lr->line = l;
    lr->lcap = cap;
    return TDM_OK;
}

int tdm_lr_next(tdm_linereader *lr, char **line, size_t *len, tdm_err *err)
{
    size_t n = 0;
    for (;;) {
        if (lr->bpos == lr->blen) {
            int rc = fill(lr, err);
            if (rc < 0)
                return rc;
            if (rc == 0 && n == 0)
                return 0;
            if (rc == 0)
                break;
        }
        unsigned char *s = lr->buf + lr->bpos;
        unsigned char *nl = memchr(s, '\n', lr->blen - lr->bpos);
        size_t take = nl ? (size_t)(nl - s) : lr->blen - lr->bpos;
        int rc = grow(lr, n + take + 1, err);
        if (rc)
            return rc;
        memcpy(lr->line + n, s, take);
        n += take;
        lr->bpos += take + (nl ? 1 : 0);
        if (nl)
            break;
    }
    if (n && lr->line[n - 1] == '\r')
        n--;
    /* Text has no NUL bytes: one means a binary file (an ELF, UTF-16, ...). */
    const char *z = memchr(lr->line, 0, n);
    if (z) {
        lr->lineno++;
        return tdm_err_set(err, TDM_ERR_FORMAT, "%s: line %llu, column %zu: NUL byte: not a "
                           "text file", lr->path, (unsigned long long)lr->lineno,
                           (size_t)(z - lr->line) + 1);
    }
    lr->line[n] = '\0';
    lr->lineno++;
    *line = lr->line;
    *len = n;
    return 1;
}

uint64_t tdm_lr_lineno(const tdm_linereader *lr) { return lr->lineno; }
uint64_t tdm_lr_bytes(const tdm_linereader *lr)
{
    z_off_t o = gzoffset(lr->gz);
    return o > 0 ? (uint64_t)o : 0;
}
const char *tdm_lr_path(const tdm_linereader *lr) { return lr->path; }
