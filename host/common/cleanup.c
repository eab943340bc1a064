/* The temporary-file registry and its signal handler (cleanup.h). */
#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "tempname.h"

/* Slots in chunks that are never freed, so that the handler can walk them at
 * any moment; a slot holds a path or NULL. */
#define SLOTS 64

typedef struct chunk {
    _Atomic(char *) slot[SLOTS];
    _Atomic(struct chunk *) next;
} chunk;

static chunk first;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int tdm_cleanup_add(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    pthread_mutex_lock(&lock);
    for (chunk *c = &first;; c = atomic_load(&c->next)) {
        for (int i = 0; i < SLOTS; i++)
            if (!atomic_load(&c->slot[i])) {
                atomic_store(&c->slot[i], copy);
                pthread_mutex_unlock(&lock);
                return 0;
            }
        if (!atomic_load(&c->next)) {
            chunk *n = calloc(1, sizeof *n);
            if (!n) {
                pthread_mutex_unlock(&lock);
                free(copy);
                return -1;
            }
            atomic_store(&c->next, n);
        }
    }
}

static const int cleanup_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};

void tdm_cleanup_remove(const char *path)
{
    /* No handler on this thread between taking a path out and freeing it.
     * (One on another thread may still read it: a theoretical race in a
     * process that is dying anyway, where at worst a stale name is unlinked.) */
    sigset_t block, saved;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof cleanup_sigs / sizeof *cleanup_sigs; i++)
        sigaddset(&block, cleanup_sigs[i]);
    pthread_sigmask(SIG_BLOCK, &block, &saved);
    char *old = NULL;
    pthread_mutex_lock(&lock);
    for (chunk *c = &first; c && !old; c = atomic_load(&c->next))
        for (int i = 0; i < SLOTS && !old; i++) {
            char *p = atomic_load(&c->slot[i]);
            if (p && strcmp(p, path) == 0)
                old = atomic_exchange(&c->slot[i], NULL);
        }
    pthread_mutex_unlock(&lock);
    free(old);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

void tdm_cleanup_unlink_all(void)
{
    for (chunk *c = &first; c; c = atomic_load(&c->next))
        for (int i = 0; i < SLOTS; i++) {
            char *p = atomic_load(&c->slot[i]);
            if (p)
                unlink(p);
        }
}

static void on_signal(int sig)
{
    int saved = errno;
    tdm_cleanup_unlink_all();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig);   /* pending until the handler returns, then the default action */
    errno = saved;
}

void tdm_cleanup_on_signals(void)
{
    for (size_t i = 0; i < sizeof cleanup_sigs / sizeof *cleanup_sigs; i++) {
        struct sigaction old, sa;
        if (sigaction(cleanup_sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigfillset(&sa.sa_mask);   /* one cleanup at a time */
        sigaction(cleanup_sigs[i], &sa, NULL);
    }
}

size_t tdm_cleanup_stale(const char *prefix, char *names, size_t names_len)
{
    const char *slash = strrchr(prefix, '/');
    const char *base = slash ? slash + 1 : prefix;
    size_t dlen = slash ? (size_t)(slash - prefix) : 0, blen = strlen(base);
    char *dir = malloc(dlen + 2);
    if (!dir || !blen) {
        free(dir);
        return 0;
    }
    if (slash)
        memcpy(dir, prefix, dlen ? dlen : 1), dir[dlen ? dlen : 1] = '\0';
    else
        strcpy(dir, ".");
    DIR *dp = opendir(dir);
    size_t removed = 0;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        if (strncmp(e->d_name, base, blen) != 0 || e->d_name[blen] != '.')
            continue;
        long pid = tdm_temp_pid(e->d_name + blen + 1);
        if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(n);
        struct stat st;
        if (path) {
            snprintf(path, n, "%s/%s", dir, e->d_name);
            /* A regular file of this user only: never a link, another
             * user's file or anything else. */
            if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                unlink(path) == 0) {
                if (removed++ == 0 && names && names_len)
                    snprintf(names, names_len, "%s", path);
            }
        }
        free(path);
    }
    if (dp)
        closedir(dp);
    free(dir);
    return removed;
}
