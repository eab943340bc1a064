/* The search kernels' driver (search.h): per call, the query's scratch
 * buffers and tables uploaded, its lists decoded on the device (one launch
 * per codec of its lists, index/decode_jobs.h), the bounds kernels where
 * the algorithm prunes, the range (or group) kernel and the merge kernel,
 * then the k keys and the counts copied back: a number of commands that
 * grows with nothing but the codecs present. The compressed variant
 * (TDM_VARIANT_COMPRESSED) has no decode: its kernel reads the resident
 * index, so a query is the upload, tdm_search_zrange, the merge, the copy. */
#include <stdlib.h>
#include <string.h>

#include "codec/layout.h"
#include "resident/listcache.h"
#include "search.h"
#include "search_pack.h"
#include "search_seed.h"
#include "tandem.h"

/* The queue of a search's commands: the device's queue without profiling,
 * where an event costs nothing (H200: an enqueue 4.5 us, with an event
 * 6.4 us; 11.7 on the profiling queue, a 1 KB write 3 us instead of 9), and
 * no event is made unless the run is profiled, on the profiling queue. */
static cl_command_queue run_queue(const tdm_device *d)
{
    return tdm_sprof_cur && tdm_sprof_cur->events ? d->queue : d->lat;
}

static void ev_release(cl_event e)
{
    if (e)
        clReleaseEvent(e);
}

/* Profile (search_prof.c, TANDEM_SEARCH_PROFILE=1): every launch and copy
 * of this file goes through these wrappers, which time the enqueue on the
 * host and keep the command's event for the run's table. */
static int sprof_launch(tdm_device *d, const char *name, const tdm_karg *args, cl_uint nargs,
                        size_t global, size_t local, cl_uint nwait, const cl_event *wait,
                        cl_event *ev, tdm_err *err)
{
    tdm_sprof *pf = tdm_sprof_cur;
    /* every command of a search is on d->queue, in order, so a wait list
       only makes the driver resolve events (the callers keep passing them:
       the order they state is the queue's) */
    (void)nwait;
    (void)wait;
    if (!pf) { /* no event: every later command is in order on the same queue */
        if (ev)
            *ev = NULL;
        return tdm_kernel_launch_on(d, d->lat, name, args, nargs, global, local, 0, NULL, NULL,
                                    err);
    }
    /* profiled: the launch's host steps one by one */
    double t0 = tdm_sprof_now();
    if (ev)
        *ev = NULL;
    cl_kernel k;
    int rc = tdm_kernel_borrow(d, name, &k, err);
    if (rc)
        return rc;
    double t1 = tdm_sprof_now();
    cl_int cr = CL_SUCCESS;
    for (cl_uint i = 0; cr == CL_SUCCESS && i < nargs; i++)
        cr = clSetKernelArg(k, i, args[i].size, args[i].p);
    double t2 = tdm_sprof_now();
    if (cr == CL_SUCCESS)
        cr = tdm_kernel_enqueue(d, run_queue(d), k, name, global, local, 0, NULL,
                                pf->events ? ev : NULL);
    double t3 = tdm_sprof_now();
    tdm_kernel_return(d, k);
    if (cr != CL_SUCCESS)
        return tdm_cl_fail(err, cr, "clSetKernelArg/clEnqueueNDRangeKernel (profiled)");
    tdm_sprof_host_span(pf, "launch: borrow", t0, t1);
    tdm_sprof_host_span(pf, "launch: set args", t1, t2);
    tdm_sprof_host_span(pf, "launch: clEnqueueNDRangeKernel", t2, t3);
    tdm_sprof_host(pf, "launch: return", t3);
    tdm_sprof_host(pf, name, t0);
    if (ev && *ev)
        tdm_sprof_event(pf, name, *ev);
    return TDM_OK;
}

/* Every copy of a search goes on the search's queue (run_queue), in order
 * with its kernels: no event crosses queues (on the H200 the transfer
 * queue's download started ~35 us after the merge it waited for). Blocking
 * when ev is NULL, as tdm_upload/tdm_download; else *ev gets an event only
 * when profiled (NULL otherwise: nothing waits on it). */
static int qcopy(int up, tdm_device *d, cl_mem m, size_t off, size_t bytes, void *host,
                 cl_uint nwait, const cl_event *wait, cl_event *ev, tdm_err *err)
{
    tdm_sprof *pf = tdm_sprof_cur;
    double t = pf ? tdm_sprof_now() : 0;
    cl_event e = NULL;
    cl_bool block = ev ? CL_FALSE : CL_TRUE;
    (void)nwait; /* in order on one queue */
    (void)wait;
    cl_command_queue q = run_queue(d);
    cl_event *pe = pf && pf->events ? &e : NULL;
    cl_int rc = up ? clEnqueueWriteBuffer(q, m, block, off, bytes, host, 0, NULL, pe)
                   : clEnqueueReadBuffer(q, m, block, off, bytes, host, 0, NULL, pe);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, up ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
        tdm_err_append(err, " (%zu bytes %s %s)", bytes, up ? "to" : "from", d->info.name);
        return err->code;
    }
    if (pf) {
        tdm_sprof_host(pf, up ? (block ? "upload (blocking)" : "enqueue upload")
                              : (block ? "download (blocking)" : "enqueue download"), t);
        tdm_sprof_event(pf, up ? "upload" : "download", e);
    }
    if (ev)
        *ev = e;
    else if (e)
        clReleaseEvent(e);
    return TDM_OK;
}
#define tdm_kernel_launch sprof_launch
#define tdm_upload(d, m, o, b, h, nw, w, ev, err) qcopy(1, d, m, o, b, (void *)(h), nw, w, ev, err)
#define tdm_download(d, m, o, b, h, nw, w, ev, err) qcopy(0, d, m, o, b, h, nw, w, ev, err)

