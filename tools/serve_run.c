/* Parsed requests of `tandem serve` to the engine and back to JSON
 * (serve.h). A /search request is one tdm_search_text/terms call in the
 * connection's thread, so that simultaneous requests meet in the
 * scheduler's lanes and share launches; a /search/batch request goes to
 * tdm_search_batch, one call per set of options it holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "search_json.h"
#include "serve.h"

/* The HTTP status of a failed search: the caller's fault (4xx) or the
 * server's (5xx; 503 for a device that failed or is out of memory, which
 * may pass). */
static int http_status(int rc)
{
    switch (rc) {
    case TDM_ERR_INVALID_ARG:
    case TDM_ERR_LIMIT:
    case TDM_ERR_NOT_FOUND:
        return 400;
    case TDM_ERR_NOMEM:
    case TDM_ERR_NO_DEVICE:
    case TDM_ERR_OPENCL:
    case TDM_ERR_DEVICE_MEMORY:
    case TDM_ERR_TIMEOUT:
        return 503;
    default:
        return 500;
    }
}

static json_t *error_json(int status, const char *msg)
{
    return json_pack("{s:o, s:i}", "error", tdm_cli_json_str(msg ? msg : "unknown error"),
                     "status", status);
}

/* ---- the local backend: the process's search handle */

static int local_search(void *ctx, const tdm_search_query *q, const tdm_search_options *o,
                        tdm_search_result **out, char *err, size_t errlen)
{
    tdm_serve *sv = ctx;
    int rc = q->text ? tdm_search_text(sv->s, q->text, o, out)
                     : tdm_search_terms(sv->s, q->terms, q->nterms, o, out);
    if (rc != TDM_OK)
        snprintf(err, errlen, "%s", tdm_last_error());
    return rc;
}

static int local_batch(void *ctx, const tdm_search_query *qs, size_t n,
                       const tdm_search_options *o, tdm_search_result **out, char *err,
                       size_t errlen)
{
    tdm_serve *sv = ctx;
    int rc = tdm_search_batch(sv->s, qs, n, o, out);
    if (rc != TDM_OK)
        snprintf(err, errlen, "%s", tdm_last_error());
    return rc;
}

static void local_release(void *ctx, tdm_search_result *r)
{
    (void)ctx;
    tdm_search_result_free(r);
}

tdm_serve_backend tdm_serve_backend_local(tdm_serve *sv)
{
    return (tdm_serve_backend){.ctx = sv, .search = local_search, .batch = local_batch,
                               .release = local_release};
}

/* ---- requests */

static json_t *run_one(tdm_serve *sv, const tdm_serve_query *q, int *status, double *engine_s,
                       char *err, size_t errlen)
{
    tdm_search_result *r = NULL;
    tdm_search_query sq = {q->text, q->terms, q->nterms};
    double t = tdm_cli_now();
    int rc = sv->be.search(sv->be.ctx, &sq, &q->o, &r, err, errlen);
    *engine_s += tdm_cli_now() - t;
    if (rc != TDM_OK) {
        *status = http_status(rc);
        tdm_serve_metrics_query(sv->metrics, NULL);
        return NULL;
    }
    tdm_serve_metrics_query(sv->metrics, r);
    json_t *j = tdm_cli_result_json(sv->e, q->text, r);
    sv->be.release(sv->be.ctx, r);
    if (!j) {
        *status = 503;
        snprintf(err, errlen, "out of memory");
    }
    return j;
}

static int same_options(const tdm_search_options *a, const tdm_search_options *b)
{
    return a->algorithm == b->algorithm && a->k == b->k && a->scoring == b->scoring &&
           a->k1 == b->k1 && a->b == b->b && a->device == b->device && a->ranges == b->ranges &&
           a->variant == b->variant && a->policy == b->policy &&
           a->deadline_ms == b->deadline_ms && a->migrate == b->migrate;
}

/* Runs the queries of req with the options of query `first` (those not yet
 * answered, done[i] 0) as one tdm_search_batch, setting out[i]. */
static void run_group(tdm_serve *sv, const tdm_serve_request *req, size_t first, char *done,
                      json_t **out, double *engine_s)
{
    const tdm_search_options *o = &req->q[first].o;
    size_t n = 0, *idx = malloc(req->n * sizeof *idx);
    tdm_search_query *qs = malloc(req->n * sizeof *qs);
    tdm_search_result **rs = calloc(req->n, sizeof *rs);
    for (size_t i = first; idx && qs && rs && i < req->n; i++) {
        if (done[i] || !same_options(o, &req->q[i].o))
            continue;
        idx[n] = i;
        qs[n] = (tdm_search_query){req->q[i].text, req->q[i].terms, req->q[i].nterms};
        n++;
    }
    char why[1024] = "out of memory";
    double t = tdm_cli_now();
    int rc = n ? sv->be.batch(sv->be.ctx, qs, n, o, rs, why, sizeof why) : TDM_ERR_NOMEM;
    *engine_s += tdm_cli_now() - t;
    for (size_t j = 0; j < n; j++) {
        size_t i = idx[j];
        tdm_search_result *r = rc == TDM_OK ? rs[j] : NULL;
        done[i] = 1;
        if (!r || r->status != TDM_OK) {
            tdm_serve_metrics_query(sv->metrics, NULL);
            out[i] = r ? error_json(http_status(r->status), r->error)
                       : error_json(http_status(rc), why);
        } else {
            tdm_serve_metrics_query(sv->metrics, r);
            out[i] = tdm_cli_result_json(sv->e, req->q[i].text, r);
        }
        sv->be.release(sv->be.ctx, r);
    }
    if (!n)
        done[first] = 1, out[first] = error_json(503, why);
    free(idx);
    free(qs);
    free(rs);
}

static json_t *run_batch(tdm_serve *sv, const tdm_serve_request *req, int *status,
                         double *engine_s, char *err, size_t errlen)
{
    char *done = calloc(req->n, 1);
    json_t **out = calloc(req->n, sizeof *out);
    json_t *list = json_array();
    for (size_t i = 0; done && out && i < req->n; i++)
        if (!done[i])
            run_group(sv, req, i, done, out, engine_s);
    for (size_t i = 0; done && out && i < req->n; i++) {
        json_t *v = out[i] ? out[i] : json_null();
        if (!list)
            json_decref(v);
        else if (json_array_append_new(list, v)) /* which frees v */
            json_decref(list), list = NULL;
    }
    json_t *j = NULL;
    if (done && out && list)
        j = json_pack("{s:o}", "results", list);
    else
        json_decref(list);
    if (!j) {
        *status = 503;
        snprintf(err, errlen, "out of memory");
    }
    free(done);
    free(out);
    return j;
}

json_t *tdm_serve_run(tdm_serve *sv, const tdm_serve_request *req, int batch, int *status,
                      double *engine_s, char *err, size_t errlen)
{
    *status = 200;
    *engine_s = 0;
    return batch ? run_batch(sv, req, status, engine_s, err, errlen)
                 : run_one(sv, &req->q[0], status, engine_s, err, errlen);
}
