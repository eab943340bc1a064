/* `tandem build`: text collections to an index file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "build/parse.h"
#include "tandem.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tandem build [options] -o INDEX INPUT...\n"
            "  INPUT is a file, '-' for stdin, or a directory: every file under it\n"
            "  (recursively, in path order, names starting with '.' skipped); gzip\n"
            "  files are read transparently\n"
            "  --format auto|lines|trec|smart|jsonl|jsonvector\n"
            "                                         input format (default auto: guessed;\n"
            "                                         jsonvector: Anserini's JSON vectors of\n"
            "                                         learned sparse models, an impact index)\n"
            "  --quantize integer|scale:S|linear:B[:M]\n"
            "                                         jsonvector weights to impacts: integers\n"
            "                                         as they are (default), round(w x S), or\n"
            "                                         PISA's linear quantizer to B bits over\n"
            "                                         the largest weight M (docs/LEARNED_SPARSE.md)\n"
            "  --stemmer english|none|LANG            Snowball stemmer (default english)\n"
            "  --stopwords lucene|snowball|none|FILE  words to drop: Lucene's 33 English words\n"
            "                                         (default, as Anserini), Snowball's 174,\n"
            "                                         none, or a file (white-space separated)\n"
            "  --codec NAME                           list codec (default bp128)\n"
            "  --memory MB                            posting buffer budget (default 512;\n"
            "                                         1 .. 1048576)\n"
            "  --k1 X --b X                           BM25 of the block-max bounds (1.2, 0.75;\n"
            "                                         k1 in [0, 100], b in [0, 1])\n"
            "  --threads N                            threads (default: every processor;\n"
            "                                         1 .. 1024; the index is the same)\n"
            "  --tmp DIR                              run files (default: next to INDEX)\n"
            "  --allow-empty                          an input without documents is no error\n"
            "  --unnamed-lines                        lines format: a line without a TAB is a\n"
            "                                         document named by its position (default:\n"
            "                                         an error)\n"
            "  --quiet                                no progress bar\n");
}

static void fmt_eta(char *buf, size_t n, double s)
{
    if (s < 0 || s > 1e7)
        snprintf(buf, n, "--:--");
    else
        snprintf(buf, n, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
}

/* One line, redrawn in place with \r; only called when stderr is a terminal. */
static int progress_bar(void *user, const tdm_index_build_progress *p)
{
    (void)user;
    double rate = p->seconds > 0 ? p->documents / p->seconds : 0;
    if (p->phase == 0) {
        char eta[32] = "--:--";
        double frac = p->bytes_total ? (double)p->bytes_read / p->bytes_total : 0;
        if (frac > 0.001 && frac <= 1)
            fmt_eta(eta, sizeof eta, p->seconds / frac - p->seconds);
        int w = 24, fill = (int)(frac * w + 0.5);
        fprintf(stderr, "\r[%.*s%*s] %3.0f%% %llu docs %.0f docs/s %.1f/%.1f MB ETA %s runs %u ",
                fill > w ? w : fill, "########################", w - (fill > w ? w : fill), "",
                frac * 100, (unsigned long long)p->documents, rate, p->bytes_read / 1e6,
                p->bytes_total / 1e6, eta, p->runs);
    } else if (p->phase == 1) {
        fprintf(stderr, "\r\033[Kwriting lists: %llu", (unsigned long long)p->terms_done);
        if (p->terms_total)
            fprintf(stderr, " / %llu", (unsigned long long)p->terms_total);
        fprintf(stderr, " (%u runs) %.1f s ", p->runs, p->seconds);
    } else {
        fprintf(stderr, "\r\033[Kdone: %llu documents, %llu lists in %.1f s (%.0f docs/s)\n",
                (unsigned long long)p->documents, (unsigned long long)p->terms_done,
                p->seconds, rate);
    }
    fflush(stderr);
    return 0; /* go on */
}

/* One option at argv[*i] into o (or *out, *quiet); 0, 1 for not an option,
 * or minus the exit status after an error message. */
