/* libFuzzer target: searching a damaged index on the engine's devices
 * (PoCL where there is no GPU). Each input is an index file, opened as it
 * is and once more with every checksum recomputed (forged), so that
 * mutations get past the checksums into the structural checks, the list
 * views, the host paths and the kernels; each that opens is searched with
 * every algorithm and variant (queries of its first, longest and last
 * lists). Nothing may crash or read out of bounds: ASan and UBSan watch
 * the host, and a kernel's wild access crashes the device's worker. An
 * error is fine; issue 27 item 1. Seeds: those of fuzz_index_reader
 * (scripts/fuzz.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "common/error.h"
#include "index/format.h"
#include "index/index_priv.h"
#include "index/reader.h"
#include "tandem.h"
#include "forge.h" /* tests/forge.h */

static tdm_engine *engine;
static char path[4096];

static const int algos[] = {TDM_ALGO_OR,  TDM_ALGO_AND, TDM_ALGO_AND_OR,
                            TDM_ALGO_WAND, TDM_ALGO_BMW, TDM_ALGO_MAXSCORE};
static const int variants[] = {TDM_VARIANT_ITEM, TDM_VARIANT_GROUP, TDM_VARIANT_COMPRESSED};

/* The engine (once per process: a device's start is slow) and the file
 * each input is written to. */
static int setup(void)
{
    if (engine)
        return 1;
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/fuzz_search.%d.idx", dir && *dir ? dir : "/tmp",
             (int)getpid());
    if (tdm_engine_open(NULL, &engine) != TDM_OK) {
        fprintf(stderr, "fuzz_search: no engine: %s\n", tdm_last_error());
        abort();
    }
    return 1;
}

static void search_all(tdm_search *s, const tdm_ireader *r)
{
    uint64_t nt = tdm_ireader_info_get(r)->nterms, longest = 0;
    uint32_t best = 0;
    for (uint64_t i = 0; i < nt; i++) {
        uint32_t df = 0;
        tdm_ireader_term(r, i, NULL, &df, NULL);
        if (df > best) {
            best = df;
            longest = i;
        }
    }
    if (!nt)
        return;
    tdm_search_term q[3][3] = {{{NULL, longest, 1.0}},
                               {{NULL, 0, 1.0}, {NULL, longest, 2.0}, {NULL, nt - 1, 1.0}},
                               {{NULL, nt - 1, 1.0}, {NULL, nt / 2, 1.0}}};
    size_t nq[3] = {1, 3, 2};
    for (size_t k = 0; k < 3; k++)
        for (size_t a = 0; a < sizeof algos / sizeof *algos; a++)
            for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
                tdm_search_options o;
                tdm_search_options_init(&o);
                o.algorithm = algos[a];
                o.variant = variants[v];
                o.k = k == 0 ? 1000 : 10; /* every block of the longest list */
                tdm_search_result *res = NULL;
                if (tdm_search_terms(s, q[k], nq[k], &o, &res) == TDM_OK) {
                    for (size_t i = 0; i < res->n; i++)
                        if (!res->hits[i].name)
                            abort(); /* a docid past the last document */
                    tdm_search_result_free(res);
                }
            }
}

static void exercise(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
        fprintf(stderr, "fuzz_search: cannot write %s\n", path);
        abort();
    }
    tdm_index *ix = NULL;
    if (tdm_index_open(path, &ix) != TDM_OK)
        return;
    tdm_search *s = NULL;
    if (tdm_search_open(engine, ix, &s) == TDM_OK)
        search_all(s, tdm_index_ireader(ix));
    tdm_search_close(s);
    tdm_index_close(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    exercise(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    forge_sums(copy, size);
    exercise(copy, size);
    free(copy);
    /* the last error message is the thread's until the next call: free it,
     * or libFuzzer's leak check after each input counts it */
    tdm_api_enter();
    return 0;
}
