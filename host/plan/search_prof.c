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

#include "search_prof.h"

typedef struct row {
    char key[64];
    unsigned long long n;
    double dev, start, end; /* sums, seconds */
} row;

#define ROWS 256
static row rows[ROWS];
static int nrows;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state = -1; /* -1 unknown, 0 off, 1 on, 2 host phases only */

static const char *alg_name(int salg)
{
    static const char *const n[] = {"or", "and", "wand", "bmw", "maxscore", "and_or", "batch"};
    return salg >= 0 && salg < 7 ? n[salg] : "?";
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
        row *r = &rows[i];
        double m = r->n ? 1e6 / (double)r->n : 0;
        fprintf(stderr, "%-44s %9llu %9.1f %9.1f %9.1f\n", r->key, r->n, r->dev * m,
                r->start * m, r->end * m);
    }
    pthread_mutex_unlock(&lock);
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

static void add(const char *key, double dev, double start, double end)
{
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < nrows && strcmp(rows[i].key, key) != 0)
        i++;
    if (i == nrows && nrows < ROWS) {
        snprintf(rows[i].key, sizeof rows[i].key, "%s", key);
        nrows++;
    }
    if (i < nrows) {
        rows[i].n++;
        rows[i].dev += dev;
        rows[i].start += start;
        rows[i].end += end;
    }
    pthread_mutex_unlock(&lock);
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
    char key[64];
    snprintf(key, sizeof key, "%s k=%u | host: %s", alg_name(p->salg), p->k, name);
    add(key, t_end - t_begin, t_begin - p->t0, t_end - p->t0);
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
    char key[64];
    for (int i = 0; ok && i < p->nev; i++) {
        cl_ulong s = info(p->ev[i], CL_PROFILING_COMMAND_START),
                 e = info(p->ev[i], CL_PROFILING_COMMAND_END);
        if (!s || !e || !q0)
            continue;
        last = e > last ? e : last;
        snprintf(key, sizeof key, "%s k=%u | %s", alg_name(p->salg), p->k, p->name[i]);
        add(key, (double)(e - s) * 1e-9, (double)(s - q0) * 1e-9, (double)(e - q0) * 1e-9);
    }
    if (ok && q0 && last) {
        snprintf(key, sizeof key, "%s k=%u | device span", alg_name(p->salg), p->k);
        add(key, (double)(last - q0) * 1e-9, 0, (double)(last - q0) * 1e-9);
    }
    if (ok)
        tdm_sprof_host(p, "whole device run", p->t0);
    for (int i = 0; i < p->nev; i++)
        clReleaseEvent(p->ev[i]);
    p->nev = 0;
}
