/* `tandem gen`: synthetic collections (Zipf text) and integer lists (Uniform,
 * Clustered) for benchmarks, deterministic from a seed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/fsutil.h"
#include "support/collection_gen.h"
#include "support/listgen.h"
#include "tandem.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tandem gen collection --docs N [options] -o FILE|-\n"
            "  --seed S                 random seed (default 1)\n"
            "  --format lines|jsonl|jsonvector\n"
            "                           name<TAB>text, {\"id\",\"contents\"}, or a learned sparse\n"
            "                           collection of {\"id\",\"vector\":{term: impact}} (default lines)\n"
            "  --impact                 the same as --format jsonvector: SPLADE-like distinct\n"
            "                           terms with impacts 1..255 (docs/LEARNED_SPARSE.md)\n"
            "  --vocab-from QUERYLOG    name the k-th most frequent term after the k-th most\n"
            "                           frequent word of an id:query log (jsonvector: the\n"
            "                           tokens as written of id<TAB>tokens or id:tokens lines,\n"
            "                           plain or gzip, by the queries holding them)\n"
            "  --vocab V                vocabulary size (default 10 * tokens^0.6; jsonvector\n"
            "                           30522, BERT's WordPieces; <= 2^32)\n"
            "  --zipf S                 Zipf exponent in (0, 10] (default 1.0)\n"
            "  --mean-length L          mean tokens a document, log-normal, in (0, 10^6]\n"
            "                           (default 250; jsonvector: distinct terms, 100)\n"
            "  --sigma X                log-normal shape in (0, 4] (default 0.8; jsonvector 0.5)\n"
            "  --gzip                   gzip the output (also when -o ends in .gz)\n"
            "  --threads N              threads (default: every processor; the output is\n"
            "                           the same for any)\n"
            "  --quiet                  no progress on a terminal\n"
            "       tandem gen lists --dist uniform|clustered --n N --universe U [options] -o FILE|-\n"
            "  --seed S                 random seed (default 1)\n"
            "  --format bin|text        u32 count then u32 values, little-endian (default),\n"
            "                           or one value a line\n"
            "  numbers take k/M/G suffixes or 2^P, e.g. --n 2^20 --universe 2^29 (<= 2^31)\n"
            "  build a generated collection with --stemmer none to keep names exact\n");
}

static void gen_progress(void *user, uint64_t docs, uint64_t tokens)
{
    const double *t0 = user;
    double s = tdm_cli_now() - *t0;
    fprintf(stderr, "\r%llu docs, %llu tokens, %.0f docs/s ", (unsigned long long)docs,
            (unsigned long long)tokens, s > 0 ? docs / s : 0.0);
}

/* Where the output goes: stdout for "-", else a temporary file renamed over
 * the path only when complete, so that a failure leaves an existing file as
 * it was. The path was checked (tdm_cli_output) before. */
typedef struct output {
    FILE *f;
    tdm_outfile file;
} output;

static int out_open(output *o, const char *path, int to_stdout, tdm_err *err)
{
    *o = (output){0};
    if (to_stdout) {
        o->f = stdout;
        return TDM_OK;
    }
    int rc = tdm_outfile_open(&o->file, path, err);
    o->f = o->file.f;
    return rc;
}

/* Completes the output when rc is TDM_OK, else drops it; returns the status. */
static int out_close(output *o, int rc, const char *path, tdm_err *err)
{
    if (o->f == stdout) {
        if (rc == TDM_OK && (fflush(stdout) != 0 || ferror(stdout)))
            rc = tdm_err_set(err, TDM_ERR_IO, "standard output: write: %s", strerror(errno));
        return rc;
    }
    (void)path;
    if (rc == TDM_OK)
        return tdm_outfile_commit(&o->file, err);
    tdm_outfile_abort(&o->file);
    return rc;
}

