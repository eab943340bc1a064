/* tdm_index_build: parse -> tokenize -> invert in memory -> runs -> merge -> write. */
#include "build.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fsutil.h"
#include "invert.h"
#include "parse.h"
#include "runs.h"
#include "tokenize.h"
#include "writer.h"

typedef struct builder {
    const tdm_index_build_options *o;
    tdm_tokenizer *tok;
    tdm_inverter *inv;
    tdm_iwriter *w;
    size_t budget, fanin;
    char **runs;             /* NULL entries: merged away */
    size_t nruns, run_seq;   /* run files are RUN_PREFIX.run<seq>.<pid> */
    char *run_prefix;
    char *tmp_index;         /* the writer's OUT.tmp.<pid>, registered for cleanup */
    const tdm_build_tuning *t;
    uint32_t doc, doclen;
    int tok_rc;
    tdm_index_build_progress prog;
    double start, last_report;
    tdm_err *err;
} builder;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Calls the progress callback (at most every 0.1 s unless forced);
 * TDM_ERR_CANCELLED when it asks to stop. */
static int report(builder *b, int force)
{
    double t = now();
    if (!b->o->progress || (!force && t - b->last_report < 0.1))
        return TDM_OK;
    b->last_report = t;
    b->prog.seconds = t - b->start;
    if (b->o->progress(b->o->progress_user, &b->prog) == 0)
        return TDM_OK;
    return tdm_err_set(b->err, TDM_ERR_CANCELLED, "index build cancelled by its progress callback "
                       "after %llu documents", (unsigned long long)b->prog.documents);
}

static int on_token(void *user, const char *term, size_t len)
{
    builder *b = user;
    if (tdm_inverter_add(b->inv, term, len, b->doc) != TDM_OK)
        return TDM_ERR_NOMEM;
    b->doclen++;
    return 0;
}

static int to_run(void *user, const char *term, size_t len, const uint32_t *docids,
                  const uint32_t *freqs, size_t n)
{
    void **ctx = user;
    return tdm_run_add(ctx[0], term, len, docids, freqs, n, ctx[1]);
}

/* A new run file name, registered for removal on a signal; NULL if no memory. */
static char *new_run_path(builder *b)
{
    size_t len = strlen(b->run_prefix) + 48;
    char *path = malloc(len);
    if (!path)
        return NULL;
    snprintf(path, len, "%s.run%zu.%ld", b->run_prefix, b->run_seq++, (long)getpid());
    if (tdm_cleanup_add(path) != 0) {
        free(path);
        return NULL;
    }
    return path;
}

static void drop_run(char *path)
{
    if (!path)
        return;
    unlink(path);
    tdm_cleanup_remove(path);
    free(path);
}

/* Writes the in-memory postings as the next sorted run file. */
static int flush_run(builder *b)
{
    char **runs = realloc(b->runs, (b->nruns + 1) * sizeof *runs);
    if (runs)
        b->runs = runs;
    char *path = runs ? new_run_path(b) : NULL;
    if (!path)
        return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
    b->runs[b->nruns++] = path;
    tdm_runwriter *rw;
    int rc = tdm_run_create(path, &rw, b->err);
    if (rc)
        return rc;
    void *ctx[2] = {rw, b->err};
    rc = tdm_inverter_drain(b->inv, to_run, ctx);
    int rc2 = tdm_run_close(rw, b->err);
    if (rc == TDM_ERR_NOMEM)
        tdm_err_set(b->err, rc, "out of memory writing %s", path);
    b->prog.runs = (uint32_t)b->nruns;
    if (!rc && !rc2 && b->t && b->t->after_run)
        b->t->after_run(b->t->user, b->nruns);
    return rc ? rc : rc2;
}

static int to_merged_run(void *user, const char *term, size_t len, const uint32_t *docids,
                         const uint32_t *freqs, size_t n, tdm_err *err)
{
    return tdm_run_add(user, term, len, docids, freqs, n, err);
}

/* Merges runs[0..k) into one new run *out; the inputs are removed (and set to
 * NULL) once it is complete. A group of one is passed on as it is. */
static int merge_group(builder *b, char **runs, size_t k, char **out)
{
    if (k == 1) {
        *out = runs[0];
        runs[0] = NULL;
        return TDM_OK;
    }
    char *path = new_run_path(b);
    if (!path)
        return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
    *out = path;
    tdm_runwriter *rw;
    int rc = tdm_run_create(path, &rw, b->err);
    if (rc)
        return rc;
    rc = tdm_runs_merge((const char *const *)runs, k, to_merged_run, rw, b->err);
    int rc2 = tdm_run_close(rw, b->err);
    if (rc || rc2)
        return rc ? rc : rc2;
    for (size_t i = 0; i < k; i++) {
        drop_run(runs[i]);
        runs[i] = NULL;
    }
    return TDM_OK;
}

