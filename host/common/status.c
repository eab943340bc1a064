/* Version, status names and tdm_free: the parts of the API with no handle. */
#include <stdlib.h>

#include "tandem.h"

const char *tdm_version(void) { return TDM_VERSION_STRING; }

unsigned tdm_version_number(void) { return TDM_VERSION_NUMBER; }

void tdm_free(void *p) { free(p); }

const char *tdm_strerror(int status)
{
    switch (status) {
    case TDM_OK: return "ok";
    case TDM_ERR_INVALID_ARG: return "invalid argument";
    case TDM_ERR_NOMEM: return "out of host memory";
    case TDM_ERR_IO: return "input/output error";
    case TDM_ERR_FORMAT: return "malformed input";
    case TDM_ERR_CORRUPT: return "corrupt data";
    case TDM_ERR_VERSION: return "unsupported format version";
    case TDM_ERR_NO_DEVICE: return "no OpenCL device";
    case TDM_ERR_OPENCL: return "OpenCL error";
    case TDM_ERR_BUILD: return "kernel build failed";
    case TDM_ERR_DEVICE_MEMORY: return "out of device memory";
    case TDM_ERR_NOT_FOUND: return "not found";
    case TDM_ERR_UNSUPPORTED: return "unsupported";
    case TDM_ERR_LIMIT: return "limit exceeded";
    case TDM_ERR_INTERNAL: return "internal error";
    case TDM_ERR_CANCELLED: return "cancelled";
    case TDM_ERR_TIMEOUT: return "timed out";
    default: return "unknown status";
    }
}
