/* `tandem bench load INDEX --queries FILE`: open-loop Poisson arrivals at
 * given rates, per scheduling policy and device-memory setting; with
 * --find-max the highest rate each policy sustains under a p95 budget
 * (cmd_bench_load.h lists the files). This file: options, the queries, the
 * oracle pass, the engines, the sweeps and the rate search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_bench_load.h"
#include "index/index_priv.h"
#include "resident/resident.h"
#include "runtime/settings.h"
#include "harness/oracle.h"
#include "harness/queryfile.h"
#include "tandem.h"

static const char C[] = "bench load";

#define RATE_MAX 1e6
#define SENDERS_MAX 4096
#define MIN_ARRIVALS 20 /* the rate search does not go where a point has fewer */

typedef tdm_bl_opts opts;
typedef tdm_bl bl;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tandem bench load INDEX --queries FILE [options]\n"
        "  Open-loop load: queries of the log (in order, cycled) arrive as a Poisson\n"
        "  process at each rate of --rates (seeded exponential gaps), each sent by a pool\n"
        "  of sender threads at its arrival time whatever is still running; its latency\n"
        "  runs from the scheduled arrival to the answer, so a backlog counts. For each\n"
        "  scheduling policy: mean, p50, p95, p99, p99.9 latency, deadline misses,\n"
        "  achieved throughput, each lane's utilization (time with a run going / wall),\n"
        "  and the mix of lanes, load modes and batches from the results. Each point\n"
        "  runs a warm-up, then --duration seconds of measured arrivals. Every answer is\n"
        "  checked against the exhaustive host oracle (bit for bit; a mismatch or a\n"
        "  failed query makes the exit status 1). BM25 (1.2, 0.75).\n"
        "options:\n"
        "  --queries FILE       id:text lines, id<TAB>text, TREC topics, SMART, JSON lines\n"
        "  --format F           auto (default), colon, tab, trec, smart, jsonl,\n"
        "                       tokens (id<TAB>terms, repeated: the default for\n"
        "                       colon and tab lines on an impact index)\n"
        "  --fields LIST        TREC topics: title,desc,narr (title)\n"
        "  --limit N            the first N queries of the file (default: all)\n"
        "  --algorithm A        or, and, and_or, wand, bmw, maxscore, auto (default auto)\n"
        "  -k N                 results a query, 1..10000 (default 10)\n"
        "  --devices SPEC       as TANDEM_DEVICES (default: TANDEM_DEVICES, else all)\n"
        "  --policies LIST      cpu-only, gpu-only, best, hybrid, direct (default: each of\n"
        "                       cpu-only, gpu-only, best, hybrid the engine can serve)\n"
        "  --rates LIST         offered rates, queries per second (e.g. 50,100,200)\n"
        "  --duration S         measured seconds a point (default 5)\n"
        "  --warmup S           seconds of arrivals at the point's rate run first,\n"
        "                       checked but not measured (default 1)\n"
        "  --deadline-ms D      a query's deadline after its arrival (default 500): the\n"
        "                       misses counted, and the engine's deadline for promotion\n"
        "  --find-max           per policy, the highest rate whose p95 stays within\n"
        "                       --budget-p95-ms and the deadline: doubling from\n"
        "                       --start-rate, then bisection to --precision\n"
        "  --budget-p95-ms B    the p95 budget of --find-max (default: the deadline)\n"
        "  --start-rate R       the rate search's first rate (default: the first of\n"
        "                       --rates, else 10)\n"
        "  --precision F        the rate search stops at hi / lo - 1 <= F (default 0.05)\n"
        "  --device-memory LIST device memory the index may take, per setting: 'full'\n"
        "                       (resident), a fraction of the index's device size (1/3,\n"
        "                       0.25) or bytes with K, M, G (e.g. full,1/3; default\n"
        "                       full). A budget below the index puts its lists in a\n"
        "                       list cache on every device (docs/CACHE.md), or, on\n"
        "                       an engine of two GPUs or more whose shards fit it,\n"
        "                       partitions the index (docs/PARTITION.md)\n"
        "  --senders N          sender threads at most (default 4096; the pool starts\n"
        "                       at 16 and grows by one whenever all are in calls): an\n"
        "                       arrival that finds all busy is sent late (counted)\n"
        "  --seed S             the arrivals' seed (default 1)\n"
        "  --time-limit S       start no point after S seconds from the start: the tables\n"
        "                       and files hold what ran (a cut rate search says so)\n"
        "  --oracle-threads N   threads computing the oracle's answers first (default 1)\n"
        "  --csv FILE           every point as CSV\n"
        "  --plot FILE.svg      p50, p95 and p99 latency against offered rate, a line per\n"
        "                       policy, a panel per device-memory setting\n"
        "A point stops when its backlog is hopeless: an arrival sent over 4 deadlines\n"
        "(at least 2 s) late, or more queries in flight than the answers' pace clears\n"
        "in twice that (a probe: twice its budget); its unsent arrivals are dropped and\n"
        "count as misses. A probe also stops once over 5 %% of its arrivals took longer\n"
        "than the budget.\n"
        "Test switch: TANDEM_BENCH_LOAD_CORRUPT=N spoils the answer to arrival N of each\n"
        "point (its top score one ulp up) before the check, to see the check fail.\n"
        "Table (a line per point; '*' marks rate-search probes): arrived (measured\n"
        "arrivals), q/s (answers a second), latencies in ms, miss%% (answered past the\n"
        "deadline, or dropped), late (sent over 1 ms after their time), drop, bmode%%\n"
        "(run in batch load mode), batch%% (launches shared with other queries), hit%%\n"
        "(list cache), verdict (ok: sustained; over: p95 past the budget or deadline;\n"
        "stopped), and per lane (G: GPU, C: CPU) its utilization / share of answers.\n"
        "Progress goes to stderr, the table to stdout.\n");
}

