/* Many lists to a launch: decoding any set of block ranges of a resident
 * index (resident.h) on its device, to docids and frequencies, into outputs
 * laid out by the caller. The building block of every query kernel.
 *
 * A job is four uints, {list, block_begin, block_end, out}: it decodes
 * blocks [block_begin, block_end) of list `list` (blocks of the list's
 * codec's size B; a list of df <= B postings has the single block 0; all
 * blocks hold B postings but a list's last), writing the postings' docids to
 * out_docs[out + i] and their frequencies (tf, not tf - 1) to
 * out_freqs[out + i], i from 0 over the postings of those blocks in order.
 * Either output may be absent (NULL). block_begin = block_end is an empty
 * job. Jobs may overlap or repeat and come in any order; outputs of two jobs
 * that overlap get one of the two values.
 *
 * One launch decodes jobs of one codec (the kernel of that codec); a job
 * whose list has another codec is a bad job. The host splits a table by
 * codec (tdm_decode_batch_build does) and enqueues one launch per codec
 * present. A bad job (list out of range, other codec, block range past the
 * list or reversed, output past its buffer) decodes nothing and ORs
 * TDM_CODEC_ST_BADJOB (codec/layout.h) into the launch's status word; a
 * payload or block table found damaged ORs TDM_CODEC_ST_CORRUPT. No read
 * leaves the list's words, no write leaves the outputs. At most 2^32 - 1
 * blocks a launch (more: bad job, nothing decoded).
 *
 * A launch is two kernels (three for more than TDM_WG_SIZE *
 * TDM_JOBS_PER_ITEM jobs): the jobs are counted and prefix-summed on the
 * device, so a job table may be made by a kernel as well as by the host;
 * or one, where the host made the prefix sums of its own table
 * (tdm_decode_prefix_fill, tdm_decode_batch_enqueue_pre).
 *
 * Threads: any number of threads may enqueue on one resident index at
 * once (kernels come from the device's pool); each call allocates its own
 * scratch buffers.
 */
#ifndef TDM_RESIDENT_DECODE_JOBS_H
#define TDM_RESIDENT_DECODE_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "resident.h"

/* The decode kernel a device runs (TDM_DECODE_*): the work-group kernels
 * (GPU-shaped: a block by several work-items, local memory, barriers) on
 * GPUs and accelerators; on CPU devices tdm_jobs_serial, where a work-item
 * decodes a run of whole blocks alone (cl/codec_serial.cl), which a CPU
 * driver runs as plain loops. The environment variable
 * TANDEM_DECODE_VARIANT=group|serial overrides the choice on every device
 * but rusticl's (no_zcur: always the work-group kernels, whose serial
 * kernel llvmpipe takes minutes to compile); the engine reads it at open
 * (runtime/settings.h). Both give the same outputs and status bits. */
enum tdm_decode_variant { TDM_DECODE_GROUP = 0, TDM_DECODE_SERIAL = 1 };
int tdm_decode_jobs_variant(const tdm_device *d);

/* One job, as the device reads it (a uint4). */
typedef struct tdm_decode_job {
    uint32_t list, block_begin, block_end, out;
} tdm_decode_job;

/* The kernel that decodes jobs of codec `codec`, or NULL. */
const char *tdm_decode_jobs_kernel(int codec);

/* Enqueues one launch over jobs[0..njobs) (a buffer of at least njobs
 * jobs) of lists of codec `codec` on queue q (NULL: the device's compute
 * queue; an in-order queue of res->dev's context), after the nwait events
 * of `wait` and the index's upload. status: a buffer of at least one uint
 * the kernels OR their bits into (the caller zeroes it; several launches
 * may share it). out_docs, out_freqs: uint buffers or NULL (their sizes
 * bound the writes). *done (if not NULL) gets the event of the launch's
 * last command, which the caller releases (a marker when njobs is 0).
 * Non-blocking; errors name the device and codec. */
int tdm_decode_jobs_enqueue(const tdm_resident *res, cl_command_queue q, cl_mem jobs,
                            uint32_t njobs, int codec, cl_mem out_docs, cl_mem out_freqs,
                            cl_mem status, cl_uint nwait, const cl_event *wait, cl_event *done,
                            tdm_err *err);

/* A caller's scratch for its launches' job prefix sums, kept between
 * launches that run in order (one queue, one thread at a time): with it a
 * launch makes no buffer of its own (on the H200 a buffer made and released
 * costs ~8 us of host time). Zeroed = empty; grown as needed. */
typedef struct tdm_decode_scratch {
    cl_mem jpre, tsum;
    size_t jpre_bytes, tsum_bytes;
} tdm_decode_scratch;
void tdm_decode_scratch_free(tdm_decode_scratch *s);

/* tdm_decode_jobs_enqueue with the scratch s (NULL: buffers of its own). */
int tdm_decode_jobs_enqueue_in(const tdm_resident *res, cl_command_queue q, cl_mem jobs,
                               uint32_t njobs, int codec, cl_mem out_docs, cl_mem out_freqs,
                               cl_mem status, tdm_decode_scratch *s, cl_uint nwait,
                               const cl_event *wait, cl_event *done, tdm_err *err);

/* Reads a launch's status word after the wait list (blocking): TDM_OK,
 * TDM_ERR_CORRUPT if a kernel found the index damaged, TDM_ERR_INVALID_ARG
 * if a job was bad. */
int tdm_decode_jobs_status(const tdm_resident *res, cl_mem status, cl_uint nwait,
                           const cl_event *wait, tdm_err *err);

