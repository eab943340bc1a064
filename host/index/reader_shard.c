/* A shard's sections and checks at open (format.h, docs/PARTITION.md):
 * the shard record and the whole index's dfs (its verification pass is
 * reader_list.c's). */
#include "reader_priv.h"
#include "tandem.h"

static int shard_fail(const tdm_ireader *r, unsigned id, uint64_t at, const char *what,
                      tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_FORMAT, "%s: offset %llu: section %s: %s", r->path,
                       tdm_ir_at(r, id, at), id == TDM_SEC_SHARD ? "shard" : "term_gdf", what);
}

static int check_record(const tdm_ireader *r, const tdm_idx_shard *s, tdm_err *err)
{
    for (unsigned k = 0; k < sizeof s->reserved / sizeof *s->reserved; k++)
        if (s->reserved[k])
            return shard_fail(r, TDM_SEC_SHARD, 40, "reserved words are not zero", err);
    if (s->nshards == 0 || s->shard >= s->nshards)
        return shard_fail(r, TDM_SEC_SHARD, 8, "shard index not below the shard count", err);
    if (s->doc_lo >= s->doc_hi || s->doc_hi > r->info.ndocs)
        return shard_fail(r, TDM_SEC_SHARD, 16, "document range empty or past the documents",
                          err);
    if (s->whole_npostings < r->info.npostings)
        return shard_fail(r, TDM_SEC_SHARD, 24, "fewer postings in the whole index than here",
                          err);
    return TDM_OK;
}

int tdm_ir_check_shard(tdm_ireader *r, tdm_err *err)
{
    tdm_ireader_info *i = &r->info;
    i->doc_lo = 0;
    i->doc_hi = (uint32_t)i->ndocs;
    i->whole_npostings = i->npostings;
    if (r->nsec != TDM_SEC_SHARD_COUNT)
        return TDM_OK;
    if (r->sec[TDM_SEC_SHARD].size != sizeof(tdm_idx_shard))
        return shard_fail(r, TDM_SEC_SHARD, 0, "not one shard record", err);
    if (r->sec[TDM_SEC_TERM_GDF].size != 4 * i->nterms)
        return shard_fail(r, TDM_SEC_TERM_GDF, 0, "not one df a term", err);
    const tdm_idx_shard *s = (const void *)(r->base + r->sec[TDM_SEC_SHARD].offset);
    const uint32_t *gdf = (const void *)(r->base + r->sec[TDM_SEC_TERM_GDF].offset);
    int rc = check_record(r, s, err);
    if (rc)
        return rc;
    for (uint64_t t = 0; t < i->nterms; t++)
        if (gdf[t] < r->lists[t].df || gdf[t] == 0 || gdf[t] > i->ndocs)
            return shard_fail(r, TDM_SEC_TERM_GDF, 4 * t,
                              "a whole-index df below the shard's, 0, or above the documents",
                              err);
    r->shard = s;
    r->gdf = gdf;
    i->shard = 1;
    i->split_id = s->split_id;
    i->shard_index = s->shard;
    i->nshards = s->nshards;
    i->doc_lo = s->doc_lo;
    i->doc_hi = s->doc_hi;
    i->whole_npostings = s->whole_npostings;
    return TDM_OK;
}

uint32_t tdm_ireader_score_df(const tdm_ireader *r, uint64_t i)
{
    return r->gdf ? r->gdf[i] : r->lists[i].df;
}

const tdm_idx_shard *tdm_ireader_shard(const tdm_ireader *r) { return r->shard; }

const tdm_idx_header *tdm_ireader_header(const tdm_ireader *r)
{
    return &r->hdr;
}
