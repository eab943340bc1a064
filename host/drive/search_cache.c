/* tdm_search_cache_stats (tandem.h): a device's list cache, as counted by
 * resident/listcache.h. */
#include <string.h>

#include "resident/listcache.h"
#include "search.h"
#include "tandem.h"

TDM_API int tdm_search_cache_stats(const tdm_search *s, int device, tdm_list_cache_stats *out)
{
    tdm_api_enter();
    if (!s || !out)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_search_cache_stats: %s is NULL",
                            !s ? "search handle" : "out");
    memset(out, 0, sizeof *out);
    const tdm_sdev *sd = NULL;
    for (int i = 0; i < s->ndev; i++)
        if (s->dev[i].index == device)
            sd = &s->dev[i];
    for (int p = 0; p < s->nparts; p++) /* partitioned: the partition's device */
        if (s->parts[p]->device_base == device)
            sd = &s->parts[p]->dev[0];
    if (!sd)
        return tdm_api_fail(TDM_ERR_INVALID_ARG,
                            "tdm_search_cache_stats: device %d is not one of the handle's %d",
                            device, s->ndev);
    if (!sd->res.cache)
        return TDM_OK;
    tdm_listcache_stats st;
    tdm_err e = {0};
    int rc = tdm_resident_cache_stats(&sd->res, &st, &e);
    if (rc)
        return tdm_api_fail_err(&e, rc);
    *out = (tdm_list_cache_stats){
        .cached = 1,
        .capacity_bytes = st.capacity_bytes,
        .used_bytes = st.used_bytes,
        .lists = st.lists,
        .hits = st.hits,
        .misses = st.misses,
        .bytes_hit = st.bytes_hit,
        .bytes_moved = st.bytes_moved,
        .evictions = st.evictions,
        .bytes_evicted = st.bytes_evicted,
        .streamed = st.streamed,
        .waits = st.waits,
    };
    return TDM_OK;
}