enum { B_DOCS, B_FREQS, B_TERMS, B_BMAX, B_CUR, B_ORD, B_HS, B_HD, B_HN, B_OUT, B_OUTN, B_STATUS,
       B_SS, B_SD, B_SN, B_SEED, B_SELTAB, B_SELLEAD, B_SELFLAGS, B_COUNT };

/* The compressed variant (cl/search_zrange.cl): no decode, no selection. */
static int zrange(const tdm_splan *pl)
{
    return pl->variant == TDM_VARIANT_COMPRESSED;
}

/* AND's block selection (query/and_select.h) replaces the whole decode. */
static int and_selects(const tdm_sprep *p, const tdm_splan *pl, int salg)
{
    return salg == TDM_SALG_AND && p->andsel.nt > 1 && !zrange(pl);
}

/* The merge in stages (cl/search_merge.cl) above this many ranges a
 * stage-one group, with at most two stage-one groups per compute unit; later
 * stages reduce SELECT_FAN slices a group while more are left. */
#define SELECT_MIN_RANGES 8u
#define SELECT_GROUPS_PER_CU 2u
#define SELECT_FAN 8u
#define SELECT_GROUPS_MIN 128u
/* Work-items of a select or merge group on a GPU: each pass of their radix
 * select is a loop over the candidates, so wide groups make it short (at
 * k = 1,000 the H200 spent 3.2 ms in a merge of 64 work-items). */
#define MERGE_LOCAL_GPU 1024u

/* The kernels launched with tdm_search_merge_local's groups. */
static const char *const merge_kernels[] = {"tdm_search_select", "tdm_search_select_small",
                                            "tdm_search_merge", "tdm_search_merge_small",
                                            "tdm_search_merge_batch"};

size_t tdm_search_merge_local(tdm_device *d)
{
    if (d->info.type != TDM_DEVICE_GPU)
        return d->wg_size;
    size_t known = __atomic_load_n(&d->merge_local, __ATOMIC_RELAXED);
    if (known) /* every query asks: the kernels' limits are read once */
        return known;
    /* within each kernel's own CL_KERNEL_WORK_GROUP_SIZE, not only the
     * device's: the H200 allows these 256 (registers), and ran 1024 anyway */
    size_t cap = d->info.max_work_group_size;
    for (size_t i = 0; i < sizeof merge_kernels / sizeof *merge_kernels; i++) {
        size_t m = tdm_kernel_wg_limit(d, merge_kernels[i]);
        cap = m && m < cap ? m : cap;
    }
    size_t l = MERGE_LOCAL_GPU;
    while (l > cap && l > d->wg_size)
        l >>= 1;
    l = l < d->wg_size ? d->wg_size : l;
    __atomic_store_n(&d->merge_local, l, __ATOMIC_RELAXED);
    return l;
}

/* (search.h) The kernels' TDM_SMALLK (16), TDM_SMALLK_PER (32) and
 * TDM_SMALLK_ITEMS (by the local memory their build sees). PoCL, 2 cores,
 * MaxScore k10: a merge 94 us with the radix select, 22 with the small one. */
int tdm_search_small_fits(const tdm_device *d, size_t wg, uint32_t k, uint64_t n)
{
    uint64_t lm = d->info.local_mem_bytes;
    uint64_t items = lm >= 98304 ? 256 : lm >= 40960 ? 128 : 32;
    if (items > wg)
        items = wg;
    return k <= 16 && n <= 32 * items;
}

/* Slices a later select stage's group reduces (and the most the merge
 * takes): SELECT_FAN, or more at small k so that a group reads about
 * SELECT_KEYS keys (at k = 10 the first stage's slices go to the merge). */
#define SELECT_KEYS 4096u
static uint32_t select_fan(uint32_t k)
{
    return SELECT_KEYS / k > SELECT_FAN ? SELECT_KEYS / k : SELECT_FAN;
}

/* The second select stage's groups (its output area follows the first's). */
static uint32_t select_groups2(uint32_t ng, uint32_t k)
{
    uint32_t f = select_fan(k);
    return ng > f ? (ng + f - 1) / f : 0;
}

/* At most this many candidates (ranges x their heaps' room) go to the merge
 * directly, without a select stage: a launch less (a dependent kernel on
 * the GPU, 30-67 us of host time on PoCL), and one group's passes over
 * them are short (OR and AND at k = 10 on the H200: 1,056 ranges). */
#define MERGE_DIRECT_KEYS 16384u

/* Stage-one groups for nr ranges of cap keys (1: the merge alone); *per
 * their share. */
