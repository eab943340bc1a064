/* The JSON object of one search result, written by jansson: what `tandem
 * search --json` prints and `tandem serve` answers, so that both give the
 * same bytes (search_json.c). */
#ifndef TDM_CLI_SEARCH_JSON_H
#define TDM_CLI_SEARCH_JSON_H

#include <jansson.h>

#include "tandem.h"

/* A new object for r, the answer to `text` (NULL: terms given directly,
 * written as "query": null) on engine e; NULL when out of memory. */
json_t *tdm_cli_result_json(tdm_engine *e, const char *text, const tdm_search_result *r);

/* A JSON string of s; bytes that are not UTF-8 become U+FFFD (jansson
 * takes only UTF-8). NULL when out of memory. */
json_t *tdm_cli_json_str(const char *s);

/* v as one line of text ending in '\n', in the one format every writer of
 * search results uses (", " and ": " separators, floats to 9 significant
 * digits, which read back as the same float); malloc'ed, *len its length
 * without the NUL; NULL when out of memory. */
char *tdm_cli_json_dump(const json_t *v, size_t *len);

#endif
