/* A term's list decoded a block at a time on the host path
 * (search_host_dec.h). */
#include "search_host_dec.h"

#include "tandem.h"

int tdm_hlist_open(tdm_hlist *h, const tdm_ireader *r, uint64_t term, tdm_err *err)
{
    int rc = tdm_ireader_list(r, term, &h->l, err);
    if (rc)
        return rc;
    h->ops = tdm_codec_by_id(h->l.docs.codec); /* known: the reader checked it */
    h->r = r;
    h->ndocs = tdm_ireader_info_get(r)->ndocs;
    return TDM_OK;
}

static int fail(const tdm_hlist *h, uint32_t b, const char *what, tdm_err *err)
{
    return tdm_err_set(err, TDM_ERR_CORRUPT, "%s: list of term '%.*s': block %u: %s",
                       tdm_ireader_path(h->r), (int)h->l.term_len, h->l.term, b, what);
}

/* Block b of the list's codec, by its block decoder (codec.h). */
static int decode_block(const tdm_hlist *h, const tdm_encoded *e, uint32_t b, uint32_t *out,
                     tdm_err *err)
{
    tdm_err e2 = {0};
    int rc = h->ops->decode_block(e, b, out, &e2);
    if (rc) {
        rc = fail(h, b, tdm_err_msg(&e2), err);
        tdm_err_clear(&e2);
    }
    return rc;
}

/* Decoded docids strictly increasing from base. */
static int increasing(const uint32_t *v, uint32_t len, uint32_t base, uint32_t b)
{
    uint32_t bad = b > 0 && len && v[0] <= base;
    for (uint32_t i = 1; i < len; i++)
        bad |= v[i] <= v[i - 1];
    return bad ? -1 : 0;
}

int tdm_hlist_docs(const tdm_hlist *h, uint32_t b, uint32_t *out, tdm_err *err)
{
    const tdm_encoded *e = &h->l.docs;
    uint32_t len = tdm_encoded_block_len(e, b), base = e->bases[b];
    int rc = decode_block(h, e, b, out, err);
    if (rc)
        return rc;
    /* rising from the base: the codec's decoder checked it, or here */
    if ((!(e->delta && h->ops->increasing_checked) && increasing(out, len, base, b)) ||
        (len && out[len - 1] >= h->ndocs))
        return fail(h, b, "decoded docids not increasing or out of range", err);
    if (len && h->l.block_last && out[len - 1] != h->l.block_last[b])
        return fail(h, b, "the block does not end at its stored last docid", err);
    return TDM_OK;
}

int tdm_hlist_tfs(const tdm_hlist *h, uint32_t b, uint32_t *out, tdm_err *err)
{
    const tdm_encoded *e = &h->l.freqs;
    int rc = decode_block(h, e, b, out, err);
    if (rc)
        return rc;
    uint32_t len = tdm_encoded_block_len(e, b), over = 0;
    for (uint32_t i = 0; i < len; i++) {
        over |= out[i] == UINT32_MAX;
        out[i]++;
    }
    return over ? fail(h, b, "term frequency overflows", err) : TDM_OK;
}

int tdm_hlist_tf_at(const tdm_hlist *h, uint32_t b, uint32_t p, uint32_t *tf, tdm_err *err)
{
    const tdm_encoded *e = &h->l.freqs;
    tdm_err e2 = {0};
    uint32_t v = 0;
    int rc = h->ops->get(e, b * e->block_size + p, &v, &e2);
    if (rc) {
        rc = fail(h, b, tdm_err_msg(&e2), err);
        tdm_err_clear(&e2);
        return rc;
    }
    if (v == UINT32_MAX)
        return fail(h, b, "term frequency overflows", err);
    *tf = v + 1;
    return TDM_OK;
}
