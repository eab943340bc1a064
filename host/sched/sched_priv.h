/* Internals of the scheduler (sched.h): jobs, queues, lanes.
 *
 * One mutex (tdm_sched.mu) guards every queue, lane state, model and
 * counter; it is never held while a device runs. A lane's worker waits on
 * the lane's condition variable; a caller waits on its job's. */
#ifndef TDM_SCHED_PRIV_H
#define TDM_SCHED_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "fault.h"
#include "model.h"
#include "drive/search.h"
#include "drive/search_run.h"
#include "sched.h"
#include "tandem.h"

enum { CLASS_GPU = 0, CLASS_CPU = 1, CLASS_EITHER = 2 };

#define TDM_SCHED_BATCH_MAX 256 /* queries a lane's batch takes at most (Wu's cost cap first) */
#define TDM_LANE_SLOTS_MAX TDM_SETTINGS_LANE_SLOTS_MAX

/* A lane's messages (an error with its lane and device named): room for an
 * index path, two device names and the advice at the end (256 cut the
 * list cache's "raise device_memory / TANDEM_DEVICE_MEMORY"). */
#define TDM_LANE_MSG 1024

typedef struct sjob {
    struct sjob *prev, *next;
    int where;              /* queue it is in: a lane index, -1 the either queue, -2 none */
    tdm_sbq **items;        /* the prepared queries it carries ([nq]), the caller's,
                               valid while it waits; a lane runs them on its device */
    tdm_sbq *one;           /* a single query's: items points here */
    tdm_search_options o;   /* checked */
    tdm_qfeat f;
    int alg;                /* what the planner will run (model slot): the plan's */
    int policy;             /* never DEFAULT or DIRECT */
    int pin;                /* lane it must run on (opts.device), or -1 */
    int cls;                /* CLASS_* (hybrid) */
    int pref;               /* preferred lane (earliest predicted finish) */
    double arrive, deadline;/* seconds (monotonic) */
    double pred[TDM_SCHED_MAX_LANES];
    uint32_t tried;         /* lanes that failed it */
    uint32_t handovers;
    /* outcome */
    int done;
    int rc;                 /* TDM_OK, or the error that ends the call */
    tdm_err err;
    tdm_search_result *res;
    double started;
    int mode;
    int slot;               /* the lane slot tdm_place claimed for the caller's run */
    pthread_cond_t cv;
    /* Griffin's migration (migrate.c): a ranked AND run step by step */
    struct tdm_astep *as;   /* NULL: the query runs whole */
    int mig;                /* enum tdm_migrate: AUTO or FORCE */
    int first_dev;          /* lane of its first step, -1 before it */
    uint32_t migrations;
    /* a part of a tdm_search_batch call (batch.c): its results to bres[]
     * (NULL for a single query: res) */
    tdm_search_result **bres;
    uint32_t nq;            /* queries the job carries: 1, or a part's */
    /* the watchdog (watchdog.c): a run of it abandoned on a lane that
     * stopped answering */
    int timed_out;          /* ended by the watchdog: its caller may run it again, fresh */
    int hung;               /* abandoned runs that may still read it (and its items) */
    void (*orphan_fn)(void *); /* set by a caller that left it while hung: frees */
    void *orphan_arg;       /* its memory when the last such run returns */
} sjob;

/* Queries job j carries (a job made elsewhere than the search calls, as
 * the placement tests' made-up ones, carries one). */
static inline uint32_t tdm_sjob_nq(const sjob *j) { return j->nq ? j->nq : 1; }

typedef struct squeue {
    sjob *head, *tail;
    uint64_t n;
    double backlog;         /* sum of the queued jobs' predictions on its lane */
} squeue;

typedef struct slane {
    struct tdm_sched *sc;
    int index;              /* engine device index = position in tdm_search.dev */
    int gpu;                /* a GPU lane (by device type or TANDEM_LANE_KINDS) */
    int batch;              /* takes batches in batch mode: GPU lanes, or every
                               lane of an engine without a GPU lane */
    int alive;
    int slots;              /* runs at once (a worker each; the caller's run takes one) */
    int running;            /* slots in use (running, or gathering a batch) */
    char used[TDM_LANE_SLOTS_MAX];
    double run_end[TDM_LANE_SLOTS_MAX]; /* predicted end of each used slot's run */
    squeue q;
    tdm_model model;
    char model_path[512];
    tdm_fault fault;
    unsigned long runs;
    char fail_msg[TDM_LANE_MSG];
    pthread_t th[TDM_LANE_SLOTS_MAX];
    int started;            /* workers started */
    pthread_cond_t cv;
    tdm_lane_stats st;
    double err_sum;
    int active;             /* runs going now (st.active_seconds counts while > 0) */
    double active_t0;       /* since when */
    uint32_t warm;          /* algorithms this lane ran in this process (bit per algorithm) */
    unsigned long dev_runs; /* every run on its device (the watchdog's fault kinds count them) */
    uint32_t exited;        /* workers that returned (bit per th[]) */
} slane;

