/* Device selection: "all", "gpu", "cpu", "accelerator", indices, name substrings. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strutil.h"
#include "icdhint.h"
#include "runtime.h"

static int is_index(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* Marks the devices one item selects; returns how many it marked. */
static size_t match_item(const char *item, const tdm_found_device *devs, size_t count,
                         unsigned char *chosen)
{
    size_t hits = 0;
    int type = 0;
    if (strcasecmp(item, "gpu") == 0) type = TDM_DEVICE_GPU;
    else if (strcasecmp(item, "cpu") == 0) type = TDM_DEVICE_CPU;
    else if (strcasecmp(item, "accelerator") == 0) type = TDM_DEVICE_ACCELERATOR;
    for (size_t i = 0; i < count; i++) {
        const tdm_device_info *in = &devs[i].info;
        int hit;
        if (strcasecmp(item, "all") == 0)
            hit = 1;
        else if (type)
            hit = in->type == type;
        else if (is_index(item))
            hit = strtoul(item, NULL, 10) == i;
        else
            hit = tdm_strcasestr(in->name, item) || tdm_strcasestr(in->platform, item) ||
                  tdm_strcasestr(in->vendor, item) ||
                  (strcasecmp(item, "pocl") == 0 && tdm_is_pocl(in));
        if (hit) {
            chosen[i] = 1;
            hits++;
        }
    }
    return hits;
}

static void list_devices(const tdm_found_device *devs, size_t count, tdm_err *err)
{
    if (count == 0) {
        char hint[1024];
        tdm_no_device_hint(hint, sizeof hint);
        tdm_err_append(err, " (%s)", hint);
        return;
    }
    tdm_err_append(err, "; devices:");
    for (size_t i = 0; i < count; i++)
        tdm_err_append(err, " [%zu] %s (%s, %s)", i, devs[i].info.name,
                       tdm_device_type_name(devs[i].info.type), devs[i].info.platform);
}

int tdm_select_devices(const char *spec, const char *what, const tdm_found_device *devs,
                       size_t count, unsigned char *chosen, tdm_err *err)
{
    memset(chosen, 0, count);
    char *copy = strdup(spec ? spec : "all");
    if (!copy)
        return tdm_err_set(err, TDM_ERR_NOMEM, "out of memory");
    int rc = TDM_OK;
    size_t total = 0, items = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tdm_strtrim(tok);
        if (!*tok)
            continue;
        items++;
        size_t hits = match_item(tok, devs, count, chosen);
        if (hits == 0) {
            rc = tdm_err_set(err, TDM_ERR_NO_DEVICE,
                             "%s '%s': item '%s' matches no device", what, spec, tok);
            list_devices(devs, count, err);
            break;
        }
        total += hits;
    }
    if (rc == TDM_OK && items == 0) {
        rc = tdm_err_set(err, TDM_ERR_INVALID_ARG,
                         "%s '%s' is empty: use all, gpu, cpu, accelerator, an index or a "
                         "name",
                         what, spec ? spec : "");
        list_devices(devs, count, err);
    }
    free(copy);
    (void)total;
    return rc;
}
