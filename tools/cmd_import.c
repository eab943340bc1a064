/* `tandem import` and `tandem export`: CIFF and PISA binary collections to
 * and from the index format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "index/ciff.h"
#include "index/pisa.h"
#include "tandem.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* --name VALUE or --name=VALUE; advances *i past what it used. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0' || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static void import_usage(FILE *f)
{
    fprintf(f, "usage: tandem import --from ciff|pisa INPUT -o INDEX [options]\n"
               "  INPUT: a .ciff file, or the basename of BASE.docs/.freqs/.sizes/.terms\n"
               "         (and, if present, BASE.documents) for pisa\n"
               "  --codec NAME        list codec (default raw)\n"
               "  --k1 X --b X        BM25 of the block-max bounds (1.2, 0.75)\n");
}

static int run_import(const char *from, const char *in, const char *out,
                      const tdm_iwriter_options *o)
{
    tdm_err err = {0};
    double t0 = now();
    int rc = !strcmp(from, "ciff") ? tdm_ciff_import(in, out, o, &err)
                                   : tdm_pisa_import(in, out, o, &err);
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
               (unsigned long long)i->npostings, i->codec, now() - t0);
        tdm_ireader_close(r);
    }
    tdm_err_clear(&err);
    return 0;
}

int tdm_cmd_import(int argc, char **argv)
{
    tdm_iwriter_options o = {0};
    const char *from = NULL, *in = NULL, *out = NULL, *v;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            import_usage(stdout);
            return 0;
        } else if ((v = opt_value(argc, argv, &i, "--from"))) {
            from = v;
        } else if ((v = opt_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = opt_value(argc, argv, &i, "--codec"))) {
            o.codec = v;
        } else if ((v = opt_value(argc, argv, &i, "--k1"))) {
            o.k1 = atof(v);
        } else if ((v = opt_value(argc, argv, &i, "--b"))) {
            o.b = atof(v);
        } else if (argv[i][0] == '-' || in) {
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
    return run_import(from, in, out, &o);
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
        } else if ((v = opt_value(argc, argv, &i, "--to"))) {
            to = v;
        } else if ((v = opt_value(argc, argv, &i, "-o"))) {
            out = v;
        } else if ((v = opt_value(argc, argv, &i, "--description"))) {
            desc = v;
        } else if (argv[i][0] == '-' || in) {
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
    tdm_err err = {0};
    tdm_ireader *r = NULL;
    double t0 = now();
    int rc = tdm_ireader_open(in, &r, &err);
    if (rc == TDM_OK)
        rc = !strcmp(to, "ciff") ? tdm_ciff_export(r, out, desc, &err)
                                 : tdm_pisa_export(r, out, &err);
    if (rc == TDM_OK)
        printf("%s: %llu documents, %llu terms exported as %s in %.2f s\n", out,
               (unsigned long long)tdm_ireader_info_get(r)->ndocs,
               (unsigned long long)tdm_ireader_info_get(r)->nterms, to, now() - t0);
    else
        tdm_cli_fail("export", "%s", tdm_err_msg(&err));
    tdm_ireader_close(r);
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : 1;
}
