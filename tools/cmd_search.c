/* `tandem search` (one query, its top k with names and scores, the device
 * and time) over the public search API (tandem.h, tdm_search_*), and the
 * options it shares with `tandem run` (cmd_search.h, cmd_run.c). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_search.h"
#include "search_json.h"
#include "tandem.h"

int tdm_cli_search_opt(const char *cmd, int argc, char **argv, int *i, tdm_cli_sopts *s)
{
    const char *v;
    uint64_t u;
    if ((v = tdm_cli_opt(argc, argv, i, "-k")) || (v = tdm_cli_opt(argc, argv, i, "--k"))) {
        if (tdm_cli_uint(cmd, "-k", v, 1, TDM_SEARCH_K_MAX, &u))
            return -1;
        s->o.k = (uint32_t)u;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--algorithm"))) {
        if (tdm_algorithm_parse(v, &s->o.algorithm) != TDM_OK) {
            tdm_cli_fail(cmd, "--algorithm: %s", tdm_last_error());
            return -1;
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--device"))) {
        if (!strcmp(v, "auto")) {
            s->o.device = -1;
        } else {
            if (tdm_cli_uint(cmd, "--device", v, 0, 1023, &u))
                return -1;
            s->o.device = (int)u;
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--scoring"))) {
        if (!strcmp(v, "bm25"))
            s->o.scoring = TDM_SCORE_BM25;
        else if (!strcmp(v, "impact"))
            s->o.scoring = TDM_SCORE_IMPACT;
        else if (!strcmp(v, "auto"))
            s->o.scoring = TDM_SCORE_AUTO;
        else {
            tdm_cli_fail(cmd, "--scoring '%s': expected auto, bm25 or impact", v);
            return -1;
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--k1"))) {
        if (tdm_cli_real(cmd, "--k1", v, 0, 0, TDM_CLI_MAX_K1, &s->o.k1))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--b"))) {
        if (tdm_cli_real(cmd, "--b", v, 0, 0, 1, &s->o.b))
            return -1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--policy"))) {
        if (tdm_policy_parse(v, &s->o.policy) != TDM_OK) {
            tdm_cli_fail(cmd, "--policy: %s", tdm_last_error());
            return -1;
        }
    } else if ((v = tdm_cli_opt(argc, argv, i, "--variant"))) {
        static const char *const names[] = {"auto", "item", "group", "compressed"};
        int found = -1;
        for (int n = 0; n < 4; n++)
            if (!strcmp(v, names[n]))
                found = n;
        if (found < 0) {
            tdm_cli_fail(cmd, "--variant '%s': expected auto, item, group or compressed", v);
            return -1;
        }
        s->o.variant = found; /* the order of enum tdm_search_variant */
    } else if ((v = tdm_cli_opt(argc, argv, i, "--shards"))) {
        if (s->index) {
            tdm_cli_usage(cmd, "--shards %s: INDEX given already (%s); give one of them", v,
                          s->index);
            return -1;
        }
        s->index = v;
        s->shards = 1;
    } else if ((v = tdm_cli_opt(argc, argv, i, "--ranges"))) {
        if (tdm_cli_uint(cmd, "--ranges", v, 1, UINT32_MAX, &u))
            return -1;
        s->o.ranges = (uint32_t)u;
    } else {
        return 0;
    }
    return 1;
}

const char tdm_cli_search_help[] =
    "  -k N             results wanted, 1..10000 (default 10)\n"
    "  --algorithm A    auto (default), or, and, and_or, wand, bmw, maxscore: all exact\n"
    "  --device D       an engine device index ('tandem devices'), or auto\n"
    "  --scoring S      auto (default: impact on an impact index, else bm25), bm25,\n"
    "                   or impact (frequencies taken as impacts, on purpose)\n"
    "  --k1 X --b X     BM25 parameters (1.2, 0.75); any values stay exact\n"
    "  --ranges N       docid ranges a device splits the work into (planner's choice)\n"
    "  --variant V      auto (default), item, group or compressed (docs/SEARCH.md)\n"
    "  --policy P       which device answers: hybrid, best, cpu-only, gpu-only, direct\n"
    "                   (default: TANDEM_POLICY, else hybrid; docs/SCHED.md)\n"
    "  --shards PREFIX  in place of INDEX: the shards PREFIX.0 .. PREFIX.<N-1> of one\n"
    "                   split ('tandem shard') searched as one index, the same answers\n"
    "                   (spread over the devices; docs/PARTITION.md)\n"
    "The devices are TANDEM_DEVICES's ('tandem --help').\n";

int tdm_cli_index_open(const tdm_cli_sopts *s, tdm_index **ix)
{
    return s->shards ? tdm_index_open_split(s->index, ix) : tdm_index_open(s->index, ix);
}