/* A comma list into out[]; each item through one(); 1 after a message. */
static int each_item(const char *opt, const char *v, int (*one)(const char *, void *),
                     void *arg)
{
    char buf[512];
    if (!*v || strlen(v) >= sizeof buf || v[strlen(v) - 1] == ',' || v[0] == ',')
        return tdm_cli_fail(C, "%s '%s': expected a comma-separated list", opt, v);
    strcpy(buf, v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (one(t, arg))
            return 1;
    return 0;
}

static int one_rate(const char *t, void *arg)
{
    opts *o = arg;
    double r;
    if (tdm_cli_real(C, "--rates", t, 0, 1, RATE_MAX, &r))
        return 1;
    if (o->nrates == TDM_BL_MAX_LIST)
        return tdm_cli_fail(C, "--rates: at most %d values", TDM_BL_MAX_LIST);
    size_t i = o->nrates++;
    for (; i > 0 && o->rates[i - 1] > r; i--) /* keep ascending */
        o->rates[i] = o->rates[i - 1];
    if (i > 0 && o->rates[i - 1] == r)
        return tdm_cli_fail(C, "--rates: %s given twice", t);
    o->rates[i] = r;
    return 0;
}

static int one_policy(const char *t, void *arg)
{
    opts *o = arg;
    int p;
    if (tdm_policy_parse(t, &p) != TDM_OK || p == TDM_POLICY_DEFAULT)
        return tdm_cli_fail(C, "--policies '%s': expected cpu-only, gpu-only, best, hybrid "
                               "or direct", t);
    for (size_t i = 0; i < o->npol; i++)
        if (o->policies[i] == p)
            return tdm_cli_fail(C, "--policies: '%s' given twice", t);
    if (o->npol == TDM_BL_MAX_POL)
        return tdm_cli_fail(C, "--policies: too many");
    o->policies[o->npol++] = p;
    return 0;
}

/* full | A/B | a fraction in (0, 1] | bytes with K, M, G. */
static int one_mem(const char *t, void *arg)
{
    opts *o = arg;
    if (o->nmem == TDM_BL_MAX_MEM)
        return tdm_cli_fail(C, "--device-memory: at most %d settings", TDM_BL_MAX_MEM);
    tdm_bl_mem m = {0};
    snprintf(m.label, sizeof m.label, "%.31s", t);
    const char *slash = strchr(t, '/');
    size_t len = strlen(t);
    char last = len ? t[len - 1] : 0;
    if (!strcmp(t, "full")) {
        m.frac = 1;
    } else if (slash) {
        char a[32];
        uint64_t x, y;
        if ((size_t)(slash - t) >= sizeof a)
            return tdm_cli_fail(C, "--device-memory '%s': expected A/B", t);
        memcpy(a, t, (size_t)(slash - t));
        a[slash - t] = 0;
        if (tdm_cli_uint(C, "--device-memory", a, 1, 1u << 20, &x) ||
            tdm_cli_uint(C, "--device-memory", slash + 1, 1, 1u << 20, &y))
            return 1;
        if (x > y)
            return tdm_cli_fail(C, "--device-memory '%s': a fraction above 1", t);
        m.frac = (double)x / (double)y;
    } else if (last == 'K' || last == 'M' || last == 'G') {
        char num[32];
        uint64_t x;
        if (len >= sizeof num)
            return tdm_cli_fail(C, "--device-memory '%s': too long", t);
        memcpy(num, t, len - 1);
        num[len - 1] = 0;
        if (tdm_cli_uint(C, "--device-memory", num, 1, 1u << 30, &x))
            return 1;
        m.bytes = x << (last == 'K' ? 10 : last == 'M' ? 20 : 30);
    } else if (tdm_cli_real(C, "--device-memory", t, 0, 1, 1, &m.frac)) {
        return 1;
    }
    for (size_t i = 0; i < o->nmem; i++)
        if (!strcmp(o->mem[i].label, m.label))
            return tdm_cli_fail(C, "--device-memory: '%s' given twice", t);
    o->mem[o->nmem++] = m;
    return 0;
}

static int parse_opt(int argc, char **argv, int *i, opts *o, int *budget_set)
{
    const char *v;
    if ((v = tdm_cli_opt(argc, argv, i, "--queries"))) {
        o->queries = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--format"))) {
        if (tdm_qf_options_by_name(v, &o->qo) < 0)
            return tdm_cli_fail(C, "--format '%s': expected auto, colon, tab, trec, smart or "
                                   "jsonl", v);
    } else if ((v = tdm_cli_opt(argc, argv, i, "--fields"))) {
        if (!(o->qo.trec_fields = tdm_qf_fields_by_names(v)))
            return tdm_cli_fail(C, "--fields '%s': expected a comma list of title, desc, narr",
                                v);
    } else if ((v = tdm_cli_opt(argc, argv, i, "--limit"))) {
        return tdm_cli_uint(C, "--limit", v, 1, UINT32_MAX, &o->limit) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--algorithm"))) {
        if (tdm_algorithm_parse(v, &o->algo) != TDM_OK)
            return tdm_cli_fail(C, "--algorithm: %s", tdm_last_error());
    } else if ((v = tdm_cli_opt(argc, argv, i, "-k")) || (v = tdm_cli_opt(argc, argv, i, "--k"))) {
        uint64_t k;
        if (tdm_cli_uint(C, "-k", v, 1, TDM_SEARCH_K_MAX, &k))
            return 1;
        o->k = (uint32_t)k;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--devices"))) {
        o->devices = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--policies"))) {
        o->npol = 0;
        return each_item("--policies", v, one_policy, o);
    } else if ((v = tdm_cli_opt(argc, argv, i, "--rates"))) {
        o->nrates = 0;
        return each_item("--rates", v, one_rate, o);
    } else if ((v = tdm_cli_opt(argc, argv, i, "--device-memory"))) {
        o->nmem = 0;
        return each_item("--device-memory", v, one_mem, o);
    } else if ((v = tdm_cli_opt(argc, argv, i, "--duration"))) {
        return tdm_cli_real(C, "--duration", v, 0, 1, 3600, &o->duration) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--warmup"))) {
        return tdm_cli_real(C, "--warmup", v, 0, 0, 3600, &o->warmup) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--deadline-ms"))) {
        return tdm_cli_real(C, "--deadline-ms", v, 0, 1, 3.6e6, &o->deadline_ms) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--budget-p95-ms"))) {
        *budget_set = 1;
        return tdm_cli_real(C, "--budget-p95-ms", v, 0, 1, 3.6e6, &o->budget_p95_ms) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--start-rate"))) {
        return tdm_cli_real(C, "--start-rate", v, 0, 1, RATE_MAX, &o->start_rate) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--precision"))) {
        return tdm_cli_real(C, "--precision", v, 0.001, 0, 1, &o->precision) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--time-limit"))) {
        return tdm_cli_real(C, "--time-limit", v, 0, 1, 1e6, &o->time_limit) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--senders"))) {
        return tdm_cli_uint(C, "--senders", v, 1, SENDERS_MAX, &o->senders) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--seed"))) {
        return tdm_cli_uint(C, "--seed", v, 0, UINT64_MAX, &o->seed) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--oracle-threads"))) {
        return tdm_cli_uint(C, "--oracle-threads", v, 1, 1024, &o->oracle_threads) ? 1 : 0;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--csv"))) {
        o->csv = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--plot"))) {
        o->plot = v;
    } else if (!strcmp(argv[*i], "--find-max")) {
        o->find_max = 1;
    } else if (argv[*i][0] == '-' && argv[*i][1]) {
        return tdm_cli_fail(C, "unknown or incomplete option '%s' (see --help)", argv[*i]);
    } else if (!o->index) {
        o->index = argv[*i];
    } else {
        return tdm_cli_fail(C, "unexpected argument '%s'", argv[*i]);
    }
    return 0;
}

/* 0 parsed, -1 --help printed, or the exit status after an error message
 * (every option's error a usage error, 2). */
static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){.algo = TDM_ALGO_AUTO, .k = 10, .duration = 5, .warmup = 1,
                .deadline_ms = 500, .seed = 1, .senders = 4096, .oracle_threads = 1,
                .precision = 0.05, .qo = {TDM_QF_AUTO, 0, 0}};
    int budget_set = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return -1;
        }
        if (parse_opt(argc, argv, &i, o, &budget_set))
            return TDM_CLI_EXIT_USAGE;
    }
    if (!o->index || !o->queries)
        return tdm_cli_usage(C, "need INDEX and --queries FILE ('tandem bench load --help')");
    if (!o->nrates && !o->find_max)
        return tdm_cli_usage(C, "nothing to run: give --rates LIST, --find-max or both");
    if (budget_set && !o->find_max)
        return tdm_cli_usage(C, "--budget-p95-ms is the budget of --find-max: add --find-max");
    if (!budget_set)
        o->budget_p95_ms = o->deadline_ms;
    if (!o->start_rate)
        o->start_rate = o->nrates ? o->rates[0] : 10;
    if (!o->nmem)
        one_mem("full", o);
    const char *in[2] = {o->index, o->queries};
    int bad = o->csv ? tdm_cli_output(C, "--csv", o->csv, 0, in, 2, NULL) : 0;
    if (!bad && o->plot)
        bad = tdm_cli_output(C, "--plot", o->plot, 0, in, 2, NULL);
    if (bad)
        return bad;
    if (o->csv && o->plot && !strcmp(o->csv, o->plot))
        return tdm_cli_usage(C, "--csv and --plot name the same file '%s'", o->csv);
    return 0;
}

