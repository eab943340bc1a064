/* A split handle's choice per single query (partition.h,
 * tdm_part_open_split; docs/PARTITION.md, "The split handle"): a query
 * whose lists hold the threshold's postings runs on every partition at
 * once and merges (partition_run.c), the rest whole on the lanes; a split
 * query a partition fails on its device runs whole, and once a
 * partition's lane is dead every query does. */
#include <string.h>

#include "engine/engine.h"
#include "partition_priv.h"
#include "runtime/settings.h"
#include "runtime/tune_table.h"
#include "sched_priv.h"

uint64_t tdm_split_threshold(tdm_engine *engine, int n)
{
    uint64_t t = tdm_settings_tuning(tdm_engine_device(engine, 0)->settings)->split_min_postings;
    if (t) /* TANDEM_SPLIT_MIN_POSTINGS */
        return t;
    for (int i = 0; i < n; i++) { /* a query splits only where every kind would */
        uint64_t v = tdm_tune_row_of(&tdm_engine_device(engine, i)->info)->split_min_postings;
        t = v > t ? v : t;
    }
    return t;
}

/* Errors of a partition's device rather than of the query: a split
 * query failing so is answered whole instead. */
static int device_fault(int rc)
{
    return rc == TDM_ERR_OPENCL || rc == TDM_ERR_BUILD || rc == TDM_ERR_NO_DEVICE ||
           rc == TDM_ERR_DEVICE_MEMORY || rc == TDM_ERR_TIMEOUT || rc == TDM_ERR_INTERNAL;
}

/* Whether some partition's lane has died (its documents have no other). */
static int part_dead(tdm_search *s)
{
    for (int p = 0; p < s->nparts; p++) {
        tdm_sched_stats st;
        memset(&st, 0, sizeof st);
        st.struct_size = sizeof st;
        tdm_sched_stats_get(s->parts[p]->sched, &st);
        if (!st.lanes[0].alive)
            return 1;
    }
    return 0;
}

/* Whether q runs on every partition: no partition's lane has died,
 * nothing asks for one lane (a pin, the direct policy, a policy that
 * excludes a partition's lane), and its lists hold split_min postings or
 * more; *nterms and *unknown then the whole index's view of it. */
static int split_wanted(tdm_search *s, const tdm_search_query *q, const tdm_search_options *o,
                        size_t *nterms, uint32_t *unknown)
{
    uint64_t postings = 0;
    tdm_err e = {0};
    int policy = o->policy ? o->policy : s->sched->policy;
    int split = !__atomic_load_n(&s->part->split_off, __ATOMIC_RELAXED) && o->device < 0 &&
                policy != TDM_POLICY_DIRECT && tdm_part_excluded(s, policy) < 0;
    /* a query the whole index cannot build fails on the lanes, as there */
    split = split && tdm_part_whole_query(s, q, nterms, unknown, &postings, &e) == TDM_OK &&
            postings >= s->part->split_min;
    tdm_err_clear(&e);
    return split;
}

int tdm_split_search(tdm_search *s, const tdm_search_query *q, const tdm_search_options *opts,
                     const tdm_search_options *o, double t0, tdm_search_result **out,
                     tdm_err *err)
{
    struct tdm_part *pt = s->part;
    size_t nterms = 0;
    uint32_t unknown = 0;
    if (split_wanted(s, q, o, &nterms, &unknown)) {
        tdm_err e = {0};
        int rc = tdm_part_run(s, q, o, nterms, unknown, t0, out, &e);
        if (rc == TDM_OK || !device_fault(rc)) {
            if (rc)
                rc = tdm_err_copy(err, &e);
            tdm_err_clear(&e);
            return rc;
        }
        tdm_err_clear(&e);
        if (part_dead(s))
            __atomic_store_n(&pt->split_off, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&pt->nfallback, 1, __ATOMIC_RELAXED);
    }
    return tdm_sched_search(s->sched, q, opts, out, err);
}
