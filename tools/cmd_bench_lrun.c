/* `tandem bench load`: one point. The arrival times are drawn first
 * (exponential gaps of mean 1 / rate from a seeded tdm_rng: Poisson
 * arrivals, the same for every policy at a rate), the queries taken from the
 * log in order, cycled. A pool of sender threads takes the arrivals in
 * order: each sleeps until its arrival's time, makes the (blocking) search
 * call and records the latency from the scheduled time to the answer, so a
 * backlog shows in the latencies (an open loop). The pool grows by a
 * thread whenever every sender is in a call (up to --senders); an arrival
 * that still finds every sender busy is sent late and counted; one that would be sent past
 * the give-up lag stops the point (the rest are dropped, each a deadline
 * miss). Every answer is checked against the oracle's. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmd_bench_load.h"
#include "common/rng.h"

static const char C[] = "bench load";

#define LATE_S 0.001        /* a send this much after its arrival time is late */
#define MAX_REPORTED 5      /* mismatches and failures described per point */
#define MAX_ARRIVALS 20000000u

typedef struct prun {
    tdm_bl *b;
    tdm_search *sh;
    tdm_search_options o;
    const double *t;      /* [n] arrival times, seconds from t0 */
    size_t n, nwarm;      /* arrivals [0, nwarm) warm up */
    double t0;
    double give_up;       /* a send this late stops the point */
    double limit;         /* seconds; > 0: a probe stops when 5 % are sure to exceed it */
    uint64_t hopeless;    /* ... this many */
    double *lat;          /* [n] seconds, -1 not answered */
    unsigned char *sent;  /* [n] */
    atomic_size_t next;
    atomic_int stop;
    atomic_uint_fast64_t inflight, max_inflight, over, late, mism, failed;
    atomic_uint_fast64_t answers; /* every answer so far, warm-up included */
    /* the pool: grows by one whenever every sender is in a call */
    pthread_t *th;        /* [cap] */
    unsigned cap;
    atomic_uint started;
    int spawn_failed;
    pthread_attr_t attr;
    pthread_mutex_t mu;   /* the counters below and stderr reports */
    double late_max;
    uint64_t share[TDM_SCHED_MAX_LANES], batch_mode, batched, other_policy;
    tdm_bl_point *p;
} prun;

