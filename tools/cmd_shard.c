/* `tandem shard`: an index split by docid range into shards that keep the
 * whole index's docids and statistics (index/shard.h, docs/PARTITION.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/error.h"
#include "index/reader.h"
#include "index/shard.h"

static const char usage[] =
    "usage: tandem shard INDEX --shards N -o PREFIX [--threads T]\n"
    "  splits INDEX by docid range into PREFIX.0 .. PREFIX.<N-1>, cut where the\n"
    "  documents' total length crosses i/N; each shard keeps its documents'\n"
    "  global docids and the whole index's statistics (documents, average length,\n"
    "  every term's df), so its scores are the whole index's bit for bit and the\n"
    "  shards' top k merged are the whole index's ('tandem stats' on a shard says\n"
    "  which split and range it holds)\n";

int tdm_cmd_shard(int argc, char **argv)
{
    const char *path = NULL, *prefix = NULL, *v;
    uint64_t n = 0, threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--shards"))) {
            if (tdm_cli_uint("shard", "--shards", v, 1, TDM_SHARDS_MAX, &n))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--threads"))) {
            if (tdm_cli_uint("shard", "--threads", v, 1, 1024, &threads))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            prefix = v;
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            return tdm_cli_usage("shard", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!path || !prefix || !n)
        return tdm_cli_usage("shard", "%s", "usage: tandem shard INDEX --shards N -o PREFIX");
    if (!*prefix)
        return tdm_cli_usage("shard", "-o: empty output prefix");
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    double t0 = tdm_cli_now();
    int rc = tdm_ireader_open(path, &r, &err);
    if (!rc)
        rc = tdm_shard_write(r, (uint32_t)n, prefix, (unsigned)threads, &err);
    if (!rc)
        fprintf(stderr, "tandem shard: %s -> %s.0 .. %s.%llu in %.2f s\n", path, prefix, prefix,
                (unsigned long long)n - 1, tdm_cli_now() - t0);
    tdm_ireader_close(r);
    if (rc) {
        tdm_cli_fail("shard", "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    return 0;
}
