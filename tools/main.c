/* `tandem`: the command-line front end. Dispatches to one function per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/cleanup.h"
#include "runtime/settings.h"
#include "tandem.h"

#ifndef TANDEM_HAVE_MICROHTTPD
/* Built without libmicrohttpd: `tandem serve` says so. */
int tdm_cmd_serve(int argc, char **argv)
{
    (void)argc, (void)argv;
    return tdm_cli_fail("serve", "not built: libmicrohttpd was missing when tandem was built "
                                 "(apt-get install libmicrohttpd-dev, then rebuild)");
}
#define SERVE_SUMMARY "(not built: needs libmicrohttpd) a search service over HTTP"
#else
#define SERVE_SUMMARY "a search service over HTTP (JSON; /search, /search/batch, /metrics)"
#endif

static const tdm_cli_command commands[] = {
    {"devices", tdm_cmd_devices, "list OpenCL platforms and devices (--json for JSON)"},
    {"selfcheck", tdm_cmd_selfcheck, "build the kernels and check one on every device"},
    {"build", tdm_cmd_build, "build an index from text (lines, TREC, SMART, JSONL; gzip ok)"},
    {"stats", tdm_cmd_stats, "documents, terms, postings, bytes per posting (--verify)"},
    {"shard", tdm_cmd_shard, "split an index by docid range into shards that score as the whole"},
    {"lookup", tdm_cmd_lookup, "df, cf and the first postings of a term"},
    {"terms", tdm_cmd_terms, "the terms of an index with df and cf (--top N, --prefix P)"},
    {"bench", tdm_cmd_bench, "benchmarks: 'bench codecs' (decoding), 'bench queries' (latency), 'bench load' (Poisson arrivals per policy)"},
    {"import", tdm_cmd_import, "CIFF or PISA binary collection to an index"},
    {"export", tdm_cmd_export, "an index to CIFF or a PISA binary collection"},
    {"gen", tdm_cmd_gen, "synthetic collections (Zipf) and lists (uniform, clustered)"},
    {"search", tdm_cmd_search, "the top k documents of one query (text) on a device (--json)"},
    {"run", tdm_cmd_run, "every query of a file to a TREC run (id:text, TSV, TREC, SMART, JSONL)"},
    {"serve", tdm_cmd_serve, SERVE_SUMMARY},
    {"eval", tdm_cmd_eval, "MAP, P@10, nDCG@10, recall@1000, MRR@10 of a TREC run (trec_eval's)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: tandem <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "version", "print the library version");
    fputs("\nENVIRONMENT (read once when a command opens the OpenCL engine; an invalid\n"
          "value is an error naming the variable; each is also a tdm_engine_options field)\n"
          "  TANDEM_DEVICES     devices to use: comma-separated all, gpu, cpu, accelerator,\n"
          "                     indices from 'tandem devices', or name substrings (all)\n"
          "  TANDEM_CACHE_DIR   kernel binary cache directory ($XDG_CACHE_HOME/tandem, else\n"
          "                     $HOME/.cache/tandem)\n"
          "  TANDEM_POLICY      cpu-only, gpu-only, best, hybrid or direct (hybrid;\n"
          "                     docs/SCHED.md)\n"
          "'tandem --help-env' lists every variable, tuning and A/B switches included\n"
          "(docs/SETTINGS.md).\n"
          "\nEXIT STATUS (every command)\n"
          "  0  success\n"
          "  1  a failure: a file that cannot be read or written, a malformed input, a\n"
          "     failed search, a benchmark's answers that differ from the oracle's\n"
          "  2  a usage error: an unknown option, a missing or extra argument, a value\n"
          "     the option does not take\n"
          "\n'tandem <command> --help' describes a command.\n",
          f);
}

/* Prints `text` from column `indent` (the cursor at column `col`), words
 * wrapped before column 79. */
static void wrap(const char *text, int indent, int col)
{
    while (*text) {
        size_t w = strcspn(text, " ");
        if (col > indent && col + 1 + (int)w > 79) {
            printf("\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)w, text);
        col += (int)w;
        text += w;
        text += strspn(text, " ");
    }
    putchar('\n');
}

/* Every TANDEM_* variable the library reads, from settings.c's table, by
 * group, each once. */
static void usage_env(void)
{
    static const char *const groups[][2] = {
        {"engine", "the engine (most also tdm_engine_options fields, tandem.h)"},
        {"scheduling", "scheduling of searches (docs/SCHED.md; also options)"},
        {"tuning", "tuning and A/B measurement (environment only; docs/SEARCH.md)"},
        {"testing", "test switches"},
    };
    size_t n;
    const tdm_settings_var *v = tdm_settings_vars(&n);
    printf("tandem reads these variables once, when a command opens the OpenCL engine;\n"
           "an empty one counts as unset, an invalid one is an error naming it.\n");
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        printf("\n%s:\n", groups[g][1]);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(v[i].group, groups[g][0])) {
                printf("  %s\n    ", v[i].name);
                wrap(v[i].help, 4, 4);
            }
    }
}

int main(int argc, char **argv)
{
    tdm_cleanup_on_signals();   /* interrupted builds remove their temporary files */
    tdm_cli_std_fds();
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return tdm_cli_close_stdout("help", argc < 2 ? 2 : 0);
    }
    if (!strcmp(argv[1], "--help-env")) {
        if (argc > 2)
            return tdm_cli_usage("--help-env", "unexpected argument '%s'", argv[2]);
        usage_env();
        return tdm_cli_close_stdout("help", 0);
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        if (argc > 2)
            return tdm_cli_usage("version", "unexpected argument '%s'", argv[2]);
        printf("tandem %s\n", tdm_version());
        return tdm_cli_close_stdout("version", 0);
    }
    /* Every command's stdout is checked at the end: output that did not
     * reach it (a full disk, a closed descriptor) is an error. */
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name))
            return tdm_cli_close_stdout(commands[i].name,
                                        commands[i].run(argc - 1, argv + 1));
    fprintf(stderr, "tandem: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