static uint32_t select_groups(const tdm_device *d, uint32_t nr, uint32_t cap, uint32_t *per)
{
    if ((uint64_t)nr * cap <= MERGE_DIRECT_KEYS) {
        *per = nr;
        return 1;
    }
    uint32_t g = (nr + SELECT_MIN_RANGES - 1) / SELECT_MIN_RANGES;
    uint32_t most = (d->info.compute_units ? d->info.compute_units : 1) * SELECT_GROUPS_PER_CU;
    if (most < SELECT_GROUPS_MIN)
        most = SELECT_GROUPS_MIN; /* few cores: more stages rather than one long one */
    if (g > most)
        g = most;
    if (g < 1)
        g = 1;
    *per = (nr + g - 1) / g;
    return (nr + *per - 1) / *per;
}

/* The regions of a call's packed upload (search_pack.h), in layout order:
 * the block bounds, the largest, last (a write ends after the last region
 * it fills). */
enum { R_STATUS, R_TERMS, R_SELTAB, R_SELLEAD, R_JOBS, R_BMAX = R_JOBS + TDM_CODEC_COUNT,
       R_COUNT };
_Static_assert(R_COUNT <= TDM_SPACK_MAX, "upload regions");

/* Buffers of the packed upload: b[] and jobs[] entries that are its sub-buffers. */
static int packed(int i)
{
    return i == B_STATUS || i == B_TERMS || i == B_SELTAB || i == B_SELLEAD || i == B_BMAX;
}

/* One call's device buffers; kept in the device's pool between calls. */
typedef struct tdm_sscratch {
    cl_mem b[B_COUNT];
    size_t cap[B_COUNT];
    cl_mem jobs[TDM_CODEC_COUNT]; /* sub-buffers of pk: the decode jobs uploaded */
    cl_mem ajobs[TDM_CODEC_COUNT]; /* AND's jobs, made on the device */
    size_t ajcap[TDM_CODEC_COUNT];
    tdm_spack pk;
    tdm_decode_scratch dsc; /* the decode launches' prefix sums */
    struct tdm_sscratch *next;
} scratch;

static void scratch_free(scratch *s)
{
    if (!s)
        return;
    for (int i = 0; i < B_COUNT; i++)
        if (s->b[i] && !packed(i))
            clReleaseMemObject(s->b[i]);
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (s->ajobs[c])
            clReleaseMemObject(s->ajobs[c]);
    tdm_spack_free(&s->pk);
    tdm_decode_scratch_free(&s->dsc);
    free(s);
}

void tdm_search_pool_lock(tdm_sdev *sd)
{
    while (__atomic_exchange_n(&sd->pool_lock, 1, __ATOMIC_ACQUIRE))
        ;
}

void tdm_search_pool_unlock(tdm_sdev *sd)
{
    __atomic_store_n(&sd->pool_lock, 0, __ATOMIC_RELEASE);
}

static scratch *pool_take(tdm_sdev *sd)
{
    tdm_search_pool_lock(sd);
    scratch *s = sd->pool;
    if (s)
        sd->pool = s->next;
    tdm_search_pool_unlock(sd);
    return s ? s : calloc(1, sizeof *s);
}

/* Only a scratch whose commands are all done goes back (a failed call
 * releases its buffers instead: OpenCL keeps them until its commands end). */
static void pool_give(tdm_sdev *sd, scratch *s)
{
    tdm_search_pool_lock(sd);
    s->next = sd->pool;
    sd->pool = s;
    tdm_search_pool_unlock(sd);
}

void tdm_search_pool_free(tdm_sdev *sd)
{
    while (sd->pool) {
        scratch *s = sd->pool;
        sd->pool = s->next;
        scratch_free(s);
    }
}

int tdm_search_buffer_fit(tdm_device *d, cl_mem_flags flags, cl_mem *m, size_t *cap,
                          size_t bytes, tdm_err *err)
{
    if (bytes < 4)
        bytes = 4;
    if (*m && *cap >= bytes)
        return TDM_OK;
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
    *cap = 0;
    size_t want = bytes + bytes / 2, most = (size_t)d->info.max_alloc_bytes;
    if (most && want > most)
        want = bytes;
    int rc = tdm_buffer_create(d, flags, want, NULL, m, err);
    if (rc == TDM_OK)
        *cap = want;
    return rc;
}

static int ensure(tdm_device *d, cl_mem *m, size_t *cap, size_t bytes, tdm_err *err)
{
    return tdm_search_buffer_fit(d, CL_MEM_READ_WRITE, m, cap, bytes, err);
}

/* Where the bounds come from the host (the stored ones), each term's bound
 * (word 5: the largest of its block bounds) and MaxScore's order (word 6:
 * terms by ascending bound, then index) on the host too, exactly as
 * tdm_search_order computes them (a max is exact in any order): the launch
 * and its serial loop over a long list's blocks (~57 us on the H200) go. */
