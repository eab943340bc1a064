/* The search kernels' driver (drive/search.h): per call, the query's scratch
 * buffers and tables uploaded, its lists decoded on the device (one launch
 * per codec of its lists, resident/decode_jobs.h), the bounds kernels where
 * the algorithm prunes, the range (or group) kernel and the merge kernel,
 * then the k keys and the counts copied back: a number of commands that
 * grows with nothing but the codecs present. The compressed variant
 * (TDM_VARIANT_COMPRESSED) has no decode: its kernel reads the resident
 * index, so a query is the upload, tdm_search_zrange, the merge, the copy. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/layout.h"
#include "resident/listcache.h"
#include "runtime/tune_table.h"
#include "search.h"
#include "search_pack.h"
#include "search_seed.h"
#include "tandem.h"

/* One device run (tdm_search_dev_run): the device and its handle, the queue
 * every command of the run goes on, and the run's profile. Every step of
 * the run takes it, so that profiling is the run's own, not a thread's.
 *
 * The queue is the device's queue without profiling, where an event costs
 * nothing to skip (H200: an enqueue 4.5 us, with an event 6.4 us; 11.7 on
 * the profiling queue, a 1 KB write 3 us instead of 9), and no event is made
 * unless the run is profiled, on the profiling queue. Every command of a run
 * is on that one in-order queue (copies too: on the H200 the transfer
 * queue's download started ~35 us after the merge it waited for), so the
 * run's commands need no wait list for each other: run_launch and run_copy
 * take none. What crosses queues (the index's and the list cache's uploads,
 * on the transfer queue) is waited for by event, through
 * tdm_search_after_index and the decode and selection enqueues, each
 * flushing the other queue first (tdm_wait_flush).
 *
 * Under TANDEM_RUN_QUEUES=per-run the queue is the run's scratch's own
 * (run_queue), made like the device's, so that runs on several host threads
 * (a lane's slots, a batch call's lone queries) overlap on the device
 * instead of queueing behind each other; nothing else waits on it, and the
 * run still waits only for its own commands. */
typedef struct srun {
    const tdm_sdev *sd;
    tdm_device *d;
    cl_command_queue q;
    tdm_sprof *pf;      /* NULL: not profiled */
    uint32_t *launches; /* the run's kernel launches, counted */
} srun;

int tdm_search_dev_one_thread(const tdm_device *d)
{
    return d->serial || tdm_tune_kind_of(&d->info) == TDM_KIND_SIMULATOR;
}

static void run_init(srun *r, const tdm_sdev *sd, tdm_sprof *pf, uint32_t *launches)
{
    r->sd = sd;
    r->d = sd->d;
    r->pf = pf->on ? pf : NULL;
    r->q = r->pf && r->pf->events ? r->d->queue : r->d->lat;
    r->launches = launches;
}

/* Where the profile wants device times: the event for a command (else NULL). */
static cl_event *run_event(const srun *r, cl_event *e)
{
    *e = NULL;
    return r->pf && r->pf->events ? e : NULL;
}

/* Records a command's event in the profile under `name` and releases it. */
static void run_record(const srun *r, const char *name, cl_event e)
{
    tdm_sprof_take(r->pf, name, &e);
}

/* A host phase of the profile from *t to now; *t becomes now. */
static void run_phase(const srun *r, const char *name, double *t)
{
    if (!r->pf)
        return;
    tdm_sprof_host(r->pf, name, *t);
    *t = tdm_sprof_now();
}

/* Launches kernel `name` with args on the run's queue, in order after the
 * run's earlier commands. Profiled, the launch's host steps are timed one
 * by one and its event kept for the run's table. */
static int run_launch(const srun *r, const char *name, const tdm_karg *args, cl_uint nargs,
                      size_t global, size_t local, tdm_err *err)
{
    tdm_sprof *pf = r->pf;
    int rc = TDM_OK;
    if (!pf) {
        rc = tdm_kernel_launch_on(r->d, r->q, name, args, nargs, global, local, 0, NULL, NULL,
                                  err);
    } else {
        double t0 = tdm_sprof_now();
        cl_kernel k;
        if ((rc = tdm_kernel_borrow(r->d, name, &k, err)))
            return rc;
        double t1 = tdm_sprof_now();
        cl_int cr = CL_SUCCESS;
        for (cl_uint i = 0; cr == CL_SUCCESS && i < nargs; i++)
            cr = clSetKernelArg(k, i, args[i].size, args[i].p);
        double t2 = tdm_sprof_now();
        cl_event e, *ev = run_event(r, &e);
        if (cr == CL_SUCCESS)
            cr = tdm_kernel_enqueue(r->d, r->q, k, name, global, local, 0, NULL, ev);
        double t3 = tdm_sprof_now();
        tdm_kernel_return(r->d, k);
        if (cr != CL_SUCCESS)
            return tdm_cl_fail(err, cr, "clSetKernelArg/clEnqueueNDRangeKernel (profiled)");
        tdm_sprof_host_span(pf, "launch: borrow", t0, t1);
        tdm_sprof_host_span(pf, "launch: set args", t1, t2);
        tdm_sprof_host_span(pf, "launch: clEnqueueNDRangeKernel", t2, t3);
        tdm_sprof_host(pf, "launch: return", t3);
        tdm_sprof_host(pf, name, t0);
        run_record(r, name, e);
    }
    if (rc == TDM_OK)
        ++*r->launches;
    return rc;
}

/* A copy between host and m on the run's queue, in order with its kernels:
 * blocking, or not (then `host` must outlive the run's last command). */
