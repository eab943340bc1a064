/* Uploading an index's device sections as one buffer each, or its small
 * sections and a list cache (resident.h). */
#include "resident.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "index/format.h"
#include "listcache.h"
#include "stager.h"

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

/* Device bytes of the sections a CACHED resident keeps (all but the arena;
 * the device copy of the descriptors is as large as LISTS). */
static uint64_t small_bytes(const tdm_ireader *r)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    return tdm_resident_bytes_needed(r) - buffer_bytes(in->section_size[TDM_SEC_ARENA]);
}

/* The budget: the caller's, else the device's setting, else 0 (none). */
static uint64_t budget_of(const tdm_device *d, const tdm_resident_opts *o)
{
    if (o->budget)
        return o->budget;
    return d->settings ? d->settings->device_memory : 0;
}

static int check_budget(const tdm_ireader *r, const tdm_device *d, uint64_t budget,
                        tdm_err *err)
{
    uint64_t need = tdm_resident_bytes_needed(r);
    if (budget && need > budget)
        return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                           "%s: the index needs %llu bytes of device memory; its budget on %s "
                           "is %llu (device_memory / TANDEM_DEVICE_MEMORY)",
                           tdm_ireader_path(r), (unsigned long long)need, d->info.name,
                           (unsigned long long)budget);
    return TDM_OK;
}

/* Bytes of the cache: the budget (three quarters of the device when there
 * is none) less the small sections, at most one buffer and the arena. */
static int cache_bytes(const tdm_ireader *r, const tdm_device *d, uint64_t budget,
                       uint64_t *out, tdm_err *err)
{
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    uint64_t small = small_bytes(r), arena = buffer_bytes(in->section_size[TDM_SEC_ARENA]);
    uint64_t room = budget ? budget : d->info.global_mem_bytes / 4 * 3;
    uint64_t c = room > small ? room - small : 0;
    if (d->info.max_alloc_bytes && c > d->info.max_alloc_bytes)
        c = d->info.max_alloc_bytes;
    if (c > arena)
        c = arena;
    c &= ~(uint64_t)3;
    if (c < 256 && c < arena)
        return tdm_err_set(err, TDM_ERR_DEVICE_MEMORY,
                           "%s: a list cache on %s needs %llu bytes for the index's small "
                           "sections and at least 256 for the lists; the budget is %llu "
                           "(device_memory / TANDEM_DEVICE_MEMORY)",
                           tdm_ireader_path(r), d->info.name, (unsigned long long)small,
                           (unsigned long long)room);
    *out = c;
    return TDM_OK;
}

/* Creates section s's buffer; its copy goes to cp[*n] when it has bytes. */
static int make_section(const tdm_ireader *r, tdm_resident *res, unsigned s,
                        tdm_stage_copy *cp, size_t *n, tdm_err *err)
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
    if (size) /* nothing reads an empty section's buffer */
        cp[(*n)++] = (tdm_stage_copy){*m, src, size};
    return TDM_OK;
}

/* Asks the kernel to read the sections' pages ahead of the copies (a
 * hint: a failure, e.g. on memory that is no file's mapping, changes
 * nothing). */
static void read_ahead(const tdm_stage_copy *cp, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t mask = pg > 0 ? (uintptr_t)pg - 1 : 4095;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)cp[i].src & ~mask, e = (uintptr_t)cp[i].src + cp[i].bytes;
        (void)madvise((void *)a, (size_t)(e - a), MADV_WILLNEED);
    }
}

/* The copies, staged or straight from the mapping; res->ready becomes the
 * event of the last (the transfer queue is in order). */
static int copy_sections(tdm_resident *res, const tdm_stage_copy *cp, size_t n, int staged,
                         tdm_err *err)
{
    read_ahead(cp, n);
    if (staged && n) {
        cl_event ev = NULL;
        int st = tdm_stager_start(res->dev, cp, n, &ev, &res->stager, err);
        if (st == TDM_OK) {
            if (res->ready)
                clReleaseEvent(res->ready);
            res->ready = ev;
        }
        return st;
    }
    int st = TDM_OK;
    for (size_t i = 0; st == TDM_OK && i < n; i++) {
        cl_event ev = NULL;
        st = tdm_upload(res->dev, cp[i].dst, 0, (size_t)cp[i].bytes, cp[i].src, 0, NULL, &ev,
                        err);
        if (st == TDM_OK) {
            if (res->ready)
                clReleaseEvent(res->ready);
            res->ready = ev;
        }
    }
    return st;
}

/* Sections from..7 (FULL: from 0; CACHED: from 2, after the cache). */
static int upload_sections(const tdm_ireader *r, tdm_resident *res, unsigned from, int staged,
                           tdm_err *err)
{
    tdm_stage_copy cp[NSEC];
    size_t n = 0;
    int st = TDM_OK;
    for (unsigned s = from; st == TDM_OK && s < NSEC; s++)
        st = make_section(r, res, s, cp, &n, err);
    if (st == TDM_OK)
        st = copy_sections(res, cp, n, staged, err);
    return st;
}

