/* Block layouts and launch geometry that the host codecs (host/codec)
 * and their kernels (the cl folder) share: one statement for both languages.
 * Plain macros only, valid C and OpenCL C: kernels.cl includes this file
 * and the embed step (cmake/embed_cl.cmake) pastes it into the kernel
 * source. Formats are described in each codec's .c file. */
#ifndef TDM_CODEC_LAYOUT_H
#define TDM_CODEC_LAYOUT_H

/* Bits a kernel ORs into a list's status word. */
#define TDM_CODEC_ST_CORRUPT 1u /* the payload is corrupt */
#define TDM_CODEC_ST_BADJOB 2u  /* a job named a block out of range or an output past out_cap */

/* Values a work-item decodes at least: TDM_CODEC_VPT_MIN for RAW,
 * TDM_WIDE_VPT_MIN (the wide geometry) for every other codec; more where the
 * work-group is small for a block. Multiples of 4 (uint4 stores). A build
 * may override them for experiments (-D), and the host must then agree. */
#ifndef TDM_CODEC_VPT_MIN
#define TDM_CODEC_VPT_MIN 4u
#endif
#ifndef TDM_WIDE_VPT_MIN
#define TDM_WIDE_VPT_MIN 8u
#endif

/* Block sizes of the codecs with one size. */
#define TDM_RAW_BLOCK 128u
#define TDM_PEF_BLOCK 128u
#define TDM_PFOR_BLOCK 512u
#define TDM_RICE_BLOCK 128u
#define TDM_NPFD_BLOCK_MAX 128u /* NewPFD: blocks of 64 or 128 */

/* Jobs a work-item of the batched decode's counting kernel takes
   (cl/decode_jobs.cl; host/resident/decode_jobs.c sizes its tiles by it). */
#define TDM_JOBS_PER_ITEM 8u

/* PEF partition kinds (the header word's kind field). */
#define TDM_PEF_EF 0u     /* Elias-Fano: low parts, then the unary high parts */
#define TDM_PEF_PACKED 1u /* a frequency partition packed at one width */

#endif
