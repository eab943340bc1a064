/* The search driver's profile (search_prof.h, tdm_sprof_*): with
 * TANDEM_SEARCH_PROFILE=1 in the environment, every device run records its
 * host phases (wall time) and its commands' events (device time, and start
 * and end relative to the run's first command being queued), summed per
 * algorithm, k and name; at exit a table of means goes to stderr. The
 * profile is the process's: the first engine open reads the variable
 * (runtime/settings.c). Off, it costs one cached load per run. For finding
 * where a query's fixed cost goes (issue 13). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_testing.h"
#include "search_prof.h"

/* Sums of one row on one stripe: a thread adds to its own stripe (its
 * cache line), so the threads that prepare a batch's queries at once do not
 * meet on one lock or one line. Times in nanoseconds. */
typedef struct stripe {
    _Alignas(64) unsigned long long n;
    unsigned long long dev, start, end;
} stripe;

#define STRIPES 16
#define NAME_MAX_LEN 64

typedef struct row {
    char key[64];
    char name[NAME_MAX_LEN]; /* the phase's name, as the caller gave it */
    stripe s[STRIPES];
} row;

#define ROWS 256
static row rows[ROWS];
static int nrows;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state = -1; /* -1 unknown, 0 off, 1 on, 2 host phases only */

/* A row found once by its key string (under the lock) is found again by
 * (series, k, kind, the caller's name pointer) without the lock: an
 * open-addressed table whose slots are written once, under the lock, and
 * published by `row` (stored last, read with acquire). The row's own copy
 * of the name is compared too, so a name in a reused buffer never lands in
 * another phase's row. */
typedef struct alias {
    const char *name;
    int salg, kind;
    uint32_t k;
    int row; /* row index + 1; 0: empty */
} alias;

#define ALIASES 1024
static alias aliases[ALIASES];

enum { KIND_HOST, KIND_EVENT };

static size_t alias_hash(const char *name, int salg, uint32_t k, int kind)
{
    uint64_t h = (uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)(uint32_t)salg << 40 | (uint64_t)k << 8 | (uint64_t)kind) * 0xBF58476D1CE4E5B9ull;
    return (size_t)(h >> 32) % ALIASES;
}

static const char *alg_name(int salg)
{
    static const char *const n[] = {"or", "and", "wand", "bmw", "maxscore", "and_or", "batch"};
    return salg >= 0 && salg < 7 ? n[salg] : "?";
}

/* Row i's sums over its stripes (lock held). */
static void row_sums(int i, unsigned long long *n, unsigned long long *dev,
                     unsigned long long *start, unsigned long long *end)
{
    *n = *dev = *start = *end = 0;
    for (int j = 0; j < STRIPES; j++) {
        const stripe *st = &rows[i].s[j];
        *n += __atomic_load_n(&st->n, __ATOMIC_RELAXED);
        *dev += __atomic_load_n(&st->dev, __ATOMIC_RELAXED);
        *start += __atomic_load_n(&st->start, __ATOMIC_RELAXED);
        *end += __atomic_load_n(&st->end, __ATOMIC_RELAXED);
    }
}

static void report(void)
{
    pthread_mutex_lock(&lock);
    fprintf(stderr, "search profile (TANDEM_SEARCH_PROFILE): means in us per run; "
                    "dev = device time (events) or host wall (host:), start/end from the "
                    "run's first command queued\n");
    fprintf(stderr, "%-44s %9s %9s %9s %9s\n", "series | phase", "runs", "dev/wall", "start",
            "end");
    for (int i = 0; i < nrows; i++) {
        unsigned long long n, dev, start, end;
        row_sums(i, &n, &dev, &start, &end);
        double m = n ? 1e-3 / (double)n : 0;
        fprintf(stderr, "%-44s %9llu %9.1f %9.1f %9.1f\n", rows[i].key, n, (double)dev * m,
                (double)start * m, (double)end * m);
    }
    pthread_mutex_unlock(&lock);
}

int tdm_sprof_row_get(const char *key, unsigned long long *runs, double *seconds)
{
    unsigned long long n = 0, dev = 0, start, end;
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < nrows && strcmp(rows[i].key, key) != 0)
        i++;
    if (i < nrows)
        row_sums(i, &n, &dev, &start, &end);
    pthread_mutex_unlock(&lock);
    *runs = n;
    *seconds = (double)dev * 1e-9;
    return i < nrows;
}

