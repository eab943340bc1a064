/* Injected lane faults, the test switch TANDEM_FAULT_INJECT (or the engine
 * option fault_inject): items "<lane>:<kind>[@<n>]" separated by commas.
 * The lane is an engine device index; the fault fires on the lane's n-th
 * run (default 1, counted over its runs of one query or a batch):
 *   build  the run fails as a kernel build error would (TDM_ERR_BUILD): the
 *          lane is dead, its queries go to other lanes;
 *   oom    the run fails with TDM_ERR_DEVICE_MEMORY: its queries go to
 *          other lanes, the lane lives on (the next run may fit);
 *   lost   the run completes on the device, then its answers are dropped
 *          and it fails as a lost device (TDM_ERR_OPENCL): the lane is
 *          dead; its queries are answered elsewhere, once.
 *   hang   the run's thread blocks for good before its device work, as in
 *          a driver call that never returns: the watchdog (run_timeout_ms)
 *          abandons the run, the lane is dead; its queries are answered
 *          elsewhere or fail with TDM_ERR_TIMEOUT naming the device.
 *   stall  as hang, but the thread wakes after twice the run's limit and
 *          runs the queries: a late return, whose answers are dropped.
 * hang and stall count every run on the lane's device (a lane's, a
 * direct-policy run, a calibration sample: watchdog.c's
 * tdm_watchdog_fault); the others the lane's runs only.
 * Threads: parsed once at tdm_search_open; read-only after. */
#ifndef TDM_SCHED_FAULT_H
#define TDM_SCHED_FAULT_H

#include "common/error.h"

enum { TDM_FAULT_NONE = 0, TDM_FAULT_BUILD, TDM_FAULT_OOM, TDM_FAULT_LOST, TDM_FAULT_HANG,
       TDM_FAULT_STALL };

typedef struct tdm_fault {
    int kind;           /* TDM_FAULT_* */
    unsigned long at;   /* the lane's run it fires on, 1-based */
} tdm_fault;

/* Parses spec into faults[lane] for lanes 0 .. nlanes-1 (zeroed first);
 * TDM_ERR_INVALID_ARG naming `what` (the variable or option) and the item. */
int tdm_fault_parse(const char *spec, const char *what, tdm_fault *faults, int nlanes,
                    tdm_err *err);

/* "build", "oom", "lost", "hang", "stall" ("none" for TDM_FAULT_NONE). */
const char *tdm_fault_name(int kind);

#endif
