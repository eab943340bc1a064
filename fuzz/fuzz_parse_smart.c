/* libFuzzer target: the smart parser (fuzz_parse.h). */
#define FUZZ_FORMAT TDM_BUILD_SMART
#include "fuzz_parse.h"
