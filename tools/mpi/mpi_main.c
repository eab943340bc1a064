/* `mpirun -np R tandem-mpi run|bench ...` (docs/MPI.md): MPI set up with
 * errors returned (MPI_ERRORS_RETURN), options read on every rank (argv is
 * the same on each), the shards opened, then rank 0 runs the mode while
 * the other ranks answer its batches. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/cleanup.h"
#include "cmd_search.h"
#include "tmpi.h"

static const char C[] = "mpi";

static char last_error[1024];

int tmpi_fail(const tmpi_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tandem-mpi%s: %s\n", c && c->rank ? " (not rank 0)" : "", last_error);
    fflush(stderr);
    return 1;
}

const char *tmpi_last_error(void)
{
    return last_error;
}

static void usage(void)
{
    printf("usage: mpirun -np R tandem-mpi run PREFIX --queries FILE -o RUN [options]\n"
           "       mpirun -np R tandem-mpi serve PREFIX [--listen ADDR:PORT] [options]\n"
           "       mpirun -np R tandem-mpi bench queries PREFIX --queries FILE --oracle INDEX\n"
           "                                [options]\n"
           "  PREFIX: the shards PREFIX.0 .. PREFIX.<N-1> of 'tandem shard INDEX --shards N\n"
           "  -o PREFIX'; shard i opens on rank i %% R (R at most N), on that rank's devices\n"
           "  (TANDEM_DEVICES). Rank 0 reads the queries, sends them out in batches and\n"
           "  merges the shards' top k: the whole index's answers, bit for bit.\n"
           "run: the TREC run 'tandem run INDEX' writes, byte for byte.\n"
           "  -o RUN           output file, '-' for stdout\n"
           "  --tag T, --docname-prefix P, --format F, --fields LIST, --by-position:\n"
           "                   as 'tandem run' (-k defaults to 1000 there and here)\n"
           "bench queries: latency and throughput of every algorithm asked for, every\n"
           "  answer checked against the exact oracle on the whole index.\n"
           "  --oracle INDEX   the unsharded index (read on rank 0 only)\n"
           "  --algorithms L   comma list (default maxscore)\n"
           "  --oracle-threads N threads running the oracle, 1..1024 (default 1), each\n"
           "                   its own oracle over its share of the queries: the same\n"
           "                   answers, sooner (at 10M documents ~0.1 s a query)\n"
           "  --limit N        the first N queries only\n"
           "both:\n"
           "  --batch N        queries a message carries, 1..65536 (default 64)\n"
           "  --timeout S, --rank-timeout S\n"
           "                   seconds rank 0 waits for a rank's answer to a batch or a\n"
           "                   probe (default 300): then the job ends naming the rank\n"
           "                   (serve: --rank-timeout; its --timeout is tandem serve's)\n"
           "  --open-timeout S the same for opening shards and engines (default 900)\n"
           "serve: 'tandem serve's HTTP API on rank 0 over every shard; a request is\n"
           "  one round of every rank; /health and /metrics cover every rank's shards\n"
           "  (a probe between rounds); SIGINT or SIGTERM to rank 0 drains and stops.\n"
           "  Its options as 'tandem serve' (--listen, --token-file, --max-*, --drain).\n"
           "search options (run's and bench's; serve's defaults):\n%s",
           tdm_cli_search_help);
}

/* --test-fault R:kill|hang|fail@B (tests): rank R dies (SIGKILL), hangs or
 * reports a failure at its B-th batch. */
static int parse_fault(const char *v, tmpi_opts *o)
{
    int r = -1, b = -1, used = 0;
    char kind[8] = "";
    if (sscanf(v, "%d:%7[a-z]@%d%n", &r, kind, &b, &used) != 3 || v[used] || r < 0 || b < 1 ||
        (strcmp(kind, "kill") && strcmp(kind, "hang") && strcmp(kind, "fail")))
        return tdm_cli_fail(C, "--test-fault '%s': expected RANK:kill|hang|fail@BATCH", v);
    o->fault_rank = r;
    o->fault_batch = b;
    snprintf(o->fault_kind, sizeof o->fault_kind, "%s", kind);
    return 0;
}

