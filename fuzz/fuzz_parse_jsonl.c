/* libFuzzer target: the jsonl parser (fuzz_parse.h). */
#define FUZZ_FORMAT TDM_BUILD_JSONL
#include "fuzz_parse.h"
