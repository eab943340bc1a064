/*
 * tandem kernels — the one OpenCL C program built for every device.
 *
 * OpenCL C 1.2 is the floor (NVIDIA compiles only 1.2): no sub-group
 * functions, no 64-bit atomics unless reported, every barrier reached by every
 * work-item of its group. The host (host/engine/program.c) compiles this
 * file with
 *   -DTDM_WG_SIZE=<work-group size the kernels are launched with>
 *   -DTDM_LOCAL_MEM=<local memory bytes>
 *   -DTDM_NV_SHFL=1 on NVIDIA GPUs of compute capability 7+ (inline PTX
 *    shuffles; a driver that rejects them gets a build without)
 * The build embeds this file with its includes (the cl folder) expanded, so
 * an installed library needs no file at run time.
 */
#ifndef TDM_WG_SIZE
#define TDM_WG_SIZE 256
#endif

/* Test hooks: a build that fails on purpose, to test the paths that follow
   a failed build (tests/test_device_fail.c). TDM_TEST_BREAK_PTX fails only
   builds with NVIDIA shuffles, as a driver rejecting the PTX would. */
#if defined(TDM_TEST_BREAK_BUILD) || (defined(TDM_TEST_BREAK_PTX) && TDM_NV_SHFL)
#error "build broken on purpose by a test (TDM_TEST_BREAK_*)"
#endif

/* ---- block layouts shared with the host codecs (C and OpenCL C) */
#include "host/codec/layout.h"

/* ---- term, query and selection tables shared with the search drivers */
#include "host/plan/search_layout.h"

/* ---- shared building blocks: work-group scans, delta decoding */
#include "cl/common.cl"

/* ---- each device's first kernel at open, under a time limit */
#include "cl/first_kernel.cl"

/* ---- codecs */
#include "cl/codec_dev.cl"
#include "cl/codec_raw.cl"
#include "cl/codec_bp.cl"
#include "cl/codec_vbyte.cl"
#include "cl/codec_pef.cl"
#include "cl/codec_pfor.cl"
#include "cl/codec_rice.cl"

/* ---- serial block decoders: one block by one work-item, every codec */
#include "cl/codec_serial.cl"

/* ---- batched decode of a resident index: many lists to a launch */
#include "cl/decode_jobs.cl"

/* ---- block selection, intersection, scoring, top-k, DAAT */
#include "cl/search_range.cl"
#include "cl/search_zrange.cl"
#include "cl/search_group.cl"
#include "cl/search_merge.cl"
#include "cl/search_range_sel.cl"
#include "cl/search_seed.cl"
#include "cl/search_select.cl"
#include "cl/search_batch.cl"
#include "cl/search_batch_and.cl"

/* ---- ranked AND step by step, movable between devices (Griffin) */
#include "cl/and_step.cl"
