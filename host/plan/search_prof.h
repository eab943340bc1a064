/* The search profile (search_prof.c): host phases and device events of a
 * search's preparation and runs. */
#ifndef TDM_PLAN_SEARCH_PROF_H
#define TDM_PLAN_SEARCH_PROF_H

#include <stdint.h>
#include "runtime/runtime.h"

/* ---- profile (search_prof.c): TANDEM_SEARCH_PROFILE=1 sums each device
 * run's host phases and command events per algorithm, k and name, and prints
 * the means to stderr at exit. A run's profile is its own, passed to the
 * steps that record into it (search_dev.c: the run context). */
#define TDM_SPROF_EVENTS 48
typedef struct tdm_sprof {
    int on, salg, nev;
    int events;         /* 1: commands on the profiling queue with events (device
                           times); 0 (TANDEM_SEARCH_PROFILE=host): host phases
                           only, on the unprofiled path a search really takes */
    uint32_t k;
    double t0;
    cl_event ev[TDM_SPROF_EVENTS];
    const char *name[TDM_SPROF_EVENTS];
} tdm_sprof;
int tdm_sprof_on(void);
double tdm_sprof_now(void);
void tdm_sprof_begin(tdm_sprof *p, int salg, uint32_t k);
/* Keeps ev (retained) to read its times at tdm_sprof_end; no-op when off. */
void tdm_sprof_event(tdm_sprof *p, const char *name, cl_event ev);
/* A launch's event, when *ev is one (evp was given: profiling on): kept as
 * by tdm_sprof_event, the caller's reference released and *ev cleared for
 * the next launch. */
void tdm_sprof_take(tdm_sprof *p, const char *name, cl_event *ev);
/* A host phase from t_begin (tdm_sprof_now) to now. */
void tdm_sprof_host(tdm_sprof *p, const char *name, double t_begin);
/* A host phase from t_begin to t_end (tdm_sprof_now). */
void tdm_sprof_host_span(tdm_sprof *p, const char *name, double t_begin, double t_end);
/* After the run's last command completed: adds its times (ok) and releases
 * the events. */
void tdm_sprof_end(tdm_sprof *p, int ok);

#endif
