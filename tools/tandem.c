/* `tandem`: the command-line front end. Dispatches to one function per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/cleanup.h"
#include "tandem.h"

static const tdm_cli_command commands[] = {
    {"devices", tdm_cmd_devices, "list OpenCL platforms and devices (--json for JSON)"},
    {"selfcheck", tdm_cmd_selfcheck, "build the kernels and check one on every device"},
    {"build", tdm_cmd_build, "build an index from text (lines, TREC, SMART, JSONL; gzip ok)"},
    {"stats", tdm_cmd_stats, "documents, terms, postings, bytes per posting (--verify)"},
    {"lookup", tdm_cmd_lookup, "df, cf and the first postings of a term"},
    {"terms", tdm_cmd_terms, "the terms of an index with df and cf (--top N, --prefix P)"},
    {"bench", tdm_cmd_bench, "benchmarks: 'bench codecs' (decoding), 'bench queries' (latency), 'bench load' (Poisson arrivals per policy)"},
    {"import", tdm_cmd_import, "CIFF or PISA binary collection to an index"},
    {"export", tdm_cmd_export, "an index to CIFF or a PISA binary collection"},
    {"gen", tdm_cmd_gen, "synthetic collections (Zipf) and lists (uniform, clustered)"},
    {"search", tdm_cmd_search, "the top k documents of one query (text) on a device (--json)"},
    {"run", tdm_cmd_run, "every query of a file to a TREC run (id:text, TSV, TREC, SMART, JSONL)"},
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
          "  TANDEM_CACHE       kernel binary cache: 0/off/no, 1/on/yes (not for PoCL,\n"
          "                     which caches itself), always (on)\n"
          "  TANDEM_CACHE_DIR   cache directory ($XDG_CACHE_HOME/tandem, else\n"
          "                     $HOME/.cache/tandem)\n"
          "  TANDEM_WG_SIZE     work-group size the kernels are built for, a power of two\n"
          "                     up to 4096 (128 on GPUs, 256 elsewhere; for tuning)\n"
          "  TANDEM_NV_SHUFFLE  0: no NVIDIA warp shuffles through inline PTX (1: where\n"
          "                     the GPU supports them)\n"
          "  TANDEM_CODEC_GROUPS_PER_CU  work-groups per compute unit of the grid-stride\n"
          "                     codec kernels, 1 to 65536 (32; for tuning)\n"
          "  TANDEM_DEVICE_MEMORY  device memory an index may take on each device, bytes\n"
          "                     or a number with K, M or G (the device's; docs/CACHE.md)\n"
          "  TANDEM_LAUNCH_GUARD  off: no work-around for PoCL's kernel cache bug on PoCL\n"
          "                     CPU devices (auto; environment only; docs/SCHED.md)\n"
          "scheduling of searches (docs/SCHED.md):\n"
          "  TANDEM_POLICY      cpu-only, gpu-only, best, hybrid or direct (hybrid)\n"
          "  TANDEM_MIGRATE     Griffin's intra-query migration of ranked AND: auto, force\n"
          "                     or off (auto: under hybrid, with a GPU and a CPU lane)\n"
          "  TANDEM_DEADLINE_MS deadline that promotes a waiting query (500)\n"
          "  TANDEM_LOAD_THRESHOLD  queries in flight from which GPU lanes take batches (4)\n"
          "  TANDEM_BATCH_WINDOW_US  how long a batch lane waits for more queries (200)\n"
          "  TANDEM_LANE_SLOTS  runs at once on a lane, 1 to 8 (2)\n"
          "  TANDEM_CALIBRATE   queries a lane runs at start-up to fit its cost model (16)\n"
          "  TANDEM_LANE_KINDS  cpu or gpu per device, comma separated (for tests)\n"
          "  TANDEM_FAULT_INJECT  faults lane:build|oom|lost[@n], comma separated (tests)\n"
          "tuning and A/B measurement (environment only, read when used; docs/SEARCH.md):\n"
          "  TANDEM_SEARCH_VARIANT  item, group or compressed: the variant of every search\n"
          "                     that asks for auto (the planner's choice per device)\n"
          "  TANDEM_ZR_LAYOUT   range or interleaved: the compressed variant's scratch\n"
          "                     (range-major on CPU devices, interleaved on GPUs)\n"
          "  TANDEM_ZR_SEED     0 or 1: the compressed variant's host seed of WAND, BMW and\n"
          "                     MaxScore never or always (default: k >= 100, GPU plans,\n"
          "                     32+ ranges)\n"
          "  TANDEM_SEED        0 or 1: the seed kernels of WAND, BMW and MaxScore on decoded\n"
          "                     postings never or always (default: GPU plans, short ranges)\n"
          "  TANDEM_GPU_MIN_RLEN  shortest docid range a GPU gets (64)\n"
          "  TANDEM_GPU_ZGROUPS_PER_CU  groups of 64 ranges a GPU compute unit gets for the\n"
          "                     compressed variant, 1 to 64 (2)\n"
          "  TANDEM_DECODE_VARIANT  group or serial: the batched decode kernels (serial on\n"
          "                     CPU devices, group on GPUs)\n"
          "  TANDEM_CPU_RANGES_PER_CU  docid ranges a CPU compute unit gets, 1 to 1024\n"
          "  TANDEM_BATCH_RANGES_PER_CU  the same for batches, 1 to 65536 (GPU 1024, CPU 4)\n"
          "  TANDEM_BATCH_AND   wu: ranked AND batches by Wu's mapping at every k (above\n"
          "                     k = 128 only)\n"
          "  TANDEM_BATCH_BOUNDS  device: batches make their block bounds on the device\n"
          "  TANDEM_BATCH_QUEUE  on or off: compressed batches as a queue of ranges taken\n"
          "                     longest first by a few work-items (default: CPU devices)\n"
          "  TANDEM_BOUNDS_CACHE_MB  a search handle's cache of bounds for other k1/b (64)\n"
          "  TANDEM_STAGING     T,MB: pinned upload staging threads and chunk size\n"
          "  TANDEM_SEARCH_PROFILE  1: per-kernel and host-phase times at exit (host:\n"
          "                     host phases only)\n"
          "\n'tandem <command> --help' describes a command.\n",
          f);
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
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        if (argc > 2)
            return tdm_cli_fail("version", "unexpected argument '%s'", argv[2]);
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
