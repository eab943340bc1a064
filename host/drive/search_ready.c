/* tdm_search_wait_ready (tandem.h): the uploads tdm_search_open started,
 * waited for. */
#include "search.h"
#include "tandem.h"

TDM_API int tdm_search_wait_ready(tdm_search *s)
{
    tdm_api_enter();
    if (!s)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_wait_ready: search handle is NULL");
    tdm_err e = {0};
    int rc = TDM_OK;
    for (int i = 0; rc == TDM_OK && i < s->ndev; i++)
        rc = tdm_resident_wait(&s->dev[i].res, &e);
    for (int p = 0; rc == TDM_OK && p < s->nparts; p++) /* partitioned: each partition's */
        for (int i = 0; rc == TDM_OK && i < s->parts[p]->ndev; i++)
            rc = tdm_resident_wait(&s->parts[p]->dev[i].res, &e);
    return tdm_api_result(rc, &e);
}
