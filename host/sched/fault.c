/* The fault-injection test switch (fault.h). */
#include "fault.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tandem.h"

static const char *const names[] = {"none", "build", "oom", "lost", "hang", "stall"};

const char *tdm_fault_name(int kind)
{
    return kind >= 0 && kind <= TDM_FAULT_STALL ? names[kind] : "?";
}

/* One item "<lane>:<kind>[@<n>]" of len bytes at s. */
static int parse_item(const char *s, size_t len, const char *what, tdm_fault *faults, int nlanes,
                      tdm_err *err)
{
    char item[64];
    if (len == 0 || len >= sizeof item)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG, "%s: item '%.*s': expected <lane>:<kind>[@<n>]",
                           what, (int)(len < 60 ? len : 60), s);
    memcpy(item, s, len);
    item[len] = 0;
    char *colon = strchr(item, ':');
    char *at = strchr(item, '@');
    char *end;
    errno = 0;
    long lane = colon && isdigit((unsigned char)item[0]) ? strtol(item, &end, 10) : -1;
    if (!colon || errno || end != colon || lane < 0 || lane >= nlanes)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "%s: item '%s': expected <lane>:<kind>[@<n>] with lane 0 .. %d", what,
                           item, nlanes - 1);
    if (at)
        *at = 0;
    int kind = TDM_FAULT_NONE;
    for (int k = TDM_FAULT_BUILD; k <= TDM_FAULT_STALL; k++)
        if (!strcmp(colon + 1, names[k]))
            kind = k;
    if (kind == TDM_FAULT_NONE)
        return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                           "%s: item '%.60s': fault kind '%s' is not build, oom, lost, hang or "
                           "stall",
                           what, s, colon + 1);
    unsigned long n = 1;
    if (at) {
        errno = 0;
        n = isdigit((unsigned char)at[1]) ? strtoul(at + 1, &end, 10) : 0;
        if (errno || *end || n < 1 || n > 1000000000ul)
            return tdm_err_set(err, TDM_ERR_INVALID_ARG,
                               "%s: item '%.60s': @%s is not a run number >= 1", what, s, at + 1);
    }
    faults[lane].kind = kind;
    faults[lane].at = n;
    return TDM_OK;
}

int tdm_fault_parse(const char *spec, const char *what, tdm_fault *faults, int nlanes,
                    tdm_err *err)
{
    memset(faults, 0, (size_t)nlanes * sizeof *faults);
    const char *p = spec ? spec : "";
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int rc = parse_item(p, len, what, faults, nlanes, err);
        if (rc)
            return rc;
        p += len + (comma != NULL);
    }
    return TDM_OK;
}
