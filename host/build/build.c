/* tdm_index_build: parse -> tokenize -> invert in memory -> runs -> merge -> write. */
#include "build.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_chunks.h"
#include "common/cleanup.h"
#include "common/fsutil.h"
#include "common/tempfile.h"
#include "invert.h"
#include "parse.h"
#include "runs.h"
#include "text/tokenize.h"
#include "vector.h"
#include "common/workers.h"
#include "index/writer.h"
#include "inputs.h"

/* Lists copied out of the merge until there are enough to encode on every
 * thread: terms and postings by offset (the buffers move as they grow). */
typedef struct lbatch_item {
    size_t term, len, post, n;
} lbatch_item;

typedef struct lbatch {
    lbatch_item *it;
    size_t n, cap;
    char *terms;
    size_t tlen, tcap;
    uint32_t *post;          /* docids then freqs of each list */
    size_t plen, pcap;
    size_t max_post;         /* flush when plen would pass it */
} lbatch;

typedef struct builder {
    const tdm_index_build_options *o;
    tdm_tokenizer *tok;
    tdm_inverter *inv;
    tdm_iwriter *w;
    size_t budget, fanin;
    unsigned threads;
    tdm_chunker *ck;         /* threads > 1: the first phase on workers */
    lbatch lb;               /* threads > 1: lists waiting to be encoded */
    char **runs;             /* NULL entries: merged away */
    size_t nruns, run_seq;   /* run files: RUN_PREFIX.run<seq>.tmp.<pid>.<tag> */
    char *run_prefix;
    const tdm_build_tuning *t;
    uint32_t doc, doclen;
    int vector;              /* JSON vector inputs: an impact index */
    tdm_quant quant;         /* their weights to impacts */
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

/* A new run file name (tempfile.h: unpredictable, registered for removal
 * on a signal; tdm_run_create creates it exclusively); NULL if no memory. */
static char *new_run_path(builder *b)
{
    size_t len = strlen(b->run_prefix) + 32;
    char *base = malloc(len);
    if (!base)
        return NULL;
    snprintf(base, len, "%s.run%zu", b->run_prefix, b->run_seq++);
    char *path = tdm_temp_name(base);
    free(base);
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

/* Merges runs[0..k) into the new run `path`; the inputs are removed (and
 * set to NULL) once it is complete. Any thread. */
static int merge_group(char **runs, size_t k, const char *path, tdm_err *err)
{
    tdm_runwriter *rw;
    int rc = tdm_run_create(path, &rw, err);
    if (rc)
        return rc;
    rc = tdm_runs_merge_to_run((const char *const *)runs, k, rw, err);
    int rc2 = tdm_run_close(rw, err);
    if (rc || rc2)
        return rc ? rc : rc2;
    for (size_t i = 0; i < k; i++) {
        drop_run(runs[i]);
        runs[i] = NULL;
    }
    return TDM_OK;
}

/* One merge pass: groups of fan-in runs, several at once. */
typedef struct mpass {
    builder *b;
    char **next;
    int *rc;
    tdm_err *errs;
} mpass;

static void merge_one(void *ctx, size_t g, unsigned worker)
{
    (void)worker;
    mpass *m = ctx;
    size_t i = g * m->b->fanin, k = m->b->nruns - i < m->b->fanin ? m->b->nruns - i : m->b->fanin;
    m->rc[g] = k == 1 ? TDM_OK : merge_group(m->b->runs + i, k, m->next[g], &m->errs[g]);
}

/* Names the outputs of a pass: a new run file for each group of more than
 * one run, the run itself for a group of one. */
static int name_groups(builder *b, char **next, size_t groups)
{
    for (size_t g = 0; g < groups; g++) {
        size_t i = g * b->fanin;
        if (b->nruns - i == 1) {
            next[g] = b->runs[i];
            b->runs[i] = NULL;
        } else if (!(next[g] = new_run_path(b))) {
            return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
        }
    }
    return TDM_OK;
}

/* Merges consecutive groups of fan-in runs (docid order stays run order)
 * until at most fan-in are left for the final merge. Groups are merged on
 * up to `threads` threads, fewer where their read buffers (fan-in x 256 KB,
 * runs.c) and the output's 1 MB would pass half the budget: a group's
 * lists are copied as they are read (tdm_runs_merge_to_run), not held, so
 * no merger needs memory for the longest list (which capped them at 2 on
 * the 10M-document collection, 8 bytes a document each). */
static int merge_passes(builder *b)
{
    size_t per = ((size_t)b->fanin << 18) + (1u << 20), par = b->budget / 2 / per;
    par = par < 1 ? 1 : par > b->threads ? b->threads : par;
    while (b->nruns > b->fanin) {
        size_t groups = (b->nruns + b->fanin - 1) / b->fanin;
        mpass m = {b, calloc(groups, sizeof *m.next), calloc(groups, sizeof *m.rc),
                   calloc(groups, sizeof *m.errs)};
        int rc = m.next && m.rc && m.errs ? name_groups(b, m.next, groups)
                                          : tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
        if (rc == TDM_OK)
            tdm_par_for((unsigned)par, groups, merge_one, &m);
        for (size_t g = 0; rc == TDM_OK && g < groups; g++)
            if (m.rc[g])
                rc = tdm_err_copy(b->err, &m.errs[g]);
        for (size_t g = 0; m.errs && g < groups; g++)
            tdm_err_clear(&m.errs[g]);
        free(m.errs);
        free(m.rc);
        if (rc != TDM_OK) {   /* b->runs keeps what is left; next's files go */
            for (size_t g = 0; m.next && g < groups; g++)
                drop_run(m.next[g]);
            free(m.next);
            return rc;
        }
        free(b->runs);
        b->runs = m.next;
        b->nruns = groups;
    }
    return TDM_OK;
}

static int add_doc(builder *b, const char *name, const char *text, size_t len)
{
    if (b->doc == UINT32_MAX)
        return tdm_err_set(b->err, TDM_ERR_LIMIT, "more than 2^32-1 documents");
    b->doclen = 0;
    int rc = b->vector ? tdm_vector_invert(b->inv, text, len, b->doc, &b->doclen)
             : tdm_tokenize(b->tok, text, len, on_token, b) ? TDM_ERR_NOMEM : TDM_OK;
    if (rc)
        return tdm_err_set(b->err, rc, rc == TDM_ERR_LIMIT
                           ? "document %u (%s): its impacts add up past 2^32 - 1"
                           : "out of memory inverting document %u (%s)", b->doc, name);
    rc = tdm_iwriter_add_doc(b->w, b->doclen, name, b->err);
    b->doc++;
    if (!b->ck)   /* else counted as read */
        b->prog.documents++;
    if (!rc && tdm_inverter_bytes(b->inv) > b->budget)
        rc = flush_run(b);
    return rc;
}

/* Every input of one build is a JSON vector collection, or none is. */
static int same_kind(builder *b, tdm_parser *p, const char *path)
{
    int vec = tdm_parser_format(p) == TDM_BUILD_JSON_VECTOR;
    if (vec == b->vector)
        return TDM_OK;
    return tdm_err_set(b->err, TDM_ERR_FORMAT, "%s: %s, but the build's first input %s: a "
                       "build takes text collections or JSON vector collections, not both",
                       path, vec ? "a JSON vector collection" : "not a JSON vector collection",
                       b->vector ? "was one" : "was text");
}

static int read_input(builder *b, const char *path, uint64_t *bytes_before)
{
    tdm_parser *p = NULL;
    int rc = tdm_parser_open(path, b->o->format, &p, b->err);
    if (rc == TDM_OK)
    {
        tdm_parser_allow_empty(p, b->o->allow_empty);
        tdm_parser_allow_unnamed(p, b->o->unnamed_lines);
        tdm_parser_set_quant(p, &b->quant);
        rc = same_kind(b, p, path);
    }
    const char *name, *text;
    size_t len;
    while (rc == TDM_OK) {
        int got = tdm_parser_next(p, &name, &text, &len, b->err);
        if (got <= 0) {
            rc = got;
            break;
        }
        rc = b->ck ? tdm_chunker_add(b->ck, name, text, len, b->err)
                   : add_doc(b, name, text, len);
        if (b->ck && rc == TDM_OK)
            b->prog.documents++;
        if (rc == TDM_OK && (b->prog.documents & 63) == 0) {
            b->prog.bytes_read = *bytes_before + tdm_parser_bytes(p);
            rc = report(b, 0);
        }
    }
    if (p)
        *bytes_before += tdm_parser_bytes(p);
    tdm_parser_close(p);
    return rc;
}

/* ---- the chunker's deliveries (threads > 1), on the reading thread */

static int chunk_doc(void *user, uint32_t doclen, const char *name, tdm_err *err)
{
    builder *b = user;
    b->doc++;
    return tdm_iwriter_add_doc(b->w, doclen, name, err);
}

static int chunk_run(void *user, char *path, tdm_err *err)
{
    builder *b = user;
    char **runs = realloc(b->runs, (b->nruns + 1) * sizeof *runs);
    if (!runs) {
        drop_run(path);
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    }
    b->runs = runs;
    b->runs[b->nruns++] = path;
    b->prog.runs = (uint32_t)b->nruns;
    if (b->t && b->t->after_run)
        b->t->after_run(b->t->user, b->nruns);
    return TDM_OK;
}

static char *chunk_run_path(void *user) { return new_run_path(user); }

static int chunk_direct(void *user, const char *name, const char *text, size_t len,
                        tdm_err *err)
{
    (void)err; /* add_doc reports into b->err, the same */
    return add_doc(user, name, text, len);
}

/* ---- lists to the writer, encoded on every thread (threads > 1) */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int batch_flush(builder *b, tdm_err *err)
{
    lbatch *l = &b->lb;
    if (!l->n)
        return TDM_OK;
    tdm_iw_list *lists = malloc(l->n * sizeof *lists);
    if (!lists)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < l->n; i++) {
        const lbatch_item *it = &l->it[i];
        lists[i] = (tdm_iw_list){l->terms + it->term, it->len, l->post + it->post,
                                 l->post + it->post + it->n, it->n};
    }
    int rc = tdm_iwriter_add_lists(b->w, lists, l->n, b->threads, err);
    free(lists);
    l->n = l->tlen = l->plen = 0;
    return rc;
}

/* Copies a list into the batch, encoding the batch first when it is full;
 * a list larger than the batch goes alone, uncopied. */
static int batch_add(builder *b, const char *term, size_t len, const uint32_t *docids,
                     const uint32_t *freqs, size_t n, tdm_err *err)
{
    lbatch *l = &b->lb;
    int rc = l->n && (l->plen + 2 * n > l->max_post || l->n >= 65536) ? batch_flush(b, err)
                                                                       : TDM_OK;
    if (rc || 2 * n > l->max_post)
        return rc ? rc : tdm_iwriter_add_list(b->w, term, len, docids, freqs, n, err);
    if (grow((void **)&l->it, &l->cap, l->n + 1, sizeof *l->it) ||
        grow((void **)&l->terms, &l->tcap, l->tlen + len, 1) ||
        grow((void **)&l->post, &l->pcap, l->plen + 2 * n, 4))
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    l->it[l->n++] = (lbatch_item){l->tlen, len, l->plen, n};
    memcpy(l->terms + l->tlen, term, len);
    memcpy(l->post + l->plen, docids, n * 4);
    memcpy(l->post + l->plen + n, freqs, n * 4);
    l->tlen += len;
    l->plen += 2 * n;
    return TDM_OK;
}

static int to_writer(void *user, const char *term, size_t len, const uint32_t *docids,
                     const uint32_t *freqs, size_t n, tdm_err *err)
{
    builder *b = user;
    b->prog.terms_done++;
    if ((b->prog.terms_done & 1023) == 0 && report(b, 0) != TDM_OK)
        return TDM_ERR_CANCELLED;
    if (b->threads > 1)
        return batch_add(b, term, len, docids, freqs, n, err);
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
    if (!rc)
        rc = batch_flush(b, b->err);
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

/* Names the run files' prefix, and removes what killed builds left in the
 * run directory (the writer does the same next to the output). */
static int run_files(builder *b, const char *out_path)
{
    const char *dir = b->o->tmp_dir;
    const char *base = strrchr(out_path, '/');
    size_t len = (dir ? strlen(dir) : 0) + strlen(out_path) + 32;
    if (!(b->run_prefix = malloc(len)))
        return tdm_err_set(b->err, TDM_ERR_NOMEM, "out of memory");
    snprintf(b->run_prefix, len, "%s%s%s", dir ? dir : "", dir ? "/" : "",
             dir ? (base ? base + 1 : out_path) : out_path);
    if (dir)
        tdm_cleanup_stale(b->run_prefix, NULL, 0);
    return TDM_OK;
}

/* Splits the budget for threads > 1: threads + 1 chunks of text of C bytes
 * and threads inverters of about 2C (postings take about 1.3 bytes a byte
 * of text) less the 1 MB buffer of the run file each writes, so that all
 * of them together stay within it; the encoding batch later takes an
 * eighth. */
static int open_chunker(builder *b, const char *const *stops, size_t nstops)
{
    size_t t = b->threads, chunk = b->budget / (3 * t + 1);
    if (chunk < (64 << 10))
        chunk = 64 << 10;
    size_t rest = b->budget > (t + 1) * chunk ? b->budget - (t + 1) * chunk : 0;
    tdm_chunker_config cfg = {
        .threads = b->threads, .chunk_bytes = chunk,
        .worker_budget = rest / t > (2u << 20) ? rest / t - (1u << 20) : rest / t / 2,
        .stemmer = b->vector ? "none" : b->o->stemmer, .stopwords = stops,
        .nstopwords = nstops, .vector = b->vector,
        .new_run = chunk_run_path, .on_doc = chunk_doc, .on_run = chunk_run,
        .direct = chunk_direct, .user = b};
    b->lb.max_post = b->budget / 32 > (1 << 16) ? b->budget / 32 : 1 << 16;
    return tdm_chunker_open(&cfg, &b->ck, b->err);
}

static int setup(builder *b, const char *out_path)
{
    const tdm_index_build_options *o = b->o;
    char **stops = NULL;
    size_t nstops = 0;
    /* vectors: terms as they are, nothing stopped or stemmed */
    const char *stemmer = b->vector ? "none" : o->stemmer ? o->stemmer : "english";
    int rc = o->stopwords && !b->vector ? tdm_stopwords_load(o->stopwords, &stops, &nstops,
                                                              b->err) : 0;
    if (!rc)
        rc = tdm_tokenizer_open(stemmer, (const char *const *)stops, nstops, &b->tok, b->err);
    tdm_iwriter_options wo = {o->codec, o->k1, o->b, stemmer, (const char *const *)stops,
                              nstops, 1, b->vector, b->quant.kind, b->quant.bits,
                              b->quant.scale, b->quant.max};
    if (!rc)
        rc = run_files(b, out_path);
    if (!rc)
        rc = tdm_iwriter_open(out_path, &wo, &b->w, b->err);
    if (!rc)
        rc = tdm_inverter_new(&b->inv, b->err);
    size_t mb = o->memory_mb ? o->memory_mb : 512;
    b->budget = mb > SIZE_MAX >> 21 ? SIZE_MAX >> 1 : mb << 20;
    if (b->t && b->t->budget_bytes)
        b->budget = b->t->budget_bytes;
    b->fanin = b->t && b->t->fanin >= 2 ? b->t->fanin : TDM_BUILD_FANIN;
    b->threads = o->threads ? o->threads : tdm_ncpus();
    if (b->threads > b->budget / TDM_BUILD_THREAD_MIN)   /* each a useful share */
        b->threads = b->budget / TDM_BUILD_THREAD_MIN ? (unsigned)(b->budget / TDM_BUILD_THREAD_MIN) : 1;
    if (!rc && b->threads > 1)
        rc = open_chunker(b, (const char *const *)stops, nstops);
    free(stops);
    return rc;
}

/* The linear rule's largest weight, from a first pass over the inputs. */
static int scan_max(builder *b, const char *const *inputs, size_t ninputs)
{
    tdm_quant scan = {.kind = TDM_QUANT_SCAN};
    double m = 0;
    int rc = TDM_OK;
    for (size_t i = 0; rc == TDM_OK && i < ninputs; i++) {
        if (!strcmp(inputs[i], "-"))
            return tdm_err_set(b->err, TDM_ERR_INVALID_ARG, "quantize linear:%u reads its "
                               "inputs twice (for the largest weight), which stdin cannot be: "
                               "give the largest weight (linear:%u:M) or a file", b->quant.bits,
                               b->quant.bits);
        tdm_parser *p = NULL;
        const char *name, *text;
        size_t len;
        rc = tdm_parser_open(inputs[i], b->o->format, &p, b->err);
        if (rc == TDM_OK) {
            tdm_parser_allow_empty(p, 1);
            tdm_parser_set_quant(p, &scan);
            rc = same_kind(b, p, inputs[i]);
        }
        while (rc == TDM_OK && (rc = tdm_parser_next(p, &name, &text, &len, b->err)) == 1)
            rc = TDM_OK;
        if (p && tdm_parser_max_weight(p) > m)
            m = tdm_parser_max_weight(p);
        tdm_parser_close(p);
    }
    if (rc == TDM_OK && !(m > 0))
        return tdm_err_set(b->err, TDM_ERR_FORMAT, "quantize linear:%u: no weight above 0 in "
                           "the inputs", b->quant.bits);
    if (rc == TDM_OK)
        tdm_quant_set_max(&b->quant, m);
    return rc;
}

/* Whether the build reads JSON vectors (the format, or the first input's
 * guess), and their rule, completed by a first pass where it needs one. */
static int vector_kind(builder *b, const char *const *inputs, size_t ninputs)
{
    const tdm_index_build_options *o = b->o;
    char why[256];
    const char *spec = o->quantize;
    if (tdm_quant_parse(spec, &b->quant, why, sizeof why))
        return tdm_err_set(b->err, TDM_ERR_INVALID_ARG, "%s", why);
    b->vector = o->format == TDM_BUILD_JSON_VECTOR;
    if (o->format == TDM_BUILD_AUTO && strcmp(inputs[0], "-") != 0) {
        tdm_parser *p = NULL;
        int rc = tdm_parser_open(inputs[0], TDM_BUILD_AUTO, &p, b->err);
        if (rc)
            return rc;
        b->vector = tdm_parser_format(p) == TDM_BUILD_JSON_VECTOR;
        tdm_parser_close(p);
    }
    if (spec && !b->vector)
        return tdm_err_set(b->err, TDM_ERR_INVALID_ARG, "quantize '%s' applies to JSON vector "
                           "collections only (format jsonvector)", spec);
    if (b->vector && b->quant.kind == TDM_QUANT_LINEAR && b->quant.max == 0)
        return scan_max(b, inputs, ninputs);
    return TDM_OK;
}

static int build_files(const tdm_index_build_options *o, const tdm_build_tuning *t,
                       const char *const *inputs, size_t ninputs, const char *out_path,
                       tdm_err *err);

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
    const tdm_index_build_options *o = opts ? opts : &dflt;
    if (ninputs == 0 || !out_path)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "no inputs or no output path");
    if (o->format < TDM_BUILD_AUTO || o->format > TDM_BUILD_JSON_VECTOR)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "unknown input format %d", o->format);
    /* Before anything is opened: the output must be replaceable and no input
     * (a file given, or one under a directory given). */
    int guard = tdm_output_check(out_path, inputs, ninputs, err);
    if (guard == TDM_OK)
        guard = tdm_output_check(out_path, &o->stopwords, 1, err);
    char **files = NULL;
    size_t nfiles = 0;
    if (guard == TDM_OK)
        guard = tdm_build_inputs(inputs, ninputs, out_path, &files, &nfiles, err);
    if (guard == TDM_OK)
        guard = tdm_output_check(out_path, (const char *const *)files, nfiles, err);
    if (guard == TDM_OK)
        guard = build_files(o, tuning, (const char *const *)files, nfiles, out_path, err);
    tdm_build_inputs_free(files, nfiles);
    return guard;
}

