/* `tandem bench`: shared pieces of the benchmarks (results, timing, output). */
#ifndef TDM_CMD_BENCH_H
#define TDM_CMD_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tandem.h"

/* One measured point: a codec on a device (or the CPU reference) decoding a
 * list. Speeds in millions of integers per second; 0 where not measured. */
typedef struct tdm_bench_row {
    char dist[24];        /* "uniform", "clustered", "index-docs", ... */
    uint64_t n;           /* integers decoded */
    char codec[24];
    int device;           /* engine device index; -1 for the CPU reference */
    char device_name[64];
    double bpi;           /* payload + endpoints, as Mallia's Table 1 counts */
    double bpi_all;       /* + the block bases */
    double kernel_s;      /* median kernel time */
    double kernel_mis;
    double e2e_s;         /* median upload + decode + download, wall clock */
    double e2e_mis;
    double gbps;          /* (compressed bytes read + 4n written) / kernel time */
    double roof_pct;      /* gbps / the device's copy bandwidth, in % */
    int launches;         /* kernel launches the median is over */
} tdm_bench_row;

typedef struct tdm_bench_rows {
    tdm_bench_row *v;
    size_t n, cap;
} tdm_bench_rows;

/* Appends a row (copied); returns 0, or -1 out of memory. */
int tdm_bench_rows_add(tdm_bench_rows *rows, const tdm_bench_row *r);

/* Median of v[0..n) (sorts v in place); 0 for n = 0. */
double tdm_bench_median(double *v, size_t n);

void tdm_bench_print_header(FILE *f);
void tdm_bench_print_row(FILE *f, const tdm_bench_row *r);
int tdm_bench_write_csv(const char *path, const tdm_bench_rows *rows);
/* Speed against list length, log-log, one line per codec and device, for the
 * rows of `dist` (Mallia et al. 2019, Figure 3). */
int tdm_bench_write_svg(const char *path, const tdm_bench_rows *rows, const char *dist,
                        const char *title);

/* Plain SVG through the output guard (fsutil.h), for every benchmark's
 * plots: tdm_svg_begin opens `path`, writes the <svg> of w x h, a white
 * background and `title` centred at title_x; NULL after a message.
 * tdm_svg_end closes the element and commits the file: 0, or -1 after a
 * message. tdm_svg_text writes s escaped for XML. */
struct tdm_outfile;
FILE *tdm_svg_begin(struct tdm_outfile *out, const char *path, int w, int h, int title_x,
                    const char *title);
int tdm_svg_end(struct tdm_outfile *out);
void tdm_svg_text(FILE *f, const char *s);

int tdm_bench_codecs(int argc, char **argv);

struct tdm_codec_ops;
/* What a benchmark of lists shares with `bench codecs`. */
typedef struct tdm_bench_ctx {
    tdm_engine *e;
    const double *roof_gbs;                  /* per device */
    const struct tdm_codec_ops *const *codecs;
    int ncodecs;
    int reps;                                /* timed passes */
    double budget_s;                         /* per measured point */
    tdm_bench_rows *rows;
    void (*add_row)(void *arg, const tdm_bench_row *r); /* prints and keeps */
    void *arg;
} tdm_bench_ctx;

/* The `nlists` longest docid and frequency lists of the index at `path`,
 * re-encoded with every codec and decoded on every device, all of them per
 * pass: one row per codec, device and kind ("index-docs", "index-freqs").
 * Returns 0, or -1 after a message on stderr. */
int tdm_bench_index(const tdm_bench_ctx *c, const char *path, int nlists);

/* The index at `path` as stored, resident on every device (upload timed)
 * and decoded in batched launches (cmd_bench_jobs.c): (a) every list of at
 * least one full block, (b) every shorter list; rows "index-a-docs",
 * "index-a-both", "index-b-docs", "index-b-both". Returns 0, or -1 after a
 * message on stderr. */
int tdm_bench_index_batched(const tdm_bench_ctx *c, const char *path);

#endif