static void sleep_until(double when)
{
    double now = tdm_cli_now();
    if (when <= now)
        return;
    /* tdm_cli_now is CLOCK_MONOTONIC: sleep on that clock to an absolute time */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double at = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + (when - now);
    ts.tv_sec = (time_t)at;
    ts.tv_nsec = (long)((at - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
        ;
}

/* The oracle's answer for what ran (AND_OR: AND when it had k matches). */
/* 0 if r is the oracle's answer to query q; else the first difference in why. */
int tdm_bl_check(const tdm_bl *b, const tdm_search_result *r, size_t q, char *why, size_t cap)
{
    return tdm_bq_answers_check(&b->ans_and, &b->ans_or, r, q, b->o.k, why, cap);
}

static void account(prun *pr, size_t i, const tdm_search_result *r)
{
    pthread_mutex_lock(&pr->mu);
    if (i >= pr->nwarm) {
        if (r->device >= 0 && r->device < TDM_SCHED_MAX_LANES)
            pr->share[r->device]++;
        pr->batch_mode += r->load_mode == TDM_LOAD_BATCH;
        pr->batched += r->batch > 1;
        pr->other_policy += r->policy != pr->o.policy;
    }
    pthread_mutex_unlock(&pr->mu);
}

static void grow(prun *pr);

/* Sends arrival i (its time has come) and records what it got. */
static void send_one(prun *pr, size_t i)
{
    tdm_bl *b = pr->b;
    size_t q = i % b->qs.nq;
    const tdm_search_query *sq = &b->qs.sq[q];
    double when = pr->t0 + pr->t[i];
    uint64_t in = atomic_fetch_add(&pr->inflight, 1) + 1;
    for (uint64_t m = atomic_load(&pr->max_inflight);
         in > m && !atomic_compare_exchange_weak(&pr->max_inflight, &m, in);)
        ;
    if (in >= atomic_load(&pr->started))
        grow(pr);
    tdm_search_result *r = NULL;
    int rc = sq->text ? tdm_search_text(pr->sh, sq->text, &pr->o, &r)
                      : tdm_search_terms(pr->sh, sq->terms, sq->nterms, &pr->o, &r);
    double done = tdm_cli_now();
    atomic_fetch_sub(&pr->inflight, 1);
    atomic_fetch_add(&pr->answers, 1);
    const char *id = b->qs.qf->q[b->qs.pos[q]].id;
    if (rc != TDM_OK) {
        if (atomic_fetch_add(&pr->failed, 1) < MAX_REPORTED)
            fprintf(stderr, "FAILED %s rate %g arrival %zu query '%s': %s\n",
                    tdm_policy_name(pr->o.policy), pr->p->rate, i, id, tdm_last_error());
        return;
    }
    pr->lat[i] = done - when;
    if (pr->limit > 0 && i >= pr->nwarm && done - when > pr->limit &&
        atomic_fetch_add(&pr->over, 1) + 1 > pr->hopeless)
        atomic_store(&pr->stop, 1); /* p95 is over the limit whatever follows */
    if (b->corrupt && i + 1 == b->corrupt && r->n) /* test switch: a wrong answer */
        r->hits[0].score = nextafterf(r->hits[0].score, INFINITY);
    char why[160];
    if (tdm_bl_check(b, r, q, why, sizeof why) && atomic_fetch_add(&pr->mism, 1) < MAX_REPORTED)
        fprintf(stderr, "MISMATCH %s rate %g arrival %zu query '%s': %s\n",
                tdm_policy_name(pr->o.policy), pr->p->rate, i, id, why);
    account(pr, i, r);
    tdm_search_result_free(r);
}

static void *sender(void *arg);

/* Every sender is in a call: one more, so that the next arrival finds one
 * free (a thread that spawns is joined after it, so none is missed). */
static void grow(prun *pr)
{
    pthread_mutex_lock(&pr->mu);
    unsigned n = atomic_load(&pr->started);
    if (n < pr->cap && !pr->spawn_failed && atomic_load(&pr->inflight) >= n) {
        if (pthread_create(&pr->th[n], &pr->attr, sender, pr) == 0)
            atomic_store(&pr->started, n + 1);
        else
            pr->spawn_failed = 1; /* the system's limit: the pool stays as it is */
    }
    pthread_mutex_unlock(&pr->mu);
}

/* More queries in flight than the answers' pace clears within twice the
 * horizon (the probe's limit, else the give-up lag): by Little's law their
 * mean latency is past it, and going on would only lengthen the drain (an
 * overloaded point would otherwise end with thousands of calls queued, the
 * drain taking their number over the pace). Judged from GRACE_S on, so that
 * the drain after a stop stays within about twice the horizon. */
#define GRACE_S 0.25
static int backlogged(prun *pr)
{
    double horizon = pr->limit > 0 ? pr->limit : pr->give_up;
    double el = tdm_cli_now() - pr->t0;
    if (el <= GRACE_S)
        return 0; /* too early to know the pace */
    double pace = (double)atomic_load(&pr->answers) / el;
    return (double)atomic_load(&pr->inflight) > 2 * pace * horizon + 32;
}

static void *sender(void *arg)
{
    prun *pr = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&pr->next, 1);
        if (i >= pr->n || atomic_load(&pr->stop))
            break;
        double when = pr->t0 + pr->t[i];
        sleep_until(when);
        double lag = tdm_cli_now() - when;
        if (lag > pr->give_up || backlogged(pr)) { /* hopeless: stop, drop the rest */
            atomic_store(&pr->stop, 1);
            break;
        }
        if (lag > LATE_S) {
            atomic_fetch_add(&pr->late, 1);
            pthread_mutex_lock(&pr->mu);
            pr->late_max = lag > pr->late_max ? lag : pr->late_max;
            pthread_mutex_unlock(&pr->mu);
        }
        pr->sent[i] = 1;
        send_one(pr, i);
    }
    return NULL;
}

/* Poisson arrivals over warm-up + duration: *n times, the first *nwarm of
 * them in the warm-up. */