static int gen_collection_opts(int argc, char **argv, tdm_gen_options *o, const char **out,
                               int *quiet)
{
    const char *v;
    uint64_t u;
    for (int i = 1; i < argc; i++) {
        if ((v = tdm_cli_opt(argc, argv, &i, "--docs"))) {
            if (tdm_cli_uint("gen", "--docs", v, 1, UINT32_MAX, &o->ndocs))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--seed"))) {
            if (tdm_cli_uint("gen", "--seed", v, 0, UINT64_MAX, &o->seed))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--threads"))) {
            if (tdm_cli_uint("gen", "--threads", v, 1, 1024, &u))
                return -1;
            o->threads = (unsigned)u;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--vocab-from"))) {
            o->vocab_from = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--vocab"))) {
            if (tdm_cli_uint("gen", "--vocab", v, 1, TDM_GEN_MAX_VOCAB, &u))
                return -1;
            o->vocab = u;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--zipf"))) {
            if (tdm_cli_real("gen", "--zipf", v, 0, 1, TDM_GEN_MAX_ZIPF, &o->zipf_s))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--mean-length"))) {
            if (tdm_cli_real("gen", "--mean-length", v, 0, 1, TDM_GEN_MAX_MEAN_LEN, &o->mean_len))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--sigma"))) {
            if (tdm_cli_real("gen", "--sigma", v, 0, 1, TDM_GEN_MAX_SIGMA, &o->sigma))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--format"))) {
            o->format = !strcmp(v, "jsonl")        ? TDM_GEN_JSONL
                        : !strcmp(v, "lines")      ? TDM_GEN_LINES
                        : !strcmp(v, "jsonvector") ? TDM_GEN_VECTORS
                                                   : -1;
            if (o->format < 0)
                return -tdm_cli_usage("gen", "--format '%s': expected lines, jsonl or jsonvector",
                                      v);
        } else if (!strcmp(argv[i], "--impact")) {
            o->format = TDM_GEN_VECTORS;
        } else if (!strcmp(argv[i], "--gzip")) {
            o->gzip = 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            *out = v;
        } else if (!strcmp(argv[i], "--quiet")) {
            *quiet = 1;
        } else {
            return -tdm_cli_usage("gen", "collection: unknown or incomplete option '%s' (see "
                                        "--help)", argv[i]);
        }
    }
    return 0;
}

static int gen_collection(int argc, char **argv)
{
    tdm_gen_options o = {.seed = 1};
    const char *out = NULL;
    int quiet = 0, to_stdout = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    if (gen_collection_opts(argc, argv, &o, &out, &quiet))
        return TDM_CLI_EXIT_USAGE;
    if (!out || o.ndocs == 0) {
        usage(stderr);
        return tdm_cli_usage("gen", "collection needs --docs N and -o FILE (- for stdout)");
    }
    int bad = tdm_cli_output("gen", "-o", out, 1, &o.vocab_from, 1, &to_stdout);
    if (bad)
        return bad;
    size_t olen = strlen(out);
    if (!to_stdout && olen > 3 && !strcmp(out + olen - 3, ".gz"))
        o.gzip = 1;
    double t0 = tdm_cli_now();
    if (!quiet && isatty(2)) {
        o.progress = gen_progress;
        o.progress_user = &t0;
    }
    tdm_err err = {0};
    output f;
    int rc = out_open(&f, out, to_stdout, &err);
    if (rc == TDM_OK)
        rc = tdm_gen_collection(&o, f.f, to_stdout ? "standard output" : out, &err);
    if (o.progress)
        fputc('\n', stderr);
    if (f.f)
        rc = out_close(&f, rc, out, &err);
    if (rc != TDM_OK)
        tdm_cli_fail("gen", "%s", tdm_err_msg(&err));
    else if (!to_stdout)
        fprintf(stderr, "%s: %llu documents in %.1f s\n", out, (unsigned long long)o.ndocs,
                tdm_cli_now() - t0);
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : 1;
}

