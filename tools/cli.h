/* The `tandem` command-line tool: one function per subcommand. */
#ifndef TDM_CLI_H
#define TDM_CLI_H

#include <stdio.h>

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
int tdm_cmd_lookup(int argc, char **argv);
int tdm_cmd_bench(int argc, char **argv);
int tdm_cmd_import(int argc, char **argv);
int tdm_cmd_export(int argc, char **argv);
int tdm_cmd_gen(int argc, char **argv);

/* Writes s as a JSON string literal (quotes and escapes included). */
void tdm_json_string(FILE *f, const char *s);

/* --name VALUE or --name=VALUE at argv[*i]: the value (advancing *i past
 * it), or NULL if argv[*i] is not that option or lacks its value. */
const char *tdm_cli_opt(int argc, char **argv, int *i, const char *name);

/* Monotonic wall-clock seconds, for rates and progress. */
double tdm_cli_now(void);

/* Prints "tandem <cmd>: <message>" to stderr and returns exit status 1. */
int tdm_cli_fail(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