/* The oracle's top k of every distinct query, on --oracle-threads threads,
 * before anything is timed (bench queries' oracle pass; its timing unused). */
static int run_oracle(bl *b)
{
    int a = b->o.algo;
    int need_or = a != TDM_ALGO_AND;
    int need_and = a == TDM_ALGO_AND || a == TDM_ALGO_AND_OR || a == TDM_ALGO_AUTO;
    tdm_bq_oracle_job j = {b->r, b->qs.q, b->qs.nq, b->o.k, TDM_MATCH_OR,
                           tdm_score_params_for(b->r, TDM_SCORE_AUTO, TDM_BM25_K1_DEFAULT,
                                                TDM_BM25_B_DEFAULT),
                           (unsigned)b->o.oracle_threads, 0, NULL, NULL, NULL};
    tdm_bq_set scratch = {0};
    double t0 = tdm_cli_now();
    int rc = need_or && tdm_bq_oracle_run(&j, &scratch, &b->ans_or) < 0 ? -1 : 0;
    j.match = TDM_MATCH_AND;
    if (rc == 0 && need_and)
        rc = tdm_bq_oracle_run(&j, &scratch, &b->ans_and) < 0 ? -1 : 0;
    tdm_bq_set_free(&scratch);
    if (rc == 0)
        fprintf(stderr, "oracle: top %u of %zu queries in %.1f s\n", b->o.k, b->qs.nq,
                tdm_cli_now() - t0);
    return rc ? 1 : 0;
}

