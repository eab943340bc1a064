/* tdm_search_wait_ready (tandem.h): the uploads tdm_search_open started,
 * waited for. */
#include "search.h"
#include "tandem.h"

/* Waits for device sd's resident index (its last copy's event, retained by
 * the resident struct): TDM_OK, or the upload's failure. */
static int wait_one(const tdm_sdev *sd, tdm_err *err)
{
    if (!sd->res.ready)
        return TDM_OK;
    cl_event e = sd->res.ready;
    cl_int rc = clWaitForEvents(1, &e);
    return rc == CL_SUCCESS ? TDM_OK : tdm_cl_fail(err, rc, "clWaitForEvents (index upload)");
}

TDM_API int tdm_search_wait_ready(tdm_search *s)
{
    tdm_api_enter();
    if (!s)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_wait_ready: search handle is NULL");
    tdm_err e = {0};
    int rc = TDM_OK;
    for (int i = 0; rc == TDM_OK && i < s->ndev; i++)
        rc = wait_one(&s->dev[i], &e);
    for (int p = 0; rc == TDM_OK && p < s->nparts; p++) /* partitioned: each partition's */
        for (int i = 0; rc == TDM_OK && i < s->parts[p]->ndev; i++)
            rc = wait_one(&s->parts[p]->dev[i], &e);
    return tdm_api_result(rc, &e);
}