/* Merges consecutive groups of fan-in runs (docid order stays run order)
 * until at most fan-in are left for the final merge. */
static int merge_passes(builder *b)
{
    while (b->nruns > b->fanin) {
        size_t groups = (b->nruns + b->fanin - 1) / b->fanin;
        char **next = calloc(groups, sizeof *next);
        if (!next)
            return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
        int rc = TDM_OK;
        for (size_t g = 0; rc == TDM_OK && g < groups; g++) {
            size_t i = g * b->fanin, k = b->nruns - i < b->fanin ? b->nruns - i : b->fanin;
            rc = merge_group(b, b->runs + i, k, &next[g]);
        }
        if (rc != TDM_OK) {   /* b->runs keeps what is left; next's files go */
            for (size_t g = 0; g < groups; g++)
                drop_run(next[g]);
            free(next);
            return rc;
        }
        free(b->runs);
        b->runs = next;
        b->nruns = groups;
    }
    return TDM_OK;
}

static int add_doc(builder *b, const char *name, const char *text, size_t len)
{
    if (b->doc == UINT32_MAX)
        return tdm_err_set(b->err, TDM_ERR_LIMIT, "more than 2^32-1 documents");
    b->doclen = 0;
    int rc = tdm_tokenize(b->tok, text, len, on_token, b);
    if (rc)
        return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory inverting document %u", b->doc);
    rc = tdm_iwriter_add_doc(b->w, b->doclen, name, b->err);
    b->doc++;
    b->prog.documents++;
    if (!rc && tdm_inverter_bytes(b->inv) > b->budget)
        rc = flush_run(b);
    return rc;
}

static int read_input(builder *b, const char *path, uint64_t *bytes_before)
{
    tdm_parser *p = NULL;
    int rc = tdm_parser_open(path, b->o->format, &p, b->err);
    if (rc == TDM_OK)
        tdm_parser_allow_empty(p, b->o->allow_empty);
    const char *name, *text;
    size_t len;
    while (rc == TDM_OK) {
        int got = tdm_parser_next(p, &name, &text, &len, b->err);
        if (got <= 0) {
            rc = got;
            break;
        }
        rc = add_doc(b, name, text, len);
        if (rc == TDM_OK && (b->doc & 63) == 0) {
            b->prog.bytes_read = *bytes_before + tdm_parser_bytes(p);
            rc = report(b, 0);
        }
    }
    if (p)
        *bytes_before += tdm_parser_bytes(p);
    tdm_parser_close(p);
    return rc;
}

static int to_writer(void *user, const char *term, size_t len, const uint32_t *docids,
                     const uint32_t *freqs, size_t n, tdm_err *err)
{
    builder *b = user;
    b->prog.terms_done++;
    if ((b->prog.terms_done & 1023) == 0 && report(b, 0) != TDM_OK)
        return TDM_ERR_CANCELLED;
    return tdm_iwriter_add_list(b->w, term, len, docids, freqs, n, err);
}

static int mem_to_writer(void *user, const char *term, size_t len, const uint32_t *docids,
                         const uint32_t *freqs, size_t n)
{
    builder *b = user;
    return to_writer(b, term, len, docids, freqs, n, b->err);
}

static int finish(builder *b)
{
    b->prog.phase = 1;
    b->prog.terms_total = tdm_inverter_terms(b->inv);
    int rc = report(b, 1);
    if (rc == TDM_OK && b->nruns == 0) {
        rc = tdm_inverter_drain(b->inv, mem_to_writer, b);
    } else if (rc == TDM_OK) {
        rc = tdm_inverter_terms(b->inv) ? flush_run(b) : TDM_OK;
        b->prog.terms_total = 0;   /* unknown until merged */
        if (!rc)
            rc = merge_passes(b);
        if (!rc)
            rc = tdm_runs_merge((const char *const *)b->runs, b->nruns, to_writer, b, b->err);
    }
    if (rc == TDM_ERR_NOMEM && !tdm_err_msg(b->err)[0])
        tdm_err_set(b->err, rc, "out of memory writing the index");
    if (!rc)
        rc = tdm_iwriter_finish(b->w, b->err);
    if (rc == TDM_OK) {
        b->prog.phase = 2;
        (void)report(b, 1); /* the index is in place: too late to cancel */
    }
    return rc;
}

