/* `tandem import` and `tandem export`: CIFF and PISA binary collections to
 * and from the index format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "index/ciff.h"
#include "index/pisa.h"
#include "tandem.h"

static const char *const pisa_exts[] = {".docs", ".freqs", ".sizes", ".terms", ".documents"};

/* The output check before anything is opened: `out` (or, for a PISA output,
 * each of the five files of basename `pisa_out`) must be replaceable and
 * not the input: a file, or for --from/--to pisa, the five files of basename
 * `in`. */
static int check_output(const char *cmd, const char *opt, const char *out, const char *kind,
                        const char *in, const char *pisa_out)
{
    char *paths[6] = {0}, *outs[5] = {0};
    const char *inputs[6] = {in};
    size_t n = 1, nouts = 0;
    int rc = 0;
    for (int k = 0; k < 5 && !strcmp(kind, "pisa"); k++) {
        size_t len = strlen(in) + 16;
        if ((paths[k] = malloc(len)))
            snprintf(paths[k], len, "%s%s", in, pisa_exts[k]);
        inputs[n++] = paths[k];
    }
    for (int k = 0; k < 5 && pisa_out; k++) {
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
    for (int k = 0; k < 5; k++) {
        free(paths[k]);
        free(outs[k]);
    }
    return rc ? 1 : 0;
}

static void import_usage(FILE *f)
{
    fprintf(f, "usage: tandem import --from ciff|pisa INPUT -o INDEX [options]\n"
               "  INPUT: a .ciff file, or the basename of BASE.docs/.freqs/.sizes/.terms\n"
               "         (and, if present, BASE.documents) for pisa\n"
               "  --codec NAME        list codec (default bp128)\n"
               "  --k1 X --b X        BM25 of the block-max bounds (1.2, 0.75)\n"
               "  --quiet             no progress on a terminal\n");
}

/* Wraps a source so that each list handed out can redraw a progress line. */
typedef struct progress {
    tdm_coll_source inner;
    double t0, last;
} progress;

static int progress_list(void *self, uint64_t i, tdm_coll_list *out, tdm_err *err)
{
    progress *p = self;
    double t = tdm_cli_now();
    if (t - p->last > 0.1 || i + 1 == p->inner.nlists) {
        p->last = t;
        fprintf(stderr, "\r%llu / %llu lists, %.1f s ", (unsigned long long)i + 1,
                (unsigned long long)p->inner.nlists, t - p->t0);
        if (i + 1 == p->inner.nlists)
            fputc('\n', stderr);
    }
    return p->inner.list(p->inner.self, i, out, err);
}

/* Opens the input as a collection source; *handle is what to close. */
static int open_source(const char *from, const char *in, void **handle, tdm_coll_source *src,
                       tdm_err *err)
{
    if (!strcmp(from, "ciff")) {
        tdm_ciff *c;
        int rc = tdm_ciff_open(in, &c, err);
        if (rc == TDM_OK) {
            *handle = c;
            tdm_ciff_source(c, src);
            if (tdm_ciff_info_get(c)->empty_lists)
                fprintf(stderr, "tandem import: %s: skipped %llu postings lists with no postings\n",
                        in, (unsigned long long)tdm_ciff_info_get(c)->empty_lists);
        }
        return rc;
    }
    tdm_pisa *p;
    int rc = tdm_pisa_open(in, &p, err);
    if (rc == TDM_OK) {
        *handle = p;
        tdm_pisa_source(p, src);
    }
    return rc;
}

static int run_import(const char *from, const char *in, const char *out,
                      const tdm_iwriter_options *o, int quiet)
{
    tdm_err err = {0};
    void *h = NULL;
    progress pr = {.t0 = tdm_cli_now()};
    int rc = open_source(from, in, &h, &pr.inner, &err);
    if (rc == TDM_OK) {
        tdm_coll_source src = pr.inner;
        if (!quiet && isatty(2)) {
            src.list = progress_list;
            src.self = &pr;
        }
        rc = tdm_collection_write(&src, out, o, &err);
    }
    if (!strcmp(from, "ciff"))
        tdm_ciff_close(h);
    else
        tdm_pisa_close(h);
    if (rc != TDM_OK) {
        tdm_cli_fail("import", "%s", tdm_err_msg(&err));
        tdm_err_clear(&err);
        return 1;
    }
    tdm_ireader *r = NULL;
    if (tdm_ireader_open(out, &r, &err) == TDM_OK) {
        const tdm_ireader_info *i = tdm_ireader_info_get(r);
        printf("%s: %llu documents, %llu terms, %llu postings (codec %s) in %.2f s\n", out,
               (unsigned long long)i->ndocs, (unsigned long long)i->nterms,
               (unsigned long long)i->npostings, i->codec, tdm_cli_now() - pr.t0);
        tdm_ireader_close(r);
    }
    tdm_err_clear(&err);
    return 0;
}

int tdm_cmd_import(int argc, char **argv)
{
    /* k1 and b as given, so that b = 0 (no length normalisation) is b = 0 */
    tdm_iwriter_options o = {.k1 = 1.2, .b = 0.75, .bm25_as_given = 1};
    const char *from = NULL, *in = NULL, *out = NULL, *v;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            import_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--from"))) {
            from = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--codec"))) {
            o.codec = v;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--k1"))) {
            if (tdm_cli_real("import", "--k1", v, 0, 0, TDM_CLI_MAX_K1, &o.k1))
                return 1;
        } else if ((v = tdm_cli_opt(argc, argv, &i, "--b"))) {
            if (tdm_cli_real("import", "--b", v, 0, 0, 1, &o.b))
                return 1;
        } else if ((argv[i][0] == '-' && argv[i][1]) || in) {
            import_usage(stderr);
            return tdm_cli_fail("import", "unexpected argument '%s'", argv[i]);
        } else {
            in = argv[i];
        }
    }
    if (!from || (strcmp(from, "ciff") && strcmp(from, "pisa")) || !in || !out) {
        import_usage(stderr);
        return tdm_cli_fail("import", "need --from ciff|pisa, INPUT and -o INDEX");
    }
    if (check_output("import", "-o", out, from, in, NULL))
        return 1;
    return run_import(from, in, out, &o, quiet);
}

static void export_usage(FILE *f)
{
    fprintf(f, "usage: tandem export --to ciff|pisa INDEX -o OUTPUT\n"
               "  OUTPUT: a .ciff file, or for pisa the basename of the five files\n"
               "          OUTPUT.docs/.freqs/.sizes/.terms/.documents\n"
               "  --description TEXT  the CIFF header's description\n");
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
            return tdm_cli_fail("export", "unexpected argument '%s'", argv[i]);
        } else {
            in = argv[i];
        }
    }
    if (!to || (strcmp(to, "ciff") && strcmp(to, "pisa")) || !in || !out) {
        export_usage(stderr);
        return tdm_cli_fail("export", "need --to ciff|pisa, INDEX and -o OUTPUT");
    }
    if (check_output("export", "-o", out, "index", in, !strcmp(to, "pisa") ? out : NULL))
        return 1;
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