void tdm_sprep_host_order(const tdm_sprep *p)
{
    uint32_t *terms = p->terms; /* the call's own table, before its upload */
    for (uint32_t t = 0; !p->term_bounds && t < p->nt; t++) {
        uint32_t *w = terms + t * TDM_SEARCH_TW;
        uint32_t nb = (w[TDM_TW_DF] + w[TDM_TW_BSIZE] - 1u) / w[TDM_TW_BSIZE];
        float m = 0.0f;
        for (uint32_t b = 0; b < nb; b++)
            m = p->bmax[w[TDM_TW_BMAX] + b] > m ? p->bmax[w[TDM_TW_BMAX] + b] : m;
        memcpy(&w[TDM_TW_BOUND], &m, sizeof m);
    }
    for (uint32_t i = 0; i < p->nt; i++)
        terms[i * TDM_SEARCH_TW + TDM_TW_ORDER] = i;
    for (uint32_t i = 1; i < p->nt; i++) {
        uint32_t t = terms[i * TDM_SEARCH_TW + TDM_TW_ORDER];
        float u = tdm_u2f(terms[t * TDM_SEARCH_TW + TDM_TW_BOUND]);
        uint32_t j = i;
        while (j > 0) {
            uint32_t q = terms[(j - 1) * TDM_SEARCH_TW + TDM_TW_ORDER];
            if (tdm_u2f(terms[q * TDM_SEARCH_TW + TDM_TW_BOUND]) <= u)
                break;
            terms[j * TDM_SEARCH_TW + TDM_TW_ORDER] = q;
            j--;
        }
        terms[j * TDM_SEARCH_TW + TDM_TW_ORDER] = t;
    }
}

/* Sizes the scratch for this call and enqueues its one upload (status
 * word, term table, AND selection or decode jobs, stored bounds: the packed
 * regions) on the call's queue. */
static int make_buffers(tdm_device *d, const tdm_sprep *p, const tdm_splan *pl, int salg,
                        uint32_t cap, uint32_t pow2, uint32_t k, uint32_t ngroups, scratch *s,
                        tdm_sout *out, tdm_err *err)
{
    size_t nt = p->nt, nr = pl->ranges, heap = nr * (size_t)cap;
    int sel = and_selects(p, pl, salg), zr = zrange(pl);
    /* the compressed variant: each cursor's block buffers and words */
    size_t post = zr ? nt * nr * p->max_block : p->npost;
    size_t bytes[B_COUNT] = {
        [B_DOCS] = post * 4,
        [B_FREQS] = post * 4,
        [B_CUR] = nt * nr * (zr ? TDM_ZR_CW : 1) * 4,
        [B_ORD] = pl->variant == TDM_VARIANT_GROUP ? 4 : nt * nr * 4,
        [B_HS] = heap * 4,
        [B_HD] = heap * 4,
        [B_HN] = nr * 4,
        [B_OUT] = ((size_t)pow2 + 2) * 8, /* a header of counts and status, then the keys */
        [B_OUTN] = 12,
        [B_SS] = ngroups > 1 ? (size_t)(ngroups + select_groups2(ngroups, k)) * k * 4 : 4,
        [B_SD] = ngroups > 1 ? (size_t)(ngroups + select_groups2(ngroups, k)) * k * 4 : 4,
        [B_SN] = (size_t)(ngroups + select_groups2(ngroups, k)) * 4,
        [B_SEED] = tdm_search_seeded(pl, salg, k) ? tdm_search_seed_bytes(p->nt) : 4,
        [B_SELFLAGS] = sel ? tdm_and_sel_flag_bytes(&p->andsel) : 4,
    };
    int rc = TDM_OK;
    /* a new buffer has a new size (its handle may be the old one's value) */
    size_t seed_was = s->cap[B_SEED];
    for (int i = 0; rc == TDM_OK && i < B_COUNT; i++)
        if (!packed(i))
            rc = ensure(d, &s->b[i], &s->cap[i], bytes[i], err);
    if (rc == TDM_OK && s->cap[B_SEED] != seed_was) {
        /* zeroed once when made: every seed leaves the part it used zeroed */
        static const cl_uint zero = 0;
        cl_int cr = clEnqueueFillBuffer(run_queue(d), s->b[B_SEED], &zero, 4, 0,
                                        s->cap[B_SEED] / 4 * 4, 0, NULL, NULL);
        if (cr != CL_SUCCESS)
            rc = tdm_cl_fail(err, cr, "clEnqueueFillBuffer (search seed histogram)");
    }
    /* the packed regions: what this call needs of each, and what it writes */
    size_t need[R_COUNT] = {
        [R_STATUS] = 4,
        [R_TERMS] = nt * TDM_SEARCH_TW * 4,
        [R_SELTAB] = sel ? tdm_and_sel_tab_bytes(&p->andsel) : 0,
        [R_SELLEAD] = sel ? sizeof(tdm_decode_job) : 0,
        [R_BMAX] = p->nbmax ? p->nbmax * 4 : 4,
    };
    for (int c = 0; c < TDM_CODEC_COUNT; c++) {
        if (zr)
            continue; /* no decode */
        if (!sel)
            need[R_JOBS + c] = (size_t)p->batch.njobs[c] * sizeof(tdm_decode_job);
        else if (tdm_and_sel_job_bytes(&p->andsel, c) && rc == TDM_OK)
            rc = ensure(d, &s->ajobs[c], &s->ajcap[c], tdm_and_sel_job_bytes(&p->andsel, c), err);
    }
    if (rc == TDM_OK)
        rc = tdm_spack_ensure(d, &s->pk, need, R_COUNT, err);
    if (rc)
        return rc;
    s->b[B_STATUS] = s->pk.sub[R_STATUS];
    s->b[B_TERMS] = s->pk.sub[R_TERMS];
    s->b[B_SELTAB] = s->pk.sub[R_SELTAB];
    s->b[B_SELLEAD] = s->pk.sub[R_SELLEAD];
    s->b[B_BMAX] = s->pk.sub[R_BMAX];
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        s->jobs[c] = need[R_JOBS + c] ? s->pk.sub[R_JOBS + c] : NULL;
    /* exhaustive OR and AND read no bound (nor words 5 and 6) */
    int bounds = salg != TDM_SALG_OR && salg != TDM_SALG_AND && salg != TDM_SALG_AND_OR;
    if (bounds && !p->device_bounds)
        tdm_sprep_host_order(p);
    size_t end = 0; /* the write's end: after the last region filled */
    tdm_spack *pk = &s->pk;
#define FILL(r, src, n)                                                                           \
    do {                                                                                          \
        memcpy(tdm_spack_host(pk, r), src, n);                                                    \
        end = pk->off[r] + (n);                                                                   \
    } while (0)
    static const cl_uint zero = 0;
    FILL(R_STATUS, &zero, 4);
    FILL(R_TERMS, p->terms, need[R_TERMS]);
    if (zr) { /* word 0: the term's list, not a position in decoded postings */
        uint32_t *w = (uint32_t *)tdm_spack_host(pk, R_TERMS);
        for (size_t t = 0; t < nt; t++)
            w[t * TDM_SEARCH_TW + TDM_TW_LIST] = p->ids[t];
    }
    if (sel) {
        FILL(R_SELTAB, p->andsel.tab, need[R_SELTAB]);
        FILL(R_SELLEAD, &p->andsel.lead_job, sizeof p->andsel.lead_job);
    }
    for (int c = 0; !sel && !zr && c < TDM_CODEC_COUNT; c++)
        if (p->batch.njobs[c])
            FILL(R_JOBS + c, p->batch.jobs[c], (size_t)p->batch.njobs[c] * sizeof(tdm_decode_job));
    if (bounds && !p->device_bounds && p->nbmax)
        FILL(R_BMAX, p->bmax, p->nbmax * 4);
#undef FILL
    cl_event e = NULL;
    rc = tdm_upload(d, pk->parent, 0, end, pk->host, 0, NULL, &e, err);
    if (rc == TDM_OK)
        out->bytes_up += end;
    ev_release(e); /* in order before the kernels; the profile has its own reference */
    return rc;
}

