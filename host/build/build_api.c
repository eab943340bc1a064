/* The public long operations: tdm_index_build and tdm_index_import, with
 * their options (defaults, struct_size, range checks) and cancellation. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/analyzer.h"
#include "build.h"
#include "import/ciff.h"
#include "codec/codec.h"
#include "import/collection.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "index/format.h"
#include "import/pisa.h"
#include "tandem.h"

/* Copies the caller's options (struct_size bytes of them) over `dflt`, which
 * already holds the defaults. */
static int copy_options(const void *opts, size_t caller_size, void *dflt, size_t size,
                        size_t min_size, const char *what)
{
    if (!opts)
        return TDM_OK;
    if (caller_size < min_size || caller_size > size)
        return tdm_api_fail(TDM_ERR_INVALID_ARG,
                            "%s: struct_size %zu is not that of the options struct (%zu): "
                            "initialise it with %s_init",
                            what, caller_size, size, what);
    memcpy(dflt, opts, caller_size);
    return TDM_OK;
}

/* BM25 and codec checks shared by build and import. */
static int check_bm25_codec(const char *what, double k1, double b, const char *codec)
{
    if (!(k1 >= 0 && k1 <= TDM_BM25_K1_MAX))
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: k1 = %g: must lie in [0, %g]", what, k1,
                            TDM_BM25_K1_MAX);
    if (!(b >= 0 && b <= 1))
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: b = %g: must lie in [0, 1]", what, b);
    if (codec && !tdm_codec_by_name(codec))
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: unknown codec '%s'", what, codec);
    return TDM_OK;
}

/* ---------------------------------------------------------------- build */

TDM_API void tdm_index_build_options_init(tdm_index_build_options *o)
{
    tdm_api_enter();
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->format = TDM_BUILD_AUTO;
    o->stemmer = "english";
    o->stopwords = "lucene"; /* what Anserini drops by default (stoplists.h) */
    o->codec = TDM_CODEC_DEFAULT;
    o->memory_mb = 512;
    o->k1 = TDM_IDX_DEFAULT_K1;
    o->b = TDM_IDX_DEFAULT_B;
}

static int check_build_options(const tdm_index_build_options *o)
{
    const char *what = "tdm_index_build_options";
    if (o->format < TDM_BUILD_AUTO || o->format > TDM_BUILD_JSON_VECTOR)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: format %d is not a tdm_build_format", what,
                            o->format);
    if (o->memory_mb == 0 || o->memory_mb > ((size_t)1 << 30))
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: memory_mb = %zu: must be 1 to 2^30", what,
                            o->memory_mb);
    if (o->threads > TDM_BUILD_MAX_THREADS)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "%s: threads = %u: must be 0 (every processor) "
                            "to %u", what, o->threads, TDM_BUILD_MAX_THREADS);
    return check_bm25_codec(what, o->k1, o->b, o->codec);
}

TDM_API int tdm_index_build(const char *const *inputs, size_t ninputs, const char *out_path,
                            const tdm_index_build_options *opts)
{
    tdm_api_enter();
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    int rc = copy_options(opts, opts ? opts->struct_size : 0, &o, sizeof o,
                          offsetof(tdm_index_build_options, format) + sizeof o.format,
                          "tdm_index_build_options");
    if (rc == TDM_OK)
        rc = check_build_options(&o);
    if (rc != TDM_OK)
        return rc;
    if ((!inputs && ninputs) || ninputs == 0 || !out_path)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_index_build: no inputs or no output path");
    for (size_t i = 0; i < ninputs; i++)
        if (!inputs[i])
            return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_index_build: input %zu is NULL", i);
    tdm_err e = {0};
    return tdm_api_result(tdm_build_index(inputs, ninputs, out_path, &o, &e), &e);
}

/* ---------------------------------------------------------------- import */

TDM_API void tdm_index_import_options_init(tdm_index_import_options *o)
{
    tdm_api_enter();
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->format = TDM_IMPORT_CIFF;
    o->codec = TDM_CODEC_DEFAULT;
    o->k1 = TDM_IDX_DEFAULT_K1;
    o->b = TDM_IDX_DEFAULT_B;
}

/* Wraps a source so that every list handed out may report progress and be
 * cancelled. */
typedef struct progress_src {
    tdm_coll_source inner;
    const tdm_index_import_options *o;
    tdm_index_import_progress p;
    double t0, last;
} progress_src;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int progress_list(void *self, uint64_t i, tdm_coll_list *out, tdm_err *err)
{
    progress_src *ps = self;
    double t = now();
    ps->p.lists_done = i;
    ps->p.seconds = t - ps->t0;
    if (t - ps->last >= 0.1 || i == 0) {
        ps->last = t;
        if (ps->o->progress(ps->o->progress_user, &ps->p) != 0)
            return tdm_err_set(err, TDM_ERR_CANCELLED,
                               "index import cancelled by its progress callback after %llu of "
                               "%llu lists",
                               (unsigned long long)i, (unsigned long long)ps->p.lists_total);
    }
    return ps->inner.list(ps->inner.self, i, out, err);
}

