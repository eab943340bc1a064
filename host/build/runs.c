/* Run files: varint-coded sorted postings, and the merge that reads them back. */
#include "runs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tempfile.h"
#include "index/format.h"
#include "tandem.h"

/* Each FILE here belongs to one thread: the unlocked stdio calls. */
struct tdm_runwriter {
    FILE *f;
    char *path;
};

static void put_varint(FILE *f, uint64_t v)
{
    while (v >= 0x80) {
        putc_unlocked((int)(v & 0x7f) | 0x80, f);
        v >>= 7;
    }
    putc_unlocked((int)v, f);
}

static int get_varint(FILE *f, uint64_t *v)
{
    uint64_t r = 0;
    for (int s = 0; s < 64; s += 7) {
        int c = getc_unlocked(f);
        if (c == EOF)
            return -1;
        r |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

int tdm_run_create(const char *path, tdm_runwriter **out, tdm_err *err)
{
    tdm_runwriter *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    /* Exclusively: a name taken (a planted link) is never followed. */
    int fd = tdm_temp_open(path);
    if (fd >= 0 && !(w->f = fdopen(fd, "wb")))
        close(fd);
    if (!w->f) {
        int rc = tdm_err_set(err, TDM_ERR_IO, "%s: %s", path, strerror(errno));
        free(w->path);
        free(w);
        return rc;
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 20);
    *out = w;
    return TDM_OK;
}

int tdm_run_add(tdm_runwriter *w, const char *term, size_t len, const uint32_t *docids,
                const uint32_t *freqs, size_t n, tdm_err *err)
{
    put_varint(w->f, len);
    fwrite(term, 1, len, w->f);
    put_varint(w->f, n);
    for (size_t i = 0; i < n; i++) {
        put_varint(w->f, docids[i] - (i ? docids[i - 1] : 0));
        put_varint(w->f, freqs[i]);
    }
    if (ferror(w->f))
        return tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", w->path, strerror(errno));
    return TDM_OK;
}

int tdm_run_close(tdm_runwriter *w, tdm_err *err)
{
    put_varint(w->f, 0);
    int bad = ferror(w->f) | fclose(w->f);
    int rc = bad ? tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", w->path, strerror(errno))
                 : TDM_OK;
    free(w->path);
    free(w);
    return rc;
}

/* One run being merged: its current term, postings not yet read. */
typedef struct run {
    FILE *f;
    const char *path;
    char term[TDM_IDX_TERM_MAX];
    size_t len;       /* 0: exhausted */
    uint64_t n;
} run;

static int run_bad(const run *r, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_IO, "%s: run file truncated or corrupt", r->path);
}

static int run_next(run *r, tdm_err *err)
{
    uint64_t len;
    if (get_varint(r->f, &len) || len > TDM_IDX_TERM_MAX)
        return run_bad(r, err);
    r->len = (size_t)len;
    if (len && (fread(r->term, 1, r->len, r->f) != r->len || get_varint(r->f, &r->n)))
        return run_bad(r, err);
    return TDM_OK;
}

static int cmp_term(const run *a, const run *b)
{
    int c = memcmp(a->term, b->term, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The run at the smallest current term (NULL: every run is done). */
static run *min_run(run *runs, size_t k)
{
    run *min = NULL;
    for (size_t i = 0; i < k; i++)
        if (runs[i].len && (!min || cmp_term(&runs[i], min) < 0))
            min = &runs[i];
    return min;
}

/* Whether r's current term is term[0..len). */
static int at_term(const run *r, const char *term, size_t len)
{
    return r->len == len && memcmp(r->term, term, len) == 0;
}

/* Growable parallel arrays for one merged list. */
typedef struct merged {
    uint32_t *docids, *freqs;
    size_t n, cap;
} merged;

static int read_postings(run *r, merged *m, tdm_err *err)
{
    if (m->n + r->n > m->cap) {
        size_t cap = m->cap ? m->cap : 1024;
        while (cap < m->n + r->n)
            cap *= 2;
        uint32_t *d = realloc(m->docids, cap * 4);
        if (d)
            m->docids = d;
        uint32_t *f = d ? realloc(m->freqs, cap * 4) : NULL;
        if (!f)
            return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory merging runs");
        m->freqs = f;
        m->cap = cap;
    }
    uint64_t doc = 0, gap, tf;
    for (uint64_t i = 0; i < r->n; i++) {
        if (get_varint(r->f, &gap) || get_varint(r->f, &tf))
            return run_bad(r, err);
        doc += gap;
        m->docids[m->n] = (uint32_t)doc;
        m->freqs[m->n++] = (uint32_t)tf;
    }
    return run_next(r, err);
}

static int merge_loop(run *runs, size_t k, tdm_merge_fn fn, void *user, tdm_err *err)
{
    merged m = {0};
    int rc = TDM_OK;
    for (;;) {
        run *min = min_run(runs, k);
        if (!min)
            break;
        char term[TDM_IDX_TERM_MAX];
        size_t len = min->len;
        memcpy(term, min->term, len);
        m.n = 0;
        for (size_t i = 0; rc == TDM_OK && i < k; i++)
            if (at_term(&runs[i], term, len))
                rc = read_postings(&runs[i], &m, err);
        if (rc == TDM_OK)
            rc = fn(user, term, len, m.docids, m.freqs, m.n, err);
        if (rc)
            break;
    }
    free(m.docids);
    free(m.freqs);
    return rc;
}

/* Opens runs[0..nruns) at their first term. */
static int open_runs(run *runs, const char *const *paths, size_t nruns, tdm_err *err)
{
    int rc = TDM_OK;
    for (size_t i = 0; rc == TDM_OK && i < nruns; i++) {
        runs[i].path = paths[i];
        if (!(runs[i].f = fopen(paths[i], "rb")))
            rc = tdm_err_set(err, TDM_ERR_IO, "%s: %s", paths[i], strerror(errno));
        else {
            setvbuf(runs[i].f, NULL, _IOFBF, 1 << 18);   /* x fan-in: 16 MB at 64 */
            rc = run_next(&runs[i], err);
        }
    }
    return rc;
}

static void close_runs(run *runs, size_t nruns)
{
    for (size_t i = 0; i < nruns; i++)
        if (runs[i].f)
            fclose(runs[i].f);
    free(runs);
}

int tdm_runs_merge(const char *const *paths, size_t nruns, tdm_merge_fn fn, void *user,
                   tdm_err *err)
{
    run *runs = calloc(nruns ? nruns : 1, sizeof *runs);
    if (!runs)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = open_runs(runs, paths, nruns, err);
    if (rc == TDM_OK)
        rc = merge_loop(runs, nruns, fn, user, err);
    close_runs(runs, nruns);
    return rc;
}

/* Copies r's postings of its current term to w, docids continuing from
 * *last (the list so far): the bytes tdm_run_add writes for them. */
static int copy_postings(run *r, tdm_runwriter *w, uint64_t *last, int first, tdm_err *err)
{
    uint64_t doc = 0, gap, tf;
    for (uint64_t i = 0; i < r->n; i++) {
        if (get_varint(r->f, &gap) || get_varint(r->f, &tf))
            return run_bad(r, err);
        doc += gap;
        put_varint(w->f, first && i == 0 ? doc : doc - *last);
        put_varint(w->f, tf);
        *last = doc;
        first = 0;
    }
    return run_next(r, err);
}

int tdm_runs_merge_to_run(const char *const *paths, size_t nruns, tdm_runwriter *w,
                          tdm_err *err)
{
    run *runs = calloc(nruns ? nruns : 1, sizeof *runs);
    if (!runs)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = open_runs(runs, paths, nruns, err);
    while (rc == TDM_OK) {
        run *min = min_run(runs, nruns);
        if (!min)
            break;
        char term[TDM_IDX_TERM_MAX];
        size_t len = min->len;
        uint64_t n = 0, last = 0;
        memcpy(term, min->term, len);
        for (size_t i = 0; i < nruns; i++)
            if (at_term(&runs[i], term, len))
                n += runs[i].n;
        put_varint(w->f, len);
        fwrite(term, 1, len, w->f);
        put_varint(w->f, n);
        int first = 1;
        for (size_t i = 0; rc == TDM_OK && i < nruns; i++)
            if (at_term(&runs[i], term, len)) {
                rc = copy_postings(&runs[i], w, &last, first, err);
                first = 0;
            }
        if (rc == TDM_OK && ferror(w->f))
            rc = tdm_err_set(err, TDM_ERR_IO, "%s: write: %s", w->path, strerror(errno));
    }
    close_runs(runs, nruns);
    return rc;
}
