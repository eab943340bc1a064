/* libFuzzer target: the lines parser (fuzz_parse.h). */
#define FUZZ_FORMAT TDM_BUILD_LINES
#include "fuzz_parse.h"
