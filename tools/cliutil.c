/* Helpers every subcommand shares: errors, options, checked numbers, output
 * paths, stdout, JSON, clocks. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/fsutil.h"
#include "tandem.h"

/* "tandem CMD: message" on stderr. */
static void say(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "tandem %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int tdm_cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, fmt, ap);
    va_end(ap);
    return 1;
}

int tdm_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, fmt, ap);
    va_end(ap);
    return TDM_CLI_EXIT_USAGE;
}

int tdm_cli_status(int rc)
{
    return rc == TDM_ERR_INVALID_ARG ? TDM_CLI_EXIT_USAGE : TDM_CLI_EXIT_FAIL;
}

void tdm_cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

const char *tdm_cli_opt(int argc, char **argv, int *i, const char *name)
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

double tdm_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bad_uint(const char *cmd, const char *opt, const char *v, const char *why,
                    uint64_t lo, uint64_t hi)
{
    tdm_cli_fail(cmd, "%s '%s': %s; expected a whole number in [%llu, %llu]", opt, v, why,
                 (unsigned long long)lo, (unsigned long long)hi);
    return -1;
}

int tdm_cli_uint(const char *cmd, const char *opt, const char *v, uint64_t lo, uint64_t hi,
                 uint64_t *out)
{
    if (!v || *v < '0' || *v > '9') /* no sign, space or empty value */
        return bad_uint(cmd, opt, v ? v : "", "not a whole number", lo, hi);
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno == ERANGE)
        return bad_uint(cmd, opt, v, "too large", lo, hi);
    if (*end == '^') {
        char *e2;
        unsigned long long p = strtoull(end + 1, &e2, 10);
        if (x != 2 || end[1] < '0' || end[1] > '9' || *e2)
            return bad_uint(cmd, opt, v, "not a power of two written 2^P", lo, hi);
        if (p > 63)
            return bad_uint(cmd, opt, v, "too large", lo, hi);
        x = 1ull << p;
    } else if (*end) {
        unsigned long long m = !strcmp(end, "k") ? 1000ull : !strcmp(end, "M") ? 1000000ull
                             : !strcmp(end, "G") ? 1000000000ull : 0;
        if (!m)
            return bad_uint(cmd, opt, v, "not a whole number (suffixes: k, M, G)", lo, hi);
        if (x > UINT64_MAX / m)
            return bad_uint(cmd, opt, v, "too large", lo, hi);
        x *= m;
    }
    if (x < lo || x > hi)
        return bad_uint(cmd, opt, v, "out of range", lo, hi);
    *out = x;
    return 0;
}

int tdm_cli_real(const char *cmd, const char *opt, const char *v, double lo, int lo_open,
                 double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double x = v && *v ? strtod(v, &end) : NAN;
    const char *why = !v || !*v || end == v || *end ? "not a number"
                    : !isfinite(x) || (errno == ERANGE && fabs(x) > 1) ? "not a finite number"
                    : x < lo || (lo_open && x == lo) || x > hi ? "out of range" : NULL;
    if (!why) {
        *out = x;
        return 0;
    }
    tdm_cli_fail(cmd, "%s '%s': %s; expected a number in %c%g, %g]", opt, v ? v : "", why,
                 lo_open ? '(' : '[', lo, hi);
    return -1;
}

int tdm_cli_output(const char *cmd, const char *opt, const char *path, int stdout_ok,
                   const char *const *inputs, size_t ninputs, int *to_stdout)
{
    if (to_stdout)
        *to_stdout = 0;
    if (!path || !*path)
        return tdm_cli_usage(cmd, "%s: empty output path", opt);
    if (!strcmp(path, "-")) {
        if (stdout_ok && to_stdout) {
            *to_stdout = 1;
            return 0;
        }
        return tdm_cli_usage(cmd, "%s -: this output cannot go to standard output; give a "
                                  "file name (./- for a file named '-')", opt);
    }
    tdm_err err = {0};
    int rc = tdm_output_check(path, inputs, ninputs, &err);
    if (rc != TDM_OK)
        tdm_cli_fail(cmd, "%s", tdm_err_msg(&err));
    tdm_err_clear(&err);
    return rc == TDM_OK ? 0 : TDM_CLI_EXIT_FAIL;
}

void tdm_cli_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* Read-only /dev/null: it holds the number, and every write fails (EBADF). */
        int n = open("/dev/null", O_RDONLY);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

int tdm_cli_close_stdout(const char *cmd, int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad && rc == 0) /* a failed command has said why already */
        tdm_cli_fail(cmd, "error writing to standard output: %s", e ? strerror(e)
                                                                    : "write failed");
    return bad && rc == 0 ? 1 : rc;
}
