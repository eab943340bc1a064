/* A build's inputs as files (inputs.h): directories walked into the
 * regular files under them. */
#include "inputs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tandem.h"

/* A file found under a directory; `order` its place in path order. */
typedef struct found {
    char *path;
    dev_t dev;
    ino_t ino;
    size_t order;
} found;

typedef struct walk {
    found *v;
    size_t n, cap;
    const char *top;         /* the input directory, for messages */
    int have_out;            /* out_dev, out_ino: the output's directory */
    dev_t out_dev;
    ino_t out_ino;
    const char *out;
    tdm_err *err;
} walk;

/* The directories from the input down to the one being read: a directory
 * met again among them is a loop of symbolic links. */
typedef struct chain {
    dev_t dev;
    ino_t ino;
    const char *path;
    const struct chain *up;
} chain;

static char *join(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    int slash = dl && dir[dl - 1] != '/';
    char *p = malloc(dl + (size_t)slash + nl + 1);
    if (p) {
        memcpy(p, dir, dl);
        if (slash)
            p[dl] = '/';
        memcpy(p + dl + (size_t)slash, name, nl + 1);
    }
    return p;
}

static int add_found(walk *w, char *path, const struct stat *st)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        found *v = realloc(w->v, cap * sizeof *v);
        if (!v) {
            free(path);
            return tdm_err_set(w->err, TDM_ERR_NOMEM, "out of memory listing %s", w->top);
        }
        w->v = v;
        w->cap = cap;
    }
    w->v[w->n++] = (found){path, st->st_dev, st->st_ino, 0};
    return TDM_OK;
}

/* The names in `dir`, not hidden ('.' first), read whole before any is
 * followed so that a deep tree holds one directory stream at a time. */
static int list_names(const char *dir, char ***names, size_t *n, tdm_err *err)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return tdm_err_set(err, TDM_ERR_IO, "%s: cannot read the directory: %s", dir,
                           strerror(errno));
    size_t cap = 0;
    int rc = TDM_OK;
    struct dirent *e;
    errno = 0;
    while (rc == TDM_OK && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            char **v = realloc(*names, cap * sizeof *v);
            if (!v) {
                rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory listing %s", dir);
                break;
            }
            *names = v;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory listing %s", dir);
        else
            ++*n;
        errno = 0;
    }
    if (rc == TDM_OK && errno)
        rc = tdm_err_set(err, TDM_ERR_IO, "%s: cannot read the directory: %s", dir,
                         strerror(errno));
    closedir(d);
    return rc;
}

static int walk_dir(walk *w, const char *dir, const struct stat *dst, const chain *up);

/* One entry of a directory: a file is noted, a directory walked. */
static int walk_entry(walk *w, char *path, const chain *here)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        struct stat lst;
        int rc = e == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)
                     ? tdm_err_set(w->err, TDM_ERR_IO, "%s: a symbolic link to nothing "
                                   "(its target does not exist)", path)
                     : e == ELOOP ? tdm_err_set(w->err, TDM_ERR_IO, "%s: a loop of symbolic "
                                                "links", path)
                     : tdm_err_set(w->err, TDM_ERR_IO, "%s: %s", path, strerror(e));
        free(path);
        return rc;
    }
    if (S_ISDIR(st.st_mode)) {
        for (const chain *c = here; c; c = c->up)
            if (c->dev == st.st_dev && c->ino == st.st_ino) {
                int rc = tdm_err_set(w->err, TDM_ERR_IO, "%s: a symbolic link back to %s, "
                                     "which holds it (a loop)", path, c->path);
                free(path);
                return rc;
            }
        int rc = walk_dir(w, path, &st, here);
        free(path);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO would block, a device never end */
        free(path);
        return TDM_OK;
    }
    /* Readable now, not after hours of building the files before it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = tdm_err_set(w->err, TDM_ERR_IO, "%s: cannot read it: %s", path,
                             strerror(errno));
        free(path);
        return rc;
    }
    close(fd);
    return add_found(w, path, &st);
}

static int walk_dir(walk *w, const char *dir, const struct stat *dst, const chain *up)
{
    if (w->have_out && dst->st_dev == w->out_dev && dst->st_ino == w->out_ino)
        return tdm_err_set(w->err, TDM_ERR_INVALID_ARG, "the output %s lies in the input "
                           "directory %s, so a rebuild would read it as documents: write it "
                           "outside", w->out, w->top);
    chain here = {dst->st_dev, dst->st_ino, dir, up};
    char **names;
    size_t n;
    int rc = list_names(dir, &names, &n, w->err);
    for (size_t i = 0; i < n; i++) {
        char *path = rc == TDM_OK ? join(dir, names[i]) : NULL;
        if (rc == TDM_OK && !path)
            rc = tdm_err_set(w->err, TDM_ERR_NOMEM, "out of memory listing %s", dir);
        if (rc == TDM_OK)
            rc = walk_entry(w, path, &here);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const found *)a)->path, ((const found *)b)->path);
}

static int by_file(const void *a, const void *b)
{
    const found *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int by_order(const void *a, const void *b)
{
    const found *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* w->v in path order, each file once (at its first path). */