/* The block bounds where the device computes them, then each term's bound
 * and MaxScore's order, then the shared threshold's seed where planned;
 * *ev gets the last kernel's event. */
static int prepare(const tdm_sdev *sd, const tdm_sprep *p, const tdm_splan *pl, int salg,
                   uint32_t k, scratch *s, cl_event dec, cl_event *ev, uint32_t *launches,
                   tdm_err *err)
{
    cl_uint nt = p->nt, nb = (cl_uint)p->nbmax, kind = (cl_uint)p->kind, nd = sd->res.ndocs;
    cl_float c0 = p->c0, c1 = p->c1;
    cl_event e0 = NULL;
    int rc = TDM_OK;
    if (p->device_bounds) {
        tdm_karg ba[] = {
            TDM_KARG_MEM(&s->b[B_DOCS]), TDM_KARG_MEM(&s->b[B_FREQS]), TDM_KARG_MEM(&s->b[B_TERMS]),
            TDM_KARG_MEM(&sd->res.doclens), TDM_KARG_U32(&nd), TDM_KARG_MEM(&s->b[B_BMAX]),
            TDM_KARG_U32(&nt), TDM_KARG_U32(&nb), TDM_KARG_U32(&kind), {sizeof c0, &c0},
            {sizeof c1, &c1},
        };
        size_t wg = sd->d->wg_size;
        rc = tdm_kernel_launch(sd->d, "tdm_search_bounds", ba, sizeof ba / sizeof *ba,
                               tdm_round_up(nb, wg), wg, 1, &dec, &e0, err);
        if (rc)
            return rc;
        ++*launches;
    }
    if (p->device_bounds) {
        tdm_karg oa[] = {TDM_KARG_MEM(&s->b[B_TERMS]), TDM_KARG_MEM(&s->b[B_BMAX]),
                         TDM_KARG_U32(&nt)};
        size_t wg = sd->d->wg_size;
        rc = tdm_kernel_launch(sd->d, "tdm_search_order", oa, 3, wg, wg, 1, &e0, ev, err);
        ev_release(e0);
        if (rc == TDM_OK)
            ++*launches;
    } else { /* words 5 and 6 came from the host (tdm_sprep_host_order) */
        *ev = dec;
        if (dec)
            clRetainEvent(dec);
    }
    if (rc == TDM_OK && tdm_search_seeded(pl, salg, k)) {
        cl_event eo = *ev;
        /* the kept histogram is zero (make_buffers, and each seed after it) */
        rc = tdm_search_seed_enqueue(sd->d, run_queue(sd->d), s->b[B_DOCS], s->b[B_FREQS],
                                     s->b[B_TERMS], sd->res.doclens, sd->res.ndocs,
                                     s->b[B_SEED], 1, nt,
                                     (uint32_t)p->npost, kind, c0, c1, k, eo, ev, launches, err);
        ev_release(eo);
        if (rc)
            *ev = NULL;
    }
    return rc;
}

