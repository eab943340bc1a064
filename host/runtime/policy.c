/* Policy names (tandem.h, enum tdm_policy): in runtime, below the scheduler
 * that runs the policies, so that settings.c checks TANDEM_POLICY at engine
 * open. */
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "tandem.h"

static const char *const names[] = {"default", "cpu-only", "gpu-only", "best", "hybrid", "direct"};

TDM_API const char *tdm_policy_name(int policy)
{
    return policy >= 0 && policy < (int)(sizeof names / sizeof *names) ? names[policy] : NULL;
}

TDM_API int tdm_policy_parse(const char *name, int *policy)
{
    tdm_api_enter();
    if (!name || !policy)
        return tdm_api_fail(TDM_ERR_INVALID_ARG, "tdm_policy_parse: %s is NULL",
                            !name ? "name" : "policy");
    static const struct {
        const char *name;
        int policy;
    } aliases[] = {{"cpu", TDM_POLICY_CPU_ONLY}, {"cpu_only", TDM_POLICY_CPU_ONLY},
                   {"gpu", TDM_POLICY_GPU_ONLY}, {"gpu_only", TDM_POLICY_GPU_ONLY},
                   {"best-device", TDM_POLICY_BEST}, {"best_device", TDM_POLICY_BEST}};
    for (int p = 0; p < (int)(sizeof names / sizeof *names); p++)
        if (strcasecmp(name, names[p]) == 0) {
            *policy = p;
            return TDM_OK;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (strcasecmp(name, aliases[i].name) == 0) {
            *policy = aliases[i].policy;
            return TDM_OK;
        }
    return tdm_api_fail(TDM_ERR_INVALID_ARG,
                        "policy '%.100s': expected default, cpu-only, gpu-only, best, hybrid or "
                        "direct",
                        name);
}