static int run_copy(const srun *r, int up, int blocking, cl_mem m, size_t bytes, void *host,
                    tdm_err *err)
{
    double t = r->pf ? tdm_sprof_now() : 0;
    cl_event e, *ev = run_event(r, &e);
    cl_bool block = blocking ? CL_TRUE : CL_FALSE;
    cl_int rc = up ? clEnqueueWriteBuffer(r->q, m, block, 0, bytes, host, 0, NULL, ev)
                   : clEnqueueReadBuffer(r->q, m, block, 0, bytes, host, 0, NULL, ev);
    if (rc != CL_SUCCESS) {
        tdm_cl_fail(err, rc, up ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
        tdm_err_append(err, " (%zu bytes %s %s)", bytes, up ? "to" : "from", r->d->info.name);
        return err->code;
    }
    if (r->pf) {
        tdm_sprof_host(r->pf, up ? (block ? "upload (blocking)" : "enqueue upload")
                                 : (block ? "download (blocking)" : "enqueue download"), t);
        run_record(r, up ? "upload" : "download", e);
    }
    return TDM_OK;
}

/* The kernels' algorithm codes are the host's (search_layout.h). */
_Static_assert(TDM_SALG_OR == TDM_ALG_OR && TDM_SALG_AND == TDM_ALG_AND &&
                   TDM_SALG_WAND == TDM_ALG_WAND && TDM_SALG_BMW == TDM_ALG_BMW &&
                   TDM_SALG_MAXSCORE == TDM_ALG_MAXSCORE,
               "algorithm codes");

enum { B_DOCS, B_FREQS, B_TERMS, B_BMAX, B_CUR, B_ORD, B_HS, B_HD, B_HN, B_OUT, B_OUTN, B_STATUS,
       B_SS, B_SD, B_SN, B_SEED, B_SELTAB, B_SELLEAD, B_SELFLAGS, B_COUNT };

/* The compressed variant (cl/search_zrange.cl): no decode, no selection. */
static int zrange(const tdm_splan *pl)
{
    return pl->variant == TDM_VARIANT_COMPRESSED;
}

/* Exhaustive OR and AND read no bound (nor the terms' words 5 and 6). */
static int reads_bounds(int salg)
{
    return salg != TDM_SALG_OR && salg != TDM_SALG_AND && salg != TDM_SALG_AND_OR;
}

/* The block bounds made on the device from the stored ones: where the run
 * reads them, the plan says so and the preparation left them (a
 * preparation that made bmax, or whose bounds are not the stored ones,
 * uploads bmax). */
static int stored_bounds(const tdm_sprep *p, const tdm_splan *pl, int salg)
{
    return tdm_search_reads_blocks(p, salg) && p->bsrc && pl->bounds == TDM_SBOUNDS_STORED &&
           p->nbmax;
}

/* AND's block selection (plan/and_select.h) replaces the whole decode where
 * the plan says so (tdm_splan.and_select). */
static int and_selects(const tdm_sprep *p, const tdm_splan *pl, int salg)
{
    return salg == TDM_SALG_AND && p->andsel.nt > 1 && !zrange(pl) && pl->and_select;
}

/* Where the run decodes jobs of one codec only, that codec (else -1): the
 * host makes the decode's prefix sums (resident/decode_jobs.h), uploaded
 * with the rest, and the decode is one kernel, not two. */
static int host_prefix(const tdm_sprep *p, const tdm_splan *pl, int salg)
{
    if (zrange(pl) || and_selects(p, pl, salg))
        return -1; /* no decode, or AND's selection makes the jobs on the device */
    int one = -1;
    for (int c = 0; c < TDM_CODEC_COUNT; c++)
        if (p->batch.njobs[c])
            one = one < 0 ? c : TDM_CODEC_COUNT;
    return one < TDM_CODEC_COUNT ? one : -1;
}

/* The kernels launched with tdm_search_merge_local's groups. */
static const char *const merge_kernels[] = {
    "tdm_search_select", "tdm_search_select_radix", "tdm_search_select_small",
    "tdm_search_merge",  "tdm_search_merge_small",
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
    size_t l = TDM_TUNE_MERGE_LOCAL_GPU;
    while (l > cap && l > d->wg_size)
        l >>= 1;
    l = l < d->wg_size ? d->wg_size : l;
    __atomic_store_n(&d->merge_local, l, __ATOMIC_RELAXED);
    return l;
}

/* (drive/search.h) The kernels' TDM_SMALLK (16), TDM_SMALLK_PER (32) and
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
 * takes): TDM_TUNE_SELECT_FAN, or more at small k (TDM_TUNE_SELECT_KEYS). */
static uint32_t select_fan(uint32_t k)
{
    uint32_t f = TDM_TUNE_SELECT_KEYS / k;
    return f > TDM_TUNE_SELECT_FAN ? f : TDM_TUNE_SELECT_FAN;
}

/* The second select stage's groups (its output area follows the first's). */
static uint32_t select_groups2(uint32_t ng, uint32_t k)
{
    uint32_t f = select_fan(k);
    return ng > f ? (ng + f - 1) / f : 0;
}

/* The range kernel's groups that make the first select stage's slices in
 * the same launch (cl/search_range_sel.cl), 0 where it does not, and their
 * size. */
typedef struct fuse {
    uint32_t groups;
    size_t local;
} fuse;

/* Candidates the merge takes directly (tune_table.h, merge_direct_keys):
 * TANDEM_MERGE_DIRECT_KEYS, else the device's row. */
static uint32_t merge_direct_keys(const tdm_device *d)
{
    uint32_t v = tdm_settings_tuning(d->settings)->merge_direct_keys;
    return v ? v : tdm_tune_row_of(&d->info)->merge_direct_keys;
}

/* The select stages' filter at k (tune_table.h, merge_filter_max_k), else
 * their radix select: TANDEM_MERGE_FILTER, else the device's row. */
static int merge_filter(const tdm_device *d, uint32_t k)
{
    int v = tdm_settings_tuning(d->settings)->merge_filter;
    if (v)
        return v == TDM_TUNE_ON;
    return k <= tdm_tune_row_of(&d->info)->merge_filter_max_k;
}

/* The small select and merge kernels where they fit (tdm_search_small_fits):
 * TANDEM_MERGE_SMALL, else the device's row. */
static int merge_small(const tdm_device *d, size_t wg, uint32_t k, uint64_t n)
{
    int v = tdm_settings_tuning(d->settings)->merge_small;
    int on = v ? v == TDM_TUNE_ON : tdm_tune_row_of(&d->info)->merge_small != 0;
    return on && tdm_search_small_fits(d, wg, k, n);
}

/* Slices of k the merge takes after a select stage: select_fan(k), or as
 * many as merge_direct_keys holds (k = 1,000 on the H200: 16 slices, not
 * 8, so that a second stage leaves few enough and no third is launched). */
static uint32_t merge_slices(const tdm_device *d, uint32_t k)
{
    uint32_t f = select_fan(k), m = merge_direct_keys(d) / k;
    return m > f ? m : f;
}

/* After a stage that left n slices of k: another stage's groups while more
 * are left than the merge takes (1: the merge takes them), each reducing
 * select_fan(k) of them, or more where that leaves the merge few enough
 * (never fewer: the second output area holds select_groups2's slices);
 * *per their share. */
static uint32_t next_stage(const tdm_device *d, uint32_t k, uint32_t n, uint32_t *per)
{
    uint32_t most = merge_slices(d, k), fan = select_fan(k);
    uint32_t need = (n + most - 1) / most;
    *per = most > fan && need > fan ? need : fan;
    return n > most ? (n + *per - 1) / *per : 1;
}

/* The first select stage in the range kernel's launch (fuse): its groups,
 * TANDEM_RANGE_SELECT, else the device's row up to its range_select_max_k
 * where a select stage runs at all (more candidates than the merge takes
 * directly); never for AND-then-OR (its OR pass's gate) or the group
 * variant. Groups of the plan's range groups, or of
 * TDM_TUNE_RANGE_SELECT_LOCAL where those are single work-items (a CPU),
 * within the kernel's limit. */
static fuse fused(tdm_device *d, const tdm_splan *pl, int salg, uint32_t k, uint32_t cap)
{
    fuse f = {0, 0};
    int v = tdm_settings_tuning(d->settings)->range_select;
    if (salg == TDM_SALG_AND_OR || pl->variant == TDM_VARIANT_GROUP || v == TDM_TUNE_OFF)
        return f;
    if (v != TDM_TUNE_ON && (k > tdm_tune_row_of(&d->info)->range_select_max_k ||
                             (uint64_t)pl->ranges * cap <= merge_direct_keys(d)))
        return f;
    size_t l = pl->local > 1 ? pl->local : TDM_TUNE_RANGE_SELECT_LOCAL;
    size_t lim = tdm_kernel_wg_limit(d, zrange(pl) ? "tdm_search_zrange_sel"
                                                    : "tdm_search_range_sel");
    f.local = lim && l > lim ? lim : l;
    f.groups = (uint32_t)((pl->ranges + f.local - 1) / f.local);
    return f;
}

/* Stage-one groups for nr ranges of cap keys (1: the merge alone); *per
 * their share. */
static uint32_t select_groups(const tdm_device *d, uint32_t nr, uint32_t cap, uint32_t *per)
{
    if ((uint64_t)nr * cap <= merge_direct_keys(d)) {
        *per = nr;
        return 1;
    }
    uint32_t g = (nr + TDM_TUNE_SELECT_MIN_RANGES - 1) / TDM_TUNE_SELECT_MIN_RANGES;
    uint32_t cu = d->info.compute_units ? d->info.compute_units : 1;
    uint32_t most = cu * TDM_TUNE_SELECT_GROUPS_PER_CU;
    if (most < TDM_TUNE_SELECT_GROUPS_MIN)
        most = TDM_TUNE_SELECT_GROUPS_MIN; /* few cores: more stages rather than one long one */
    if (g > most)
        g = most;
    if (g < 1)
        g = 1;
    *per = (nr + g - 1) / g;
    return (nr + *per - 1) / *per;
}

/* The regions of a call's packed upload (search_pack.h), in layout order:
 * the block bounds, the largest, last (a write ends after the last region
 * it fills). R_JPRE and R_TSUM: the decode's prefix sums, made on the host
 * (host_prefix). */
enum { R_STATUS, R_TERMS, R_SELTAB, R_SELLEAD, R_JOBS, R_JPRE = R_JOBS + TDM_CODEC_COUNT, R_TSUM,
       R_SB, R_BMAX, R_COUNT };
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
    cl_command_queue q[2];  /* TANDEM_RUN_QUEUES=per-run: the runs' own in-order queue,
                               [0] like tdm_device.lat, [1] profiling like .queue; made
                               on first use, idle whenever the scratch is pooled */
    struct tdm_sscratch *next;
} scratch;

