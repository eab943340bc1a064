/* Why no OpenCL device was found, in words a user can act on: no driver
 * (.icd file) installed, or drivers installed that gave no device, and for
 * PoCL the usual cause, a kernel cache directory it cannot create. */
#ifndef TDM_RUNTIME_ICDHINT_H
#define TDM_RUNTIME_ICDHINT_H

#include <stddef.h>

/* Writes the explanation (one sentence, no trailing newline) into buf.
 * Reads the drivers' environment (through settings.c) and the ICD vendor
 * directory; leaves nothing behind (it may create and remove an empty
 * directory to test the cache's parent). Thread-safe while no thread changes
 * the environment. */
void tdm_no_device_hint(char *buf, size_t cap);

#endif
