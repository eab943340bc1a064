/* Line reading over zlib's inflate: gzip (any number of members, as `cat
 * a.gz b.gz` makes) or plain text, from a file or stdin. gzread is not used
 * because it drops whatever follows a member that is not another member
 * without a word ("trailing garbage"), so a damaged second member would be
 * a silent partial input; here it is an error naming the byte offset, as
 * are a stream cut short and corrupt data. */
#include "linereader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tandem.h"

#define CHUNK (256u << 10)

enum { MODE_UNKNOWN, MODE_PLAIN, MODE_GZIP };

struct tdm_linereader {
    int fd;
    int mode;
    z_stream z;
    int zinit, member_done; /* member_done: the last member ended */
    unsigned char *in;      /* raw input: in[ipos, ilen) unread */
    size_t ilen, ipos;
    int in_eof;
    uint64_t raw_read;      /* raw bytes read from fd */
    char *path;
    unsigned char *buf;     /* decoded text: buf[bpos, blen) unread */
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
    if (lr)
        lr->fd = -1;
    if (!lr || !(lr->buf = malloc(CHUNK)) || !(lr->in = malloc(CHUNK)) ||
        !(lr->path = strdup(path))) {
        tdm_lr_close(lr);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    lr->fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (lr->fd < 0) {
        int e = errno;
        tdm_lr_close(lr);
        return tdm_err_set(err, e == ENOENT ? TDM_ERR_NOT_FOUND : TDM_ERR_IO, "%s: %s", path,
                           strerror(e));
    }
    *out = lr;
    return TDM_OK;
}

void tdm_lr_close(tdm_linereader *lr)
{
    if (!lr)
        return;
    if (lr->zinit)
        inflateEnd(&lr->z);
    if (lr->fd >= 0)
        close(lr->fd);
    free(lr->in);
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

/* Reads raw bytes until at least `want` are unread or the input ends;
 * < 0 on a read error. */
static int raw_fill(tdm_linereader *lr, size_t want, tdm_err *err)
{
    if (lr->ipos && lr->ipos == lr->ilen)
        lr->ipos = lr->ilen = 0;
    while (!lr->in_eof && lr->ilen - lr->ipos < want) {
        if (lr->ilen == CHUNK) {
            memmove(lr->in, lr->in + lr->ipos, lr->ilen - lr->ipos);
            lr->ilen -= lr->ipos;
            lr->ipos = 0;
        }
        ssize_t n = read(lr->fd, lr->in + lr->ilen, CHUNK - lr->ilen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return tdm_err_set(err, TDM_ERR_IO, "%s: %s", lr->path, strerror(errno));
        if (n == 0)
            lr->in_eof = 1;
        lr->ilen += (size_t)n;
        lr->raw_read += (uint64_t)n;
    }
    return TDM_OK;
}

static int is_gzip_magic(const tdm_linereader *lr)
{
    return lr->ilen - lr->ipos >= 2 && lr->in[lr->ipos] == 0x1f && lr->in[lr->ipos + 1] == 0x8b;
}

/* The input's kind, from its first two bytes. */
static int detect(tdm_linereader *lr, tdm_err *err)
{
    int rc = raw_fill(lr, 2, err);
    if (rc)
        return rc;
    lr->mode = is_gzip_magic(lr) ? MODE_GZIP : MODE_PLAIN;
    if (lr->mode == MODE_GZIP) {
        if (inflateInit2(&lr->z, 15 + 16) != Z_OK)
            return tdm_err_set(err, TDM_ERR_NOMEM, "%s: out of memory for zlib", lr->path);
        lr->zinit = 1;
    }
    return TDM_OK;
}

/* After a member's end: the next member, the end of the input, or an
 * error for anything else. 1: a member follows, 0: the end. */
static int next_member(tdm_linereader *lr, tdm_err *err)
{
    int rc = raw_fill(lr, 2, err);
    if (rc)
        return rc;
    if (lr->ipos == lr->ilen)
        return 0;
    uint64_t at = lr->raw_read - (lr->ilen - lr->ipos);
    if (!is_gzip_magic(lr)) {
        char msg[160];
        snprintf(msg, sizeof msg, "data after the gzip member that ends at byte %llu is not "
                 "another gzip member (damaged or appended data)", (unsigned long long)at);
        return read_error(lr, msg, err);
    }
    inflateReset(&lr->z);
    lr->member_done = 0;
    return 1;
}

/* Decodes into buf[blen, CHUNK); the bytes added, 0 at the end, < 0 on error. */
static int inflate_some(tdm_linereader *lr, tdm_err *err)
{
    size_t before = lr->blen;
    while (lr->blen == before) {
        if (lr->member_done) {
            int rc = next_member(lr, err);
            if (rc <= 0)
                return rc;
        }
        int rc = raw_fill(lr, 1, err);
        if (rc)
            return rc;
        if (lr->ipos == lr->ilen)
            return read_error(lr, "gzip input truncated (unexpected end of file)", err);
        lr->z.next_in = lr->in + lr->ipos;
        lr->z.avail_in = (uInt)(lr->ilen - lr->ipos);
        lr->z.next_out = lr->buf + lr->blen;
        lr->z.avail_out = (uInt)(CHUNK - lr->blen);
        int zr = inflate(&lr->z, Z_NO_FLUSH);
        lr->ipos = lr->ilen - lr->z.avail_in;
        lr->blen = CHUNK - lr->z.avail_out;
        if (zr == Z_STREAM_END)
            lr->member_done = 1;
        else if (zr != Z_OK && zr != Z_BUF_ERROR)
            return read_error(lr, lr->z.msg ? lr->z.msg : "gzip data corrupt", err);
    }
    return (int)(lr->blen - before);
}

/* Plain input: raw bytes straight into buf. */
static int copy_some(tdm_linereader *lr, tdm_err *err)
{
    int rc = raw_fill(lr, 1, err);
    if (rc)
        return rc;
    size_t n = lr->ilen - lr->ipos, room = CHUNK - lr->blen;
    if (n > room)
        n = room;
    memcpy(lr->buf + lr->blen, lr->in + lr->ipos, n);
    lr->ipos += n;
    lr->blen += n;
    return (int)n;
}

/* Refills the buffer, keeping unread bytes; 0 at the end, < 0 on error. */
static int fill(tdm_linereader *lr, tdm_err *err)
{
    if (lr->eof)
        return 0;
    memmove(lr->buf, lr->buf + lr->bpos, lr->blen - lr->bpos);
    lr->blen -= lr->bpos;
    lr->bpos = 0;
    int n = lr->mode == MODE_UNKNOWN ? detect(lr, err) : 0;
    if (n < 0)
        return n;
    n = lr->mode == MODE_GZIP ? inflate_some(lr, err) : copy_some(lr, err);
    if (n < 0)
        return n;
    if (n == 0)
        lr->eof = 1;
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
uint64_t tdm_lr_bytes(const tdm_linereader *lr) { return lr->raw_read - (lr->ilen - lr->ipos); }
const char *tdm_lr_path(const tdm_linereader *lr) { return lr->path; }
