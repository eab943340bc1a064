/* The shape of a temporary file's name (tempname.h): its random tag and
 * the PID read back from a name. Apart from tempfile.c, which registers
 * names with cleanup.c, because cleanup.c reads names back: both use this
 * file and neither calls the other back. */
#include "tempname.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

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

void tdm_temp_tag(char tag[TDM_TEMP_TAG_LEN + 1])
{
    unsigned char raw[TDM_TEMP_TAG_LEN];
    random_bytes(raw, sizeof raw);
    for (size_t i = 0; i < sizeof raw; i++)
        tag[i] = alphabet[raw[i] % 36]; /* a slight bias: 256 = 7 x 36 + 4 */
    tag[TDM_TEMP_TAG_LEN] = '\0';
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