/* ---- the points */

static int add_point(bl *b, const tdm_bl_point *p)
{
    tdm_bl_set *s = &b->set;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        tdm_bl_point *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return tdm_cli_fail(C, "out of memory");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = *p;
    return 0;
}

static int point(bl *b, tdm_search *sh, int pol, int mem, double rate, int probe,
                 const tdm_bl_point **out)
{
    tdm_bl_point p;
    if (b->cut || (b->o.time_limit > 0 && tdm_cli_now() - b->t_start > b->o.time_limit)) {
        if (!b->cut)
            fprintf(stderr, "--time-limit %g s reached: no further point\n", b->o.time_limit);
        b->cut = 1;
        return 2;
    }
    double limit = probe ? (b->o.budget_p95_ms < b->o.deadline_ms ? b->o.budget_p95_ms
                                                                  : b->o.deadline_ms) : 0;
    fprintf(stderr, "%s, memory %s, %g q/s%s ...\n", tdm_policy_name(pol), b->o.mem[mem].label,
            rate, probe ? " (rate search)" : "");
    if (tdm_bl_run_point(b, sh, pol, mem, rate, probe, limit, &p) || add_point(b, &p))
        return 1;
    tdm_bl_print_point(stdout, b, &b->set.v[b->set.n - 1]);
    fflush(stdout);
    if (p.max_inflight >= b->o.senders && !p.stopped)
        fprintf(stderr, "note: all %llu senders were in calls at once (%llu arrivals sent "
                "late): raise --senders\n", (unsigned long long)b->o.senders,
                (unsigned long long)p.late);
    if (out)
        *out = &b->set.v[b->set.n - 1];
    return 0;
}