/* One pass: bounds where needed, range or group kernel, merge. gate_min:
 * 0, or k for AND-then-OR's OR pass (skipped on the device when the AND
 * pass's counts, in B_OUTN, reach k). */
static int launch(const tdm_sdev *sd, const tdm_sprep *p, uint32_t ndocs, const tdm_splan *pl,
                  int salg, uint32_t k, uint32_t cap, uint32_t pow2, uint32_t gate_min,
                  scratch *s, cl_event dec, cl_event *ev, uint32_t *launches, tdm_err *err)
{
    cl_event e0 = NULL;
    int rc = TDM_OK;
    /* exhaustive OR and AND read no bound */
    if (salg != TDM_SALG_OR && salg != TDM_SALG_AND &&
        (rc = prepare(sd, p, pl, salg, k, s, dec, &e0, launches, err)))
        return rc;
    if (!e0 && dec) {
        e0 = dec;
        clRetainEvent(e0);
    }
    cl_uint nt = p->nt, nr = pl->ranges, rlen = pl->rlen, nd = ndocs, cp = cap, alg = (cl_uint)salg,
            kind = (cl_uint)p->kind, kk = k, p2 = pow2, gm = gate_min;
    cl_float c0 = p->c0, c1 = p->c1;
    tdm_karg ra[] = {
        TDM_KARG_MEM(&s->b[B_DOCS]), TDM_KARG_MEM(&s->b[B_FREQS]), TDM_KARG_MEM(&s->b[B_TERMS]),
        TDM_KARG_MEM(&s->b[B_BMAX]), TDM_KARG_MEM(&sd->res.doclens), TDM_KARG_MEM(&s->b[B_CUR]),
        TDM_KARG_MEM(&s->b[B_ORD]),  TDM_KARG_MEM(&s->b[B_HS]),    TDM_KARG_MEM(&s->b[B_HD]),
        TDM_KARG_MEM(&s->b[B_HN]),   TDM_KARG_U32(&nt),            TDM_KARG_U32(&nr),
        TDM_KARG_U32(&rlen),         TDM_KARG_U32(&nd),            TDM_KARG_U32(&cp),
        TDM_KARG_U32(&alg),          TDM_KARG_U32(&kind),          {sizeof c0, &c0},
        {sizeof c1, &c1},            TDM_KARG_MEM(&s->b[B_OUTN]),  TDM_KARG_U32(&gm),
    };
    tdm_karg ga[] = {
        ra[0],  ra[1],  ra[2],  ra[4],  ra[5],  ra[7],  ra[8],  ra[9],  ra[10], ra[11],
        ra[12], ra[13], ra[14], ra[15], ra[16], ra[17], ra[18], ra[19], ra[20],
        TDM_KARG_MEM(&s->b[B_STATUS]),
    };
    cl_uint bw = p->max_block, nl = sd->res.nlists, aw = sd->res.arena_words, sp = sd->res.spans;
    cl_uint zl = pl->zlayout;
    const tdm_resident *rs = &sd->res;
    tdm_karg za[] = {
        TDM_KARG_MEM(&rs->arena),       TDM_KARG_MEM(&rs->lists),      TDM_KARG_MEM(&rs->codecs),
        TDM_KARG_MEM(&rs->block_last),  TDM_KARG_MEM(&rs->block_docs),
        TDM_KARG_MEM(&rs->block_freqs), TDM_KARG_U32(&nl),             TDM_KARG_U32(&aw),
        TDM_KARG_U32(&sp),              ra[0],                         ra[1],
        TDM_KARG_U32(&bw),              ra[2],  ra[3],  ra[4],  ra[5],  ra[6],  ra[7],  ra[8],
        ra[9],  ra[10], ra[11], ra[12], ra[13], ra[14], ra[15], ra[16], ra[17], ra[18], ra[19],
        ra[20],                         TDM_KARG_MEM(&s->b[B_STATUS]), TDM_KARG_U32(&zl),
    };
    cl_event e1 = NULL;
    if (zrange(pl))
        rc = tdm_kernel_launch(sd->d, "tdm_search_zrange", za, sizeof za / sizeof *za,
                               tdm_round_up(nr, pl->local), pl->local, 1, &e0, &e1, err);
    else if (pl->variant == TDM_VARIANT_GROUP)
        rc = tdm_kernel_launch(sd->d, "tdm_search_group", ga, sizeof ga / sizeof *ga,
                               (size_t)nr * pl->local, pl->local, 1, &e0, &e1, err);
    else
        rc = tdm_kernel_launch(sd->d, "tdm_search_range", ra, sizeof ra / sizeof *ra,
                               tdm_round_up(nr, pl->local), pl->local, 1, &e0, &e1, err);
    ev_release(e0);
    if (rc)
        return rc;
    size_t wg = tdm_search_merge_local(sd->d);
    *launches += 1;
    uint32_t per;
    cl_uint ng = select_groups(sd->d, nr, cp, &per), mr = nr, mcap = cp, moff = 0;
    cl_mem *mh = &s->b[B_HS], *md = &s->b[B_HD], *mn = &s->b[B_HN];
    cl_uint area2 = ng; /* the second output area's first slice */
    for (uint32_t stage = 0; ng > 1; stage++) {
        cl_uint pr = per, ooff = stage % 2 ? area2 : 0; /* areas in turn */
        tdm_karg sa[] = {
            TDM_KARG_MEM(mh),          TDM_KARG_MEM(md),          TDM_KARG_MEM(mn),
            TDM_KARG_U32(&moff),       TDM_KARG_U32(&mr),         TDM_KARG_U32(&mcap),
            TDM_KARG_U32(&kk),         TDM_KARG_U32(&pr),         TDM_KARG_MEM(&s->b[B_SS]),
            TDM_KARG_MEM(&s->b[B_SD]), TDM_KARG_MEM(&s->b[B_SN]), TDM_KARG_U32(&ooff),
        };
        cl_event e2 = NULL;
        rc = tdm_kernel_launch(sd->d,
                               tdm_search_small_fits(sd->d, wg, kk, (uint64_t)pr * mcap)
                                   ? "tdm_search_select_small"
                                   : "tdm_search_select",
                               sa, sizeof sa / sizeof *sa, (size_t)ng * wg, wg, 1, &e1, &e2, err);
        ev_release(e1);
        e1 = e2;
        if (rc)
            return rc;
        *launches += 1;
        mh = &s->b[B_SS];
        md = &s->b[B_SD];
        mn = &s->b[B_SN];
        mr = ng;
        mcap = kk;
        moff = ooff;
        /* another stage while more than select_fan(k) slices are left */
        per = select_fan(kk);
        ng = mr > per ? (mr + per - 1) / per : 1;
    }
    tdm_karg ma[] = {
        TDM_KARG_MEM(mh),  TDM_KARG_MEM(md),   TDM_KARG_MEM(mn), TDM_KARG_U32(&moff),
        TDM_KARG_U32(&mr), TDM_KARG_U32(&mcap), TDM_KARG_U32(&kk),
        TDM_KARG_U32(&p2), TDM_KARG_MEM(&s->b[B_OUT]), TDM_KARG_MEM(&s->b[B_OUTN]),
        TDM_KARG_MEM(&s->b[B_STATUS]),
    };
    int small = tdm_search_small_fits(sd->d, wg, kk, (uint64_t)mr * mcap);
    rc = tdm_kernel_launch(sd->d, small ? "tdm_search_merge_small" : "tdm_search_merge", ma,
                           sizeof ma / sizeof *ma, wg, wg, 1, &e1, ev, err);
    ev_release(e1);
    if (rc == TDM_OK)
        *launches += 1;
    return rc;
}

