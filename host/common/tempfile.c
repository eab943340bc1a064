/* Temporary files: unpredictable names, exclusive creation (tempfile.h). */
#include "tempfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"

char *tdm_temp_name(const char *base)
{
    char tag[TDM_TEMP_TAG_LEN + 1];
    tdm_temp_tag(tag);
    size_t len = strlen(base) + TDM_TEMP_TAG_LEN + 32;
    char *name = malloc(len);
    if (!name)
        return NULL;
    snprintf(name, len, "%s.tmp.%ld.%s", base, (long)getpid(), tag);
    /* Registered before it exists, so that an interrupted CLI removes it. */
    if (tdm_cleanup_add(name) != 0) {
        free(name);
        return NULL;
    }
    return name;
}

int tdm_temp_open(const char *name)
{
    return open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

int tdm_temp_create(const char *path, char **tmp)
{
    *tmp = NULL;
    tdm_cleanup_stale(path, NULL, 0);
    /* A taken name is someone else's file or link: left alone, and another
     * tag tried (a few times: with random tags one clash is already a
     * planted name, not chance). */
    for (int tries = 0; tries < 8; tries++) {
        char *name = tdm_temp_name(path);
        if (!name) {
            errno = ENOMEM;
            return -1;
        }
        int fd = tdm_temp_open(name);
        if (fd >= 0) {
            *tmp = name;
            return fd;
        }
        int e = errno;
        tdm_cleanup_remove(name); /* never unlinked: not ours */
        free(name);
        errno = e;
        if (e != EEXIST && e != ELOOP)
            return -1;
    }
    return -1;
}

void tdm_temp_keep(char *tmp)
{
    if (!tmp)
        return;
    tdm_cleanup_remove(tmp);
    free(tmp);
}

void tdm_temp_discard(char *tmp)
{
    if (!tmp)
        return;
    unlink(tmp);
    tdm_cleanup_remove(tmp);
    free(tmp);
}
