/* The partitions' answers and counters made the whole index's
 * (partition_priv.h): the exact top-k merge of hit lists, which
 * tandem-mpi's ranks use too (partition.h, tdm_hits_merge), a merged
 * result's account of the partitions' work, and the handle's counters. */
#include <stdlib.h>
#include <string.h>

#include "drive/search.h"
#include "drive/search_run.h"
#include "partition.h"
#include "partition_priv.h"

/* ---- hits */

/* The order of every answer (and the oracle's): score descending, docid
 * ascending. */
static int better(const tdm_search_hit *a, const tdm_search_hit *b)
{
    return a->score > b->score || (a->score == b->score && a->docid < b->docid);
}

size_t tdm_hits_merge(const tdm_search_hit *const *lists, const size_t *ns, size_t m, size_t k,
                      size_t *at, tdm_search_hit *out)
{
    memset(at, 0, m * sizeof *at);
    size_t n = 0;
    for (; n < k; n++) {
        size_t best = m;
        for (size_t l = 0; l < m; l++)
            if (at[l] < ns[l] && (best == m || better(&lists[l][at[l]], &lists[best][at[best]])))
                best = l;
        if (best == m)
            break;
        out[n] = lists[best][at[best]++];
    }
    return n;
}

/* ---- a query's result */

/* out's hits: the whole index's top k from the partitions' lists. A hit
 * keeps its name from its partition's shard, which holds its own
 * documents' names (the handle's own reader may be shard 0's:
 * tdm_part_open_shards); the shards live as long as the handle. */
static int merge_hits(tdm_search_result *const *res, int n, uint32_t k, tdm_search_result *out,
                      tdm_err *err)
{
    const tdm_search_hit *lists[TDM_SCHED_MAX_LANES];
    size_t ns[TDM_SCHED_MAX_LANES], at[TDM_SCHED_MAX_LANES], total = 0;
    for (int p = 0; p < n; p++) {
        lists[p] = res[p]->hits;
        ns[p] = res[p]->n;
        total += ns[p];
    }
    size_t m = total < k ? total : k;
    out->hits = calloc(m ? m : 1, sizeof *out->hits);
    if (!out->hits)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory for %zu hits", m);
    out->n = tdm_hits_merge(lists, ns, (size_t)n, m, at, out->hits);
    return TDM_OK;
}

/* The merged result's account: the partitions' work added up, waits the
 * longest, the device the first partition's. */
static void merge_account(const tdm_search *s, tdm_search_result *const *res, int n,
                          tdm_search_result *out)
{
    out->device = s->parts[0]->device_base;
    out->partitions = (uint32_t)n;
    out->variant = res[0]->variant;
    out->policy = res[0]->policy;
    out->load_mode = res[0]->load_mode;
    out->first_device = -1;
    for (int p = 0; p < n; p++) {
        const tdm_search_result *r = res[p];
        out->ranges += r->ranges;
        out->launches += r->launches;
        out->bytes_up += r->bytes_up;
        out->bytes_down += r->bytes_down;
        out->handovers += r->handovers;
        out->steps += r->steps;
        out->migrations += r->migrations;
        out->carried_bytes += r->carried_bytes;
        out->batch = r->batch > out->batch ? r->batch : out->batch;
        if (r->queue_seconds > out->queue_seconds)
            out->queue_seconds = r->queue_seconds;
        if (r->predicted_seconds > out->predicted_seconds)
            out->predicted_seconds = r->predicted_seconds;
    }
}

int tdm_part_merge(const tdm_search *s, tdm_search_result *const *res, uint32_t k,
                   tdm_search_result **out, tdm_err *err)
{
    *out = NULL;
    tdm_search_result *r = calloc(1, sizeof *r);
    if (!r)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = merge_hits(res, s->nparts, k, r, err);
    if (rc) {
        tdm_search_result_release(r);
        return rc;
    }
    merge_account(s, res, s->nparts, r);
    *out = r;
    return TDM_OK;
}

void tdm_part_results_free(tdm_search_result **res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tdm_search_result_release(res[i]);
        res[i] = NULL;
    }
}

/* ---- counters */

/* one's counters added to st's. */
static void add_counters(tdm_sched_stats *st, const tdm_sched_stats *one)
{
    st->submitted += one->submitted;
    st->answered += one->answered;
    st->failed += one->failed;
    st->in_flight += one->in_flight;
    st->direct += one->direct;
    st->stolen += one->stolen;
    st->promoted += one->promoted;
    st->handovers += one->handovers;
    st->batches += one->batches;
    st->batched += one->batched;
    st->mode_switches += one->mode_switches;
    st->window_wait += one->window_wait;
    st->deadline_misses += one->deadline_misses;
    st->stepped += one->stepped;
    st->migrations += one->migrations;
    st->carried_bytes += one->carried_bytes;
    st->pred_n += one->pred_n;
}

void tdm_part_stats(tdm_search *s, tdm_sched_stats *out)
{
    tdm_sched_stats st, one;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    int base = 0; /* a split handle: its whole index's lanes first */
    if (s->part->split) {
        tdm_sched_stats_get(s->sched, &st);
        base = st.nlanes;
    }
    for (int p = 0; p < s->nparts; p++) {
        memset(&one, 0, sizeof one);
        one.struct_size = sizeof one;
        tdm_sched_stats_get(s->parts[p]->sched, &one);
        if (p == 0 && !base)
            st = one;
        else
            add_counters(&st, &one);
        if (base + p < TDM_SCHED_MAX_LANES) {
            st.lanes[base + p] = one.lanes[0];
            st.lanes[base + p].device = s->parts[p]->device_base;
        }
    }
    st.nlanes = base + s->nparts < TDM_SCHED_MAX_LANES ? base + s->nparts : TDM_SCHED_MAX_LANES;
    st.split = __atomic_load_n(&s->part->nsplit, __ATOMIC_RELAXED);
    st.split_fallbacks = __atomic_load_n(&s->part->nfallback, __ATOMIC_RELAXED);
    st.struct_size = sizeof st;
    size_t n = out->struct_size < sizeof st ? out->struct_size : sizeof st;
    memcpy(out, &st, n);
    out->struct_size = n;
}
