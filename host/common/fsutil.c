#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tempfile.h"
#include "tandem.h"

unsigned char *tdm_read_file(const char *path, size_t *size)
{
    /* O_NONBLOCK: a FIFO must not block open() before the regular-file check. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    size_t n = (size_t)st.st_size, got = 0;
    unsigned char *buf = malloc(n ? n : 1);
    while (buf && got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            buf = NULL;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (buf)
        *size = n;
    return buf;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int tdm_write_file_atomic(const char *path, const void *const *parts, const size_t *sizes,
                          size_t n)
{
    char *tmp;
    int fd = tdm_temp_create(path, &tmp);
    int rc = fd < 0 ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = write_all(fd, parts[i], sizes[i]);
    if (rc == 0)
        rc = fsync(fd);
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (rc == 0)
        rc = rename(tmp, path);
    int e = errno;
    if (rc == 0)
        tdm_temp_keep(tmp);
    else
        tdm_temp_discard(tmp);
    errno = e;
    return rc;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO"
         : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int tdm_output_check(const char *out, const char *const *inputs, size_t ninputs,
                     tdm_err *err)
{
    if (!out || !*out)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "empty output path");
    struct stat so;
    if (stat(out, &so) != 0)
        return TDM_OK; /* absent (or unreachable: the writer reports that) */
    if (!S_ISREG(so.st_mode))
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "%s: output exists and is %s: refusing to replace it", out,
                           kind_of(so.st_mode));
    for (size_t i = 0; i < ninputs; i++) {
        struct stat si;
        int std_in = inputs[i] && !strcmp(inputs[i], "-"); /* standard input */
        if (!inputs[i] || (std_in ? fstat(STDIN_FILENO, &si) : stat(inputs[i], &si)) != 0)
            continue;
        if (si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "%s: output is the same file as input %s: refusing to "
                               "overwrite an input", out,
                               std_in ? "- (standard input)" : inputs[i]);
    }
    return TDM_OK;
}

int tdm_outfile_open(tdm_outfile *o, const char *path, tdm_err *err)
{
    *o = (tdm_outfile){0};
    if (!(o->path = strdup(path)))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int fd = tdm_temp_create(path, &o->tmp);
    if (fd >= 0 && (o->f = fdopen(fd, "wb")))
        return TDM_OK;
    int e = errno;
    if (fd >= 0)
        close(fd); /* created: tdm_outfile_abort removes it */
    tdm_outfile_abort(o);
    if (e == ENOMEM)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    return tdm_err_set(err, TDM_ERR_IO, "%s: cannot create a file next to it: %s", path,
                       strerror(e));
}

int tdm_outfile_commit(tdm_outfile *o, tdm_err *err)
{
    int rc = TDM_OK;
    const char *what = "write";
    if (fflush(o->f) != 0 || ferror(o->f))
        rc = TDM_ERR_IO;
    else if (fsync(fileno(o->f)) != 0)
        rc = TDM_ERR_IO, what = "fsync";
    int e = errno;
    if (fclose(o->f) != 0 && rc == TDM_OK)
        rc = TDM_ERR_IO, what = "close", e = errno;
    o->f = NULL;
    if (rc == TDM_OK && rename(o->tmp, o->path) != 0)
        rc = TDM_ERR_IO, what = "rename", e = errno;
    if (rc != TDM_OK)
        tdm_err_set(err, rc, "%s: %s: %s", o->path, what, strerror(e ? e : EIO));
    else {
        tdm_temp_keep(o->tmp); /* renamed: nothing to remove */
        o->tmp = NULL;
    }
    tdm_outfile_abort(o);
    return rc;
}

void tdm_outfile_abort(tdm_outfile *o)
{
    if (o->f)
        fclose(o->f);
    tdm_temp_discard(o->tmp);
    free(o->path);
    *o = (tdm_outfile){0};
}

int tdm_mkdirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}