int tdm_sprof_on(void)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s >= 0)
        return s;
    s = tdm_settings_search_profile();
    pthread_mutex_lock(&lock);
    if (state < 0) {
        if (s)
            atexit(report);
        __atomic_store_n(&state, s, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return s != 0;
}

double tdm_sprof_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The row of key (lock held): found, or made while there is room; -1 when
 * the table is full. */
static int row_of(const char *key, const char *name)
{
    int i = 0;
    while (i < nrows && strcmp(rows[i].key, key) != 0)
        i++;
    if (i == nrows && nrows < ROWS) {
        snprintf(rows[i].key, sizeof rows[i].key, "%s", key);
        snprintf(rows[i].name, sizeof rows[i].name, "%s", name);
        nrows++;
    }
    return i < nrows ? i : -1;
}

static const char *kind_sep(int kind)
{
    return kind == KIND_EVENT ? "" : "host: ";
}

/* The row of (series, k, kind, name): through the aliases without the
 * lock once seen; else made under it (the key string built only then). */
static int find_row(int salg, uint32_t k, int kind, const char *name)
{
    size_t h = alias_hash(name, salg, k, kind);
    for (size_t probe = 0; probe < ALIASES; probe++) {
        alias *a = &aliases[(h + probe) % ALIASES];
        int r = __atomic_load_n(&a->row, __ATOMIC_ACQUIRE);
        if (r == 0)
            break;
        if (a->name == name && a->salg == salg && a->k == k && a->kind == kind &&
            strncmp(rows[r - 1].name, name, NAME_MAX_LEN - 1) == 0)
            return r - 1;
    }
    char key[64];
    snprintf(key, sizeof key, "%s k=%u | %s%s", alg_name(salg), k, kind_sep(kind), name);
    pthread_mutex_lock(&lock);
    int r = row_of(key, name);
    for (size_t probe = 0; r >= 0 && probe < ALIASES; probe++) {
        alias *a = &aliases[(h + probe) % ALIASES];
        if (a->row != 0 && a->name == name && a->salg == salg && a->k == k && a->kind == kind)
            break; /* another thread's, meanwhile */
        if (a->row != 0)
            continue;
        *a = (alias){name, salg, kind, k, 0};
        __atomic_store_n(&a->row, r + 1, __ATOMIC_RELEASE);
        break;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

static unsigned long long ns(double s)
{
    return s > 0 ? (unsigned long long)(s * 1e9 + 0.5) : 0;
}

/* This thread's stripe: handed out in turn at its first use. */
static int my_stripe(void)
{
    static _Thread_local int mine = -1;
    static unsigned next;
    if (mine < 0)
        mine = (int)(__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % STRIPES);
    return mine;
}

static void add(int salg, uint32_t k, int kind, const char *name, double dev, double start,
                double end)
{
    int r = find_row(salg, k, kind, name);
    if (r < 0)
        return;
    stripe *st = &rows[r].s[my_stripe()];
    __atomic_fetch_add(&st->n, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&st->dev, ns(dev), __ATOMIC_RELAXED);
    __atomic_fetch_add(&st->start, ns(start), __ATOMIC_RELAXED);
    __atomic_fetch_add(&st->end, ns(end), __ATOMIC_RELAXED);
}

void tdm_sprof_begin(tdm_sprof *p, int salg, uint32_t k)
{
    memset(p, 0, sizeof *p);
    p->on = tdm_sprof_on();
    p->events = p->on && __atomic_load_n(&state, __ATOMIC_ACQUIRE) == 1;
    p->salg = salg;
    p->k = k;
    if (p->on)
        p->t0 = tdm_sprof_now();
}

void tdm_sprof_event(tdm_sprof *p, const char *name, cl_event ev)
{
    if (!p->on || !p->events || !ev || p->nev >= TDM_SPROF_EVENTS)
        return;
    clRetainEvent(ev);
    p->ev[p->nev] = ev;
    p->name[p->nev++] = name;
}

void tdm_sprof_take(tdm_sprof *p, const char *name, cl_event *ev)
{
    if (!*ev)
        return;
    tdm_sprof_event(p, name, *ev);
    clReleaseEvent(*ev);
    *ev = NULL;
}

void tdm_sprof_host_span(tdm_sprof *p, const char *name, double t_begin, double t_end)
{
    if (!p->on)
        return;
    add(p->salg, p->k, KIND_HOST, name, t_end - t_begin, t_begin - p->t0, t_end - p->t0);
}

void tdm_sprof_host(tdm_sprof *p, const char *name, double t_begin)
{
    tdm_sprof_host_span(p, name, t_begin, p->on ? tdm_sprof_now() : 0);
}

static cl_ulong info(cl_event ev, cl_profiling_info what)
{
    cl_ulong v = 0;
    if (clGetEventProfilingInfo(ev, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return 0;
    return v;
}

void tdm_sprof_end(tdm_sprof *p, int ok)
{
    if (!p->on)
        return;
    cl_ulong q0 = 0, last = 0;
    for (int i = 0; i < p->nev; i++) {
        cl_ulong q = info(p->ev[i], CL_PROFILING_COMMAND_QUEUED);
        if (q && (!q0 || q < q0))
            q0 = q;
    }
    for (int i = 0; ok && i < p->nev; i++) {
        cl_ulong s = info(p->ev[i], CL_PROFILING_COMMAND_START),
                 e = info(p->ev[i], CL_PROFILING_COMMAND_END);
        if (!s || !e || !q0)
            continue;
        last = e > last ? e : last;
        add(p->salg, p->k, KIND_EVENT, p->name[i], (double)(e - s) * 1e-9,
            (double)(s - q0) * 1e-9, (double)(e - q0) * 1e-9);
    }
    if (ok && q0 && last) {
        add(p->salg, p->k, KIND_EVENT, "device span", (double)(last - q0) * 1e-9, 0,
            (double)(last - q0) * 1e-9);
    }
    if (ok)
        tdm_sprof_host(p, "whole device run", p->t0);
    for (int i = 0; i < p->nev; i++)
        clReleaseEvent(p->ev[i]);
    p->nev = 0;
}