/* The runs' own queues are made and released one at a time: PoCL 3.1's
 * clCreateCommandQueue, called by four threads at once (a batch call's lone
 * queries, each with a new scratch), crashed inside PoCL in 2 runs of 5
 * under gdb (none in 6 so), though the specification makes it thread-safe (drivers have had
 * this bug: AMD's). Once per pooled scratch: costs nothing after. */
static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;

/* A queue of a scratch whose device the watchdog abandoned (hung) is left
 * as the engine leaves the device's own (engine.c): releasing it could wait
 * as long as the stuck commands. */
static void queues_free(scratch *s, const tdm_device *d)
{
    int hung = __atomic_load_n(&d->hung, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++) {
        if (!s->q[i] || hung)
            continue;
        pthread_mutex_lock(&queue_mu);
        clReleaseCommandQueue(s->q[i]);
        pthread_mutex_unlock(&queue_mu);
    }
}

/* The run's own queue from its scratch (per-run), made on first use with
 * the properties of the shared queue it stands for; r->q stays that shared
 * queue where the switch is off or the device keeps it
 * (tdm_search_dev_one_thread). */
static int run_queue(srun *r, scratch *s, tdm_err *err)
{
    tdm_device *d = r->d;
    if (!d->settings->run_queues || tdm_search_dev_one_thread(d))
        return TDM_OK;
    int prof = r->q == d->queue;
    if (!s->q[prof]) {
        pthread_mutex_lock(&queue_mu);
        int rc = prof ? tdm_queue_create(d, &s->q[1], err)
                      : tdm_queue_create_plain(d, &s->q[0], err);
        pthread_mutex_unlock(&queue_mu);
        if (rc != TDM_OK)
            return rc;
    }
    r->q = s->q[prof];
    return TDM_OK;
}

