/* Test hooks of the planner (host/plan): kept out of the product headers so
 * that product code never reaches for them by accident. Nothing here is
 * part of the library's contract. */
#ifndef TDM_PLAN_PLAN_TESTING_H
#define TDM_PLAN_PLAN_TESTING_H

/* Every later plan gets `layout` (TDM_ZR_*), or the planner's own choice
 * again for -1. Process-wide; thread-safe, but meant to be set while no
 * search runs. */
void tdm_search_zr_layout_force(int layout);

/* The search profile's row `key` ("series k=K | host: name", as printed):
 * its runs and summed time in seconds (search_prof.c). 0 if no such row. */
int tdm_sprof_row_get(const char *key, unsigned long long *runs, double *seconds);

#endif
