/* `tandem bench load`: open-loop Poisson arrivals at given rates from a
 * query log, per scheduling policy (issue 16 item 7; Ding 2009 Figure 7):
 * latency from each query's scheduled arrival to its answer (mean, p50, p95,
 * p99, p99.9), deadline misses, throughput, each lane's utilization, the
 * policy and load-mode mix; the highest rate each policy sustains under a
 * p95 budget; every answer checked against the oracle.
 *
 * Files: cmd_bench_load.c (options, queries, the oracle, the sweeps and the
 * rate search), cmd_bench_lrun.c (one point: the arrival schedule, the
 * sender threads, the checks, the counters), cmd_bench_lout.c (table, CSV,
 * the latency-against-rate plot). */
#ifndef TDM_CMD_BENCH_LOAD_H
#define TDM_CMD_BENCH_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd_bench_queries.h"
#include "tandem.h"

int tdm_bench_load(int argc, char **argv);

#define TDM_BL_MAX_LIST 32   /* values of --rates */
#define TDM_BL_MAX_POL 8
#define TDM_BL_MAX_MEM 4     /* values of --device-memory */

/* One device-memory setting: the whole index resident, or a budget. */
typedef struct tdm_bl_mem {
    double frac;          /* of the index's device bytes; 0: a size given in bytes */
    uint64_t bytes;       /* the engine's device_memory; 0: no limit ("full") */
    char label[32];       /* "full", "1/3", "0.25", "64M" as given */
} tdm_bl_mem;

typedef struct tdm_bl_opts {
    const char *index, *queries, *devices, *csv, *plot;
    uint64_t limit;       /* 0: every query */
    int algo;             /* enum tdm_algorithm */
    uint32_t k;
    int policies[TDM_BL_MAX_POL];
    size_t npol;          /* 0: every policy the engine can serve */
    double rates[TDM_BL_MAX_LIST]; /* queries per second, ascending */
    size_t nrates;
    double duration, warmup;       /* seconds a point measures / runs first */
    double deadline_ms;
    uint64_t seed, senders, oracle_threads;
    int find_max;
    double budget_p95_ms; /* --find-max: the p95 a sustained rate keeps */
    double start_rate;    /* the rate search's first probe */
    double precision;     /* the rate search stops when hi / lo - 1 <= this */
    double time_limit;    /* seconds from the start after which no point starts; 0 none */
    tdm_bl_mem mem[TDM_BL_MAX_MEM];
    size_t nmem;
    tdm_qf_options qo;
} tdm_bl_opts;

/* One measured point: a policy at an offered rate under a memory setting. */
typedef struct tdm_bl_point {
    int policy;           /* enum tdm_policy */
    int mem;              /* index into opts.mem */
    double rate;          /* offered, queries per second */
    int probe;            /* 1: a probe of the rate search, 0: of --rates */
    uint64_t arrivals;    /* measured arrivals (the warm-up's left out) */
    uint64_t answered, failed, dropped; /* dropped: not sent, the point stopped */
    uint64_t late;        /* sent over 1 ms after their arrival time */
    double late_max_ms;
    uint64_t misses;      /* answered after the deadline, or dropped */
    uint64_t eng_misses;  /* the engine's count (from the call's start) */
    uint64_t mismatches;
    double mean, p50, p95, p99, p999, max; /* milliseconds, answered queries */
    double tput;          /* answers of measured arrivals per second */
    double wall;          /* seconds of the utilization window */
    int nlanes;
    int lane_gpu[TDM_SCHED_MAX_LANES];
    double util[TDM_SCHED_MAX_LANES];     /* active time / wall */
    uint64_t share[TDM_SCHED_MAX_LANES];  /* measured answers per lane */
    uint64_t batch_mode;  /* answers run in batch mode */
    uint64_t batched;     /* answers that shared their launches (batch > 1) */
    uint64_t other_policy;/* answers placed by another policy than asked */
    uint64_t stolen, promoted, switches;  /* scheduler deltas */
    double hit_rate;      /* list cache hits / lookups over the point; -1: none cached */
    int stopped;          /* 1: stopped early (hopeless backlog, or over the budget) */
    int ok;               /* sustained: not stopped, p95 within budget and deadline */
    uint64_t max_inflight;
    unsigned senders;     /* sender threads the pool grew to */
} tdm_bl_point;

typedef struct tdm_bl_set {
    tdm_bl_point *v;
    size_t n, cap;
} tdm_bl_set;

/* The whole run. */
typedef struct tdm_bl {
    tdm_bl_opts o;
    const tdm_ireader *r;
    tdm_bq_queries qs;
    tdm_bq_answers ans_or, ans_and;
    int ndev;             /* the engine's devices (of the handle running now) */
    uint64_t index_bytes; /* the index's device bytes (tdm_resident_bytes_needed) */
    uint64_t corrupt;     /* TANDEM_BENCH_LOAD_CORRUPT: arrival to spoil (1-based), 0 none */
    tdm_bl_set set;
    uint64_t mismatches, failures;
    double t_start;       /* tdm_cli_now() at the start, for --time-limit */
    int cut;              /* --time-limit reached: no further point ran */
    /* --find-max: the highest sustained rate per memory setting and policy
     * (index into o.policies), 0 when none was; the point that showed it (-1) */
    double max_rate[TDM_BL_MAX_MEM][TDM_BL_MAX_POL];
    long max_at[TDM_BL_MAX_MEM][TDM_BL_MAX_POL];
    int searched[TDM_BL_MAX_MEM][TDM_BL_MAX_POL]; /* 0 not run, 1 done, 2 cut by --time-limit */
} tdm_bl;

/* Runs one point of policy `pol` at `rate` on search handle sh (memory
 * setting `mem`): the warm-up and the measured arrivals, every answer
 * checked; fills *p (and prints mismatches and failures to stderr).
 * `limit_ms` > 0 (a rate-search probe) stops the point as soon as more
 * than 5 % of its arrivals are certain to take longer. Returns 0, or -1
 * after a message (threads or memory could not be had). */
int tdm_bl_run_point(tdm_bl *b, tdm_search *sh, int pol, int mem, double rate, int probe,
                     double limit_ms, tdm_bl_point *p);

/* 0 if r is the oracle's answer to query q (of b->qs.sq) at b->o.k; else the
 * first difference in why[cap]. */
int tdm_bl_check(const tdm_bl *b, const tdm_search_result *r, size_t q, char *why, size_t cap);

/* Output (cmd_bench_lout.c). */
void tdm_bl_print_header(FILE *f);
void tdm_bl_print_point(FILE *f, const tdm_bl *b, const tdm_bl_point *p);
/* The highest sustained rate per memory setting and policy. */
void tdm_bl_print_max(FILE *f, const tdm_bl *b);
/* Every point as CSV / latency (p50, p95, p99) against offered rate, a
 * panel per memory setting, a colour per policy, as SVG. 0, or -1 after a
 * message. */
int tdm_bl_write_csv(const char *path, const tdm_bl *b);
int tdm_bl_write_svg(const char *path, const tdm_bl *b, const char *title);

#endif
