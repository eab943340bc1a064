/* Temporary files: unpredictable names, exclusive creation (tempfile.h). */
#include "tempfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#include "cleanup.h"
#include "rng.h"

static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";

/* Random bytes from the system (getrandom; arc4random_buf where that is
 * the BSDs' and macOS's call). Should the source fail, a mix of the clock,
 * a counter and the PID: less secret, still unique, and the exclusive open
 * keeps a guessed name harmless (it only costs another try). */
static void random_bytes(unsigned char *p, size_t n)
{
#if defined(__linux__)
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == n)
        return;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
    defined(__NetBSD__)
    arc4random_buf(p, n);
    return;
#endif
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tdm_rng r;
    tdm_rng_seed(&r, ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
                     ((uint64_t)getpid() << 40) ^ atomic_fetch_add(&counter, 1) * 0x9E37u);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)tdm_rng_next(&r);
}

char *tdm_temp_name(const char *base)
{
    unsigned char raw[TDM_TEMP_TAG_LEN];
    char tag[TDM_TEMP_TAG_LEN + 1];
    random_bytes(raw, sizeof raw);
    for (size_t i = 0; i < sizeof raw; i++)
        tag[i] = alphabet[raw[i] % 36]; /* a slight bias: 256 = 7 x 36 + 4 */
    tag[TDM_TEMP_TAG_LEN] = '\0';
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

/* Digits from *p, at least one, no leading zero; their value or 0. */
static long digits(const char **p)
{
    const char *s = *p;
    if (*s < '1' || *s > '9')
        return 0;
    long v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v > (long)(INT32_MAX / 10))
            return 0; /* far beyond any PID */
        v = v * 10 + (*s++ - '0');
    }
    *p = s;
    return v;
}

long tdm_temp_pid(const char *tail)
{
    const char *p = tail;
    if (strncmp(p, "run", 3) == 0) { /* runN. */
        p += 3;
        if (*p == '0' && p[1] == '.')
            p++;
        else if (!digits(&p))
            return 0;
        if (*p++ != '.')
            return 0;
    }
    if (strncmp(p, "tmp.", 4) != 0)
        return 0;
    p += 4;
    long pid = digits(&p);
    if (!pid || *p++ != '.')
        return 0;
    for (int i = 0; i < TDM_TEMP_TAG_LEN; i++, p++)
        if (!*p || !strchr(alphabet, *p))
            return 0;
    return *p ? 0 : pid;
}