/* An option of run or bench at argv[*i]: 1 taken, 0 not this, -1 bad. */
static int parse_mode_opt(int argc, char **argv, int *i, tmpi_opts *o)
{
    const char *v;
    uint64_t u;
    if ((v = tdm_cli_opt(argc, argv, i, "--queries")))
        o->queries = v;
    else if ((v = tdm_cli_opt(argc, argv, i, "-o")))
        o->out = v;
    else if ((v = tdm_cli_opt(argc, argv, i, "--tag")))
        o->tag = v;
    else if ((v = tdm_cli_opt(argc, argv, i, "--docname-prefix")))
        o->docprefix = v;
    else if ((v = tdm_cli_opt(argc, argv, i, "--oracle")))
        o->oracle = v;
    else if ((v = tdm_cli_opt(argc, argv, i, "--algorithms")))
        o->algorithms = v;
    else if ((v = tdm_cli_opt(argc, argv, i, "--format"))) {
        if (tdm_qf_options_by_name(v, &o->qo) < 0)
            return -tdm_cli_fail(C, "--format '%s': expected auto, colon, tab, trec, smart, "
                                    "jsonl or tokens", v);
    } else if ((v = tdm_cli_opt(argc, argv, i, "--fields"))) {
        if (!(o->qo.trec_fields = tdm_qf_fields_by_names(v)))
            return -tdm_cli_fail(C, "--fields '%s': expected title, desc, narr", v);
    } else if (!strcmp(argv[*i], "--by-position")) {
        o->qo.number_by_position = 1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--batch"))) {
        if (tdm_cli_uint(C, "--batch", v, 1, 65536, &o->batch))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--oracle-threads"))) {
        if (tdm_cli_uint(C, "--oracle-threads", v, 1, 1024, &o->oracle_threads))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--limit"))) {
        if (tdm_cli_uint(C, "--limit", v, 1, UINT32_MAX, &u))
            return -1;
        o->limit = u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--timeout"))) {
        if (tdm_cli_real(C, "--timeout", v, 0, 1, 1e6, &o->timeout_s))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--rank-timeout"))) {
        if (tdm_cli_real(C, "--rank-timeout", v, 0, 1, 1e6, &o->timeout_s))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--open-timeout"))) {
        if (tdm_cli_real(C, "--open-timeout", v, 0, 1, 1e6, &o->open_timeout_s))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--test-fault"))) {
        if (parse_fault(v, o))
            return -1;
    } else {
        return 0;
    }
    return 1;
}

/* 0 parsed, -1 --help printed, or the exit status after a message (2: every
 * error here is one of the command line). */
static int parse(int argc, char **argv, tmpi_opts *o)
{
    *o = (tmpi_opts){.tag = "tandem", .docprefix = "", .algorithms = "maxscore", .batch = 64,
                     .oracle_threads = 1, .timeout_s = 300, .open_timeout_s = 900,
                     .fault_rank = -1, .qo = {TDM_QF_AUTO, 0, 0, 0}};
    tdm_cli_sopts s = {0};
    tdm_search_options_init(&s.o);
    int at = 2;
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage();
        return argc < 2 ? TDM_CLI_EXIT_USAGE : -1;
    }
    o->mode = argv[1];
#ifdef TANDEM_HAVE_MICROHTTPD
    tdm_serve_defaults(&o->serve, &o->lim);