/* A probe of the rate search: a point, run a second time when it failed
 * without stopping (its p95 just over the limit): one noisy point (a
 * hiccup of the host) would otherwise end the doubling early. The second
 * decides. */
static int probe(bl *b, tdm_search *sh, int pol, int mem, double r, const tdm_bl_point **p)
{
    int rc = point(b, sh, pol, mem, r, 1, p);
    if (rc == 0 && !(*p)->ok && !(*p)->stopped)
        rc = point(b, sh, pol, mem, r, 1, p);
    return rc;
}

/* Doubling from the start rate while sustained (halving while not), then
 * bisection between the last sustained and the first unsustained rate. */
static int find_max(bl *b, tdm_search *sh, int pi, int mem)
{
    int pol = b->o.policies[pi];
    double lo = 0, hi = 0, r = b->o.start_rate, floor_rate = MIN_ARRIVALS / b->o.duration;
    const tdm_bl_point *p;
    long lo_at = -1;
    int rc = 0;
    for (;;) {
        if ((rc = probe(b, sh, pol, mem, r, &p)))
            break;
        if (p->ok) {
            lo = r, lo_at = (long)b->set.n - 1;
            if (hi || r * 2 > RATE_MAX)
                break;
            r *= 2;
        } else {
            hi = r;
            if (lo || r / 2 < floor_rate)
                break;
            r /= 2;
        }
    }
    while (rc == 0 && lo && hi && hi / lo - 1 > b->o.precision) {
        r = sqrt(lo * hi); /* the middle on a log scale */
        if ((rc = probe(b, sh, pol, mem, r, &p)))
            break;
        if (p->ok)
            lo = r, lo_at = (long)b->set.n - 1;
        else
            hi = r;
    }
    if (rc == 1)
        return 1;
    b->max_rate[mem][pi] = lo;
    b->max_at[mem][pi] = lo_at;
    b->searched[mem][pi] = rc == 2 ? 2 : 1;
    if (rc == 0)
        fprintf(stderr, "%s, memory %s: %s %.4g q/s (p95 budget %g ms, deadline %g ms)\n",
                tdm_policy_name(pol), b->o.mem[mem].label,
                lo ? "sustains" : "sustains no rate down to", lo ? lo : hi,
                b->o.budget_p95_ms, b->o.deadline_ms);
    return 0;
}

