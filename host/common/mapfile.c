#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tandem.h"

int tdm_map_file(const char *path, void **map, size_t *size, tdm_err *err)
{
    *map = NULL;
    *size = 0;
    /* O_NONBLOCK: a FIFO must not block open() before the regular-file check. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return tdm_err_set(err, errno == ENOENT ? TDM_ERR_NOT_FOUND : TDM_ERR_IO, "%s: %s",
                           path, strerror(errno));
    struct stat st = {0};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tdm_err_set(err, TDM_ERR_IO, "%s: not a regular file%s", path,
                           S_ISDIR(st.st_mode) ? " (a directory)"
                           : S_ISFIFO(st.st_mode) ? " (a FIFO)" : "");
    }
    if (st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return tdm_err_set(err, TDM_ERR_IO, "%s: mmap: %s", path, strerror(e));
        }
        *map = m;
        *size = (size_t)st.st_size;
    }
    close(fd);
    return TDM_OK;
}

void tdm_unmap_file(void *map, size_t size)
{
    if (map)
        munmap(map, size);
}
