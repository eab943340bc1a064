/* The builder's run files: merging in passes beyond the fan-in gives the same
 * index as one run; a build killed by a signal leaves nothing behind (SIGTERM,
 * with the CLI's handlers) or leftovers that the next build into the same
 * path removes (SIGKILL); an input without documents is an error unless
 * allowed; any number of threads builds the same index, and the generator
 * writes the same collection. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fsutil.h"
#include "build/build.h"
#include "support/collection_gen.h"
#include "index/writer.h"
#include "testutil.h"

/* A collection of `ndocs` lines of random words (a Zipf-like skew). */
static char *make_input(const char *dir, const char *name, int ndocs)
{
    static char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    tdm_rng r;
    tdm_rng_seed(&r, 42);
    for (int d = 0; d < ndocs; d++) {
        fprintf(f, "doc%d\t", d);
        int len = (int)tdm_rng_range(&r, 1, 40);
        for (int k = 0; k < len; k++) {
            uint32_t w = tdm_rng_range(&r, 0, 1999);
            w = w * w / 2000;   /* small ids more often */
            fprintf(f, "w%ux ", w);
        }
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
    return strdup(path);
}

/* Files in dir whose names contain `part`. */
static int count_files(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' && strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

static size_t max_runs;
static void note_runs(void *user, size_t nruns)
{
    (void)user;
    if (nruns > max_runs)
        max_runs = nruns;
}

static void build_ok(const char *in, const char *out, const tdm_build_tuning *t)
{
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    tdm_err err = {0};
    if (tdm_build_index_tuned(&in, 1, out, &o, t, &err) != TDM_OK)
        fail_msg("build %s: %s", out, tdm_err_msg(&err));
}

static void passes_equal_one_run(void **state)
{
    (void)state;
    const char *tmp = tdm_test_tmpdir("build_passes");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tmp);
    char *in = make_input(dir, "in.tsv", tdm_test_small() ? 400 : 3000);
    char one[1100], many[1100], fan[1100];
    snprintf(one, sizeof one, "%s/one.idx", dir);
    snprintf(many, sizeof many, "%s/many.idx", dir);
    snprintf(fan, sizeof fan, "%s/fan.idx", dir);
    max_runs = 0;
    build_ok(in, one, &(tdm_build_tuning){.after_run = note_runs});
    assert_int_equal(max_runs, 0);   /* everything in memory: no run */
    /* A tiny budget: a run every few documents, merged 3 at a time (several
     * passes, a group of one left over in some). */
    build_ok(in, many, &(tdm_build_tuning){.budget_bytes = 4096, .fanin = 3,
                                           .after_run = note_runs});
    assert_true(max_runs > 3 * 3 * 3);
    tdm_test_same_file(one, many);
    /* The default fan-in, exceeded. */
    max_runs = 0;
    build_ok(in, fan, &(tdm_build_tuning){.budget_bytes = 2048, .after_run = note_runs});
    assert_true(max_runs > TDM_BUILD_FANIN);
    tdm_test_same_file(one, fan);
    assert_int_equal(count_files(dir, ".run"), 0);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    free(in);
}

/* The child: a build that kills itself with `sig` after its 5th run. */
static void die_after_five(void *user, size_t nruns)
{
    if (nruns == 5)
        raise(*(int *)user);
}

static pid_t killed_build(const char *in, const char *out, const char *tmp_dir, int sig)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tdm_cleanup_on_signals();
        tdm_index_build_options o;
        tdm_index_build_options_init(&o);
        o.tmp_dir = tmp_dir;
        tdm_build_tuning t = {.budget_bytes = 4096, .after_run = die_after_five, .user = &sig};
        tdm_err err = {0};
        tdm_build_index_tuned(&in, 1, out, &o, &t, &err);
        _exit(3);   /* not reached: the signal ends the build */
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), sig);
    return pid;
}

