/* `tandem import` and `tandem export`: CIFF and PISA binary collections to
 * and from the index format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "import/ciff.h"
#include "import/pisa.h"
#include "tandem.h"

static const char *const pisa_exts[] = {".docs",  ".freqs",     ".sizes",
                                        ".terms", ".documents", ".analyzer"};

/* The output check before anything is opened: `out` (or, for a PISA output,
 * each of the six files of basename `pisa_out`) must be replaceable and
 * not the input: a file, or for --from/--to pisa, the six files of basename
 * `in`. */
static int check_output(const char *cmd, const char *opt, const char *out, const char *kind,
                        const char *in, const char *pisa_out)
{
    char *paths[6] = {0}, *outs[6] = {0};
    const char *inputs[7] = {in};
    size_t n = 1, nouts = 0;
    int rc = 0;
    for (int k = 0; k < 6 && !strcmp(kind, "pisa"); k++) {
        size_t len = strlen(in) + 16;
        if ((paths[k] = malloc(len)))
            snprintf(paths[k], len, "%s%s", in, pisa_exts[k]);
        inputs[n++] = paths[k];
    }
    for (int k = 0; k < 6 && pisa_out; k++) {
        size_t len = strlen(pisa_out) + 16;
        if ((outs[k] = malloc(len)))
            snprintf(outs[k], len, "%s%s", pisa_out, pisa_exts[k]);
        nouts++;
    }
    if (!pisa_out)
        rc = tdm_cli_output(cmd, opt, out, 0, inputs, n, NULL);
    else if (!*pisa_out || !strcmp(pisa_out, "-"))
        rc = tdm_cli_output(cmd, opt, pisa_out, 0, inputs, n, NULL);
    for (size_t k = 0; rc == 0 && k < nouts; k++)
        rc = outs[k] ? tdm_cli_output(cmd, opt, outs[k], 0, inputs, n, NULL)
                     : tdm_cli_fail(cmd, "out of memory");
    for (int k = 0; k < 6; k++) {
        free(paths[k]);
        free(outs[k]);
    }
    return rc; /* an exit status: tdm_cli_output's, or 1 */
}

static void import_usage(FILE *f)
{
    fprintf(f, "usage: tandem import --from ciff|pisa INPUT -o INDEX [options]\n"
               "  INPUT: a .ciff file, or the basename of BASE.docs/.freqs/.sizes/.terms\n"
               "         (and, if present, BASE.documents) for pisa\n"
               "  --stemmer LANG|none the index's stemmer (default: the one a tandem\n"
               "                      export carried, else unknown: see README)\n"
               "  --stopwords lucene|snowball|none|FILE   its stopwords (default: carried)\n"
               "  --codec NAME        list codec (default bp128)\n"
               "  --k1 X --b X        BM25 of the block-max bounds (1.2, 0.75)\n"
               "  --impact            the frequencies are impacts (a learned sparse export):\n"
               "                      an impact index, BM25 refused (docs/LEARNED_SPARSE.md)\n"
               "  --quiet             no progress on a terminal\n");
}

/* Redraws one progress line (only called when stderr is a terminal). */
static int progress_line(void *user, const tdm_index_import_progress *p)
{
    (void)user;
    fprintf(stderr, "\r%llu / %llu lists, %.1f s ", (unsigned long long)p->lists_done,
            (unsigned long long)p->lists_total, p->seconds);
    if (p->lists_done == p->lists_total)
        fputc('\n', stderr);
    return 0; /* go on */
}

static int run_import(const char *in, const char *out, tdm_index_import_options *o, int quiet)
{
    double t0 = tdm_cli_now();
    if (!quiet && isatty(2))
        o->progress = progress_line;
    int rc = tdm_index_import(in, out, o);
    if (rc != TDM_OK) {
        tdm_cli_fail("import", "%s", tdm_last_error());
        return tdm_cli_status(rc); /* 2 for an option the library refused */
    }
    if (o->empty_lists)
        fprintf(stderr, "tandem import: %s: skipped %llu postings lists with no postings\n", in,
                (unsigned long long)o->empty_lists);
    tdm_index *ix = NULL;
    tdm_index_stats st;
    if (tdm_index_open(out, &ix) == TDM_OK && tdm_index_stats_get(ix, &st) == TDM_OK) {
        printf("%s: %llu documents, %llu terms, %llu postings (codec %s; stemmer %s, %u "
               "stopwords) in %.2f s\n", out, (unsigned long long)st.documents,
               (unsigned long long)st.terms, (unsigned long long)st.postings, st.codec,
               st.stemmer, st.stopwords, tdm_cli_now() - t0);
        if (!strcmp(st.stemmer, "unknown"))
            fprintf(stderr, "tandem import: %s carries no analyzer: queries will not be "
                            "stemmed or stopped; give the one its terms were made with "
                            "(--stemmer, --stopwords)\n", in);
    }
    tdm_index_close(ix);
    return 0;
}

