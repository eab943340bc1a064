/* libFuzzer target: auto-detected input read through zlib, gzip or not
 * (seeded with gzip files), via fuzz_parse.h. */
#define FUZZ_FORMAT TDM_BUILD_AUTO
#include "fuzz_parse.h"