static void sigterm_leaves_nothing(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("build_sigterm"));
    char *in = make_input(dir, "in.tsv", 600);
    char out[1100];
    snprintf(out, sizeof out, "%s/out.idx", dir);
    killed_build(in, out, NULL, SIGTERM);
    assert_int_equal(count_files(dir, "out.idx"), 0);   /* no run, no temp index */
    assert_int_equal(count_files(dir, ""), 1);          /* the input only */
    killed_build(in, out, NULL, SIGINT);
    assert_int_equal(count_files(dir, ""), 1);
    free(in);
}

static void sigkill_leftovers_removed_by_next_build(void **state)
{
    (void)state;
    char dir[1024], runs[1100], out[1100], path[1200];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("build_sigkill"));
    snprintf(runs, sizeof runs, "%s/runs", dir);
    assert_int_equal(mkdir(runs, 0700), 0);
    char *in = make_input(dir, "in.tsv", 600);
    snprintf(out, sizeof out, "%s/out.idx", dir);
    /* SIGKILL cannot be caught: the files stay, named with the dead PID. */
    pid_t pid = killed_build(in, out, runs, SIGKILL);
    assert_int_equal(count_files(runs, "out.idx.run"), 5);
    snprintf(path, sizeof path, "out.idx.tmp.%ld.", (long)pid);
    assert_int_equal(count_files(dir, path), 1);
    /* What is not a dead build's stays: a live PID's files (PID 1 always
     * lives), names of another shape (older tandems' among them: without the
     * random tag a name is not surely ours) and tags of the wrong length or
     * alphabet. */
    static const char *const keep[] = {
        "out.idx.run0.tmp.1.abcdefghijkl", "out.idx.tmp.1.0123456789ab", "out.idx.notes",
        "out.idx.run0.99999999", "out.idx.tmp.99999999", "out.idx.tmp.99999999.7",
        "out.idx.tmp.99999999.ABCDEFGHIJKL", "out.idx.tmp.99999999.abcdefghijk",
        "out.idx.tmp.99999999.abcdefghijklm", "out.idx.run.tmp.99999999.abcdefghijkl",
        "other.idx.tmp.99999999.abcdefghijkl"};
    size_t nkeep = sizeof keep / sizeof *keep;
    for (size_t k = 0; k < nkeep; k++) {
        snprintf(path, sizeof path, "%s/%s", runs, keep[k]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
    }
    /* The next build into the same path (same run directory) cleans up. */
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.tmp_dir = runs;
    tdm_err err = {0};
    if (tdm_build_index((const char *const *)&in, 1, out, &o, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    snprintf(path, sizeof path, ".%ld.", (long)pid);
    assert_int_equal(count_files(runs, path), 0);
    assert_int_equal(count_files(dir, path), 0);
    assert_int_equal(count_files(runs, ""), (int)nkeep);
    assert_int_equal(count_files(dir, "out.idx"), 1);
    /* And tdm_cleanup_stale says what it removed; a link of the right shape
     * stays (and so does what it points to). */
    static const char *const dead[] = {"x.run3.tmp", "x.tmp"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s.%ld.0123456789az", dir, dead[k], (long)pid);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
    }
    char first[1200], link[1200];
    snprintf(link, sizeof link, "%s/x.tmp.%ld.zzzzzzzzzzzz", dir, (long)pid);
    assert_int_equal(symlink(in, link), 0);
    snprintf(path, sizeof path, "%s/x", dir);
    assert_int_equal(tdm_cleanup_stale(path, first, sizeof first), 2);
    assert_non_null(strstr(first, "/x."));
    assert_int_equal(count_files(dir, "x."), 1);
    assert_int_equal(unlink(link), 0);
    assert_int_equal(access(in, R_OK), 0);
    free(in);
}

static void empty_input(void **state)
{
    (void)state;
    char dir[1024], in[1100], out[1100];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("build_empty"));
    snprintf(in, sizeof in, "%s/empty.txt", dir);
    snprintf(out, sizeof out, "%s/e.idx", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fclose(f);
    const char *inputs[] = {in};
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    assert_int_equal(tdm_index_build(inputs, 1, out, &o), TDM_ERR_FORMAT);
    assert_non_null(strstr(tdm_last_error(), "empty.txt"));
    assert_non_null(strstr(tdm_last_error(), "empty input"));
    assert_int_equal(count_files(dir, "e.idx"), 0);
    o.allow_empty = 1;
    assert_int_equal(tdm_index_build(inputs, 1, out, &o), TDM_OK);
    assert_int_equal(count_files(dir, "e.idx"), 1);
}


/* ---- threads: the same index byte for byte for any thread count */

static void build_threads(const char *const *in, size_t nin, const char *out, unsigned threads,
                          const char *stemmer, const char *stops, size_t budget, size_t fanin)
{
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.threads = threads;
    o.stemmer = stemmer;
    o.stopwords = stops;
    tdm_build_tuning t = {.budget_bytes = budget, .fanin = fanin, .after_run = note_runs};
    tdm_err err = {0};
    if (tdm_build_index_tuned(in, nin, out, &o, &t, &err) != TDM_OK)
        fail_msg("build %s with %u threads: %s", out, threads, tdm_err_msg(&err));
}

/* Several collections (random words; Zipf text with english stemming and
 * stopwords; two inputs, one of them JSON lines with empty documents), each
 * built with 1, 2, 4 and 7 threads under a small budget (several chunks,
 * several runs, merge passes at fan-in 3) and with the default budget. */
static void threads_same_index(void **state)
{
    (void)state;
    const char *tmp = tdm_test_tmpdir("build_threads");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tmp);
    int small = tdm_test_small();
    char *words = make_input(dir, "words.tsv", small ? 3000 : 40000);
    char zipf[1100], json[1100], stops[1100];
    snprintf(zipf, sizeof zipf, "%s/zipf.tsv", dir);
    snprintf(json, sizeof json, "%s/docs.jsonl", dir);
    snprintf(stops, sizeof stops, "%s/stops.txt", dir);
    tdm_gen_options g = {.ndocs = small ? 1500 : 12000, .seed = 5, .mean_len = 60, .threads = 3};
    FILE *f = fopen(zipf, "w");
    tdm_err err = {0};
    assert_int_equal(tdm_gen_collection(&g, f, zipf, &err), TDM_OK);
    assert_int_equal(fclose(f), 0);
    f = fopen(json, "w");
    for (int d = 0; d < 500; d++)
        fprintf(f, "{\"id\": \"j%d\", \"contents\": \"%s\"}\n", d,
                d % 7 == 0 ? "" : d % 2 ? "Running runners ran the RUN" : "the aaa of bbb");
    assert_int_equal(fclose(f), 0);
    f = fopen(stops, "w");
    fputs("the\nof\nand\n", f);
    assert_int_equal(fclose(f), 0);
    struct { const char *in[2]; size_t n; const char *stem, *stops; } cases[] = {
        {{words}, 1, "none", NULL},
        {{zipf}, 1, "english", stops},
        {{json, zipf}, 2, "porter", stops},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char ref[1100], out[1100];
        snprintf(ref, sizeof ref, "%s/ref%zu.idx", dir, c);
        build_threads(cases[c].in, cases[c].n, ref, 1, cases[c].stem, cases[c].stops, 0, 0);
        unsigned threads[] = {1, 2, 4, 7};
        for (size_t k = 0; k < 4; k++) {
            snprintf(out, sizeof out, "%s/t%u.idx", dir, threads[k]);
            max_runs = 0;
            /* 2 MB a thread: the least that keeps all of them (build.h) */
            build_threads(cases[c].in, cases[c].n, out, threads[k], cases[c].stem,
                          cases[c].stops, (size_t)threads[k] * TDM_BUILD_THREAD_MIN, 3);
            if (!small && c != 2)
                assert_true(max_runs > 3);   /* several runs, merge passes */
            tdm_test_same_file(ref, out);
            build_threads(cases[c].in, cases[c].n, out, threads[k], cases[c].stem,
                          cases[c].stops, 0, 0);
            tdm_test_same_file(ref, out);
        }
    }
    assert_int_equal(count_files(dir, ".run"), 0);
    assert_int_equal(count_files(dir, ".tmp."), 0);
    free(words);
}

/* The generator writes the same bytes for any thread count. */
static void gen_threads_same_bytes(void **state)
{
    (void)state;
    const char *tmp = tdm_test_tmpdir("gen_threads");
    unsigned char *ref = NULL;
    size_t nref = 0;
    unsigned threads[] = {1, 2, 3, 8};
    for (size_t k = 0; k < 4; k++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/g%u.txt", tmp, threads[k]);
        tdm_gen_options g = {.ndocs = 5000, .seed = 11, .mean_len = 30,
                             .threads = threads[k]};
        FILE *f = fopen(path, "w");
        tdm_err err = {0};
        assert_int_equal(tdm_gen_collection(&g, f, path, &err), TDM_OK);
        assert_int_equal(fclose(f), 0);
        size_t n;
        unsigned char *x = tdm_read_file(path, &n);
        assert_non_null(x);
        if (!ref) {
            ref = x;
            nref = n;
            continue;
        }
        assert_int_equal(n, nref);
        assert_memory_equal(x, ref, n);
        free(x);
    }
    free(ref);
}

/* tdm_iwriter_add_lists: the first bad list fails as tdm_iwriter_add_list
 * would (out of order, docid beyond the documents), after the good ones. */
static void add_lists_errors(void **state)
{
    (void)state;
    const char *tmp = tdm_test_tmpdir("add_lists");
    char path[1100];
    snprintf(path, sizeof path, "%s/x.idx", tmp);
    uint32_t docs[] = {0, 1, 2}, tfs[] = {1, 2, 3}, bad[] = {0, 9};
    tdm_iw_list order[] = {{"b", 1, docs, tfs, 3}, {"c", 1, docs, tfs, 2}, {"a", 1, docs, tfs, 1}};
    tdm_iw_list range[] = {{"a", 1, docs, tfs, 3}, {"b", 1, bad, tfs, 2}};
    for (int k = 0; k < 2; k++) {
        tdm_iwriter *w;
        tdm_err err = {0};
        assert_int_equal(tdm_iwriter_open(path, NULL, &w, &err), TDM_OK);
        assert_int_equal(tdm_iwriter_set_docs(w, 3, (uint32_t[]){5, 6, 7}, NULL, &err), TDM_OK);
        int rc = k == 0 ? tdm_iwriter_add_lists(w, order, 3, 3, &err)
                        : tdm_iwriter_add_lists(w, range, 2, 2, &err);
        assert_int_equal(rc, TDM_ERR_INVALID_ARG);
        assert_non_null(strstr(tdm_err_msg(&err), k == 0 ? "does not sort after 'c'"
                                                         : "docid 9 at position 1"));
        /* the good lists went in; the writer still takes later ones */
        assert_int_equal(tdm_iwriter_add_lists(w, (tdm_iw_list[]){{"d", 1, docs, tfs, 3}}, 1, 2,
                                               &err), TDM_OK);
        assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
        tdm_iwriter_free(w);
        tdm_err_clear(&err);
        tdm_index *ix;
        assert_int_equal(tdm_index_open(path, &ix), TDM_OK);
        tdm_index_stats st;
        assert_int_equal(tdm_index_stats_get(ix, &st), TDM_OK);
        assert_int_equal(st.terms, k == 0 ? 3 : 2);
        tdm_index_close(ix);
    }
    tdm_index_build_options o;
    tdm_index_build_options_init(&o);
    o.threads = TDM_BUILD_MAX_THREADS + 1;
    const char *in = path;
    assert_int_equal(tdm_index_build(&in, 1, path, &o), TDM_ERR_INVALID_ARG);
    assert_non_null(strstr(tdm_last_error(), "threads"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(passes_equal_one_run),
        cmocka_unit_test(sigterm_leaves_nothing),
        cmocka_unit_test(sigkill_leftovers_removed_by_next_build),
        cmocka_unit_test(empty_input),
        cmocka_unit_test(threads_same_index),
        cmocka_unit_test(gen_threads_same_bytes),
        cmocka_unit_test(add_lists_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
