/* libFuzzer target: the trec parser (fuzz_parse.h). */
#define FUZZ_FORMAT TDM_BUILD_TREC
#include "fuzz_parse.h"