/* AUTO's choice: FULL when the index fits the device and the budget. */
static int choose_mode(const tdm_ireader *r, const tdm_device *d, const tdm_resident_opts *o)
{
    if (o->mode != TDM_RESIDENT_AUTO)
        return o->mode;
    tdm_err e = {0};
    int full = tdm_resident_check_fits(r, d, &e) == TDM_OK &&
               check_budget(r, d, budget_of(d, o), &e) == TDM_OK;
    tdm_err_clear(&e);
    return full ? TDM_RESIDENT_FULL : TDM_RESIDENT_CACHED;
}

int tdm_resident_fits_full(const tdm_ireader *r, const tdm_device *d)
{
    tdm_resident_opts o = {0};
    return choose_mode(r, d, &o) == TDM_RESIDENT_FULL;
}

int tdm_resident_fits_sizes(const uint64_t *size, const tdm_device *d)
{
    return tdm_resident_fits_beside(size, 0, d);
}

int tdm_resident_fits_beside(const uint64_t *size, uint64_t beside, const tdm_device *d)
{
    uint64_t need = beside, gmem = d->info.global_mem_bytes, maxa = d->info.max_alloc_bytes;
    uint64_t budget = d->settings ? d->settings->device_memory : 0;
    for (unsigned s = 0; s < NSEC; s++) {
        if (maxa && buffer_bytes(size[s]) > maxa)
            return 0;
        need += buffer_bytes(size[s]);
    }
    return !(gmem && need > gmem) && !(budget && need > budget);
}

static int upload_cached(const tdm_ireader *r, tdm_resident *res, const tdm_resident_opts *o,
                         int staged, tdm_err *err)
{
    uint64_t bytes = 0;
    int st = cache_bytes(r, res->dev, budget_of(res->dev, o), &bytes, err);
    if (st == TDM_OK)
        st = tdm_listcache_create(res, bytes, err);
    if (st == TDM_OK)
        st = upload_sections(r, res, TDM_SEC_CODECS, staged, err);
    return st;
}

int tdm_resident_upload_opts(const tdm_ireader *r, tdm_device *d, const tdm_resident_opts *o,
                             tdm_resident *out, tdm_err *err)
{
    memset(out, 0, sizeof *out);
    static const tdm_resident_opts defaults = {TDM_RESIDENT_AUTO, 0, -1};
    if (!o)
        o = &defaults;
    if (!r || !d)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "resident upload: no index or device");
    if (o->mode < TDM_RESIDENT_AUTO || o->mode > TDM_RESIDENT_CACHED)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "resident upload: mode %d", o->mode);
    const tdm_ireader_info *in = tdm_ireader_info_get(r);
    if (in->nterms >= UINT32_MAX || in->arena_words > UINT32_MAX ||
        in->block_entries > UINT32_MAX || in->ndocs > UINT32_MAX)
        return tdm_err_set(err, TDM_ERR_LIMIT,
                           "%s: %llu lists: a device index holds at most 2^32 - 2",
                           tdm_ireader_path(r), (unsigned long long)in->nterms);
    int mode = choose_mode(r, d, o), st = TDM_OK;
    if (mode == TDM_RESIDENT_FULL) {
        st = tdm_resident_check_fits(r, d, err);
        if (st == TDM_OK)
            st = check_budget(r, d, budget_of(d, o), err);
        if (st != TDM_OK)
            return st;
    }
    *out = (tdm_resident){.dev = d, .r = r, .nlists = (uint32_t)in->nterms,
                          .arena_words = (uint32_t)in->arena_words,
                          .nentries = (uint32_t)in->block_entries,
                          .ndocs = (uint32_t)in->ndocs};
    int staged = o->staging < 0 ? tdm_stager_wanted(d) : o->staging;
    /* The arena's checksum before any of it is copied (open checked the
     * other sections); a list cache checks it list by list instead. */
    if (mode == TDM_RESIDENT_FULL) {
        st = tdm_ireader_check_payload(r, err);
        if (st == TDM_OK)
            st = upload_sections(r, out, TDM_SEC_ARENA, staged, err);
    } else {
        st = upload_cached(r, out, o, staged, err);
    }
    if (st != TDM_OK)
        tdm_resident_release(out);
    return st;
}

int tdm_resident_upload(const tdm_ireader *r, tdm_device *d, tdm_resident *out, tdm_err *err)
{
    return tdm_resident_upload_opts(r, d, NULL, out, err);
}

int tdm_resident_wait(const tdm_resident *res, tdm_err *err)
{
    if (!res->ready)
        return TDM_OK;
    cl_event e = res->ready;
    cl_int rc = clWaitForEvents(1, &e);
    return rc == CL_SUCCESS ? TDM_OK : tdm_cl_fail(err, rc, "clWaitForEvents (index upload)");
}

void tdm_resident_release(tdm_resident *res)
{
    if (!res)
        return;
    if (res->ready) {
        clWaitForEvents(1, &res->ready); /* the copies read the mapping until then */
        clReleaseEvent(res->ready);
    }
    tdm_stager_finish(res->stager, NULL);
    tdm_listcache_free(res->cache);
    for (unsigned s = 0; res->dev && s < NSEC; s++)
        if (*slot(res, s))
            clReleaseMemObject(*slot(res, s));
    memset(res, 0, sizeof *res);
}
