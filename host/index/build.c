/* tdm_index_build: parse -> tokenize -> invert in memory -> runs -> merge -> write. */
#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
    size_t budget;
    char **runs;
    size_t nruns;
    char *run_prefix;
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

static void report(builder *b, int force)
{
    double t = now();
    if (!b->o->progress || (!force && t - b->last_report < 0.1))
        return;
    b->last_report = t;
    b->prog.seconds = t - b->start;
    b->o->progress(b->o->progress_user, &b->prog);
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

/* Writes the in-memory postings as the next sorted run file. */
static int flush_run(builder *b)
{
    size_t len = strlen(b->run_prefix) + 32;
    char *path = malloc(len);
    char **runs = realloc(b->runs, (b->nruns + 1) * sizeof *runs);
    if (runs)
        b->runs = runs;
    if (!path || !runs) {
        free(path);
        return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
    }
    snprintf(path, len, "%s.run%zu.%ld", b->run_prefix, b->nruns, (long)getpid());
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
    return rc ? rc : rc2;
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
    const char *name, *text;
    size_t len;
    while (rc == TDM_OK) {
        int got = tdm_parser_next(p, &name, &text, &len, b->err);
        if (got <= 0) {
            rc = got;
            break;
        }
        rc = add_doc(b, name, text, len);
        if ((b->doc & 63) == 0) {
            b->prog.bytes_read = *bytes_before + tdm_parser_bytes(p);
            report(b, 0);
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
    if ((b->prog.terms_done & 1023) == 0)
        report(b, 0);
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
    report(b, 1);
    int rc;
    if (b->nruns == 0) {
        rc = tdm_inverter_drain(b->inv, mem_to_writer, b);
    } else {
        rc = tdm_inverter_terms(b->inv) ? flush_run(b) : TDM_OK;
        b->prog.terms_total = 0;   /* unknown until merged */
        if (!rc)
            rc = tdm_runs_merge((const char *const *)b->runs, b->nruns, to_writer, b, b->err);
    }
    if (rc == TDM_ERR_NOMEM && !tdm_err_msg(b->err)[0])
        tdm_err_set(b->err, rc, "out of memory writing the index");
    if (!rc)
        rc = tdm_iwriter_finish(b->w, b->err);
    b->prog.phase = 2;
    report(b, 1);
    return rc;
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
                              (const char *const *)stops, nstops};
    if (!rc)
        rc = tdm_iwriter_open(out_path, &wo, &b->w, b->err);
    free(stops);
    if (!rc)
        rc = tdm_inverter_new(&b->inv, b->err);
    const char *dir = o->tmp_dir;
    const char *base = strrchr(out_path, '/');
    size_t len = (dir ? strlen(dir) : 0) + strlen(out_path) + 8;
    if (!rc && !(b->run_prefix = malloc(len)))
        rc = tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
    if (!rc)
        snprintf(b->run_prefix, len, "%s%s%s", dir ? dir : "", dir ? "/" : "",
                 dir ? (base ? base + 1 : out_path) : out_path);
    b->budget = (o->memory_mb ? o->memory_mb : 512) << 20;
    return rc;
}

int tdm_build_index(const char *const *inputs, size_t ninputs, const char *out_path,
                    const tdm_index_build_options *opts, tdm_err *err)
{
    tdm_index_build_options dflt = {0};
    builder b = {.o = opts ? opts : &dflt, .err = err};
    if (ninputs == 0 || !out_path)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "no inputs or no output path");
    if (b.o->format < TDM_BUILD_AUTO || b.o->format > TDM_BUILD_JSONL)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown input format %d", b.o->format);
    b.start = b.last_report = now();
    for (size_t i = 0; i < ninputs; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") != 0 && stat(inputs[i], &st) == 0)
            b.prog.bytes_total += (uint64_t)st.st_size;
    }
    /* Before anything is opened: the output must be replaceable and no input. */
    int guard = tdm_output_check(out_path, inputs, ninputs, err);
    if (guard == TDM_OK)
        guard = tdm_output_check(out_path, &b.o->stopwords, 1, err);
    if (guard != TDM_OK)
        return guard;
    int rc = setup(&b, out_path);
    uint64_t bytes = 0;
    for (size_t i = 0; rc == TDM_OK && i < ninputs; i++)
        rc = read_input(&b, inputs[i], &bytes);
    b.prog.bytes_read = bytes;
    if (rc == TDM_OK)
        rc = finish(&b);
    for (size_t i = 0; i < b.nruns; i++) {
        unlink(b.runs[i]);
        free(b.runs[i]);
    }
    free(b.runs);
    free(b.run_prefix);
    tdm_inverter_free(b.inv);
    tdm_iwriter_free(b.w);
    tdm_tokenizer_free(b.tok);
    return rc;
}
