/* Batches of queries on the devices (search.h, tdm_search_dev_batches):
 * the runnable queries of a call grouped by device and by what their
 * launches must share, each group run as one device batch. */
#include <stdlib.h>

#include "search.h"

/* Errors that end the whole batch (the others belong to one query). */
static int fatal(int rc)
{
    return rc == TDM_ERR_NOMEM || rc == TDM_ERR_OPENCL || rc == TDM_ERR_DEVICE_MEMORY ||
           rc == TDM_ERR_NO_DEVICE || rc == TDM_ERR_BUILD || rc == TDM_ERR_INTERNAL;
}

int tdm_search_dev_batches(const struct tdm_search *s, tdm_sbq *items, size_t n, tdm_err *err)
{
    for (size_t i = 0; i < n; i++) {
        tdm_sbq *it = &items[i];
        if (!it->run || it->rc)
            continue;
        int rc = tdm_search_dev_run(&s->dev[it->pl.dev], &it->p, s->ndocs, &it->pl, it->salg,
                                    it->k, &it->so, &it->err);
        it->batch = 1;
        if (rc && fatal(rc))
            return tdm_err_copy(err, &it->err);
        it->rc = rc;
    }
    return TDM_OK;
}