static int write_source(const tdm_coll_source *src, const char *out_path,
                        const tdm_index_import_options *o, tdm_analyzer *an, tdm_err *e)
{
    int rc = tdm_analyzer_choose(an, o->stemmer, o->stopwords, e);
    if (rc != TDM_OK)
        return rc;
    tdm_iwriter_options wo = {.codec = o->codec, .k1 = o->k1, .b = o->b, .bm25_as_given = 1,
                              .stemmer = an->stemmer,
                              .stopwords = (const char *const *)an->stops,
                              .nstopwords = an->nstops,
                              /* impacts as they are: the export's rule is not known */
                              .impact = o->impact != 0, .quant = TDM_QUANT_INTEGER};
    if (!o->progress)
        return tdm_collection_write(src, out_path, &wo, e);
    progress_src ps = {.inner = *src, .o = o, .t0 = now()};
    ps.p.lists_total = src->nlists;
    tdm_coll_source wrapped = *src;
    wrapped.list = progress_list;
    wrapped.self = &ps;
    rc = tdm_collection_write(&wrapped, out_path, &wo, e);
    if (rc == TDM_OK) { /* the final report: the index is in place, too late to cancel */
        ps.p.lists_done = src->nlists;
        ps.p.seconds = now() - ps.t0;
        (void)o->progress(o->progress_user, &ps.p);
    }
    return rc;
}

/* The output must not be the input: the CIFF file, or a file of the PISA
 * collection at basename `input` (fsutil.h's guard). */
static int check_output(const char *input, const char *out_path, int pisa, tdm_err *e)
{
    static const char *const ext[] = {"", ".docs", ".freqs", ".sizes", ".terms", ".documents"};
    int rc = TDM_OK;
    for (int k = 0; rc == TDM_OK && k < (pisa ? 6 : 1); k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s%s", input, ext[k]);
        const char *in = path;
        rc = tdm_output_check(out_path, &in, 1, e);
    }
    return rc;
}

static int import(const char *input, const char *out_path, tdm_index_import_options *o,
                  tdm_err *e)
{
    tdm_coll_source src;
    tdm_analyzer an = {0};
    int rc = check_output(input, out_path, o->format == TDM_IMPORT_PISA, e);
    if (rc != TDM_OK)
        return rc;
    if (o->format == TDM_IMPORT_CIFF) {
        tdm_ciff *c = NULL;
        rc = tdm_ciff_open(input, &c, e);
        if (rc == TDM_OK)
            rc = tdm_analyzer_parse(tdm_ciff_info_get(c)->description, input, &an, e);
        if (rc == TDM_OK) {
            tdm_ciff_source(c, &src);
            o->empty_lists = tdm_ciff_info_get(c)->empty_lists;
            rc = write_source(&src, out_path, o, &an, e);
        }
        tdm_ciff_close(c);
        tdm_analyzer_free(&an);
        return rc;
    }
    tdm_pisa *p = NULL;
    char side[4096];
    snprintf(side, sizeof side, "%s%s", input, TDM_ANALYZER_EXT);
    rc = tdm_pisa_open(input, &p, e);
    if (rc == TDM_OK)
        rc = tdm_analyzer_read_file(side, &an, e);
    if (rc == TDM_OK) {
        tdm_pisa_source(p, &src);
        rc = write_source(&src, out_path, o, &an, e);
    }
    tdm_pisa_close(p);
    tdm_analyzer_free(&an);
    return rc;
}

TDM_API int tdm_index_import(const char *input, const char *out_path,
                             tdm_index_import_options *opts)
{
    tdm_api_enter();
    tdm_index_import_options o;
    tdm_index_import_options_init(&o);
    int rc = copy_options(opts, opts ? opts->struct_size : 0, &o, sizeof o,
                          offsetof(tdm_index_import_options, format) + sizeof o.format,
                          "tdm_index_import_options");
    if (rc != TDM_OK)
        return rc;
    if (o.format != TDM_IMPORT_CIFF && o.format != TDM_IMPORT_PISA)
        return tdm_api_fail(TDM_ERR_INVALID_ARG,
                            "tdm_index_import_options: format %d is not a tdm_import_format",
                            o.format);
    if ((rc = check_bm25_codec("tdm_index_import_options", o.k1, o.b, o.codec)) != TDM_OK)
        return rc;
    if (!input || !out_path)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_index_import: input or out_path is NULL");
    tdm_err e = {0};
    o.empty_lists = 0;
    rc = import(input, out_path, &o, &e);
    if (opts && opts->struct_size >= offsetof(tdm_index_import_options, empty_lists) +
                                          sizeof opts->empty_lists)
        opts->empty_lists = o.empty_lists;
    return tdm_api_result(rc, &e);
}