static void scratch_free(scratch *s, const tdm_device *d)
{
    if (!s)
        return;
    queues_free(s, d);
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
 * releases its buffers instead: OpenCL keeps them until its commands end;
 * so does a call that returns after the watchdog abandoned its device: its
 * queue is left, scratch_free). */
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
        scratch_free(s, sd->d);
    }
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
static int make_buffers(const srun *r, const tdm_sprep *p, const tdm_splan *pl, int salg,
                        uint32_t cap, uint32_t pow2, uint32_t k, uint32_t slices, scratch *s,
                        tdm_sout *out, tdm_err *err)
{
    tdm_device *d = r->d;
    size_t nt = p->nt, nr = pl->ranges, heap = nr * (size_t)cap;
    int sel = and_selects(p, pl, salg), zr = zrange(pl), pre = host_prefix(p, pl, salg);
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
        [B_SS] = slices ? (size_t)(slices + select_groups2(slices, k)) * k * 4 : 4,
        [B_SD] = slices ? (size_t)(slices + select_groups2(slices, k)) * k * 4 : 4,
        [B_SN] = slices ? (size_t)(slices + select_groups2(slices, k)) * 4 : 4,
        [B_SEED] = pl->seeded ? tdm_search_seed_bytes(p->nt) : 4,
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
        cl_int cr = clEnqueueFillBuffer(r->q, s->b[B_SEED], &zero, 4, 0,
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
        [R_SB] = stored_bounds(p, pl, salg) ? (size_t)nt * TDM_SB_W * 4 : 0,
        [R_JPRE] = pre >= 0 ? (size_t)p->batch.njobs[pre] * 4 : 0,
        [R_TSUM] = pre >= 0 ? ((size_t)tdm_decode_prefix_tiles(d, p->batch.njobs[pre]) + 1) * 4 : 0,
        [R_BMAX] = tdm_search_reads_blocks(p, salg) && p->nbmax ? p->nbmax * 4 : 4,
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
    int bounds = reads_bounds(salg), blocks = tdm_search_reads_blocks(p, salg);
    if (blocks && p->bsrc && p->nbmax && !need[R_SB]) /* a caller's bug: a bound not made */
        return tdm_err_set(err, TDM_ERR_INTERNAL, "search: block bounds not made "
                           "(tdm_sprep_bounds_fill)");
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
    if (pre >= 0) { /* the decode's prefix sums, checked against its outputs */
        rc = tdm_decode_prefix_fill(&r->sd->res, &p->batch, pre, 3u, (uint32_t)(s->cap[B_DOCS] / 4),
                                    (uint32_t)(s->cap[B_FREQS] / 4),
                                    (uint32_t *)tdm_spack_host(pk, R_JPRE),
                                    (uint32_t *)tdm_spack_host(pk, R_TSUM), err);
        end = pk->off[R_TSUM] + need[R_TSUM];
    }
    if (need[R_SB]) { /* bmax made on the device from these (prepare) */
        tdm_sprep_stored_rows(p, (uint32_t *)tdm_spack_host(pk, R_SB));
        end = pk->off[R_SB] + need[R_SB];
    }
    if (rc == TDM_OK && !need[R_SB] && blocks && !p->device_bounds && p->nbmax)
        FILL(R_BMAX, p->bmax, p->nbmax * 4);
#undef FILL
    if (rc)
        return rc;
    rc = run_copy(r, 1, 0, pk->parent, end, pk->host, err); /* in order before the kernels */
    if (rc == TDM_OK)
        out->bytes_up += end;
    return rc;
}

/* ---- one builder per kernel: its arguments by name, in the kernel's order */

/* tdm_search_bounds (cl/search_range.cl). */
static cl_uint bounds_args(const scratch *s, const tdm_sdev *sd, const cl_uint *nd,
                           const cl_uint *nt, const cl_uint *nb, const cl_uint *kind,
                           const cl_float *c0, const cl_float *c1, tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(&s->b[B_DOCS]), TDM_KARG_MEM(&s->b[B_FREQS]), TDM_KARG_MEM(&s->b[B_TERMS]),
        TDM_KARG_MEM(&sd->res.doclens), TDM_KARG_U32(nd), TDM_KARG_MEM(&s->b[B_BMAX]),
        TDM_KARG_U32(nt), TDM_KARG_U32(nb), TDM_KARG_U32(kind), {sizeof *c0, c0},
        {sizeof *c1, c1},
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* What the range kernels (tdm_search_range, _group, _zrange) take of one
 * pass, by name; range_args, group_args and zrange_args put them in each
 * kernel's order. */
typedef struct pass_args {
    const cl_mem *docs, *freqs, *terms, *bmax, *doclens, *cur, *ord, *hs, *hd, *hn;
    const cl_mem *gate;   /* the merge's counts (AND-then-OR's OR pass reads them) */
    const cl_mem *status; /* the call's status word (group, zrange) */
    const cl_mem *os, *od, *on; /* the fused select stage's slices (_sel kernels) */
    cl_uint nt, nranges, rlen, ndocs, cap, alg, kind, gate_min;
    cl_uint k; /* the fused select stage's (_sel kernels) */
    cl_float c0, c1;
    /* the compressed variant: the resident index, its block buffers'
       width and its scratch's layout */
    const tdm_resident *res;
    cl_uint nlists, arena_words, spans, bw, layout;
} pass_args;

#define PASS_MAX_ARGS 36

/* Appends n arguments to a[*na]. */
static void put(tdm_karg *a, cl_uint *na, const tdm_karg *args, size_t n)
{
    memcpy(a + *na, args, n * sizeof *args);
    *na += (cl_uint)n;
}

/* What tdm_search_range and tdm_search_range_sel take first (TDM_SR_ARGS). */
static cl_uint sr_args(const pass_args *p, tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(p->docs),     TDM_KARG_MEM(p->freqs),    TDM_KARG_MEM(p->terms),
        TDM_KARG_MEM(p->bmax),     TDM_KARG_MEM(p->doclens),  TDM_KARG_MEM(p->cur),
        TDM_KARG_MEM(p->ord),      TDM_KARG_MEM(p->hs),       TDM_KARG_MEM(p->hd),
        TDM_KARG_MEM(p->hn),       TDM_KARG_U32(&p->nt),      TDM_KARG_U32(&p->nranges),
        TDM_KARG_U32(&p->rlen),    TDM_KARG_U32(&p->ndocs),   TDM_KARG_U32(&p->cap),
        TDM_KARG_U32(&p->alg),     TDM_KARG_U32(&p->kind),    {sizeof p->c0, &p->c0},
        {sizeof p->c1, &p->c1},
    };
    _Static_assert(sizeof args / sizeof *args + 4 <= PASS_MAX_ARGS, "range args and a tail");
    cl_uint na = 0;
    put(a, &na, args, sizeof args / sizeof *args);
    return na;
}

/* The gate of AND-then-OR's OR pass (tdm_search_range, _zrange). */
static void gate_args(const pass_args *p, tdm_karg *a, cl_uint *na)
{
    const tdm_karg args[] = {TDM_KARG_MEM(p->gate), TDM_KARG_U32(&p->gate_min)};
    put(a, na, args, 2);
}

/* The fused select stage's (tdm_search_range_sel, _zrange_sel). */
static void sel_args(const pass_args *p, tdm_karg *a, cl_uint *na)
{
    const tdm_karg args[] = {TDM_KARG_U32(&p->k), TDM_KARG_MEM(p->os), TDM_KARG_MEM(p->od),
                             TDM_KARG_MEM(p->on)};
    put(a, na, args, 4);
}

/* tdm_search_range (cl/search_range.cl). */
static cl_uint range_args(const pass_args *p, tdm_karg *a)
{
    cl_uint na = sr_args(p, a);
    gate_args(p, a, &na);
    return na;
}

/* tdm_search_range_sel (cl/search_range_sel.cl). */
static cl_uint range_sel_args(const pass_args *p, tdm_karg *a)
{
    cl_uint na = sr_args(p, a);
    sel_args(p, a, &na);
    return na;
}

/* tdm_search_group (cl/search_group.cl): no block bounds, no ord. */
static cl_uint group_args(const pass_args *p, tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(p->docs),     TDM_KARG_MEM(p->freqs),    TDM_KARG_MEM(p->terms),
        TDM_KARG_MEM(p->doclens),  TDM_KARG_MEM(p->cur),      TDM_KARG_MEM(p->hs),
        TDM_KARG_MEM(p->hd),       TDM_KARG_MEM(p->hn),       TDM_KARG_U32(&p->nt),
        TDM_KARG_U32(&p->nranges), TDM_KARG_U32(&p->rlen),    TDM_KARG_U32(&p->ndocs),
        TDM_KARG_U32(&p->cap),     TDM_KARG_U32(&p->alg),     TDM_KARG_U32(&p->kind),
        {sizeof p->c0, &p->c0},    {sizeof p->c1, &p->c1},    TDM_KARG_MEM(p->gate),
        TDM_KARG_U32(&p->gate_min), TDM_KARG_MEM(p->status),
    };
    _Static_assert(sizeof args / sizeof *args <= PASS_MAX_ARGS, "group args");
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* What tdm_search_zrange and tdm_search_zrange_sel take first
 * (TDM_ZRK_ARGS): the resident index (TDM_ZS_IDX), the cursors' block
 * buffers in docs and freqs. */
static cl_uint zr_args(const pass_args *p, tdm_karg *a)
{
    const tdm_resident *rs = p->res;
    const tdm_karg args[] = {
        TDM_KARG_MEM(&rs->arena),       TDM_KARG_MEM(&rs->lists),    TDM_KARG_MEM(&rs->codecs),
        TDM_KARG_MEM(&rs->block_last),  TDM_KARG_MEM(&rs->block_docs),
        TDM_KARG_MEM(&rs->block_freqs), TDM_KARG_U32(&p->nlists),   TDM_KARG_U32(&p->arena_words),
        TDM_KARG_U32(&p->spans),        TDM_KARG_MEM(p->docs),       TDM_KARG_MEM(p->freqs),
        TDM_KARG_U32(&p->bw),           TDM_KARG_MEM(p->terms),      TDM_KARG_MEM(p->bmax),
        TDM_KARG_MEM(p->doclens),       TDM_KARG_MEM(p->cur),        TDM_KARG_MEM(p->ord),
        TDM_KARG_MEM(p->hs),            TDM_KARG_MEM(p->hd),         TDM_KARG_MEM(p->hn),
        TDM_KARG_U32(&p->nt),           TDM_KARG_U32(&p->nranges),   TDM_KARG_U32(&p->rlen),
        TDM_KARG_U32(&p->ndocs),        TDM_KARG_U32(&p->cap),       TDM_KARG_U32(&p->alg),
        TDM_KARG_U32(&p->kind),         {sizeof p->c0, &p->c0},      {sizeof p->c1, &p->c1},
    };
    _Static_assert(sizeof args / sizeof *args + 6 <= PASS_MAX_ARGS, "zrange args and a tail");
    cl_uint na = 0;
    put(a, &na, args, sizeof args / sizeof *args);
    return na;
}

/* The call's status word and the scratch's layout (the zrange kernels). */
static void zr_tail_args(const pass_args *p, tdm_karg *a, cl_uint *na)
{
    const tdm_karg args[] = {TDM_KARG_MEM(p->status), TDM_KARG_U32(&p->layout)};
    put(a, na, args, 2);
}

/* tdm_search_zrange (cl/search_zrange.cl). */
static cl_uint zrange_args(const pass_args *p, tdm_karg *a)
{
    cl_uint na = zr_args(p, a);
    gate_args(p, a, &na);
    zr_tail_args(p, a, &na);
    return na;
}

/* tdm_search_zrange_sel (cl/search_range_sel.cl). */
static cl_uint zrange_sel_args(const pass_args *p, tdm_karg *a)
{
    cl_uint na = zr_args(p, a);
    zr_tail_args(p, a, &na);
    sel_args(p, a, &na);
    return na;
}

/* Where a select or merge stage reads its keys and how many. */
typedef struct keys_in {
    const cl_mem *hs, *hd, *hn;
    cl_uint off, nranges, cap;
} keys_in;

/* tdm_search_select, tdm_search_select_radix and tdm_search_select_small
 * (cl/search_merge.cl). */
static cl_uint select_args(const keys_in *in, const cl_uint *k, const cl_uint *per,
                           const scratch *s, const cl_uint *out_off, tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(in->hs),        TDM_KARG_MEM(in->hd),         TDM_KARG_MEM(in->hn),
        TDM_KARG_U32(&in->off),      TDM_KARG_U32(&in->nranges),   TDM_KARG_U32(&in->cap),
        TDM_KARG_U32(k),             TDM_KARG_U32(per),            TDM_KARG_MEM(&s->b[B_SS]),
        TDM_KARG_MEM(&s->b[B_SD]),   TDM_KARG_MEM(&s->b[B_SN]),    TDM_KARG_U32(out_off),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* tdm_search_merge and tdm_search_merge_small (cl/search_merge.cl). */
static cl_uint merge_args(const keys_in *in, const cl_uint *k, const cl_uint *pow2,
                          const scratch *s, tdm_karg *a)
{
    const tdm_karg args[] = {
        TDM_KARG_MEM(in->hs),      TDM_KARG_MEM(in->hd),         TDM_KARG_MEM(in->hn),
        TDM_KARG_U32(&in->off),    TDM_KARG_U32(&in->nranges),   TDM_KARG_U32(&in->cap),
        TDM_KARG_U32(k),           TDM_KARG_U32(pow2),           TDM_KARG_MEM(&s->b[B_OUT]),
        TDM_KARG_MEM(&s->b[B_OUTN]), TDM_KARG_MEM(&s->b[B_STATUS]),
    };
    memcpy(a, args, sizeof args);
    return sizeof args / sizeof *args;
}

/* The block bounds where the device computes them, then each term's bound
 * and MaxScore's order, then the shared threshold's seed where planned. */
static int prepare(const srun *r, const tdm_sprep *p, const tdm_splan *pl, int salg, uint32_t k,
                   scratch *s, tdm_err *err)
{
    const tdm_sdev *sd = r->sd;
    cl_uint nt = p->nt, nb = (cl_uint)p->nbmax, kind = (cl_uint)p->kind, nd = sd->res.ndocs;
    cl_float c0 = p->c0, c1 = p->c1;
    size_t wg = r->d->wg_size;
    int rc = TDM_OK;
    if (stored_bounds(p, pl, salg)) {
        tdm_karg a[] = {TDM_KARG_MEM(&s->b[B_TERMS]),       TDM_KARG_MEM(&s->pk.sub[R_SB]),
                        TDM_KARG_MEM(&sd->res.block_max), TDM_KARG_MEM(&s->b[B_BMAX]),
                        TDM_KARG_U32(&nt),                TDM_KARG_U32(&nb)};
        rc = run_launch(r, "tdm_search_stored_bounds_batch", a, 6, tdm_round_up(nb, wg), wg, err);
    }
    if (p->device_bounds) { /* else words 5 and 6 came from the host (tdm_sprep_host_order) */
        tdm_karg a[11];
        cl_uint na = bounds_args(s, sd, &nd, &nt, &nb, &kind, &c0, &c1, a);
        rc = run_launch(r, "tdm_search_bounds", a, na, tdm_round_up(nb, wg), wg, err);
        tdm_karg oa[] = {TDM_KARG_MEM(&s->b[B_TERMS]), TDM_KARG_MEM(&s->b[B_BMAX]),
                         TDM_KARG_U32(&nt)}; /* tdm_search_order */
        if (rc == TDM_OK)
            rc = run_launch(r, "tdm_search_order", oa, 3, wg, wg, err);
    }
    if (rc == TDM_OK && pl->seeded) {
        /* the kept histogram is zero (make_buffers, and each seed after it) */
        cl_event e, *ev = run_event(r, &e);
        rc = tdm_search_seed_enqueue(r->d, r->q, s->b[B_DOCS], s->b[B_FREQS], s->b[B_TERMS],
                                     sd->res.doclens, sd->res.ndocs, s->b[B_SEED], 1, nt,
                                     (uint32_t)p->npost, kind, c0, c1, k, NULL, ev, r->launches,
                                     err);
        run_record(r, "tdm_search_seed (last kernel)", rc == TDM_OK ? e : NULL);
    }
    return rc;
}

/* The range kernel of the plan's variant over the pass's arguments. */
static int launch_ranges(const srun *r, const tdm_splan *pl, const pass_args *pa,
                         const fuse *fu, tdm_err *err)
{
    tdm_karg a[PASS_MAX_ARGS];
    cl_uint nr = pa->nranges;
    if (fu->groups && zrange(pl))
        return run_launch(r, "tdm_search_zrange_sel", a, zrange_sel_args(pa, a),
                          (size_t)fu->groups * fu->local, fu->local, err);
    if (fu->groups)
        return run_launch(r, "tdm_search_range_sel", a, range_sel_args(pa, a),
                          (size_t)fu->groups * fu->local, fu->local, err);
    if (zrange(pl))
        return run_launch(r, "tdm_search_zrange", a, zrange_args(pa, a),
                          tdm_round_up(nr, pl->local), pl->local, err);
    if (pl->variant == TDM_VARIANT_GROUP)
        return run_launch(r, "tdm_search_group", a, group_args(pa, a), (size_t)nr * pl->local,
                          pl->local, err);
    return run_launch(r, "tdm_search_range", a, range_args(pa, a), tdm_round_up(nr, pl->local),
                      pl->local, err);
}

/* The select stages, while more than one group's worth of ranges is left,
 * then the merge into B_OUT. Where the range kernel's groups made the
 * first stage's slices (fu), the stages go on from those. */
static int launch_merge(const srun *r, uint32_t nr, uint32_t cap, uint32_t k, uint32_t pow2,
                        const fuse *fu, scratch *s, tdm_err *err)
{
    size_t wg = tdm_search_merge_local(r->d);
    uint32_t per, stage = 0;
    cl_uint ng = select_groups(r->d, nr, cap, &per), kk = k, p2 = pow2;
    keys_in in = {&s->b[B_HS], &s->b[B_HD], &s->b[B_HN], 0, nr, cap};
    cl_uint area2 = ng; /* the second output area's first slice */
    if (fu->groups) {
        in = (keys_in){&s->b[B_SS], &s->b[B_SD], &s->b[B_SN], 0, fu->groups, kk};
        area2 = fu->groups;
        stage = 1;
        ng = next_stage(r->d, kk, fu->groups, &per);
    }
    tdm_karg a[12];
    int rc = TDM_OK, filter = merge_filter(r->d, k);
    for (; rc == TDM_OK && ng > 1; stage++) {
        cl_uint pr = per, ooff = stage % 2 ? area2 : 0; /* areas in turn */
        int small = merge_small(r->d, wg, kk, (uint64_t)pr * in.cap);
        const char *kn = small    ? "tdm_search_select_small"
                         : filter ? "tdm_search_select"
                                  : "tdm_search_select_radix";
        rc = run_launch(r, kn, a, select_args(&in, &kk, &pr, s, &ooff, a), (size_t)ng * wg, wg,
                        err);
        in = (keys_in){&s->b[B_SS], &s->b[B_SD], &s->b[B_SN], ooff, ng, kk};
        ng = next_stage(r->d, kk, ng, &per);
    }
    if (rc)
        return rc;
    int small = merge_small(r->d, wg, kk, (uint64_t)in.nranges * in.cap);
    return run_launch(r, small ? "tdm_search_merge_small" : "tdm_search_merge", a,
                      merge_args(&in, &kk, &p2, s, a), wg, wg, err);
}

/* One pass: bounds where needed, range or group kernel (with the first
 * select stage where fu says), merge. gate_min: 0, or k for AND-then-OR's
 * OR pass (skipped on the device when the AND pass's counts, in B_OUTN,
 * reach k). */
static int launch(const srun *r, const tdm_sprep *p, uint32_t ndocs, const tdm_splan *pl,
                  int salg, uint32_t k, uint32_t cap, uint32_t pow2, uint32_t gate_min,
                  const fuse *fu, scratch *s, tdm_err *err)
{
    int rc = TDM_OK;
    if (reads_bounds(salg) && (rc = prepare(r, p, pl, salg, k, s, err)))
        return rc;
    const tdm_resident *rs = &r->sd->res;
    pass_args pa = {
        .docs = &s->b[B_DOCS], .freqs = &s->b[B_FREQS], .terms = &s->b[B_TERMS],
        .bmax = &s->b[B_BMAX], .doclens = &rs->doclens, .cur = &s->b[B_CUR],
        .ord = &s->b[B_ORD], .hs = &s->b[B_HS], .hd = &s->b[B_HD], .hn = &s->b[B_HN],
        .gate = &s->b[B_OUTN], .status = &s->b[B_STATUS],
        .nt = p->nt, .nranges = pl->ranges, .rlen = pl->rlen, .ndocs = ndocs, .cap = cap,
        .alg = (cl_uint)salg, .kind = (cl_uint)p->kind, .gate_min = gate_min,
        .c0 = p->c0, .c1 = p->c1,
        .res = rs, .nlists = rs->nlists, .arena_words = rs->arena_words, .spans = rs->spans,
        .bw = p->max_block, .layout = pl->zlayout,
        .k = k, .os = &s->b[B_SS], .od = &s->b[B_SD], .on = &s->b[B_SN],
    };
    if ((rc = launch_ranges(r, pl, &pa, fu, err)))
        return rc;
    return launch_merge(r, pl->ranges, cap, k, pow2, fu, s, err);
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

/* The query's inputs on the device, in order on the run's queue: the list
 * cache's hold of its lists (resident/listcache.h; first, so that a query it
 * refuses has enqueued nothing that reads p), the buffers and the one
 * upload, then the decode, AND's selection or (compressed variant, whose
 * cursors decode what they enter) a wait for the index. The uploads are
 * not waited for: p's arrays outlive the run, which ends after its
 * download. *hold gets the list cache's hold. */
static int run_inputs(const srun *r, const tdm_sprep *p, const tdm_splan *pl, int salg,
                      uint32_t cap, uint32_t pow2, uint32_t k, const fuse *fu, scratch *s,
                      tdm_listcache_hold **hold, tdm_sout *out, tdm_err *err)
{
    const tdm_sdev *sd = r->sd;
    double t = r->pf ? r->pf->t0 : 0;
    int pre = host_prefix(p, pl, salg);
    cl_event upev[1];
    cl_uint nup = 0;
    int rc = tdm_resident_acquire_batch(&sd->res, &p->batch, &upev[0], hold, &out->bytes_up, err);
    if (rc == TDM_OK && upev[0])
        nup = 1; /* on the transfer queue: waited for by event below */
    run_phase(r, "phase: pool take, list hold", &t);
    uint32_t per, ngroups = select_groups(r->d, pl->ranges, cap, &per);
    uint32_t slices = fu->groups ? fu->groups : ngroups > 1 ? ngroups : 0; /* stage one's */
    if (rc == TDM_OK)
        rc = make_buffers(r, p, pl, salg, cap, pow2, k, slices, s, out, err);
    run_phase(r, "phase: buffers and uploads", &t);
    cl_event dec, *ev = run_event(r, &dec); /* the decode's event only where profiled */
    if (rc == TDM_OK && zrange(pl))
        rc = tdm_search_after_index(sd, r->q, nup, upev, err);
    else if (rc == TDM_OK && and_selects(p, pl, salg))
        rc = tdm_and_sel_enqueue(&sd->res, r->q, &s->dsc, &p->andsel, 1, s->b[B_SELTAB],
                                 s->b[B_SELLEAD], s->b[B_SELFLAGS], s->ajobs, s->b[B_DOCS],
                                 s->b[B_FREQS], s->b[B_TERMS], s->b[B_STATUS], nup, upev, ev,
                                 r->launches, &out->bytes_up, err);
    else if (rc == TDM_OK && pre >= 0)
        rc = tdm_decode_batch_enqueue_pre(&sd->res, r->q, &p->batch, pre, s->jobs[pre],
                                          s->pk.sub[R_JPRE], s->pk.sub[R_TSUM], s->b[B_DOCS],
                                          s->b[B_FREQS], s->b[B_STATUS], nup, upev, ev, err);
    else if (rc == TDM_OK)
        rc = tdm_decode_batch_enqueue_in(&sd->res, r->q, &p->batch, s->jobs, s->b[B_DOCS],
                                         s->b[B_FREQS], s->b[B_STATUS], &s->dsc, nup, upev, ev,
                                         err);
    for (cl_uint i = 0; i < nup; i++)
        clReleaseEvent(upev[i]);
    if (ev)
        run_record(r, "decode (last kernel)", dec);
    /* each codec's kernels: the decode, after the count (and the scan past
       one tile) unless the host made the sums */
    for (int c = 0; rc == TDM_OK && !and_selects(p, pl, salg) && !zrange(pl) &&
                    c < TDM_CODEC_COUNT; c++)
        *r->launches += !p->batch.njobs[c] ? 0
                        : pre >= 0         ? 1
                                           : 2 + (tdm_decode_prefix_tiles(r->d,
                                                                         p->batch.njobs[c]) > 1);
    run_phase(r, "phase: decode (or AND selection) enqueue", &t);
    return rc;
}

/* The header (counts, status) and the k keys in one blocking copy, in order
 * after the merge on the run's queue, then checked. */
static int run_results(const srun *r, const scratch *s, uint32_t k, tdm_sout *out, tdm_err *err)
{
    const tdm_sdev *sd = r->sd;
    uint32_t n[3] = {0, 0, 0};
    size_t bytes = ((size_t)k + 2) * 8;
    uint64_t *got = malloc(bytes);
    int rc = got ? run_copy(r, 0, 1, s->b[B_OUT], bytes, got, err)
                 : tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    if (rc == TDM_OK) {
        n[0] = (uint32_t)got[0];
        n[1] = (uint32_t)(got[0] >> 32);
        n[2] = (uint32_t)got[1];
        memcpy(out->keys, got + 2, (size_t)k * 8);
    }
    free(got);
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
        out->bytes_down += bytes;
    }
    return rc;
}

/* After a failed run: commands may still read p's arrays and the held
 * lists; waits for them. */
static void run_drain(const srun *r)
{
    cl_event mk = NULL;
    if (clEnqueueMarkerWithWaitList(r->q, 0, NULL, &mk) == CL_SUCCESS && mk) {
        clWaitForEvents(1, &mk);
        clReleaseEvent(mk);
    }
}

int tdm_search_dev_run(const tdm_sdev *sd, const tdm_sprep *p, uint32_t ndocs,
                       const tdm_splan *pl, int salg, uint32_t k, tdm_sout *out, tdm_err *err)
{
    uint32_t cap = k < pl->rlen ? k : pl->rlen;
    uint32_t pow2 = tdm_pow2_at_least(k);
    scratch *sp = pool_take((tdm_sdev *)sd);
    if (!sp)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    tdm_sprof pf; /* TANDEM_SEARCH_PROFILE */
    tdm_sprof_begin(&pf, salg, k);
    srun r;
    run_init(&r, sd, &pf, &out->launches);
    scratch s = *sp; /* a copy: the pool entry is updated at the end */
    tdm_listcache_hold *hold = NULL;
    fuse fu = fused(sd->d, pl, salg, k, cap);
    int rc = run_queue(&r, &s, err);
    if (rc == TDM_OK)
        rc = run_inputs(&r, p, pl, salg, cap, pow2, k, &fu, &s, &hold, out, err);
    double t = r.pf ? tdm_sprof_now() : 0;
    if (rc == TDM_OK && salg == TDM_SALG_AND_OR) {
        /* AND, then OR, which the device skips when AND found k (no fused stage) */
        rc = launch(&r, p, ndocs, pl, TDM_SALG_AND, k, cap, pow2, 0, &fu, &s, err);
        if (rc == TDM_OK)
            rc = launch(&r, p, ndocs, pl, TDM_SALG_OR, k, cap, pow2, k, &fu, &s, err);
    } else if (rc == TDM_OK) {
        rc = launch(&r, p, ndocs, pl, salg, k, cap, pow2, 0, &fu, &s, err);
    }
    run_phase(&r, "phase: bounds, seed, range, select, merge enqueue", &t);
    if (rc == TDM_OK)
        rc = run_results(&r, &s, k, out, err);
    run_phase(&r, "phase: download (waits for the device)", &t);
    if (rc)
        run_drain(&r);
    tdm_resident_unhold(&sd->res, hold, NULL); /* the download waited for the kernels */
    run_phase(&r, "phase: checks, unhold", &t);
    tdm_sprof_end(&pf, rc == TDM_OK);
    s.next = NULL;
    *sp = s;
    if (rc == TDM_OK && !__atomic_load_n(&sd->d->hung, __ATOMIC_RELAXED))
        pool_give((tdm_sdev *)sd, sp);
    else
        scratch_free(sp, sd->d);
    return rc;
}
