/* Which handle an index gets on an engine (partition.h, tdm_part_wanted),
 * and memory: a shard's device sections estimated before any shard is
 * made, and whether the whole index and a shard fit a device together, as
 * a split handle holds them (partition_priv.h). */
#include <string.h>
#include <strings.h>

#include "engine/engine.h"
#include "index/index_priv.h"
#include "partition.h"
#include "partition_priv.h"
#include "resident/resident.h"
#include "runtime/settings.h"

/* Whether engine device i runs a GPU lane: its item of the test switch
 * TANDEM_LANE_KINDS, else its type, as sched.c's lane_kinds reads them (a
 * malformed switch is refused there, when the scheduler opens). */
static int device_gpu(tdm_engine *engine, int i)
{
    const tdm_device *d = tdm_engine_device(engine, i);
    const tdm_device *d0 = tdm_engine_device(engine, 0);
    const char *p = d0->settings && d0->settings->lane_kinds ? d0->settings->lane_kinds : "";
    for (int k = 0; k < i && *p; k++) {
        p += strcspn(p, ",");
        p += *p == ',';
    }
    if (*p && !strncasecmp(p, "gpu", 3))
        return 1;
    if (*p && !strncasecmp(p, "cpu", 3))
        return 0;
    return d->info.type != TDM_DEVICE_CPU;
}

/* A shard's device sections (size[0 .. 7]) estimated from the whole
 * index's before any shard is made (making them costs a decode and an
 * encode of every list): the lists' sections (ARENA and the block table)
 * split n ways with an eighth more (the split is by document length, not
 * postings), plus a row a list in the block table and 64 bytes a list in
 * the arena (the block the cut falls in, a list's parameters), at most the
 * whole's; the descriptors, the codecs and DOCLENS whole (every shard keeps
 * them). An estimate: a shard that turns out larger than its budget takes
 * the list cache, as any index does. */
static void shard_sizes(const tdm_ireader *r, int n, uint64_t *size)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t rows = in->block_entries ? in->block_entries : 1;
    for (unsigned s = 0; s <= TDM_SEC_DOCLENS; s++) {
        uint64_t v = in->section_size[s], share = v / (uint64_t)n + v / (8u * (uint64_t)n);
        size[s] = v;
        if (s == TDM_SEC_ARENA)
            size[s] = share + in->nterms * 64; /* a list's parameters, a cut block's padding */
        else if (s >= TDM_SEC_BLOCK_LAST && s <= TDM_SEC_BLOCK_MAX)
            size[s] = share + in->nterms * (v / rows); /* a cut block's row */
        if (size[s] > v)
            size[s] = v;
    }
}

int tdm_part_wanted(tdm_engine *engine, const tdm_index *index)
{
    int n = tdm_engine_device_count(engine);
    tdm_device *d0 = tdm_engine_device(engine, 0);
    int mode = d0->settings ? d0->settings->partition : TDM_PARTITION_AUTO;
    if (n < 2 || mode == TDM_PARTITION_OFF)
        return 0;
    if (mode == TDM_PARTITION_ON || mode == TDM_PARTITION_SPLIT)
        return mode;
    if (n > TDM_SCHED_MAX_LANES)
        n = TDM_SCHED_MAX_LANES;
    /* auto: GPUs only (a CPU beside them would hold a partition every
       query waits for, and cpu-only or gpu-only would exclude a
       partition's only lane) */
    for (int i = 0; i < n; i++)
        if (!device_gpu(engine, i))
            return 0;
    /* ... when the whole index does not fit one of them (else each holds
       it whole, and its lanes share the queries) ... */
    const tdm_ireader *r = tdm_index_ireader(index);
    int whole = 1;
    for (int i = 0; i < n; i++)
        whole &= tdm_resident_fits_full(r, tdm_engine_device(engine, i));
    if (whole)
        return 0;
    /* ... and a shard fits every one (else the list cache, which serves
       an index of any size, on each device) */
    uint64_t size[TDM_SEC_DOCLENS + 1];
    shard_sizes(r, n, size);
    for (int i = 0; i < n; i++)
        if (!tdm_resident_fits_sizes(size, tdm_engine_device(engine, i)))
            return 0;
    return TDM_PARTITION_ON;
}

int tdm_part_split_fits(const tdm_ireader *r, const uint64_t *size, int est, tdm_device *d,
                        tdm_err *err)
{
    uint64_t whole = tdm_resident_bytes_needed(r), shard = 0;
    if (tdm_resident_fits_full(r, d) && tdm_resident_fits_beside(size, whole, d))
        return TDM_OK;
    for (unsigned s = 0; s <= TDM_SEC_DOCLENS; s++)
        shard += size[s];
    return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                       "partition split: %s: the whole index (%llu bytes) and a shard "
                       "(%s%llu bytes) do not fit %s together (%llu bytes of memory, budget "
                       "%llu, 0: none): use partition on (a shard a device) or off (the whole "
                       "index on each), TANDEM_PARTITION or the engine option "
                       "(docs/PARTITION.md)",
                       tdm_ireader_path(r), (unsigned long long)whole, est ? "about " : "",
                       (unsigned long long)shard, d->info.name,
                       (unsigned long long)d->info.global_mem_bytes,
                       (unsigned long long)(d->settings ? d->settings->device_memory : 0));
}

int tdm_part_split_fits_est(tdm_engine *engine, const tdm_ireader *r, int n, tdm_err *err)
{
    uint64_t size[TDM_SEC_DOCLENS + 1];
    shard_sizes(r, n, size);
    for (int i = 0; i < n; i++) {
        int rc = tdm_part_split_fits(r, size, 1, tdm_engine_device(engine, i), err);
        if (rc)
            return rc;
    }
    return TDM_OK;
}