/* The build proper, over files (no directory among them). */
static int build_files(const tdm_index_build_options *o, const tdm_build_tuning *t,
                       const char *const *inputs, size_t ninputs, const char *out_path,
                       tdm_err *err)
{
    builder b = {.o = o, .err = err, .t = t};
    b.start = b.last_report = now();
    for (size_t i = 0; i < ninputs; i++) {
        struct stat st;
        if (strcmp(inputs[i], "-") != 0 && stat(inputs[i], &st) == 0)
            b.prog.bytes_total += (uint64_t)st.st_size;
    }
    int rc = vector_kind(&b, inputs, ninputs);
    if (rc == TDM_OK)
        rc = setup(&b, out_path);
    uint64_t bytes = 0;
    for (size_t i = 0; rc == TDM_OK && i < ninputs; i++)
        rc = read_input(&b, inputs[i], &bytes);
    if (rc == TDM_OK && b.ck)
        rc = tdm_chunker_finish(b.ck, err);
    tdm_chunker_free(b.ck);   /* its buffers go before the merge */
    b.ck = NULL;
    b.prog.bytes_read = bytes;
    if (rc == TDM_OK)
        rc = finish(&b);
    for (size_t i = 0; i < b.nruns; i++)
        drop_run(b.runs[i]);
    free(b.runs);
    free(b.run_prefix);
    free(b.lb.it);
    free(b.lb.terms);
    free(b.lb.post);
    tdm_inverter_free(b.inv);
    tdm_iwriter_free(b.w);   /* removes the temporary file unless finished */
    tdm_tokenizer_free(b.tok);
    return rc;
}