/* The policies asked for, or every one the engine's lanes serve; a kind
 * policy without its kind of lane is an error. */
static int resolve_policies(bl *b, tdm_search *sh)
{
    tdm_sched_stats st;
    tdm_sched_stats_init(&st);
    if (tdm_search_stats(sh, &st) != TDM_OK)
        return tdm_cli_fail(C, "%s", tdm_last_error());
    int gpu = 0, cpu = 0;
    for (int l = 0; l < st.nlanes; l++)
        gpu += st.lanes[l].gpu != 0, cpu += !st.lanes[l].gpu;
    opts *o = &b->o;
    if (!o->npol) {
        if (cpu)
            o->policies[o->npol++] = TDM_POLICY_CPU_ONLY;
        if (gpu)
            o->policies[o->npol++] = TDM_POLICY_GPU_ONLY;
        o->policies[o->npol++] = TDM_POLICY_BEST;
        o->policies[o->npol++] = TDM_POLICY_HYBRID;
    }
    for (size_t i = 0; i < o->npol; i++)
        if ((o->policies[i] == TDM_POLICY_GPU_ONLY && !gpu) ||
            (o->policies[i] == TDM_POLICY_CPU_ONLY && !cpu))
            return tdm_cli_fail(C, "--policies: %s, but the engine has no %s lane (its lanes: "
                                "%d GPU, %d CPU; TANDEM_LANE_KINDS can name them)",
                                tdm_policy_name(o->policies[i]),
                                o->policies[i] == TDM_POLICY_GPU_ONLY ? "GPU" : "CPU",
                                gpu, cpu);
    return 0;
}

/* Each device runs a batch call and single calls pinned to it before the
 * first point: a driver compiles a kernel at its first launch (PoCL) and
 * the batched path has kernels of its own, so the first point would
 * otherwise pay seconds of compilation (and could be judged unsustained
 * for it). The answers are checked like every other. */