/* A run the watchdog watches (watchdog.c): a lane's run (a worker's, or a
 * caller's in a free slot), a direct-policy run or a calibration sample.
 * It lives on the running thread's stack, in the scheduler's list while
 * armed (lock held for every field). */
typedef struct tdm_watch {
    struct tdm_watch *prev, *next;
    slane *l;               /* the lane of the device it runs on */
    double limit;           /* when it is abandoned (monotonic s) */
    double bound;           /* its limit in seconds */
    sjob **jobs;            /* its jobs (the running thread's array; none for a
                               direct run or a sample) */
    int n;
    int caller;             /* a caller's thread runs it: once abandoned, that caller
                               holds sc (hung_runs) until it leaves (tdm_watchdog_leave) */
    int abandoned;          /* the watchdog gave it up: it owns only its own */
    struct tdm_astep *orphan_as; /* a stepped job's state it still holds */
    char msg[384];          /* once abandoned: the watchdog's message */
} tdm_watch;

struct tdm_sched {
    tdm_search *s;
    pthread_mutex_t mu;
    int stop;
    slane *lanes;
    int nl;
    squeue either;
    int policy;             /* the engine's */
    double window;          /* seconds */
    unsigned threshold;
    double deadline;        /* seconds */
    int mode;               /* enum tdm_load_mode */
    uint32_t batch_max;     /* <= TDM_SCHED_BATCH_MAX */
    int migrate;            /* the engine's enum tdm_migrate (never DEFAULT) */
    tdm_sched_stats st;
    /* the watchdog (watchdog.c) */
    long timeout_ms;        /* settings' run_timeout_ms: > 0 fixed, 0 auto, -1 off */
    tdm_watch *watched;     /* the armed runs */
    int hung_runs;          /* abandoned runs not returned (a caller's: not left) */
    pthread_t wd;
    int wd_started;
    pthread_cond_t wd_cv;   /* wakes the watchdog (close), close (a worker's exit)
                               and open (a calibration thread's end, a lane abandoned) */
    /* start-up calibration (calib.c): a thread a lane, one lane at a time */
    pthread_t cal_th[TDM_SCHED_MAX_LANES];
    uint32_t cal_started;   /* calibration threads not joined (bit per lane) */
    uint32_t cal_exited;    /* of those, the ones that returned */
};

/* ---- queue.c */
void tdm_squeue_push(squeue *q, sjob *j, int where, double pred);
void tdm_squeue_push_front(squeue *q, sjob *j, int where, double pred);
void tdm_squeue_remove(squeue *q, sjob *j, double pred);
/* The queue a job with `where` is in. */
squeue *tdm_squeue_of(struct tdm_sched *sc, int where);

/* ---- place.c (all under sc->mu) */
/* Predicts j on every lane (j->pred). */
void tdm_place_predict(struct tdm_sched *sc, sjob *j);
/* Seconds until lane l could start a new job: its run's rest and its queue. */
double tdm_place_backlog(const struct tdm_sched *sc, const slane *l, double now);
/* Lane slots: a free one's index or -1; claim with a predicted end; release. */
int tdm_lane_free_slot(const slane *l);
void tdm_lane_claim(slane *l, int k, double end);
void tdm_lane_release(slane *l, int k);
/* Seconds until lane l has a free slot (0 when it has one now). */
double tdm_lane_rest(const slane *l, double now);
/* Places the new (or handed-over) job: returns the lane to run it on at
 * once in the caller's thread (a free slot, empty queue, light load; the
 * slot claimed into j->slot), -1 when it was queued, -2 when no lane can
 * take it (nothing changed). */
int tdm_place(struct tdm_sched *sc, sjob *j, double now, int caller_may_run);
/* The lanes tdm_place could give j into ok[] (nl entries; lock held): those
 * its policy or pin allows, else (all of them failed) any live lane unless
 * the engine lacks the policy's kind; returns how many. A batch is split
 * over them; a query answered without a lane (the host path) still
 * honours its policy and pin. */
int tdm_place_lanes(const struct tdm_sched *sc, const sjob *j, int *ok);
/* Takes lane l's next run into jobs (at most max); returns how many. */
int tdm_place_pick(struct tdm_sched *sc, slane *l, sjob **jobs, int max, double now);
/* Seconds of predicted work lane l has left, a slot's share: the rest of
 * every run going (a microsecond once past its predicted end) and its
 * queue, over its slots. Unlike the backlog it counts the runs going while
 * a slot is free (a batch part saturates its device: a second one there
 * shares it). For placing batch parts. */
