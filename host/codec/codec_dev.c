/* Launch geometry shared by the codecs' decode kernels (codec_dev.h). */
#include "codec_dev.h"

#include "runtime/settings.h"

static uint32_t codec_dev_bpg(size_t wg_size, uint32_t block_size, uint32_t vpt_min)
{
    size_t vpt = block_size / wg_size > vpt_min ? block_size / wg_size : vpt_min;
    size_t tpb = vpt ? block_size / vpt : 0;
    return tpb && wg_size >= tpb ? (uint32_t)(wg_size / tpb) : 1;
}

uint32_t tdm_codec_dev_bpg_vpt(size_t wg_size, uint32_t block_size)
{
    return codec_dev_bpg(wg_size, block_size, TDM_CODEC_VPT_MIN);
}

uint32_t tdm_codec_dev_bpg_wide(size_t wg_size, uint32_t block_size)
{
    return codec_dev_bpg(wg_size, block_size, TDM_WIDE_VPT_MIN);
}

size_t tdm_codec_dev_groups_per_cu(const tdm_device *d)
{
    return d && d->settings ? d->settings->codec_groups_per_cu
                            : TDM_SETTINGS_GROUPS_PER_CU_DEFAULT;
}