/* Names the run files and the writer's temporary file, registers the latter
 * for cleanup on a signal (the writer names it OUT.tmp.<pid>, writer.h), and
 * removes what killed builds into the same place left behind. */
static int run_files(builder *b, const char *out_path)
{
    const char *dir = b->o->tmp_dir;
    const char *base = strrchr(out_path, '/');
    size_t len = (dir ? strlen(dir) : 0) + strlen(out_path) + 32;
    if (!(b->run_prefix = malloc(len)))
        return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
    snprintf(b->run_prefix, len, "%s%s%s", dir ? dir : "", dir ? "/" : "",
             dir ? (base ? base + 1 : out_path) : out_path);
    if (!(b->tmp_index = tdm_cleanup_add_tmp(out_path)))
        return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
    tdm_cleanup_stale(out_path, NULL, 0);
    if (dir)
        tdm_cleanup_stale(b->run_prefix, NULL, 0);
    return TDM_OK;
}

static int setup(builder *b, const char *out_path)
{
    const tdm_index_build_options *o = b->o;
    char **stops = NULL;
    size_t nstops = 0;
    int rc = o->stopwords ? tdm_stopwords_load(o->stopwords, &stops, &nstops, b->err) : 0;
    if (!rc)
        rc = tdm_tokenizer_open(o->stemmer, (const char *const *)stops, nstops, &b->tok, b->err);
    tdm_iwriter_options wo = {o->codec, o->k1, o->b, o->stemmer ? o->stemmer : "english",
                              (const char *const *)stops, nstops, 1};
    if (!rc)
        rc = run_files(b, out_path);
    if (!rc)
        rc = tdm_iwriter_open(out_path, &wo, &b->w, b->err);
    free(stops);
    if (!rc)
        rc = tdm_inverter_new(&b->inv, b->err);
    size_t mb = o->memory_mb ? o->memory_mb : 512;
    b->budget = mb > SIZE_MAX >> 21 ? SIZE_MAX >> 1 : mb << 20;
    if (b->t && b->t->budget_bytes)
        b->budget = b->t->budget_bytes;
    b->fanin = b->t && b->t->fanin >= 2 ? b->t->fanin : TDM_BUILD_FANIN;
    return rc;
}

int tdm_build_index(const char *const *inputs, size_t ninputs, const char *out_path,
                    const tdm_index_build_options *opts, tdm_err *err)
{
    return tdm_build_index_tuned(inputs, ninputs, out_path, opts, NULL, err);
}

int tdm_build_index_tuned(const char *const *inputs, size_t ninputs, const char *out_path,
                          const tdm_index_build_options *opts, const tdm_build_tuning *tuning,
                          tdm_err *err)
{
    tdm_index_build_options dflt = {0};
    builder b = {.o = opts ? opts : &dflt, .err = err, .t = tuning};
    if (ninputs == 0 || !out_path)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "no inputs or no output path");
    if (b.o->format < TDM_BUILD_AUTO || b.o->format > TDM_BUILD_JSONL)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown input format %d", b.o->format);
    /* Before anything is opened: the output must be replaceable and no input. */
    int guard = tdm_output_check(out_path, inputs, ninputs, err);
    if (guard == TDM_OK)
        guard = tdm_output_check(out_path, &b.o->stopwords, 1, err);
    if (guard != TDM_OK)
        return guard;
    b.start = b.last_report = now();
    for (size_t i = 0; i < ninputs; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") != 0 && stat(inputs[i], &st) == 0)
            b.prog.bytes_total += (uint64_t)st.st_size;
    }
    int rc = setup(&b, out_path);
    uint64_t bytes = 0;
    for (size_t i = 0; rc == TDM_OK && i < ninputs; i++)
        rc = read_input(&b, inputs[i], &bytes);
    b.prog.bytes_read = bytes;
    if (rc == TDM_OK)
        rc = finish(&b);
    for (size_t i = 0; i < b.nruns; i++)
        drop_run(b.runs[i]);
    free(b.runs);
    free(b.run_prefix);
    tdm_inverter_free(b.inv);
    tdm_iwriter_free(b.w);   /* removes the temporary file unless finished */
    if (b.tmp_index)
        tdm_cleanup_remove(b.tmp_index);
    free(b.tmp_index);
    tdm_tokenizer_free(b.tok);
    return rc;
}
