/* What `tandem search` and `tandem run` share (cmd_search.c): the search
 * options both take, and opening engine, index and search handle. */
#ifndef TDM_CLI_CMD_SEARCH_H
#define TDM_CLI_CMD_SEARCH_H

#include "tandem.h"

typedef struct tdm_cli_sopts {
    const char *index;
    int shards;        /* index is a split's PREFIX (--shards): its shards opened as one */
    tdm_search_options o;
    int json;
} tdm_cli_sopts;

/* Parses one shared option at argv[*i]: 1 taken, 0 not this, -1 bad value
 * (after a message naming it). */
int tdm_cli_search_opt(const char *cmd, int argc, char **argv, int *i, tdm_cli_sopts *s);

/* The --help lines of those options. */
extern const char tdm_cli_search_help[];

/* Opens s->index: the index file, or with s->shards the split PREFIX's
 * shards as one index (tdm_index_open_split). A tandem.h status. */
int tdm_cli_index_open(const tdm_cli_sopts *s, tdm_index **ix);

/* Opens index (as tdm_cli_index_open), engine and search handle; prints
 * why on failure (return 1; whatever was opened is in the outputs, for
 * tdm_cli_search_close). */
int tdm_cli_search_open(const char *cmd, const tdm_cli_sopts *s, tdm_engine **e, tdm_index **ix,
                        tdm_search **sh);
/* Accepts NULLs. */
void tdm_cli_search_close(tdm_engine *e, tdm_index *ix, tdm_search *s);

#endif
