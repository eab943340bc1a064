/* `tandem`: the command-line front end. Dispatches to one function per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "tandem.h"

static const tdm_cli_command commands[] = {
    {"devices", tdm_cmd_devices, "list OpenCL platforms and devices (--json for JSON)"},
    {"selfcheck", tdm_cmd_selfcheck, "build the kernels and check one on every device"},
    {"build", tdm_cmd_build, "build an index from text (lines, TREC, SMART, JSONL; gzip ok)"},
    {"stats", tdm_cmd_stats, "documents, terms, postings, bytes per posting (--verify)"},
    {"lookup", tdm_cmd_lookup, "df, cf and the first postings of a term"},
    {"bench", tdm_cmd_bench, "benchmarks: 'bench codecs' (decode speed, bits per integer)"},
    {"import", tdm_cmd_import, "CIFF or PISA binary collection to an index"},
    {"export", tdm_cmd_export, "an index to CIFF or a PISA binary collection"},
    {"gen", tdm_cmd_gen, "synthetic collections (Zipf) and lists (uniform, clustered)"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: tandem <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-10s %s\n", "version", "print the library version");
    fprintf(f, "\nenvironment: TANDEM_DEVICES (all, gpu, cpu, indices, names), "
               "TANDEM_CACHE (on, off, always), TANDEM_CACHE_DIR,\n"
               "TANDEM_WG_SIZE (work-group size the kernels are built for; tuning)\n"
               "'tandem <command> --help' describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("tandem %s\n", tdm_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tandem: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