#define WARM_QUERIES 16
static void warm_engine(bl *b, tdm_search *sh)
{
    if (tdm_search_wait_ready(sh) != TDM_OK) /* the index's uploads; a failure shows below */
        fprintf(stderr, "bench load: %s\n", tdm_last_error());
    size_t n = b->qs.nq < WARM_QUERIES ? b->qs.nq : WARM_QUERIES;
    tdm_search_result *res[WARM_QUERIES];
    char why[160];
    for (int d = 0; d < b->ndev; d++) {
        tdm_search_options o;
        tdm_search_options_init(&o);
        o.algorithm = b->o.algo;
        o.k = b->o.k;
        o.device = d;
        int rc = tdm_search_batch(sh, b->qs.sq, n, &o, res);
        for (size_t i = 0; i < n * 2; i++) {
            const tdm_search_query *q = &b->qs.sq[i % n];
            tdm_search_result *r = NULL;
            if (i < n) /* the batch's results, then single calls */
                r = rc == TDM_OK ? res[i] : NULL;
            else if ((q->text ? tdm_search_text(sh, q->text, &o, &r)
                              : tdm_search_terms(sh, q->terms, q->nterms, &o, &r)) != TDM_OK)
                r = NULL;
            if (!r || r->status != TDM_OK) {
                b->failures++;
                fprintf(stderr, "FAILED warm-up device %d query '%s': %s\n", d,
                        b->qs.qf->q[b->qs.pos[i % n]].id,
                        r && r->error ? r->error : tdm_last_error());
            } else if (tdm_bl_check(b, r, i % n, why, sizeof why)) {
                b->mismatches++;
                fprintf(stderr, "MISMATCH warm-up device %d %s query '%s': %s\n", d,
                        i < n ? "batch" : "single", b->qs.qf->q[b->qs.pos[i % n]].id, why);
            }
            tdm_search_result_free(r);
        }
    }
}

static void print_lanes(const bl *b, tdm_engine *e, tdm_search *sh, int mem)
{
    tdm_sched_stats st;
    tdm_sched_stats_init(&st);
    tdm_search_stats(sh, &st);
    for (int l = 0; l < st.nlanes; l++) {
        tdm_device_info info;
        tdm_engine_device_info_get(e, st.lanes[l].device, &info);
        tdm_list_cache_stats cs;
        int cached = tdm_search_cache_stats(sh, st.lanes[l].device, &cs) == TDM_OK && cs.cached;
        fprintf(stderr, "lane %d: %s lane, device %d %s (%s), %d slots, %s\n", l,
                st.lanes[l].gpu ? "GPU" : "CPU", st.lanes[l].device, info.name, info.platform,
                st.lanes[l].slots, cached ? "list cache" : "index resident");
        if (cached)
            fprintf(stderr, "lane %d: list cache of %llu bytes for an index of %llu (memory "
                    "%s)\n", l, (unsigned long long)cs.capacity_bytes,
                    (unsigned long long)b->index_bytes, b->o.mem[mem].label);
    }
}

/* Every point of one device-memory setting: its own engine. */
static int run_memory(bl *b, tdm_index *ix, int mem)
{
    tdm_bl_mem *m = &b->o.mem[mem];
    if (m->frac > 0 && m->frac < 1)
        m->bytes = (uint64_t)ceil((double)b->index_bytes * m->frac);
    tdm_engine_options eo;
    tdm_engine_options_init(&eo);
    eo.devices = b->o.devices;
    eo.device_memory = m->bytes;
    eo.deadline_ms = b->o.deadline_ms;
    tdm_engine *e = NULL;
    tdm_search *sh = NULL;
    int rc = 0;
    if (tdm_engine_open(&eo, &e) != TDM_OK || tdm_search_open(e, ix, &sh) != TDM_OK)
        rc = tdm_cli_fail(C, "memory %s (%llu bytes): %s", m->label,
                          (unsigned long long)m->bytes, tdm_last_error());
    if (rc == 0 && *tdm_engine_warnings(e))
        fprintf(stderr, "%s\n", tdm_engine_warnings(e));
    if (rc == 0) {
        b->ndev = tdm_engine_device_count(e);
        print_lanes(b, e, sh, mem);
        warm_engine(b, sh);
        if (mem == 0)
            rc = resolve_policies(b, sh);
    }
    if (rc == 0 && mem == 0)
        tdm_bl_print_header(stdout);
    for (size_t pi = 0; rc == 0 && pi < b->o.npol; pi++) {
        for (size_t ri = 0; rc == 0 && ri < b->o.nrates; ri++)
            rc = point(b, sh, b->o.policies[pi], mem, b->o.rates[ri], 0, NULL);
        if (rc == 2) /* --time-limit: the rate searches not run are marked cut */
            rc = 0;
        if (rc == 0 && b->o.find_max)
            rc = find_max(b, sh, (int)pi, mem);
    }
    tdm_search_close(sh);
    tdm_engine_close(e);
    return rc;
}