static void sort_unique(walk *w)
{
    qsort(w->v, w->n, sizeof *w->v, by_path);
    for (size_t i = 0; i < w->n; i++)
        w->v[i].order = i;
    qsort(w->v, w->n, sizeof *w->v, by_file);
    size_t m = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (m && w->v[m - 1].dev == w->v[i].dev && w->v[m - 1].ino == w->v[i].ino) {
            free(w->v[i].path);
            continue;
        }
        w->v[m++] = w->v[i];
    }
    w->n = m;
    qsort(w->v, w->n, sizeof *w->v, by_order);
}

static int push(char ***files, size_t *n, size_t *cap, char *path, tdm_err *err)
{
    if (!path)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        char **v = realloc(*files, c * sizeof *v);
        if (!v) {
            free(path);
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
        }
        *files = v;
        *cap = c;
    }
    (*files)[(*n)++] = path;
    return TDM_OK;
}

/* The directory `out` is written in (its temporary file and it), if it
 * exists. */
static void out_dir(walk *w, const char *out)
{
    const char *slash = out ? strrchr(out, '/') : NULL;
    char *dir = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
    struct stat st;
    w->out = out;
    w->have_out = out && dir && stat(dir, &st) == 0;
    if (w->have_out) {
        w->out_dev = st.st_dev;
        w->out_ino = st.st_ino;
    }
    free(dir);
}

/* One input directory's files, appended to files. */
static int expand_dir(walk *w, const char *dir, const struct stat *st, char ***files,
                      size_t *n, size_t *cap)
{
    w->n = 0;
    w->top = dir;
    int rc = walk_dir(w, dir, st, NULL);
    if (rc == TDM_OK && w->n == 0)
        rc = tdm_err_set(w->err, TDM_ERR_NOT_FOUND, "%s: a directory with no file to read in "
                         "it or under it (names starting with '.' are skipped)", dir);
    if (rc == TDM_OK)
        sort_unique(w);
    size_t i = 0;
    for (; rc == TDM_OK && i < w->n; i++)
        rc = push(files, n, cap, w->v[i].path, w->err);
    for (; i < w->n; i++)
        free(w->v[i].path);
    w->n = 0;
    return rc;
}

int tdm_build_inputs(const char *const *inputs, size_t ninputs, const char *out,
                     char ***files, size_t *nfiles, tdm_err *err)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    walk w = {.err = err};
    out_dir(&w, out);
    int rc = TDM_OK;
    for (size_t i = 0; rc == TDM_OK && i < ninputs; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") != 0 && stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = expand_dir(&w, inputs[i], &st, &v, &n, &cap);
        else /* a file, or what its reader will name as missing */
            rc = push(&v, &n, &cap, strdup(inputs[i]), err);
    }
    free(w.v);
    if (rc != TDM_OK) {
        tdm_build_inputs_free(v, n);
        return rc;
    }
    *files = v;
    *nfiles = n;
    return TDM_OK;
}

void tdm_build_inputs_free(char **files, size_t nfiles)
{
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
}