static double *schedule(const tdm_bl *b, double rate, size_t *n, size_t *nwarm)
{
    double end = b->o.warmup + b->o.duration;
    size_t cap = (size_t)(rate * end * 1.2) + 64;
    if (cap > MAX_ARRIVALS)
        return NULL;
    double *t = malloc(cap * sizeof *t);
    tdm_rng g;
    /* the same arrivals for every policy at a rate */
    tdm_rng_seed(&g, b->o.seed ^ (uint64_t)llround(rate * 1000.0) * 0x9E3779B97F4A7C15ull);
    double now = 0;
    size_t i = 0, w = 0;
    while (t) {
        now += -log(tdm_rng_open01(&g)) / rate;
        if (now >= end)
            break;
        if (i == cap) {
            double *nt = cap * 2 > MAX_ARRIVALS ? NULL : realloc(t, cap * 2 * sizeof *t);
            if (!nt) {
                free(t);
                return NULL;
            }
            t = nt;
            cap *= 2;
        }
        w += now < b->o.warmup;
        t[i++] = now;
    }
    *n = i;
    *nwarm = w;
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank of the sorted v[n] at fraction f. */
static double pct(const double *v, size_t n, double f)
{
    if (!n)
        return 0;
    size_t r = (size_t)ceil(f * (double)n);
    return v[r ? r - 1 : 0];
}

static void latencies(prun *pr, tdm_bl_point *p, double deadline)
{
    size_t m = 0;
    double sum = 0, last = 0, first = pr->nwarm < pr->n ? pr->t0 + pr->t[pr->nwarm] : 0;
    double *v = pr->lat; /* compacted in place: the answered measured ones */
    for (size_t i = pr->nwarm; i < pr->n; i++) {
        if (!pr->sent[i]) {
            p->dropped++;
            p->misses++;
            continue;
        }
        if (pr->lat[i] < 0)
            continue; /* failed */
        double done = pr->t0 + pr->t[i] + pr->lat[i];
        last = done > last ? done : last;
        p->misses += pr->lat[i] > deadline;
        sum += pr->lat[i];
        v[m++] = pr->lat[i];
    }
    qsort(v, m, sizeof *v, cmp_double);
    p->answered = m;
    p->mean = m ? sum / (double)m * 1e3 : 0;
    p->p50 = pct(v, m, 0.50) * 1e3;
    p->p95 = pct(v, m, 0.95) * 1e3;
    p->p99 = pct(v, m, 0.99) * 1e3;
    p->p999 = pct(v, m, 0.999) * 1e3;
    p->max = m ? v[m - 1] * 1e3 : 0;
    p->tput = last > first ? (double)m / (last - first) : 0;
}

/* List-cache lookups and hits over every device now. */
static void cache_counts(tdm_search *sh, int nd, uint64_t *look, uint64_t *hits, int *cached)
{
    *look = *hits = 0;
    *cached = 0;
    for (int d = 0; d < nd; d++) {
        tdm_list_cache_stats cs;
        if (tdm_search_cache_stats(sh, d, &cs) != TDM_OK || !cs.cached)
            continue;
        *cached = 1;
        *look += cs.hits + cs.misses;
        *hits += cs.hits;
    }
}

/* What the scheduler's counters say over the measured part. */
static void sched_deltas(tdm_bl_point *p, const tdm_sched_stats *a, const tdm_sched_stats *z,
                         double wall)
{
    p->wall = wall;
    p->nlanes = z->nlanes;
    for (int l = 0; l < z->nlanes && l < TDM_SCHED_MAX_LANES; l++) {
        p->lane_gpu[l] = z->lanes[l].gpu;
        double act = z->lanes[l].active_seconds - a->lanes[l].active_seconds;
        p->util[l] = wall > 0 ? act / wall : 0;
    }
    p->stolen = z->stolen - a->stolen;
    p->promoted = z->promoted - a->promoted;
    p->switches = z->mode_switches - a->mode_switches;
    p->eng_misses = z->deadline_misses - a->deadline_misses;
}

#define FIRST_SENDERS 16
#define SENDER_STACK (1u << 20)

static int start_senders(prun *pr)
{
    unsigned want = pr->cap < FIRST_SENDERS ? pr->cap : FIRST_SENDERS;
    pthread_attr_init(&pr->attr);
    pthread_attr_setstacksize(&pr->attr, SENDER_STACK);
    pthread_mutex_lock(&pr->mu);
    for (unsigned s = 0; s < want; s++) {
        if (pthread_create(&pr->th[s], &pr->attr, sender, pr) != 0)
            break;
        atomic_store(&pr->started, s + 1);
    }
    pthread_mutex_unlock(&pr->mu);
    if (atomic_load(&pr->started) == want)
        return 0;
    atomic_store(&pr->stop, 1);
    return -1;
}

/* The measured part begins at t0 + warm-up: the counters there, and when
 * every sender is done. */
static int drive(prun *pr, tdm_bl_point *p, int nd)
{
    tdm_bl *b = pr->b;
    pr->cap = (unsigned)b->o.senders;
    pr->th = calloc(pr->cap, sizeof *pr->th);
    if (!pr->th)
        return tdm_cli_fail(C, "out of memory");
    tdm_sched_stats a, z;
    tdm_sched_stats_init(&a);
    tdm_sched_stats_init(&z);
    pr->t0 = tdm_cli_now() + 0.01; /* the senders are up by then */
    int rc = start_senders(pr);
    sleep_until(pr->t0 + b->o.warmup);
    double w0 = tdm_cli_now();
    uint64_t l0, h0, l1, h1;
    int cached;
    tdm_search_stats(pr->sh, &a);
    cache_counts(pr->sh, nd, &l0, &h0, &cached);
    for (unsigned s = 0; s < atomic_load(&pr->started); s++) /* spawned ones too */
        pthread_join(pr->th[s], NULL);
    double w1 = tdm_cli_now();
    tdm_search_stats(pr->sh, &z);
    cache_counts(pr->sh, nd, &l1, &h1, &cached);
    unsigned got = atomic_load(&pr->started);
    free(pr->th);
    pthread_attr_destroy(&pr->attr);
    if (rc)
        return tdm_cli_fail(C, "cannot start sender threads (started %u)", got);
    p->senders = got;
    sched_deltas(p, &a, &z, w1 - w0);
    p->hit_rate = !cached ? -1 : l1 > l0 ? (double)(h1 - h0) / (double)(l1 - l0) : 1;
    return 0;
}

int tdm_bl_run_point(tdm_bl *b, tdm_search *sh, int pol, int mem, double rate, int probe,
                     double limit_ms, tdm_bl_point *p)
{
    memset(p, 0, sizeof *p);
    p->policy = pol;
    p->mem = mem;
    p->rate = rate;
    p->probe = probe;
    prun *pr = calloc(1, sizeof *pr);
    if (!pr)
        return tdm_cli_fail(C, "out of memory");
    pr->b = b;
    pr->sh = sh;
    pr->p = p;
    tdm_search_options_init(&pr->o);
    pr->o.algorithm = b->o.algo;
    pr->o.k = b->o.k;
    pr->o.policy = pol;
    pr->o.deadline_ms = b->o.deadline_ms;
    double deadline = b->o.deadline_ms * 1e-3;
    pr->limit = limit_ms * 1e-3;
    /* a backlog past this is hopeless: 4 deadlines (at least 2 s), and for a
     * probe its limit (everything sent later misses it) */
    pr->give_up = deadline * 4 > 2 ? deadline * 4 : 2;
    pthread_mutex_init(&pr->mu, NULL);
    int rc = 0;
    pr->t = schedule(b, rate, &pr->n, &pr->nwarm);
    if (!pr->t)
        rc = tdm_cli_fail(C, "rate %g for %g s: too many arrivals (at most %u)", rate,
                          b->o.warmup + b->o.duration, MAX_ARRIVALS);
    pr->hopeless = (uint64_t)((double)(pr->n - pr->nwarm) * 0.05);
    pr->lat = rc ? NULL : malloc((pr->n ? pr->n : 1) * sizeof *pr->lat);
    pr->sent = rc ? NULL : calloc(pr->n ? pr->n : 1, 1);
    if (!rc && (!pr->lat || !pr->sent))
        rc = tdm_cli_fail(C, "out of memory");
    for (size_t i = 0; !rc && i < pr->n; i++)
        pr->lat[i] = -1;
    if (!rc)
        rc = drive(pr, p, b->ndev);
    if (!rc) {
        p->arrivals = pr->n - pr->nwarm;
        p->late = atomic_load(&pr->late);
        p->late_max_ms = pr->late_max * 1e3;
        p->mismatches = atomic_load(&pr->mism);
        p->failed = atomic_load(&pr->failed);
        p->max_inflight = atomic_load(&pr->max_inflight);
        p->stopped = atomic_load(&pr->stop);
        memcpy(p->share, pr->share, sizeof p->share);
        p->batch_mode = pr->batch_mode;
        p->batched = pr->batched;
        p->other_policy = pr->other_policy;
        latencies(pr, p, deadline);
        double lim = b->o.deadline_ms;
        if (b->o.find_max && b->o.budget_p95_ms < lim)
            lim = b->o.budget_p95_ms;
        p->ok = !p->stopped && !p->failed && p->answered && p->p95 <= lim;
        b->mismatches += p->mismatches;
        b->failures += p->failed;
    }
    pthread_mutex_destroy(&pr->mu);
    free(pr->lat);
    free(pr->sent);
    free((void *)pr->t);
    free(pr);
    return rc ? -1 : 0;
}
