/* `tandem gen`: synthetic collections (Zipf text) and integer lists (Uniform,
 * Clustered) for benchmarks, deterministic from a seed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "codec/listgen.h"
#include "index/collection_gen.h"
#include "tandem.h"

/* A whole unsigned number with an optional k/M/G (x1000) or ^ power of two
 * ("2^25"); 0 on success. */
static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return -1;
    if (*end == '^') {
        char *e2;
        unsigned long long p = strtoull(end + 1, &e2, 10);
        if (v != 2 || p > 63 || *e2)
            return -1;
        *out = 1ull << p;
        return 0;
    }
    unsigned long long m = *end == 'k' ? 1000ull : *end == 'M' ? 1000000ull
                         : *end == 'G' ? 1000000000ull : 1ull;
    if ((m > 1 && end[1]) || (m == 1 && *end))
        return -1;
    *out = v * m;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tandem gen collection --docs N [options] -o FILE|-\n"
            "  --seed S                 random seed (default 1)\n"
            "  --format lines|jsonl     name<TAB>text or {\"id\",\"contents\"} (default lines)\n"
            "  --vocab-from QUERYLOG    name the k-th most frequent term after the k-th most\n"
            "                           frequent word of an id:query log\n"
            "  --vocab V                vocabulary size (default 10 * tokens^0.6)\n"
            "  --zipf S                 Zipf exponent (default 1.0)\n"
            "  --mean-length L          mean tokens a document, log-normal (default 250)\n"
            "  --sigma X                log-normal shape (default 0.8)\n"
            "  --quiet                  no progress on a terminal\n"
            "       tandem gen lists --dist uniform|clustered --n N --universe U [options] -o FILE|-\n"
            "  --seed S                 random seed (default 1)\n"
            "  --format bin|text        u32 count then u32 values, little-endian (default),\n"
            "                           or one value a line\n"
            "  numbers take k/M/G suffixes or 2^P, e.g. --n 2^20 --universe 2^29\n"
            "  build a generated collection with --stemmer none to keep names exact\n");
}

static void gen_progress(void *user, uint64_t docs, uint64_t tokens)
{
    const double *t0 = user;
    double s = tdm_cli_now() - *t0;
    fprintf(stderr, "\r%llu docs, %llu tokens, %.0f docs/s ", (unsigned long long)docs,
            (unsigned long long)tokens, s > 0 ? docs / s : 0.0);
}

static FILE *open_out(const char *out)
{
    return strcmp(out, "-") ? fopen(out, "wb") : stdout;
}

static int gen_collection(int argc, char **argv)
{
    tdm_gen_options o = {.seed = 1};
    const char *out = NULL, *v;
    int quiet = 0, bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--docs"))) {
            bad = parse_u64(v, &o.ndocs);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--seed"))) {
            bad = parse_u64(v, &o.seed);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--vocab-from"))) {
            o.vocab_from = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--vocab"))) {
            bad = parse_u64(v, &o.vocab);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--zipf"))) {
            o.zipf_s = atof(v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--mean-length"))) {
            o.mean_len = atof(v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--sigma"))) {
            o.sigma = atof(v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--format"))) {
            o.format = !strcmp(v, "jsonl") ? TDM_GEN_JSONL : !strcmp(v, "lines") ? TDM_GEN_LINES : -1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            out = v;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else {
            bad = 1;
        }
    }
    if (bad || !out || o.ndocs == 0 || o.format < 0) {
        usage(stderr);
        return tdm_cli_fail("gen", "need --docs N (>= 1) and -o FILE, and valid options");
    }
    FILE *f = open_out(out);
    if (!f)
        return tdm_cli_fail("gen", "%s: %s", out, strerror(errno));
    double t0 = tdm_cli_now();
    if (!quiet && isatty(2)) {
        o.progress = gen_progress;
        o.progress_user = &t0;
    }
    tdm_err err = {0};
    int rc = tdm_gen_collection(&o, f, out, &err);
    if (o.progress)
        fputc('\n', stderr);
    if (f != stdout && fclose(f) != 0 && rc == TDM_OK)
        rc = tdm_err_set(&err, TDM_ERR_IO, "%s: %s", out, strerror(errno));
    if (rc != TDM_OK)
        tdm_cli_fail("gen", "%s", tdm_err_msg(&err));
    else if (f != stdout)
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

static int gen_lists(int argc, char **argv)
{
    uint64_t n = 0, universe = 0, seed = 1;
    const char *out = NULL, *v;
    int dist = -1, text = 0, bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--dist"))) {
            dist = tdm_listgen_dist_by_name(v);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--n"))) {
            bad = parse_u64(v, &n);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--universe"))) {
            bad = parse_u64(v, &universe);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--seed"))) {
            bad = parse_u64(v, &seed);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--format"))) {
            text = !strcmp(v, "text") ? 1 : !strcmp(v, "bin") ? 0 : (bad = 1);
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            out = v;
        } else {
            bad = 1;
        }
    }
    if (bad || dist < 0 || !out || n == 0 || n > universe || universe > TDM_LISTGEN_MAX_UNIVERSE) {
        usage(stderr);
        return tdm_cli_fail("gen", "need --dist uniform|clustered, 1 <= --n <= --universe "
                                   "<= 2^31 and -o FILE");
    }
    uint32_t *vals = malloc(n * sizeof *vals);
    if (!vals)
        return tdm_cli_fail("gen", "out of memory for %llu values", (unsigned long long)n);
    double t0 = tdm_cli_now();
    int rc = tdm_listgen(dist, vals, n, (uint32_t)universe, seed);
    FILE *f = rc == TDM_OK ? open_out(out) : NULL;
    if (rc != TDM_OK || !f || write_list(f, vals, n, text) || (f != stdout && fclose(f))) {
        free(vals);
        return tdm_cli_fail("gen", "%s: %s", out, rc != TDM_OK ? tdm_strerror(rc) : strerror(errno));
    }
    if (f != stdout)
        fprintf(stderr, "%s: %llu values in [0, %llu) in %.2f s\n", out, (unsigned long long)n,
                (unsigned long long)universe, tdm_cli_now() - t0);
    free(vals);
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
    return tdm_cli_fail("gen", "say what to generate: collection or lists");
}
