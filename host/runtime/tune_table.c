/* The tuning table's rows and a device's kind (tune_table.h). */
#define TDM_TUNE_TABLE_ROWS
#include "runtime/tune_table.h"

#include "common/strutil.h"

const tdm_tune_row *tdm_tune_row_get(int kind)
{
    return &tdm_tune_rows[kind >= 0 && kind < TDM_KIND_COUNT ? kind : TDM_KIND_OTHER];
}

int tdm_tune_kind_of(const tdm_device_info *info)
{
    if (info->type == TDM_DEVICE_GPU) {
        if (tdm_strcasestr(info->platform, "oclgrind"))
            return TDM_KIND_SIMULATOR;
        if (tdm_strcasestr(info->vendor, "nvidia") || tdm_strcasestr(info->platform, "nvidia"))
            return TDM_KIND_NVIDIA_GPU;
        return TDM_KIND_GPU;
    }
    return info->type == TDM_DEVICE_CPU ? TDM_KIND_CPU : TDM_KIND_OTHER;
}

const tdm_tune_row *tdm_tune_row_of(const tdm_device_info *info)
{
    return tdm_tune_row_get(tdm_tune_kind_of(info));
}
