/* The `tandem` command-line tool: one function per subcommand. */
#ifndef TDM_CLI_H
#define TDM_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "tandem.h"

/* Each subcommand takes argv after the command word (argv[0] is the command)
 * and returns the process exit status. */
typedef struct tdm_cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} tdm_cli_command;

int tdm_cmd_devices(int argc, char **argv);
int tdm_cmd_selfcheck(int argc, char **argv);
int tdm_cmd_build(int argc, char **argv);
int tdm_cmd_stats(int argc, char **argv);
int tdm_cmd_shard(int argc, char **argv);
int tdm_cmd_lookup(int argc, char **argv);
int tdm_cmd_terms(int argc, char **argv);
int tdm_cmd_bench(int argc, char **argv);
int tdm_cmd_import(int argc, char **argv);
int tdm_cmd_export(int argc, char **argv);
int tdm_cmd_gen(int argc, char **argv);
int tdm_cmd_eval(int argc, char **argv);
int tdm_cmd_search(int argc, char **argv);
int tdm_cmd_run(int argc, char **argv);
int tdm_cmd_serve(int argc, char **argv); /* cmd_serve.c, or main.c's refusal */

/* Writes s as a JSON string literal (quotes and escapes included). */
void tdm_cli_json_string(FILE *f, const char *s);

/* --name VALUE or --name=VALUE at argv[*i]: the value (advancing *i past
 * it), or NULL if argv[*i] is not that option or lacks its value. */
const char *tdm_cli_opt(int argc, char **argv, int *i, const char *name);

/* Checked numbers for options, one rule for every subcommand. Each parses
 * the whole of `v` (the value of option `opt` of command `cmd`), and on
 * failure prints "tandem CMD: OPT 'V': why; expected ..." and returns -1
 * (a usage error: exit status 2).
 *
 * tdm_cli_uint: a whole decimal number in [lo, hi], optionally with a k, M
 * or G suffix (x1000, x10^6, x10^9) or written 2^P; no sign, no fraction,
 * no overflow (a suffix that wraps is an error). */
int tdm_cli_uint(const char *cmd, const char *opt, const char *v, uint64_t lo, uint64_t hi,
                 uint64_t *out);

/* tdm_cli_real: a finite decimal number in [lo, hi], or (lo, hi] when
 * `lo_open`; nan, inf and trailing garbage are errors. */
int tdm_cli_real(const char *cmd, const char *opt, const char *v, double lo, int lo_open,
                 double hi, double *out);

/* Ranges shared by several commands. */
#define TDM_CLI_MAX_MEMORY_MB 1048576u /* --memory: 1 TiB of posting buffers */
#define TDM_CLI_MAX_K1 TDM_BM25_K1_MAX /* --k1 up to the library's 100, --b up to 1 */

/* Checks an output path given to option `opt` (usually -o) before anything
 * is opened: "" is an error; "-" is stdout when `stdout_ok` (then *to_stdout
 * is set), else an error saying so; otherwise tdm_output_check against the
 * inputs (fsutil.h). Prints the error and returns the exit status on
 * failure (2 for "" or a refused "-", 1 for a path that cannot be written
 * or is an input), 0 when the path is fine. */
int tdm_cli_output(const char *cmd, const char *opt, const char *path, int stdout_ok,
                   const char *const *inputs, size_t ninputs, int *to_stdout);

/* For main(): fds 0-2 made valid (a closed stdout becomes a descriptor that
 * fails every write, so that nothing else lands on fd 1). */
void tdm_cli_std_fds(void);

/* For main(), after the command: flushes and closes stdout; a write error
 * there (a full disk, a closed descriptor) makes exit status `rc` 1, with a
 * message, if it was 0 (a failed command has given its own message). */
int tdm_cli_close_stdout(const char *cmd, int rc);

/* Monotonic wall-clock seconds, for rates and progress. */
double tdm_cli_now(void);

/* One exit-status rule for every subcommand (and tandem-mpi), stated in
 * `tandem --help` and the README: 0 success; 2 a usage error, the command
 * line itself is wrong (an unknown option, a missing or extra argument, a
 * value the option does not take), found before any input is read; 1 any
 * other failure (a file that cannot be read or written, a malformed input,
 * a failed search, a benchmark's mismatch). */
#define TDM_CLI_EXIT_FAIL 1
#define TDM_CLI_EXIT_USAGE 2

/* Prints "tandem <cmd>: <message>" to stderr and returns exit status 1. */
int tdm_cli_fail(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* As tdm_cli_fail, for a usage error: returns exit status 2. */
int tdm_cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The exit status of a failed library call: 2 for TDM_ERR_INVALID_ARG (an
 * option value the library refused, such as an unknown codec or stemmer),
 * else 1. */
int tdm_cli_status(int rc);

#endif
