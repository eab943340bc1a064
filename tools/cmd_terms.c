/* `tandem terms`: the terms of an index as stored (stemmed), with their
 * document and collection frequencies: all in lexicon order, those with a
 * prefix, or the N with the longest lists. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "index/reader.h"
#include "tandem.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tandem terms INDEX [--top N] [--prefix P]\n"
               "  prints term<TAB>df<TAB>cf for every term as stored (after the build's\n"
               "  tokenizer and stemmer), in lexicon order; --top N: the N terms with the\n"
               "  most documents, most first (ties in lexicon order); --prefix P: only\n"
               "  terms that start with P. 'tandem lookup INDEX --exact TERM' takes them.\n");
}

typedef struct entry {
    uint64_t i;
    uint32_t df;
} entry;

/* df descending, then lexicon order: the same list on every run. */
static int by_df(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->df != y->df)
        return x->df < y->df ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

static void print_term(const tdm_ireader *r, uint64_t i)
{
    size_t len;
    uint32_t df;
    uint64_t cf;
    const char *t = tdm_ireader_term(r, i, &len, &df, &cf);
    if (t)
        printf("%.*s\t%u\t%llu\n", (int)len, t, df, (unsigned long long)cf);
}

static int print_top(const tdm_ireader *r, uint64_t nterms, uint64_t top)
{
    entry *e = malloc((nterms ? nterms : 1) * sizeof *e);
    if (!e)
        return tdm_cli_fail("terms", "out of memory for %llu terms",
                            (unsigned long long)nterms);
    for (uint64_t i = 0; i < nterms; i++) {
        e[i].i = i;
        tdm_ireader_term(r, i, NULL, &e[i].df, NULL);
    }
    qsort(e, nterms, sizeof *e, by_df);
    for (uint64_t k = 0; k < nterms && k < top; k++)
        print_term(r, e[k].i);
    free(e);
    return 0;
}

int tdm_cmd_terms(int argc, char **argv)
{
    const char *path = NULL, *prefix = NULL, *v;
    uint64_t top = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--top"))) {
            if (tdm_cli_uint("terms", "--top", v, 1, UINT64_MAX, &top))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--prefix"))) {
            prefix = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tdm_cli_usage("terms", "unknown or incomplete option '%s'", argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            return tdm_cli_usage("terms", "unexpected argument '%s'", argv[i]);
        }
    }
    if (top && prefix) /* blame what is wrong: the pair, not a missing INDEX */
        return tdm_cli_usage("terms", "--top and --prefix do not combine: give one");
    if (!path) {
        usage(stderr);
        return tdm_cli_usage("terms", "need INDEX");
    }
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    if (tdm_ireader_open(path, &r, &err) != TDM_OK) {
        tdm_cli_fail("terms", "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    uint64_t n = tdm_ireader_info_get(r)->nterms;
    int rc = 0;
    if (top) {
        rc = print_top(r, n, top);
    } else {
        size_t plen = prefix ? strlen(prefix) : 0;
        for (uint64_t i = 0; i < n; i++) {
            size_t len;
            const char *t = tdm_ireader_term(r, i, &len, NULL, NULL);
            if (t && (!prefix || (len >= plen && !memcmp(t, prefix, plen))))
                print_term(r, i);
        }
    }
    tdm_ireader_close(r);
    return rc;
}
