/* host/common/tempfile: names nobody can guess, files created exclusively
 * (a planted link is never followed), registered for cleanup, and the name
 * shapes the stale sweep accepts; and the run files and index writer that
 * use it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/tempfile.h"
#include "build/runs.h"
#include "index/writer.h"
#include "testutil.h"

static const char *victim_text = "a file that must not change\n";

/* dir/victim with known bytes; its path in `out`. */
static void make_victim(const char *dir, char *out, size_t len)
{
    snprintf(out, len, "%s/victim", dir);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fputs(victim_text, f);
    assert_int_equal(fclose(f), 0);
}

static void victim_unchanged(const char *path)
{
    char buf[128] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, victim_text);
}

static void names_are_fresh_and_of_the_shape(void **state)
{
    (void)state;
    char *a = tdm_temp_name("/x/out.idx"), *b = tdm_temp_name("/x/out.idx");
    assert_non_null(a);
    assert_non_null(b);
    assert_string_not_equal(a, b);
    char pid[32];
    snprintf(pid, sizeof pid, "tmp.%ld.", (long)getpid());
    assert_non_null(strstr(a, pid));
    assert_int_equal(strlen(a), strlen("/x/out.idx.") + strlen(pid) + TDM_TEMP_TAG_LEN);
    assert_int_equal(tdm_temp_pid(a + strlen("/x/out.idx.")), (long)getpid());
    tdm_cleanup_remove(a);
    tdm_cleanup_remove(b);
    free(a);
    free(b);
}

static void pid_of_the_shapes_only(void **state)
{
    (void)state;
    assert_int_equal(tdm_temp_pid("tmp.123.abcdefghij09"), 123);
    assert_int_equal(tdm_temp_pid("run0.tmp.7.abcdefghij09"), 7);
    assert_int_equal(tdm_temp_pid("run12.tmp.7.abcdefghij09"), 7);
    static const char *const bad[] = {
        "tmp.123", "tmp.123.7", "tmp.123.abcdefghij0", "tmp.123.abcdefghij0xy",
        "tmp.123.abcdefghiJ09", "tmp.0123.abcdefghij09", "tmp.0.abcdefghij09",
        "tmp..abcdefghij09", "run.tmp.7.abcdefghij09", "run01.tmp.7.abcdefghij09",
        "run3.7", "tmpx.7.abcdefghij09", "notes", "", "tmp.99999999999999999999.abcdefghij09",
        "tmp.-5.abcdefghij09", "tmp.5.abcdefghij09/", "tmp.5.abcdefgh.j09"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (tdm_temp_pid(bad[i]) != 0)
            fail_msg("'%s' taken for a temporary file's name", bad[i]);
}

static void create_is_exclusive_and_registered(void **state)
{
    (void)state;
    char dir[1024], out[1100], victim[1100];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("temp_create"));
    make_victim(dir, victim, sizeof victim);
    snprintf(out, sizeof out, "%s/out", dir);
    char *tmp;
    int fd = tdm_temp_create(out, &tmp);
    assert_true(fd >= 0);
    assert_non_null(tmp);
    assert_int_equal(strncmp(tmp, out, strlen(out)), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0644 & ~mask); /* as fopen's would be */
    close(fd);
    /* Its name again: taken, so refused, the file left as it is. */
    assert_int_equal(tdm_temp_open(tmp), -1);
    assert_int_equal(errno, EEXIST);
    /* A link planted at a name is neither followed nor replaced. */
    char link[1200];
    snprintf(link, sizeof link, "%s/out.tmp.1.abcdefghij09", dir);
    assert_int_equal(symlink(victim, link), 0);
    assert_int_equal(tdm_temp_open(link), -1);
    snprintf(link, sizeof link, "%s/dangling", dir);
    assert_int_equal(symlink("/nonexistent/tandem-test", link), 0);
    assert_int_equal(tdm_temp_open(link), -1);
    assert_int_equal(access("/nonexistent/tandem-test", F_OK), -1);
    victim_unchanged(victim);
    /* Registered: the signal handler's sweep removes it; then discard
     * (unlink, unregister) is harmless. */
    tdm_cleanup_unlink_all();
    assert_int_equal(access(tmp, F_OK), -1);
    tdm_temp_discard(tmp);
    /* keep: the file stays, the name is no longer registered. */
    fd = tdm_temp_create(out, &tmp);
    assert_true(fd >= 0);
    close(fd);
    char kept[1200];
    snprintf(kept, sizeof kept, "%s", tmp);
    tdm_temp_keep(tmp);
    tdm_cleanup_unlink_all();
    assert_int_equal(access(kept, F_OK), 0);
    victim_unchanged(victim);
}

/* The run writer used fopen("wb") on a predictable name: a link planted at
 * the name made it overwrite the link's target. */
static void run_file_never_follows_a_link(void **state)
{
    (void)state;
    char dir[1024], victim[1100], link[1200];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("temp_run"));
    make_victim(dir, victim, sizeof victim);
    snprintf(link, sizeof link, "%s/out.idx.run0.%ld", dir, (long)getpid());
    assert_int_equal(symlink(victim, link), 0);
    tdm_runwriter *w = NULL;
    tdm_err err = {0};
    assert_int_equal(tdm_run_create(link, &w, &err), TDM_ERR_IO);
    assert_null(w);
    assert_non_null(strstr(tdm_err_msg(&err), link));
    tdm_err_clear(&err);
    victim_unchanged(victim);
}

/* The index writer named its file PATH.tmp.PID: a link planted there made
 * it write the index through the link. */
static void writer_never_follows_a_link(void **state)
{
    (void)state;
    char dir[1024], victim[1100], link[1200], out[1100];
    snprintf(dir, sizeof dir, "%s", tdm_test_tmpdir("temp_writer"));
    make_victim(dir, victim, sizeof victim);
    snprintf(out, sizeof out, "%s/w.idx", dir);
    snprintf(link, sizeof link, "%s.tmp.%ld", out, (long)getpid());
    assert_int_equal(symlink(victim, link), 0);
    tdm_iwriter *w = NULL;
    tdm_err err = {0};
    if (tdm_iwriter_open(out, NULL, &w, &err) != TDM_OK)
        fail_msg("%s", tdm_err_msg(&err));
    const uint32_t len[1] = {2}, doc[1] = {0}, tf[1] = {2};
    assert_int_equal(tdm_iwriter_set_docs(w, 1, len, NULL, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_add_list(w, "a", 1, doc, tf, 1, &err), TDM_OK);
    assert_int_equal(tdm_iwriter_finish(w, &err), TDM_OK);
    tdm_iwriter_free(w);
    victim_unchanged(victim);
    struct stat st;
    assert_int_equal(lstat(out, &st), 0);
    assert_true(S_ISREG(st.st_mode) && st.st_size > 160);
    assert_int_equal(lstat(link, &st), 0); /* not ours: left alone */
    assert_true(S_ISLNK(st.st_mode));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_are_fresh_and_of_the_shape),
        cmocka_unit_test(pid_of_the_shapes_only),
        cmocka_unit_test(create_is_exclusive_and_registered),
        cmocka_unit_test(run_file_never_follows_a_link),
        cmocka_unit_test(writer_never_follows_a_link),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
