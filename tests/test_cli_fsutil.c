/* The file helpers under the CLI's hardening (issue 11): the output-path
 * guard, temp-file outputs that replace a file only when complete, and
 * readers that never block on a FIFO. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/mapfile.h"
#include "testutil.h"

static char path_buf[4][512];

/* dir/name in one of four static buffers. */
static const char *at(int k, const char *dir, const char *name)
{
    snprintf(path_buf[k], sizeof path_buf[k], "%s/%s", dir, name);
    return path_buf[k];
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_file(const char *path, const char *text)
{
    size_t n = 0;
    unsigned char *b = tdm_read_file(path, &n);
    assert_non_null(b);
    assert_int_equal(n, strlen(text));
    assert_memory_equal(b, text, n);
    free(b);
}

/* How many entries of dir have ".tmp." in their name. */
static int temps_in(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' | grep -F .tmp.)\"", dir);
    return system(cmd) != 0;
}

static void guard_refuses(const char *out, const char *const *in, size_t n, const char *want)
{
    tdm_err err = {0};
    assert_int_equal(tdm_output_check(out, in, n, &err), TDM_ERR_INVALID_ARG);
    if (!strstr(tdm_err_msg(&err), want))
        fail_msg("message '%s' lacks '%s'", tdm_err_msg(&err), want);
    tdm_err_clear(&err);
}

static void guard_allows(const char *out, const char *const *in, size_t n)
{
    tdm_err err = {0};
    if (tdm_output_check(out, in, n, &err) != TDM_OK)
        fail_msg("refused %s: %s", out, tdm_err_msg(&err));
    tdm_err_clear(&err);
}

static void output_guard(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("cli_guard");
    const char *in = at(0, dir, "in.txt"), *hard = at(1, dir, "link.txt");
    put_file(in, "input\n");
    assert_int_equal(link(in, hard), 0);
    const char *inputs[] = {NULL, "-", at(2, dir, "absent"), in};
    guard_refuses(in, inputs, 4, "same file as input");
    guard_refuses(hard, inputs, 4, "same file as input"); /* a hard link: same inode */
    guard_refuses("", NULL, 0, "empty output path");
    guard_refuses(NULL, NULL, 0, "empty output path");
    guard_refuses(dir, NULL, 0, "a directory");
    guard_refuses("/dev/null", NULL, 0, "a character device");
    const char *fifo = at(3, dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    guard_refuses(fifo, NULL, 0, "a FIFO");
    guard_allows(in, NULL, 0);                      /* a regular file may be replaced */
    guard_allows(at(2, dir, "new.idx"), inputs, 4); /* a new file may be made */
    assert_file(in, "input\n");
}

static void outfile_commit_and_abort(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("cli_outfile");
    const char *path = at(0, dir, "out.txt");
    put_file(path, "old\n");
    tdm_outfile o;
    tdm_err err = {0};
    /* Aborted: the old file stays, nothing is left behind. */
    assert_int_equal(tdm_outfile_open(&o, path, &err), TDM_OK);
    fputs("half of the new", o.f);
    tdm_outfile_abort(&o);
    assert_file(path, "old\n");
    assert_int_equal(temps_in(dir), 0);
    /* Committed: the new file in place. */
    assert_int_equal(tdm_outfile_open(&o, path, &err), TDM_OK);
    fputs("new\n", o.f);
    assert_int_equal(tdm_outfile_commit(&o, &err), TDM_OK);
    assert_file(path, "new\n");
    assert_int_equal(temps_in(dir), 0);
    tdm_outfile_abort(&o); /* released already: accepted */
    /* A directory that does not exist: the error names the path given. */
    const char *bad = at(1, dir, "nodir/out.txt");
    assert_int_equal(tdm_outfile_open(&o, bad, &err), TDM_ERR_IO);
    assert_non_null(strstr(tdm_err_msg(&err), bad));
    assert_null(strstr(tdm_err_msg(&err), ".tmp."));
    tdm_err_clear(&err);
}

/* A write that fails (a full disk) fails the commit and keeps the old file. */
static void outfile_write_error(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("cli_outfile_full");
    const char *path = at(0, dir, "out.txt");
    put_file(path, "old\n");
    int full = open("/dev/full", O_WRONLY);
    if (full < 0)
        skip();
    tdm_outfile o;
    tdm_err err = {0};
    assert_int_equal(tdm_outfile_open(&o, path, &err), TDM_OK);
    /* The stream writes to /dev/full from here on. */
    assert_int_not_equal(dup2(full, fileno(o.f)), -1);
    close(full);
    fputs("new\n", o.f);
    assert_int_equal(tdm_outfile_commit(&o, &err), TDM_ERR_IO);
    assert_non_null(strstr(tdm_err_msg(&err), path));
    tdm_err_clear(&err);
    assert_file(path, "old\n");
    assert_int_equal(temps_in(dir), 0);
}

/* A FIFO with no writer: open() would block without O_NONBLOCK. The test
 * would hang (and ctest time out) if either reader regressed. */
static void fifo_does_not_block(void **state)
{
    (void)state;
    const char *dir = tdm_test_tmpdir("cli_fifo");
    const char *fifo = at(0, dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    size_t n;
    errno = 0;
    assert_null(tdm_read_file(fifo, &n));
    assert_int_equal(errno, EINVAL);
    void *map;
    tdm_err err = {0};
    assert_int_equal(tdm_map_file(fifo, &map, &n, &err), TDM_ERR_IO);
    assert_non_null(strstr(tdm_err_msg(&err), "FIFO"));
    tdm_err_clear(&err);
    assert_int_equal(tdm_map_file(dir, &map, &n, &err), TDM_ERR_IO);
    assert_non_null(strstr(tdm_err_msg(&err), "directory"));
    tdm_err_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(output_guard),
        cmocka_unit_test(outfile_commit_and_abort),
        cmocka_unit_test(outfile_write_error),
        cmocka_unit_test(fifo_does_not_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