double tdm_place_work_left(const slane *l, double now);
/* Twin lanes: of one kind on one model of device (platform, name, driver,
 * compute units). grp[i] is the first lane that lane i is a twin of (i
 * itself when none). */
void tdm_place_twins(const struct tdm_sched *sc, int *grp);
/* A query's predicted time on every lane into p[0 .. nl), each twin group
 * (grp, tdm_place_twins) given its models' mean: each fit comes from its
 * own calibration sample and the lone runs it happened to get, and four
 * identical PoCL devices' fits predicted one batch call at 0.41 to 1.02 s;
 * placed by them, the lane predicted slowest got no call at all. For
 * placing batch parts. */
void tdm_place_predict_twins(const struct tdm_sched *sc, const int *grp, int alg,
                             const tdm_qfeat *f, double *p);
/* Queues batch part j on `lane`, which the batch's split chose (live,
 * allowed), and wakes the lanes; unpinned, an idle lane may steal it. */
void tdm_place_on(struct tdm_sched *sc, sjob *j, int lane);

/* ---- lane.c */
/* Starts lane l's worker. */
int tdm_lane_start(slane *l, tdm_err *err);
/* Runs jobs[0..n) on lane l in its claimed slot k (called without the
 * lock), completes or hands over each and releases the slot (takes the
 * lock). caller: the caller's thread runs it (watched as such). Returns 1
 * when the watchdog abandoned the run (its jobs ended with TDM_ERR_TIMEOUT,
 * timed_out set): a caller then calls tdm_watchdog_leave as it leaves. */
int tdm_lane_run(slane *l, int k, sjob **jobs, int n, int caller);
/* Whether lane l ran algorithm alg before (marks it run): the first run
 * of each includes the driver's kernel compilation and is not observed
 * (lock held, or before the workers start). */
int tdm_lane_warm(slane *l, int alg);

/* ---- handover.c: a lane's failure and the calls it ends */
/* Marks lane l dead with `msg` and hands its queue to other lanes (lock held). */
void tdm_lane_fail(slane *l, const char *msg, double now);
/* Re-evaluates the load mode (lock held). */
void tdm_sched_update_mode(struct tdm_sched *sc);
/* Ends j's call: counted, its caller woken (lock held). */
void tdm_sjob_complete(struct tdm_sched *sc, sjob *j);
/* Hands j, which lane l could not answer (error rc, message msg), to
 * another lane; ends it with that error when none is left (lock held). */
void tdm_sjob_hand_over(struct tdm_sched *sc, slane *l, sjob *j, int rc, const char *msg,
                        double now);

/* ---- watchdog.c: the search-time watchdog (docs/SCHED.md "Faults") */
/* Whether runs are watched. */
static inline int tdm_watchdog_on(const struct tdm_sched *sc) { return sc->timeout_ms >= 0; }
/* Starts the watchdog's thread (when on). */
int tdm_watchdog_start(struct tdm_sched *sc, tdm_err *err);
/* The watchdog's fault kind (TDM_FAULT_HANG or STALL) for a run starting
 * on lane l's device, counted over every run there (lane runs, direct
 * ones, calibration samples); TDM_FAULT_NONE otherwise (lock held). */
int tdm_watchdog_fault(slane *l);
/* The limit in seconds (0: not watched) of a run on lane l of the
 * prepared queries items[0 .. nq), predicted to take pred seconds (the
 * sum of its queries' predictions), running the algorithms of algs (a
 * bit each) (lock held): run_timeout_ms when set, exact, a batch's run
 * as a lone query's; auto: 100 x pred, at least 10 s plus 100 x the lane
 * model's prior (tdm_model_prior) of each query past the first; 60 s
 * more for a lane's first run of an algorithm. */
double tdm_watchdog_limit(const slane *l, tdm_sbq *const *items, size_t nq, uint32_t algs,
                          double pred);
/* Arms w for a run on lane l of jobs[0 .. n) (none for a direct run or a
 * calibration sample: algs has the bit of each algorithm it runs), its
 * queries items[0 .. nq), from t0, predicted to take pred seconds (lock
 * held; tdm_watchdog_limit); caller: the caller's thread runs it. Returns
 * its limit in seconds (0: not watched). */
double tdm_watchdog_arm(slane *l, tdm_watch *w, sjob **jobs, int n, tdm_sbq *const *items,
                        size_t nq, uint32_t algs, int caller, double pred, double t0);