int tdm_cmd_import(int argc, char **argv)
{
    tdm_index_import_options o;
    tdm_index_import_options_init(&o);
    const char *from = NULL, *in = NULL, *out = NULL, *v;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            import_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--impact")) {
            o.impact = 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--from"))) {
            from = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--codec"))) {
            o.codec = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--stemmer"))) {
            o.stemmer = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--stopwords"))) {
            o.stopwords = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--k1"))) {
            if (tdm_cli_real("import", "--k1", v, 0, 0, TDM_CLI_MAX_K1, &o.k1))
                return TDM_CLI_EXIT_USAGE;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--b"))) {
            if (tdm_cli_real("import", "--b", v, 0, 0, 1, &o.b))
                return TDM_CLI_EXIT_USAGE;
        } else if ((argv[i][0] == '-' && argv[i][1]) || in) {
            import_usage(stderr);
            return tdm_cli_usage("import", "unexpected argument '%s'", argv[i]);
        } else {
            in = argv[i];
        }
    }
    if (!from || (strcmp(from, "ciff") && strcmp(from, "pisa")) || !in || !out) {
        import_usage(stderr);
        return tdm_cli_usage("import", "need --from ciff|pisa, INPUT and -o INDEX");
    }
    int bad = check_output("import", "-o", out, from, in, NULL);
    if (bad)
        return bad;
    o.format = !strcmp(from, "ciff") ? TDM_IMPORT_CIFF : TDM_IMPORT_PISA;
    return run_import(in, out, &o, quiet);
}

static void export_usage(FILE *f)
{
    fprintf(f, "usage: tandem export --to ciff|pisa INDEX -o OUTPUT\n"
               "  OUTPUT: a .ciff file, or for pisa the basename of the six files\n"
               "          OUTPUT.docs/.freqs/.sizes/.terms/.documents/.analyzer\n"
               "  --description TEXT  the CIFF header's description (a line naming the\n"
               "                      stemmer and stopwords follows it)\n");
}

int tdm_cmd_export(int argc, char **argv)
{
    const char *to = NULL, *in = NULL, *out = NULL, *desc = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            export_usage(stdout);
            return 0;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--to"))) {
            to = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--description"))) {
            desc = v;
        } else if ((argv[i][0] == '-' && argv[i][1]) || in) {
            export_usage(stderr);
            return tdm_cli_usage("export", "unexpected argument '%s'", argv[i]);
        } else {
            in = argv[i];
        }
    }
    if (!to || (strcmp(to, "ciff") && strcmp(to, "pisa")) || !in || !out) {
        export_usage(stderr);
        return tdm_cli_usage("export", "need --to ciff|pisa, INDEX and -o OUTPUT");
    }
    int bad = check_output("export", "-o", out, "index", in, !strcmp(to, "pisa") ? out : NULL);
    if (bad)
        return bad;
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    double t0 = tdm_cli_now();
    int rc = tdm_ireader_open(in, &r, &err);
    if (rc == TDM_OK)
        rc = !strcmp(to, "ciff") ? tdm_ciff_export(r, out, desc, &err)
                                 : tdm_pisa_export(r, out, &err);
    if (rc == TDM_OK)
        printf("%s: %llu documents, %llu terms exported as %s in %.2f s\n", out,
               (unsigned long long)tdm_ireader_info_get(r)->ndocs,
               (unsigned long long)tdm_ireader_info_get(r)->nterms, to, tdm_cli_now() - t0);
    else
        tdm_cli_fail("export", "%s", tdm_err_msg(&err));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : 1;
}
