/* The public search calls (tandem.h, tdm_search_* and the algorithm
 * names), all of them: a handle binds an index to an engine (the query
 * area's handle, host/drive/search_run.h, with this area's lanes); a query
 * is prepared once in the caller's thread and placed on a lane by the
 * scheduler (sched.h), whose lane runs it. */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "partition.h"
#include "index/index_priv.h"
#include "drive/search.h"
#include "drive/search_run.h"
#include "sched.h"
#include "tandem.h"

static const char *const algo_names[] = {"auto", "or", "and", "and_or", "wand", "bmw", "maxscore"};

TDM_API const char *tdm_algorithm_name(int a)
{
    return a >= 0 && a < (int)(sizeof algo_names / sizeof *algo_names) ? algo_names[a] : NULL;
}

TDM_API int tdm_algorithm_parse(const char *name, int *algorithm)
{
    tdm_api_enter();
    if (!name || !algorithm)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_algorithm_parse: %s is NULL",
                            !name ? "name" : "algorithm");
    for (int a = 0; a < (int)(sizeof algo_names / sizeof *algo_names); a++)
        if (strcasecmp(name, algo_names[a]) == 0) {
            *algorithm = a;
            return TDM_OK;
        }
    if (strcasecmp(name, "and-or") == 0 || strcasecmp(name, "andor") == 0) {
        *algorithm = TDM_ALGO_AND_OR;
        return TDM_OK;
    }
    if (strcasecmp(name, "block-max-wand") == 0) {
        *algorithm = TDM_ALGO_BMW;
        return TDM_OK;
    }
    return tdm_api_fail(TDM_ERR_INVALID_ARG,
                        "algorithm '%.100s': expected auto, or, and, and_or, wand, bmw or maxscore",
                        name);
}

TDM_API void tdm_search_options_init(tdm_search_options *o)
{
    if (o)
        tdm_search_options_defaults(o);
}

/* ---- the handle */

TDM_API int tdm_search_open(tdm_engine *engine, const tdm_index *index, tdm_search **out)
{
    tdm_api_enter();
    if (!out)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_open: out is NULL");
    *out = NULL;
    if (!engine || !index)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_open: %s is NULL",
                            !engine ? "engine" : "index");
    tdm_err e = {0};
    tdm_ireader *const *shards;
    if (tdm_index_shards(index, &shards)) /* a split's files: a partition each */
        return tdm_api_result(tdm_part_open_shards(engine, index, out, &e), &e);
    int part = tdm_part_wanted(engine, index); /* docs/PARTITION.md */
    if (part == TDM_PARTITION_SPLIT) /* whole, and split across the devices */
        return tdm_api_result(tdm_part_open_split(engine, index, out, &e), &e);
    if (part) /* split across the devices */
        return tdm_api_result(tdm_part_open(engine, index, out, &e), &e);
    int rc = tdm_search_handle_open(engine, index, out, &e);
    if (rc == TDM_OK && (rc = tdm_sched_open(*out, &(*out)->sched, &e)) != TDM_OK) {
        tdm_search_handle_close(*out);
        *out = NULL;
    }
    return tdm_api_result(rc, &e);
}

TDM_API void tdm_search_close(tdm_search *s)
{
    tdm_api_enter();
    if (!s)
        return;
    if (s->part) {
        tdm_part_close(s);
        return;
    }
    if (tdm_sched_close(s->sched))
        return; /* a run stuck in its device may still read the handle: it stays */
    s->sched = NULL;
    tdm_search_handle_close(s);
}

static int search(tdm_search *s, const tdm_search_query *q, const tdm_search_options *opts,
                  tdm_search_result **out)
{
    tdm_err e = {0};
    int rc = s->part ? tdm_part_search(s, q, opts, out, &e)
                     : tdm_sched_search(s->sched, q, opts, out, &e);
    return tdm_api_result(rc, &e);
}

TDM_API int tdm_search_text(tdm_search *s, const char *text, const tdm_search_options *opts,
                            tdm_search_result **out)
{
    tdm_api_enter();
    if (!out)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_text: out is NULL");
    *out = NULL;
    if (!s || !text)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_text: %s is NULL",
                            !s ? "search handle" : "text");
    tdm_search_query q = {text, NULL, 0};
    return search(s, &q, opts, out);
}

TDM_API int tdm_search_terms(tdm_search *s, const tdm_search_term *terms, size_t n,
                             const tdm_search_options *opts, tdm_search_result **out)
{
    tdm_api_enter();
    if (!out)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_terms: out is NULL");
    *out = NULL;
    if (!s || (!terms && n))
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_terms: %s is NULL",
                            !s ? "search handle" : "terms");
    tdm_search_query q = {NULL, terms, n};
    return search(s, &q, opts, out);
}

TDM_API int tdm_search_batch(tdm_search *s, const tdm_search_query *queries, size_t n,
                             const tdm_search_options *opts, tdm_search_result **results)
{
    tdm_api_enter();
    if (!results && n)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_batch: results is NULL");
    for (size_t i = 0; i < n; i++)
        results[i] = NULL;
    if (!s || (!queries && n))
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_batch: %s is NULL",
                            !s ? "search handle" : "queries");
    tdm_err e = {0};
    tdm_search_options o;
    int rc = tdm_search_options_check(opts, &o, &e);
    if (rc == TDM_OK && (o.policy < TDM_POLICY_DEFAULT || o.policy > TDM_POLICY_DIRECT))
        rc = tdm_err_set(&e, TDM_ERR_INVALID_ARG, "search options: policy = %d is unknown",
                         o.policy);
    if (rc == TDM_OK)
        rc = s->part ? tdm_part_batch(s, queries, n, &o, results, &e)
                     : tdm_sched_batch_search(s->sched, queries, n, &o, results, &e);
    return tdm_api_result(rc, &e);
}

TDM_API void tdm_sched_stats_init(tdm_sched_stats *st)
{
    if (!st)
        return;
    memset(st, 0, sizeof *st);
    st->struct_size = sizeof *st;
}

TDM_API int tdm_search_stats(tdm_search *s, tdm_sched_stats *st)
{
    tdm_api_enter();
    if (!s || !st)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_stats: %s is NULL",
                            !s ? "search handle" : "stats");
    if (st->struct_size < offsetof(tdm_sched_stats, policy) || st->struct_size > sizeof *st)
        return tdm_api_fail(TDM_ERR_INVALID_ARG,
                            "tdm_search_stats: struct_size %zu is not that of a tdm_sched_stats "
                            "(%zu): initialise it with tdm_sched_stats_init",
                            st->struct_size, sizeof *st);
    if (s->part)
        tdm_part_stats(s, st);
    else
        tdm_sched_stats_get(s->sched, st);
    return TDM_OK;
}

TDM_API void tdm_search_result_free(tdm_search_result *r)
{
    tdm_api_enter();
    tdm_search_result_release(r);
}