#endif
    if (!strcmp(o->mode, "bench") && argc > 2 && !strcmp(argv[2], "queries"))
        at = 3;
    else if (strcmp(o->mode, "run") && strcmp(o->mode, "serve"))
        return tdm_cli_usage(C, "unknown command '%s': run, bench queries or serve", o->mode);
    if (!strcmp(o->mode, "run"))
        s.o.k = 1000;
    for (int i = at; i < argc; i++) {
        int t;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage();
            return -1;
        } else if ((t = tdm_cli_search_opt(C, argc, argv, &i, &s)) ||
#ifdef TANDEM_HAVE_MICROHTTPD
                   (!strcmp(o->mode, "serve") &&
                    (t = tdm_serve_option(C, argc, argv, &i, &o->serve, &o->lim))) ||
#endif
                   (t = parse_mode_opt(argc, argv, &i, o))) {
            if (t < 0)
                return TDM_CLI_EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage(C, "unknown or incomplete option '%s'", argv[i]);
        } else if (!o->prefix) {
            o->prefix = argv[i];
        } else {
            return tdm_cli_usage(C, "unexpected argument '%s'", argv[i]);
        }
    }
    if (s.shards && o->prefix) /* --shards PREFIX, as 'tandem search' takes it */
        return tdm_cli_usage(C, "--shards %s and PREFIX %s: give one of them", s.index,
                             o->prefix);
    if (s.shards)
        o->prefix = s.index;
    o->so = s.o;
    if (o->so.device >= 0)
        return tdm_cli_usage(C, "--device: each rank runs on its own devices (TANDEM_DEVICES)");
    if (!o->prefix || (!o->queries && strcmp(o->mode, "serve")))
        return tdm_cli_usage(C, "need PREFIX and --queries FILE ('tandem-mpi --help')");
    if (!strcmp(o->mode, "serve") && o->so.k > o->lim.max_k)
        return tdm_cli_usage(C, "-k %u is past --max-k %u", o->so.k, o->lim.max_k);
    if (!strcmp(o->mode, "run") && !o->out)
        return tdm_cli_usage(C, "run: need -o RUN");
    if (!strcmp(o->mode, "bench") && !o->oracle)
        return tdm_cli_usage(C, "bench queries: need --oracle INDEX (the unsharded index)");
    if (!*o->tag || strpbrk(o->tag, " \t\n") || strpbrk(o->docprefix, " \t\n"))
        return tdm_cli_usage(C, "--tag and --docname-prefix: no white space (and a tag)");
    return 0;
}

/* Only rank 0 says what is wrong with the command line (every rank reads
 * it and comes to the same verdict). */
static int parse_quiet(int rank, int argc, char **argv, tmpi_opts *o)
{
    int saved[2] = {-1, -1}, null = rank ? open("/dev/null", O_WRONLY) : -1;
    if (null >= 0) {
        fflush(stdout);
        fflush(stderr);
        saved[0] = dup(1);
        saved[1] = dup(2);
        dup2(null, 1);
        dup2(null, 2);
    }
    int rc = parse(argc, argv, o);
    if (null >= 0) {
        fflush(stdout);
        fflush(stderr);
        dup2(saved[0], 1);
        dup2(saved[1], 2);
        close(saved[0]);
        close(saved[1]);
        close(null);
    }
    return rc;
}

int main(int argc, char **argv)
{
    tdm_cli_std_fds();
    int prov = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov) != MPI_SUCCESS) {
        fprintf(stderr, "tandem-mpi: MPI_Init failed\n");
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tdm_cleanup_on_signals(); /* mpirun ends a failed job's ranks with SIGTERM:
                                 no RUN's temporary file is left */
    static tmpi_ctx c; /* large: the shards' tables */
    static tmpi_opts o;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    c.o = &o;
    int rc = parse_quiet(c.rank, argc, argv, &o);
    if (rc) {
        MPI_Finalize();
        return rc < 0 ? 0 : rc;
    }
    if (!strcmp(o.mode, "serve")) {
        /* before any thread starts (the engines'): rank 0 takes them with
           sigtimedwait to drain; the others end when it says (mpirun
           forwards a SIGTERM it gets to every rank) */
        sigset_t sigs;
        sigemptyset(&sigs);
        sigaddset(&sigs, SIGINT);
        sigaddset(&sigs, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    }
    rc = tmpi_shards_open(&c);
    c.opened_at = tdm_cli_now();
    if (rc == 0 && c.rank == 0) {
        rc = !strcmp(o.mode, "run")     ? tmpi_run(&c)
             : !strcmp(o.mode, "serve") ? tmpi_serve(&c)
                                        : tmpi_bench(&c);
        if (tmpi_stop(&c, rc ? 1 : 0))
            tmpi_abort(&c, 1);
    } else if (rc == 0) {
        rc = tmpi_serve_rounds(&c);
    }
    tmpi_shards_close(&c);
    MPI_Finalize();
    return c.rank == 0 ? tdm_cli_close_stdout(C, rc ? 1 : 0) : (rc ? 1 : 0);
}
