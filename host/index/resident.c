/* Uploading an index's device sections as one buffer each (resident.h). */
#include "resident.h"

#include <string.h>

#include "format.h"

/* The device sections, in file order, and where each one's buffer goes. */
#define NSEC (TDM_SEC_DOCLENS + 1)

static cl_mem *slot(tdm_resident *res, unsigned id)
{
    cl_mem *m[NSEC] = {&res->arena,      &res->lists,       &res->codecs,
                       &res->block_last, &res->block_docs,  &res->block_freqs,
                       &res->block_max,  &res->doclens};
    return m[id];
}

/* A buffer of at least 4 bytes, so that an empty section is a valid cl_mem. */
static uint64_t buffer_bytes(uint64_t size)
{
    return size < 4 ? 4 : size;
}

uint64_t tdm_resident_bytes_needed(const tdm_ireader *r)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t sum = 0;
    for (unsigned s = 0; s < NSEC; s++)
        sum += buffer_bytes(in->section_size[s]);
    return sum;
}

int tdm_resident_check_fits(const tdm_ireader *r, const tdm_device *d, tdm_err *err)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t need = tdm_resident_bytes_needed(r), gmem = d->info.global_mem_bytes;
    if (gmem && need > gmem)
        return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                           "%s: the index needs %llu bytes of device memory; %s has %llu",
                           tdm_ireader_path(r), (unsigned long long)need, d->info.name,
                           (unsigned long long)gmem);
    uint64_t maxa = d->info.max_alloc_bytes;
    for (unsigned s = 0; maxa && s < NSEC; s++)
        if (buffer_bytes(in->section_size[s]) > maxa)
            return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                               "%s: section %s needs one buffer of %llu bytes; %s allows at "
                               "most %llu bytes a buffer",
                               tdm_ireader_path(r), tdm_ireader_section_name(s),
                               (unsigned long long)in->section_size[s], d->info.name,
                               (unsigned long long)maxa);
    return TDM_OK;
}

/* Creates section s's buffer and enqueues its copy; the copy's event
 * becomes res->ready (the transfer queue is in order). */
static int upload_section(const tdm_ireader *r, tdm_resident *res, unsigned s, tdm_err *err)
{
    uint64_t size = 0;
    const void *src = tdm_ireader_section(r, s, &size);
    cl_mem *m = slot(res, s);
    int st = tdm_buffer_create(res->dev, CL_MEM_READ_ONLY, (size_t)buffer_bytes(size), NULL, m,
                               err);
    if (st != TDM_OK) {
        tdm_err_append(err, " (section %s of %s, %llu bytes)", tdm_ireader_section_name(s),
                       tdm_ireader_path(r), (unsigned long long)size);
        return st;
    }
    res->bytes += buffer_bytes(size);
    if (size == 0)
        return TDM_OK; /* nothing reads an empty section's buffer */
    cl_event ev = NULL;
    st = tdm_upload(res->dev, *m, 0, (size_t)size, src, 0, NULL, &ev, err);
    if (st == TDM_OK) {
        if (res->ready)
            clReleaseEvent(res->ready);
        res->ready = ev;
    }
    return st;
}

int tdm_resident_upload(const tdm_ireader *r, tdm_device *d, tdm_resident *out, tdm_err *err)
{
    memset(out, 0, sizeof *out);
    if (!r || !d)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "resident upload: no index or device");
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    if (in->nterms >= UINT32_MAX || in->arena_words > UINT32_MAX ||
        in->block_entries > UINT32_MAX || in->ndocs > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT,
                           "%s: %llu lists: a device index holds at most 2^32 - 2",
                           tdm_ireader_path(r), (unsigned long long)in->nterms);
    int st = tdm_resident_check_fits(r, d, err);
    if (st != TDM_OK)
        return st;
    *out = (tdm_resident){.dev = d, .r = r, .nlists = (uint32_t)in->nterms,
                          .arena_words = (uint32_t)in->arena_words,
                          .nentries = (uint32_t)in->block_entries,
                          .ndocs = (uint32_t)in->ndocs};
    for (unsigned s = 0; st == TDM_OK && s < NSEC; s++)
        st = upload_section(r, out, s, err);
    if (st != TDM_OK)
        tdm_resident_release(out);
    return st;
}

void tdm_resident_release(tdm_resident *res)
{
    if (!res)
        return;
    if (res->ready) {
        clWaitForEvents(1, &res->ready); /* the copies read the mapping until then */
        clReleaseEvent(res->ready);
    }
    for (unsigned s = 0; res->dev && s < NSEC; s++)
        if (*slot(res, s))
            clReleaseMemObject(*slot(res, s));
    memset(res, 0, sizeof *res);
}