/* After w's run returned (lock held): 0 when it counts (disarmed); 1 when
 * it was abandoned: its jobs are not its own any more, *as (a stepped
 * job's state) and the callbacks in fns/args (w->n at most, *nfn of them)
 * are for the caller to call after unlocking. */
int tdm_watchdog_returned(tdm_watch *w, struct tdm_astep **as, void (**fns)(void *), void **args,
                          int *nfn);
/* A caller whose `runs` runs were abandoned leaves the scheduler: its
 * last touch of sc (takes the lock); close may free sc once no such caller
 * is left. */
void tdm_watchdog_leave(struct tdm_sched *sc, int runs);
/* Stops the watchdog and the workers (lock not held); waits for the
 * workers but those stuck in an abandoned run (a bounded wait): 1 when one
 * is left (then sc stays allocated for it: the caller leaks what it reads). */
int tdm_watchdog_stop(struct tdm_sched *sc);
/* Test fault kinds hang and stall (fault.h): blocks the run's thread. */
void tdm_watchdog_fault_block(int kind, double bound);

/* ---- clock.c: seconds on the monotonic clock */
double tdm_sched_now(void);
/* The real-clock time `seconds` from now, for pthread_cond_timedwait
 * (condition variables time out on the real clock). */
struct timespec tdm_sched_deadline_in(double seconds);

/* ---- migrate.c: Griffin's intra-query migration */
/* What the decision reads, per lane: whether the rest may go there, the
 * cost model's time for the rest there, the seconds until it could start
 * (0 for the lane it is on), the cost of moving there (0 for that lane). */
typedef struct tdm_mig_in {
    int nl, cur, force;
    int ok[TDM_SCHED_MAX_LANES];
    double rest[TDM_SCHED_MAX_LANES], wait[TDM_SCHED_MAX_LANES], move[TDM_SCHED_MAX_LANES];
} tdm_mig_in;
/* The lane for the rest of the query: cur, or the lane finishing it first
 * (wait + move + rest) when that beats cur by the margin; under force the
 * next allowed lane after cur (round robin), cur when none. Pure. */
int tdm_migrate_choose(const tdm_mig_in *in);
/* Seconds to carry `bytes` of intermediate from lane `from` to lane `to`
 * (down from one device, up to the other). */
double tdm_migrate_cost(const struct tdm_sched *sc, int from, int to, double bytes);
/* Whether j runs step by step, and if so its state (j->as, from its
 * prepared query's finished query). TDM_OK when it need not. */
int tdm_migrate_prepare(struct tdm_sched *sc, sjob *j, tdm_err *err);
/* Runs j's next segment on lane l (no lock held): *res when it ended
 * there, else *moved the lane its rest goes to (the intermediate pending). */
int tdm_migrate_run(slane *l, sjob *j, int *moved, tdm_search_result **res, tdm_err *err);
/* After a segment that moved (lock held): commits its intermediate and
 * queues j at the front of lane `to`'s queue (placed again when that lane
 * died meanwhile); -1 when no lane can take it. */
int tdm_migrate_move(struct tdm_sched *sc, sjob *j, int from, int to, double now);

/* ---- batch.c: tdm_sched_batch_search (sched.h): the whole batch to one
 * lane (best, a pin) or split by predicted finish over the lanes the policy
 * allows (hybrid, cpu-only, gpu-only), each lane's part one job run there
 * as one batch. */
/* What the planner will run for the prepared query it (the model's slot):
 * its plan's algorithm. */
static inline int tdm_sched_expected_alg(const tdm_sbq *it) { return it->pl.alg; }
/* Prepared queries needing no lane, counted (direct policy, no terms),
 * run in the caller's thread on their planned device, or a live lane's
 * where that lane has failed; watched like a lane's run: abandoned, the
 * caller (stuck in it) runs them again on a live lane once it returns,
 * else fails with TDM_ERR_TIMEOUT, and *stuck counts its abandoned runs
 * (the caller calls tdm_watchdog_leave as it leaves). A single one (n =
 * 1) fails with its own error; a batch's keep theirs in their results. */
int tdm_sched_run_direct(struct tdm_sched *sc, tdm_sbq *const *items, int policy, size_t n,
                         tdm_search_result **out, int *stuck, tdm_err *err);

/* ---- calib.c */
/* Runs n sample queries on every lane (before the workers start, the
 * watchdog started) and feeds the times to the lanes' models: a lane at a
 * time, on a thread of its own, each sample watched; a lane whose sample
 * the watchdog abandons is dead and its thread left (tdm_watchdog_stop
 * joins it if it returns). */
void tdm_sched_calibrate(struct tdm_sched *sc, int n);

#endif
