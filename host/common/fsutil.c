#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

unsigned char *tdm_read_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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
    size_t len = strlen(path) + 48;
    char *tmp = malloc(len);
    if (!tmp)
        return -1;
    /* pid + counter: unique across processes and across threads of one. */
    static atomic_uint counter;
    snprintf(tmp, len, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = write_all(fd, parts[i], sizes[i]);
    if (rc == 0)
        rc = fsync(fd);
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (rc == 0)
        rc = rename(tmp, path);
    if (rc != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
    }
    free(tmp);
    return rc;
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