/* ---- job tables made on the host */

#define TDM_DECODE_TO_END UINT32_MAX /* block_end: to the list's last block */

/* A request: blocks [block_begin, block_end) of a list. */
typedef struct tdm_decode_req {
    uint32_t list, block_begin, block_end;
} tdm_decode_req;

/* Job tables for a set of requests, one per codec present. Request i's
 * postings go to outputs [out[i], out[i] + count), requests back to back in
 * the order given; npostings is the size the outputs need. */
typedef struct tdm_decode_batch {
    tdm_decode_job *jobs[TDM_CODEC_COUNT]; /* per codec; NULL where none */
    uint32_t njobs[TDM_CODEC_COUNT];
    uint32_t *out;       /* [nreq] */
    size_t nreq;
    uint64_t npostings;  /* at most 2^32 - 1 */
    uint64_t nblocks;
} tdm_decode_batch;

/* Postings in blocks [begin, end) of a list of df postings in blocks of
 * `block` (0 for an empty or out-of-range range). */
uint32_t tdm_decode_range_postings(uint32_t df, uint32_t block, uint32_t begin, uint32_t end);

/* Builds the tables for req[0..nreq) on index r: TDM_ERR_INVALID_ARG
 * naming the request when a list or block range is out of range,
 * TDM_ERR_LIMIT past 2^32 - 1 postings. *b is freed with
 * tdm_decode_batch_free (also after a failure). */
int tdm_decode_batch_build(const tdm_ireader *r, const tdm_decode_req *req, size_t nreq,
                           tdm_decode_batch *b, tdm_err *err);
void tdm_decode_batch_free(tdm_decode_batch *b);

/* Uploads each codec's table of b to a new buffer of res->dev (bufs[c],
 * NULL where codec c has no job; the caller releases them). Blocking. */
int tdm_decode_batch_upload(const tdm_resident *res, const tdm_decode_batch *b,
                            cl_mem bufs[TDM_CODEC_COUNT], tdm_err *err);

/* Enqueues one launch per codec present in b (tables uploaded by
 * tdm_decode_batch_upload into bufs) on q after the wait list; *done (if
 * not NULL) gets an event that completes when all have (the caller
 * releases it). */
int tdm_decode_batch_enqueue(const tdm_resident *res, cl_command_queue q,
                             const tdm_decode_batch *b, cl_mem const bufs[TDM_CODEC_COUNT],
                             cl_mem out_docs, cl_mem out_freqs, cl_mem status, cl_uint nwait,
                             const cl_event *wait, cl_event *done, tdm_err *err);
/* The same, *first (if not NULL) getting the event of the launch's first
 * kernel too (NULL for an empty batch), for timing; the caller releases it.
 * *done is the last codec's last kernel (every queue is in order; profiled:
 * START of *first to END of *done is the launch's device time). */
int tdm_decode_batch_enqueue_timed(const tdm_resident *res, cl_command_queue q,
                                   const tdm_decode_batch *b, cl_mem const bufs[TDM_CODEC_COUNT],
                                   cl_mem out_docs, cl_mem out_freqs, cl_mem status,
                                   cl_uint nwait, const cl_event *wait, cl_event *done,
                                   cl_event *first, tdm_err *err);
/* tdm_decode_batch_enqueue with the scratch s (NULL: buffers of its own). */
int tdm_decode_batch_enqueue_in(const tdm_resident *res, cl_command_queue q,
                                const tdm_decode_batch *b, cl_mem const bufs[TDM_CODEC_COUNT],
                                cl_mem out_docs, cl_mem out_freqs, cl_mem status,
                                tdm_decode_scratch *s, cl_uint nwait, const cl_event *wait,
                                cl_event *done, tdm_err *err);

/* ---- prefix sums made on the host: the decode kernel alone, a launch
 * less (an in-order queue's dependent kernel: a few microseconds of the
 * host's and the device's a query) */

/* Tiles of a launch of njobs jobs on d (its tsum holds tiles + 1 words). */
uint32_t tdm_decode_prefix_tiles(const tdm_device *d, uint32_t njobs);
/* What tdm_jobs_count and tdm_jobs_scan write for codec c's launch of b on
 * res, made on the host: jpre[b->njobs[c]] (the blocks of the tile's jobs
 * before each job), tsum[tiles + 1] (the blocks before each tile, then the
 * launch's). Each job is checked as tdm_jobs_count checks it (list, codec,
 * block range, and its postings within docs_cap and freqs_cap values where
 * outs has bit 1 and 2): a bad job, or 2^32 blocks or more, is
 * TDM_ERR_INVALID_ARG naming it. */
int tdm_decode_prefix_fill(const tdm_resident *res, const tdm_decode_batch *b, int c,
                           uint32_t outs, uint32_t docs_cap, uint32_t freqs_cap, uint32_t *jpre,
                           uint32_t *tsum, tdm_err *err);
/* tdm_decode_batch_enqueue_in for a batch whose jobs are all of codec c
 * (jobs: its table on the device), its prefix sums made by
 * tdm_decode_prefix_fill and uploaded to jpre and tsum, in order before it
 * on q: the decode kernel alone, after the wait list. */
int tdm_decode_batch_enqueue_pre(const tdm_resident *res, cl_command_queue q,
                                 const tdm_decode_batch *b, int c, cl_mem jobs, cl_mem jpre,
                                 cl_mem tsum, cl_mem out_docs, cl_mem out_freqs, cl_mem status,
                                 cl_uint nwait, const cl_event *wait, cl_event *done,
                                 tdm_err *err);

#endif