static int parse_opt(int argc, char **argv, int *i, tdm_index_build_options *o,
                     const char **out, int *quiet)
{
    const char *v;
    uint64_t u;
    if (!strcmp(argv[*i], "--quiet")) {
        *quiet = 1;
    } else if (!strcmp(argv[*i], "--allow-empty")) {
        o->allow_empty = 1;
    } else if (!strcmp(argv[*i], "--unnamed-lines")) {
        o->unnamed_lines = 1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--format"))) {
        o->format = tdm_format_by_name(v);
        if (o->format < 0) {
            return -tdm_cli_usage("build", "--format '%s': unknown; expected auto, lines, "
                                           "trec, smart, jsonl or jsonvector", v);
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--quantize"))) {
        o->quantize = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--stemmer"))) {
        o->stemmer = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--stopwords"))) {
        o->stopwords = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--codec"))) {
        o->codec = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--memory"))) {
        if (tdm_cli_uint("build", "--memory", v, 1, TDM_CLI_MAX_MEMORY_MB, &u))
            return -TDM_CLI_EXIT_USAGE;
        o->memory_mb = (size_t)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--threads"))) {
        if (tdm_cli_uint("build", "--threads", v, 1, 1024, &u))
            return -TDM_CLI_EXIT_USAGE;
        o->threads = (unsigned)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--k1"))) {
        if (tdm_cli_real("build", "--k1", v, 0, 0, TDM_CLI_MAX_K1, &o->k1))
            return -TDM_CLI_EXIT_USAGE;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--b"))) {
        if (tdm_cli_real("build", "--b", v, 0, 0, 1, &o->b))
            return -TDM_CLI_EXIT_USAGE;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--tmp"))) {
        struct stat st; /* now, not when the first run is written */
        if (stat(v, &st) != 0 || !S_ISDIR(st.st_mode) || access(v, W_OK | X_OK) != 0)
            return -tdm_cli_fail("build", "--tmp '%s': not a writable directory", v);
        o->tmp_dir = v;
    } else if ((v = tdm_cli_opt(argc, argv, i, "-o"))) {
        *out = v;
    } else {
        return 1;
    }
    return 0;
}

int tdm_cmd_build(int argc, char **argv)
{
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    const char *out = NULL;
    /* inputs, then the stopword file: what the output must not be */
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    size_t n = 0;
    int quiet = !isatty(2);
    if (!inputs)
        return tdm_cli_fail("build", "out of memory");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            free(inputs);
            return 0;
        }
        int r = parse_opt(argc, argv, &i, &o, &out, &quiet);
        if (r < 0) {
            free(inputs);
            return -r;
        }
        if (r == 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            free(inputs);
            usage(stderr);
            return tdm_cli_usage("build", "unknown or incomplete option '%s'", argv[i]);
        }
        inputs[n++] = argv[i];
    }
    if (!out || n == 0) {
        free(inputs);
        usage(stderr);
        return tdm_cli_usage("build", "need -o INDEX and at least one INPUT");
    }
    inputs[n] = o.stopwords;
    int bad = tdm_cli_output("build", "-o", out, 0, inputs, n + 1, NULL);
    if (bad) {
        free(inputs);
        return bad;
    }
    if (!quiet)
        o.progress = progress_bar;
    double t0 = tdm_cli_now();
    int rc = tdm_index_build(inputs, n, out, &o);
    free(inputs);
    if (rc != TDM_OK) {
        tdm_cli_fail("build", "%s: %s", tdm_strerror(rc), tdm_last_error());
        return tdm_cli_status(rc); /* 2 for an option the library refused */
    }
    /* A summary on stdout, as import and export print: a script sees what
     * it built without a terminal's progress bar. */
    tdm_index *ix = NULL;
    tdm_index_stats st;
    if (tdm_index_open(out, &ix) == TDM_OK && tdm_index_stats_get(ix, &st) == TDM_OK)
        printf("%s: %llu documents, %llu terms, %llu postings (codec %s; stemmer %s, %u "
               "stopwords) in %.2f s\n", out, (unsigned long long)st.documents,
               (unsigned long long)st.terms, (unsigned long long)st.postings, st.codec,
               st.stemmer, st.stopwords, tdm_cli_now() - t0);
    tdm_index_close(ix);
    return 0;
}