int tdm_cli_search_open(const char *cmd, const tdm_cli_sopts *s, tdm_engine **e, tdm_index **ix,
                        tdm_search **sh)
{
    *e = NULL;
    *ix = NULL;
    *sh = NULL;
    if (tdm_cli_index_open(s, ix) != TDM_OK)
        return tdm_cli_fail(cmd, "%s", tdm_last_error());
    if (tdm_engine_open(NULL, e) != TDM_OK)
        return tdm_cli_fail(cmd, "%s", tdm_last_error());
    if (tdm_search_open(*e, *ix, sh) != TDM_OK)
        return tdm_cli_fail(cmd, "%s", tdm_last_error());
    return 0;
}

void tdm_cli_search_close(tdm_engine *e, tdm_index *ix, tdm_search *s)
{
    tdm_search_close(s);
    tdm_engine_close(e);
    tdm_index_close(ix);
}

static const char *device_name(tdm_engine *e, int d, tdm_device_info *info)
{
    if (d < 0 || tdm_engine_device_info_get(e, d, info) != TDM_OK)
        return "none";
    return info->name;
}

static const char *policy_name(int p)
{
    const char *n = tdm_policy_name(p);
    return n ? n : "none";
}

/* The scheduler's account of r, for the line on stderr. */
static void print_sched(const tdm_search_result *r)
{
    fprintf(stderr, "; policy %s, queued %.3f ms", policy_name(r->policy),
            r->queue_seconds * 1e3);
    if (r->predicted_seconds > 0)
        fprintf(stderr, ", predicted %.3f ms", r->predicted_seconds * 1e3);
    if (r->batch > 1)
        fprintf(stderr, ", in a batch of %u", r->batch);
    if (r->handovers)
        fprintf(stderr, ", handed over %u time%s", r->handovers, r->handovers == 1 ? "" : "s");
}

/* The result as search_json.c writes it, the same bytes `tandem serve`
 * answers; 0, or 1 after a message when out of memory. */
static int print_json(tdm_engine *e, const char *text, const tdm_search_result *r)
{
    json_t *j = tdm_cli_result_json(e, text, r);
    size_t len;
    char *s = j ? tdm_cli_json_dump(j, &len) : NULL;
    json_decref(j);
    if (!s)
        return tdm_cli_fail("search", "out of memory writing JSON");
    fwrite(s, 1, len, stdout);
    free(s);
    return 0;
}

int tdm_cmd_search(int argc, char **argv)
{
    tdm_cli_sopts s = {0};
    tdm_search_options_init(&s.o);
    const char *text = NULL;
    for (int i = 1; i < argc; i++) {
        int t;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: tandem search INDEX|--shards PREFIX \"query text\" [options]\n"
                   "  the top k documents: rank, score, name (TAB separated), then which\n"
                   "  device and algorithm answered in how long (stderr); text goes through\n"
                   "  the index's own tokenizer, stopwords and stemmer.\n%s"
                   "  --json           one JSON object on stdout instead\n",
                   tdm_cli_search_help);
            return 0;
        } else if ((t = tdm_cli_search_opt("search", argc, argv, &i, &s))) {
            if (t < 0)
                return TDM_CLI_EXIT_USAGE;
        } else if (!strcmp(argv[i], "--json")) {
            s.json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage("search", "unknown or incomplete option '%s'", argv[i]);
        } else if (!s.index) {
            s.index = argv[i];
        } else if (!text) {
            text = argv[i];
        } else {
            return tdm_cli_usage("search", "unexpected argument '%s' (quote the query)", argv[i]);
        }
    }
    if (!s.index || !text)
        return tdm_cli_usage("search", "need INDEX (or --shards PREFIX) and the query text "
                                       "('tandem search --help')");
    tdm_engine *e;
    tdm_index *ix;
    tdm_search *sh;
    int rc = tdm_cli_search_open("search", &s, &e, &ix, &sh);
    tdm_search_result *r = NULL;
    if (rc == 0 && tdm_search_text(sh, text, &s.o, &r) != TDM_OK)
        rc = tdm_cli_fail("search", "%s", tdm_last_error());
    if (rc == 0) {
        tdm_device_info info;
        if (s.json) {
            rc = print_json(e, text, r);
        } else {
            for (size_t i = 0; i < r->n; i++)
                printf("%zu\t%.6f\t%s\n", i + 1, r->hits[i].score,
                       r->hits[i].name ? r->hits[i].name : "");
            fprintf(stderr, "%zu results; %s on device %d (%s), %.3f ms", r->n,
                    tdm_algorithm_name(r->algorithm), r->device,
                    device_name(e, r->device, &info), r->seconds * 1e3);
            if (r->device >= 0)
                print_sched(r);
            fprintf(stderr, "%s\n", r->unknown ? "; some terms are not in the index" : "");
        }
        tdm_index_stats st;
        if (r->terms == 0 && r->unknown && tdm_index_stats_get(ix, &st) == TDM_OK &&
            !strcmp(st.stemmer, "unknown"))
            fprintf(stderr, "tandem search: warning: no term of the query is in %s, whose "
                            "analyzer is unknown (imported without one): its terms may be "
                            "stemmed or stopped differently; re-import it with --stemmer "
                            "and --stopwords\n", s.index);
    }
    tdm_search_result_free(r);
    tdm_cli_search_close(e, ix, sh);
    return rc;
}