static int write_list(FILE *f, const uint32_t *v, size_t n, int text)
{
    if (text) {
        for (size_t i = 0; i < n; i++)
            if (fprintf(f, "%u\n", v[i]) < 0)
                return -1;
        return 0;
    }
    uint8_t b[4];
    for (size_t i = 0; i <= n; i++) {
        uint32_t x = i ? v[i - 1] : (uint32_t)n;
        b[0] = (uint8_t)x, b[1] = (uint8_t)(x >> 8), b[2] = (uint8_t)(x >> 16), b[3] = (uint8_t)(x >> 24);
        if (fwrite(b, 1, 4, f) != 4)
            return -1;
    }
    return 0;
}

static int gen_lists_opts(int argc, char **argv, uint64_t *n, uint64_t *universe,
                          uint64_t *seed, int *dist, int *text, const char **out)
{
    const char *v;
    for (int i = 1; i < argc; i++) {
        if ((v = tdm_cli_opt(argc, argv, &i, "--dist"))) {
            if ((*dist = tdm_listgen_dist_by_name(v)) < 0)
                return -tdm_cli_usage("gen", "--dist '%s': expected uniform or clustered", v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--n"))) {
            if (tdm_cli_uint("gen", "--n", v, 1, TDM_LISTGEN_MAX_UNIVERSE, n))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--universe"))) {
            if (tdm_cli_uint("gen", "--universe", v, 1, TDM_LISTGEN_MAX_UNIVERSE, universe))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--seed"))) {
            if (tdm_cli_uint("gen", "--seed", v, 0, UINT64_MAX, seed))
                return -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--format"))) {
            if (strcmp(v, "text") && strcmp(v, "bin"))
                return -tdm_cli_usage("gen", "--format '%s': expected bin or text", v);
            *text = !strcmp(v, "text");
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            *out = v;
        } else {
            return -tdm_cli_usage("gen", "lists: unknown or incomplete option '%s' (see --help)",
                                 argv[i]);
        }
    }
    return 0;
}

static int gen_lists(int argc, char **argv)
{
    uint64_t n = 0, universe = 0, seed = 1;
    const char *out = NULL;
    int dist = -1, text = 0, to_stdout = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    if (gen_lists_opts(argc, argv, &n, &universe, &seed, &dist, &text, &out))
        return TDM_CLI_EXIT_USAGE;
    if (dist < 0 || !out || n == 0 || universe == 0) {
        usage(stderr);
        return tdm_cli_usage("gen", "lists needs --dist uniform|clustered, --n N, --universe U "
                                    "and -o FILE (- for stdout)");
    }
    if (n > universe)
        return tdm_cli_usage("gen", "--n %llu exceeds --universe %llu (values are distinct)",
                             (unsigned long long)n, (unsigned long long)universe);
    int bad = tdm_cli_output("gen", "-o", out, 1, NULL, 0, &to_stdout);
    if (bad)
        return bad;
    uint32_t *vals = malloc(n * sizeof *vals);
    if (!vals)
        return tdm_cli_fail("gen", "out of memory for %llu values", (unsigned long long)n);
    double t0 = tdm_cli_now();
    tdm_err err = {0};
    output f = {0};
    int rc = tdm_listgen(dist, vals, n, (uint32_t)universe, seed);
    if (rc != TDM_OK)
        tdm_err_set(&err, rc, "%s", tdm_strerror(rc));
    else
        rc = out_open(&f, out, to_stdout, &err);
    if (rc == TDM_OK && write_list(f.f, vals, n, text))
        rc = tdm_err_set(&err, TDM_ERR_IO, "%s: write: %s", to_stdout ? "standard output" : out,
                         strerror(errno));
    if (f.f)
        rc = out_close(&f, rc, out, &err);
    free(vals);
    if (rc != TDM_OK) {
        tdm_cli_fail("gen", "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    if (!to_stdout)
        fprintf(stderr, "%s: %llu values in [0, %llu) in %.2f s\n", out, (unsigned long long)n,
                (unsigned long long)universe, tdm_cli_now() - t0);
    return 0;
}

int tdm_cmd_gen(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "collection"))
        return gen_collection(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "lists"))
        return gen_lists(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return tdm_cli_usage("gen", "say what to generate: collection or lists");
}