static int write_outputs(const bl *b)
{
    int rc = 0;
    if (b->o.csv && tdm_bl_write_csv(b->o.csv, b))
        rc = 1;
    const char *base = strrchr(b->o.index, '/');
    char title[256];
    snprintf(title, sizeof title, "tandem bench load: %s, %zu queries, %s k %u, deadline %g ms",
             base ? base + 1 : b->o.index, b->qs.nq, tdm_algorithm_name(b->o.algo), b->o.k,
             b->o.deadline_ms);
    if (b->o.plot && tdm_bl_write_svg(b->o.plot, b, title))
        rc = 1;
    return rc;
}

static int setup(bl *b)
{
    const char *c = tdm_settings_bench_load_corrupt();
    if (c && tdm_cli_uint(C, "TANDEM_BENCH_LOAD_CORRUPT", c, 1, UINT64_MAX, &b->corrupt))
        return 1;
    b->index_bytes = tdm_resident_bytes_needed(b->r);
    for (size_t m = 0; m < TDM_BL_MAX_MEM; m++)
        for (size_t p = 0; p < TDM_BL_MAX_POL; p++)
            b->max_at[m][p] = -1;
    return 0;
}

int tdm_bench_load(int argc, char **argv)
{
    bl b = {0};
    int rc = parse(argc, argv, &b.o);
    if (rc)
        return rc < 0 ? 0 : rc;
    tdm_index *ix = NULL;
    if (tdm_index_open(b.o.index, &ix) != TDM_OK)
        return tdm_cli_fail(C, "%s", tdm_last_error());
    b.r = tdm_index_ireader(ix);
    rc = setup(&b);
    if (rc == 0)
        rc = tdm_bq_queries_load(&b.qs, C, b.o.queries, &b.o.qo, b.o.limit, b.r, b.o.index);
    if (rc == 0 && !b.qs.nq)
        rc = tdm_cli_fail(C, "%s: no query has a term in the index", b.o.queries);
    if (rc == 0)
        rc = run_oracle(&b);
    b.t_start = tdm_cli_now();
    for (size_t m = 0; rc == 0 && !b.cut && m < b.o.nmem; m++)
        rc = run_memory(&b, ix, (int)m);
    if (rc == 0 && b.o.find_max)
        tdm_bl_print_max(stdout, &b);
    if ((rc == 0 || b.set.n) && write_outputs(&b)) /* what ran, even when a point failed */
        rc = 1;
    if (rc == 0 && (b.mismatches || b.failures))
        rc = tdm_cli_fail(C, "%llu answers differ from the oracle's, %llu queries failed",
                          (unsigned long long)b.mismatches, (unsigned long long)b.failures);
    else if (rc == 0)
        fprintf(stderr, "every answer is the oracle's\n");
    tdm_bq_answers_free(&b.ans_or);
    tdm_bq_answers_free(&b.ans_and);
    free(b.set.v);
    tdm_bq_queries_free(&b.qs);
    tdm_index_close(ix);
    return rc ? TDM_CLI_EXIT_FAIL : 0; /* past the options, every failure is 1 */
}