/* The compressed variant reads the index itself, whose upload (res.ready)
 * and the list cache's (wait) are on the transfer queue: a marker on q
 * waits for those not complete yet (none once the index is in: no command). */
int tdm_search_after_index(const tdm_sdev *sd, cl_command_queue q, cl_uint nwait,
                           const cl_event *wait, tdm_err *err)
{
    cl_event all[2];
    cl_uint n = 0;
    for (cl_uint i = 0; i <= nwait && i < 2; i++) {
        cl_event e = i < nwait ? wait[i] : sd->res.ready;
        cl_int st = CL_COMPLETE;
        if (e && clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
                     CL_SUCCESS)
            st = CL_QUEUED; /* unknown: wait for it */
        if (e && st != CL_COMPLETE)
            all[n++] = e;
    }
    if (!n)
        return TDM_OK;
    tdm_wait_flush(q, n, all);
    cl_int cr = clEnqueueMarkerWithWaitList(q, n, all, NULL);
    return cr == CL_SUCCESS ? TDM_OK
                            : tdm_cl_fail(err, cr, "clEnqueueMarkerWithWaitList (index upload)");
}

int tdm_search_dev_run(const tdm_sdev *sd, const tdm_sprep *p, uint32_t ndocs,
                       const tdm_splan *pl, int salg, uint32_t k, tdm_sout *out, tdm_err *err)
{
    uint32_t cap = k < pl->rlen ? k : pl->rlen;
    uint32_t pow2 = tdm_pow2_at_least(k);
    tdm_sprof pf;
    tdm_sprof_begin(&pf, salg, k);
    tdm_sprof_cur = pf.on ? &pf : NULL;
    scratch *sp = pool_take((tdm_sdev *)sd);
    if (!sp)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    scratch s = *sp; /* a copy: the pool entry is updated at the end */
    cl_event ev = NULL, dec = NULL, upev[1];
    tdm_listcache_hold *hold = NULL;
    cl_uint nup = 0;
    /* the uploads are not waited for here: p's arrays outlive the call,
       which ends after the last download */
    uint32_t per;
    uint32_t ngroups = select_groups(sd->d, pl->ranges, cap, &per);
    /* a list cache holds the query's lists (index/listcache.h); first, so
       that a query it refuses has enqueued nothing that reads p */
    double tph = pf.on ? tdm_sprof_now() : 0;
    int rc = tdm_resident_acquire_batch(&sd->res, &p->batch, &upev[nup], &hold, &out->bytes_up,
                                        err);
    if (rc == TDM_OK && upev[nup])
        nup++;
    tdm_sprof_host(&pf, "phase: pool take, list hold", pf.t0);
    tph = pf.on ? tdm_sprof_now() : 0;
    if (rc == TDM_OK)
        rc = make_buffers(sd->d, p, pl, salg, cap, pow2, k, ngroups, &s, out, err);
    tdm_sprof_host(&pf, "phase: buffers and uploads", tph);
    tph = pf.on ? tdm_sprof_now() : 0;
    cl_command_queue q = run_queue(sd->d);
    if (rc == TDM_OK && zrange(pl)) /* the cursors decode what they enter */
        rc = tdm_search_after_index(sd, q, nup, upev, err);
    else if (rc == TDM_OK && and_selects(p, pl, salg))
        rc = tdm_and_sel_enqueue(&sd->res, q, &s.dsc, &p->andsel, 1, s.b[B_SELTAB],
                                 s.b[B_SELLEAD],
                                 s.b[B_SELFLAGS], s.ajobs, s.b[B_DOCS], s.b[B_FREQS],
                                 s.b[B_TERMS], s.b[B_STATUS], nup, upev,
                                 pf.events ? &dec : NULL, &out->launches,
                                 &out->bytes_up, err);
    else if (rc == TDM_OK) /* its event only where profiled */
        rc = tdm_decode_batch_enqueue_in(&sd->res, q, &p->batch, s.jobs, s.b[B_DOCS],
                                         s.b[B_FREQS], s.b[B_STATUS], &s.dsc, nup, upev,
                                         pf.events ? &dec : NULL, err);
    for (cl_uint i = 0; i < nup; i++)
        ev_release(upev[i]);
    tdm_sprof_host(&pf, "phase: decode (or AND selection) enqueue", tph);
    tph = pf.on ? tdm_sprof_now() : 0;
    for (int c = 0; rc == TDM_OK && !and_selects(p, pl, salg) && !zrange(pl) &&
                    c < TDM_CODEC_COUNT; c++)
        out->launches += p->batch.njobs[c] ? 1 : 0;
    if (rc == TDM_OK && salg == TDM_SALG_AND_OR) {
        /* AND, then OR, which the device skips when AND found k */
        cl_event e_and = NULL;
        rc = launch(sd, p, ndocs, pl, TDM_SALG_AND, k, cap, pow2, 0, &s, dec, &e_and,
                    &out->launches, err);
        if (rc == TDM_OK)
            rc = launch(sd, p, ndocs, pl, TDM_SALG_OR, k, cap, pow2, k, &s, e_and, &ev,
                        &out->launches, err);
        ev_release(e_and);
    } else if (rc == TDM_OK) {
        rc = launch(sd, p, ndocs, pl, salg, k, cap, pow2, 0, &s, dec, &ev, &out->launches, err);
    }
    tdm_sprof_host(&pf, "phase: bounds, seed, range, select, merge enqueue", tph);
    tph = pf.on ? tdm_sprof_now() : 0;
    if (dec) {
        tdm_sprof_event(&pf, "decode (last kernel)", dec);
        clReleaseEvent(dec);
    }
    uint32_t n[3] = {0, 0, 0};
    /* the header (counts, status) and the k keys in one copy, in order
       after the merge on the same queue */
    uint64_t *got = malloc(((size_t)k + 2) * 8);
    if (rc == TDM_OK && !got)
        rc = tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc == TDM_OK)
        rc = tdm_download(sd->d, s.b[B_OUT], 0, ((size_t)k + 2) * 8, got, 0, NULL, NULL, err);
    if (rc == TDM_OK) {
        n[0] = (uint32_t)got[0];
        n[1] = (uint32_t)(got[0] >> 32);
        n[2] = (uint32_t)got[1];
        memcpy(out->keys, got + 2, (size_t)k * 8);
    }
    free(got);
    tdm_sprof_host(&pf, "phase: download (waits for the device)", tph);
    tph = pf.on ? tdm_sprof_now() : 0;
    if (rc == TDM_OK && (n[2] & TDM_CODEC_ST_CORRUPT))
        rc = tdm_err_set(err, TDM_ERR_CORRUPT, "%s: section arena: a list of the query is "
                         "damaged (its payload failed to decode, or decoded out of order, on "
                         "device %s)", tdm_ireader_path(sd->res.r), sd->d->info.name);
    else if (rc == TDM_OK && n[2])
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "search: decode jobs refused on device %s "
                         "(status %u)", sd->d->info.name, n[2]);
    if (rc == TDM_OK && n[0] > k)
        rc = tdm_err_set(err, TDM_ERR_INTERNAL, "search merge: %u results for k = %u", n[0], k);
    if (rc == TDM_OK) {
        out->n = n[0];
        out->total = n[1];
        out->bytes_down += ((size_t)k + 2) * 8;
    }
    ev_release(ev);
    if (rc) { /* commands may still read p's arrays and the held lists: wait for them */
        cl_event mk = NULL;
        if (clEnqueueMarkerWithWaitList(run_queue(sd->d), 0, NULL, &mk) == CL_SUCCESS && mk) {
            clWaitForEvents(1, &mk);
            clReleaseEvent(mk);
        }
    }
    tdm_resident_unhold(&sd->res, hold, NULL); /* the downloads waited for the kernels */
    tdm_sprof_host(&pf, "phase: checks, unhold", tph);
    tdm_sprof_end(&pf, rc == TDM_OK);
    tdm_sprof_cur = NULL;
    s.next = NULL;
    *sp = s;
    if (rc == TDM_OK)
        pool_give((tdm_sdev *)sd, sp);
    else
        scratch_free(sp);
    return rc;
}
